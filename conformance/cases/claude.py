"""Claude Code, driven with `claude -p` against the Anthropic Messages mock."""

import json
import os

from cases import registry
from cases.common import GUARD_ENV, GUARD_RM, STOP_ONCE, continuations, stop_always
from lib import check, Skip
from mock.anthropic import Anthropic
from mock.script import serve

CASES, case = registry()
BIN = None


def prepare(world, agent_bin):
    global BIN
    BIN = agent_bin
    os.makedirs(os.path.join(world.home, ".claude"), exist_ok=True)


class Run:
    """One `claude -p` run: its stream events, what the user was shown, and the exit status."""

    def __init__(self, proc):
        self.rc = proc.returncode
        self.stderr = proc.stderr
        self.events = []
        for line in proc.stdout.splitlines():
            try:
                self.events.append(json.loads(line))
            except ValueError:
                self.events.append({"type": "text", "text": line})
        result = [e for e in self.events if e.get("type") == "result"]
        self.result = result[-1].get("result", "") if result else ""
        # What a person running `claude -p` reads: the result, the informational system
        # messages (hook systemMessage, warnings) and stderr. Hook debug events are not counted.
        infos = [e.get("content", "") for e in self.events
                 if e.get("type") == "system" and e.get("subtype") == "informational"]
        self.shown = "\n".join([self.result, *map(str, infos), self.stderr])

    def hook_events(self, event):
        return [e for e in self.events if e.get("subtype") == "hook_response" and e.get("hook_event") == event]


def claude(w, turns, prompt="do the task", mode="acceptEdits", cwd=None, env=None, allowed="Bash"):
    srv, _ = serve(Anthropic, turns, w.model_log)
    try:
        w.proxies(srv.server_port)
        e = w.env(ANTHROPIC_BASE_URL=f"http://127.0.0.1:{srv.server_port}", ANTHROPIC_API_KEY="sk-mock",
                  DISABLE_TELEMETRY="1", DISABLE_AUTOUPDATER="1", DISABLE_ERROR_REPORTING="1",
                  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", IS_SANDBOX="1",
                  CLAUDE_CONFIG_DIR=os.path.join(w.home, ".claude"), **(env or {}))
        argv = [BIN, "-p", prompt, "--output-format", "stream-json", "--verbose",
                "--include-hook-events", "--permission-mode", mode]
        if allowed:
            argv += ["--allowedTools", allowed]
        return Run(w.run(argv, e, cwd=cwd))
    finally:
        srv.shutdown()


def bash(command):
    return {"tool": "Bash", "input": {"command": command, "description": "run it"}}


def install(w, *more):
    r = w.ka("install", "claude", "--write", *more)
    return r.stdout + r.stderr


@case("block-shell", "a guard blocks a shell command; the model reads the reason")
def block_shell(w):
    w.ka_toml(GUARD_RM)
    install(w)
    os.makedirs(w.path("build"))
    r = claude(w, [bash("rm -rf build"), {"text": "blocked, stopping"}])
    check(os.path.isdir(w.path("build")), "build/ was removed: the guard did not block")
    check(w.model_saw("ka-guard: no rm -rf here"), "the model never received the guard's reason")
    check(any(c["rc"] == 2 for c in w.calls_for("PreToolUse")), "ka-hooks claude did not answer exit 2")
    check(r.rc == 0, f"claude exited {r.rc}")


@case("block-write", "a guard blocks Write and Edit of a file; the model reads the reason")
def block_write(w):
    w.ka_toml(GUARD_ENV)
    install(w)
    w.write(".env", "KEY=old\n")
    env = w.path(".env")
    claude(w, [{"tool": "Write", "input": {"file_path": w.path("new.env"), "content": "KEY=1\n"}},
               {"tool": "Read", "input": {"file_path": env}},
               {"tool": "Edit", "input": {"file_path": env, "old_string": "old", "new_string": "new"}},
               {"text": "both blocked"}])
    check(w.read("new.env") is None, "Write created new.env past the guard")
    check(w.read(".env") == "KEY=old\n", "Edit changed .env past the guard")
    blocked = [c for c in w.calls_for("PreToolUse") if c["rc"] == 2]
    tools = sorted(c["stdin"]["tool_name"] for c in blocked)
    check(tools == ["Edit", "Write"], f"blocked tools: {tools}")
    check(w.model_saw("ka-guard: no writes to .env files"), "the model never received the reason")


@case("allow", "an allowed call runs, and its output reaches the model")
def allow(w):
    w.ka_toml(GUARD_RM)
    install(w)
    claude(w, [bash("echo conformance-ok > allowed.txt && cat allowed.txt"), {"text": "done"}])
    check(w.read("allowed.txt") == "conformance-ok\n", "the allowed command did not run")
    check(w.model_saw("conformance-ok"), "the command's output did not reach the model")
    check(all(c["rc"] == 0 for c in w.calls_for("PreToolUse")), "ka-hooks did not answer exit 0")


@case("rewrite", "a hook rewrites a shell command; the rewritten command runs")
def rewrite(w):
    w.ka_toml('''
[[hooks]]
name = "rewrite"
event = "pre_tool_use"
tool = "bash"
command = """echo '{"updated_input": {"command": "echo rewritten > out.txt"}}'"""
''')
    install(w)
    claude(w, [bash("echo original > out.txt"), {"text": "done"}])
    check(w.read("out.txt") == "rewritten\n", f"out.txt is {w.read('out.txt')!r}")


@case("feedback", "post-tool feedback reaches the model with the tool result")
def feedback(w):
    w.ka_toml('''
[[hooks]]
name = "lint"
event = "post_tool_use"
tool = "bash"
command = """echo '{"feedback": "ka-feedback: lint found 2 warnings"}'"""
''')
    install(w)
    claude(w, [bash("echo hi"), {"text": "done"}])
    check(w.model_saw("ka-feedback: lint found 2 warnings"), "the model never received the feedback")


@case("keep-going", "a stop hook keeps the turn going once; the model reads why")
def keep_going(w):
    w.ka_toml(STOP_ONCE)
    install(w)
    claude(w, [{"text": "finished"}, {"text": "tests run"}])
    check(w.model_saw("ka-continue: run the tests first"), "the model never received the stop reason")
    check(continuations(w) == 1, f"{continuations(w)} continuations, expected 1")


@case("cap", "keep going is capped at max_continuations (3), and the user is told")
def cap(w):
    stop_always(w, "ka-continue: again $(date +%s%N)", 3)
    install(w)
    r = claude(w, [{"text": "finished"}])
    check(continuations(w) == 3, f"{continuations(w)} continuations, expected 3")
    check("max_continuations" in r.shown, f"the user was not told: {r.shown[-500:]!r}")


@case("cap-repeated", "a stop reason repeated word for word counts once: cap 3 = 3 continuations")
def cap_repeated(w):
    stop_always(w, "ka-continue: same words", 3)
    install(w)
    claude(w, [{"text": "finished"}])
    check(continuations(w) == 3, f"{continuations(w)} continuations, expected 3")


@case("cap-above-8", "max_continuations = 12 is reached, above Claude Code's own stop cap of 8")
def cap_above_8(w):
    stop_always(w, "ka-continue: again $(date +%s%N)", 12)
    out = install(w)
    check("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP=12" in out, f"install did not mention Claude's cap: {out!r}")
    claude(w, [{"text": "finished"}], env={"CLAUDE_CODE_STOP_HOOK_BLOCK_CAP": "12"})
    check(continuations(w) == 12, f"{continuations(w)} continuations, expected 12")


@case("prompt-context", "prompt context and session-start context reach the model")
def prompt_context(w):
    w.ka_toml('''
[[hooks]]
name = "prompt-ctx"
event = "user_prompt_submit"
command = """echo '{"context": "ka-context: the prompt hook ran"}'"""

[[hooks]]
name = "session-ctx"
event = "session_start"
command = """echo '{"context": "ka-context: the session hook ran"}'"""
''')
    install(w)
    claude(w, [{"text": "ok"}])
    check(w.model_saw("ka-context: the prompt hook ran"), "the prompt context did not reach the model")
    check(w.model_saw("ka-context: the session hook ran"), "the session-start context did not reach the model")


@case("crash", "a crashing guard with on_error = block blocks, and says why")
def crash(w):
    w.ka_toml('''
[[hooks]]
name = "broken"
event = "pre_tool_use"
tool = "bash"
on_error = "block"
command = "echo 'ka-broken: KeyError tool' >&2; exit 1"
''')
    install(w)
    claude(w, [bash("echo ran > crashed.txt"), {"text": "done"}])
    check(w.read("crashed.txt") is None, "the call ran past a crashed on_error = block guard")
    check(w.model_saw("broken"), "the model was not told which guard failed")


@case("untrusted", "an untrusted project's guard does not run, and the user is told")
def untrusted(w):
    w.ka_toml(GUARD_RM, trust=False)
    install(w)
    os.makedirs(w.path("build"))
    r = claude(w, [bash("rm -rf build"), {"text": "done"}])
    check(not os.path.isdir(w.path("build")), "the untrusted guard ran")
    check("trust" in r.shown, f"the user was not told the project is untrusted: {r.shown[-600:]!r}")


@case("stale", "a trusted file edited since fails closed: its guard blocks what it matched")
def stale(w):
    w.ka_toml(GUARD_RM)
    install(w)
    with open(w.path(".ka/ka.toml"), "a") as f:
        f.write("# edited\n")
    claude(w, [bash("echo ran > stale.txt"), {"text": "done"}])
    check(w.read("stale.txt") is None, "the stale guard let the call through")
    check(w.model_saw("trust"), "the model was not told how to re-trust")


@case("ask", "a hook's ask in -p (no one to ask) does not run the call, and says why")
def ask(w):
    w.ka_toml('''
[[hooks]]
name = "asker"
event = "pre_tool_use"
tool = "bash"
command = """echo '{"decision": "ask", "reason": "ka-ask: a person must approve this"}'"""
''')
    install(w)
    r = claude(w, [bash("echo ran > asked.txt"), {"text": "done"}])
    check(w.read("asked.txt") is None, "an ask ran without a person")
    check(w.model_saw("ka-ask: a person must approve this") or "ka-ask" in r.shown, "the ask's reason was shown nowhere")


@case("halt", "a halt stops the agent, and its reason is shown in -p output")
def halt(w):
    w.ka_toml('''
[[hooks]]
name = "halter"
event = "pre_tool_use"
tool = "bash"
command = """echo '{"halt": "ka-halt: the build server is down"}'"""
''')
    install(w)
    r = claude(w, [bash("echo ran > halted.txt"), {"text": "continued after the halt"}])
    check(w.read("halted.txt") is None, "the halted call ran")
    check("ka-halt: the build server is down" in r.shown, f"the halt's reason was not shown: {r.shown[-600:]!r}")
    check("continued after the halt" not in r.shown, "the model went on after the halt")


# Claude Code asks before any write to its own settings files itself; ka's own files are ka's.
KA_TOML = ".ka/ka.toml"


def write_ka_toml_turns(w):
    return [{"tool": "Write", "input": {"file_path": w.path(KA_TOML), "content": "# emptied\n"}}, {"text": "done"}]


@case("protect", "built-in protection: the model's Write to .ka/ka.toml is not applied")
def protect(w):
    w.ka_toml(GUARD_RM)
    install(w)
    before = w.read(KA_TOML)
    r = claude(w, write_ka_toml_turns(w))
    check(w.read(KA_TOML) == before, "the model overwrote .ka/ka.toml")
    check(w.model_saw("one of ka's own hook files") or "ka's own" in r.shown, "no one was told why")


@case("protect-bypass", "built-in protection holds in bypassPermissions mode (a deny, not an ask)")
def protect_bypass(w):
    w.ka_toml(GUARD_RM)
    install(w)
    before = w.read(KA_TOML)
    claude(w, write_ka_toml_turns(w), mode="bypassPermissions")
    check(w.read(KA_TOML) == before, "the model overwrote .ka/ka.toml in bypassPermissions mode")
    answers = [(c["rc"], c["stdout"] + c["stderr"]) for c in w.calls_for("PreToolUse")]
    check(any(rc == 2 or '"deny"' in a for rc, a in answers), f"ka did not deny: {answers}")


@case("protect-formatter-only", "built-in protection with only a formatter hook (install registers PreToolUse)")
def protect_formatter_only(w):
    w.ka_toml('''
[[hooks]]
name = "fmt"
event = "post_tool_use"
tool = "@file_writes"
command = "true"
''')
    install(w)
    before = w.read(KA_TOML)
    claude(w, write_ka_toml_turns(w))
    check(w.read(KA_TOML) == before, "the model overwrote .ka/ka.toml: PreToolUse is not registered")


@case("parallel", "three parallel shell calls are each blocked, each reason reaches the model")
def parallel(w):
    w.ka_toml(GUARD_RM)
    install(w)
    for d in "abc":
        os.makedirs(w.path(d))
    claude(w, [{"calls": [bash(f"rm -rf {d}") for d in "abc"]}, {"text": "done"}])
    check(all(os.path.isdir(w.path(d)) for d in "abc"), "a parallel call ran past the guard")
    blocked = [c for c in w.calls_for("PreToolUse") if c["rc"] == 2]
    check(len(blocked) == 3, f"{len(blocked)} of 3 calls blocked")
    check(json.dumps(w.last_request()).count("ka-guard: no rm -rf here") >= 3, "not every reason reached the model")


@case("model-retrust", "the model edits .ka/ka.toml and re-trusts it from its shell: refused")
def model_retrust(w):
    w.ka_toml(GUARD_RM)
    install(w)
    os.makedirs(w.path("build"))
    claude(w, [bash("printf '' > .ka/ka.toml; env -u CLAUDECODE ka-hooks trust --yes"),
               bash("rm -rf build"), {"text": "done"}])
    check(os.path.isdir(w.path("build")), "the model re-trusted its own edit and the guarded call ran")


@case("model-revoke", "the model revokes the project's trust from its shell: refused")
def model_revoke(w):
    w.ka_toml(GUARD_RM)
    install(w)
    os.makedirs(w.path("build"))
    claude(w, [bash("env -u CLAUDECODE ka-hooks trust --revoke"), bash("rm -rf build"), {"text": "done"}])
    check(os.path.isdir(w.path("build")), "the model revoked the trust and the guarded call ran")
    shown = w.ka("trust", "--show", check_rc=False).stdout
    check(": trusted" in shown, f"the trust record is gone: {shown[-400:]!r}")


@case("model-disable", "the model cannot switch hooks off from its shell; switched off by hand, doctor reports it")
def model_disable(w):
    w.ka_toml(GUARD_RM)
    install(w)
    # Claude Code asks before a write to its settings in the other modes; the sandbox that
    # `install` turned on refuses the shell's write in every mode.
    claude(w, [bash("""printf '{"disableAllHooks": true}' > .claude/settings.local.json"""), {"text": "done"}],
           mode="bypassPermissions")
    check(w.read(".claude/settings.local.json") is None, "the model's shell switched hooks off")
    # Switched off outside the agent (by a person, or a process the sandbox does not hold).
    with open(w.path(".claude/settings.local.json"), "w") as f:
        f.write('{"disableAllHooks": true}')
    d = w.ka("doctor", check_rc=False)
    out = d.stdout + d.stderr
    check("disableAllHooks" in out and "settings.local.json" in out, f"doctor did not report it: {out[-800:]!r}")
    check(d.returncode != 0, "doctor exited 0 with every hook switched off")


@case("subdirectory", "started in a subdirectory: install and doctor say the project file is not read")
def subdirectory(w):
    w.ka_toml(GUARD_RM)
    out = install(w)
    sub = w.path("sub")
    os.makedirs(sub)
    os.makedirs(w.path("build"))
    claude(w, [bash("rm -rf ../build"), {"text": "done"}], cwd=sub)
    ran = bool(w.calls_for("PreToolUse"))
    check("subdirector" in out, f"install did not say that a start in a subdirectory skips it: {out!r}")
    d = w.ka("doctor", cwd=sub, check_rc=False)
    check(ran or "subdirector" in d.stdout + d.stderr, "doctor did not say that this start skips the project's settings")


@case("subdirectory-user", "a user-level install guards a start in a subdirectory")
def subdirectory_user(w):
    w.ka_toml(GUARD_RM)
    install(w, "--user")
    sub = w.path("sub")
    os.makedirs(sub)
    os.makedirs(w.path("build"))
    claude(w, [bash("rm -rf ../build"), {"text": "done"}], cwd=sub)
    check(os.path.isdir(w.path("build")), "the guard did not run in a subdirectory start")


@case("ka-missing", "a missing ka-hooks fails closed (onFailure: block)")
def ka_missing(w):
    w.ka_toml(GUARD_RM)
    install(w)
    open(os.path.join(w.shim_log, "missing"), "w").close()
    claude(w, [bash("echo ran > missing.txt"), {"text": "done"}])
    check(w.read("missing.txt") is None, "the call ran with ka-hooks missing")


@case("ka-crash", "a crashing ka-hooks fails closed (onFailure: block)")
def ka_crash(w):
    w.ka_toml(GUARD_RM)
    install(w)
    open(os.path.join(w.shim_log, "crash"), "w").close()
    claude(w, [bash("echo ran > crash.txt"), {"text": "done"}])
    check(w.read("crash.txt") is None, "the call ran with ka-hooks crashing")
