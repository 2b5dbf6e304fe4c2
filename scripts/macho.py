#!/usr/bin/env python3
"""Check that a file is a macOS executable for one CPU, as the release ships it.

    python3 scripts/macho.py BINARY x86_64|aarch64

Reads the Mach-O header and load commands (no Apple tools needed): a thin 64-bit little-endian
Mach-O of that CPU, an executable (MH_EXECUTE) that is position-independent (MH_PIE), with an
entry point (LC_MAIN), asking for no newer macOS than rustc's default for the target (10.12 on
x86_64, 11.0 on aarch64). On aarch64 it must carry a code signature (LC_CODE_SIGNATURE): Apple
silicon refuses to run an unsigned binary, and an ad-hoc signature is enough. Prints one line
saying what the binary is (CPU, minimum macOS, signature, the libraries it loads); exits 1 with
the reason when a check fails.
"""

import struct
import sys

MH_MAGIC_64 = 0xFEEDFACF
CPU = {"x86_64": 0x01000007, "aarch64": 0x0100000C}
# rustc's default deployment target: the newest minimum macOS a release binary may ask for.
NEWEST_MINIMUM = {"x86_64": (10, 12), "aarch64": (11, 0)}
MH_EXECUTE = 2
MH_PIE = 0x200000
LC_LOAD_DYLIB = 0xC
LC_CODE_SIGNATURE = 0x1D
LC_VERSION_MIN_MACOSX = 0x24
LC_BUILD_VERSION = 0x32
LC_MAIN = 0x80000028


def version(packed):
    return (packed >> 16, (packed >> 8) & 0xFF, packed & 0xFF)


def load_commands(data, ncmds):
    """(cmd, body) of each load command, after the 32-byte header."""
    at = 32
    for _ in range(ncmds):
        if at + 8 > len(data):
            raise ValueError("load commands run past the end of the file")
        cmd, size = struct.unpack_from("<II", data, at)
        if size < 8 or at + size > len(data):
            raise ValueError(f"load command {cmd:#x} has a bad size {size}")
        yield cmd, data[at : at + size]
        at += size


def describe(data, cpu):
    """What the binary is, or ValueError naming the first check that fails."""
    if len(data) < 32:
        raise ValueError("too short for a Mach-O header")
    magic, cputype, _, filetype, ncmds, _, flags, _ = struct.unpack_from("<8I", data, 0)
    if magic != MH_MAGIC_64:
        raise ValueError(f"not a thin 64-bit Mach-O file (magic {magic:#x})")
    if cputype != CPU[cpu]:
        found = {v: k for k, v in CPU.items()}.get(cputype, hex(cputype))
        raise ValueError(f"built for {found}, not {cpu}")
    if filetype != MH_EXECUTE:
        raise ValueError(f"not an executable (file type {filetype})")
    if not flags & MH_PIE:
        raise ValueError("not position-independent (no MH_PIE)")
    signed, entry, minos, dylibs = False, False, None, []
    for cmd, body in load_commands(data, ncmds):
        if cmd == LC_CODE_SIGNATURE:
            signed = True
        elif cmd == LC_MAIN:
            entry = True
        elif cmd == LC_BUILD_VERSION:
            minos = version(struct.unpack_from("<I", body, 12)[0])
        elif cmd == LC_VERSION_MIN_MACOSX:
            minos = version(struct.unpack_from("<I", body, 8)[0])
        elif cmd == LC_LOAD_DYLIB:
            offset = struct.unpack_from("<I", body, 8)[0]
            dylibs.append(body[offset:].split(b"\0", 1)[0].decode("utf-8", "replace"))
    if not entry:
        raise ValueError("no entry point (LC_MAIN)")
    if minos is None:
        raise ValueError("no minimum macOS version (LC_BUILD_VERSION)")
    if minos[:2] > NEWEST_MINIMUM[cpu]:
        newest = ".".join(map(str, NEWEST_MINIMUM[cpu]))
        raise ValueError(
            f"asks for macOS {'.'.join(map(str, minos))} or newer, not {newest}: "
            "set MACOSX_DEPLOYMENT_TARGET"
        )
    if cpu == "aarch64" and not signed:
        raise ValueError("no code signature: Apple silicon would refuse to run it")
    return (
        f"Mach-O 64-bit executable {cpu}, PIE, macOS {'.'.join(map(str, minos))} or newer, "
        f"{'signed (LC_CODE_SIGNATURE)' if signed else 'not signed'}, "
        f"loads {', '.join(dylibs) or 'nothing'}"
    )


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in CPU:
        sys.exit("usage: python3 scripts/macho.py BINARY x86_64|aarch64")
    path, cpu = sys.argv[1], sys.argv[2]
    try:
        with open(path, "rb") as f:
            data = f.read()
        print(f"{path}: {describe(data, cpu)}")
    except (OSError, ValueError, struct.error) as e:
        sys.exit(f"{path}: {e}")


if __name__ == "__main__":
    main()
