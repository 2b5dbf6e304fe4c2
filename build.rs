//! Link the `ka-hooks` binary as a non-PIE executable on Linux.
//!
//! The binary runs once per tool call, so its start-up is on the agent's hot path. A PIE build
//! spends most of a no-hook run in the dynamic loader, which applies about 14,700 relative
//! relocations and copies the pages they touch. Without PIE the linker resolves them, and a run
//! with no matching hook drops from about 2.0 ms to 1.6 ms (`benches/compare.sh`). The cost is that
//! the binary's own image is not address-randomised. The library (what an agent embeds) is not
//! affected, nor are tests. Set `KA_HOOKS_PIE=1` when building to keep PIE.
fn main() {
    println!("cargo:rerun-if-env-changed=KA_HOOKS_PIE");
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let keep_pie = std::env::var_os("KA_HOOKS_PIE").is_some_and(|v| v == "1");
    if target_os == "linux" && !keep_pie {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
