//! The stop loop of a [`super::Session`]: how many times this turn already continued because a
//! stop hook asked it to, counted by the session itself.
//!
//! A stop hook that always says "keep going" is stopped by `[hook_settings] max_continuations`,
//! which the dispatch enforces from the payload's `continuations`. A host that forgot to send
//! it (or sent 0 every time) made the cap unreachable; a session stamps its own count into
//! every stop-like payload (`stop`, `subagent_stop`, `teammate_idle`, `task_completed`), with
//! `stop_hook_active` (Claude Code's field: "true when Claude Code is already continuing as a
//! result of a stop hook"; hooks reference, Stop and SubagentStop input,
//! <https://docs.anthropic.com/en/docs/claude-code/hooks>). A larger count from the host is
//! kept: layers only strengthen.

use serde_json::{Map, Value};

use crate::event::Event;

/// Continuations so far per stop-like event (a subagent's stop loop is not the main one's).
#[derive(Debug, Default)]
pub(crate) struct Turns {
    counts: Vec<(Event, u64)>,
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
