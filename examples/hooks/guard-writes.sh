#!/bin/sh
# guard-writes.sh: a pre_tool_use hook for every tool that writes files: `write`, `edit`,
# `multi_edit`, `notebook_edit` and `apply_patch`.
#
# Blocks a call when any file it writes lies outside the allowed roots of the project. The files are
# `arguments.path` (or Claude Code's `file_path` / `notebook_path`), every entry of `arguments.paths`
# (Codex's `apply_patch`: each file added, updated or deleted, and a move's destination), and every
# file a patch in `arguments.patch` names (`*** Add File:`, `*** Update File:`, `*** Delete File:`,
# `*** Move to:`). Each is resolved against the project root (`./` and `..` are normalised, symlinks
# followed), so `src/../README.md` and `/etc/passwd` are outside, while `./src/a.rs` and
# `$KA_PROJECT_DIR/src/a.rs` are inside.
#
# Allowed roots: GUARD_ROOTS, comma-separated and relative to the project root (default "src,.ka").
# Needs:  python3, to read the JSON payload. Without it the guard blocks every call it sees (it
#         fails closed), and so does `on_error = "block"` if it crashes.
# Prints: nothing on stdout.
# Exits:  0 to allow; 2 to block, with a one-line reason on stderr (the model reads it).
#         A payload it cannot read, or an `apply_patch` that names no file, also exits 2.

root=${KA_PROJECT_DIR:-$PWD}
roots=${GUARD_ROOTS:-src,.ka}

# python3 reads the payload and prints the first target outside the allowed roots (relative to
# the root when it is inside the project, absolute otherwise), on one line; nothing when every
# target is allowed. It exits non-zero when it cannot tell what the call writes.
outside=$(python3 -c '
import json, os, re, sys

payload = json.load(sys.stdin)
tool = payload.get("tool")
args = payload.get("arguments") or {}
if not isinstance(args, dict):
    sys.exit(1)

targets = []
for key in ("path", "file_path", "notebook_path"):
    value = args.get(key)
    if value is None or value == "":
        continue
    if not isinstance(value, str):
        sys.exit(1)
    targets.append(value)
paths = args.get("paths")
if paths is not None:
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        sys.exit(1)
    targets.extend(paths)
patch = args.get("patch")
if patch is not None:
    if not isinstance(patch, str):
        sys.exit(1)
    header = re.compile(r"^\s*\*\*\* (?:Add File|Update File|Delete File|Move to):\s*(.*?)\s*$")
    for line in patch.splitlines():
        match = header.match(line)
        if match:
            targets.append(match.group(1))
if tool == "apply_patch" and not targets:
    sys.exit(1)  # a patch whose files we cannot name: fail closed

root = os.path.realpath(sys.argv[1])
allowed = []
for entry in sys.argv[2].split(","):
    entry = entry.strip()
    while entry.startswith("./"):
        entry = entry[2:]
    entry = entry.rstrip("/")
    if entry:
        allowed.append(entry)

for path in targets:
    target = os.path.realpath(os.path.join(root, path))
    rel = os.path.relpath(target, root)
    if rel == ".." or rel.startswith("../"):
        shown = target
    elif any(rel == a or rel.startswith(a + "/") for a in allowed):
        continue
    else:
        shown = rel
    print(shown.replace("\r", "\\r").replace("\n", "\\n"))
    break
' "$root" "$roots" 2>/dev/null) || {
	echo "guard-writes: could not read the tool call payload; blocked to be safe" >&2
	exit 2
}

[ -n "$outside" ] || exit 0
echo "guard-writes: $outside is outside the allowed roots ($roots) of the project; write inside them" >&2
exit 2
