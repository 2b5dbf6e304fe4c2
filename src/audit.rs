//! The JSONL audit log: one line per hook run and one per outcome, with no argument values.
//!
//! Each line goes out in a single `write` on a file opened with `O_APPEND`, so lines of concurrent
//! dispatches never interleave and a crash can at worst lose its own last line, never corrupt an
//! earlier one.
//!
//! **No secrets.** A line holds the tool name, the hook's identity, status and timing, the kind
//! of failure, and the verdict with [`Outcome::reason`]. It never copies tool arguments, tool
//! results, prompts, the values of a patched input, notes, feedback, hook error texts or stdout
//! excerpts: of a patch it records which keys changed, and of the patched input its size and a
//! SHA-256 prefix, so two runs can be compared without the log holding what a scrubber removed.
//!
//! **No surprises from the path.** The file is opened without following a symlink (`O_NOFOLLOW`),
//! and below a project root (a directory with `.ka/`) every directory on its way is opened with
//! `O_NOFOLLOW` too (`openat`, one at a time), so a hook that swaps one for a symlink to `$HOME`
//! cannot make ka append there; and without blocking (`O_NONBLOCK`: a FIFO with no reader fails at once instead of hanging the
//! dispatch), and only a regular file is written to (checked with `fstat` on the open file). A
//! log that cannot be written is reported in the outcome's diagnostics; it never fails or
//! delays the dispatch.

use std::collections::BTreeSet;
use std::ffi::{CString, OsStr, OsString};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use crate::action::{Action, InputPatch};
use crate::outcome::{HookReport, Outcome, Status};

/// Longest reason kept in a line; the rest is cut (reasons may quote stderr at length).
const REASON_MAX_CHARS: usize = 500;
/// Hex digits of a SHA-256 kept: enough to tell values apart, too few to matter as a secret.
const HASH_PREFIX: usize = 16;

/// Append the lines of one dispatch to `path`. Returns what went wrong, for a diagnostic: a log
/// that cannot be written never fails the dispatch.
pub fn append(path: &Path, outcome: &Outcome) -> Result<(), String> {
    // RFC 3339 in UTC, to the millisecond: `2026-12-01T09:13:10.123Z`.
    let time = humantime::format_rfc3339_millis(SystemTime::now()).to_string();
    let time = time.as_str();
    let mut file = open(path)?;
    for hook in &outcome.hooks {
        write_line(&mut file, path, &hook_line(time, outcome, hook))?;
    }
    write_line(&mut file, path, &outcome_line(time, outcome))
}

/// Open the log for appending: never through a symlink, never blocking, only a regular file.
/// Below a project root, no directory on the way is followed through a symlink either.
fn open(path: &Path) -> Result<File, String> {
    let opened = match in_project(path) {
        Some((root, dirs, name)) => open_below(&root, &dirs, &name),
        None => OpenOptions::new()
            .append(true)
            .create(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open(path),
    };
    let file = opened.map_err(|e| {
        let why = match e.raw_os_error() {
            Some(libc::ELOOP) => "it is a symlink, which is never followed".to_owned(),
            Some(libc::ENOTDIR) => "a directory on its way inside the project is a symlink \
                                    (never followed) or not a directory"
                .to_owned(),
            Some(libc::ENXIO) => "it is a FIFO or socket, not a regular file".to_owned(),
            _ => e.to_string(),
        };
        format!(
            "audit log {}: failed to open: {why}; set `log` to a regular file",
            path.display()
        )
    })?;
    let meta = file
        .metadata()
        .map_err(|e| format!("audit log {}: failed to stat: {e}", path.display()))?;
    if !meta.is_file() {
        return Err(format!(
            "audit log {}: not a regular file ({}); nothing was written; set `log` to a regular file",
            path.display(),
            file_type(&meta)
        ));
    }
    Ok(file)
}

/// When `path` lies below a project root (the outermost directory on its way that holds `.ka/`):
/// that root, the directories from it to the file, and the file's name. A hook may replace any
/// of those directories with a symlink (to `$HOME`, say); ka then must not follow it.
fn in_project(path: &Path) -> Option<(PathBuf, Vec<OsString>, OsString)> {
    let path = std::path::absolute(path).ok()?;
    let name = path.file_name()?.to_owned();
    let parent = path.parent()?;
    let root = parent
        .ancestors()
        .filter(|a| a.join(".ka").is_dir())
        .last()?
        .to_path_buf();
    let dirs = parent
        .strip_prefix(&root)
        .ok()?
        .components()
        .map(|c| c.as_os_str().to_owned())
        .collect();
    Some((root, dirs, name))
}

/// Open `root`/`dirs`…/`name` for appending, each directory below `root` with `O_NOFOLLOW`, so
/// none of them is followed through a symlink, whoever swaps one in between.
fn open_below(root: &Path, dirs: &[OsString], name: &OsStr) -> std::io::Result<File> {
    let mut dir = OwnedFd::from(File::open(root)?);
    let at = |dir: &OwnedFd, part: &OsStr, flags: libc::c_int| -> std::io::Result<OwnedFd> {
        if part == ".." {
            return Err(std::io::Error::other("the path climbs with `..`"));
        }
        let part = CString::new(part.as_bytes()).map_err(std::io::Error::other)?;
        // SAFETY: `dir` is an open directory and `part` a NUL-terminated name; openat returns a
        // new descriptor or -1.
        let fd = unsafe { libc::openat(dir.as_raw_fd(), part.as_ptr(), flags, 0o600) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: the kernel just returned `fd`; nothing else owns it.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    };
    for part in dirs {
        let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        dir = at(&dir, part, flags)?;
    }
    let flags = libc::O_WRONLY
        | libc::O_APPEND
        | libc::O_CREAT
        | libc::O_NOFOLLOW
        | libc::O_NONBLOCK
        | libc::O_CLOEXEC;
    Ok(File::from(at(&dir, name, flags)?))
}

fn file_type(meta: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

/// One line in one `write`: `O_APPEND` makes it land whole at the end of the file.
fn write_line(file: &mut File, path: &Path, value: &Value) -> Result<(), String> {
    let mut line = value.to_string();
    line.push('\n');
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
}

fn hook_line(time: &str, outcome: &Outcome, hook: &HookReport) -> Value {
    json!({
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
        "failure": failure_kind(hook),
        "duration_ms": hook.duration_ms,
        "stdout_truncated": hook.stdout_truncated,
        "stderr_truncated": hook.stderr_truncated,
        "action": action_summary(hook),
    })
}

/// What kind of failure, in words of ours only: the hook's error text can quote its output.
fn failure_kind(hook: &HookReport) -> Option<&'static str> {
    match hook.status {
        Status::Error => Some(if hook.timed_out {
            "timed out"
        } else if hook.signal.is_some() {
            "killed by a signal"
        } else if hook.exit_code == Some(0) && hook.stdout_truncated {
            "stdout over the cap"
        } else if hook.exit_code == Some(0) {
            "stdout could not be applied"
        } else if hook.exit_code.is_some() {
            "exit code"
        } else {
            "failed to start"
        }),
        Status::Cancelled => Some("cancelled"),
        Status::Ok | Status::Blocked | Status::Skipped => None,
    }
}

/// What the hook's action did, without its values: which fields it set, the verdict, and the
/// names of the argument keys a patch changed.
fn action_summary(hook: &HookReport) -> Value {
    if hook.action.ignored.is_some() {
        return json!({ "applied": false, "ignored": true });
    }
    let Some(action) = hook.action.action.as_ref().filter(|_| hook.action.applied) else {
        return Value::Null;
    };
    let mut summary = Map::new();
    summary.insert("applied".into(), Value::Bool(true));
    summary.insert("fields".into(), json!(action_fields(action)));
    if let Some(decision) = action.decision {
        summary.insert("decision".into(), json!(decision.as_str()));
    }
    if let Some(patch) = &action.input_patch {
        let (kind, keys) = match patch {
            InputPatch::Merge(keys) => ("merge", keys),
            InputPatch::Replace(keys) => ("replace", keys),
        };
        summary.insert("patch".into(), json!(kind));
        summary.insert(
            "patched_keys".into(),
            json!(keys.keys().collect::<Vec<_>>()),
        );
    }
    Value::Object(summary)
}

fn action_fields(action: &Action) -> Vec<&'static str> {
    let set = [
        ("mode", action.mode.is_some()),
        ("note", action.note.is_some()),
        ("input_patch", action.input_patch.is_some()),
        ("decision", action.decision.is_some()),
        ("reason", action.reason.is_some()),
        ("feedback", action.feedback.is_some()),
        ("block", action.block.is_some()),
    ];
    set.into_iter()
        .filter(|(_, present)| *present)
        .map(|(name, _)| name)
        .collect()
}

/// The verdict's one word, from [`crate::verdict::verdict`] (itself derived from
/// [`Outcome::next`]): `blocked`, `mark_error`, `ask`, `allow` or `proceed`.
fn audit_verdict(outcome: &Outcome) -> &'static str {
    match crate::verdict::verdict(outcome).as_str() {
        v if v.starts_with("blocked") => "blocked",
        "result marked as error" => "mark_error",
        "ask" => "ask",
        "allow" => "allow",
        _ => "proceed",
    }
}

fn outcome_line(time: &str, outcome: &Outcome) -> Value {
    let verdict = audit_verdict(outcome);
    let patched_keys: BTreeSet<&String> = outcome
        .hooks
        .iter()
        .filter(|h| h.action.applied)
        .filter_map(|h| h.action.action.as_ref()?.input_patch.as_ref())
        .flat_map(|patch| match patch {
            InputPatch::Merge(keys) | InputPatch::Replace(keys) => keys.keys(),
        })
        .collect();
    let updated_input = outcome.updated_input.as_ref().map(|input| {
        let bytes = serde_json::to_vec(input).unwrap_or_default();
        json!({ "bytes": bytes.len(), "sha256": sha256_prefix(&bytes) })
    });
    json!({
        "time": time,
        "kind": "outcome",
        "event": outcome.event.as_str(),
        "tool": outcome.tool,
        "verdict": verdict,
        "reason": outcome.reason.as_deref().map(cut),
        "cancelled": outcome.cancelled.is_some(),
        "patched_input": outcome.updated_input.is_some(),
        "patched_keys": patched_keys,
        "updated_input": updated_input,
        "mode": outcome.mode,
        "notes": outcome.notes.len(),
        "feedback_bytes": outcome.feedback.as_ref().map(String::len),
        "hooks": outcome.hooks.len(),
        "failed_hooks": outcome.hooks.iter().filter(|h| h.status == Status::Error).count(),
        "untrusted": outcome.untrusted.iter().map(|u| &u.file).collect::<Vec<_>>(),
    })
}

fn sha256_prefix(bytes: &[u8]) -> String {
    crate::trust::hex(&Sha256::digest(bytes)[..HASH_PREFIX / 2])
}

fn cut(s: &str) -> String {
    match s.char_indices().nth(REASON_MAX_CHARS) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}
