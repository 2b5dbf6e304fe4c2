//! The one word that names what the host does with an [`Outcome`]: `blocked`, `ask`, `allow`,
//! `result marked as error`, `halt`, `keep going`, `capped` or `proceed`. `ka-hooks run` prints it as its headline and
//! `ka-hooks test` matches `verdict = "..."` against it.

use crate::action::Decision;
use crate::config::OnError;
use crate::outcome::{HookReport, Outcome, Status};

/// Whether the hook said no through its JSON (`{"decision":"deny"}`, Claude's block forms).
pub fn denied_by_json(h: &HookReport) -> bool {
    h.status == Status::Ok
        && h.action.applied
        && h.action
            .action
            .as_ref()
            .is_some_and(|a| a.decision == Some(Decision::Deny) || a.block.is_some())
}

/// The verdict, with how a block came about: `blocked` (a hook exited 2), `blocked (deny)` (a
/// JSON deny), `blocked (cancelled)`, `blocked (a hook failed, on_error = block)`; else
/// `result marked as error`, `ask`, `allow`; then `halt` (a hook stopped the turn), `keep going`
/// (the agent continues), `capped` (a hook asked to keep going past `max_continuations`: the
/// agent stops); else `proceed`.
pub fn verdict(outcome: &Outcome) -> String {
    if outcome.blocked {
        let how = if outcome.hooks.iter().any(|h| h.status == Status::Blocked) {
            ""
        } else if outcome.hooks.iter().any(denied_by_json) {
            " (deny)"
        } else if outcome.cancelled.is_some() {
            " (cancelled)"
        } else if outcome
            .hooks
            .iter()
            .any(|h| h.status == Status::Error && h.on_error == OnError::Block)
        {
            " (a hook failed, on_error = block)"
        } else {
            ""
        };
        return format!("blocked{how}");
    }
    if outcome.mark_error {
        return "result marked as error".to_owned();
    }
    match outcome.decision {
        Some(Decision::Ask) => "ask".to_owned(),
        Some(Decision::Allow) => "allow".to_owned(),
        _ if outcome.halt.is_some() => "halt".to_owned(),
        _ if outcome.keep_going.is_some() => "keep going".to_owned(),
        _ if outcome.capped => "capped".to_owned(),
        _ => "proceed".to_owned(),
    }
}

/// Whether `verdict` (as [`verdict`] spells it) is what `expected` names: `blocked` matches
/// every kind of block, `mark_error` is accepted for `result marked as error`.
pub fn matches(verdict: &str, expected: &str) -> bool {
    match expected {
        "blocked" => verdict.starts_with("blocked"),
        "mark_error" => verdict == "result marked as error",
        "keep_going" => verdict == "keep going",
        _ => verdict == expected,
    }
}

/// The verdicts `ka-hooks test` accepts in `verdict = "..."`.
pub const NAMES: [&str; 10] = [
    "blocked",
    "blocked (deny)",
    "ask",
    "allow",
    "proceed",
    "mark_error",
    "keep going",
    "keep_going",
    "capped",
    "halt",
];
