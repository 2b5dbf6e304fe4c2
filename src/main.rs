//! The `ka-hooks` binary: parse arguments, call the library, choose the exit code in one place.

use std::process::ExitCode;

fn main() -> ExitCode {
    let code = ka_hooks::cli::main(std::env::args_os());
    ExitCode::from(code)
}
