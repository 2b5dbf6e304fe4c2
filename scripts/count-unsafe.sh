#!/usr/bin/env bash
# Counts the `unsafe` sites of the crate outside tests: every `unsafe { … }` block, `unsafe fn`,
# `unsafe impl` and `unsafe extern` in src/, leaving out test files (`tests.rs`, `*_tests.rs`,
# the test-only `process/alloc_guard.rs`) and items under `#[cfg(test)]` or
# `#[cfg(all(test, …))]`. Comments and string literals are skipped.
#
#   bash scripts/count-unsafe.sh        # the total, then the count per file
#   bash scripts/count-unsafe.sh -v     # also every site, as file:line
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 - "$@" <<'EOF'
import pathlib, re, sys

verbose = "-v" in sys.argv[1:]
TEST_FILES = re.compile(r"(^|/)(tests|[a-z0-9_]+_tests|alloc_guard)\.rs$")
SITE = re.compile(r"\bunsafe\s*(\{|fn\b|impl\b|extern\b)")
CFG_TEST = re.compile(r"#\[cfg\((test|all\(test\b[^\]]*)\)\]")


def blank(text):
    """The text with comments, string and char literals replaced by spaces (lines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i)); i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j): depth += 1; j += 2
                elif text.startswith("*/", j): depth -= 1; j += 2
                else: j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j])); i = j
        elif c == "r" and re.match(r'r#*"', text[i:i + 10]) and not (i and (text[i-1].isalnum() or text[i-1] == "_")):
            hashes = re.match(r'r(#*)"', text[i:]).group(1)
            end = text.find('"' + hashes, i + len(hashes) + 2)
            j = n if end < 0 else end + 1 + len(hashes)
            out.append(re.sub(r"[^\n]", " ", text[i:j])); i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(re.sub(r"[^\n]", " ", text[i:j + 1])); i = j + 1
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", text[i:i + 4]):
            m = re.match(r"'(\\.|[^\\'])'", text[i:i + 4])
            out.append(" " * len(m.group(0))); i += len(m.group(0))
        else:
            out.append(c); i += 1
    return "".join(out)


def test_spans(code):
    """(start, end) offsets of the items under #[cfg(test)]."""
    spans = []
    for m in CFG_TEST.finditer(code):
        i = m.end()
        # The item runs to its first `;` at depth 0 or to the end of its first `{…}`.
        depth, j = 0, i
        while j < len(code):
            if code[j] == "{": depth += 1
            elif code[j] == "}":
                depth -= 1
                if depth == 0: j += 1; break
            elif code[j] == ";" and depth == 0: j += 1; break
            j += 1
        spans.append((m.start(), j))
    return spans


total, per_file, sites = 0, {}, []
for path in sorted(pathlib.Path("src").rglob("*.rs")):
    name = path.as_posix()
    if TEST_FILES.search(name):
        continue
    code = blank(path.read_text())
    spans = test_spans(code)
    for m in SITE.finditer(code):
        if any(a <= m.start() < b for a, b in spans):
            continue
        line = code.count("\n", 0, m.start()) + 1
        sites.append(f"{name}:{line}")
        per_file[name] = per_file.get(name, 0) + 1
        total += 1

print(f"{total} unsafe sites outside tests")
for name, count in sorted(per_file.items(), key=lambda kv: (-kv[1], kv[0])):
    print(f"{count:4} {name}")
if verbose:
    print("\n".join(sites))
EOF
