#!/bin/sh
# format-feedback.sh FILE...: a post_tool_use hook for the tools that write files.
#
# Checks each file just written for trailing whitespace and tab characters: a stand-in for a real
# linter that needs no toolchain and nothing beyond POSIX sh, grep and sed. The model gets the
# findings as feedback appended to the tool result, and can fix the file in its next step.
#
# Wired with a `paths` filter and the `{paths}` placeholder, so ka hands it the touched files as
# arguments (shell-quoted: any file name is safe) and never spawns it for other files:
#
#   paths   = ["**/*.rs", "**/*.md", "!target/**"]
#   command = "sh examples/hooks/format-feedback.sh {paths}"
#
# Prints: {"feedback": "src/a.rs: trailing whitespace on line(s) 3, 7; tab(s) on line(s) 2"} when
#         files have problems (one line per file); nothing when they are clean or missing, or when
#         the write failed (`"is_error":true` in the payload on stdin).
# Exits:  0 always (feedback never blocks anything).

root=${KA_PROJECT_DIR:-$PWD}

# ka writes the payload as compact JSON, so a failed call's payload holds `"is_error":true`.
# (Inside a JSON string a quote is escaped, so the text of a result cannot fake it.)
if grep -q '"is_error":true' 2>/dev/null; then
	exit 0
fi

tab=$(printf '\t')

# Line numbers of the first ten matches of a pattern in a file, as "3, 7, 12".
lines() {
	grep -n -e "$1" -- "$2" | head -n 10 | cut -d: -f1 | tr '\n' ',' | sed 's/,$//; s/,/, /g'
}

# A JSON string body: backslashes and quotes escaped, tabs as \t, other control characters dropped
# (a file name may hold any byte but NUL and `/`; the newlines of a name become spaces).
json_escape() {
	printf '%s' "$1" | tr '\n\r' '  ' | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e "s/$tab/\\\\t/g" |
		tr -d '\000-\010\013-\037'
}

out=
for file in "$@"; do
	case $file in
	/*) abs=$file ;;
	*) abs=$root/$file ;;
	esac
	[ -f "$abs" ] || continue
	trailing=$(lines '[[:space:]]$' "$abs")
	tabs=$(lines "$tab" "$abs")
	problems=
	[ -n "$trailing" ] && problems="trailing whitespace on line(s) $trailing"
	[ -n "$tabs" ] && problems="${problems:+$problems; }tab(s) on line(s) $tabs"
	[ -n "$problems" ] || continue
	# `./-x` (how ka passes a name that starts with `-`) is reported as `-x`.
	name=${file#./}
	out="${out:+$out\\n}$(json_escape "$name"): $problems"
done
[ -n "$out" ] || exit 0
printf '{"feedback": "%s"}\n' "$out"
