#!/bin/sh
# guard-writes.sh: a pre_tool_use hook for the `write` and `edit` tools.
#
# Blocks a write whose target (`arguments.path`, or Claude Code's `arguments.file_path`) lies outside
# the allowed roots of the project. The path is resolved against the project root (`./` and `..` are
# normalised, symlinks followed), so `src/../README.md` and `/etc/passwd` are outside, while
# `./src/a.rs` and `$KA_PROJECT_DIR/src/a.rs` are inside.
#
# Allowed roots: GUARD_ROOTS, comma-separated and relative to the project root (default "src,.ka").
# Prints: nothing on stdout.
# Exits:  0 to allow; 2 to block, with a one-line reason on stderr (the model reads it).
#         A payload it cannot read also exits 2: a guard fails closed.

root=${KA_PROJECT_DIR:-$PWD}
roots=${GUARD_ROOTS:-src,.ka}

# JSON parsing is python3's job. It prints the target relative to the project root, its absolute
# path when it is outside the root, or nothing when the call names no path.
rel=$(python3 -c '
import json, os, sys
args = json.load(sys.stdin).get("arguments") or {}
path = args.get("path") or args.get("file_path") or ""
if path:
    root = os.path.realpath(sys.argv[1])
    target = os.path.realpath(os.path.join(root, path))
    rel = os.path.relpath(target, root)
    print(target if rel == ".." or rel.startswith("../") else rel)
' "$root" 2>/dev/null) || {
	echo "guard-writes: could not read the tool call payload; blocked to be safe" >&2
	exit 2
}

# No path: nothing to judge here (the tool itself rejects the call).
[ -n "$rel" ] || exit 0

case $rel in
	/*) ;; # outside the project: fall through to the block below
	*)
		set -f # GUARD_ROOTS is split on commas, never globbed
		IFS=,
		for allowed in $roots; do
			# Trim blanks, a leading `./` and a trailing `/`: " ./src/ " is `src`.
			while [ "${allowed# }" != "$allowed" ]; do allowed=${allowed# }; done
			while [ "${allowed% }" != "$allowed" ]; do allowed=${allowed% }; done
			allowed=${allowed#./}
			allowed=${allowed%/}
			[ -n "$allowed" ] || continue
			case $rel in
				"$allowed" | "$allowed"/*) exit 0 ;;
			esac
		done
		;;
esac

echo "guard-writes: $rel is outside the allowed roots ($roots) of the project; write inside them" >&2
exit 2
