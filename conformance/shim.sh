#!/bin/sh
# ka-hooks, as the agents under test call it: records each call's arguments, stdin, stdout,
# stderr and exit status under $KA_SHIM_LOG, then answers with the real binary's output.
# With $KA_SHIM_LOG/crash present it exits 1 without running ka-hooks (a crashing ka-hooks);
# with $KA_SHIM_LOG/missing present it exits 127 (a ka-hooks that is not installed).
d="$KA_SHIM_LOG/call-$(date +%s%N)-$$"
mkdir -p "$d"
printf '%s\n' "$@" > "$d/args"
cat > "$d/stdin"
env | grep -E '^(CLAUDE|CODEX|GEMINI|COPILOT|KA_)[A-Z_]*=' > "$d/env"
if [ -e "$KA_SHIM_LOG/missing" ]; then
  echo "ka-hooks: not found" > "$d/stderr"; echo 127 > "$d/rc"; cat "$d/stderr" >&2; exit 127
fi
if [ -e "$KA_SHIM_LOG/crash" ]; then
  echo "ka-hooks: crashed" > "$d/stderr"; echo 1 > "$d/rc"; cat "$d/stderr" >&2; exit 1
fi
"$KA_SHIM_REAL" "$@" < "$d/stdin" > "$d/stdout" 2> "$d/stderr"
rc=$?
echo "$rc" > "$d/rc"
cat "$d/stdout"
cat "$d/stderr" >&2
exit "$rc"
