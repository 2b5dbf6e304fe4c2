//! What each agent makes of a hook's plain output and of exit 2 where ka's own contract reads
//! nothing (plain stdout as context, text shown to the user, exit 2 on advisory events): the
//! adapter reproduces the agent's rule, so a hook written for the agent behaves the same through
//! ka.

use serde_json::Value;

use crate::event::Event;
use crate::outcome::{HookReport, Status};

/// Claude Code and Codex read a hook's plain (non-JSON) stdout on SessionStart and
/// UserPromptSubmit as context for the model. Natively, ka reads only a JSON object.
pub const fn claude_stdout_is_context(event: Event) -> bool {
    matches!(event, Event::SessionStart | Event::UserPromptSubmit)
}

/// What Gemini CLI shows the user of the hooks' plain output, in hook order (each cut to what
/// the report kept: 4 KiB).
pub fn gemini_user_texts(hooks: &[HookReport]) -> Vec<String> {
    hooks
        .iter()
        .filter(|h| h.status == Status::Ok && h.exit_code == Some(0))
        .filter_map(|h| {
            let text = match h.stdout.trim() {
                "" => h.stderr.trim(),
                stdout => stdout,
            };
            let is_json = text.is_empty()
                || matches!(
                    serde_json::from_str::<Value>(text),
                    Ok(Value::Object(_) | Value::String(_))
                );
            (!is_json).then(|| format!("hook `{}`: {text}", h.name))
        })
        .collect()
}

/// What Claude Code shows the user of the hooks' exit-2 stderr on `event`.
pub fn claude_user_texts(event: Event, hooks: &[HookReport]) -> Vec<String> {
    let shows_stderr = matches!(
        event,
        Event::SessionStart | Event::SessionEnd | Event::Notification | Event::SubagentStart
    );
    if !shows_stderr {
        return Vec::new();
    }
    exit_two_stderr(hooks)
        .map(|(name, text)| format!("hook `{name}`: {text}"))
        .collect()
}

/// Claude Code's PreCompact: a hook's exit 2 blocks the compaction; the reason (the hooks'
/// stderr), or `None` when no hook exited 2.
pub fn claude_compaction_blocked(event: Event, hooks: &[HookReport]) -> Option<String> {
    if event != Event::PreCompact {
        return None;
    }
    let blockers: Vec<&HookReport> = hooks
        .iter()
        .filter(|h| h.status == Status::Blocked)
        .collect();
    if blockers.is_empty() {
        return None;
    }
    let reasons: Vec<String> = blockers
        .iter()
        .map(|h| match h.stderr.trim() {
            "" => format!("hook `{}` blocked the compaction", h.name),
            text => text.to_owned(),
        })
        .collect();
    Some(reasons.join("\n"))
}

/// `(hook name, stderr)` of the hooks that exited 2 and said something.
fn exit_two_stderr(hooks: &[HookReport]) -> impl Iterator<Item = (&str, &str)> {
    hooks
        .iter()
        .filter(|h| h.status == Status::Blocked)
        .map(|h| (h.name.as_str(), h.stderr.trim()))
        .filter(|(_, text)| !text.is_empty())
}
