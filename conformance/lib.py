"""One scratch world per case: HOME, XDG dirs, TMPDIR, ka's config and data dirs, the agent's
config dir, a git project, the logging ka-hooks shim first on PATH, and the model's log."""

import json
import os
import shlex
import shutil
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


class CaseFailed(AssertionError):
    pass


class Skip(Exception):
    """A case this agent cannot run headless; the message says why."""


def check(cond, what):
    if not cond:
        raise CaseFailed(what)


class World:
    def __init__(self, ka_bin, root=None):
        self.dir = tempfile.mkdtemp(prefix="ka-conf-", dir=root)
        self.ka_bin = ka_bin
        j = lambda *p: os.path.join(self.dir, *p)
        self.home, self.tmp, self.bin = j("home"), j("tmp"), j("bin")
        self.proj, self.shim_log, self.model_log = j("proj"), j("shim"), j("model.jsonl")
        for d in (self.home, self.tmp, self.bin, self.proj, self.shim_log, j("home/.config"),
                  j("home/.local/share"), j("home/.cache"), j("home/.local/state"), j("ka-config"), j("ka-data")):
            os.makedirs(d, exist_ok=True)
        # `ka-hooks` execs the logging shim under another name, so that no process above the
        # real ka-hooks is named ka-hooks (which ka-hooks reads as a hook's command of its own).
        self.shim = os.path.join(self.bin, "ka-hooks")
        shutil.copy(os.path.join(HERE, "shim.sh"), os.path.join(self.bin, "ka-shim.sh"))
        with open(self.shim, "w") as f:
            f.write('#!/bin/sh\nexec /bin/sh "$(dirname "$0")/ka-shim.sh" "$@"\n')
        os.chmod(self.shim, 0o755)
        self.extra_env = {}
        self.git("init", "-q")
        self.write(".gitignore", ".ka/ka.local.toml\n")

    def env(self, **more):
        e = {
            "PATH": self.bin + ":" + os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": self.home, "TMPDIR": self.tmp, "USER": "conformance", "LANG": "C.UTF-8",
            "XDG_CONFIG_HOME": os.path.join(self.home, ".config"),
            "XDG_DATA_HOME": os.path.join(self.home, ".local/share"),
            "XDG_CACHE_HOME": os.path.join(self.home, ".cache"),
            "XDG_STATE_HOME": os.path.join(self.home, ".local/state"),
            "KA_CONFIG_DIR": os.path.join(self.dir, "ka-config"),
            "KA_DATA_DIR": os.path.join(self.dir, "ka-data"),
            "KA_SHIM_LOG": self.shim_log, "KA_SHIM_REAL": self.ka_bin,
            "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "c", "GIT_AUTHOR_EMAIL": "c@c",
            "GIT_COMMITTER_NAME": "c", "GIT_COMMITTER_EMAIL": "c@c",
        }
        e.update(self.extra_env)
        e.update(more)
        return e

    def proxies(self, port):
        url = f"http://127.0.0.1:{port}"
        self.extra_env.update({"HTTP_PROXY": url, "HTTPS_PROXY": url, "http_proxy": url,
                               "https_proxy": url, "NO_PROXY": "127.0.0.1,localhost",
                               "no_proxy": "127.0.0.1,localhost"})

    def path(self, rel):
        return os.path.join(self.proj, rel)

    def write(self, rel, text, base=None):
        p = os.path.join(base or self.proj, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w", encoding="utf-8") as f:
            f.write(text)
        return p

    def read(self, rel, base=None):
        p = os.path.join(base or self.proj, rel)
        try:
            with open(p, encoding="utf-8") as f:
                return f.read()
        except FileNotFoundError:
            return None

    def git(self, *args):
        subprocess.run(["git", *args], cwd=self.proj, env=self.env(), check=True, capture_output=True)

    def ka(self, *args, cwd=None, check_rc=True):
        """The real ka-hooks (not the shim), as the user runs it. `install <agent>` registers
        the binary that runs it by its absolute path (the real one here, which the shim would
        never see): the suite's installs name the shim instead, with `--command`, and everything
        else of the entries is what `install` writes."""
        args = list(args)
        if args[:1] == ["install"] and len(args) > 1 and "--command" not in args:
            args += ["--command", f"{shlex.quote(self.shim)} {args[1]}"]
        r = subprocess.run([self.ka_bin, *args], cwd=cwd or self.proj, env=self.env(),
                           capture_output=True, text=True, timeout=60)
        if check_rc and r.returncode != 0:
            raise CaseFailed(f"ka-hooks {' '.join(args)} exited {r.returncode}: {r.stderr.strip()}")
        return r

    def ka_toml(self, text, trust=True):
        self.write(".ka/ka.toml", text)
        if trust:
            self.ka("trust", "--yes")

    def run(self, argv, env, cwd=None, timeout=120):
        r = subprocess.run(argv, cwd=cwd or self.proj, env=env, capture_output=True, text=True,
                           timeout=timeout, stdin=subprocess.DEVNULL)
        self.last = r
        return r

    # What happened -------------------------------------------------------------------------

    def calls(self):
        """Every call of the shim, oldest first: {args, stdin (parsed), stdout, stderr, rc}."""
        out = []
        for name in sorted(os.listdir(self.shim_log)):
            d = os.path.join(self.shim_log, name)
            if not name.startswith("call-"):
                continue
            rd = lambda f: open(os.path.join(d, f), encoding="utf-8").read() if os.path.exists(os.path.join(d, f)) else ""
            try:
                stdin = json.loads(rd("stdin") or "null")
            except ValueError:
                stdin = rd("stdin")
            out.append({"args": rd("args").split(), "stdin": stdin, "stdout": rd("stdout"),
                        "stderr": rd("stderr"), "rc": int(rd("rc").strip() or -1), "env": rd("env")})
        return out

    def calls_for(self, event_name):
        return [c for c in self.calls() if isinstance(c["stdin"], dict)
                and (c["stdin"].get("hook_event_name") == event_name or event_name in c["args"])]

    def requests(self):
        if not os.path.exists(self.model_log):
            return []
        with open(self.model_log, encoding="utf-8") as f:
            return [json.loads(line) for line in f]

    def model_saw(self, text):
        """Whether any request body sent to the model contains `text`."""
        return any(text in json.dumps(r["body"]) for r in self.requests() if r["body"])

    def last_request(self):
        bodies = [r["body"] for r in self.requests() if r["body"]]
        return bodies[-1] if bodies else {}

    def cleanup(self):
        shutil.rmtree(self.dir, ignore_errors=True)
