//! What the library counts per turn for a host: the stop loop (how many times this turn already
//! continued because a stop hook asked it to) and the denials of the denial backstop
//! ([`crate::backstop`]). A [`Session`](crate::session::Session) keeps one [`Turns`]; [`Config::dispatch`] keeps
//! one per payload `session_id` ([`counted`]), forgotten at `session_end`. A turn starts at each
//! `user_prompt_submit`.
//!
//! A stop hook that always says "keep going" is stopped by `[hook_settings] max_continuations`,
//! which the dispatch enforces from the payload's `continuations`. A host that forgot to send
//! it (or sent 0 every time) made the cap unreachable; a session stamps its own count into
//! every stop-like payload (`stop`, `subagent_stop`, `teammate_idle`, `task_completed`), with
//! `stop_hook_active` (Claude Code's field: "true when Claude Code is already continuing as a
//! result of a stop hook"; hooks reference, Stop and SubagentStop input,
//! <https://docs.anthropic.com/en/docs/claude-code/hooks>). A larger count from the host is
//! kept: layers only strengthen.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use serde_json::{Map, Value};

use crate::backstop::Denials;
use crate::dispatch::Request;
use crate::event::Event;
use crate::outcome::Outcome;

/// Continuations so far per stop-like event (a subagent's stop loop is not the main one's), and
/// the turn's denials per guard.
#[derive(Debug, Default)]
pub(crate) struct Turns {
    counts: Vec<(Event, u64)>,
    denials: Denials,
}

/// What [`Turns::before`] gave a dispatch: the denials it passed in, to add only what this
/// call changed (calls of a turn may run in parallel).
pub(crate) struct Given(Option<Denials>);

impl Turns {
    /// Before a dispatch: stamp the stop loop's count, and give a `pre_tool_use` the turn's
    /// denials unless the host passed its own.
    pub(crate) fn before(&mut self, request: &mut Request) -> Given {
        self.stamp(request.event, &mut request.payload);
        if request.event != Event::PreToolUse || request.denials.is_some() {
            return Given(None);
        }
        request.denials = Some(self.denials.clone());
        Given(Some(self.denials.clone()))
    }

    /// After a dispatch: one more continuation (or the loop ended), and this call's denials.
    pub(crate) fn after(&mut self, event: Event, outcome: &Outcome, given: Given) {
        self.settle(event, outcome.keep_going.is_some());
        let (Some(given), Some(now)) = (given.0, &outcome.denials) else {
            return;
        };
        for (key, count) in &now.counts {
            let added = count.saturating_sub(given.count(key));
            if added > 0 {
                let total = self.denials.counts.entry(key.clone()).or_insert(0);
                *total = total.saturating_add(added);
            }
        }
        self.denials.lost |= now.lost;
    }
}

/// The counts of hosts that dispatch on a [`Config`](crate::Config) without a session, by
/// `session_id`.
static BY_SESSION: LazyLock<Mutex<HashMap<String, Turns>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// The payload's `session_id`, which [`Config::dispatch`](crate::Config::dispatch) counts by.
pub(crate) fn session_of(request: &Request) -> Option<String> {
    (request.payload.get("session_id"))
        .and_then(Value::as_str)
        .map(str::to_owned)
}

fn sessions() -> std::sync::MutexGuard<'static, HashMap<String, Turns>> {
    BY_SESSION.lock().unwrap_or_else(|e| e.into_inner())
}

/// [`Turns::before`] with the counts of session `id`.
pub(crate) fn before(id: &str, request: &mut Request) -> Given {
    sessions().entry(id.to_owned()).or_default().before(request)
}

/// [`Turns::after`] with the counts of session `id`; `session_end` forgets the session.
pub(crate) fn after(id: &str, event: Event, outcome: &Outcome, given: Given) {
    let mut sessions = sessions();
    if event == Event::SessionEnd {
        sessions.remove(id);
    } else {
        sessions
            .entry(id.to_owned())
            .or_default()
            .after(event, outcome, given);
    }
}

/// Run `dispatch` with the counts of the payload's `session_id` (none without one): the stop
/// loop's count stamped, the turn's denials given, both updated after.
pub(crate) fn counted(mut request: Request, dispatch: impl FnOnce(Request) -> Outcome) -> Outcome {
    let Some(id) = session_of(&request) else {
        return dispatch(request);
    };
    let event = request.event;
    let given = before(&id, &mut request);
    let outcome = dispatch(request);
    after(&id, event, &outcome, given);
    outcome
}

impl Turns {
    fn count(&mut self, event: Event) -> &mut u64 {
        let at = match self.counts.iter().position(|(e, _)| *e == event) {
            Some(at) => at,
            None => {
                self.counts.push((event, 0));
                self.counts.len() - 1
            }
        };
        &mut self.counts[at].1
    }

    /// Before a dispatch: a prompt starts a new turn; a stop-like event gets the count.
    pub(crate) fn stamp(&mut self, event: Event, payload: &mut Map<String, Value>) {
        if event == Event::UserPromptSubmit {
            self.counts.clear();
            self.denials = Denials::default();
            return;
        }
        if event.acts_as() != Event::Stop {
            return;
        }
        let host = payload
            .get("continuations")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        let count = self.count(event);
        *count = (*count).max(host);
        let n = *count;
        payload.insert("continuations".into(), Value::from(n));
        let active = n > 0
            || payload
                .get("stop_hook_active")
                .and_then(Value::as_bool)
                .unwrap_or(false);
        payload.insert("stop_hook_active".into(), Value::Bool(active));
    }

    /// After a stop-like dispatch: the turn goes on (one more continuation) or it ended.
    pub(crate) fn settle(&mut self, event: Event, keeps_going: bool) {
        if event.acts_as() != Event::Stop {
            return;
        }
        let count = self.count(event);
        *count = if keeps_going { *count + 1 } else { 0 };
    }
}
