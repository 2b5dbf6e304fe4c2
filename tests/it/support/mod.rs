//! Shared helpers for the integration tests: a scratch project with its own config and data dirs
//! (never the real home), hook entries as TOML, and process checks.
//!
//! Each test file uses a different subset of these helpers.
#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ka_hooks::config::{Config, LoadOptions};
use ka_hooks::dispatch::Request;
use ka_hooks::outcome::{HookReport, Outcome};
use ka_hooks::paths::Paths;
use ka_hooks::Event;
use serde_json::{Map, Value};

pub mod agents;

/// Environment variables the binary reads that a test must not inherit from the developer.
pub const AMBIENT_VARS: [&str; 23] = [
    "CLAUDE_CONFIG_DIR",
    "CLAUDE_PROJECT_DIR",
    "GEMINI_PROJECT_DIR",
    "CURSOR_PROJECT_DIR",
    "COPILOT_HOME",
    "CODEX_HOME",
    "KA_MANAGED_DIR",
    // Markers of an agent's tool call: `trust` refuses under them.
    "KA_AGENT_TOOL_CALL",
    "CLAUDECODE",
    "GEMINI_CLI",
    "CODEX_SANDBOX",
    "CODEX_SANDBOX_NETWORK_DISABLED",
    "COPILOT_CLI",
    "COPILOT_AGENT_SESSION_ID",
    "COPILOT_AGENT",
    "CURSOR_AGENT",
    "CURSOR_EXTENSION_HOST_ROLE",
    "ANTIGRAVITY_AGENT",
    "KA_HOOKS_DISABLE",
    "KA_HOOKS_TIMEOUT",
    "KA_HOOKS_LOG",
    "KA_NOTIFY_FILE",
    "KA_NOTIFY_DESKTOP",
];

/// A scratch project: `root/` (with `.ka/`), and a config and data dir of its own.
pub struct Project {
    _dir: tempfile::TempDir,
    /// The temp dir holding `project/`, `config/` and `data/`.
    pub base: PathBuf,
    /// The project root (canonical), holding `.ka/`.
    pub root: PathBuf,
    /// `KA_CONFIG_DIR`: the user layer is `config/ka.toml`.
    pub config_dir: PathBuf,
    /// `KA_DATA_DIR`: the trust store.
    pub data_dir: PathBuf,
}

impl Project {
    /// An empty project: `.ka/` exists but holds no config file.
    pub fn new() -> Project {
        let dir = tempfile::tempdir().expect("tempdir");
        let base = dir.path().canonicalize().expect("canonical tempdir");
        let root = base.join("project");
        let config_dir = base.join("config");
        let data_dir = base.join("data");
        for d in [&root.join(".ka"), &config_dir, &data_dir] {
            fs::create_dir_all(d).expect("create dir");
        }
        Project {
            _dir: dir,
            base,
            root,
            config_dir,
            data_dir,
        }
    }

    /// A project whose hooks are in the user layer (always trusted).
    pub fn with_user_toml(toml: &str) -> Project {
        let project = Project::new();
        project.write_user_toml(toml);
        project
    }

    pub fn write_user_toml(&self, toml: &str) {
        fs::write(self.config_dir.join("ka.toml"), toml).expect("write user ka.toml");
    }

    /// Chainable layer writers: the user, project and local `ka.toml` files.
    pub fn user(&self, toml: &str) -> &Self {
        self.write_user_toml(toml);
        self
    }

    pub fn project(&self, toml: &str) -> &Self {
        self.write(".ka/ka.toml", toml);
        self
    }

    pub fn local(&self, toml: &str) -> &Self {
        self.write(".ka/ka.local.toml", toml);
        self
    }

    /// Write `content` to `rel` under the root, creating folders.
    pub fn write(&self, rel: &str, content: &str) -> PathBuf {
        let path = self.root.join(rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).expect("create parent");
        }
        fs::write(&path, content).expect("write file");
        path
    }

    /// Contents of `rel` under the root, `None` when it does not exist.
    pub fn read(&self, rel: &str) -> Option<String> {
        fs::read_to_string(self.root.join(rel)).ok()
    }

    pub fn exists(&self, rel: &str) -> bool {
        self.root.join(rel).exists()
    }

    pub fn paths(&self) -> Paths {
        Paths::isolated(&self.config_dir, &self.data_dir)
    }

    pub fn options(&self, start_dir: &Path, trust_once: bool) -> LoadOptions {
        LoadOptions {
            paths: self.paths(),
            start_dir: start_dir.to_path_buf(),
            trust_once,
        }
    }

    /// Load from the root, with `--trust` (project layers load for this run).
    #[track_caller]
    pub fn load(&self) -> Config {
        Config::load(&self.options(&self.root, true))
            .unwrap_or_else(|e| panic!("config failed to load: {e}"))
    }

    /// Load and dispatch one request.
    #[track_caller]
    pub fn dispatch(&self, request: Request) -> Outcome {
        self.load().dispatch(request)
    }

    /// Dispatch a tool event with these arguments.
    #[track_caller]
    pub fn tool_call(&self, event: Event, tool: &str, arguments: Value) -> Outcome {
        self.dispatch(Request::tool_call(event, tool, object(arguments)))
    }

    /// Dispatch an event with this payload.
    #[track_caller]
    pub fn event(&self, event: Event, payload: Value) -> Outcome {
        self.dispatch(Request::new(event, object(payload)))
    }

    /// A `ka-hooks` command with this project's config and data dirs and no ambient `KA_*`.
    /// Its lines are not wrapped (`COLUMNS=1000`): the tests of the layout set `COLUMNS`.
    pub fn cli(&self) -> assert_cmd::Command {
        let mut cmd = assert_cmd::Command::cargo_bin("ka-hooks").expect("ka-hooks binary");
        for var in AMBIENT_VARS {
            cmd.env_remove(var);
        }
        cmd.env("KA_CONFIG_DIR", &self.config_dir)
            .env("KA_DATA_DIR", &self.data_dir)
            .env("NO_COLOR", "1")
            .env("COLUMNS", "1000")
            .current_dir(&self.root);
        cmd
    }

    /// [`Project::cli`] run by a shell named `program` (a symlink to `sh` that stays the
    /// parent): ka-hooks as an agent named so starts it. Arguments added go to ka-hooks.
    pub fn cli_under(&self, program: &str) -> assert_cmd::Command {
        let dir = self.base.join("agent-bin");
        std::fs::create_dir_all(&dir).expect("agent-bin");
        let shell = dir.join(program);
        if !shell.exists() {
            std::os::unix::fs::symlink("/bin/sh", &shell).expect("symlink sh");
        }
        let mut cmd = assert_cmd::Command::new(shell);
        for var in AMBIENT_VARS {
            cmd.env_remove(var);
        }
        // `; exit $?` keeps the shell alive as the parent (no exec of the last command).
        cmd.args(["-c", "\"$KA\" \"$@\"; exit $?", program])
            .env("KA", assert_cmd::cargo::cargo_bin("ka-hooks"))
            .env("KA_CONFIG_DIR", &self.config_dir)
            .env("KA_DATA_DIR", &self.data_dir)
            .env("NO_COLOR", "1")
            .env("COLUMNS", "1000")
            .current_dir(&self.root);
        cmd
    }

    /// `ka-hooks run pre_tool_use --tool TOOL --json` of a call with `arguments`, from the
    /// project root: the outcome as JSON.
    #[track_caller]
    pub fn run_json(&self, tool: &str, arguments: Value) -> Value {
        let out = self
            .cli()
            .args(["run", "pre_tool_use", "--tool", tool, "--json", "--input"])
            .arg(serde_json::json!({ "arguments": arguments }).to_string())
            .output()
            .expect("ka-hooks run");
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "ka-hooks run printed no outcome ({e}): {}",
                String::from_utf8_lossy(&out.stderr)
            )
        })
    }
}

/// What `install <agent>` registers by default: the binary under test by its absolute,
/// canonical path, then the agent (`/…/target/debug/ka-hooks claude`).
pub fn adapter_command(agent: &str) -> String {
    let exe = std::fs::canonicalize(env!("CARGO_BIN_EXE_ka-hooks")).expect("the binary's path");
    format!("{} {agent}", shell_words::quote(&exe.to_string_lossy()))
}

/// A `pre_tool_use` call of `write` to `README.md`, the call the host tests guard.
pub fn write_call() -> Request {
    Request::tool_call(
        Event::PreToolUse,
        "write",
        object(serde_json::json!({"path": "README.md", "content": "x"})),
    )
}

/// A JSON value that must be an object.
#[track_caller]
pub fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("expected a JSON object, got {other}"),
    }
}

/// One `[[hooks]]` entry. `command` is written as a TOML multi-line literal string, so it may hold
/// any quotes (but not `'''`). `extra` lines (`tool = "write"`, `timeout = 1`) are added verbatim.
pub fn hook(name: &str, event: &str, command: &str, extra: &[&str]) -> String {
    assert!(!command.contains("'''"), "command must not contain '''");
    let mut entry = format!("[[hooks]]\nname = \"{name}\"\nevent = \"{event}\"\n");
    for line in extra {
        entry.push_str(line);
        entry.push('\n');
    }
    entry.push_str(&format!("command = '''{command}'''\n\n"));
    entry
}

/// The report of the hook named `name`.
#[track_caller]
pub fn report<'a>(outcome: &'a Outcome, name: &str) -> &'a HookReport {
    outcome
        .hooks
        .iter()
        .find(|h| h.name == name)
        .unwrap_or_else(|| panic!("no report for hook `{name}` in {:#?}", outcome.hooks))
}

/// Whether some diagnostic contains every one of `needles`.
pub fn has_diagnostic(outcome: &Outcome, needles: &[&str]) -> bool {
    outcome
        .diagnostics
        .iter()
        .any(|d| needles.iter().all(|n| d.contains(n)))
}

/// The repository's root (the crate's manifest dir).
pub fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The target dir the `ka-hooks` binary under test was built in (`<target>/<profile>/ka-hooks`).
pub fn target_dir() -> PathBuf {
    let bin = Path::new(env!("CARGO_BIN_EXE_ka-hooks"));
    bin.parent()
        .and_then(Path::parent)
        .expect("<target>/<profile>/ka-hooks")
        .to_path_buf()
}

/// A project whose user layer holds these hook entries, with a hook timeout of 10 s (a stuck
/// test ends quickly).
pub fn hooks_project(hooks: &[String]) -> Project {
    Project::with_user_toml(&format!(
        "[hook_settings]\ntimeout = 10\n\n{}",
        hooks.concat()
    ))
}

/// `ka-hooks ARGS...` in `p`: exit code (-1 for a signal), stdout, stderr.
pub fn cli_output(p: &Project, args: &[&str]) -> (i32, String, String) {
    let out = p.cli().args(args).output().expect("ka-hooks");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `ka-hooks run pre_tool_use` of a write of `README.md`, from `dir`: exit code and stdout.
pub fn readme_write(p: &Project, dir: &Path) -> (Option<i32>, String) {
    let out = p
        .cli()
        .current_dir(dir)
        .args(["run", "pre_tool_use", "--tool", "write", "--input"])
        .arg(r#"{"arguments":{"path":"README.md","content":"x"}}"#)
        .output()
        .expect("ka-hooks run");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// Waits (up to `secs`) for `done`; panics with `what` otherwise.
#[track_caller]
pub fn within(secs: u64, what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !done() {
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Process state letter and process group from `/proc`, `None` when the process does not exist.
fn proc_state(pid: i32) -> Option<(char, i32)> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let pgrp = fields.nth(1)?.parse().ok()?;
    Some((state, pgrp))
}

/// The process is gone: `kill(pid, 0)` fails with ESRCH, or it is a zombie (an orphan reparented to
/// a PID 1 that does not reap stays a zombie, but runs nothing).
pub fn process_gone(pid: i32) -> bool {
    assert!(pid > 0, "not a pid: {pid}");
    // SAFETY: signal 0 performs only the existence and permission check.
    if unsafe { libc::kill(pid, 0) } != 0 {
        return std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
    }
    matches!(proc_state(pid), Some((state, _)) if state == 'Z' || state == 'X')
}

/// No live (non-zombie) process is left in process group `pgid`.
pub fn group_gone(pgid: i32) -> bool {
    assert!(pgid > 0, "not a process group: {pgid}");
    // SAFETY: signal 0 performs only the existence and permission check.
    if unsafe { libc::kill(-pgid, 0) } != 0 {
        return true;
    }
    let Ok(entries) = fs::read_dir("/proc") else {
        // No /proc: kill says a member exists, and we cannot tell whether it is a zombie.
        return false;
    };
    !entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .any(|pid| {
            matches!(proc_state(pid), Some((state, pgrp))
                if pgrp == pgid && state != 'Z' && state != 'X')
        })
}

/// SIGKILL is delivered asynchronously: give the kernel a moment to finish a kill that was sent.
#[track_caller]
pub fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(3);
    while !done() {
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The pid written (first line) in `rel` under the project root. A hook's `echo $$ > pid`
/// creates the file before it writes the line, so this waits (up to 10 s) for a whole line
/// rather than read the file the moment it exists.
#[track_caller]
pub fn pid_in(project: &Project, rel: &str) -> i32 {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let text = project.read(rel);
        let pid = text
            .as_deref()
            .and_then(|t| t.split_once('\n'))
            .and_then(|(line, _)| line.trim().parse().ok());
        match (pid, text) {
            (Some(pid), _) => return pid,
            (None, text) if Instant::now() >= deadline => match text {
                None => panic!("the hook did not write its pid to {rel}"),
                Some(text) => panic!("expected a pid in {rel}, got {text:?}"),
            },
            _ => std::thread::sleep(Duration::from_millis(10)),
        }
    }
}

/// What `ka-hooks trust` shows of the hook named `name` in its first review of a file: its
/// entry, what it runs, the files it covers and what trust cannot cover in it (empty when the
/// review has no such hook).
pub fn review_of(review: &str, name: &str) -> String {
    let named = format!(" name={name:?}");
    let mut lines = review.lines().skip_while(|l| {
        !(l.starts_with("  - hooks[") && (l.contains(&format!("{named} ")) || l.ends_with(&named)))
    });
    let mut out = String::new();
    if let Some(head) = lines.next() {
        out.push_str(head);
        out.push('\n');
    }
    for line in lines.take_while(|l| l.starts_with("    ")) {
        out.push_str(line);
        out.push('\n');
    }
    out
}
