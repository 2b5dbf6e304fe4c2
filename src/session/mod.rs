//! A session of the agent: the one object a host keeps from session start to exit. Before each
//! dispatch it re-checks the loaded layers (reloading on a change) and stamps the payload's
//! session fields; it receives async results and ends its hooks on [`Session::shutdown`].
//! `Send + Sync`. Use: `docs/library-session.md`.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::Value;

use crate::background::{self, Delivered};
use crate::cancel::CancelToken;
use crate::config::{Config, LoadError};
use crate::dispatch::{dispatch_with, turns, Request};
pub use crate::environment::{HookEnv, BASIC_VARS};
use crate::event::Event;
use crate::outcome::Outcome;

#[cfg(feature = "tokio")]
mod asynchronous;

/// Whether this process has the watchdog that ends its hooks when it dies, even by SIGKILL
/// (`Err`: why not: no `/bin/sh`, or no writable temp directory where the list needs one).
/// Starts it if no hook did yet.
pub use crate::watchdog::status as watchdog_status;
pub use crate::watchdog::Unavailable as WatchdogUnavailable;
pub(crate) mod watch;

/// One agent session over a shared [`Config`]; see the [module doc](self).
pub struct Session {
    id: String,
    cwd: PathBuf,
    state: Mutex<State>,
    turns: Mutex<turns::Turns>,
    /// Cancelled by [`Session::shutdown`]. Each dispatch holds a token of its own linked to it
    /// (and to the host's token, when the request brought one): cancelling a dispatch, or
    /// dropping its future, never reaches the session or another dispatch.
    token: CancelToken,
    /// The environment its hooks get.
    hook_env: HookEnv,
}

struct State {
    config: Arc<Config>,
    watch: watch::Watch,
    /// Why the last reload failed: until one succeeds, guarded events are refused, and every
    /// other event runs on the last good configuration and says so.
    broken: Option<String>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Session {
    /// A session with id `session_id` (the agent's, e.g. a UUID) working in `cwd`, over `config`.
    pub fn new(
        config: Arc<Config>,
        session_id: impl Into<String>,
        cwd: impl Into<PathBuf>,
    ) -> Self {
        let id = session_id.into();
        background::begin_session(&id);
        Session {
            state: Mutex::new(State {
                watch: watch::Watch::of(&config),
                config,
                broken: None,
            }),
            id,
            cwd: cwd.into(),
            turns: Mutex::new(turns::Turns::default()),
            token: CancelToken::new(),
            hook_env: HookEnv::Inherit,
        }
    }

    /// The same session, its hooks (async ones included) run in `env`: the host's whole
    /// environment ([`HookEnv::Inherit`], the default), or only the variables it allows
    /// ([`HookEnv::allow`]), so that an API key of the host never reaches a hook.
    pub fn with_hook_env(mut self, env: HookEnv) -> Self {
        self.hook_env = env;
        self
    }

    /// The session id stamped into every payload.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The configuration the next dispatch uses (after its re-check).
    pub fn config(&self) -> Arc<Config> {
        Arc::clone(&lock(&self.state).config)
    }

    /// Load again now, whether or not a file changed (see [`Config::reload`] for the policy).
    pub fn reload(&self) -> Result<(), LoadError> {
        let mut state = lock(&self.state);
        let config = state.config.reload();
        Self::install(&mut state, config).map_err(|(e, _)| e)
    }

    /// Run the hooks of `request.event`, as [`Config::dispatch`] does, after the re-check, with
    /// the session's stamps (see the [module doc](self)). After [`shutdown`](Self::shutdown)
    /// nothing starts: the outcome is cancelled (and blocked, on a guarded event).
    pub fn dispatch(&self, request: Request) -> Outcome {
        let (config, request, refused, given) = self.prepare(request);
        let event = request.event;
        let outcome = match refused {
            Some(why) if guarded(event) => refuse(&request, why),
            Some(why) => told(dispatch_with(&config, request, None, false), why),
            None => dispatch_with(&config, request, None, false),
        };
        self.settle(event, &outcome, given);
        outcome
    }

    /// Everything before the run: the re-check, the stamps, and the dispatch's own cancel
    /// token, cancelled by [`Session::shutdown`] and by the host's token, never the other way
    /// round.
    fn prepare(
        &self,
        mut request: Request,
    ) -> (Arc<Config>, Request, Option<String>, turns::Given) {
        let (config, broken) = self.checked();
        let payload = &mut request.payload;
        payload.insert("session_id".into(), Value::String(self.id.clone()));
        payload
            .entry("cwd")
            .or_insert_with(|| Value::String(self.cwd.to_string_lossy().into_owned()));
        let given = lock(&self.turns).before(&mut request);
        let own = self.token.linked();
        if let Some(host) = &request.cancel {
            host.link(&own);
        }
        request.cancel = Some(own);
        request.hook_env = self.hook_env.clone();
        (config, request, broken, given)
    }

    /// After a dispatch: count the stop loop and the denials of the turn.
    fn settle(&self, event: Event, outcome: &Outcome, given: turns::Given) {
        lock(&self.turns).after(event, outcome, given);
    }

    /// The configuration to dispatch on, reloaded first when a watched file changed; and why
    /// guarded events are refused, when a reload failed.
    fn checked(&self) -> (Arc<Config>, Option<String>) {
        let mut state = lock(&self.state);
        if let Some(file) = state.watch.changed() {
            let config = state.config.reload();
            if let Err((_, why)) = Self::install(&mut state, config) {
                state.broken = Some(format!(
                    "{} changed during the session and the configuration could not be loaded \
                     again ({why}); fix it and call Session::reload",
                    crate::terminal::escape_path(&file)
                ));
            }
        }
        (Arc::clone(&state.config), state.broken.clone())
    }

    fn install(
        state: &mut State,
        config: Result<Config, LoadError>,
    ) -> Result<(), (LoadError, String)> {
        match config {
            Ok(config) => {
                let mut watch = watch::Watch::of(&config);
                // Stamp what the new load read (a file changing again is seen next time).
                let _ = watch.changed();
                state.config = Arc::new(config);
                state.watch = watch;
                state.broken = None;
                Ok(())
            }
            Err(e) => {
                let why = e.to_string();
                Err((e, why))
            }
        }
    }

    /// Results of this session's async hooks that ended and were not received yet, oldest
    /// first. Each result is returned once.
    pub fn poll_delivered(&self) -> Vec<Delivered> {
        background::wait_for(&self.id, Duration::ZERO)
    }

    /// [`poll_delivered`](Self::poll_delivered), waiting up to `timeout` for the first result
    /// when none is there yet (an idle host sends no dummy events).
    pub fn wait_delivered(&self, timeout: Duration) -> Vec<Delivered> {
        background::wait_for(&self.id, timeout)
    }

    /// End every hook this session started: dispatches in flight are cancelled (their hooks
    /// killed, the rest never start), async hooks are ended and waited for, and queued ones
    /// never start. Later dispatches start nothing. The host's own tokens are left alone.
    /// Idempotent; also done on drop.
    pub fn shutdown(&self) {
        self.token.cancel();
        background::end_session(&self.id);
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.shutdown();
    }
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("id", &self.id)
            .field("cwd", &self.cwd)
            .finish_non_exhaustive()
    }
}

/// Events a failed reload refuses: the guarded ones. Every other event (a tool result, a stop,
/// the session's end) runs on the last good configuration, with [`told`].
pub(crate) fn guarded(event: Event) -> bool {
    matches!(event.acts_as(), Event::PreToolUse | Event::UserPromptSubmit)
}

/// An outcome on the last good configuration after a failed reload: the user hears why.
pub(crate) fn told(mut outcome: Outcome, why: String) -> Outcome {
    outcome.announcements.push(why);
    outcome
}

/// The outcome of a dispatch refused because the configuration cannot be trusted (or the run
/// could not be waited for): a guarded event is blocked, as a stale layer's guards block (the
/// only place a session builds an outcome itself).
pub(crate) fn refuse(request: &Request, why: String) -> Outcome {
    let tool = request
        .payload
        .get("tool")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let mut outcome = Outcome::new(request.event, tool);
    outcome.cancelled = Some(why.clone());
    if guarded(request.event) {
        outcome.blocked = true;
        outcome.reason = Some(why.clone());
    }
    outcome.announcements.push(why);
    outcome
}
