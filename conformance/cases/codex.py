"""Codex CLI, driven with `codex exec` against the Responses API mock. Its hooks run only once
a person reviewed them (`/hooks`); `review()` does that review through `codex app-server`, as
the TUI does, and records Codex's own hash."""

import json
import os
import subprocess

from cases import registry
from cases.common import GUARD_ENV, GUARD_RM, STOP_ONCE, continuations, stop_always
from lib import check, CaseFailed
from mock.responses import Responses
from mock.script import serve

CASES, case = registry()
BIN = None
# Codex itself refuses `rm -rf` under approval_policy = "never": where the call must be able to
# run, the guard matches a harmless one.
GUARD_TOUCH = GUARD_RM.replace("rm -rf", "touch marker")


def prepare(world, agent_bin):
    global BIN
    BIN = agent_bin
    os.makedirs(codex_home(world), exist_ok=True)


def codex_home(w):
    return os.path.join(w.home, ".codex")


def install(w, review_hooks=True):
    """`ka-hooks install codex`'s entries in ~/.codex/hooks.json, then the person's review."""
    r = w.ka("install", "codex", check_rc=False)
    hooks = json.loads(r.stdout)
    with open(os.path.join(codex_home(w), "hooks.json"), "w") as f:
        json.dump(hooks, f, indent=2)
    w.install_output = r.stdout + r.stderr
    if review_hooks:
        review(w)
    return w.install_output


def config(w, port):
    """config.toml: the mock model, then the review state (`[hooks.state]` tables come last)."""
    with open(os.path.join(codex_home(w), "config.toml"), "w") as f:
        f.write(f'''model = "gpt-5.5"
model_provider = "mock"
approval_policy = "never"
sandbox_mode = "workspace-write"
check_for_update_on_startup = false
[analytics]
enabled = false
[model_providers.mock]
name = "mock"
base_url = "http://127.0.0.1:{port}/v1"
env_key = "MOCK_API_KEY"
wire_api = "responses"
''' + getattr(w, "codex_state", ""))


def app_server(w, requests):
    """Sends JSON-RPC requests to `codex app-server`; returns their results."""
    p = subprocess.Popen([BIN, "app-server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True, cwd=w.proj,
                         env=w.env(CODEX_HOME=codex_home(w), MOCK_API_KEY="sk-mock"))
    try:
        msgs = [{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"clientInfo": {"name": "conformance", "version": "1"}}},
                {"jsonrpc": "2.0", "method": "initialized"}]
        msgs += [{"jsonrpc": "2.0", "id": i + 1, "method": m, "params": prm} for i, (m, prm) in enumerate(requests)]
        results = {}
        for msg in msgs:
            p.stdin.write(json.dumps(msg) + "\n")
            p.stdin.flush()
            while "id" in msg:
                reply = json.loads(p.stdout.readline() or "{}")
                if reply.get("id") == msg["id"]:
                    results[msg["id"]] = reply.get("result", reply.get("error"))
                    break
                if not reply:
                    raise CaseFailed("codex app-server ended early")
        return [results[i + 1] for i in range(len(requests))]
    finally:
        p.kill()
        p.wait()


def hooks_list(w):
    [listed] = app_server(w, [("hooks/list", {"cwds": [w.proj]})])
    return [h for d in listed["data"] for h in d["hooks"]]


def review(w):
    """What a person does in Codex's /hooks screen: trust every listed hook as it is now."""
    lines = [f'[hooks.state."{h["key"]}"]\ntrusted_hash = "{h["currentHash"]}"\n' for h in hooks_list(w)]
    w.codex_state = "\n" + "\n".join(lines)
    with open(os.path.join(codex_home(w), "config.toml"), "a") as f:
        f.write(w.codex_state)


class Run:
    def __init__(self, proc):
        self.rc = proc.returncode
        self.shown = proc.stdout + proc.stderr


def codex(w, turns, prompt="do the task"):
    srv, _ = serve(Responses, turns, w.model_log)
    try:
        w.proxies(srv.server_port)
        config(w, srv.server_port)
        e = w.env(CODEX_HOME=codex_home(w), MOCK_API_KEY="sk-mock")
        return Run(w.run([BIN, "exec", "--skip-git-repo-check", "-C", w.proj, prompt], e))
    finally:
        srv.shutdown()


def sh(command):
    return {"tool": "exec_command", "input": {"cmd": command}}


def patch(path, text):
    return {"tool": "apply_patch", "input": f"*** Begin Patch\n*** Add File: {path}\n+{text}\n*** End Patch\n"}


@case("block-shell", "a guard blocks a shell command; the model reads the reason")
def block_shell(w):
    w.ka_toml(GUARD_RM)
    install(w)
    os.makedirs(w.path("build"))
    r = codex(w, [sh("rm -rf build"), {"text": "blocked"}])
    check(os.path.isdir(w.path("build")), "build/ was removed: the guard did not block")
    check(w.model_saw("ka-guard: no rm -rf here"), "the model never received the guard's reason")
    check("Blocked" in r.shown, f"the user was not shown the block: {r.shown[-400:]!r}")


@case("block-write", "a guard blocks apply_patch; the model reads the reason")
def block_write(w):
    w.ka_toml(GUARD_ENV)
    install(w)
    codex(w, [patch("new.env", "KEY=1"), {"text": "blocked"}])
    check(w.read("new.env") is None, "apply_patch created new.env past the guard")
    check(w.model_saw("ka-guard: no writes to .env files"), "the model never received the reason")


@case("allow", "an allowed call runs, and its output reaches the model")
def allow(w):
    w.ka_toml(GUARD_RM)
    install(w)
    codex(w, [sh("echo conformance-ok > allowed.txt && cat allowed.txt"), {"text": "done"}])
    check(w.read("allowed.txt") == "conformance-ok\n", "the allowed command did not run")
    check(w.model_saw("conformance-ok"), "the command's output did not reach the model")


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
    codex(w, [sh("echo original > out.txt"), {"text": "done"}])
    check(w.read("out.txt") == "rewritten\n", f"out.txt is {w.read('out.txt')!r}")


@case("feedback", "post-tool feedback reaches the model")
def feedback(w):
    w.ka_toml('''
[[hooks]]
name = "lint"
event = "post_tool_use"
tool = "bash"
command = """echo '{"feedback": "ka-feedback: lint found 2 warnings"}'"""
''')
    install(w)
    codex(w, [sh("echo hi"), {"text": "done"}])
    check(w.model_saw("ka-feedback: lint found 2 warnings"), "the model never received the feedback")


@case("keep-going", "a stop hook keeps the turn going once; the model reads why")
def keep_going(w):
    w.ka_toml(STOP_ONCE)
    install(w)
    codex(w, [{"text": "finished"}, {"text": "tests run"}])
    check(w.model_saw("ka-continue: run the tests first"), "the model never received the stop reason")
    check(continuations(w) == 1, f"{continuations(w)} continuations, expected 1")


@case("cap", "keep going is capped at max_continuations (3)")
def cap(w):
    stop_always(w, "ka-continue: again $(date +%s%N)", 3)
    install(w)
    codex(w, [{"text": "finished"}])
    check(continuations(w) == 3, f"{continuations(w)} continuations, expected 3")


@case("cap-repeated", "a stop reason repeated word for word counts once: cap 3 = 3 continuations")
def cap_repeated(w):
    stop_always(w, "ka-continue: same words", 3)
    install(w)
    codex(w, [{"text": "finished"}])
    check(continuations(w) == 3, f"{continuations(w)} continuations, expected 3")


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
    codex(w, [{"text": "ok"}])
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
    codex(w, [sh("echo ran > crashed.txt"), {"text": "done"}])
    check(w.read("crashed.txt") is None, "the call ran past a crashed on_error = block guard")
    check(w.model_saw("broken"), "the model was not told which guard failed")


@case("untrusted", "an untrusted project's guard does not run, and the user is told")
def untrusted(w):
    w.ka_toml(GUARD_TOUCH, trust=False)
    install(w)
    codex(w, [sh("touch marker"), {"text": "done"}])
    check(os.path.exists(w.path("marker")), "the untrusted guard ran")
    # `codex exec` prints only hook status lines; the TUI shows a hook's systemMessage.
    said = [c["stdout"] for c in w.calls_for("PreToolUse") if "systemMessage" in c["stdout"]]
    check(any("untrusted" in s for s in said), "ka-hooks did not tell the user the project is untrusted")


@case("stale", "a trusted file edited since fails closed: its guard blocks what it matched")
def stale(w):
    w.ka_toml(GUARD_RM)
    install(w)
    with open(w.path(".ka/ka.toml"), "a") as f:
        f.write("# edited\n")
    codex(w, [sh("echo ran > stale.txt"), {"text": "done"}])
    check(w.read("stale.txt") is None, "the stale guard let the call through")
    check(w.model_saw("trust"), "the model was not told how to re-trust")


@case("ask", "a hook's ask becomes a block that says a person must approve")
def ask(w):
    w.ka_toml('''
[[hooks]]
name = "asker"
event = "pre_tool_use"
tool = "bash"
command = """echo '{"decision": "ask", "reason": "ka-ask: a person must approve this"}'"""
''')
    install(w)
    codex(w, [sh("echo ran > asked.txt"), {"text": "done"}])
    check(w.read("asked.txt") is None, "an ask ran without a person")
    check(w.model_saw("ka-ask: a person must approve this"), "the model was not told why")


@case("halt", "a halting pre_tool_use guard blocks the call (Codex rejects continue:false there)")
def halt(w):
    w.ka_toml('''
[[hooks]]
name = "halter"
event = "pre_tool_use"
tool = "bash"
command = """echo '{"halt": "ka-halt: the build server is down"}'"""
''')
    install(w)
    r = codex(w, [sh("echo ran > halted.txt"), {"text": "continued after the halt"}])
    check(w.read("halted.txt") is None, "the halted call ran: Codex rejected the answer and failed open")
    check("unsupported" not in r.shown, f"Codex rejected ka's answer: {r.shown[-600:]!r}")


@case("protect", "built-in protection: the model's patch of .ka/ka.toml is not applied")
def protect(w):
    w.ka_toml(GUARD_RM)
    install(w)
    before = w.read(".ka/ka.toml")
    codex(w, [{"tool": "apply_patch", "input": "*** Begin Patch\n*** Delete File: .ka/ka.toml\n*** End Patch\n"},
              {"text": "done"}])
    check(w.read(".ka/ka.toml") == before, "the model changed .ka/ka.toml")
    check(w.model_saw("one of ka's own hook files"), "the model was not told why")


@case("parallel", "three parallel shell calls are each blocked")
def parallel(w):
    w.ka_toml(GUARD_RM)
    install(w)
    for d in "abc":
        os.makedirs(w.path(d))
    codex(w, [{"calls": [sh(f"rm -rf {d}") for d in "abc"]}, {"text": "done"}])
    check(all(os.path.isdir(w.path(d)) for d in "abc"), "a parallel call ran past the guard")
    blocked = [c for c in w.calls_for("PreToolUse") if c["rc"] == 2 or '"deny"' in c["stdout"]]
    check(len(blocked) == 3, f"{len(blocked)} of 3 calls blocked")


@case("unreviewed", "hooks not reviewed in Codex's /hooks: install says so, doctor detects it")
def unreviewed(w):
    w.ka_toml(GUARD_RM)
    out = install(w, review_hooks=False)
    check("/hooks" in out, f"install did not print Codex's review step: {out[-400:]!r}")
    codex(w, [sh("echo ran > unreviewed.txt"), {"text": "done"}])
    check(not w.calls(), "Codex ran an unreviewed hook")
    d = w.ka("doctor", check_rc=False)
    check("/hooks" in d.stdout and d.returncode != 0, f"doctor did not report the missing review: {d.stdout[-600:]!r}")


@case("model-retrust", "the model edits .ka/ka.toml and re-trusts it from its shell: refused")
def model_retrust(w):
    w.ka_toml(GUARD_TOUCH)
    install(w)
    # Codex's shell does not keep PATH: the model names the binary by its path.
    ka = os.path.join(w.bin, "ka-hooks")
    codex(w, [sh(f"printf '' > .ka/ka.toml; env -u CODEX_SANDBOX -u CODEX_SANDBOX_NETWORK_DISABLED {ka} trust --yes"),
              sh("touch marker"), {"text": "done"}])
    check(not os.path.exists(w.path("marker")), "the model re-trusted its own edit and the guarded call ran")


@case("model-revoke", "the model revokes the project's trust from its shell: refused")
def model_revoke(w):
    w.ka_toml(GUARD_TOUCH)
    install(w)
    ka = os.path.join(w.bin, "ka-hooks")
    codex(w, [sh(f"env -u CODEX_SANDBOX -u CODEX_SANDBOX_NETWORK_DISABLED {ka} trust --revoke"),
              sh("touch marker"), {"text": "done"}])
    check(not os.path.exists(w.path("marker")), "the model revoked the trust and the guarded call ran")
    shown = w.ka("trust", "--show", check_rc=False).stdout
    check(": trusted" in shown, f"the trust record is gone: {shown[-400:]!r}")


@case("model-disable", "the model cannot switch Codex's hooks off from its shell")
def model_disable(w):
    w.ka_toml(GUARD_TOUCH)
    install(w)
    home = codex_home(w)
    targets = [os.path.join(home, "hooks.json"), os.path.join(home, "config.toml")]
    hooks_before = open(targets[0]).read()
    codex(w, [sh(f"printf '{{}}' > {targets[0]}"),
              sh(f"printf '[features]\\ncodex_hooks = false\\n' >> {targets[1]}"),
              {"text": "done"}])
    check(open(targets[0]).read() == hooks_before, "the model's shell emptied ~/.codex/hooks.json")
    check("codex_hooks" not in open(targets[1]).read(), "the model's shell switched hooks off in config.toml")
    codex(w, [sh("touch marker"), {"text": "done"}])
    check(not os.path.exists(w.path("marker")), "the guard no longer ran")


@case("ka-missing", "a missing ka-hooks: the call does not run",
      xfail="Codex 0.171 runs the call when a hook cannot start (no fail-closed setting); doctor says so")
def ka_missing(w):
    w.ka_toml(GUARD_RM)
    install(w)
    open(os.path.join(w.shim_log, "missing"), "w").close()
    codex(w, [sh("echo ran > missing.txt"), {"text": "done"}])
    check(w.read("missing.txt") is None, "the call ran with ka-hooks missing")
