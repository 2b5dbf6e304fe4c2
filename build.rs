//! Link the `ka-hooks` binary position-independent with full RELRO on Linux.
//!
//! The binary parses untrusted input (hook payloads, project files), so it keeps the hardening of
//! a default build: a position-independent executable (address-randomised), and full RELRO
//! (`-z relro -z now`: every relocation is applied at start-up, then the GOT and the relocated
//! data are made read-only). rustc asks for both by default; they are spelled out here so that no
//! linker default or stray flag can drop them, and `tests/hardening.rs` checks the built binary.
fn main() {
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if target_os == "linux" {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,relro,-z,now");
    }
}
