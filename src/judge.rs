//! Judging what one hook did: its exit and output read as a block, an action, a failure (and what
//! `on_error` makes of it) or what a report-only guard would have done, folded into an
//! [`Outcome`](crate::outcome::Outcome) and the hook's report. Below both the dispatch and the
//! background runner of async hooks, which judge the same way.

use crate::action::{self, Decision, InputPatch};
use crate::config::{Hook, OnError};
use crate::event::{Event, ExitTwo};
use crate::outcome::{ActionReport, HookReport, Outcome, Status, STDERR_EXCERPT};
use crate::process::{self, Termination};

/// A failed guard never pre-approves: when a hook of a tool call failed (error, timeout, cannot
/// start, voided or cut output), whatever its `on_error`, an `allow` from the others is dropped,
/// and the call goes to the agent's normal permission flow. The user hears which guard failed.
/// (An `allow` skips the permission prompt; a guard that could not say no must not let it.)
pub(crate) fn no_pre_approval_past_a_failed_guard(outcome: &mut Outcome) {
    if outcome.event.acts_as() != Event::PreToolUse
        || outcome.blocked
        || outcome.decision != Some(Decision::Allow)
    {
        return;
    }
    let mut failed: Vec<String> = Vec::new();
    for h in outcome.hooks.iter().filter(|h| h.status == Status::Error) {
        // A guard judged again after a rewrite has a report per run: name it once.
        let shown = format!("`{}`", h.name);
        if !failed.contains(&shown) {
            failed.push(shown);
        }
    }
    if failed.is_empty() {
        return;
    }
    outcome.decision = None;
    outcome.reason = None;
    outcome.messages.push(format!(
        "a ka hook pre-approved this call, but guard {} failed, so it is not pre-approved: \
         the normal permission rules decide",
        failed.join(", ")
    ));
}

/// Judge one finished run of `hook` on an event that cannot be vetoed, into `outcome` (an async
/// hook's run, in the background).
pub(crate) fn judge_observational(
    hook: &Hook,
    finished: process::Finished,
    plain_context: bool,
    outcome: &mut Outcome,
) {
    combine_observational(hook, finished, plain_context, outcome);
}

/// Every other event: results combined in declared order.
pub(crate) fn combine_observational(
    hook: &Hook,
    finished: process::Finished,
    plain_context: bool,
    outcome: &mut Outcome,
) {
    let mut report = report(hook, &finished);
    if !hook.enforce {
        return would_have(hook, &finished, &mut report, outcome);
    }
    match report.status {
        Status::Ok => {
            if let Some(action) = read_action(hook, &finished, plain_context, &mut report, outcome)
            {
                apply_common(&action, outcome);
                if let Some(feedback) = action.feedback {
                    append_feedback(outcome, feedback);
                }
                if action.mark_error {
                    outcome.mark_error = true;
                }
                if let Some(text) = &action.keep_going {
                    append_line(&mut outcome.keep_going, text);
                }
            }
        }
        Status::Blocked => exit_two_observed(hook, &finished.stderr, outcome),
        Status::Error => apply_failure(hook, &failure_text(hook, &finished), outcome),
        Status::Skipped | Status::Cancelled => {}
    }
    outcome.hooks.push(report);
}

/// What exit 2 means on an event that cannot be blocked.
pub(crate) fn exit_two_observed(hook: &Hook, stderr: &str, outcome: &mut Outcome) {
    match outcome.event.exit_two() {
        ExitTwo::MarkError | ExitTwo::Feedback => {
            outcome.mark_error = true;
            let text = stderr.trim();
            if !text.is_empty() {
                append_feedback(outcome, text.to_owned());
            }
        }
        // Claude Code: exit 2 on Stop "prevents stopping" and stderr tells Claude how to go on
        // (hooks reference, "Exit code 2 behavior"). The seed reserved stop's exit 2 for this.
        ExitTwo::KeepGoing => {
            let text = match stderr.trim() {
                "" => format!("hook `{}` asked you to keep going", hook.name),
                text => text.to_owned(),
            };
            append_line(&mut outcome.keep_going, &text);
        }
        _ => outcome.diagnostics.push(format!(
            "hook `{}` exited 2 on {}: recorded, no effect ({} cannot be blocked)",
            hook.name, outcome.event, outcome.event
        )),
    }
}

/// Appends `text` to an optional `\n`-joined text.
pub(crate) fn append_line(target: &mut Option<String>, text: &str) {
    match target {
        Some(existing) => {
            existing.push('\n');
            existing.push_str(text);
        }
        None => *target = Some(text.to_owned()),
    }
}

pub(crate) fn append_feedback(outcome: &mut Outcome, text: String) {
    match &mut outcome.feedback {
        Some(existing) => {
            existing.push('\n');
            existing.push_str(&text);
        }
        None => outcome.feedback = Some(text),
    }
}

/// `mode`, `note`, the user message, `context` and `halt`.
pub(crate) fn apply_common(action: &action::Action, outcome: &mut Outcome) {
    outcome.deferred |= action.deferred;
    for rule in action.permission_updates.iter().flatten() {
        if !outcome.permission_updates.contains(rule) {
            outcome.permission_updates.push(rule.clone());
        }
    }
    if let Some(mode) = &action.mode {
        outcome.mode = Some(mode.clone());
    }
    if let Some(note) = &action.note {
        outcome.notes.push(note.clone());
    }
    if let Some(message) = &action.message {
        outcome.messages.push(message.clone());
    }
    if let Some(context) = &action.context {
        append_line(&mut outcome.context, context);
    }
    if let Some(reason) = &action.halt {
        match &mut outcome.halt {
            Some(existing) if !reason.is_empty() => {
                if !existing.is_empty() {
                    existing.push_str("; ");
                }
                existing.push_str(reason);
            }
            Some(_) => {}
            None => outcome.halt = Some(reason.clone()),
        }
    }
}

/// Combine deny > ask > allow; a deny blocks.
pub(crate) fn apply_decision(
    hook: &Hook,
    decision: Decision,
    reason: Option<String>,
    outcome: &mut Outcome,
) {
    match decision {
        Decision::Deny => block(
            outcome,
            reason.unwrap_or_else(|| format!("denied by hook {}", hook.name)),
        ),
        Decision::Ask => {
            if outcome.decision != Some(Decision::Ask) {
                outcome.reason =
                    Some(reason.unwrap_or_else(|| format!("hook {} asks for a human", hook.name)));
            }
            outcome.decision = Some(Decision::Ask);
        }
        Decision::Allow => {
            if outcome.decision.is_none() {
                outcome.decision = Some(Decision::Allow);
                outcome.reason = reason;
            }
        }
    }
}

pub(crate) fn block(outcome: &mut Outcome, reason: String) {
    outcome.blocked = true;
    outcome.decision = None;
    outcome.reason = Some(reason);
}

pub(crate) fn non_empty(reason: String, hook: &Hook) -> String {
    if reason.trim().is_empty() {
        format!("blocked by hook {}", hook.name)
    } else {
        reason
    }
}

pub(crate) fn block_reason(hook: &Hook, stderr: &str) -> String {
    non_empty(stderr.trim().to_owned(), hook)
}

/// What went wrong with a hook that ended badly, for its `on_error` diagnostic or block reason:
/// see [`explain_failure`].
pub(crate) fn failure_text(hook: &Hook, finished: &process::Finished) -> String {
    let failure = match finished.termination {
        Termination::Exited(2) => "exit 2: the shell could not open the script".to_owned(),
        _ => finished.termination.describe_with_timeout(hook.timeout),
    };
    explain_failure(failure, finished.termination.exit_code(), &finished.stderr)
}

/// A failure as the user reads it: what happened, the fix for a command that could not run
/// (exit 126: not executable; 127: not found), and the first line of the hook's stderr, escaped
/// (the hook's own word on why: a Python `KeyError`, `Permission denied`).
pub(crate) fn explain_failure(failure: String, exit: Option<i32>, stderr: &str) -> String {
    let mut text = match exit {
        Some(127) => format!(
            "{failure}: command not found; check the path (a relative one is taken from the \
             project root) or install the program"
        ),
        Some(126) => format!(
            "{failure}: command not executable; make the script executable (`chmod +x`) or run \
             it through its interpreter (`sh script.sh`)"
        ),
        _ => failure,
    };
    if let Some(line) = first_stderr_line(stderr) {
        text.push_str(&format!("; stderr: {line}"));
    }
    text
}

/// The longest stderr line a failure text quotes, in characters.
const STDERR_LINE_MAX: usize = 200;

/// The first non-blank line of a hook's stderr, trimmed, cut at [`STDERR_LINE_MAX`] characters
/// and with control characters escaped.
pub(crate) fn first_stderr_line(stderr: &str) -> Option<String> {
    let line = stderr.lines().map(str::trim).find(|l| !l.is_empty())?;
    let mut cut: String = line.chars().take(STDERR_LINE_MAX).collect();
    if cut.len() < line.len() {
        cut.push('…');
    }
    Some(crate::terminal::escape(&cut).into_owned())
}

/// Exit 0: read stdout as an action; `None` when there is nothing to apply. Output that cannot be
/// applied (cut at the cap, so not one JSON object; or one object voided by a key of the wrong
/// type or event) is a failure of the hook that `on_error` decides, never an `ok` that says
/// nothing: a guard whose deny cannot be read must not read as an allow. Empty stdout and plain
/// text stay "nothing to say".
pub(crate) fn read_action(
    hook: &Hook,
    finished: &process::Finished,
    plain_context: bool,
    report: &mut HookReport,
    outcome: &mut Outcome,
) -> Option<action::Action> {
    if finished.stdout_truncated {
        let why = format!(
            "stdout exceeded the {} KiB cap and was cut, so it is not one JSON object; none of \
             it was applied",
            process::STDOUT_CAP / 1024
        );
        output_failure(hook, why, report, outcome);
        return None;
    }
    let mut parsed = action::parse(&finished.stdout, outcome.event);
    if plain_context && parsed.action.is_none() && !parsed.voided {
        if let Some(plain) = action::plain_context(&finished.stdout, outcome.event) {
            parsed = plain;
        }
    }
    if parsed.voided {
        let why = format!(
            "its stdout object cannot be applied: {}",
            parsed.diagnostics.join("; ")
        );
        output_failure(hook, why, report, outcome);
        return None;
    }
    note_parse(hook, parsed, report, outcome)
}

/// A report-only hook (`enforce = false`): record what it would have done, apply nothing.
pub(crate) fn would_have(
    hook: &Hook,
    finished: &process::Finished,
    report: &mut HookReport,
    outcome: &mut Outcome,
) {
    use crate::outcome::{Effect, WouldHave};
    let event = outcome.event;
    let (effect, detail) = match report.status {
        Status::Blocked if event.is_pipeline() => {
            (Effect::Block, Some(block_reason(hook, &finished.stderr)))
        }
        Status::Blocked if event.acts_as() == Event::PostToolUse => {
            (Effect::MarkError, Some(finished.stderr.trim().to_owned()))
        }
        Status::Blocked if event.can_keep_going() => {
            (Effect::KeepGoing, Some(finished.stderr.trim().to_owned()))
        }
        Status::Error => (
            Effect::Fail,
            report
                .error
                .clone()
                .map(|e| format!("{e}; on_error = {}", hook.on_error.as_str())),
        ),
        Status::Ok if finished.stdout_truncated => {
            (Effect::Fail, Some("stdout exceeded its cap".to_owned()))
        }
        Status::Ok => {
            let parsed = action::parse(&finished.stdout, event);
            match parsed.action {
                _ if parsed.voided => (Effect::Fail, Some(parsed.diagnostics.join("; "))),
                Some(a) if a.halt.is_some() => (Effect::Halt, a.halt.clone()),
                Some(a) if a.keep_going.is_some() => (Effect::KeepGoing, a.keep_going.clone()),
                Some(a) if a.mark_error => (Effect::MarkError, a.feedback.clone()),
                Some(a) => match (a.decision, &a.block, &a.input_patch, &a.feedback) {
                    (Some(Decision::Deny), ..) | (_, Some(_), ..) => {
                        (Effect::Block, a.reason.clone().or(a.block.clone()))
                    }
                    (Some(Decision::Ask), ..) => (Effect::Ask, a.reason.clone()),
                    (_, _, Some(InputPatch::Merge(m) | InputPatch::Replace(m)), _) => {
                        let keys: Vec<&str> = m.keys().map(String::as_str).collect();
                        (Effect::Rewrite, Some(keys.join(", ")))
                    }
                    (Some(Decision::Allow), ..) => (Effect::Allow, a.reason.clone()),
                    (_, _, _, Some(f)) => (Effect::Feedback, Some(f.clone())),
                    _ => (Effect::Nothing, None),
                },
                None => (Effect::Nothing, None),
            }
        }
        _ => (Effect::Nothing, None),
    };
    report.action.ignored = Some(format!(
        "report-only (enforce = false): would {}; not applied",
        effect.as_str()
    ));
    outcome.report_only.push(WouldHave {
        hook: hook.name.clone(),
        effect,
        detail: detail.filter(|d| !d.is_empty()),
    });
    outcome.hooks.push(report.clone());
}

/// Exit 0 with output that cannot be applied: the hook's status becomes `error`.
pub(crate) fn output_failure(
    hook: &Hook,
    why: String,
    report: &mut HookReport,
    outcome: &mut Outcome,
) {
    report.status = Status::Error;
    report.action = ActionReport {
        applied: false,
        action: None,
        ignored: Some(why.clone()),
    };
    apply_failure(hook, &why, outcome);
    report.error = Some(why);
}

/// A failing hook: `on_error` decides: open (`ignore`), closed (`block`) or a human (`ask`).
pub(crate) fn apply_failure(hook: &Hook, failure: &str, outcome: &mut Outcome) {
    let event = outcome.event;
    match hook.on_error {
        OnError::Ignore => outcome.diagnostics.push(format!(
            "hook `{}` failed ({failure}); ignored (on_error = \"ignore\")",
            hook.name
        )),
        OnError::Block => {
            let reason = format!(
                "hook `{}` failed ({failure}) and on_error = \"block\"",
                hook.name
            );
            match event {
                _ if event.is_pipeline() => block(outcome, reason),
                _ if event.acts_as() == Event::PostToolUse => {
                    exit_two_observed(hook, &reason, outcome)
                }
                _ => outcome.diagnostics.push(format!(
                    "{reason}: recorded, no effect ({event} cannot be blocked)"
                )),
            }
        }
        OnError::Ask if event.acts_as() == Event::PreToolUse => {
            let reason = format!(
                "hook `{}` failed ({failure}) and on_error = \"ask\"",
                hook.name
            );
            apply_decision(hook, Decision::Ask, Some(reason), outcome);
        }
        OnError::Ask if event.is_pipeline() => {
            // A prompt cannot be put to a human the way a tool call can: fail closed.
            block(
                outcome,
                format!(
                    "hook `{}` failed ({failure}) and on_error = \"ask\" (blocked: {event} has no ask)",
                    hook.name
                ),
            );
        }
        OnError::Ask => outcome.diagnostics.push(format!(
            "hook `{}` failed ({failure}); on_error = \"ask\" has no effect on {event}",
            hook.name
        )),
    }
}

/// Record the parse result on the report; returns the action to apply.
pub(crate) fn note_parse(
    hook: &Hook,
    parsed: action::Parsed,
    report: &mut HookReport,
    outcome: &mut Outcome,
) -> Option<action::Action> {
    for d in &parsed.diagnostics {
        outcome
            .diagnostics
            .push(format!("hook `{}`: {d}", hook.name));
    }
    report.action = ActionReport {
        applied: parsed.action.is_some(),
        action: parsed.action.clone(),
        ignored: if parsed.action.is_none() && !parsed.diagnostics.is_empty() {
            Some(parsed.diagnostics.join("; "))
        } else {
            None
        },
    };
    parsed.action
}

/// dash (Debian's `sh`) exits 2 when it cannot open a script (`sh: 0: cannot open x.sh: No such
/// file`): a typo in a guard's path must read as a broken hook, never as a deliberate veto.
pub(crate) fn shell_could_not_open_script(stderr: &str) -> bool {
    let first = stderr.lines().next().unwrap_or("");
    first.starts_with("sh: ")
        && (first.contains(": cannot open ") || first.contains(": Can't open "))
}

pub(crate) fn report(hook: &Hook, finished: &process::Finished) -> HookReport {
    let status = match finished.termination {
        Termination::Exited(0) => Status::Ok,
        Termination::Cancelled => Status::Cancelled,
        Termination::Exited(2) if shell_could_not_open_script(&finished.stderr) => Status::Error,
        Termination::Exited(2) => Status::Blocked,
        _ => Status::Error,
    };
    let error =
        matches!(status, Status::Error | Status::Cancelled).then(|| match finished.termination {
            Termination::Exited(2) => format!(
                "exit 2: the shell could not open the script ({})",
                finished.stderr.lines().next().unwrap_or("").trim()
            ),
            _ => finished.termination.describe_with_timeout(hook.timeout),
        });
    let excerpt = |text: &str| {
        let mut cut = text.len().min(STDERR_EXCERPT);
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text[..cut].to_owned()
    };
    let stderr = excerpt(&finished.stderr);
    let stdout = excerpt(&finished.stdout);
    let mut report = HookReport {
        name: hook.name.clone(),
        source: hook.source.clone(),
        command: hook.command.clone(),
        status,
        exit_code: finished.termination.exit_code(),
        signal: finished
            .termination
            .signal()
            .map(|s| process::signal_name(s).map_or_else(|| format!("signal {s}"), str::to_owned)),
        timed_out: finished.termination == Termination::TimedOut,
        duration_ms: finished.duration.as_secs_f64() * 1000.0,
        error,
        on_error: hook.on_error,
        stderr,
        stdout,
        stdout_truncated: finished.stdout_truncated,
        stderr_truncated: finished.stderr_truncated,
        action: ActionReport {
            applied: false,
            action: None,
            ignored: None,
        },
        sandbox: hook.sandbox.describe(),
        sandbox_note: crate::sandbox::note(
            &hook.sandbox,
            finished.termination.exit_code(),
            &finished.stderr,
        ),
        input: None,
        rejudged: false,
        blocked_without_running: finished.pid.is_none() && status == Status::Blocked,
    };
    if finished.output_held_open {
        let held = "stdout/stderr still held open by a process that left the hook's process group";
        report.error = Some(match report.error.take() {
            Some(e) => format!("{e}; {held}"),
            None => held.to_owned(),
        });
    }
    report
}

/// A pipeline hook that did not run: an earlier one blocked, or the dispatch was cancelled.
pub(crate) fn skipped_report(hook: &Hook, cancelled: bool) -> HookReport {
    HookReport {
        name: hook.name.clone(),
        source: hook.source.clone(),
        command: hook.command.clone(),
        status: if cancelled {
            Status::Cancelled
        } else {
            Status::Skipped
        },
        exit_code: None,
        signal: None,
        timed_out: false,
        duration_ms: 0.0,
        error: None,
        on_error: hook.on_error,
        stderr: String::new(),
        stdout: String::new(),
        stdout_truncated: false,
        stderr_truncated: false,
        action: ActionReport {
            applied: false,
            action: None,
            ignored: Some(if cancelled {
                "not run: the dispatch was cancelled".into()
            } else {
                "not run: an earlier hook blocked".into()
            }),
        },
        sandbox: None,
        sandbox_note: None,
        input: None,
        rejudged: false,
        blocked_without_running: false,
    }
}
