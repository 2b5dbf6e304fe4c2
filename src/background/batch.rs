//! The async hooks of one dispatch, as the dispatch hands them over: what it knows without a
//! system call. Turning them into [`Job`]s (entering the working directory, the payload's
//! event fields, the environment, serialising the payload) is left to whoever starts them: the
//! reaper thread in process, so that the dispatching thread only enqueues.

use std::path::PathBuf;

use serde_json::{Map, Value};

use super::{Job, Started};
use crate::config::{OnError, Source};
use crate::environment::{self, Fallbacks};
use crate::event::Event;

/// The async hooks of one call.
#[derive(Debug)]
pub(crate) struct Batch {
    pub event: Event,
    pub tool: Option<String>,
    /// The payload's `session_id`: whose next dispatch gets the results.
    pub session: Option<String>,
    /// The payload as the host sent it (the dispatcher's fields are filled in by [`Batch::jobs`]).
    pub payload: Map<String, Value>,
    /// The payload's `cwd`, else the process's, when the dispatch has already worked it out.
    pub cwd: Option<PathBuf>,
    /// Where the hooks run (the project root, else the working directory)...
    pub dir: PathBuf,
    /// ... unless it cannot be entered.
    pub fallbacks: Fallbacks,
    /// See [`crate::Request::plain_stdout_is_context`].
    pub plain_context: bool,
    /// The environment the hooks get.
    pub hook_env: environment::HookEnv,
    /// Where each run is audited when it ends.
    pub log: Option<PathBuf>,
    pub hooks: Vec<Later>,
}

/// One async hook of a [`Batch`].
#[derive(Debug)]
pub(crate) struct Later {
    pub name: String,
    pub source: Source,
    pub on_error: OnError,
    pub enforce: bool,
    pub timeout_ms: u64,
    /// The command with its placeholders filled in.
    pub command: String,
    /// The root of its project layer, where it runs when that is a directory.
    pub root: Option<PathBuf>,
    /// Its own variables.
    pub env: Vec<(String, String)>,
    /// The paths it runs for (what supersede compares).
    pub paths: Vec<String>,
    /// What it may write and reach, and the root `{root}` names there.
    pub sandbox: crate::sandbox::Plan,
    pub sandbox_root: PathBuf,
}

impl Batch {
    /// How the dispatch reports each hook, before anything is known of its start.
    pub fn started(&self, how: super::Handover) -> Vec<Started> {
        self.hooks
            .iter()
            .map(|h| Started {
                hook: h.name.clone(),
                paths: h.paths.clone(),
                how,
                error: None,
            })
            .collect()
    }

    /// The jobs to run, and what was noticed working them out (a working directory that cannot
    /// be entered).
    pub fn jobs(self) -> (Vec<Job>, Option<String>) {
        let Batch {
            event,
            tool,
            session,
            mut payload,
            cwd,
            dir,
            fallbacks,
            plain_context,
            hook_env,
            log,
            hooks,
        } = self;
        let (dir, noticed) = match environment::working_dir(&dir, || fallbacks) {
            Ok(dir) => (dir, None),
            Err((dir, why)) => (dir, Some(why)),
        };
        environment::fill_payload(event, &mut payload, || {
            cwd.unwrap_or_else(environment::process_cwd)
        });
        // A Map of Values always serialises; the fallback only keeps this panic-free.
        let payload = serde_json::to_string(&payload).unwrap_or_else(|_| "{}".to_owned());
        let (base_env, clean_env) = environment::hooks_env(&hook_env, event, &dir, tool.as_deref());
        let jobs = hooks
            .into_iter()
            .map(|h| Job {
                env: environment::hook_env(&base_env, &h.name, &h.env),
                clean_env,
                cwd: environment::hook_dir(h.root.as_deref(), &dir).to_path_buf(),
                hook: h.name,
                event: event.as_str().to_owned(),
                tool: tool.clone(),
                source: h.source,
                on_error: h.on_error,
                enforce: h.enforce,
                timeout_ms: h.timeout_ms,
                command: h.command,
                payload: payload.clone(),
                plain_context,
                session: session.clone(),
                paths: h.paths,
                log: log.clone(),
                noticed: Vec::new(),
                sandbox: h.sandbox,
                sandbox_root: h.sandbox_root,
            })
            .collect();
        (jobs, noticed)
    }
}
