#!/usr/bin/env python3
"""The conformance suite: drives the real agent CLIs (pinned in package.json / package-lock.json)
headless against a scripted model on 127.0.0.1, with `ka-hooks <agent>` registered the way
`ka-hooks install <agent>` writes it, and checks disk state, what the model received and what
the user was shown.

    python3 conformance/run.py [AGENT...] [--keep] [--case=ID]

AGENT: claude, codex, gemini, copilot (default: all). Steps: build ka-hooks (cargo build, or
$KA_HOOKS_BIN), `npm ci` the agents into conformance/node_modules (an agent whose package cannot
be installed is skipped with a loud SKIPPED line), then run every case inside a network namespace
whose only interface is loopback (`unshare -n`, or `unshare -rn` without root). Exit 1 if a case
failed, or if no isolation is available (KA_CONFORMANCE_SKIP_UNISOLATED=1: skip, loudly, with
exit 0).
"""

import importlib
import importlib.util
import json
import os
import re
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
AGENTS = {
    "claude": ("@anthropic-ai/claude-code", "claude"),
    "codex": ("@openai/codex", "codex"),
    "gemini": ("@google/gemini-cli", "gemini"),
    "copilot": ("@github/copilot", "copilot"),
}
sys.path.insert(0, HERE)
WORLDS = "/var/tmp/ka-conformance"


def say(msg):
    print(f"conformance: {msg}", file=sys.stderr, flush=True)


def build_ka():
    if os.environ.get("KA_HOOKS_BIN"):
        return os.environ["KA_HOOKS_BIN"]
    out = subprocess.run(["cargo", "build", "--bin", "ka-hooks", "--message-format=json-render-diagnostics"],
                         cwd=REPO, check=True, stdout=subprocess.PIPE, text=True).stdout
    for line in out.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and msg.get("executable") and msg["target"]["name"] == "ka-hooks":
            return msg["executable"]
    sys.exit("conformance: cargo build did not name the ka-hooks binary")


def install_agents(wanted):
    """npm ci from the lockfile; when that fails, each agent alone. Returns {agent: bin path}."""
    bins = os.path.join(HERE, "node_modules", ".bin")
    if subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=HERE).returncode != 0:
        say("npm ci failed; installing each agent on its own")
        pins = json.load(open(os.path.join(HERE, "package.json")))["dependencies"]
        for agent in wanted:
            pkg = AGENTS[agent][0]
            subprocess.run(["npm", "install", "--no-save", "--no-audit", "--no-fund", f"{pkg}@{pins[pkg]}"], cwd=HERE)
    found = {}
    for agent in wanted:
        path = os.path.join(bins, AGENTS[agent][1])
        if os.access(path, os.X_OK) and subprocess.run([path, "--version"], capture_output=True).returncode == 0:
            found[agent] = path
        else:
            say(f"*** SKIPPED {agent}: {AGENTS[agent][0]} could not be installed or does not run ***")
    return found


def isolated_argv(argv):
    """argv run in a network namespace with only `lo`, or None when none can be made."""
    inner = "ip link set lo up && exec \"$@\""
    for unshare in (["unshare", "-n"], ["unshare", "-rn"]):
        probe = subprocess.run(unshare + ["sh", "-c", "ip link set lo up"], capture_output=True)
        if probe.returncode == 0:
            return unshare + ["sh", "-c", inner, "sh"] + argv
    return None


def version(agent, path):
    r = subprocess.run([path, "--version"], capture_output=True, text=True)
    return (r.stdout.strip().splitlines() or ["?"])[0]


def run_case(mod, agent, path, ka_bin, case, keep):
    """One case in a fresh world: (status, why, seconds)."""
    from lib import World, Skip
    # Not under /tmp: the agents' sandboxes let the model's shell write /tmp (Codex's
    # workspace-write does), and a world there would put HOME and ka's dirs within its reach,
    # which a real home is not.
    os.makedirs(WORLDS, exist_ok=True)
    world = World(ka_bin, root=WORLDS)
    started = time.monotonic()
    try:
        mod.prepare(world, path)
        case(world)
        status, why = "pass", ""
    except Skip as e:
        status, why = "skip", str(e)
    except Exception as e:  # noqa: BLE001 - every failure is reported
        status, why = "FAIL", f"{e}" if isinstance(e, AssertionError) else traceback.format_exc()
    if case.xfail and status == "FAIL":
        status, why = "xfail", f"{case.xfail}: {why.splitlines()[0]}"
    elif case.xfail and status == "pass":
        status, why = "FAIL", f"XPASS: marked as failing ({case.xfail}) but passed: remove the mark"
    if status == "FAIL":
        why += f"\n  world kept at {world.dir}"
    elif not keep:
        world.cleanup()
    return status, why, time.monotonic() - started


def run_cases(ka_bin, agents, keep, only):
    """Inside the namespace: every case of every agent, KA_CONFORMANCE_JOBS (2) at a time;
    returns {agent: [(id, title, status, why)]}."""
    from concurrent.futures import ThreadPoolExecutor
    jobs = int(os.environ.get("KA_CONFORMANCE_JOBS") or 2)
    results = {}
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        pending = []
        for agent, path in agents.items():
            if importlib.util.find_spec(f"cases.{agent}") is None:
                say(f"*** SKIPPED {agent}: installed, but conformance/cases/{agent}.py has no cases yet; "
                    f"nothing of {agent} is checked ***")
                continue
            mod = importlib.import_module(f"cases.{agent}")
            for case in mod.CASES:
                if not only or case.id in only:
                    pending.append((agent, case, pool.submit(run_case, mod, agent, path, ka_bin, case, keep)))
        for agent, case, future in pending:
            status, why, secs = future.result()
            say(f"{agent:8} {status:5} {case.id:24} {secs:5.1f}s {why.splitlines()[0] if why else ''}")
            if status == "FAIL":
                print(why, file=sys.stderr)
            results.setdefault(agent, []).append((case.id, case.title, status, why))
    return results


def matrix(report):
    """The results as the Markdown table docs/agents.md shows."""
    agents = list(report)
    ids, titles = [], {}
    for a in agents:
        for c in report[a]["cases"]:
            if c["id"] not in titles:
                ids.append(c["id"])
                titles[c["id"]] = c["title"]
    mark = {"pass": "✓", "xfail": "✗", "skip": "–", "FAIL": "FAIL"}
    names = {"claude": "Claude Code", "codex": "Codex CLI", "gemini": "Gemini CLI", "copilot": "Copilot CLI"}
    number = lambda v: (re.search(r"\d+\.\d+\.\d+", v) or re.search(r".+", v or "?")).group(0)
    head = "| case | " + " | ".join(f"{names.get(a, a)} {number(report[a]['version'])}" for a in agents) + " |\n"
    head += "|---|" + "---|" * len(agents) + "\n"
    rows = []
    for i in ids:
        cells = []
        for a in agents:
            c = next((c for c in report[a]["cases"] if c["id"] == i), None)
            cells.append(" " if c is None else mark[c["status"]])
        rows.append(f"| `{i}`: {titles[i]} | " + " | ".join(cells) + " |\n")
    notes = [f"- {a} `{c['id']}`: {c['why']}\n" for a in agents for c in report[a]["cases"]
             if c["status"] in ("xfail", "skip")]
    date = next(iter(report.values()))["date"] if report else ""
    return f"Run on {date}.\n\n" + head + "".join(rows) + ("\n" + "".join(notes) if notes else "")


def main():
    args = [a for a in sys.argv[1:]]
    keep = "--keep" in args
    inside = "--inside" in args
    only = set(a[len("--case="):] for a in args if a.startswith("--case="))
    wanted = [a for a in args if not a.startswith("--")] or list(AGENTS)
    for a in wanted:
        if a not in AGENTS:
            sys.exit(f"conformance: unknown agent {a!r} (one of {', '.join(AGENTS)})")
    if not inside:
        ka_bin = build_ka()
        agents = install_agents(wanted)
        if not agents:
            say("*** no agent could be installed: nothing was checked ***")
            sys.exit(1)
        env = dict(os.environ, KA_HOOKS_BIN=ka_bin, KA_CONFORMANCE_AGENTS=json.dumps(agents))
        argv = isolated_argv([sys.executable, __file__, "--inside", *sys.argv[1:]])
        if argv is None:
            say("*** SKIPPED every agent: cannot make a network namespace (unshare -n as root, or unshare -rn); "
                "the agents are never run with network access ***")
            sys.exit(0 if os.environ.get("KA_CONFORMANCE_SKIP_UNISOLATED") == "1" else 1)
        started = time.monotonic()
        rc = subprocess.run(argv, env=env).returncode
        say(f"took {time.monotonic() - started:.0f}s")
        sys.exit(rc)
    agents = json.loads(os.environ["KA_CONFORMANCE_AGENTS"])
    results = run_cases(os.environ["KA_HOOKS_BIN"], agents, keep, only)
    out = os.path.join(HERE, "out")
    os.makedirs(out, exist_ok=True)
    report = {a: {"version": version(a, agents[a]), "date": time.strftime("%Y-%m-%d"),
                  "cases": [{"id": i, "title": t, "status": s, "why": w} for i, t, s, w in rows]}
              for a, rows in results.items()}
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(report, f, indent=1)
    with open(os.path.join(out, "matrix.md"), "w") as f:
        f.write(matrix(report))
    failed = sum(1 for rows in results.values() for r in rows if r[2] == "FAIL")
    total = sum(len(rows) for rows in results.values())
    say(f"{total - failed} of {total} cases passed or skipped with a reason; {failed} failed (results: conformance/out/results.json)")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
