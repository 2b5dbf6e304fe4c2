//! The built `ka-hooks` binary keeps the hardening rustc gives every Linux target by default (no
//! build script adds or removes link flags; a linker default or a stray flag could): it is
//! position-independent (ELF type `ET_DYN`, so the kernel randomises its address), it has full
//! RELRO (a `PT_GNU_RELRO` segment, and `BIND_NOW` so that the GOT is in it), its stack is not
//! executable, and it has no text relocations. The same holds for the static-pie build the release
//! ships (`x86_64-unknown-linux-musl`, `scripts/release.sh`), built here in the fast dev profile:
//! it must also have no program interpreter (it runs on any Linux, whatever its libc). And the glibc
//! build must not need `GLIBC_ABI_DT_RELR` (packed relative relocations, glibc 2.36+), or it would
//! not start on glibc 2.34/2.35 (Ubuntu 22.04, RHEL 9). Read with a small parser of the ELF
//! header, the program headers and the dynamic section: 64-bit little-endian ELF, which is every
//! Linux target this crate builds for; the version needs with binutils' `readelf -V`.
#![cfg(all(
    target_os = "linux",
    target_pointer_width = "64",
    target_endian = "little"
))]

use std::path::Path;
use std::process::Command;

const ET_DYN: u16 = 3;
const PT_DYNAMIC: u32 = 2;
const PT_INTERP: u32 = 3;
const PT_GNU_STACK: u32 = 0x6474_e551;
const PT_GNU_RELRO: u32 = 0x6474_e552;
const PF_X: u32 = 1;
const DT_NULL: i64 = 0;
const DT_TEXTREL: i64 = 22;
const DT_BIND_NOW: i64 = 24;
const DT_FLAGS: i64 = 30;
const DT_FLAGS_1: i64 = 0x6fff_fffb;
const DT_RELR: i64 = 36;
const DF_TEXTREL: u64 = 0x4;
const DF_BIND_NOW: u64 = 0x8;
const DF_1_NOW: u64 = 0x1;
const DF_1_PIE: u64 = 0x0800_0000;

struct ProgramHeader {
    kind: u32,
    flags: u32,
    offset: u64,
    file_size: u64,
}

struct Elf {
    kind: u16,
    segments: Vec<ProgramHeader>,
    /// `(d_tag, d_val)` of the dynamic section, up to `DT_NULL`.
    dynamic: Vec<(i64, u64)>,
}

fn bytes<const N: usize>(data: &[u8], at: u64) -> Result<[u8; N], String> {
    let start = usize::try_from(at).map_err(|e| e.to_string())?;
    data.get(start..start + N)
        .and_then(|b| b.try_into().ok())
        .ok_or_else(|| format!("truncated ELF: {N} bytes at {at}"))
}
fn u16_at(data: &[u8], at: u64) -> Result<u16, String> {
    bytes(data, at).map(u16::from_le_bytes)
}
fn u32_at(data: &[u8], at: u64) -> Result<u32, String> {
    bytes(data, at).map(u32::from_le_bytes)
}
fn u64_at(data: &[u8], at: u64) -> Result<u64, String> {
    bytes(data, at).map(u64::from_le_bytes)
}

fn parse(data: &[u8]) -> Result<Elf, String> {
    if data.get(..4) != Some(b"\x7fELF".as_slice()) {
        return Err("no ELF magic".into());
    }
    // EI_CLASS 2 = 64-bit, EI_DATA 1 = little-endian.
    if data.get(4..6) != Some([2u8, 1].as_slice()) {
        return Err("not a 64-bit little-endian ELF".into());
    }
    let kind = u16_at(data, 16)?;
    let phoff = u64_at(data, 32)?;
    let phentsize = u64::from(u16_at(data, 54)?);
    let phnum = u64::from(u16_at(data, 56)?);
    let mut segments = Vec::new();
    for i in 0..phnum {
        let at = phoff + i * phentsize;
        segments.push(ProgramHeader {
            kind: u32_at(data, at)?,
            flags: u32_at(data, at + 4)?,
            offset: u64_at(data, at + 8)?,
            file_size: u64_at(data, at + 32)?,
        });
    }
    let mut dynamic = Vec::new();
    if let Some(seg) = segments.iter().find(|s| s.kind == PT_DYNAMIC) {
        let mut at = seg.offset;
        while at + 16 <= seg.offset + seg.file_size {
            let tag = i64::from_le_bytes(bytes(data, at)?);
            if tag == DT_NULL {
                break;
            }
            dynamic.push((tag, u64_at(data, at + 8)?));
            at += 16;
        }
    }
    Ok(Elf {
        kind,
        segments,
        dynamic,
    })
}

fn dynamic_value(elf: &Elf, tag: i64) -> Option<u64> {
    elf.dynamic.iter().find(|(t, _)| *t == tag).map(|(_, v)| *v)
}

/// PIE, full RELRO (with `BIND_NOW`), no text relocations, a non-executable stack.
fn assert_hardened(path: &Path) {
    let path = path.display();
    let data = std::fs::read(path.to_string()).expect("read the ka-hooks binary");
    let elf = parse(&data).expect("parse the ka-hooks binary");

    assert_eq!(
        elf.kind, ET_DYN,
        "{path}: ELF type {} (2 = ET_EXEC: linked without PIE, not address-randomised)",
        elf.kind
    );
    assert!(
        elf.segments.iter().any(|s| s.kind == PT_GNU_RELRO),
        "{path}: no PT_GNU_RELRO segment"
    );
    assert!(
        !elf.dynamic.is_empty(),
        "{path}: no dynamic section (a static PIE has one too)"
    );
    let flags = dynamic_value(&elf, DT_FLAGS).unwrap_or(0);
    let flags_1 = dynamic_value(&elf, DT_FLAGS_1).unwrap_or(0);
    assert!(
        flags & DF_BIND_NOW != 0
            || flags_1 & DF_1_NOW != 0
            || dynamic_value(&elf, DT_BIND_NOW).is_some(),
        "{path}: no BIND_NOW (DT_FLAGS {flags:#x}, DT_FLAGS_1 {flags_1:#x}): RELRO is partial"
    );
    assert!(
        flags_1 & DF_1_PIE != 0,
        "{path}: DT_FLAGS_1 {flags_1:#x} lacks DF_1_PIE"
    );
    assert!(
        flags & DF_TEXTREL == 0 && dynamic_value(&elf, DT_TEXTREL).is_none(),
        "{path}: has text relocations"
    );
    let stack = elf.segments.iter().find(|s| s.kind == PT_GNU_STACK);
    assert!(
        stack.is_some_and(|s| s.flags & PF_X == 0),
        "{path}: the stack is executable (or PT_GNU_STACK is missing)"
    );
}

#[test]
fn the_binary_is_position_independent_with_full_relro() {
    assert_hardened(Path::new(env!("CARGO_BIN_EXE_ka-hooks")));
}

/// `-z pack-relative-relocs` (DT_RELR) made the binary need `GLIBC_ABI_DT_RELR`, which glibc has
/// only from 2.36 on: such a binary does not start on Ubuntu 22.04 or RHEL 9.
#[test]
#[cfg(target_env = "gnu")]
fn the_glibc_binary_needs_no_glibc_abi_dt_relr() {
    let path = env!("CARGO_BIN_EXE_ka-hooks");
    let data = std::fs::read(path).expect("read the ka-hooks binary");
    let elf = parse(&data).expect("parse the ka-hooks binary");
    assert!(
        dynamic_value(&elf, DT_RELR).is_none(),
        "{path}: has DT_RELR (packed relative relocations: -z pack-relative-relocs)"
    );
    let versions = Command::new("readelf")
        .args(["-V", "-W", path])
        .output()
        .expect("readelf (binutils)");
    assert!(versions.status.success(), "readelf -V {path} failed");
    let versions = String::from_utf8_lossy(&versions.stdout);
    assert!(
        versions.contains("GLIBC_2."),
        "readelf -V shows no glibc version needs at all:\n{versions}"
    );
    assert!(
        !versions.contains("GLIBC_ABI_DT_RELR"),
        "{path} needs GLIBC_ABI_DT_RELR (glibc 2.36+):\n{versions}"
    );
}

/// The release's target, built here in the dev profile (the link flags are the profile's
/// defaults either way; `scripts/release.sh` checks its `dist` build with readelf too). Built into
/// this build's own target dir, so a second run only relinks. `.config/nextest.toml` gives it
/// room for a cold build.
#[test]
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
#[ignore = "slow: builds ka-hooks for the musl target (every dependency once when cold); \
            scripts/test.sh runs it with --run-ignored only"]
fn the_musl_build_is_static_pie_with_full_relro() {
    const MUSL: &str = "x86_64-unknown-linux-musl";
    let bin = Path::new(env!("CARGO_BIN_EXE_ka-hooks"));
    let target_dir = bin
        .parent()
        .and_then(Path::parent)
        .expect("<target>/<profile>/ka-hooks");
    let cargo = option_env!("CARGO").unwrap_or("cargo");
    let sysroot = Command::new("rustc")
        .args(["--print", "sysroot"])
        .output()
        .expect("rustc --print sysroot");
    let sysroot = String::from_utf8_lossy(&sysroot.stdout).trim().to_owned();
    if !Path::new(&sysroot).join("lib/rustlib").join(MUSL).is_dir() {
        // The release target is part of the toolchain this crate is built and tested with.
        let added = Command::new("rustup")
            .args(["target", "add", MUSL])
            .status()
            .expect("rustup target add (the musl target is missing)");
        assert!(added.success(), "rustup target add {MUSL} failed");
    }
    let built = Command::new(cargo)
        .args(["build", "--locked", "--bin", "ka-hooks", "--target", MUSL])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("CARGO_TARGET_DIR", target_dir)
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .output()
        .expect("cargo build --target x86_64-unknown-linux-musl");
    assert!(
        built.status.success(),
        "cargo build --target {MUSL}:\n{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let musl = target_dir.join(MUSL).join("debug/ka-hooks");
    assert_hardened(&musl);
    let data = std::fs::read(&musl).expect("read the musl binary");
    let elf = parse(&data).expect("parse the musl binary");
    assert!(
        elf.segments.iter().all(|s| s.kind != PT_INTERP),
        "{}: has a program interpreter: not static",
        musl.display()
    );
    let version = Command::new(&musl)
        .arg("--version")
        .output()
        .expect("run the musl binary");
    assert!(
        String::from_utf8_lossy(&version.stdout).starts_with("ka-hooks "),
        "{version:?}"
    );
}

#[test]
fn the_parser_rejects_what_is_not_a_64_bit_elf() {
    assert!(parse(b"").is_err());
    assert!(parse(b"#!/bin/sh\n").is_err());
    assert!(parse(b"\x7fELF\x01\x01").is_err());
    // A header that claims program headers past the end of the file.
    let mut header = vec![0u8; 64];
    header[..6].copy_from_slice(b"\x7fELF\x02\x01");
    header[32..40].copy_from_slice(&1000u64.to_le_bytes());
    header[54..56].copy_from_slice(&56u16.to_le_bytes());
    header[56..58].copy_from_slice(&1u16.to_le_bytes());
    assert!(parse(&header).is_err());
}
