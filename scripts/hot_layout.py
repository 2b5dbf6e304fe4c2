#!/usr/bin/env python3
"""Write the linker script that lays out ka-hooks' start-up code together (link/hot-text.ld).

    python3 scripts/hot_layout.py <ka-hooks binary> <archives,...> <callgrind.out>... > link/hot-text.ld

`scripts/hot-layout.sh` runs this; see it for why. Input: the binary the profiles were taken of
(its symbol table tells which names are one function and which are many instantiations, and which
names are aliases of one function), the static C libraries it was linked with, comma-separated
(`libc.a`, `libm.a`, `libgcc_eh.a`: which archive member defines each C function), and callgrind
profiles (`--demangle=no`) of the commands whose start-up matters.

Output: one output section, `.text.hot`, inserted before `.text`, holding the input sections of
every function the profiles executed: first those of the first profile, then those the second
adds, and so on, each group sorted, so that a regenerated script differs only where the profiles
do (callgrind writes its functions in no fixed order):
- a Rust function is the section `.text.<mangled name>` (rustc puts each function in its own
  section), or `.text.unlikely.<mangled name>` for a `#[cold]` one such as `RawVec::grow_one`.
  The name's hash (`17h<16 hex>E`, or a v0 crate hash `Cs<...>_` and the back-references after
  it) changes with the toolchain and the build's metadata, so it becomes a wildcard when the name
  without it is one symbol of the binary; a generic function with several instantiations keeps
  its exact hash, so the wildcard does not pull in every other instantiation too. The number LLVM
  gives a local copy (`eq.1059`) is a wildcard as well. A stale name matches nothing: the
  function is then laid out where it would have been anyway.
- a C function of glibc is the `.text` of the archive member that defines it
  (`*libc.a:malloc.o(.text .text.*)`): glibc is not built with one section per function. Every
  member that defines an IFUNC is included too: their resolvers all run at start-up (IRELATIVE
  relocations), and callgrind cannot name them.
- identical functions are merged into one body with several names, and the body's section is
  named after only one of them, so every name at a profiled function's address gets a pattern.
"""

import re
import subprocess
import sys

HASH = re.compile(r"17h[0-9a-f]{16}E$")
V0_CRATE = re.compile(r"Cs[0-9A-Za-z]+_")
LOCAL = re.compile(r"\.\d+$")
# What a name may hold to be written into the script as it is: `*?[` are glob characters there,
# and quotes, parentheses and spaces end a pattern. Mangled Rust and C names never hold others.
PLAIN = re.compile(r"[A-Za-z0-9_.$]+")
# Fewer patterns than this means the profiles or the symbol table were empty (a stripped binary).
MIN_PATTERNS = 100
V0_BACKREF = re.compile(r"B[0-9A-Za-z]*_")

# What real runs execute but a run under valgrind does not, found by recording the page faults of
# real runs (`perf record -e page-faults -d`) on the laid-out binary: valgrind has no pidfd_open,
# so the thread fallback runs under it instead of the poll loop of src/process/polled.rs (and the
# C functions that loop calls); its virtual CPU has no SHA extensions, so sha2 takes its portable
# code; and glibc's static start-up takes a few other functions on real hardware.
EXTRA_RUST = ["_ZN8ka_hooks7process6polled*", "_ZN4sha26sha2563x86*"]
EXTRA_C = [
    "poll", "pidfd_open", "syscall", "waitid", "kill", "__sigprocmask", "sigpending",
    "sigismember", "__strcmp_avx2", "_dl_new_object",
]
# The C start-up code (`_start`), which is in no archive.
EXTRA_OBJECTS = ["crt1.o"]


def wildcard(name):
    """The name with what changes between builds as `*`. A v0 name's back-references (`B5_`) are
    offsets into the name itself, so they move when a crate hash before them changes length.
    Each `*` still matches the text it replaced, so the name always matches its own pattern."""
    if name.startswith("_R"):
        return V0_BACKREF.sub("B*_", V0_CRATE.sub("Cs*_", name))
    return HASH.sub("17h*E", name)


def local_suffix(pattern):
    """LLVM numbers the local copies of a function (`eq.1059`); the number changes with any edit."""
    return LOCAL.sub("*", pattern)


def profiled_names(paths):
    """The function names of callgrind files (fn= and cfn= lines): each once, grouped by the
    first file that names it, sorted within a group."""
    names, seen = [], set()
    line_re = re.compile(r"^c?fn=\(\d+\) (.*)$")
    for path in paths:
        group = set()
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                m = line_re.match(line.rstrip("\n"))
                if m:
                    group.add(re.sub(r"'\d+$", "", m.group(1)))  # callgrind's recursion marker
        names += sorted(group - seen)
        seen |= group
    return names


def nm_lines(args):
    return subprocess.run(["nm", *args], capture_output=True, text=True, check=True).stdout.splitlines()


def nm(args):
    return [line.split() for line in nm_lines(args)]


def real_archives(paths):
    """The archives behind `paths`; an ld script such as glibc's libm.a names them in GROUP ( )."""
    for path in paths:
        with open(path, "rb") as f:
            head = f.read(8)
        if head == b"!<arch>\n":
            yield path
        else:
            with open(path, encoding="utf-8", errors="replace") as f:
                group = re.search(r"GROUP\s*\(([^)]*)\)", f.read())
            yield from real_archives(group.group(1).split() if group else [])


def archive_members(archives):
    """C function name -> the `archive:member` pairs that define it."""
    members = {}
    for archive in real_archives(archives):
        base = archive.rsplit("/", 1)[-1]
        for line in nm_lines(["-A", "--defined-only", archive]):
            # `<archive>:<member>:<address> <kind> <name>`; the archive path may hold spaces.
            f = line.rsplit(None, 2)
            if len(f) == 3 and f[1] in "TtWi":
                member = f[0].split(":")[-2]
                members.setdefault(f[2], []).append(f"{base}:{member}")
    return members


def main():
    binary, archives, *profiles = sys.argv[1:]
    if not profiles:
        sys.exit(__doc__)
    code = [f for f in nm(["--defined-only", binary]) if len(f) == 3 and f[1] in "tTwWi"]
    symbols = {f[2] for f in code}
    at_address = {}
    for address, _, name in code:
        at_address.setdefault(address, []).append(name)
    address_of = {name: address for address, _, name in code}
    by_wildcard = {}
    for sym in symbols:
        by_wildcard.setdefault(wildcard(sym), set()).add(sym)
    members = archive_members(archives.split(","))
    ifuncs = [name for _, kind, name in code if kind == "i"]

    sections, c_members = [], []
    for profiled in profiled_names(profiles) + EXTRA_C + ifuncs:
        if profiled not in symbols:
            continue
        for name in at_address[address_of[profiled]]:
            if not PLAIN.fullmatch(name):
                continue
            if name in members:
                c_members += [m for m in members[name] if m not in c_members]
                continue
            pattern = wildcard(name)
            if len(by_wildcard.get(pattern, ())) > 1:
                pattern = name
            pattern = local_suffix(pattern)
            if pattern not in sections:
                sections.append(pattern)
    sections += [p for p in EXTRA_RUST if p not in sections]
    if len(sections) + len(c_members) < MIN_PATTERNS:
        sys.exit(f"hot_layout.py: only {len(sections) + len(c_members)} functions found: "
                 "are the profiles empty, or the binary stripped?")

    print("/* Generated by scripts/hot-layout.sh: the code ka-hooks runs to start, check its config")
    print(" * and run one hook, laid out together so that it is paged in with fewer faults.")
    print(" * Passed to the linker by build.rs. A name that no longer exists matches nothing.")
    print(" * A linker that rejects this file (gold, mold): build with KA_HOOKS_NO_HOT_LAYOUT=1. */")
    print("SECTIONS\n{\n  .text.hot : {")
    for pattern in sections:
        print(f"    *(.text.{pattern} .text.unlikely.{pattern})")
    for member in c_members + EXTRA_OBJECTS:
        print(f"    *{member}(.text .text.*)")
    print("  }\n}\nINSERT BEFORE .text;")


if __name__ == "__main__":
    main()
