#!/bin/sh
# notify-stop.sh: a stop hook (the agent finished its turn).
#
# Appends one line, "<UTC time> stop=<done|aborted|error> project=<dir>", to
# ${KA_NOTIFY_FILE:-$KA_PROJECT_DIR/.ka/notifications.log} (creating its folder), and, when
# `notify-send` exists, shows a desktop notification too (its failure is ignored; set
# KA_NOTIFY_DESKTOP=0 to skip it).
#
# Prints: nothing.
# Exits:  0 (a stop hook cannot block anything; a failure to write the log exits 1 and is recorded).

# `ka-hooks doctor --exec` runs hooks on a synthetic payload: read it, but notify nobody.
doctor=${KA_HOOKS_DOCTOR:-0}

root=${KA_PROJECT_DIR:-$PWD}
log=${KA_NOTIFY_FILE:-$root/.ka/notifications.log}

# The payload's `stop` field, on one line ("unknown" when absent or unreadable).
reason=$(python3 -c '
import json, sys
stop = json.load(sys.stdin).get("stop")
print(str(stop or "unknown").replace("\n", " "))
' 2>/dev/null) || reason=unknown

[ "$doctor" = 1 ] && exit 0

mkdir -p "$(dirname "$log")" || exit 1
printf '%s stop=%s project=%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$reason" "$root" >>"$log" || exit 1

if [ "${KA_NOTIFY_DESKTOP:-1}" != 0 ] && command -v notify-send >/dev/null 2>&1; then
	notify-send "ka" "turn ended: $reason" >/dev/null 2>&1 || true
fi
exit 0
