"""What the cases of every agent share: guards, stop hooks, counting continuations."""

import os

GUARD_RM = '''
[[hooks]]
name = "no-rm"
event = "pre_tool_use"
tool = "bash"
on_error = "block"
command = """grep -q 'rm -rf' && { echo 'ka-guard: no rm -rf here' >&2; exit 2; } || exit 0"""
'''

GUARD_ENV = '''
[[hooks]]
name = "no-env"
event = "pre_tool_use"
tool = "@file_writes"
on_error = "block"
command = """grep -q '[.]env' && { echo 'ka-guard: no writes to .env files' >&2; exit 2; } || exit 0"""
'''


def continuations(w):
    """How many times the model was asked to go on after its first answer."""
    return sum(1 for r in w.requests() if r["body"] and r["body"].get("tools")) - 1


STOP_ONCE = '''
[[hooks]]
name = "tests-first"
event = "stop"
command = """[ -e kept ] && exit 0; touch kept; echo 'ka-continue: run the tests first' >&2; exit 2"""
'''


def stop_always(w, reason, cap, where="user"):
    hook = f'''
[hook_settings]
max_continuations = {cap}

[[hooks]]
name = "never-done"
event = "stop"
command = """echo "{reason}" >&2; exit 2"""
'''
    if where == "user":
        w.write("ka.toml", hook, base=os.path.join(w.dir, "ka-config"))
        w.ka_toml("")
    else:
        w.ka_toml(hook)
