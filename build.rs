//! Link the `ka-hooks` binary position-independent with full RELRO on Linux.
//!
//! The binary parses untrusted input (hook payloads, project files), so it keeps the hardening of
//! a default build: a position-independent executable (address-randomised), and full RELRO
//! (`-z relro -z now`: every relocation is applied at start-up, then the GOT and the relocated
//! data are made read-only). rustc asks for both by default; they are spelled out here so that no
//! linker default or stray flag can drop them, and `tests/hardening.rs` checks the built binary.
//!
//! `-z pack-relative-relocs` stores the relative relocations as DT_RELR, a bitmap of the words to
//! adjust, instead of a 24-byte RELA entry each: the loader (or a static-pie's self-relocation)
//! reads a few hundred bytes instead of ~220 KB and spends fewer instructions per pointer. The
//! protection is the same: the same words are relocated, then made read-only. A linker or glibc
//! without DT_RELR (binutils < 2.38, glibc < 2.36) ignores the flag with a warning.
//!
//! On x86_64 Linux with glibc, `link/hot-text.ld` lays out the code a run executes at start-up
//! together, in one output section `.text.hot` before `.text` (an `INSERT` script: the linker's
//! default layout stays as it is otherwise; lld and GNU ld both read it). Start-up is mostly page
//! faults, and the kernel maps code 64 KB around each fault, so packed code takes fewer of them
//! (`benches/README.md` has the figures). `scripts/hot-layout.sh` regenerates the script; a name
//! in it that no longer exists matches nothing and only costs speed. It changes where code is,
//! nothing else: PIE, RELRO and the checks of `tests/hardening.rs` are the same with it.
//! It is left out when the rustflags choose gold or mold, which do not read `INSERT` scripts, and
//! when `KA_HOOKS_NO_HOT_LAYOUT=1` is set (for any other such linker).
fn main() {
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if target_os == "linux" {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,relro,-z,now,-z,pack-relative-relocs");
    }
    println!("cargo:rerun-if-env-changed=KA_HOOKS_NO_HOT_LAYOUT");
    println!("cargo:rerun-if-changed=link/hot-text.ld");
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    let opted_out = std::env::var_os("KA_HOOKS_NO_HOT_LAYOUT").is_some_and(|v| v == "1");
    let rustflags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let other_linker = rustflags.split('\x1f').any(|flag| {
        [
            "-fuse-ld=gold",
            "-fuse-ld=mold",
            "ld.gold",
            "ld.mold",
            "bin/mold",
        ]
        .iter()
        .any(|ld| flag.contains(ld))
    });
    if other_linker && !opted_out {
        println!("cargo:warning=ka-hooks: gold and mold do not read link/hot-text.ld; linking without the start-up layout (slower start only)");
    }
    // tests/hardening.rs checks the layout reached the linker, unless it was left out on purpose.
    if opted_out {
        println!("cargo:rustc-env=KA_HOOKS_HOT_LAYOUT_SKIPPED=KA_HOOKS_NO_HOT_LAYOUT=1");
    } else if other_linker {
        println!("cargo:rustc-env=KA_HOOKS_HOT_LAYOUT_SKIPPED=gold or mold in the rustflags");
    }
    if target_os == "linux" && arch == "x86_64" && env == "gnu" && !opted_out && !other_linker {
        let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".to_owned());
        let script = std::path::Path::new(&dir).join("link/hot-text.ld");
        // -Xlinker passes the next argument as it is (-Wl, would split a path at its commas).
        println!("cargo:rustc-link-arg-bins=-Xlinker");
        println!("cargo:rustc-link-arg-bins=--script={}", script.display());
    }
}
