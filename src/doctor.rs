//! `ka-hooks doctor`: is every hook wired and working? (SPEC §10)
//!
//! For each hook in effect, and each hook of a layer the trust gate skipped, the doctor checks
//! without running anything that its command resolves (a shell builtin, a program on `PATH`, or an
//! existing file; a script run directly must be executable, a script handed to an interpreter must
//! exist) and that its layer is trusted. With `exec` it also runs each runnable hook once, through
//! the real dispatcher, on a [synthetic payload](synthetic_payload) whose paths all point into a
//! fresh scratch directory, with `KA_HOOKS_DOCTOR=1` in its environment, and judges the answer.
//!
//! Every check ends `ok`, `warning` or `failing`; an entry's state is its worst check's.

use std::fmt::Write as _;
use std::io::Read as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::config::{
    self, Config, ConfigError, Hook, Layer, LayerState, LoadError, LoadOptions, MatcherKind,
    ToolFilter, Untrusted,
};
use crate::dispatch::Request;
use crate::event::Event;
use crate::outcome::{HookReport, Status};
use crate::paths;
use crate::trust::{TrustError, TrustStatus};

/// The environment variable set (to `1`) for a hook the doctor runs, so a hook can skip side
/// effects (notifications, network calls) on a synthetic payload.
pub const DOCTOR_ENV: &str = "KA_HOOKS_DOCTOR";
/// The longest the doctor waits for one hook: its own timeout, capped at this.
pub const EXEC_TIMEOUT_CAP: Duration = Duration::from_secs(10);
/// The file the synthetic payloads name, relative to the scratch directory.
pub const EXAMPLE_FILE: &str = "src/example.rs";
/// Content of [`EXAMPLE_FILE`], and of `arguments.content` in write-like synthetic calls.
pub const EXAMPLE_SOURCE: &str = "fn main() {\n    println!(\"hello from ka-hooks doctor\");\n}\n";
/// `session_id` of every synthetic payload.
pub const SESSION_ID: &str = "ka-hooks-doctor";

/// How a check, or an entry as a whole, came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum State {
    Ok,
    Warning,
    Failing,
}

impl State {
    pub const fn as_str(self) -> &'static str {
        match self {
            State::Ok => "ok",
            State::Warning => "warning",
            State::Failing => "failing",
        }
    }
}

/// One finding about an entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    /// What was checked: `config`, `trust`, `enabled`, `command`, `exec`.
    pub check: &'static str,
    pub state: State,
    pub message: String,
    /// The command or edit that fixes it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

impl Check {
    fn ok(check: &'static str, message: impl Into<String>) -> Check {
        Check {
            check,
            state: State::Ok,
            message: message.into(),
            fix: None,
        }
    }

    fn warning(check: &'static str, message: impl Into<String>, fix: Option<String>) -> Check {
        Check {
            check,
            state: State::Warning,
            message: message.into(),
            fix,
        }
    }

    fn failing(check: &'static str, message: impl Into<String>, fix: Option<String>) -> Check {
        Check {
            check,
            state: State::Failing,
            message: message.into(),
            fix,
        }
    }
}

/// What an entry of the report is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A hook, in effect or defined in a skipped layer.
    Hook,
    /// A layer file the trust gate skipped (or trusted for this run only).
    Layer,
    /// A configuration error.
    Config,
}

/// One hook, layer or configuration error, with its checks.
#[derive(Debug, Clone, Serialize)]
pub struct Entry {
    pub kind: Kind,
    /// The hook's name; the file, for layers and configuration errors.
    pub name: String,
    /// The worst state of its checks.
    pub state: State,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event: Option<&'static str>,
    /// The tool filter, on tool events (`tool = ["write"]`, `matcher = "Bash"`, `*`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filter: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layer: Option<Layer>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<PathBuf>,
    /// 1-based line of the hook entry (or of the error).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// Whether the hook runs in a session (trusted layer, enabled, hooks not all turned off).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runs: Option<bool>,
    pub checks: Vec<Check>,
}

impl Entry {
    fn finish(mut self) -> Entry {
        self.state = self
            .checks
            .iter()
            .map(|c| c.state)
            .max()
            .unwrap_or(State::Ok);
        self
    }
}

/// Everything the doctor found.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub project_root: Option<PathBuf>,
    /// Where hooks run and relative commands resolve: the project root, else the working directory.
    pub run_dir: PathBuf,
    /// Whether the hooks were run (`--exec`).
    pub executed: bool,
    pub entries: Vec<Entry>,
}

impl Report {
    /// Whether any entry is failing (the doctor then exits 1).
    pub fn failing(&self) -> bool {
        self.entries.iter().any(|e| e.state == State::Failing)
    }

    /// How many entries are ok, warning, failing.
    pub fn counts(&self) -> [usize; 3] {
        let mut counts = [0; 3];
        for e in &self.entries {
            counts[e.state as usize] += 1;
        }
        counts
    }

    /// The human report; `color` paints the states (a terminal without `NO_COLOR`).
    pub fn to_text(&self, color: bool) -> String {
        let paint = |state: State| {
            let word = format!("{:8}", state.as_str());
            if !color {
                return word;
            }
            let code = match state {
                State::Ok => "32",
                State::Warning => "1;33",
                State::Failing => "1;31",
            };
            format!("\x1b[{code}m{word}\x1b[0m")
        };
        let mut w = String::new();
        let _ = match &self.project_root {
            Some(root) => writeln!(w, "project {}", root.display()),
            None => writeln!(
                w,
                "no project (no `.ka/` folder): hooks run in {}",
                self.run_dir.display()
            ),
        };
        for e in &self.entries {
            let _ = writeln!(w);
            let title = match e.kind {
                Kind::Hook => {
                    let mut what = e.event.unwrap_or("").to_owned();
                    if let Some(filter) = &e.filter {
                        let _ = write!(what, ", {filter}");
                    }
                    format!("hook {} ({what})", e.name)
                }
                Kind::Layer => format!("{} layer {}", e.layer.map_or("", Layer::as_str), e.name),
                Kind::Config => format!("configuration error in {}", e.name),
            };
            let _ = writeln!(w, "{} {title}", paint(e.state));
            if let (Kind::Hook, Some(layer), Some(file)) = (e.kind, e.layer, &e.file) {
                let line = e.line.map(|l| format!(":{l}")).unwrap_or_default();
                let _ = writeln!(w, "         {layer} {}{line}", file.display());
            }
            if let Some(command) = &e.command {
                let _ = writeln!(w, "         command: {command}");
            }
            for c in &e.checks {
                let message = c.message.replace('\n', "\n                           ");
                let _ = writeln!(w, "         {} {:8} {message}", paint(c.state), c.check);
                if let Some(fix) = &c.fix {
                    let _ = writeln!(w, "                           fix: {fix}");
                }
            }
        }
        let [ok, warning, failing] = self.counts();
        let count = |kind: Kind| self.entries.iter().filter(|e| e.kind == kind).count();
        let hooks = count(Kind::Hook);
        let mut checked = vec![format!("{hooks} hook(s)")];
        match count(Kind::Layer) {
            0 => {}
            n => checked.push(format!("{n} layer(s)")),
        }
        match count(Kind::Config) {
            0 => {}
            n => checked.push(format!("{n} configuration error(s)")),
        }
        let _ = writeln!(w);
        if self.entries.is_empty() {
            let _ = writeln!(w, "no hooks configured");
        } else {
            let _ = writeln!(
                w,
                "{}: {ok} ok, {warning} warning, {failing} failing",
                checked.join(", ")
            );
        }
        if !self.executed && hooks > 0 {
            let _ = writeln!(
                w,
                "static checks only: `ka-hooks doctor --exec` also runs each hook once on a \
                 synthetic payload in a scratch directory"
            );
        }
        w
    }
}

/// Diagnose every hook that `opts` loads, and every hook of a layer the trust gate skips. With
/// `exec`, run each runnable hook once on a synthetic payload; `progress` is told the name of each
/// hook before it runs. Fails only when the trust store cannot be read.
pub fn diagnose(
    opts: &LoadOptions,
    exec: bool,
    progress: &mut dyn FnMut(&str),
) -> Result<Report, TrustError> {
    let mut entries = Vec::new();
    let checked = Config::check(opts);
    for error in &checked.errors {
        entries.push(config_entry(error));
    }
    let start_dir = paths::absolute(&opts.start_dir);
    let gated = match Config::load(opts) {
        Ok(config) => config,
        Err(LoadError::Config(_)) => {
            // Already reported, one entry per error: nothing loads until they are fixed.
            return Ok(Report {
                project_root: paths::find_project_root(&start_dir),
                run_dir: start_dir,
                executed: false,
                entries,
            });
        }
    };
    // Every layer as if trusted: what the skipped layers would add. Loading runs nothing.
    let full = Config::load(&LoadOptions {
        trust_once: true,
        ..opts.clone()
    })
    .ok();
    let run_dir = gated
        .project_root
        .clone()
        .unwrap_or_else(|| start_dir.clone());
    let fix = trust_fix(gated.project_root.as_deref());

    for layer in &gated.layers {
        if layer.state == LayerState::TrustedOnce {
            entries.push(
                Entry {
                    kind: Kind::Layer,
                    name: layer.file.display().to_string(),
                    state: State::Ok,
                    event: None,
                    filter: None,
                    command: None,
                    layer: Some(layer.layer),
                    file: Some(layer.file.clone()),
                    line: None,
                    runs: None,
                    checks: vec![Check::warning(
                        "trust",
                        "trusted for this run only (--trust): in a session its hooks do not run",
                        Some(fix.clone()),
                    )],
                }
                .finish(),
            );
        }
    }

    let mut executed = false;
    for hook in &gated.hooks {
        let mut entry = hook_entry(hook, &run_dir);
        entry.checks.insert(0, trust_check(hook, &gated, &fix));
        for o in pending_overrides(hook, full.as_ref(), &gated.untrusted) {
            entry.checks.insert(1, o);
        }
        let mut runs = hook.enabled;
        if !hook.enabled {
            entry.checks.insert(
                1,
                Check::ok("enabled", "disabled (`enabled = false`): never runs"),
            );
            downgrade(&mut entry.checks);
        } else if let Some(why) = &gated.settings.disabled {
            runs = false;
            entry.checks.insert(
                1,
                Check::warning(
                    "enabled",
                    format!("every hook is off: {why}"),
                    Some("unset KA_HOOKS_DISABLE, or remove `disable_all = true`".into()),
                ),
            );
        }
        entry.runs = Some(
            runs && !gated
                .layers
                .iter()
                .any(|l| l.state == LayerState::TrustedOnce && l.file == hook.source.file),
        );
        if exec {
            if runs {
                progress(&hook.name);
                let exec = exec_check(&gated, hook, &run_dir);
                if exec.state == State::Ok {
                    // The run answered: what could not be checked statically works.
                    for c in &mut entry.checks {
                        if c.state == State::Warning && c.message.starts_with(NOT_CHECKED) {
                            c.state = State::Ok;
                        }
                    }
                }
                entry.checks.push(exec);
                executed = true;
            } else {
                entry
                    .checks
                    .push(Check::ok("exec", "not run: the hook is off"));
            }
        }
        entries.push(entry.finish());
    }

    for skipped in &gated.untrusted {
        entries.push(layer_entry(skipped, full.as_ref()));
        let Some(full) = &full else { continue };
        for hook in full.hooks.iter().filter(|h| h.source.file == skipped.file) {
            let mut entry = hook_entry(hook, &run_dir);
            entry.runs = Some(false);
            entry.checks.insert(
                0,
                Check::failing(
                    "trust",
                    format!(
                        "its {} layer {}: this hook does not run",
                        skipped.layer,
                        trust_words(skipped.status)
                    ),
                    Some(skipped.fix.clone()),
                ),
            );
            if exec {
                entry.checks.push(Check::ok(
                    "exec",
                    "not run: the trust gate skips its layer (review it, then trust it)",
                ));
            }
            entries.push(entry.finish());
        }
    }

    Ok(Report {
        project_root: gated.project_root.clone(),
        run_dir,
        executed: exec && executed,
        entries,
    })
}

fn trust_fix(root: Option<&Path>) -> String {
    root.map(config::trust_command)
        .unwrap_or_else(|| "ka-hooks trust".into())
}

/// What is wrong with a skipped layer, after "the layer".
fn trust_words(status: TrustStatus) -> &'static str {
    match status {
        TrustStatus::Stale => "has changed since it was trusted",
        TrustStatus::Removed => "was removed since it was trusted",
        TrustStatus::Untrusted | TrustStatus::Trusted => "is not trusted",
    }
}

fn config_entry(error: &ConfigError) -> Entry {
    let mut message = String::new();
    if let Some(key) = &error.key {
        let _ = write!(message, "`{key}`: ");
    }
    message.push_str(&error.message);
    let at = match (error.line, error.column) {
        (Some(l), Some(c)) => format!("line {l}, column {c}: "),
        (Some(l), None) => format!("line {l}: "),
        _ => String::new(),
    };
    Entry {
        kind: Kind::Config,
        name: error.file.display().to_string(),
        state: State::Failing,
        event: None,
        filter: None,
        command: None,
        layer: None,
        file: Some(error.file.clone()),
        line: error.line,
        runs: None,
        checks: vec![Check::failing(
            "config",
            format!("{at}{message}"),
            error.help.clone(),
        )],
    }
    .finish()
}

fn layer_entry(skipped: &Untrusted, full: Option<&Config>) -> Entry {
    let what = match full {
        Some(full) => {
            let defined = full
                .hooks
                .iter()
                .filter(|h| h.source.file == skipped.file)
                .count();
            let overridden = full
                .hooks
                .iter()
                .filter(|h| h.overrides.iter().any(|o| o.source.file == skipped.file))
                .count();
            match (defined, overridden) {
                (0, 0) => "it defines no hooks".to_owned(),
                (d, 0) => format!("its {d} hook(s) do not run"),
                (0, o) => format!("its overrides of {o} hook(s) are not applied"),
                (d, o) => format!(
                    "its {d} hook(s) do not run and its overrides of {o} hook(s) are not applied"
                ),
            }
        }
        None => "its hooks could not be read (see the configuration errors)".to_owned(),
    };
    Entry {
        kind: Kind::Layer,
        name: skipped.file.display().to_string(),
        state: State::Failing,
        event: None,
        filter: None,
        command: None,
        layer: Some(skipped.layer),
        file: Some(skipped.file.clone()),
        line: None,
        runs: None,
        checks: vec![Check::failing(
            "trust",
            format!(
                "the layer {}, so it is skipped: {what}",
                trust_words(skipped.status)
            ),
            Some(skipped.fix.clone()),
        )],
    }
    .finish()
}

fn trust_check(hook: &Hook, config: &Config, fix: &str) -> Check {
    let state = config
        .layers
        .iter()
        .find(|l| l.file == hook.source.file)
        .map(|l| l.state);
    match (hook.source.layer, state) {
        (Layer::User, _) => Check::ok("trust", "user layer: always trusted"),
        (layer, Some(LayerState::TrustedOnce)) => Check::warning(
            "trust",
            format!("{layer} layer trusted for this run only (--trust): in a session this hook does not run"),
            Some(fix.to_owned()),
        ),
        (layer, Some(LayerState::TrustedRoot)) => {
            Check::ok("trust", format!("{layer} layer: under a trusted root"))
        }
        (layer, _) => Check::ok("trust", format!("{layer} layer: trusted")),
    }
}

/// Overrides of a hook in effect written in a layer the gate skipped: not applied until trusted.
fn pending_overrides(hook: &Hook, full: Option<&Config>, untrusted: &[Untrusted]) -> Vec<Check> {
    let Some(full_hook) = full.filter(|_| hook.named).and_then(|f| f.hook(&hook.name)) else {
        return Vec::new();
    };
    full_hook
        .overrides
        .iter()
        .filter_map(|o| {
            let skipped = untrusted.iter().find(|u| u.file == o.source.file)?;
            Some(Check::warning(
                "trust",
                format!(
                    "the {} layer {} sets {} of this hook, but it {}: not applied",
                    skipped.layer,
                    skipped.file.display(),
                    o.keys.join(", "),
                    trust_words(skipped.status)
                ),
                Some(skipped.fix.clone()),
            ))
        })
        .collect()
}

/// A disabled hook cannot fail anything: its problems are warnings.
fn downgrade(checks: &mut [Check]) {
    for c in checks {
        if c.state == State::Failing {
            c.state = State::Warning;
        }
    }
}

fn hook_entry(hook: &Hook, run_dir: &Path) -> Entry {
    Entry {
        kind: Kind::Hook,
        name: hook.name.clone(),
        state: State::Ok,
        event: Some(hook.event.as_str()),
        filter: hook.event.is_tool_event().then(|| hook.filter.describe()),
        command: Some(hook.command.clone()),
        layer: Some(hook.source.layer),
        file: Some(hook.source.file.clone()),
        line: Some(hook.source.line),
        runs: None,
        checks: {
            let mut checks = command_checks(hook, run_dir);
            if let Some(message) = fail_open_warning(hook) {
                let fix = format!("set `on_error = \"block\"` on hook `{}`", hook.name);
                checks.push(Check::warning("on_error", message, Some(fix)));
            }
            checks
        },
    }
}

/// A guard (a `pre_tool_use` or `user_prompt_submit` hook) that fails open: with
/// `on_error = "ignore"` (the default), a guard that crashes, times out or prints what cannot be
/// applied lets the call through, which users do not expect of a guard. A warning for `check`
/// and `doctor`, never an error.
pub fn fail_open_warning(hook: &Hook) -> Option<String> {
    (hook.enabled && hook.event.is_pipeline() && hook.on_error == config::OnError::Ignore).then(
        || {
            format!(
                "hook `{}` on {} fails open: with on_error = \"ignore\" (the default), the {} \
                 proceeds when the hook crashes, times out or prints what cannot be applied; \
                 set on_error = \"block\" (or \"ask\") if it is a guard",
                hook.name,
                hook.event,
                if hook.event == Event::PreToolUse {
                    "tool call"
                } else {
                    "prompt"
                }
            )
        },
    )
}

// ---------------------------------------------------------------------------------------------
// Static checks of the command
// ---------------------------------------------------------------------------------------------

/// How a static check that could not be made begins; a passing `--exec` run settles it.
const NOT_CHECKED: &str = "not checked:";

/// Builtins of dash and bash (POSIX special and regular built-ins, and common extensions).
const BUILTINS: &[&str] = &[
    ":", ".", "[", "alias", "bg", "break", "cd", "command", "continue", "echo", "eval", "exec",
    "exit", "export", "false", "fc", "fg", "getopts", "hash", "jobs", "kill", "local", "printf",
    "pwd", "read", "readonly", "return", "set", "shift", "source", "test", "times", "trap", "true",
    "type", "ulimit", "umask", "unalias", "unset", "wait",
];

/// Shell reserved words that open a compound command: not resolvable word by word.
const KEYWORDS: &[&str] = &[
    "if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac", "{",
    "}", "[[", "function", "select", "((",
];

/// Words that run the command after them.
const WRAPPERS: &[&str] = &["exec", "command", "nohup", "env", "time"];

/// Programs that run a script named by their first non-option argument.
const INTERPRETERS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "python", "python2", "python3",
    "node", "nodejs", "ruby", "perl", "php", "lua", "luajit", "tclsh", "Rscript", "pwsh", "tsx",
    "ts-node",
];

/// Interpreter options whose code follows inline (`sh -c`, `python3 -m`, `node -e`): no script.
const INLINE_FLAGS: &[&str] = &[
    "-c",
    "-m",
    "-e",
    "-E",
    "-p",
    "-r",
    "--eval",
    "--print",
    "--command",
    "-",
];

/// Interpreter options that take the next word as their value (`python3 -W ignore x.py`,
/// `node --require m x.js`, `bash -o pipefail x.sh`).
const VALUE_OPTIONS: &[&str] = &[
    "-W",
    "-X",
    "-I",
    "-M",
    "-o",
    "-O",
    "+o",
    "+O",
    "-d",
    "--require",
    "--import",
    "--loader",
    "--experimental-loader",
    "--env-file",
];

/// One shell word of the first simple command.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Word {
    text: String,
    /// It holds an expansion that cannot be known without running the shell.
    dynamic: bool,
}

/// Words being collected by [`first_command`].
#[derive(Default)]
struct Words {
    words: Vec<Word>,
    word: String,
    in_word: bool,
    dynamic: bool,
    /// The next word is a redirection target, not an argument.
    skip_next: bool,
}

impl Words {
    fn end(&mut self) {
        if self.in_word {
            let text = std::mem::take(&mut self.word);
            // `[` alone is the test builtin, not a glob.
            let dynamic = self.dynamic && text != "[" && text != "[[";
            let word = Word { text, dynamic };
            if !std::mem::take(&mut self.skip_next) {
                self.words.push(word);
            }
        }
        self.in_word = false;
        self.dynamic = false;
    }
}

/// Split the first simple command of `command` into words, expanding `~` and the variables
/// `lookup` knows. Stops at the first `;`, `&`, `|`, newline or comment; skips redirections.
fn first_command(
    command: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<Word>, String> {
    let chars: Vec<char> = command.chars().collect();
    let mut acc = Words::default();
    let mut i = 0;

    while i < chars.len() {
        let c = chars[i];
        match c {
            ' ' | '\t' => acc.end(),
            '\n' | ';' | '&' | '|' => break,
            '(' | ')' if !acc.in_word => {
                if acc.words.is_empty() {
                    return Err("a subshell `( ... )`".into());
                }
                break;
            }
            '<' | '>' => {
                // `2>`: the digits are the descriptor, not a word.
                if acc.in_word && acc.word.chars().all(|c| c.is_ascii_digit()) && !acc.dynamic {
                    acc.word.clear();
                    acc.in_word = false;
                } else {
                    acc.end();
                }
                while i + 1 < chars.len() && matches!(chars[i + 1], '>' | '<' | '&' | '|') {
                    i += 1;
                }
                acc.skip_next = true;
            }
            '#' if !acc.in_word => break,
            '\'' => {
                acc.in_word = true;
                let end = chars[i + 1..]
                    .iter()
                    .position(|&c| c == '\'')
                    .ok_or("an unterminated single quote")?;
                acc.word.extend(&chars[i + 1..i + 1 + end]);
                i += end + 1;
            }
            '"' => {
                acc.in_word = true;
                i += 1;
                loop {
                    let Some(&c) = chars.get(i) else {
                        return Err("an unterminated double quote".into());
                    };
                    match c {
                        '"' => break,
                        '\\' if matches!(chars.get(i + 1), Some('$' | '`' | '"' | '\\')) => {
                            acc.word.push(chars[i + 1]);
                            i += 1;
                        }
                        '\\' if chars.get(i + 1) == Some(&'\n') => i += 1,
                        '$' => {
                            i = expand(&chars, i, lookup, &mut acc.word, &mut acc.dynamic)?;
                            continue;
                        }
                        '`' => {
                            acc.dynamic = true;
                            i = skip_backticks(&chars, i)?;
                        }
                        c => acc.word.push(c),
                    }
                    i += 1;
                }
            }
            '\\' => {
                match chars.get(i + 1) {
                    Some('\n') => {}
                    Some(&next) => {
                        acc.in_word = true;
                        acc.word.push(next);
                    }
                    None => {}
                }
                i += 1;
            }
            '$' => {
                acc.in_word = true;
                i = expand(&chars, i, lookup, &mut acc.word, &mut acc.dynamic)?;
                continue;
            }
            '`' => {
                acc.in_word = true;
                acc.dynamic = true;
                i = skip_backticks(&chars, i)?;
            }
            '~' if !acc.in_word && matches!(chars.get(i + 1), None | Some('/' | ' ' | '\t')) => {
                acc.in_word = true;
                match lookup("HOME") {
                    Some(home) => acc.word.push_str(&home),
                    None => acc.dynamic = true,
                }
            }
            '*' | '?' | '[' => {
                acc.in_word = true;
                acc.dynamic = true;
                acc.word.push(c);
            }
            c => {
                acc.in_word = true;
                acc.word.push(c);
            }
        }
        i += 1;
    }
    acc.end();
    Ok(acc.words)
}

/// Expand the `$...` at `chars[i]` into `word`; returns the index after it.
fn expand(
    chars: &[char],
    i: usize,
    lookup: &dyn Fn(&str) -> Option<String>,
    word: &mut String,
    dynamic: &mut bool,
) -> Result<usize, String> {
    let name_char = |c: char| c.is_ascii_alphanumeric() || c == '_';
    match chars.get(i + 1) {
        Some('(') => {
            *dynamic = true;
            let mut depth = 0usize;
            for (j, &c) in chars.iter().enumerate().skip(i + 1) {
                match c {
                    '(' => depth += 1,
                    ')' => {
                        depth -= 1;
                        if depth == 0 {
                            return Ok(j + 1);
                        }
                    }
                    _ => {}
                }
            }
            Err("an unterminated `$(`".into())
        }
        Some('{') => {
            let end = chars[i + 2..]
                .iter()
                .position(|&c| c == '}')
                .ok_or("an unterminated `${`")?;
            let inner: String = chars[i + 2..i + 2 + end].iter().collect();
            match lookup(&inner).filter(|_| inner.chars().all(name_char)) {
                Some(value) => word.push_str(&value),
                None => *dynamic = true,
            }
            Ok(i + 3 + end)
        }
        Some(&c) if c.is_ascii_alphabetic() || c == '_' => {
            let len = chars[i + 1..].iter().take_while(|&&c| name_char(c)).count();
            let name: String = chars[i + 1..i + 1 + len].iter().collect();
            match lookup(&name) {
                Some(value) => word.push_str(&value),
                None => *dynamic = true,
            }
            Ok(i + 1 + len)
        }
        Some(&c) if c.is_ascii_digit() || "@*#?$!-".contains(c) => {
            *dynamic = true;
            Ok(i + 2)
        }
        _ => {
            word.push('$');
            Ok(i + 1)
        }
    }
}

/// The index of the backtick closing the one at `chars[i]`.
fn skip_backticks(chars: &[char], i: usize) -> Result<usize, String> {
    let mut j = i + 1;
    while j < chars.len() {
        match chars[j] {
            '\\' => j += 1,
            '`' => return Ok(j),
            _ => {}
        }
        j += 1;
    }
    Err("an unterminated backtick".into())
}

fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            let mut chars = name.chars();
            chars
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        }
        None => false,
    }
}

/// `dir/rel` without `.` components (`./x.sh` reads `/repo/x.sh`).
fn join(dir: &Path, rel: &str) -> PathBuf {
    dir.join(rel)
        .components()
        .filter(|c| *c != std::path::Component::CurDir)
        .collect()
}

fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// `name` on `path_var` (`PATH`), relative entries against `dir`.
fn find_on_path(name: &str, path_var: &str, dir: &Path) -> Option<PathBuf> {
    path_var
        .split(':')
        .map(|d| {
            if d.is_empty() {
                Path::new(".")
            } else {
                Path::new(d)
            }
        })
        .map(|d| dir.join(d).join(name))
        .find(|p| is_executable(p))
}

fn quote(path: &Path) -> String {
    let s = path.to_string_lossy();
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:@%,".contains(c))
    {
        s.into_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// The hook's environment as the runner sets it, for expanding the command.
fn hook_lookup<'a>(hook: &'a Hook, run_dir: &'a Path) -> impl Fn(&str) -> Option<String> + 'a {
    move |name: &str| {
        if let Some((_, v)) = hook.env.iter().rev().find(|(k, _)| k == name) {
            return Some(v.clone());
        }
        match name {
            "KA_PROJECT_DIR" | "CLAUDE_PROJECT_DIR" | "PWD" => {
                Some(run_dir.to_string_lossy().into_owned())
            }
            "KA_EVENT" => Some(hook.event.as_str().to_owned()),
            "KA_HOOK_NAME" => Some(hook.name.clone()),
            _ => std::env::var(name).ok(),
        }
    }
}

/// Whether the command resolves: its first word is a builtin, on `PATH`, or an existing file
/// (executable when run directly), and a script handed to an interpreter exists.
fn command_checks(hook: &Hook, run_dir: &Path) -> Vec<Check> {
    let lookup = hook_lookup(hook, run_dir);
    let unchecked = |why: &str| {
        vec![Check::warning(
            "command",
            format!(
                "{NOT_CHECKED} the command starts with {why}; `ka-hooks doctor --exec` runs it"
            ),
            None,
        )]
    };
    let words = match first_command(&hook.command, &lookup) {
        Ok(words) => words,
        Err(why) => return unchecked(&why),
    };
    let mut words = words.into_iter().peekable();
    // Leading assignments, `!`, and wrappers such as `exec` and `env X=1`.
    while let Some(w) = words.peek() {
        let skip = !w.dynamic
            && (is_assignment(&w.text)
                || w.text == "!"
                || WRAPPERS.contains(&w.text.as_str())
                || (w.text.starts_with('-') && w.text.len() > 1));
        if !skip {
            break;
        }
        words.next();
    }
    let Some(program) = words.next() else {
        return unchecked("no command word");
    };
    let args: Vec<Word> = words.collect();
    if program.dynamic {
        return unchecked("a shell expansion");
    }
    let name = program.text.as_str();
    if KEYWORDS.contains(&name) {
        return unchecked(&format!("the compound command `{name}`"));
    }
    let path_var = lookup("PATH").unwrap_or_default();

    if name.contains('/') {
        let path = join(run_dir, name);
        let check = file_check(name, &path, true, run_dir);
        if check.state == State::Ok {
            if let Some(broken) = shebang_check(name, &path, &path_var, run_dir) {
                return vec![broken];
            }
        }
        return vec![check];
    }
    if name == "." || name == "source" {
        let mut checks = vec![Check::ok("command", format!("`{name}` is a shell builtin"))];
        if let Some(script) = args.first() {
            checks.push(script_check(script, run_dir));
        }
        return checks;
    }
    if BUILTINS.contains(&name) {
        return vec![Check::ok("command", format!("`{name}` is a shell builtin"))];
    }
    let Some(found) = find_on_path(name, &path_var, run_dir) else {
        return vec![Check::failing(
            "command",
            format!("`{name}` is not a shell builtin and is not on PATH"),
            Some(format!(
                "install `{name}`, or give its path (commands run in {})",
                run_dir.display()
            )),
        )];
    };
    let mut checks = vec![Check::ok(
        "command",
        format!("`{name}` is {}", found.display()),
    )];
    let base = name.rsplit('/').next().unwrap_or(name);
    let interpreter = INTERPRETERS.contains(&base)
        || (base.starts_with("python")
            && base[6..].chars().all(|c| c.is_ascii_digit() || c == '.'));
    if interpreter {
        if let Some(script) = script_argument(&args) {
            checks.push(script_check(script, run_dir));
        }
    }
    checks
}

/// The script an interpreter runs: its first argument that is no option nor an option's value;
/// `None` for inline code (`sh -c`, `python3 -m`, `node -e`).
fn script_argument(args: &[Word]) -> Option<&Word> {
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let text = arg.text.as_str();
        if arg.dynamic || !(text.starts_with('-') || text.starts_with('+')) {
            return Some(arg);
        }
        if INLINE_FLAGS.contains(&text) {
            return None;
        }
        if VALUE_OPTIONS.contains(&text) {
            args.next();
        }
    }
    None
}

/// A file run directly (`executable`) or read by an interpreter.
fn file_check(written: &str, path: &Path, executable: bool, run_dir: &Path) -> Check {
    let what = if executable { "command" } else { "script" };
    let check = if executable { "command" } else { "script" };
    match std::fs::metadata(path) {
        Err(_) => Check::failing(
            check,
            format!(
                "{what} `{written}` does not exist (looked for {})",
                path.display()
            ),
            Some(format!(
                "fix the path: commands run in {}, and relative paths start there",
                run_dir.display()
            )),
        ),
        Ok(m) if m.is_dir() => Check::failing(
            check,
            format!("{what} `{written}` is a directory"),
            Some("name the script inside it".into()),
        ),
        Ok(m) if executable && m.permissions().mode() & 0o111 == 0 => Check::failing(
            check,
            format!("`{written}` is not executable"),
            Some(format!("chmod +x {}", quote(path))),
        ),
        Ok(_) if executable => Check::ok(check, format!("`{written}` is an executable file")),
        Ok(_) => Check::ok(check, format!("script `{written}` exists")),
    }
}

fn script_check(script: &Word, run_dir: &Path) -> Check {
    if script.dynamic {
        return Check::warning(
            "script",
            format!(
                "{NOT_CHECKED} the script is a shell expansion; `ka-hooks doctor --exec` runs it"
            ),
            None,
        );
    }
    file_check(&script.text, &join(run_dir, &script.text), false, run_dir)
}

/// The `#!` line of an executable script names an interpreter that exists.
fn shebang_check(written: &str, path: &Path, path_var: &str, run_dir: &Path) -> Option<Check> {
    let mut head = [0u8; 256];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .ok()?;
    let head = &head[..n];
    let line = head.strip_prefix(b"#!")?;
    let line = &line[..line.iter().position(|&b| b == b'\n').unwrap_or(line.len())];
    let line = String::from_utf8_lossy(line);
    if line.ends_with('\r') {
        return Some(Check::failing(
            "command",
            format!(
                "`{written}` has Windows line endings: its #! line ends with a carriage return"
            ),
            Some(format!("sed -i 's/\\r$//' {}", quote(path))),
        ));
    }
    let mut parts = line.split_whitespace();
    let interpreter = parts.next()?;
    if !is_executable(Path::new(interpreter)) {
        return Some(Check::failing(
            "command",
            format!("the #! interpreter `{interpreter}` of `{written}` does not exist"),
            Some(format!("fix the first line of {}", quote(path))),
        ));
    }
    if interpreter.ends_with("/env") {
        let program = parts.find(|p| !p.starts_with('-') && !is_assignment(p))?;
        if find_on_path(program, path_var, run_dir).is_none() {
            return Some(Check::failing(
                "command",
                format!("`{written}` runs `{program}` (#!{line}), which is not on PATH"),
                Some(format!(
                    "install `{program}`, or fix the first line of the script"
                )),
            ));
        }
    }
    None
}

// ---------------------------------------------------------------------------------------------
// Running a hook on a synthetic payload
// ---------------------------------------------------------------------------------------------

/// A tool call that `hook`'s filter matches, for the synthetic payload of a tool event: a name the
/// filter spells out, else a common tool name it matches; `None` on other events.
pub fn synthetic_tool(hook: &Hook) -> Option<String> {
    if !hook.event.is_tool_event() {
        return None;
    }
    let named: Vec<String> = match &hook.filter {
        ToolFilter::All => Vec::new(),
        ToolFilter::Tools { patterns, .. } => patterns.clone(),
        ToolFilter::Matcher {
            kind: MatcherKind::Names(names),
            ..
        } => names.clone(),
        ToolFilter::Matcher { .. } => Vec::new(),
    };
    let literal = |t: &String| !t.contains(['*', '?', '[', '{']);
    let common = [
        "write", "edit", "bash", "read", "Write", "Edit", "Bash", "Read",
    ];
    named
        .iter()
        .filter(|t| literal(t))
        .cloned()
        .chain(common.iter().map(|t| (*t).to_owned()))
        .chain(named.iter().map(|t| t.replace(['*', '?'], "doctor")))
        .find(|t| hook.filter.matches(Some(t)))
        .or_else(|| Some("write".to_owned()))
}

/// The payload the doctor sends on `event`: every path in it lies inside `scratch` (which
/// [`prepare_scratch`] fills). `tool` names the tool of a tool event (see [`synthetic_tool`]). The
/// tests use this same function, so what they check is what the doctor sends.
pub fn synthetic_payload(event: Event, tool: Option<&str>, scratch: &Path) -> Map<String, Value> {
    let file = scratch.join(EXAMPLE_FILE).to_string_lossy().into_owned();
    let mut payload = Map::new();
    payload.insert("event".into(), json!(event.as_str()));
    payload.insert("cwd".into(), json!(scratch.to_string_lossy()));
    payload.insert("session_id".into(), json!(SESSION_ID));
    let tool = tool.unwrap_or("write");
    let shell_like = ["bash", "shell", "sh", "exec", "run"]
        .iter()
        .any(|t| tool.eq_ignore_ascii_case(t));
    let arguments = if shell_like {
        json!({ "command": format!("cat {}", quote(Path::new(&file))) })
    } else {
        json!({ "path": file, "file_path": file, "content": EXAMPLE_SOURCE })
    };
    match event {
        Event::PreToolUse | Event::PermissionRequest | Event::PermissionDenied => {
            payload.insert("tool".into(), json!(tool));
            payload.insert("arguments".into(), arguments);
        }
        Event::PostToolUse | Event::PostToolUseFailure => {
            payload.insert("tool".into(), json!(tool));
            payload.insert("arguments".into(), arguments);
            let result = if shell_like {
                EXAMPLE_SOURCE.to_owned()
            } else {
                format!("wrote {} bytes to {file}", EXAMPLE_SOURCE.len())
            };
            payload.insert("result".into(), json!(result));
            payload.insert("is_error".into(), json!(event == Event::PostToolUseFailure));
        }
        Event::Stop => {
            payload.insert("stop".into(), json!("done"));
        }
        Event::UserPromptSubmit => {
            payload.insert(
                "prompt".into(),
                json!(format!("ka-hooks doctor: explain {file}")),
            );
        }
        Event::PreCompact => {
            payload.insert("focus".into(), json!("ka-hooks doctor"));
        }
        _ => {}
    }
    payload
}

/// Fill a scratch directory with the files the synthetic payloads name.
pub fn prepare_scratch(scratch: &Path) -> std::io::Result<()> {
    let file = scratch.join(EXAMPLE_FILE);
    if let Some(parent) = file.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(file, EXAMPLE_SOURCE)
}

fn ms(report: &HookReport) -> String {
    format!("{:.0} ms", report.duration_ms)
}

fn first_line(text: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let mut cut: String = line.chars().take(160).collect();
    if cut.len() < line.len() {
        cut.push('…');
    }
    cut
}

fn format_secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0}s")
    } else {
        format!("{s}s")
    }
}

/// Run `hook` once, through the real dispatcher, on a synthetic payload in a fresh scratch
/// directory, with `KA_HOOKS_DOCTOR=1`, and judge its answer.
fn exec_check(config: &Config, hook: &Hook, run_dir: &Path) -> Check {
    let scratch = match tempfile::Builder::new()
        .prefix("ka-hooks-doctor-")
        .tempdir()
    {
        Ok(dir) => dir,
        Err(e) => {
            return Check::warning(
                "exec",
                format!("not run: failed to create a scratch directory: {e}"),
                Some("check TMPDIR".into()),
            )
        }
    };
    let scratch_path = paths::absolute(scratch.path());
    if let Err(e) = prepare_scratch(&scratch_path) {
        return Check::warning(
            "exec",
            format!("not run: failed to fill the scratch directory: {e}"),
            None,
        );
    }
    let limit = hook.timeout.min(EXEC_TIMEOUT_CAP);
    let mut config = config.clone();
    // A synthetic run is not a decision: keep it out of the audit log.
    config.settings.log = None;
    config.project_root = Some(run_dir.to_path_buf());
    if let Some(h) = config.hooks.iter_mut().find(|h| h.name == hook.name) {
        h.timeout = limit;
        h.env.push((DOCTOR_ENV.to_owned(), "1".to_owned()));
    }
    let tool = synthetic_tool(hook);
    let payload = synthetic_payload(hook.event, tool.as_deref(), &scratch_path);
    let mut request = Request::new(hook.event, payload);
    request.only_hook = Some(hook.name.clone());
    request.cancel = crate::interrupt::token();
    let outcome = match config.dispatch(request) {
        Ok(outcome) => outcome,
        Err(e) => return Check::failing("exec", format!("not run: {e}"), None),
    };
    let Some(report) = outcome.hooks.first() else {
        return Check::failing("exec", "not run: the dispatcher ran no hook", None);
    };
    let on = match &tool {
        Some(tool) => format!("a synthetic {} call of `{tool}`", hook.event),
        None => format!("a synthetic {} payload", hook.event),
    };
    let held_open = report
        .error
        .as_deref()
        .filter(|e| e.contains("held open"))
        .map(str::to_owned);
    let mut check = match report.status {
        Status::Ok => match (&report.action.ignored, &report.action.action) {
            (Some(why), _) => Check::warning(
                "exec",
                format!(
                    "exit 0 in {} on {on}, but its stdout is not a valid action: {why}",
                    ms(report)
                ),
                Some("print nothing, or one JSON object of the action language".into()),
            ),
            (None, Some(action)) => Check::ok(
                "exec",
                format!(
                    "exit 0 in {} on {on}, with the action {}",
                    ms(report),
                    serde_json::to_string(action).unwrap_or_default()
                ),
            ),
            (None, None) => Check::ok("exec", format!("exit 0 in {} on {on}", ms(report))),
        },
        Status::Blocked if hook.event.is_pipeline() || hook.event == Event::PostToolUse => {
            let stderr = first_line(&report.stderr);
            let said = if stderr.is_empty() {
                String::new()
            } else {
                format!(": {stderr}")
            };
            Check::ok(
                "exec",
                format!(
                    "exit 2 in {}: vetoed {on} (a legitimate answer for a guard){said}",
                    ms(report)
                ),
            )
        }
        Status::Blocked => Check::warning(
            "exec",
            format!(
                "exit 2 in {} on {on}, which has no effect on {}",
                ms(report),
                hook.event
            ),
            Some(format!("exit 0 or 1: {} cannot be blocked", hook.event)),
        ),
        Status::Error | Status::Skipped | Status::Cancelled => {
            let mut what = report.error.clone().unwrap_or_else(|| "failed".into());
            match report.exit_code {
                Some(127) => what.push_str(": command not found"),
                Some(126) => what.push_str(": command not executable"),
                _ => {}
            }
            let _ = write!(what, " on {on}");
            let stderr = first_line(&report.stderr);
            if !stderr.is_empty() {
                let _ = write!(what, "; stderr: {stderr}");
            }
            if report.timed_out && limit < hook.timeout {
                Check::warning(
                    "exec",
                    format!(
                        "no answer within the doctor's {} cap on {on} (its own timeout is {}); \
                         it may only be slow",
                        format_secs(limit),
                        format_secs(hook.timeout)
                    ),
                    None,
                )
            } else if report.timed_out {
                Check::failing(
                    "exec",
                    what,
                    Some(format!(
                        "make it answer within {} on its stdin, or raise `timeout`",
                        format_secs(hook.timeout)
                    )),
                )
            } else {
                Check::failing("exec", what, None)
            }
        }
    };
    if report.stdout_truncated && check.state == State::Ok {
        check = Check::warning(
            "exec",
            format!("{}; its stdout was over 1 MiB and was cut", check.message),
            None,
        );
    }
    if let (Some(held), State::Ok) = (held_open, check.state) {
        check = Check::warning(
            "exec",
            format!("{}; {held}", check.message),
            Some("do not leave background processes holding stdout or stderr".into()),
        );
    }
    check
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(command: &str) -> Vec<(String, bool)> {
        let lookup = |name: &str| match name {
            "KA_PROJECT_DIR" => Some("/repo".to_owned()),
            "HOME" => Some("/home/me".to_owned()),
            _ => None,
        };
        first_command(command, &lookup)
            .unwrap_or_else(|e| panic!("{command}: {e}"))
            .into_iter()
            .map(|w| (w.text, w.dynamic))
            .collect()
    }

    fn texts(command: &str) -> Vec<String> {
        words(command).into_iter().map(|w| w.0).collect()
    }

    #[test]
    fn splits_the_first_simple_command_like_sh() {
        assert_eq!(
            texts("sh examples/hooks/x.sh"),
            ["sh", "examples/hooks/x.sh"]
        );
        assert_eq!(texts("a 'b c' \"d e\" f\\ g"), ["a", "b c", "d e", "f g"]);
        assert_eq!(texts("./x.sh && echo done"), ["./x.sh"]);
        assert_eq!(texts("x | y; z"), ["x"]);
        assert_eq!(
            texts("python3 x.py 2>/dev/null --flag"),
            ["python3", "x.py", "--flag"]
        );
        assert_eq!(texts("x # a comment"), ["x"]);
        assert_eq!(
            texts("FOO=1 BAR='a b' ./x.sh"),
            ["FOO=1", "BAR=a b", "./x.sh"]
        );
    }

    #[test]
    fn expands_known_variables_and_marks_the_rest_dynamic() {
        assert_eq!(
            words("\"$KA_PROJECT_DIR\"/hooks/x.sh ~/bin/y"),
            [
                ("/repo/hooks/x.sh".to_owned(), false),
                ("/home/me/bin/y".to_owned(), false)
            ]
        );
        assert_eq!(
            words("${KA_PROJECT_DIR}/x")[0],
            ("/repo/x".to_owned(), false)
        );
        assert!(words("$UNKNOWN/x")[0].1);
        assert!(words("$(pwd)/x.sh")[0].1);
        assert!(words("`pwd`/x.sh")[0].1);
        assert!(words("x*.sh")[0].1);
    }

    #[test]
    fn reports_what_it_cannot_split() {
        let none = |_: &str| None;
        assert!(first_command("( cd x && y )", &none).is_err());
        assert!(first_command("echo 'unterminated", &none).is_err());
    }

    #[test]
    fn synthetic_payloads_point_only_into_the_scratch_dir() {
        let scratch = Path::new("/tmp/scratch-x");
        for event in Event::ALL {
            let payload = synthetic_payload(event, Some("write"), scratch);
            let text = Value::Object(payload.clone()).to_string();
            assert_eq!(payload["event"], event.as_str());
            assert_eq!(payload["cwd"], "/tmp/scratch-x");
            for (i, _) in text.match_indices('/') {
                // Every absolute path starts with the scratch dir.
                let before = &text[..i];
                if before.ends_with('"') || before.ends_with(' ') {
                    assert!(text[i..].starts_with("/tmp/scratch-x"), "{text}");
                }
            }
        }
    }
}
