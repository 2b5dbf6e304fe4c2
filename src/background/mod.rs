//! Async hooks (`async = true`, on events that cannot be vetoed): the dispatch starts them and
//! returns without waiting; their results are delivered with the session's next dispatch. They
//! run in process on threads (the library), or detached in a supervisor process (the CLI, which
//! exits after one call; [`detach`]). How and why: `docs/design.md`, "Async hooks".

use std::path::PathBuf;
use std::sync::OnceLock;

pub use crate::outcome::{Delivered, Handover, Started};
use crate::outcome::{Outcome, Status};

mod batch;
mod detached;
mod job;
mod local;
mod mailbox;
#[cfg(feature = "cli")]
mod supervisor;

pub(crate) use batch::{Batch, Later};
pub(crate) use job::Job;

/// The hidden first argument that makes `ka-hooks` a supervisor (see [`supervise`]).
pub const SUPERVISOR_ARG: &str = "__async-hook";

/// Where async hooks of this process run: `None` in process (the default).
static DETACHED: OnceLock<Detached> = OnceLock::new();

/// How detached supervisors are started and where they leave results.
#[derive(Debug, Clone)]
struct Detached {
    /// The `ka-hooks` executable to re-execute.
    exe: PathBuf,
    /// The data dir: results and supersede locks live in `<data dir>/async/`. Without one, runs
    /// still happen (and are audited) but their results cannot be delivered.
    data_dir: Option<PathBuf>,
}

/// Run this process's async hooks in detached supervisors instead of threads: for a process
/// that exits right after its dispatch (the CLI, the adapters). `exe` is `ka-hooks` itself (on
/// Linux `/proc/self/exe`, which stays right even if the file is replaced). Call once, before
/// dispatching; later calls do nothing.
#[cfg(feature = "cli")]
pub fn detach(exe: PathBuf, data_dir: Option<PathBuf>) {
    let _ = DETACHED.set(Detached { exe, data_dir });
}

/// The entry point of a supervisor process (`ka-hooks __async-hook`, started by a dispatch of a
/// detached process): reads its job from stdin, runs it, keeps the result. Returns the exit code.
#[cfg(feature = "cli")]
pub fn supervise() -> u8 {
    supervisor::supervise()
}

/// Start the async hooks of one call in the background: in process (handed to the reaper,
/// which prepares and starts them), or each in a detached supervisor (prepared and handed over
/// here). Returns how each was started, and what was noticed preparing them here.
pub(crate) fn start(batch: Batch) -> (Vec<Started>, Option<String>) {
    let Some(d) = DETACHED.get() else {
        let mut started = batch.started(Handover::Thread);
        if let Err(e) = local::start(batch) {
            for s in &mut started {
                s.how = Handover::Failed;
                s.error = Some(e.clone());
            }
        }
        return (started, None);
    };
    let (jobs, noticed) = batch.jobs();
    let started = jobs
        .into_iter()
        .map(|job| {
            let mut started = Started {
                hook: job.hook.clone(),
                paths: job.paths.clone(),
                how: Handover::Supervisor,
                error: None,
            };
            if let Err(e) = detached::start(&d.exe, d.data_dir.as_deref(), job) {
                started.how = Handover::Failed;
                started.error = Some(e);
            }
            started
        })
        .collect();
    (started, noticed)
}

/// The finished runs of `session` not delivered yet, oldest first (at most
/// [`mailbox::MAX_PER_DISPATCH`]; the rest come with the next dispatch).
pub(crate) fn collect(session: Option<&str>) -> Vec<Delivered> {
    let mut out = local::collect(session);
    if let Some(dir) = DETACHED.get().and_then(|d| d.data_dir.as_deref()) {
        out.extend(mailbox::Mailbox::new(dir).collect(session, &mut Vec::new()));
    }
    out
}

/// Wait up to `timeout` for a finished run of `session` (in process, or from the mailbox of a
/// detached process), and take every one waiting.
pub(crate) fn wait_for(session: &str, timeout: std::time::Duration) -> Vec<Delivered> {
    let now = collect(Some(session));
    if !now.is_empty() || timeout.is_zero() {
        return now;
    }
    let mut out = local::wait(session, timeout);
    if let Some(dir) = DETACHED.get().and_then(|d| d.data_dir.as_deref()) {
        out.extend(mailbox::Mailbox::new(dir).collect(Some(session), &mut Vec::new()));
    }
    out
}

/// A session starts: its async runs may start (see [`end_session`]).
pub(crate) fn begin_session(session: &str) {
    local::begin_session(session);
}

/// End every in-process async run of `session`, and keep its queued ones from starting.
pub(crate) fn end_session(session: &str) -> usize {
    local::end_session(session)
}

/// Put `delivered` into `outcome`: the structured list, and their texts into `context`,
/// `notes` and `messages` (each tagged with the hook), so any host shows them.
pub(crate) fn deliver(outcome: &mut Outcome, delivered: Vec<Delivered>) {
    for d in &delivered {
        let tag = d.tag();
        if d.superseded {
            continue;
        }
        let mut texts: Vec<&str> = Vec::new();
        texts.extend(d.feedback.as_deref());
        texts.extend(d.context.as_deref());
        if !texts.is_empty() {
            let marked = if d.mark_error {
                " (it reported the result as an error)"
            } else {
                ""
            };
            let line = format!("[{tag}{marked}] {}", texts.join("\n"));
            match &mut outcome.context {
                Some(c) => {
                    c.push('\n');
                    c.push_str(&line);
                }
                None => outcome.context = Some(line),
            }
        }
        outcome.notes.extend(d.notes.iter().cloned());
        outcome.messages.extend(d.messages.iter().cloned());
        if d.status == Status::Error {
            let why = d.error.as_deref().unwrap_or("failed");
            outcome.notes.push(format!("{tag} failed: {why}"));
        }
        for w in &d.report_only {
            outcome.report_only.push(w.clone());
        }
    }
    outcome.delivered = delivered;
}
