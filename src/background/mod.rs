//! Async hooks (`async = true`): the dispatch starts them and returns without waiting.
//!
//! Only events that cannot be vetoed may run a hook in the background (`post_tool_use`, `stop`,
//! `session_start`, ...; `async` on `pre_tool_use` or `user_prompt_submit` is a config error):
//! nothing waits for a verdict that could stop the call. The hook still runs under every
//! guarantee of the runner ([`crate::process`]): its own process group, its `timeout`, the
//! output caps, and reaping. Claude Code's `async` hooks are the model (hooks reference, "Run
//! hooks in the background": the result is delivered "on the next conversation turn").
//!
//! Two ways to run them, chosen by the process:
//! - **In process** (the library's default): one background reaper thread takes the async hooks
//!   of each dispatch from a channel (a dispatch spends a channel send on them), works out what
//!   each runs with (working directory, environment, payload) and runs each on a thread of its
//!   own. Whatever takes a system call happens there, not on the dispatching thread.
//! - **Detached** (the CLI and the adapters, which exit after one call; see [`detach`]): each job
//!   goes, over a pipe, to a supervisor process (`ka-hooks` itself, re-executed) in a session of
//!   its own, with its standard streams on `/dev/null` so that it never holds the agent's pipes
//!   open. It outlives the call, runs the hook, reaps it, writes the result to the data dir and
//!   exits; once the short-lived parent is gone, init (or the nearest subreaper) reaps it.
//!
//! **Results** (feedback, context, notes, messages, failures) are delivered with the next
//! dispatch of the same session (the payload's `session_id`; calls without one form a session of
//! their own) in [`Outcome::delivered`], and their texts are folded into that outcome's
//! `context`, `notes` and `messages`, so every host shows them without knowing about async
//! hooks. A delivered result never blocks, asks or rewrites anything: the call it belonged to
//! has long gone ahead. Each run is also written to the audit log when it ends.
//!
//! **Supersede** (formatter debounce): a new run of the same hook for the same paths ends a
//! still-running older one (its process group gets TERM, then KILL) and starts once it is gone.
//! The older run is delivered marked `superseded`.

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
