//! The doctor's findings: a state per check and per entry, and the report as text.

use super::*;

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
    pub(crate) fn ok(check: &'static str, message: impl Into<String>) -> Check {
        Check {
            check,
            state: State::Ok,
            message: message.into(),
            fix: None,
        }
    }

    pub(crate) fn warning(
        check: &'static str,
        message: impl Into<String>,
        fix: Option<String>,
    ) -> Check {
        Check {
            check,
            state: State::Warning,
            message: message.into(),
            fix,
        }
    }

    pub(crate) fn failing(
        check: &'static str,
        message: impl Into<String>,
        fix: Option<String>,
    ) -> Check {
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
    /// An agent that runs `ka-hooks <agent>`: its own state (registered, approved, off), and
    /// whether its shell can reach ka's state.
    Agent,
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
    pub(crate) fn finish(mut self) -> Entry {
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
            e.write_text(&mut w, color);
        }
        self.write_summary(&mut w);
        w
    }

    /// The closing lines: how many entries of each kind were checked and how they fared.
    fn write_summary(&self, w: &mut String) {
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
        match count(Kind::Agent) {
            0 => {}
            n => checked.push(format!("{n} agent(s)")),
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
                "static checks only: `ka-hooks doctor --exec` also runs each hook once, in the \
                 project root, on a synthetic payload whose paths point into a scratch directory"
            );
        }
    }
}

impl Entry {
    /// The entry's title, its file and command, then each check with its fix.
    fn write_text(&self, w: &mut String, color: bool) {
        let title = match self.kind {
            Kind::Hook => {
                let mut what = self.event.unwrap_or("").to_owned();
                if let Some(filter) = &self.filter {
                    let _ = write!(what, ", {filter}");
                }
                format!("hook {} ({what})", self.name)
            }
            Kind::Layer => format!(
                "{} layer {}",
                self.layer.map_or("", Layer::as_str),
                self.name
            ),
            Kind::Config => format!("configuration error in {}", self.name),
            Kind::Agent => format!("agent {}", self.name),
        };
        let _ = writeln!(w, "{} {title}", paint(self.state, color));
        if let (Kind::Hook, Some(layer), Some(file)) = (self.kind, self.layer, &self.file) {
            let line = self.line.map(|l| format!(":{l}")).unwrap_or_default();
            let _ = writeln!(w, "         {layer} {}{line}", file.display());
        }
        if let Some(command) = &self.command {
            let _ = writeln!(w, "         command: {command}");
        }
        for c in &self.checks {
            let message = c.message.replace('\n', "\n                           ");
            let _ = writeln!(
                w,
                "         {} {:8} {message}",
                paint(c.state, color),
                c.check
            );
            if let Some(fix) = &c.fix {
                let _ = writeln!(w, "                           fix: {fix}");
            }
        }
    }
}

/// A state's word padded to 8 columns, painted when `color`.
fn paint(state: State, color: bool) -> String {
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
}
