"""GitHub Copilot CLI, driven with `copilot -p` in its offline bring-your-own-model mode against
the chat-completions mock. `--trust-folder` trusts the project (without it, `-p` loads no
repository hooks). What the user is shown is `-p`'s transcript on stdout and its stderr."""

import json
import os
import subprocess
import threading

from cases import registry
from cases.common import GUARD_ENV, GUARD_RM, STOP_ONCE, continuations, stop_always
from lib import check
from mock.chat import Chat
from mock.script import serve

CASES, case = registry()
BIN = None
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Copilot unpacks its JavaScript bundle (about 240 MB) into $XDG_CACHE_HOME on first start: one
# cache for every case, unpacked once.
CACHE = os.path.join(HERE, "out", "copilot-cache")
_unpacked = threading.Lock()


def prepare(world, agent_bin):
    global BIN
    BIN = agent_bin
    os.makedirs(os.path.join(world.home, ".copilot"), exist_ok=True)
    with _unpacked:
        if not os.path.isdir(CACHE):
            os.makedirs(CACHE + ".part", exist_ok=True)
            subprocess.run([os.path.join(os.path.dirname(agent_bin), "copilot-linux-x64")
                            if os.path.exists(os.path.join(os.path.dirname(agent_bin), "copilot-linux-x64"))
                            else agent_bin],
                           env=world.env(COPILOT_SEA_EXTRACT_ONLY="1", XDG_CACHE_HOME=CACHE + ".part"),
                           capture_output=True, timeout=300)
            os.rename(CACHE + ".part", CACHE)


class Run:
    def __init__(self, proc):
        self.rc = proc.returncode
        self.stdout = proc.stdout
        self.shown = proc.stdout + proc.stderr


def copilot(w, turns, prompt="do the task", cwd=None, trust=True, env=None):
    srv, _ = serve(Chat, turns, w.model_log)
    try:
        w.proxies(srv.server_port)
        e = w.env(COPILOT_OFFLINE="true", COPILOT_PROVIDER_BASE_URL=f"http://127.0.0.1:{srv.server_port}/v1",
                  COPILOT_PROVIDER_API_KEY="sk-mock", COPILOT_MODEL="gpt-4.1", COPILOT_AUTO_UPDATE="false",
                  COPILOT_HOME=os.path.join(w.home, ".copilot"), XDG_CACHE_HOME=CACHE, NO_COLOR="1",
                  **(env or {}))
        argv = [BIN, "-p", prompt, "--allow-all-tools"] + (["--trust-folder"] if trust else [])
        return Run(w.run(argv, e, cwd=cwd))
    finally:
        srv.shutdown()


def install(w, *more):
    r = w.ka("install", "copilot", "--write", *more)
    w.install_output = r.stdout + r.stderr
    return w.install_output


def sh(command):
    return {"tool": "bash", "input": {"command": command, "description": "run it"}}


def create(w, rel, text):
    return {"tool": "create", "input": {"path": w.path(rel), "file_text": text}}


def edit(w, rel, old, new):
    return {"tool": "edit", "input": {"path": w.path(rel), "old_str": old, "new_str": new}}


def pre_answers(w):
    """(tool, answer JSON or None, exit code) of every preToolUse call of ka-hooks copilot."""
    out = []
    for c in w.calls():
        if "preToolUse" in c["args"] or "PreToolUse" in c["args"]:
            try:
                answer = json.loads(c["stdout"]) if c["stdout"].strip() else None
            except ValueError:
                answer = None
            tool = c["stdin"].get("toolName") or c["stdin"].get("tool_name")
            out.append((tool, answer, c["rc"]))
    return out


def denied(w):
    return [t for t, a, rc in pre_answers(w) if rc == 2 or (a or {}).get("permissionDecision") == "deny"]


@case("block-shell", "a guard blocks a shell command; the model and the user read the reason")
def block_shell(w):
    w.ka_toml(GUARD_RM)
    install(w)
    os.makedirs(w.path("build"))
    r = copilot(w, [sh("rm -rf build"), {"text": "blocked, stopping"}])
    check(os.path.isdir(w.path("build")), "build/ was removed: the guard did not block")
    check(w.model_saw("ka-guard: no rm -rf here"), "the model never received the guard's reason")
    check("ka-guard: no rm -rf here" in r.shown, f"the user was not shown the reason: {r.shown[-500:]!r}")
    check(r.rc == 0, f"copilot exited {r.rc}")


@case("block-write", "a guard blocks create and edit of a file; the model reads the reason")
def block_write(w):
    w.ka_toml(GUARD_ENV)
    install(w)
    w.write(".env", "KEY=old\n")
    copilot(w, [create(w, "new.env", "KEY=1\n"), edit(w, ".env", "old", "new"), {"text": "both blocked"}])
    check(w.read("new.env") is None, "create made new.env past the guard")
    check(w.read(".env") == "KEY=old\n", "edit changed .env past the guard")
    check(sorted(denied(w)) == ["create", "edit"], f"denied tools: {denied(w)}")
    check(w.model_saw("ka-guard: no writes to .env files"), "the model never received the reason")


@case("allow", "an allowed call runs, and its output reaches the model")
def allow(w):
    w.ka_toml(GUARD_RM + GUARD_ENV)
    install(w)
    copilot(w, [sh("echo conformance-ok > allowed.txt && cat allowed.txt"), create(w, "notes.txt", "hello\n"),
                edit(w, "notes.txt", "hello", "bye"), {"text": "done"}])
    check(w.read("allowed.txt") == "conformance-ok\n", "the allowed command did not run")
    check(w.read("notes.txt") == "bye\n", f"create and edit did not run: {w.read('notes.txt')!r}")
    check(w.model_saw("conformance-ok"), "the command's output did not reach the model")
    check(not denied(w), f"denied: {denied(w)}")


REWRITE = '''
[[hooks]]
name = "rewrite"
event = "pre_tool_use"
tool = "bash"
command = """echo '{"updated_input": {"command": "echo rewritten > out.txt"}}'"""
'''

REDACT = '''
[[hooks]]
name = "redact"
event = "pre_tool_use"
tool = "write"
command = """python3 -c 'import json,sys; a=json.load(sys.stdin)["arguments"]; c=a.get("content",""); print(json.dumps({"updated_input": {"content": c.replace("SECRET", "[REDACTED]")}})) if "SECRET" in c else None'"""
'''


@case("rewrite", "a hook rewrites a shell command and a create's content; Copilot runs the rewritten call")
def rewrite(w):
    w.ka_toml(REWRITE + REDACT)
    install(w)
    copilot(w, [sh("echo original > out.txt"), create(w, "cfg.txt", "key=SECRET\n"), {"text": "done"}])
    check(w.read("out.txt") == "rewritten\n", f"out.txt is {w.read('out.txt')!r}")
    check(w.read("cfg.txt") == "key=[REDACTED]\n", f"cfg.txt is {w.read('cfg.txt')!r}")


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
    copilot(w, [sh("echo hi"), {"text": "done"}])
    check(w.model_saw("ka-feedback: lint found 2 warnings"), "the model never received the feedback")


@case("keep-going", "a stop hook keeps the turn going once; the model reads why")
def keep_going(w):
    w.ka_toml(STOP_ONCE)
    install(w)
    copilot(w, [{"text": "finished"}, {"text": "tests run"}])
    check(w.model_saw("ka-continue: run the tests first"), "the model never received the stop reason")
    check(continuations(w) == 1, f"{continuations(w)} continuations, expected 1")


@case("cap", "keep going is capped at max_continuations = 2 though each continuation is a prompt; the user is told")
def cap(w):
    stop_always(w, "ka-continue: again $(date +%s%N)", 2)
    install(w, "--all-events")
    r = copilot(w, [{"text": "finished"}])
    check(continuations(w) == 2, f"{continuations(w)} continuations, expected 2")
    prompts = [c for c in w.calls() if "userPromptSubmitted" in c["args"]]
    check(len(prompts) >= 3, f"userPromptSubmitted fired {len(prompts)} times, expected once per continuation too")
    check("max_continuations" in r.shown, f"the user was not told: {r.shown[-600:]!r}")


@case("cap-repeated", "a stop reason repeated word for word counts once: cap 2 = 2 continuations")
def cap_repeated(w):
    stop_always(w, "ka-continue: same words", 2)
    install(w, "--all-events")
    copilot(w, [{"text": "finished"}])
    check(continuations(w) == 2, f"{continuations(w)} continuations, expected 2")


PROMPT_HOOKS = '''
[[hooks]]
name = "prompt-ctx"
event = "user_prompt_submit"
command = """grep -q DROP && { echo 'ka-block: no destructive SQL in prompts' >&2; exit 2; }; echo '{"context": "ka-context: the prompt hook ran"}'"""

[[hooks]]
name = "session-ctx"
event = "session_start"
command = """echo '{"context": "ka-context: the session hook ran"}'"""
'''


@case("prompt-context", "prompt context and session-start context reach the model")
def prompt_context(w):
    w.ka_toml(PROMPT_HOOKS)
    install(w)
    copilot(w, [{"text": "ok"}])
    check(w.model_saw("ka-context: the prompt hook ran"), "the prompt context did not reach the model")
    check(w.model_saw("ka-context: the session hook ran"), "the session-start context did not reach the model")


@case("prompt-block", "a user_prompt_submit block keeps the prompt from the model, and the user reads why")
def prompt_block(w):
    w.ka_toml(PROMPT_HOOKS)
    install(w)
    r = copilot(w, [{"text": "dropped the table"}], prompt="DROP TABLE users")
    check(not w.model_saw("DROP TABLE users"), "the blocked prompt reached the model")
    check("ka-block: no destructive SQL in prompts" in r.shown, f"the user was not told why: {r.shown[-500:]!r}")


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
    copilot(w, [sh("echo ran > crashed.txt"), {"text": "done"}])
    check(w.read("crashed.txt") is None, "the call ran past a crashed on_error = block guard")
    check(w.model_saw("broken"), "the model was not told which guard failed")


@case("untrusted", "an untrusted project's guard does not run, and the user is told")
def untrusted(w):
    w.ka_toml(GUARD_RM, trust=False)
    install(w)
    os.makedirs(w.path("build"))
    r = copilot(w, [sh("rm -rf build"), {"text": "done"}])
    check(not os.path.isdir(w.path("build")), "the untrusted guard ran")
    # An allowed call has no channel to the user in Copilot: ka's message rides the context the
    # model reads, marked for the user.
    check(w.model_saw("[ka-hooks, for the user]") and w.model_saw("(untrusted): its hooks did not run"),
          f"the model was not given the message for the user: {r.shown[-600:]!r}")


@case("stale", "a trusted file edited since fails closed: its guard blocks what it matched")
def stale(w):
    w.ka_toml(GUARD_RM)
    install(w)
    with open(w.path(".ka/ka.toml"), "a") as f:
        f.write("# edited\n")
    copilot(w, [sh("echo ran > stale.txt"), {"text": "done"}])
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
    r = copilot(w, [sh("echo ran > asked.txt"), {"text": "done"}])
    check(w.read("asked.txt") is None, "an ask ran without a person")
    check(w.model_saw("ka-ask: a person must approve this") or "ka-ask" in r.shown, "the ask's reason was shown nowhere")


@case("halt", "a halt denies the call, and its reason is shown to the user and the model")
def halt(w):
    w.ka_toml('''
[[hooks]]
name = "halter"
event = "pre_tool_use"
tool = "bash"
command = """echo '{"halt": "ka-halt: the build server is down"}'"""
''')
    install(w)
    r = copilot(w, [sh("echo ran > halted.txt"), {"text": "continued after the halt"}])
    check(w.read("halted.txt") is None, "the halted call ran")
    check("ka-halt: the build server is down" in r.shown, f"the halt's reason was not shown: {r.shown[-600:]!r}")
    check(w.model_saw("ka-halt: the build server is down"), "the model was not told")


@case("protect", "built-in protection: the model's writes of .ka/ka.toml and .github/hooks/*.json are refused")
def protect(w):
    w.ka_toml(GUARD_RM)
    install(w)
    before = w.read(".ka/ka.toml")
    hooks = w.read(".github/hooks/ka-hooks.json")
    r = copilot(w, [edit(w, ".ka/ka.toml", "no-rm", "gone"), create(w, ".github/hooks/off.json",
                                                                   '{"version": 1, "disableAllHooks": true}'),
                    edit(w, ".github/hooks/ka-hooks.json", "preToolUse", "x"), {"text": "done"}])
    check(w.read(".ka/ka.toml") == before, "the model edited .ka/ka.toml")
    check(w.read(".github/hooks/off.json") is None, "the model created .github/hooks/off.json")
    check(w.read(".github/hooks/ka-hooks.json") == hooks, "the model edited .github/hooks/ka-hooks.json")
    check(w.model_saw("one of ka's own hook files") or "ka's own" in r.shown, "no one was told why")


@case("protect-settings", "built-in protection: the model's create of .github/copilot/settings.local.json is refused")
def protect_settings(w):
    w.ka_toml(GUARD_RM)
    install(w)
    copilot(w, [create(w, ".github/copilot/settings.local.json", '{"disableAllHooks": true}'), {"text": "done"}])
    check(w.read(".github/copilot/settings.local.json") is None, "the model switched every hook off")


@case("protect-formatter-only", "built-in protection with only a formatter hook (install registers preToolUse)")
def protect_formatter_only(w):
    w.ka_toml('''
[[hooks]]
name = "fmt"
event = "post_tool_use"
tool = "@file_writes"
command = "true"
''')
    install(w)
    before = w.read(".ka/ka.toml")
    copilot(w, [edit(w, ".ka/ka.toml", "fmt", "gone"), {"text": "done"}])
    check(w.read(".ka/ka.toml") == before, "the model edited .ka/ka.toml: preToolUse is not registered")


@case("parallel", "three parallel shell calls are each blocked and counted; the guard's next call is not run")
def parallel(w):
    w.ka_toml(GUARD_RM)
    install(w)
    for d in "abc":
        os.makedirs(w.path(d))
    copilot(w, [{"calls": [sh(f"rm -rf {d}") for d in "abc"]}, sh("echo ran > fourth.txt"), {"text": "done"}])
    check(all(os.path.isdir(w.path(d)) for d in "abc"), "a parallel call ran past the guard")
    check(len(denied(w)) >= 3, f"{len(denied(w))} of 3 parallel calls blocked")
    check(w.read("fourth.txt") is None, "the fourth call ran: the denial backstop lost a count")
    check(w.model_saw("denied 3"), "the model was not told the backstop tripped")


@case("model-retrust", "the model edits .ka/ka.toml and re-trusts it from its shell: refused")
def model_retrust(w):
    w.ka_toml(GUARD_RM)
    install(w)
    os.makedirs(w.path("build"))
    copilot(w, [sh("printf '' > .ka/ka.toml; env -u COPILOT_CLI -u COPILOT_AGENT_SESSION_ID ka-hooks trust --yes"),
                sh("rm -rf build"), {"text": "done"}])
    check(os.path.isdir(w.path("build")), "the model re-trusted its own edit and the guarded call ran")


@case("permission-request", "a permission_request guard reads the command (toolInput) and a create's path")
def permission_request(w):
    w.ka_toml('''
[[hooks]]
name = "no-push"
event = "permission_request"
tool = "bash"
command = """python3 -c 'import json,sys; c=json.load(sys.stdin)["arguments"].get("command",""); (print("ka-perm: no git push", file=sys.stderr), sys.exit(2)) if "git push" in c else None'"""

[[hooks]]
name = "src-only"
event = "permission_request"
tool = ["write", "edit"]
command = """python3 -c 'import json,sys; p=json.load(sys.stdin)["arguments"].get("path",""); (print("ka-perm: "+p+" is outside src/", file=sys.stderr), sys.exit(2)) if p and "/src/" not in p else None'"""
''')
    install(w)
    os.makedirs(w.path("src"))
    copilot(w, [sh("echo 'git push' > pushed.txt"), create(w, "top.txt", "x\n"), create(w, "src/a.txt", "a\n"),
                {"text": "done"}])
    check(w.read("pushed.txt") is None, "the command ran: the permission_request guard saw no command")
    check(w.read("top.txt") is None, "the create outside src/ ran")
    check(w.read("src/a.txt") == "a\n", "the create inside src/ did not run")
    check(w.model_saw("ka-perm: no git push"), "the model was not told why")
    payloads = [c["stdin"] for c in w.calls() if "permissionRequest" in c["args"]]
    check(payloads and all("toolInput" in p for p in payloads), f"not Copilot 1.0.102's payload: {payloads[:1]}")


def pascal_file(w, events):
    """A hand-written hook file in the VS Code compatible form (PascalCase events)."""
    hooks = {e: [{"type": "command", "bash": f"ka-hooks copilot --event {e}", "timeoutSec": 60}] for e in events}
    w.write(".github/hooks/ka-hooks.json", json.dumps({"version": 1, "hooks": hooks}, indent=2))


PASCAL = ["PreToolUse", "PermissionRequest", "PostToolUse", "UserPromptSubmit", "Stop", "SessionStart"]


@case("pascal-allow", "PascalCase events (the VS Code form): shell, create and edit run, PermissionRequest judged")
def pascal_allow(w):
    w.ka_toml(GUARD_RM + GUARD_ENV)
    pascal_file(w, PASCAL)
    copilot(w, [sh("echo pascal > p.txt"), create(w, "notes.txt", "hello\n"), edit(w, "notes.txt", "hello", "bye"),
                {"text": "done"}])
    check(w.read("p.txt") == "pascal\n", "the shell call was denied")
    check(w.read("notes.txt") == "bye\n", f"create/edit denied: notes.txt is {w.read('notes.txt')!r}")
    perms = [c for c in w.calls() if "PermissionRequest" in c["args"]]
    check(perms and all(c["rc"] == 0 and "deny" not in c["stdout"] for c in perms),
          f"PermissionRequest denied: {[(c['rc'], c['stdout'], c['stderr']) for c in perms][:2]}")


@case("pascal-write", "PascalCase Write {path, file_text}: a guard reads the content, a rewrite is accepted")
def pascal_write(w):
    w.ka_toml(REDACT + '''
[[hooks]]
name = "no-key"
event = "pre_tool_use"
tool = "write"
command = """grep -q PRIVATE_KEY && { echo 'ka-guard: no private keys' >&2; exit 2; } || exit 0"""
''')
    pascal_file(w, PASCAL)
    copilot(w, [create(w, "key.txt", "PRIVATE_KEY=1\n"), create(w, "cfg.txt", "key=SECRET\n"), {"text": "done"}])
    check(w.read("key.txt") is None, "the write guard saw no content")
    check(w.model_saw("ka-guard: no private keys"), "the model never received the reason")
    check(w.read("cfg.txt") == "key=[REDACTED]\n", f"the rewrite was not applied: cfg.txt is {w.read('cfg.txt')!r}")


@case("subagent-stop", "agentStop at a subagent's end does not spend a continuation")
def subagent_stop(w):
    w.ka_toml(STOP_ONCE)
    install(w, "--all-events")
    copilot(w, [{"tool": "task", "input": {"description": "look around", "prompt": "list the files",
                                            "agent_type": "explore", "name": "scout"}},
                {"text": "the subagent is done"}, {"text": "finished"}, {"text": "tests run"}])
    stops = [(c["stdin"], c["stdout"]) for c in w.calls() if "agentStop" in c["args"]]
    sub = [out for payload, out in stops if payload.get("agentId")]
    main = [out for payload, out in stops if not payload.get("agentId")]
    check(sub, f"no agentStop with an agentId fired: {json.dumps(stops)[:600]}")
    check(all('"block"' not in out for out in sub), f"ka kept a subagent going: {sub}")
    check(main and '"block"' in main[0], f"the main turn's stop hook did not keep it going: {main}")
    check(w.model_saw("ka-continue: run the tests first"), "the model never received the stop reason")


def trust_root(w):
    """The project root in Copilot's own trusted folders (what its trust prompt records)."""
    w.write("config.json", json.dumps({"trusted_folders": [w.proj]}), base=os.path.join(w.home, ".copilot"))


@case("project-dir", "started in a subdirectory of a trusted root: hooks get the project dir, the guard runs")
def project_dir(w):
    w.ka_toml(GUARD_RM)
    install(w)
    trust_root(w)
    sub = w.path("sub")
    os.makedirs(sub)
    os.makedirs(w.path("build"))
    copilot(w, [sh("rm -rf ../build"), {"text": "done"}], cwd=sub, trust=False)
    check(os.path.isdir(w.path("build")), "the guard did not run in a subdirectory start")
    envs = [c["env"] for c in w.calls()]
    check(envs and all(f"COPILOT_PROJECT_DIR={w.proj}" in e for e in envs), f"env: {envs[:1]}")


@case("both-installed", "install claude and install copilot: Copilot runs both entries, each ka hook runs once")
def both_installed(w):
    w.ka_toml('''
[[hooks]]
name = "counted"
event = "pre_tool_use"
tool = "bash"
command = """echo x >> "$KA_PROJECT_DIR/runs.log"; grep -q 'rm -rf' && { echo 'ka-guard: no rm -rf here' >&2; exit 2; } || exit 0"""
''')
    w.ka("install", "claude", "--write")
    install(w)
    os.makedirs(w.path("build"))
    copilot(w, [sh("echo allowed > allowed.txt"), sh("rm -rf build"), {"text": "done"}])
    check(w.read("allowed.txt") == "allowed\n", "the allowed call did not run")
    check(os.path.isdir(w.path("build")), "the guard did not block")
    adapters = sorted({c["args"][0] for c in w.calls() if c["stdin"] and "echo allowed" in json.dumps(c["stdin"])})
    check(adapters == ["claude", "copilot"], f"Copilot ran {adapters} for the allowed call (expected both entries)")
    runs = w.read("runs.log") or ""
    check(runs.count("x") == 2, f"the guard ran {runs.count('x')} times for two calls")
    check(w.model_saw("ka-guard: no rm -rf here"), "the model never received the reason")


@case("ka-missing", "a missing ka-hooks fails closed (preToolUse errors deny)")
def ka_missing(w):
    w.ka_toml(GUARD_RM)
    install(w)
    open(os.path.join(w.shim_log, "missing"), "w").close()
    copilot(w, [sh("echo ran > missing.txt"), {"text": "done"}])
    check(w.read("missing.txt") is None, "the call ran with ka-hooks missing")


@case("ka-crash", "a crashing ka-hooks fails closed (preToolUse errors deny)")
def ka_crash(w):
    w.ka_toml(GUARD_RM)
    install(w)
    open(os.path.join(w.shim_log, "crash"), "w").close()
    copilot(w, [sh("echo ran > crash.txt"), {"text": "done"}])
    check(w.read("crash.txt") is None, "the call ran with ka-hooks crashing")


@case("model-disable", "the model switches hooks off from its shell (no sandbox): doctor reports it, with the fix")
def model_disable(w):
    w.ka_toml(GUARD_RM)
    install(w)
    trust_root(w)
    os.makedirs(w.path("build"))
    copilot(w, [sh("""mkdir -p .github/copilot && printf '{"disableAllHooks": true}' > .github/copilot/settings.local.json"""),
                {"text": "done"}])
    # Copilot has no sandbox for its shell that keeps the file out of reach: the write lands,
    # and the next session runs no hook.
    check(w.read(".github/copilot/settings.local.json") is not None, "the shell's write did not land (a sandbox now?)")
    copilot(w, [sh("rm -rf build"), {"text": "done"}])
    check(not os.path.isdir(w.path("build")), "hooks still ran: disableAllHooks is not the switch this case assumes")
    d = w.ka("doctor", check_rc=False)
    out = d.stdout + d.stderr
    check("disableAllHooks" in out and "settings.local.json" in out, f"doctor did not report it: {out[-800:]!r}")
    check(d.returncode != 0, "doctor exited 0 with every hook switched off")


@case("untrusted-folder", "in a folder Copilot does not trust (-p without --trust-folder), no ka hook runs: install and doctor say so")
def untrusted_folder(w):
    w.ka_toml(GUARD_RM)
    out = install(w)
    check("trusted folder" in out, f"install did not print Copilot's folder-trust step: {out[-400:]!r}")
    copilot(w, [sh("echo ran > untrusted.txt"), {"text": "done"}], trust=False)
    check(not w.calls(), "Copilot ran repository hooks in a folder it does not trust")
    d = w.ka("doctor", check_rc=False)
    check("trusted_folders" in d.stdout and d.returncode != 0, f"doctor did not report it: {d.stdout[-600:]!r}")


@case("subdirectory", "-p --trust-folder in a subdirectory loads no repository hook: doctor there says so")
def subdirectory(w):
    w.ka_toml(GUARD_RM)
    install(w)
    sub = w.path("sub")
    os.makedirs(sub)
    copilot(w, [sh("echo ran > ../sub.txt"), {"text": "done"}], cwd=sub)
    check(not w.calls(), "Copilot ran the root's hooks: remove this limit from doctor and the docs")
    d = w.ka("doctor", cwd=sub, check_rc=False)
    check("subdirectory" in d.stdout and d.returncode != 0, f"doctor did not say so: {d.stdout[-600:]!r}")


@case("subdirectory-user", "a user-level install guards a -p start in a subdirectory")
def subdirectory_user(w):
    w.ka_toml(GUARD_RM)
    install(w, "--user")
    sub = w.path("sub")
    os.makedirs(sub)
    os.makedirs(w.path("build"))
    copilot(w, [sh("rm -rf ../build"), {"text": "done"}], cwd=sub)
    check(os.path.isdir(w.path("build")), "the guard did not run in a subdirectory start")
