#!/bin/sh
# tests-failing-plan-mode.sh: a post_tool_use hook for the `bash` tool.
#
# When the command just run was a test suite (cargo test, cargo nextest, npm/yarn/pnpm test, pytest,
# go test, make test, jest, vitest, ...) and it failed (`is_error` is true, or the result reads like
# failing tests), switches the agent to plan mode: think before touching more code.
#
# Prints: {"mode": "plan", "note": "tests failing: plan before touching code"} on failing tests;
#         nothing otherwise.
# Exits:  0; 1 when the payload is not JSON (the hook then counts as failed: see `on_error`).

exec python3 -c '
import json, re, sys

payload = json.load(sys.stdin)
command = (payload.get("arguments") or {}).get("command") or ""
result = payload.get("result")
text = result if isinstance(result, str) else json.dumps(result)

TEST_RUN = re.compile(
    r"\b(cargo (test|nextest)|(npm|yarn|pnpm|bun)( run)? test|pytest|python3? -m (pytest|unittest)"
    r"|go test|make (test|check)|jest|vitest|mocha|rspec)\b")
FAILURE = re.compile(
    r"test result: FAILED|\bFAILED\b|\bFAIL\b|\b[1-9][0-9]* (failed|failing|failures?)\b"
    r"|\bTests?:.*\bfailed\b")

if isinstance(command, str) and TEST_RUN.search(command):
    if payload.get("is_error") is True or FAILURE.search(text):
        print(json.dumps({"mode": "plan", "note": "tests failing: plan before touching code"}))
'
