//! The denial backstop: a model that keeps running into a guard meets a person.
//!
//! A guard that says no tells the model why, and a model that wants the call badly enough
//! rephrases it: another spelling of the command, another tool, the same write in two steps.
//! Each attempt the guard misses goes through unseen. So denials are counted per turn and per
//! guard (its name and the file that defines it, whichever tool the calls used); once one guard
//! has denied [`Settings::denial_backstop`](crate::config::Settings) calls in a turn (3 unless
//! the user or managed file sets `[hook_settings] denial_backstop`; 0 turns it off), every
//! further `pre_tool_use` call its filter (`tool`, `paths`, `if`) matches in that turn is put to
//! the human: decision `ask`, with a reason that names the guard and the count. That includes
//! calls the guard itself would allow, which is the point: those are the rephrasings. A call the
//! guard (or another one) still denies stays denied: deny wins over ask, as everywhere, so the
//! backstop never weakens a guard. Agents that cannot ask (Codex, Gemini CLI) block instead.
//!
//! A guard "says no" when it exits 2 or answers with a deny or a block. A guard that fails
//! (`on_error`) or a stale guard of a changed layer is not counted: neither is the model
//! retrying around a judgement. The built-in protection of ka's own files asks already.
//!
//! The library keeps the count for a host that embeds it: a
//! [`Session`](crate::session::Session) counts its turns, and
//! [`Config::dispatch`](crate::Config::dispatch) those of each payload `session_id` (a new
//! `user_prompt_submit` starts a turn, `session_end` forgets the session). A host that counts
//! itself passes the turn's [`Denials`] in [`Request::denials`](crate::dispatch::Request) and
//! keeps [`Outcome::denials`](crate::outcome::Outcome) for the next call of the same turn; those
//! are then used instead. The adapters and `ka-hooks run`
//! (when the payload names a `session_id`) keep it in the data dir ([`Tracker`]), per session,
//! reset by each new prompt and forgotten at session end, updated under a file lock (hooks run
//! in parallel processes).
//!
//! The model can pipe events into the adapter from its shell, and delete files. A prompt or
//! session end that arrives while one of the session's shell calls is in flight (let through,
//! and not yet reported back by `post_tool_use`, for at most 10 minutes) comes from inside that
//! call and resets nothing. A session record kept apart from the count (`<data dir>/sessions/`)
//! says whether the session counted denials: a count missing under it was deleted, and an
//! unreadable one cannot be trusted; both fail closed (every guard counts as tripped). Deleting
//! both looks like a fresh session: that rests on the agent's sandbox (see the README's threat
//! model).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::action::Decision;
use crate::config::Hook;
use crate::continuations::Store;
use crate::event::Event;
use crate::outcome::Outcome;

pub use crate::config::DEFAULT_DENIAL_BACKSTOP;

pub use crate::outcome::Denials;

/// What makes two denials "of the same kind": the same guard, named by its name and the file
/// that first defined it.
pub fn guard_key(hook: &Hook) -> String {
    format!("{}\n{}", hook.name, hook.source.file.display())
}

/// The backstop of one `pre_tool_use` dispatch: the turn's denials, and the tripped guards
/// whose filter matches the call.
pub(crate) struct Armed<'h> {
    threshold: u32,
    denials: Denials,
    tripped: Vec<&'h Hook>,
}

impl<'h> Armed<'h> {
    /// Before the pipeline: `None` when the backstop is off (`threshold` 0).
    pub(crate) fn arm(
        threshold: u32,
        denials: Denials,
        hooks: &[&'h Hook],
        call: (Option<&str>, Option<&Map<String, Value>>, &Path),
    ) -> Option<Armed<'h>> {
        (threshold > 0).then(|| Armed {
            tripped: tripped(hooks, &denials, threshold, call),
            threshold,
            denials,
        })
    }

    /// After the pipeline: also the guards a rewrite brought over the call, then [`settle`];
    /// the turn's denials go into the outcome.
    pub(crate) fn settle(
        mut self,
        hooks: &[&'h Hook],
        (tool, root): (Option<&str>, &Path),
        denied_by: Option<&Hook>,
        outcome: &mut Outcome,
    ) {
        if let Some(args) = &outcome.updated_input {
            let call = (tool, Some(args), root);
            for hook in tripped(hooks, &self.denials, self.threshold, call) {
                if !self.tripped.iter().any(|h| std::ptr::eq(*h, hook)) {
                    self.tripped.push(hook);
                }
            }
        }
        settle(
            self.threshold,
            &mut self.denials,
            &self.tripped,
            denied_by,
            outcome,
        );
        outcome.denials = Some(self.denials);
    }
}

/// The guards among `hooks` that denied `threshold` calls this turn and whose filter matches
/// the call as made (`args`). Stale guards never count.
fn tripped<'h>(
    hooks: &[&'h Hook],
    denials: &Denials,
    threshold: u32,
    call: (Option<&str>, Option<&Map<String, Value>>, &Path),
) -> Vec<&'h Hook> {
    let (tool, args, root) = call;
    hooks
        .iter()
        .copied()
        .filter(|h| h.stale.is_none() && h.enforce)
        .filter(|h| denials.tripped(&guard_key(h), threshold))
        .filter(|h| h.matches_call(tool, args, root))
        .collect()
}

/// After a `pre_tool_use` pipeline: count the guard that said no (`denied_by`), note it when
/// it reaches `threshold`, and put a call that `tripped` guards match, and that nothing
/// denied, to the human.
fn settle(
    threshold: u32,
    denials: &mut Denials,
    tripped: &[&Hook],
    denied_by: Option<&Hook>,
    outcome: &mut Outcome,
) {
    if let Some(hook) = denied_by.filter(|h| h.stale.is_none()) {
        let count = denials.record(guard_key(hook));
        if count == threshold {
            // A diagnostic, not a message: the guard's own reason and the answer's form (exit 2)
            // stay as they are. The user hears of the backstop when it asks.
            outcome.diagnostics.push(format!(
                "guard `{}` has now denied {count} calls this turn; until the turn ends, every \
                 call it matches asks the user first (denial_backstop = {threshold})",
                hook.name
            ));
        }
    }
    let Some(first) = tripped.first() else {
        return;
    };
    if outcome.blocked {
        return;
    }
    let mut reason = if denials.lost {
        format!(
            "the denial count of this session was lost (its store was deleted or cannot be \
             read), so guard `{}` ({}) counts as denied {threshold} times: a human must approve \
             this call (denial_backstop = {threshold})",
            first.name,
            first.source.file.display(),
        )
    } else {
        format!(
            "the model was denied {} times this turn by guard `{}` ({}), which matches this call \
             too; a human must approve it (denial_backstop = {threshold})",
            denials.count(&guard_key(first)),
            first.name,
            first.source.file.display(),
        )
    };
    if let (Some(Decision::Ask), Some(theirs)) = (outcome.decision, &outcome.reason) {
        reason = format!("{theirs}; and {reason}");
    }
    outcome.decision = Some(Decision::Ask);
    outcome.reason = Some(reason);
}

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
