//! The review's text for one file: a diff against the last trusted version, or the whole
//! inventory grouped per hook (its entry, what it runs, the scripts it covers, what trust cannot
//! cover). What several hooks share is said once after them. Everything shown from the file is
//! escaped where it is made ([`crate::terminal::escape`]); the caller wraps the text, except the
//! lines of a diff, marked [`crate::layout::KEEP`].

use std::fmt::Write as _;
use std::path::Path;

use crate::config::scripts::{Coverage, HookCoverage};
use crate::config::{describe_entries, Reviewed};
use crate::terminal::escape;
use crate::trust;

/// The review of one file: a diff against the last trusted version, or the whole inventory,
/// grouped per hook: its entry, what it runs, the scripts it covers and what trust cannot cover.
/// `changes` are its overrides of hooks of other files (see [`config::ReviewBase::changes`]).
pub(super) fn describe(
    out: &mut String,
    f: &Reviewed,
    text: &str,
    changes: &[String],
    coverage: &Coverage,
    data_dir: &Path,
) {
    let now = describe_entries(f.layer, &f.path, text, &mut Vec::new());
    let before_text = f
        .record
        .as_ref()
        .and_then(|r| trust::reviewed(data_dir, &r.sha256))
        .and_then(|b| String::from_utf8(b).ok());
    let mut scripts = Scripts {
        f,
        coverage,
        data_dir,
        diffed: Vec::new(),
    };
    match &before_text {
        Some(before_text) => {
            let before = describe_entries(f.layer, &f.path, before_text, &mut Vec::new());
            let what = f.what.as_deref().map(escape).unwrap_or_default();
            let _ = writeln!(
                out,
                "{}: changed since you trusted it ({what}); hooks:",
                short_label(f)
            );
            diff_lines(out, &flat(&before), &flat(&now));
            for h in &coverage.hooks {
                let _ = writeln!(out, "  {}:", h.hook);
                scripts.hook(out, h, &[]);
            }
        }
        None => inventory(out, f, &now, &mut scripts),
    }
    for line in changes {
        let _ = writeln!(out, "  {line}");
    }
    scripts.rest(out);
    // Whether the `sandbox=` shown above holds on this system.
    let _ = writeln!(
        out,
        "  sandbox here: {}",
        crate::sandbox::probe().describe()
    );
}

/// The first review of a file: each hook with what it runs and covers, then what they share.
fn inventory(out: &mut String, f: &Reviewed, entries: &[String], scripts: &mut Scripts<'_>) {
    let _ = writeln!(out, "{} defines:", short_label(f));
    if entries.is_empty() {
        let _ = writeln!(out, "  (no hooks)");
    }
    let hooks = entries.iter().filter(|e| e.starts_with("hooks[")).count();
    let sandbox = shared_sandbox(entries);
    let shared = shared_notes(scripts.coverage);
    for entry in entries {
        // `hooks[N] (line L) name=… event=… sandbox=…`, then `runs: …` on a line of its own.
        let mut lines = entry.lines();
        let mut head = lines.next().unwrap_or_default();
        if !head.starts_with("hooks[") {
            let _ = writeln!(out, "  {head}");
            continue;
        }
        if let Some(sandbox) = &sandbox {
            head = head.strip_suffix(sandbox.as_str()).unwrap_or(head);
        }
        let _ = writeln!(out, "  - {head}");
        for line in lines {
            let _ = writeln!(out, "    {}", line.trim_start());
        }
        let index = head.split(' ').next().unwrap_or_default();
        if let Some(h) = scripts
            .coverage
            .hooks
            .iter()
            .find(|h| h.hook.split(' ').next() == Some(index))
        {
            scripts.hook(out, h, &shared);
        }
    }
    if let Some(sandbox) = &sandbox {
        let _ = writeln!(out, "  each of the {hooks} hooks:{sandbox}");
    }
    for (note, hooks) in &shared {
        let _ = writeln!(out, "  not covered, for {}: {note}", hooks.join(", "));
    }
}

/// The ` sandbox=…` every hook entry ends with, when there are two or more and it is the same.
fn shared_sandbox(entries: &[String]) -> Option<String> {
    let mut heads = entries
        .iter()
        .filter(|e| e.starts_with("hooks["))
        .map(|e| e.lines().next().unwrap_or_default());
    let first = heads.next()?;
    let suffix = &first[first.rfind(" sandbox=")?..];
    let mut count = 1;
    for head in heads {
        if !head.ends_with(suffix) || head[..head.len() - suffix.len()].contains(" sandbox=") {
            return None;
        }
        count += 1;
    }
    (count > 1).then(|| suffix.to_owned())
}

/// The notes of what trust cannot cover that two hooks or more have, each with those hooks
/// (`hooks[0]`, ...), in the order first met.
fn shared_notes(coverage: &Coverage) -> Vec<(String, Vec<String>)> {
    let mut notes: Vec<(String, Vec<String>)> = Vec::new();
    for h in &coverage.hooks {
        let index = h.hook.split(' ').next().unwrap_or_default().to_owned();
        for u in &h.uncovered {
            match notes.iter_mut().find(|(n, _)| n == u) {
                Some((_, hooks)) => hooks.push(index.clone()),
                None => notes.push((u.clone(), vec![index.clone()])),
            }
        }
    }
    notes.retain(|(_, hooks)| hooks.len() > 1);
    notes
}

/// The entries as the diff shows them: an entry's further lines (`runs: …`) indented by two.
fn flat(entries: &[String]) -> String {
    let lines: Vec<String> = entries
        .iter()
        .flat_map(|e| {
            let mut lines = e.lines();
            let head = lines.next().unwrap_or_default().to_owned();
            std::iter::once(head).chain(lines.map(|l| format!("  {}", l.trim_start())))
        })
        .collect();
    lines.join("\n")
}

/// `project  .ka/ka.toml in /path/to/root`: the file relative to its project's root.
pub(super) fn short_label(f: &Reviewed) -> String {
    format!(
        "{:8} {} in {}",
        f.layer.as_str(),
        escape(f.rel),
        crate::terminal::escape_path(&f.root)
    )
}

/// The scripts of one file under review, shown with the hooks that run them.
struct Scripts<'a> {
    f: &'a Reviewed,
    coverage: &'a Coverage,
    data_dir: &'a Path,
    /// The changed scripts whose diff is shown already (a second hook running one says so).
    diffed: Vec<&'a str>,
}

impl<'a> Scripts<'a> {
    /// What hook `h` covers, each script with its state, and what trust cannot cover in it.
    fn hook(&mut self, out: &mut String, h: &'a HookCoverage, shared: &[(String, Vec<String>)]) {
        if h.covers.is_empty() {
            let _ = writeln!(out, "    covers no file of the project");
        }
        for path in &h.covers {
            self.script(out, path);
        }
        // The notes are escaped where they are made; the shared ones are said once, after.
        for u in h
            .uncovered
            .iter()
            .filter(|u| !shared.iter().any(|(n, _)| n == *u))
        {
            let _ = writeln!(out, "    not covered: {u}");
        }
    }

    /// `covers PATH: STATE`, and the diff of a changed script the first time.
    fn script(&mut self, out: &mut String, path: &'a str) {
        let shown = escape(path);
        let Some(s) = self
            .coverage
            .scripts
            .iter()
            .find(|s| s.path == path && s.sha256.is_some())
        else {
            let _ = writeln!(out, "    covers {shown}");
            return;
        };
        let old = self
            .f
            .record
            .as_ref()
            .and_then(|r| r.scripts.iter().find(|o| o.path == s.path));
        match old {
            Some(o) if o.sha256 == s.sha256 => {
                let _ = writeln!(out, "    covers {shown}: unchanged");
            }
            Some(_) if self.diffed.contains(&path) => {
                let _ = writeln!(out, "    covers {shown}: CHANGED (the diff is above)");
            }
            Some(o) => {
                let _ = writeln!(out, "    covers {shown}: CHANGED");
                self.diffed.push(path);
                let before = o
                    .sha256
                    .as_deref()
                    .and_then(|sha| trust::reviewed(self.data_dir, sha))
                    .map(|b| String::from_utf8_lossy(&b).into_owned())
                    .unwrap_or_default();
                let after = std::fs::read(self.f.root.join(&s.path))
                    .map(|b| String::from_utf8_lossy(&b).into_owned())
                    .unwrap_or_default();
                diff_lines(out, &before, &after);
            }
            None => {
                let _ = writeln!(out, "    covers {shown}: new (read it before trusting)");
            }
        }
    }

    /// The covered scripts no hook listed above runs (none today; shown rather than hidden).
    fn rest(&mut self, out: &mut String) {
        let listed: Vec<&str> = self
            .coverage
            .hooks
            .iter()
            .flat_map(|h| h.covers.iter().map(String::as_str))
            .collect();
        let mut header = false;
        for s in self.coverage.scripts.iter().filter(|s| s.sha256.is_some()) {
            if !listed.contains(&s.path.as_str()) {
                if !std::mem::replace(&mut header, true) {
                    let _ = writeln!(out, "  scripts no hook above runs:");
                }
                self.script(out, &s.path);
            }
        }
    }
}

/// A unified diff of two texts, escaped line by line.
fn diff_lines(out: &mut String, before: &str, after: &str) {
    let diff = similar::TextDiff::from_lines(before, after);
    for change in diff.iter_all_changes() {
        let sign = match change.tag() {
            similar::ChangeTag::Delete => "-",
            similar::ChangeTag::Insert => "+",
            similar::ChangeTag::Equal => " ",
        };
        let line = change.value().trim_end_matches('\n');
        let _ = writeln!(out, "{}    {sign} {}", crate::layout::KEEP, escape(line));
    }
}
