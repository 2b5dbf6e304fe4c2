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
//! It is left out when the build names gold or mold as its linker (neither reads `INSERT`
//! scripts; see `other_linker`), and when `KA_HOOKS_NO_HOT_LAYOUT=1` is set, for a linker chosen
//! some other way.
fn main() {
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if target_os == "linux" {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,relro,-z,now,-z,pack-relative-relocs");
    }
    println!("cargo:rerun-if-env-changed=KA_HOOKS_NO_HOT_LAYOUT");
    println!("cargo:rerun-if-env-changed=CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER");
    println!("cargo:rerun-if-env-changed=RUSTC_LINKER");
    println!("cargo:rerun-if-changed=link/hot-text.ld");
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if !(target_os == "linux" && arch == "x86_64" && env == "gnu") {
        return;
    }
    match layout_script() {
        Ok(path) => {
            // -Xlinker passes the next argument as it is (-Wl, would split a path at its commas).
            println!("cargo:rustc-link-arg-bins=-Xlinker");
            println!("cargo:rustc-link-arg-bins=--script={path}");
        }
        // tests/hardening.rs checks the layout reached the linker, unless it was left out on
        // purpose.
        Err(why) => println!("cargo:rustc-env=KA_HOOKS_HOT_LAYOUT_SKIPPED={why}"),
    }
}

/// The path of `link/hot-text.ld` to hand the linker, or why it is left out.
fn layout_script() -> Result<String, String> {
    if std::env::var_os("KA_HOOKS_NO_HOT_LAYOUT").is_some_and(|v| v == "1") {
        return Err("KA_HOOKS_NO_HOT_LAYOUT=1".to_owned());
    }
    if let Some(linker) = other_linker() {
        println!("cargo:warning=ka-hooks: {linker} cannot read link/hot-text.ld: linking without the start-up layout (a slower start, nothing else)");
        return Err(format!("{linker} chosen as the linker"));
    }
    let script = std::path::Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default())
        .join("link/hot-text.ld");
    match script.to_str() {
        Some(path) if script.is_file() => Ok(path.to_owned()),
        _ => {
            println!("cargo:warning=ka-hooks: no link/hot-text.ld (or its path is not UTF-8): linking without the start-up layout");
            Err("no link/hot-text.ld".to_owned())
        }
    }
}

/// gold or mold, if the build names one of them as its linker: neither reads `INSERT` scripts.
/// Looks at the rustflags (`-C linker=…`, `-C link-arg=-fuse-ld=…`, `--ld-path=…`) and at the
/// linker cargo is told to use; a linker chosen some other way (a system `ld` that is gold, `mold
/// -run`) fails the link instead, and `link/hot-text.ld` says to set `KA_HOOKS_NO_HOT_LAYOUT=1`.
fn other_linker() -> Option<&'static str> {
    let rustflags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let mut linkers: Vec<String> = rustflags
        .split('\x1f')
        .filter_map(|flag| {
            ["-fuse-ld=", "--ld-path=", "linker="]
                .iter()
                .find_map(|key| flag.split_once(key).map(|(_, value)| value.to_owned()))
        })
        .collect();
    for var in [
        "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER",
        "RUSTC_LINKER",
    ] {
        linkers.extend(std::env::var(var).ok());
    }
    ["gold", "mold"].into_iter().find(|ld| {
        linkers.iter().any(|linker| {
            linker
                .rsplit('/')
                .next()
                .is_some_and(|file| file.contains(ld))
        })
    })
}
