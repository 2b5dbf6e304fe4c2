#!/usr/bin/env python3
"""Generates tests/corpus/agents/<case>.json, the payload GitHub Copilot, Cursor and Antigravity
send for each case of the corpus, from the case's Claude Code payload and the one description
below of each agent's contract (events, envelope, tools and argument names; see
docs/agents.md and ../shared/agents-2026-12.md for the sources).

    python3 tests/corpus/agents.py           # writes the files
    python3 tests/corpus/agents.py --check   # exit 1 when a file differs from what it makes

A new case needs no file of its own here: run this once. What the description cannot say (an
event with fields of its own, a reason a case cannot be expressed) the case file states under
`agent_payloads` (the agent's payload, or {"unsupported": why}); `expect_by_agent` and
`tool_by_agent` in the case file are copied through.
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TIMESTAMP = 1767225600000


class Unsupported(Exception):
    """The agent cannot express this case: the reason."""


def renamed(args, names, keep_rest=False):
    out = {new: args[old] for old, new in names.items() if old in args}
    if keep_rest:
        out.update({k: v for k, v in args.items() if k not in names})
    return out


# Each agent: its name for each Claude Code tool, as (tool, arguments).
TOOLS = {
    "copilot": {
        "Bash": lambda a: ("bash", dict(a)),
        "Write": lambda a: ("create", renamed(a, {"file_path": "path", "content": "file_text"})),
        "Edit": lambda a: ("edit", renamed(a, {"file_path": "path", "old_string": "old_str",
                                               "new_string": "new_str"}, keep_rest=True)),
        "Read": lambda a: ("view", renamed(a, {"file_path": "path"})),
        "WebFetch": lambda a: ("web_fetch", dict(a)),
    },
    "cursor": {
        "Bash": lambda a: ("Shell", {"command": a["command"]}),
        "Write": lambda a: ("Write", dict(a)),
        "Edit": lambda a: ("Write", dict(a)),
        "MultiEdit": lambda a: ("Write", dict(a)),
        "Read": lambda a: ("Read", dict(a)),
    },
    "antigravity": {
        "Bash": lambda a: ("run_command", {"CommandLine": a["command"]}),
        "Write": lambda a: ("write_to_file", {"TargetFile": a["file_path"], "CodeContent": a["content"]}),
        "Edit": lambda a: ("replace_file_content", {"TargetFile": a["file_path"], "ReplacementChunks": [
            {"TargetContent": a["old_string"], "ReplacementContent": a["new_string"]}]}),
        "MultiEdit": lambda a: ("multi_replace_file_content", {"TargetFile": a["file_path"]}),
        "Read": lambda a: ("view_file", {"AbsolutePath": a["file_path"]}),
    },
}
NO_TOOL = {"copilot": "Copilot has no such tool", "cursor": "Cursor has no such tool",
           "antigravity": "no such Antigravity tool is known"}
NO_EVENT = {"copilot": "Copilot has no {} event", "cursor": "Cursor has no {} event",
            "antigravity": "Antigravity has no confirmed {} event"}


def tool_call(agent, c):
    """(tool, arguments) of the case's tool call for `agent`, or None."""
    to = TOOLS[agent].get(c["tool_name"])
    return to(c["tool_input"]) if to else None


def output(c):
    return json.dumps(c["tool_response"])


# Each agent: its event for each Claude Code event, and the fields it adds to the envelope.
def copilot_tool(c, extra=None):
    tool, args = tool_call("copilot", c)
    return {"toolName": tool, "toolArgs": args, **(extra or {})}


def copilot_source(source):
    if source not in ("startup", "resume", "new"):
        raise Unsupported(f"Copilot's sessionStart source is startup, resume or new: it names no "
                          f"{source!r} start, which this case's hook matches")
    return source


COPILOT = {
    "PreToolUse": ("preToolUse", copilot_tool),
    "PermissionRequest": ("permissionRequest", copilot_tool),
    "PostToolUse": ("postToolUse", lambda c: copilot_tool(c, {"toolResult": {
        "resultType": "success", "textResultForLlm": output(c)}})),
    "PostToolUseFailure": ("postToolUseFailure", lambda c: copilot_tool(c, {"error": c["error"]})),
    "Stop": ("agentStop", lambda c: {"stop_hook_active": c["stop_hook_active"],
                                     "transcriptPath": c["transcript_path"], "stopReason": "end_turn"}),
    "SubagentStop": ("subagentStop", lambda c: {
        "stop_hook_active": c["stop_hook_active"], "transcriptPath": c["transcript_path"],
        "agentName": c["agent_type"], "agentId": c["agent_id"]}),
    "SubagentStart": ("subagentStart", lambda c: {
        "transcriptPath": c["transcript_path"], "agentName": c["agent_type"], "agentId": c["agent_id"]}),
    "UserPromptSubmit": ("userPromptSubmitted", lambda c: {"prompt": c["prompt"]}),
    "SessionStart": ("sessionStart", lambda c: {"source": copilot_source(c["source"])}),
    "Notification": ("notification", lambda c: {"message": c["message"],
                                                "notification_type": c["notification_type"]}),
    "PreCompact": ("preCompact", lambda c: {"trigger": c["trigger"],
                                            "customInstructions": c["custom_instructions"]}),
}


def cursor_start(c):
    if c["source"] != "startup":
        raise Unsupported(f"Cursor's sessionStart names no source: this case is about a "
                          f"{c['source']!r} start")
    return {"session_id": c["session_id"], "is_background_agent": False, "composer_mode": "agent"}


def cursor_tool(c, extra=None):
    tool, args = tool_call("cursor", c)
    return {"tool_name": tool, "tool_input": args, "cwd": c["cwd"], "tool_use_id": "t1", **(extra or {})}


CURSOR = {
    "PreToolUse": ("preToolUse", cursor_tool),
    "PostToolUse": ("postToolUse", lambda c: cursor_tool(c, {"tool_output": output(c)})),
    "PostToolUseFailure": ("postToolUseFailure", lambda c: cursor_tool(c, {
        "error_message": c["error"], "failure_type": "error"})),
    "Stop": ("stop", lambda c: {"status": "completed", "loop_count": int(c["stop_hook_active"])}),
    "SubagentStop": ("subagentStop", lambda c: {"status": "completed", "subagent_type": c["agent_type"]}),
    "SubagentStart": ("subagentStart", lambda c: {"subagent_type": c["agent_type"],
                                                  "subagent_id": c["agent_id"]}),
    "UserPromptSubmit": ("beforeSubmitPrompt", lambda c: {"prompt": c["prompt"]}),
    "SessionStart": ("sessionStart", lambda c: cursor_start(c)),
    "PreCompact": ("preCompact", lambda c: {
        "trigger": c["trigger"], "context_usage_percent": 92, "context_tokens": 184000,
        "context_window_size": 200000, "message_count": 120, "messages_to_compact": 100,
        "is_first_compaction": True}),
}


def antigravity_tool(c):
    tool, args = tool_call("antigravity", c)
    return {"toolCall": {"name": tool, "args": args}, "stepIdx": 1}


ANTIGRAVITY = {
    "PreToolUse": ("PreToolUse", antigravity_tool),
    "PostToolUse": ("PostToolUse", antigravity_tool),
    "Stop": ("PostInvocation", lambda c: {"invocationNum": 1}),
}


def copilot(c, event, fields):
    envelope = {"sessionId": c["session_id"], "timestamp": TIMESTAMP, "cwd": c["cwd"]}
    return {"event": event, "payload": {**envelope, **fields}}


def cursor(c, event, fields):
    return {"conversation_id": c["session_id"], "generation_id": "g1", "model": "m",
            "hook_event_name": event, "cursor_version": "3.9.16", "workspace_roots": [c["cwd"]],
            "user_email": None, "transcript_path": None, **fields}


def antigravity(c, event, fields):
    envelope = {"conversationId": c["session_id"], "workspacePaths": [c["cwd"]], "transcriptPath": "/tmp/t"}
    return {"event": event, "payload": {**envelope, **fields}}


AGENTS = {"copilot": (COPILOT, copilot), "cursor": (CURSOR, cursor), "antigravity": (ANTIGRAVITY, antigravity)}


def payload(agent, case):
    """What `agent` sends for `case`, or {"unsupported": why}."""
    given = case.get("agent_payloads", {}).get(agent)
    if given is not None:
        return given
    c = case.get("claude") or {}
    if "unsupported" in c:
        return {"unsupported": "Claude Code has no such event either: " + c["unsupported"]}
    events, shape = AGENTS[agent]
    event = c["hook_event_name"]
    if event not in events:
        return {"unsupported": NO_EVENT[agent].format(event)}
    if "tool_name" in c and c["tool_name"] not in TOOLS[agent]:
        return {"unsupported": NO_TOOL[agent]}
    name, fields = events[event]
    try:
        return shape(c, name, fields(c))
    except Unsupported as why:
        return {"unsupported": str(why)}


def generated(case):
    out = {agent: payload(agent, case) for agent in AGENTS}
    for key in ("expect_by_agent", "tool_by_agent"):
        mine = {a: v for a, v in case.get(key, {}).items() if a in AGENTS}
        if mine:
            out[key] = mine
    return out


def main():
    check = "--check" in sys.argv[1:]
    stale = []
    for name in sorted(os.listdir(HERE)):
        if not name.endswith(".json"):
            continue
        with open(os.path.join(HERE, name)) as f:
            case = json.load(f)
        text = json.dumps(generated(case), indent=2, ensure_ascii=False) + "\n"
        path = os.path.join(HERE, "agents", name)
        current = open(path).read() if os.path.exists(path) else None
        if current != text:
            stale.append(name)
            if not check:
                with open(path, "w") as f:
                    f.write(text)
    if check and stale:
        print("tests/corpus/agents/ is not what tests/corpus/agents.py makes for: " + ", ".join(stale)
              + "\nrun: python3 tests/corpus/agents.py", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
