//! One background run: everything needed to run the hook and judge its result, with no
//! configuration at hand (a detached supervisor gets it as JSON over a pipe).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::Delivered;
use crate::cancel::CancelToken;
use crate::config::{Hook, OnError, Source, ToolFilter};
use crate::event::Event;
use crate::outcome::{Outcome, Status};
use crate::process::HookProcess;

/// A hook run handed to the background, as prepared by the dispatch.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Job {
    pub hook: String,
    /// The event's name.
    pub event: String,
    pub tool: Option<String>,
    pub source: Source,
    pub on_error: OnError,
    pub enforce: bool,
    pub timeout_ms: u64,
    /// The command with its placeholders filled in.
    pub command: String,
    pub cwd: PathBuf,
    /// Variables set on top of the inherited environment.
    pub env: Vec<(String, String)>,
    /// Inherit nothing: `env` is the whole environment.
    #[serde(default)]
    pub clean_env: bool,
    /// The payload, as sent on stdin.
    pub payload: String,
    /// See [`crate::Request::plain_stdout_is_context`].
    pub plain_context: bool,
    /// The payload's `session_id`: whose next dispatch gets the result.
    pub session: Option<String>,
    /// The paths of the call (what supersede compares).
    pub paths: Vec<String>,
    /// Where the run is audited when it ends.
    pub log: Option<PathBuf>,
    /// What was noticed preparing it (a working directory that could not be entered), when no
    /// dispatch reported it: delivered with its result.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub noticed: Vec<String>,
    /// What the run may write and reach, and the project root its `{root}` names.
    #[serde(default)]
    pub sandbox: crate::sandbox::Plan,
    #[serde(default)]
    pub sandbox_root: PathBuf,
}

impl Job {
    /// What identifies "the same hook for the same paths": a newer run with the same key ends an
    /// older one still running.
    pub fn key(&self) -> String {
        let mut h = Sha256::new();
        for part in [
            self.hook.as_str(),
            &self.source.file.to_string_lossy(),
            &self.cwd.to_string_lossy(),
        ] {
            h.update(part.as_bytes());
            h.update([0]);
        }
        let mut paths = self.paths.clone();
        paths.sort();
        for p in &paths {
            h.update(p.as_bytes());
            h.update([0]);
        }
        crate::trust::hex(&h.finalize()[..16])
    }

    fn timeout(&self) -> Duration {
        Duration::from_millis(self.timeout_ms)
    }

    /// A stand-in for the configured hook, holding what judging its result needs.
    fn stand_in(&self, event: Event) -> Hook {
        Hook {
            name: self.hook.clone(),
            named: true,
            event,
            filter: ToolFilter::All,
            command: self.command.clone(),
            timeout: self.timeout(),
            on_error: self.on_error,
            enabled: true,
            env: Vec::new(),
            source: self.source.clone(),
            overrides: Vec::new(),
            root: None,
            paths: None,
            rule: None,
            template: None,
            is_async: true,
            enforce: self.enforce,
            status_message: None,
            stale: None,
            sandbox: self.sandbox.clone(),
            pinned: None,
        }
    }

    /// Run the hook (ended early when `cancel` is), judge its result as its event would, audit
    /// it, and return what a later dispatch delivers. `superseded` says whether a cancel came
    /// from a newer run.
    pub fn execute(mut self, cancel: &CancelToken, superseded: impl Fn() -> bool) -> Delivered {
        let event = self.event.parse::<Event>().unwrap_or(Event::PostToolUse);
        let hook = self.stand_in(event);
        let finished = crate::environment::run_sandboxed(
            &HookProcess {
                command: &self.command,
                cwd: &self.cwd,
                env: &self.env,
                clean_env: self.clean_env,
                stdin: Arc::from(self.payload.as_bytes()),
                timeout: self.timeout(),
                cancel: Some(cancel),
                deadline: None,
            },
            &self.sandbox,
            &self.sandbox_root,
        );
        let mut outcome = Outcome::new(event, self.tool.clone());
        outcome.diagnostics.append(&mut self.noticed);
        crate::judge::judge_observational(&hook, finished, self.plain_context, &mut outcome);
        let superseded =
            superseded() && outcome.hooks.iter().any(|h| h.status == Status::Cancelled);
        if superseded {
            for report in &mut outcome.hooks {
                report.error = Some("superseded by a newer run for the same paths".to_owned());
            }
        }
        if let Some(log) = &self.log {
            if let Err(e) = crate::audit::append(log, &outcome) {
                outcome.diagnostics.push(e);
            }
        }
        self.delivered(outcome, superseded)
    }

    fn delivered(self, mut outcome: Outcome, superseded: bool) -> Delivered {
        let report = outcome.hooks.pop();
        let status = report.as_ref().map_or(Status::Error, |r| r.status);
        if outcome.keep_going.is_some() || outcome.halt.is_some() {
            outcome.diagnostics.push(format!(
                "async hook `{}` asked to keep going or to halt; an async hook cannot: the \
                 turn had already moved on",
                self.hook
            ));
        }
        Delivered {
            hook: self.hook,
            // Written by this crate from an `Event` (see `Batch::jobs`).
            event: self.event.parse().unwrap_or(Event::PostToolUse),
            tool: self.tool,
            paths: self.paths,
            status,
            superseded,
            exit_code: report.as_ref().and_then(|r| r.exit_code),
            timed_out: report.as_ref().is_some_and(|r| r.timed_out),
            duration_ms: report.as_ref().map_or(0.0, |r| r.duration_ms),
            error: report.and_then(|r| r.error),
            feedback: outcome.feedback,
            context: outcome.context,
            mark_error: outcome.mark_error,
            notes: outcome.notes,
            messages: outcome.messages,
            report_only: outcome.report_only,
            diagnostics: outcome.diagnostics,
            finished: humantime::format_rfc3339_millis(SystemTime::now()).to_string(),
        }
    }

    /// The result of a job that could not run at all.
    pub fn failed(mut self, why: String) -> Delivered {
        let mut outcome = Outcome::new(
            self.event.parse::<Event>().unwrap_or(Event::PostToolUse),
            self.tool.clone(),
        );
        outcome.diagnostics.append(&mut self.noticed);
        outcome.diagnostics.push(why.clone());
        let mut d = self.delivered(outcome, false);
        d.error = Some(why);
        d
    }
}
