//! The `ka-hooks` binary: parse arguments, call the library, choose the exit code in one place.
//!
//! A plain Rust `main`, as ripgrep and just have: Rust's runtime start-up does what a CLI that
//! spawns processes needs (fds 0-2 reopened on `/dev/null` when closed, so a pipe opened later is
//! never mistaken for our stdout; SIGPIPE ignored, so a closed stdout is an error, not a silent
//! death; stdout flushed at exit), a panic on the main thread is an ordinary panic (its message,
//! exit 101), and a stack overflow is reported ("thread 'main' has overflowed its stack") instead
//! of dying of a bare SIGSEGV. `tests/it/main_thread.rs` checks the last two.

use std::process::ExitCode;

/// musl's malloc maps and unmaps memory a page at a time; dlmalloc keeps what it maps (why, and
/// what it saves: `benches/README.md`, "What the binary is, and why").
#[cfg(target_env = "musl")]
#[global_allocator]
static ALLOC: dlmalloc::GlobalDlmalloc = dlmalloc::GlobalDlmalloc;

fn main() -> ExitCode {
    ExitCode::from(ka_hooks::cli::main(std::env::args_os()))
}
