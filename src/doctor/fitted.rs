//! The synthetic call `doctor --exec` sends a hook of a tool event: one that the hook's own
//! `tool`, `paths` and `if` select, so it judges a call it would really see (a hook filtered to
//! `**/*.md` gets a Markdown file, a guard on `Bash(rm:*)` an `rm`). When no such call can be
//! made, the hook is not run and the check says why.

use std::collections::BTreeSet;

use super::exec::{payload_of, shell_like};
use super::*;

/// A synthetic call of a hook: its tool, its payload, and the file the payload names (relative
/// to the scratch directory, which must hold it).
pub(super) struct Fitted {
    pub(super) tool: Option<String>,
    pub(super) payload: Map<String, Value>,
    pub(super) file: String,
}

/// A call `hook`'s filters select, with every path inside `scratch`; `Err` says why none could
/// be made.
pub(super) fn fitted_call(hook: &Hook, scratch: &Path) -> Result<Fitted, String> {
    let first = synthetic_tool(hook);
    if !hook.event.is_tool_event() || (hook.paths.is_none() && hook.rule.is_none()) {
        let payload = synthetic_payload(hook.event, first.as_deref(), scratch);
        return Ok(Fitted {
            tool: first,
            payload,
            file: EXAMPLE_FILE.to_owned(),
        });
    }
    // Judged as if the scratch directory were the hook's root.
    let mut probe = hook.clone();
    probe.root = None;
    for tool in tools(hook, first) {
        for file in files(hook) {
            for command in commands(hook, &tool, &scratch.join(&file)) {
                let payload = payload_of(hook.event, &tool, scratch, &file, command.as_deref());
                let arguments = payload.get("arguments").and_then(Value::as_object);
                if probe.matches_call(Some(&tool), arguments, scratch) {
                    return Ok(Fitted {
                        tool: Some(tool),
                        payload,
                        file,
                    });
                }
            }
        }
    }
    let mut filters = Vec::new();
    if let Some(paths) = &hook.paths {
        filters.push(format!("paths = {:?}", paths.patterns));
    }
    if let Some(rule) = &hook.rule {
        filters.push(format!("if = {:?}", rule.source));
    }
    Err(format!(
        "no synthetic call matches its own filters ({}), so it was not run",
        crate::terminal::escape(&filters.join(", "))
    ))
}

/// The tools to try: the one [`synthetic_tool`] picks, the tool its `if` names, then common ones.
fn tools(hook: &Hook, first: Option<String>) -> Vec<String> {
    let named = hook
        .rule
        .as_ref()
        .and_then(|r| r.source.split('(').next())
        .map(|t| t.trim().to_owned());
    let mut all: Vec<String> = first.into_iter().chain(named).collect();
    for t in [
        "bash", "write", "edit", "read", "Bash", "Write", "Edit", "Read",
    ] {
        all.push(t.to_owned());
    }
    let mut seen = BTreeSet::new();
    all.retain(|t| !t.is_empty() && hook.matches_tool(Some(t)) && seen.insert(t.clone()));
    all
}

/// The files to try, relative to the scratch directory: one each glob of `paths` and the
/// pattern of `if` would match, then the default [`EXAMPLE_FILE`].
fn files(hook: &Hook) -> Vec<String> {
    let globs = hook
        .paths
        .iter()
        .flat_map(|p| p.patterns.iter())
        .filter(|p| !p.starts_with('!'))
        .cloned();
    let rule = hook.rule.as_ref().and_then(|r| inner(&r.source));
    let mut all: Vec<String> = globs.chain(rule).filter_map(|g| concrete(&g)).collect();
    all.push(EXAMPLE_FILE.to_owned());
    let mut seen = BTreeSet::new();
    all.retain(|f| seen.insert(f.clone()));
    all
}

/// The commands to try on a shell tool (`None` elsewhere): what the `if` pattern spells out
/// (`rm:*` → `rm FILE`, `git push *` → `git push example`), then `cat FILE`.
fn commands(hook: &Hook, tool: &str, file: &Path) -> Vec<Option<String>> {
    if !shell_like(tool) {
        return vec![None];
    }
    let quoted = quote(file);
    let mut all = Vec::new();
    if let Some(pattern) = hook.rule.as_ref().and_then(|r| inner(&r.source)) {
        match pattern.strip_suffix(":*") {
            Some(prefix) => all.push(Some(format!("{prefix} {quoted}"))),
            None => {
                all.push(Some(pattern.replace('*', &quoted)));
                all.push(Some(pattern.replace('*', "example")));
            }
        }
    }
    all.push(Some(format!("cat {quoted}")));
    all
}

/// The pattern inside `Tool(pattern)`, if any.
fn inner(rule: &str) -> Option<String> {
    let open = rule.find('(')?;
    let inner = rule[open + 1..].trim().strip_suffix(')')?;
    (!inner.is_empty()).then(|| inner.to_owned())
}

/// A relative file name `glob` matches (`**/*.md` → `example.md`, `docs/{a,b}/*.txt` →
/// `docs/a/example.txt`), or `None` for what cannot be a file under the scratch directory.
pub(super) fn concrete(glob: &str) -> Option<String> {
    let glob = glob.trim_start_matches("./");
    if glob.starts_with(['/', '~']) || glob.contains(':') || glob.contains(' ') {
        return None;
    }
    let mut out = String::new();
    let mut chars = glob.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '*' if chars.peek() == Some(&'*') => {
                chars.next();
                if chars.peek() == Some(&'/') {
                    chars.next();
                } else {
                    out.push_str("example");
                }
            }
            '*' => out.push_str("example"),
            '?' => out.push('x'),
            '{' => {
                let group: String = chars.by_ref().take_while(|&c| c != '}').collect();
                out.push_str(group.split(',').next().unwrap_or(""));
            }
            '[' => {
                let class: String = chars.by_ref().take_while(|&c| c != ']').collect();
                let first = class.trim_start_matches(['!', '^']).chars().next()?;
                out.push(first);
            }
            '\\' => out.push(chars.next()?),
            c => out.push(c),
        }
    }
    if out.is_empty() || out.ends_with('/') {
        out.push_str("example.txt");
    }
    let escapes = Path::new(&out)
        .components()
        .any(|c| !matches!(c, std::path::Component::Normal(_)));
    (!escapes).then_some(out)
}
