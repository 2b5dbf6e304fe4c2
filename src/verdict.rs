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
/// agent stops); else `proceed`. Derived from [`Outcome::next`].
pub fn verdict(outcome: &Outcome) -> String {
    use crate::next::{Next, Other, Permission, Prompt, Stop, ToolResult};
    match outcome.next() {
        Next::ToolCall(Permission::Block { .. } | Permission::Halt { .. }, _)
        | Next::Prompt(Prompt::Block { .. } | Prompt::Halt { .. }, _) => {
            format!("blocked{}", how_blocked(outcome))
        }
        Next::ToolCall(Permission::Ask { .. }, _) => "ask".to_owned(),
        Next::ToolCall(
            Permission::Run {
                pre_approved: true, ..
            },
            _,
        ) => "allow".to_owned(),
        Next::ToolResult(ToolResult::Block { .. }, _) => "result marked as error".to_owned(),
        Next::ToolResult(ToolResult::Halt { .. }, _) if outcome.mark_error => {
            "result marked as error".to_owned()
        }
        Next::ToolResult(ToolResult::Halt { .. }, _)
        | Next::Stop(Stop::Halt { .. }, _)
        | Next::Other(Other::Halt { .. }, _) => "halt".to_owned(),
        Next::Stop(Stop::KeepGoing { .. }, _) => "keep going".to_owned(),
        Next::Stop(Stop::End { .. }, _) if outcome.capped => "capped".to_owned(),
        Next::ToolCall(Permission::Run { .. }, _)
        | Next::Prompt(Prompt::Submit { .. }, _)
        | Next::ToolResult(..)
        | Next::Stop(Stop::End { .. }, _)
        | Next::Other(Other::Continue { .. }, _) => "proceed".to_owned(),
    }
}

/// How a block came about, for [`verdict`].
fn how_blocked(outcome: &Outcome) -> &'static str {
    if outcome.hooks.iter().any(|h| h.status == Status::Blocked) {
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
    }
}

/// Whether `verdict` (as [`verdict`] spells it) is what `expected` names: `blocked` matches
/// every kind of block, `mark_error` is accepted for `result marked as error`.
#[cfg(feature = "cli")]
pub fn matches(verdict: &str, expected: &str) -> bool {
    match expected {
        "blocked" => verdict.starts_with("blocked"),
        "mark_error" => verdict == "result marked as error",
        "keep_going" => verdict == "keep going",
        _ => verdict == expected,
    }
}

/// The verdicts `ka-hooks test` accepts in `verdict = "..."`.
#[cfg(feature = "cli")]
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
