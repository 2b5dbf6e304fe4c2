#!/bin/sh
# format-feedback.sh: a post_tool_use hook for the `write` and `edit` tools.
#
# Checks the file just written for trailing whitespace and tab characters: a stand-in for a real
# formatter (rustfmt, prettier, ...) that needs no toolchain. The model gets the finding as feedback
# appended to the tool result, and can fix the file in its next step.
#
# Prints: {"feedback": "<file>: trailing whitespace on line(s) 3, 7; tab(s) on line(s) 2"} when the
#         file has problems; nothing when it is clean, missing, or the write failed.
# Exits:  0 always (feedback never blocks anything; an unreadable payload means nothing to say).

root=${KA_PROJECT_DIR:-$PWD}

# The written file's path, or nothing when the write failed (`is_error`) or names no path.
file=$(python3 -c '
import json, sys
payload = json.load(sys.stdin)
args = payload.get("arguments") or {}
if not payload.get("is_error"):
    print(args.get("path") or args.get("file_path") or "")
' 2>/dev/null) || exit 0
[ -n "$file" ] || exit 0
case $file in
	/*) abs=$file ;;
	*) abs=$root/$file ;;
esac
[ -f "$abs" ] || exit 0

# Line numbers of the first ten matches of a pattern, as "3, 7, 12".
lines() {
	grep -n -e "$1" "$abs" | head -n 10 | cut -d: -f1 | tr '\n' ',' | sed 's/,$//; s/,/, /g'
}
tab=$(printf '\t')
trailing=$(lines '[[:space:]]$')
tabs=$(lines "$tab")

problems=
[ -n "$trailing" ] && problems="trailing whitespace on line(s) $trailing"
[ -n "$tabs" ] && problems="${problems:+$problems; }tab(s) on line(s) $tabs"
[ -n "$problems" ] || exit 0

# python3 writes the JSON, so quotes and backslashes in the path are escaped correctly.
python3 -c 'import json, sys; print(json.dumps({"feedback": sys.argv[1]}))' "$file: $problems"
