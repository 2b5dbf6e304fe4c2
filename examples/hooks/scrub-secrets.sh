#!/bin/sh
# scrub-secrets.sh: a pre_tool_use hook, e.g. for the `bash` and `write` tools.
#
# Replaces things that look like secrets in `arguments.command` and `arguments.content` before the
# tool runs: AWS access key ids (AKIA...), GitHub tokens (ghp_...), PEM private keys, and
# `password=...` assignments. Hooks later in the pipeline (a guard, say) see the scrubbed arguments.
#
# Prints: {"updated_input": {<only the scrubbed keys>}, "note": "scrubbed N secret(s)"} when it
#         replaced something (ka merges `updated_input` into the arguments); nothing otherwise.
# Exits:  0; 2 (blocks the call) when the scrubbed input is too big to hand back (ka reads at most
#         1 MiB of stdout), rather than let a secret through; 1 when the payload is not JSON.

exec python3 -c '
import json, re, sys

PATTERNS = [
    (re.compile(r"AKIA[0-9A-Z]{16}"), "[REDACTED:aws-key]"),
    (re.compile(r"ghp_[A-Za-z0-9]{36}"), "[REDACTED:github-token]"),
    # The whole PEM block, or up to the end when the END line is missing.
    (re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----(?:.*?-----END [A-Z ]*PRIVATE KEY-----|.*)",
                re.S), "[REDACTED:private-key]"),
    (re.compile(r"(?i)(password\s*=\s*)[^\s\x27\x22&;]+"), r"\1[REDACTED]"),
]

args = json.load(sys.stdin).get("arguments") or {}
scrubbed, count = {}, 0
for key in ("command", "content"):
    text = args.get(key)
    if not isinstance(text, str):
        continue
    for pattern, replacement in PATTERNS:
        text, n = pattern.subn(replacement, text)
        count += n
    if text != args[key]:
        scrubbed[key] = text

if count:
    answer = json.dumps({"updated_input": scrubbed, "note": "scrubbed %d secret(s)" % count})
    if len(answer.encode()) >= 1024 * 1024:
        sys.stderr.write("scrub-secrets: found %d secret(s) in an input too large to rewrite\n" % count)
        sys.exit(2)
    print(answer)
'
