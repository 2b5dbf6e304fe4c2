//! The JSONL audit log: one line per hook run and one per outcome (§10).
//!
//! Each line goes out in a single `write` on a file opened with `O_APPEND`, so lines of concurrent
//! dispatches never interleave and a crash can at worst lose its own last line, never corrupt an
//! earlier one. Payloads are not copied: a line holds the tool name, the hook's identity, status
//! and timing, and the verdict with its reason, but never the tool arguments, results or prompts,
//! which may hold secrets.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use crate::outcome::{Outcome, Status};

/// Longest reason kept in a line; the rest is cut (reasons may quote stderr at length).
const REASON_MAX_CHARS: usize = 500;

/// Append the lines of one dispatch to `path`. Returns what went wrong, for a diagnostic: a log
/// that cannot be written never fails the dispatch.
pub fn append(path: &Path, outcome: &Outcome) -> Result<(), String> {
    let time = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0);
    let mut file = OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .map_err(|e| format!("audit log {}: failed to open: {e}", path.display()))?;
    let mut write_line = |value: Value| -> Result<(), String> {
        let mut line = value.to_string();
        line.push('\n');
        // One write per line: O_APPEND makes it land whole at the end of the file.
        match file.write(line.as_bytes()) {
            Ok(n) if n == line.len() => Ok(()),
            Ok(n) => Err(format!(
                "audit log {}: short write ({n} of {} bytes; disk full?)",
                path.display(),
                line.len()
            )),
            Err(e) => Err(format!(
                "audit log {}: failed to write: {e}",
                path.display()
            )),
        }
    };
    for hook in &outcome.hooks {
        let action = match (&hook.action.action, &hook.action.ignored) {
            (_, Some(why)) => json!({ "ignored": why }),
            (Some(action), None) if hook.action.applied => json!({ "applied": action }),
            _ => Value::Null,
        };
        write_line(json!({
            "time": time,
            "kind": "hook",
            "event": outcome.event.as_str(),
            "tool": outcome.tool,
            "hook": hook.name,
            "layer": hook.source.layer,
            "file": hook.source.file,
            "index": hook.source.index,
            "status": hook.status.as_str(),
            "exit_code": hook.exit_code,
            "signal": hook.signal,
            "timed_out": hook.timed_out,
            "error": hook.error,
            "duration_ms": hook.duration_ms,
            "action": action,
        }))?;
    }
    let verdict = if outcome.blocked {
        "blocked"
    } else if outcome.mark_error {
        "mark_error"
    } else {
        match outcome.decision {
            Some(d) => d.as_str(),
            None => "proceed",
        }
    };
    write_line(json!({
        "time": time,
        "kind": "outcome",
        "event": outcome.event.as_str(),
        "tool": outcome.tool,
        "verdict": verdict,
        "reason": outcome.reason.as_deref().map(cut),
        "patched_input": outcome.updated_input.is_some(),
        "mode": outcome.mode,
        "hooks": outcome.hooks.len(),
        "failed_hooks": outcome.hooks.iter().filter(|h| h.status == Status::Error).count(),
        "untrusted": outcome.untrusted.iter().map(|u| &u.file).collect::<Vec<_>>(),
    }))
}

fn cut(s: &str) -> String {
    match s.char_indices().nth(REASON_MAX_CHARS) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}
