#!/usr/bin/env python3
"""Lists the functions of src/ longer than a limit (default 80 lines), test code left out.

A function's length is counted from its `fn` line to its closing brace. Test code is any file
named tests.rs or under a tests/ folder, and any item after `#[cfg(test)]`. Data tables are
named in ALLOWED with the reason. Exit status 1 when a function not allowed is over the limit.

    python3 scripts/long-functions.py [--limit N] [--all]
"""
import pathlib
import re
import sys

# Functions that are one data table, not logic: (file, function) -> why.
ALLOWED = {}

FN = re.compile(r"\bfn\s+([A-Za-z_][A-Za-z0-9_]*)")


def strip(src):
    """The source with comments, strings and char literals blanked (newlines kept)."""
    out, i, n = [], 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif src.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if src.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif src.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif re.match(r'b?r(#*)"', src[i:i + 20]) and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_")):
            m = re.match(r'b?r(#*)"', src[i:i + 20])
            end = '"' + m.group(1)
            j = src.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            j += 1
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif c == "'":
            m = re.match(r"'(\\.[^']*|[^'\\])'", src[i:i + 12])
            if m:
                out.append(" " * m.end())
                i += m.end()
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def skip_item(code, i):
    """The index after the item starting at i (up to its matching `}` or `;`)."""
    depth = 0
    while i < len(code):
        if code[i] == "{":
            depth += 1
        elif code[i] == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        elif code[i] == ";" and depth == 0:
            return i + 1
        i += 1
    return i


def functions(path):
    code = strip(path.read_text())
    # blank every item marked #[cfg(test)]
    for m in reversed(list(re.finditer(r"#\[cfg\(test\)\]", code))):
        end = skip_item(code, m.end())
        code = code[: m.start()] + re.sub(r"[^\n]", " ", code[m.start():end]) + code[end:]
    for m in FN.finditer(code):
        j = m.end()
        # the body starts at the first `{` before any `;` (a trait method without body has `;`)
        while j < len(code) and code[j] not in "{;":
            j += 1
        if j >= len(code) or code[j] == ";":
            continue
        end = skip_item(code, j)
        first = code.count("\n", 0, m.start()) + 1
        last = code.count("\n", 0, end) + 1
        yield m.group(1), first, last - first + 1


def main():
    limit = 80
    args = sys.argv[1:]
    if "--limit" in args:
        limit = int(args[args.index("--limit") + 1])
    root = pathlib.Path(__file__).resolve().parent.parent / "src"
    long = []
    for path in sorted(root.rglob("*.rs")):
        rel = path.relative_to(root.parent).as_posix()
        if path.name == "tests.rs" or "/tests/" in rel:
            continue
        for name, line, length in functions(path):
            if length > limit:
                long.append((length, rel, line, name))
    bad = 0
    for length, rel, line, name in sorted(long, reverse=True):
        why = ALLOWED.get((rel, name))
        if why is None:
            bad += 1
        print(f"{length:5} {rel}:{line} {name}" + (f"  (allowed: {why})" if why else ""))
    print(f"{bad} function(s) over {limit} lines outside data tables")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
