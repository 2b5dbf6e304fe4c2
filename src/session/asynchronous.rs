//! The `tokio` feature: dispatches a tokio host awaits, whose future ends the hooks when it is
//! dropped.
//!
//! The pipeline itself stays blocking (it waits on processes, not on sockets): it runs on
//! tokio's blocking pool (`spawn_blocking`), so no worker thread of the runtime is held. The
//! future holds the dispatch's [`CancelToken`]; dropped before it completes (`select!` lost,
//! the task aborted, the turn abandoned), it cancels it: every running hook's process group gets
//! TERM, then KILL after [`crate::process::KILL_GRACE`], is reaped on the blocking thread, and
//! hooks not started yet never start. A guarded event's outcome is then blocked, as in any
//! cancelled dispatch.

use std::sync::Arc;

use super::{guarded, refuse, told, Session};
use crate::cancel::CancelToken;
use crate::config::Config;
use crate::dispatch::{dispatch_with, Request};
use crate::outcome::Outcome;

/// Cancels its token when dropped, unless disarmed.
struct CancelOnDrop(Option<CancelToken>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(token) = self.0.take() {
            token.cancel();
        }
    }
}

/// Run the dispatch on the blocking pool; cancel it if this future is dropped first. The
/// dispatch gets a token of its own (linked to the host's, when the request brought one), so a
/// dropped future cancels this dispatch and nothing else.
async fn run(config: Arc<Config>, mut request: Request, deliver: bool) -> Outcome {
    // The parent lives as long as this future: a link holds only a weak reference.
    let parent = request.cancel.take();
    let own = parent
        .as_ref()
        .map_or_else(CancelToken::new, CancelToken::linked);
    request.cancel = Some(own.clone());
    let mut guard = CancelOnDrop(Some(own));
    // What to answer if the blocking task cannot be waited for (a panic, or a runtime that is
    // shutting down): fails closed like a cancelled dispatch.
    let spare = Request::new(request.event, request.payload.clone());
    let task = tokio::task::spawn_blocking(move || dispatch_with(&config, request, None, deliver));
    let joined = task.await;
    guard.0 = None;
    drop(parent);
    match joined {
        Ok(outcome) => outcome,
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(e) => refuse(&spare, format!("the dispatch could not be waited for: {e}")),
    }
}

impl Config {
    /// [`Config::dispatch`] for a tokio host (feature `tokio`): runs on the blocking pool, and
    /// dropping the future cancels the dispatch and ends its hooks (see
    /// [`crate::session`]'s `asynchronous` notes). Needs a tokio runtime.
    pub async fn dispatch_async(self: Arc<Self>, mut request: Request) -> Outcome {
        let Some(id) = crate::dispatch::turns::session_of(&request) else {
            return run(self, request, true).await;
        };
        let event = request.event;
        let given = crate::dispatch::turns::before(&id, &mut request);
        let outcome = run(self, request, true).await;
        crate::dispatch::turns::after(&id, event, &outcome, given);
        outcome
    }
}

impl Session {
    /// [`Session::dispatch`] for a tokio host (feature `tokio`): the same re-check and stamps,
    /// run on the blocking pool; dropping the future cancels the dispatch and ends its hooks.
    pub async fn dispatch_async(&self, request: Request) -> Outcome {
        // `prepare` gave the request a token of its own: `run` links its drop guard to it.
        let (config, request, refused, given) = self.prepare(request);
        let event = request.event;
        let outcome = match refused {
            Some(why) if guarded(event) => refuse(&request, why),
            Some(why) => told(run(config, request, false).await, why),
            None => run(config, request, false).await,
        };
        self.settle(event, &outcome, given);
        outcome
    }
}
