"""Gemini CLI, driven with `gemini -p` against the Gemini API mock, the project a trusted folder
(Gemini ignores an untrusted folder's .gemini/settings.json, hooks included)."""

import json
import os

from cases import registry
from cases.common import GUARD_ENV, GUARD_RM, STOP_ONCE, continuations, stop_always
from lib import check
from mock.gemini import Gemini
from mock.script import serve

CASES, case = registry()
BIN = None


def prepare(world, agent_bin):
    global BIN
    BIN = agent_bin
    home = os.path.join(world.home, ".gemini")
    os.makedirs(home, exist_ok=True)
    settings = {"security": {"auth": {"selectedType": "gemini-api-key"}},
                "privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False},
                "general": {"disableAutoUpdate": True, "disableUpdateNag": True}}
    world.write("settings.json", json.dumps(settings), base=home)


def trust_folder(w):
    w.write("trustedFolders.json", json.dumps({w.proj: "TRUST_FOLDER"}), base=os.path.join(w.home, ".gemini"))


def install(w, trusted=True):
    """`ka-hooks install gemini`'s entries in .gemini/settings.json, and the folder trusted."""
    r = w.ka("install", "gemini", check_rc=False)
    w.write(".gemini/settings.json", r.stdout)
    if trusted:
        trust_folder(w)
    return r.stdout + r.stderr


class Run:
    def __init__(self, proc):
        self.rc = proc.returncode
        self.shown = proc.stdout + proc.stderr


def gemini(w, turns, prompt="do the task"):
    srv, _ = serve(Gemini, turns, w.model_log)
    try:
        w.proxies(srv.server_port)
        e = w.env(GOOGLE_GEMINI_BASE_URL=f"http://127.0.0.1:{srv.server_port}", GEMINI_API_KEY="mock")
        return Run(w.run([BIN, "-p", prompt, "-m", "gemini-2.5-flash", "--approval-mode", "yolo",
                          "--output-format", "stream-json"], e))
    finally:
        srv.shutdown()


def sh(command):
    return {"tool": "run_shell_command", "input": {"command": command}}


@case("block-shell", "a guard blocks a shell command; the model reads the reason; no failed-hook line")
def block_shell(w):
    w.ka_toml(GUARD_RM)
    install(w)
    os.makedirs(w.path("build"))
    r = gemini(w, [sh("rm -rf build"), {"text": "blocked"}])
    check(os.path.isdir(w.path("build")), "build/ was removed: the guard did not block")
    check(w.model_saw("ka-guard: no rm -rf here"), "the model never received the guard's reason")
    check("F12" not in r.shown and "failed" not in r.shown.lower(), f"the user was shown a failed hook: {r.shown[-500:]!r}")


@case("block-write", "a guard blocks write_file and replace; the model reads the reason")
def block_write(w):
    w.ka_toml(GUARD_ENV)
    install(w)
    w.write(".env", "KEY=old\n")
    gemini(w, [{"tool": "write_file", "input": {"file_path": w.path("new.env"), "content": "KEY=1\n"}},
               {"tool": "replace", "input": {"file_path": w.path(".env"), "old_string": "old", "new_string": "new"}},
               {"text": "blocked"}])
    check(w.read("new.env") is None, "write_file created new.env past the guard")
    check(w.read(".env") == "KEY=old\n", "replace changed .env past the guard")
    check(w.model_saw("ka-guard: no writes to .env files"), "the model never received the reason")


@case("allow", "an allowed call runs, and its output reaches the model")
def allow(w):
    w.ka_toml(GUARD_RM)
    install(w)
    gemini(w, [sh("echo conformance-ok > allowed.txt && cat allowed.txt"), {"text": "done"}])
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
    gemini(w, [sh("echo original > out.txt"), {"text": "done"}])
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
    gemini(w, [sh("echo hi"), {"text": "done"}])
    check(w.model_saw("ka-feedback: lint found 2 warnings"), "the model never received the feedback")


@case("keep-going", "a stop hook keeps the turn going once; the model reads why")
def keep_going(w):
    w.ka_toml(STOP_ONCE)
    install(w)
    gemini(w, [{"text": "finished"}, {"text": "tests run"}])
    check(w.model_saw("ka-continue: run the tests first"), "the model never received the stop reason")
    check(continuations(w) == 1, f"{continuations(w)} continuations, expected 1")


@case("cap-repeated", "a stop reason repeated word for word counts once: cap 3 = 3 continuations")
def cap_repeated(w):
    stop_always(w, "ka-continue: same words", 3)
    install(w)
    gemini(w, [{"text": "finished"}])
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
    gemini(w, [{"text": "ok"}])
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
    gemini(w, [sh("echo ran > crashed.txt"), {"text": "done"}])
    check(w.read("crashed.txt") is None, "the call ran past a crashed on_error = block guard")
    check(w.model_saw("broken"), "the model was not told which guard failed")


@case("stale", "a trusted file edited since fails closed: its guard blocks what it matched")
def stale(w):
    w.ka_toml(GUARD_RM)
    install(w)
    with open(w.path(".ka/ka.toml"), "a") as f:
        f.write("# edited\n")
    gemini(w, [sh("echo ran > stale.txt"), {"text": "done"}])
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
    gemini(w, [sh("echo ran > asked.txt"), {"text": "done"}])
    check(w.read("asked.txt") is None, "an ask ran without a person")
    check(w.model_saw("ka-ask: a person must approve this"), "the model was not told why")


@case("protect", "built-in protection: the model's write of .ka/ka.toml is not applied")
def protect(w):
    w.ka_toml(GUARD_RM)
    install(w)
    before = w.read(".ka/ka.toml")
    gemini(w, [{"tool": "write_file", "input": {"file_path": w.path(".ka/ka.toml"), "content": "# emptied\n"}},
               {"text": "done"}])
    check(w.read(".ka/ka.toml") == before, "the model overwrote .ka/ka.toml")
    check(w.model_saw("one of ka's own hook files"), "the model was not told why")


@case("parallel", "three parallel shell calls are each blocked")
def parallel(w):
    w.ka_toml(GUARD_RM)
    install(w)
    for d in "abc":
        os.makedirs(w.path(d))
    gemini(w, [{"calls": [sh(f"rm -rf {d}") for d in "abc"]}, {"text": "done"}])
    check(all(os.path.isdir(w.path(d)) for d in "abc"), "a parallel call ran past the guard")


@case("untrusted-folder", "in a folder Gemini does not trust, no ka hook runs: install and doctor say so")
def untrusted_folder(w):
    w.ka_toml(GUARD_RM)
    out = install(w, trusted=False)
    check("trusted folder" in out, f"install did not print the folder-trust step: {out[-300:]!r}")
    d = w.ka("doctor", check_rc=False)
    check("not a trusted folder" in d.stdout and d.returncode != 0, f"doctor did not report it: {d.stdout[-500:]!r}")


@case("ka-missing", "a missing ka-hooks: the call does not run")
def ka_missing(w):
    w.ka_toml(GUARD_RM)
    install(w)
    open(os.path.join(w.shim_log, "missing"), "w").close()
    gemini(w, [sh("echo ran > missing.txt"), {"text": "done"}])
    check(w.read("missing.txt") is None, "the call ran with ka-hooks missing")


@case("model-retrust", "the model edits .ka/ka.toml and re-trusts it from its shell: refused")
def model_retrust(w):
    w.ka_toml(GUARD_RM)
    install(w)
    os.makedirs(w.path("build"))
    gemini(w, [sh(f"printf '' > .ka/ka.toml; env -u GEMINI_CLI {w.bin}/ka-hooks trust --yes"),
               sh("rm -rf build"), {"text": "done"}])
    check(os.path.isdir(w.path("build")), "the model re-trusted its own edit and the guarded call ran")
