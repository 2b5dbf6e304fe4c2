//! The denial counts of the adapters and `ka-hooks run`, kept in the data dir across the
//! processes an agent starts (the `cli` feature; see the [parent module](super)).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::Denials;
use crate::continuations::Store;
use crate::event::Event;
use crate::outcome::Outcome;

/// A session's denials kept in the data dir for one process (an adapter run, `ka-hooks run`).
#[derive(Debug)]
pub struct Tracker {
    store: Store,
    sessions: Store,
    session: String,
    /// This call's mark while it runs: a shell call (`bash`), with its id.
    shell_call: Option<String>,
    /// The turn's denials after this call: pass them in the turn's next request.
    pub denials: Denials,
}

/// The scope of the session's one record (denials are per session, not per subagent).
const TURN: &str = "turn";

/// The session's own record, kept apart from its count (`<data dir>/sessions/`): whether it
/// counted denials, and its shell calls in flight.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Session {
    /// A denial was counted: a missing count is then a deleted one, not a fresh session.
    counted: bool,
    /// Shell calls allowed and not yet reported back (`post_tool_use`), by call id: the Unix
    /// time each started.
    #[serde(default)]
    in_flight: BTreeMap<String, u64>,
}

/// The scope of a session's [`Session`] record.
const SESSION: &str = "backstop";

/// How long a shell call counts as in flight without its `post_tool_use`: Claude Code's
/// longest Bash timeout (10 minutes).
const IN_FLIGHT: Duration = Duration::from_secs(600);

impl Session {
    fn running(&self, now: u64) -> bool {
        self.in_flight
            .values()
            .any(|started| now.saturating_sub(*started) < IN_FLIGHT.as_secs())
    }
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// The call's id (`tool_use_id`, Codex's `call_id`), or one shared mark when it has none.
fn call_id(payload: &Map<String, Value>) -> String {
    ["tool_use_id", "call_id", "toolCallId"]
        .iter()
        .find_map(|key| payload.get(*key).and_then(Value::as_str))
        .unwrap_or("-")
        .to_owned()
}

impl Tracker {
    /// The session's denials so far this turn, on `pre_tool_use`. A new prompt starts a new
    /// turn and a session end forgets the session, unless one of its shell calls is still
    /// running: a prompt piped into the adapter from the model's shell is no new turn. A count
    /// that was deleted or cannot be read fails closed ([`Denials::lost`]). `None` on other
    /// events, and when the payload names no session.
    pub fn start(data_dir: &Path, event: Event, payload: &Map<String, Value>) -> Option<Tracker> {
        let session = payload.get("session_id")?.as_str()?.to_owned();
        let store = Store::named(data_dir, "denials");
        let sessions = Store::named(data_dir, "sessions");
        match event {
            Event::PreToolUse => {}
            Event::PostToolUse | Event::PostToolUseFailure => {
                let id = call_id(payload);
                let _ = sessions.update(&session, SESSION, |s: &mut Session| {
                    s.in_flight.remove(&id);
                });
                return None;
            }
            Event::SessionEnd | Event::UserPromptSubmit => {
                if Tracker::may_reset(&store, &sessions, &session) {
                    if event == Event::SessionEnd {
                        store.end_session(&session);
                        sessions.end_session(&session);
                    } else {
                        let _ =
                            store.update(&session, TURN, |d: &mut Denials| *d = Denials::default());
                    }
                }
                return None;
            }
            _ => return None,
        }
        let record = sessions.read_checked::<Session>(&session, SESSION);
        let denials = match (store.read_checked::<Denials>(&session, TURN), record) {
            (Ok(Some(denials)), Ok(_)) => denials,
            (Ok(None), Ok(None)) => Denials::default(),
            (Ok(None), Ok(Some(record))) if !record.counted => Denials::default(),
            _ => Denials {
                lost: true,
                ..Denials::default()
            },
        };
        let shell = payload.get("tool").and_then(Value::as_str) == Some("bash");
        Some(Tracker {
            store,
            sessions,
            shell_call: shell.then(|| call_id(payload)),
            session,
            denials,
        })
    }

    /// Whether the session's count may start over: its record is readable, no shell call of
    /// it is in flight, and the record was not deleted under a kept count.
    fn may_reset(store: &Store, sessions: &Store, session: &str) -> bool {
        match sessions.read_checked::<Session>(session, SESSION) {
            Ok(Some(record)) => !record.running(now()),
            Ok(None) => match store.read_checked::<Denials>(session, TURN) {
                Ok(None) => true,
                Ok(Some(kept)) => kept == Denials::default(),
                Err(_) => false,
            },
            Err(_) => false,
        }
    }

    /// Keeps the denials this dispatch added, added to the count as kept now: hooks of one
    /// session run in parallel processes, and each one's denials count. A shell call let
    /// through is in flight until its `post_tool_use`.
    pub(crate) fn finish(self, outcome: &Outcome) -> Result<(), String> {
        let added: Vec<(String, u32)> = match &outcome.denials {
            Some(after) => after
                .counts
                .iter()
                .map(|(key, n)| (key.clone(), n.saturating_sub(self.denials.count(key))))
                .filter(|(_, n)| *n > 0)
                .collect(),
            None => Vec::new(),
        };
        let in_flight = self.shell_call.filter(|_| !outcome.blocked);
        if !added.is_empty() || in_flight.is_some() {
            let now = now();
            self.sessions
                .update(&self.session, SESSION, |s: &mut Session| {
                    s.counted |= !added.is_empty();
                    s.in_flight
                        .retain(|_, started| now.saturating_sub(*started) < IN_FLIGHT.as_secs());
                    if let Some(id) = in_flight {
                        s.in_flight.insert(id, now);
                    }
                })?;
        }
        if added.is_empty() {
            return Ok(());
        }
        self.store
            .update(&self.session, TURN, |kept: &mut Denials| {
                for (key, n) in added {
                    let count = kept.counts.entry(key).or_insert(0);
                    *count = count.saturating_add(n);
                }
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tracker_keeps_counts_per_session_until_the_next_prompt() -> Result<(), String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let payload = |session: &str| {
            let mut map = Map::new();
            map.insert("session_id".into(), Value::String(session.into()));
            map
        };
        let tracker =
            Tracker::start(dir.path(), Event::PreToolUse, &payload("s1")).ok_or("a session")?;
        let mut outcome = Outcome::new(Event::PreToolUse, None);
        let mut denials = Denials::default();
        denials.record("guard\n/f".into());
        outcome.denials = Some(denials.clone());
        tracker.finish(&outcome)?;
        let again =
            Tracker::start(dir.path(), Event::PreToolUse, &payload("s1")).ok_or("a session")?;
        assert_eq!(again.denials, denials);
        let other =
            Tracker::start(dir.path(), Event::PreToolUse, &payload("s2")).ok_or("a session")?;
        assert_eq!(other.denials, Denials::default());
        assert!(Tracker::start(dir.path(), Event::UserPromptSubmit, &payload("s1")).is_none());
        let fresh =
            Tracker::start(dir.path(), Event::PreToolUse, &payload("s1")).ok_or("a session")?;
        assert_eq!(fresh.denials, Denials::default());
        assert!(Tracker::start(dir.path(), Event::PreToolUse, &Map::new()).is_none());
        Ok(())
    }
}
