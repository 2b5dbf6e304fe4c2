//! Per agent the project uses: can the model's shell reach ka's state (the agent's sandbox, see
//! [`crate::adapter::shell_sandbox`]), and did a setting switch ka-hooks off (`disableAllHooks`, the
//! ka-hooks entry removed)?

use crate::adapter::shell_sandbox::{self as sandbox, Protection};
use crate::agent::Agent;
use crate::doctor::*;

/// One entry per agent that runs ka-hooks here, or whose settings could: Claude Code when a
/// settings file names it or switches hooks off, the others when their hook file runs it.
pub(crate) fn agent_entries(opts: &LoadOptions, root: &Path) -> Vec<Entry> {
    let state = sandbox::ka_state(&opts.paths);
    let home = paths::home_dir();
    let mut entries = Vec::new();
    if let Some(entry) = claude_entry(root, &state, home.as_deref()) {
        entries.push(entry);
    }
    let codex_home = std::env::var_os("CODEX_HOME")
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".codex")));
    let codex_files: Vec<PathBuf> = codex_home
        .iter()
        .map(|h| h.join("hooks.json"))
        .chain([root.join(".codex/hooks.json")])
        .collect();
    if sandbox::names_adapter(&codex_files, Agent::Codex) {
        let config = codex_home.and_then(|h| std::fs::read_to_string(h.join("config.toml")).ok());
        entries.push(agent_entry(
            Agent::Codex,
            vec![protection_check(sandbox::codex_protection(
                config.as_deref(),
                &state,
            ))],
        ));
    }
    let gemini_files: Vec<PathBuf> = home
        .iter()
        .map(|h| h.join(".gemini/settings.json"))
        .chain([root.join(".gemini/settings.json")])
        .collect();
    if sandbox::names_adapter(&gemini_files, Agent::Gemini) {
        let settings = sandbox::read_json_files(&gemini_files);
        entries.push(agent_entry(
            Agent::Gemini,
            vec![protection_check(sandbox::gemini_protection(&settings))],
        ));
    }
    for (agent, files) in [
        (Agent::Copilot, hook_files(&root.join(".github/hooks"))),
        (Agent::Cursor, vec![root.join(".cursor/hooks.json")]),
        (Agent::Antigravity, vec![root.join(".agents/hooks.json")]),
    ] {
        if sandbox::names_adapter(&files, agent) {
            let why = sandbox::no_sandbox(agent).unwrap_or_default();
            entries.push(agent_entry(agent, vec![Check::warning("shell", why, None)]));
        }
    }
    entries
}

fn claude_entry(root: &Path, state: &[PathBuf], home: Option<&Path>) -> Option<Entry> {
    let files = sandbox::claude_files(root);
    let settings = sandbox::read_json_files(&files);
    let registered: Vec<&PathBuf> = settings
        .iter()
        .filter(|(_, v)| sandbox::runs_claude_adapter(v))
        .map(|(f, _)| f)
        .collect();
    let off: Vec<&PathBuf> = settings
        .iter()
        .filter(|(_, v)| v.get("disableAllHooks") == Some(&Value::Bool(true)))
        .map(|(f, _)| f)
        .collect();
    let uses_claude = root.join(".claude").is_dir();
    if registered.is_empty() && off.is_empty() && !uses_claude {
        return None;
    }
    let shown = |files: &[&PathBuf]| {
        files
            .iter()
            .map(|f| crate::terminal::escape_path(f))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut checks = Vec::new();
    if !off.is_empty() {
        checks.push(Check::failing(
            "hooks",
            format!(
                "`disableAllHooks` is true in {}: Claude Code runs no hook, so ka-hooks is never \
                 called and no guard runs",
                shown(&off)
            ),
            Some(format!("remove `disableAllHooks` from {}", shown(&off))),
        ));
    }
    if registered.is_empty() {
        checks.push(Check::warning(
            "hooks",
            "no Claude Code settings file runs `ka-hooks claude` (its entry was removed, or it \
             was never installed): ka's guards do not run in Claude Code",
            Some("ka-hooks install claude --write".into()),
        ));
    } else if off.is_empty() {
        checks.push(Check::ok(
            "hooks",
            format!("`ka-hooks claude` runs from {}", shown(&registered)),
        ));
    }
    checks.push(protection_check(sandbox::claude_protection(
        &settings, state, home,
    )));
    Some(agent_entry(Agent::Claude, checks))
}

/// The `*.json` files of `dir`, in name order (none when it cannot be read).
pub(super) fn hook_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "json"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

fn protection_check(protection: Protection) -> Check {
    match protection {
        Protection::Protected => Check::ok(
            "shell",
            "protected: the agent's sandbox keeps ka's config dir, data dir and trust store out \
             of the model's shell",
        ),
        Protection::Exposed { why, fix } => Check::warning(
            "shell",
            format!(
                "exposed: the model's shell can write ka's state ({why}); ka's refusals inside a \
                 tool call are then defence in depth only"
            ),
            Some(fix),
        ),
    }
}

fn agent_entry(agent: Agent, checks: Vec<Check>) -> Entry {
    Entry {
        kind: Kind::Agent,
        name: agent.display().to_owned(),
        state: State::Ok,
        event: None,
        filter: None,
        command: None,
        layer: None,
        file: None,
        line: None,
        runs: None,
        checks,
    }
    .finish()
}
