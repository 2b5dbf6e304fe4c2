//! How many times stop hooks kept one turn going, so `[hook_settings] max_continuations` can cap
//! them: each continuation counts one, per turn; past the cap the request is recorded but not
//! applied. A host counts with [`Turn`]; the adapters keep the count in the data dir.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::event::Event;

/// The continuations of one turn.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Turn {
    /// Continuations so far: what `max_continuations` caps.
    pub count: u32,
    /// Continuations that really happened (each counts one): what messages show.
    #[serde(default)]
    pub times: u32,
    /// The text of the last continuation.
    pub last: Option<String>,
}

impl Turn {
    /// Records one applied continuation with `text`: one more, whether or not `text` repeats
    /// the previous one.
    pub fn record(&mut self, text: &str) {
        self.count = self.count.saturating_add(1);
        self.times = self.times.saturating_add(1);
        self.last = Some(text.to_owned());
    }
}

/// The most turn files kept; past it the oldest go.
const MAX_FILES: usize = 256;
/// A turn file older than this is stale (its session ended without a session end event).
const MAX_AGE: Duration = Duration::from_secs(24 * 60 * 60);

/// The file whose exclusive lock guards every read-modify-write of a store.
const LOCK_FILE: &str = "lock";

/// The largest kept file read: far above a real one.
const MAX_FILE_BYTES: u64 = 1 << 20;

/// Turn counts kept in `<data dir>/continuations/`, one small JSON file per session and scope.
#[derive(Debug, Clone)]
pub struct Store {
    dir: PathBuf,
}

impl Store {
    /// The store under `data_dir`.
    pub fn new(data_dir: &Path) -> Store {
        Store::named(data_dir, "continuations")
    }

    /// A store of other per-turn state, in `<data dir>/<name>/`.
    pub fn named(data_dir: &Path, name: &str) -> Store {
        Store {
            dir: data_dir.join(name),
        }
    }

    fn file(&self, session: &str, scope: &str) -> PathBuf {
        self.dir
            .join(format!("{}-{}.json", hash(session), &hash(scope)[..16]))
    }

    /// The turn of `session` (and `scope`: who is stopping); a fresh one when none is kept or
    /// the file is unreadable. An unreadable count reads as zero, so the cap can be reached
    /// later but never earlier than set.
    pub fn load(&self, session: &str, scope: &str) -> Turn {
        self.read(session, scope)
    }

    /// The state kept for `session` and `scope`; the default when none is kept or the file is
    /// unreadable (a symlink, not a regular file, not this shape).
    pub fn read<T: DeserializeOwned + Default>(&self, session: &str, scope: &str) -> T {
        crate::trust::read_regular(&self.file(session, scope), MAX_FILE_BYTES)
            .ok()
            .flatten()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }

    /// Keeps `turn` for `session` and `scope`, and prunes old and surplus files.
    #[cfg(test)]
    fn save(&self, session: &str, scope: &str, turn: &Turn) -> Result<(), String> {
        let _lock = self.lock()?;
        self.write_locked(session, scope, turn)
    }

    /// The state kept for `session` and `scope`: `None` when none is kept, an error when the
    /// file cannot be read (a symlink, not a regular file, not this shape).
    pub(crate) fn read_checked<T: DeserializeOwned>(
        &self,
        session: &str,
        scope: &str,
    ) -> Result<Option<T>, String> {
        let file = self.file(session, scope);
        match crate::trust::read_regular(&file, MAX_FILE_BYTES) {
            Ok(None) => Ok(None),
            Ok(Some(bytes)) => serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|e| format!("{}: {e}", file.display())),
            Err(e) => Err(format!("{}: {e}", file.display())),
        }
    }

    /// Read-modify-write the state of `session` and `scope` under the store's exclusive lock:
    /// `change` sees the state as it is on disk now, and what it leaves is kept. Parallel hook
    /// processes of one session never lose each other's updates.
    pub(crate) fn update<T, R>(
        &self,
        session: &str,
        scope: &str,
        change: impl FnOnce(&mut T) -> R,
    ) -> Result<R, String>
    where
        T: Serialize + DeserializeOwned + Default,
    {
        let _lock = self.lock()?;
        let mut state = self.read(session, scope);
        let result = change(&mut state);
        self.write_locked(session, scope, &state)?;
        Ok(result)
    }

    /// The store's folder, created; it must not be a symlink (it would send writes elsewhere).
    fn ensure_dir(&self) -> Result<(), String> {
        fs::create_dir_all(&self.dir)
            .map_err(|e| format!("cannot create {}: {e}", self.dir.display()))?;
        if fs::symlink_metadata(&self.dir).is_ok_and(|m| !m.is_dir()) {
            return Err(format!(
                "{} is not a directory (a symlink?); remove it",
                self.dir.display()
            ));
        }
        Ok(())
    }

    /// The store's exclusive lock, held until the returned file is dropped. The lock file is
    /// opened without following a symlink.
    fn lock(&self) -> Result<fs::File, String> {
        self.ensure_dir()?;
        let path = self.dir.join(LOCK_FILE);
        let file = crate::trust::open_nofollow(&path)
            .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        file.lock()
            .map_err(|e| format!("cannot lock {}: {e}", path.display()))?;
        Ok(file)
    }

    /// Keeps `state` for `session` and `scope` (the caller holds the lock), and prunes old and
    /// surplus files.
    fn write_locked<T: Serialize>(
        &self,
        session: &str,
        scope: &str,
        state: &T,
    ) -> Result<(), String> {
        let file = self.file(session, scope);
        let bytes = serde_json::to_vec(state).map_err(|e| e.to_string())?;
        let mut tmp = tempfile::NamedTempFile::new_in(&self.dir)
            .map_err(|e| format!("cannot write in {}: {e}", self.dir.display()))?;
        std::io::Write::write_all(tmp.as_file_mut(), &bytes)
            .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
        tmp.persist(&file)
            .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
        self.prune();
        Ok(())
    }

    /// Forgets `session`'s turn for `scope`.
    pub fn reset(&self, session: &str, scope: &str) {
        let _lock = self.lock();
        let _ = fs::remove_file(self.file(session, scope));
    }

    /// Forgets every turn of `session` (its session ended).
    pub fn end_session(&self, session: &str) {
        let _lock = self.lock();
        let prefix = format!("{}-", hash(session));
        for path in self.files() {
            let ours = path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&prefix));
            if ours {
                let _ = fs::remove_file(path);
            }
        }
    }

    fn files(&self) -> Vec<PathBuf> {
        fs::read_dir(&self.dir)
            .map(|entries| {
                entries
                    .filter_map(Result::ok)
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|x| x == "json"))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Removes files older than [`MAX_AGE`], then the oldest beyond [`MAX_FILES`].
    fn prune(&self) {
        let now = SystemTime::now();
        let mut aged: Vec<(SystemTime, PathBuf)> = self
            .files()
            .into_iter()
            .filter_map(|p| Some((fs::metadata(&p).ok()?.modified().ok()?, p)))
            .collect();
        aged.retain(|(modified, path)| {
            let stale = now.duration_since(*modified).is_ok_and(|age| age > MAX_AGE);
            if stale {
                let _ = fs::remove_file(path);
            }
            !stale
        });
        if aged.len() > MAX_FILES {
            aged.sort();
            for (_, path) in &aged[..aged.len() - MAX_FILES] {
                let _ = fs::remove_file(path);
            }
        }
    }
}

/// One adapter run's continuation count: loaded before the dispatch (and written into the
/// payload as `continuations`), recorded after it when the hooks asked to keep going.
#[derive(Debug)]
pub struct Tracker {
    store: Store,
    session: String,
    scope: String,
    turn: Turn,
}

impl Tracker {
    /// Reads the count for this event's session and scope into `payload["continuations"]`.
    /// Also: a new prompt starts a new turn (the main scope is reset); a session end forgets
    /// the session. `None` when the event keeps no count or the payload names no session.
    pub fn start(
        data_dir: &Path,
        event: Event,
        payload: &mut Map<String, Value>,
    ) -> Option<Tracker> {
        let session = payload.get("session_id")?.as_str()?.to_owned();
        let store = Store::new(data_dir);
        match event {
            Event::SessionEnd => store.end_session(&session),
            // GitHub Copilot sends a stop hook's continuation back as a prompt: that prompt
            // goes on with the turn and must not start its count over.
            Event::UserPromptSubmit if !continues(&store, &session, payload) => {
                store.reset(&session, MAIN)
            }
            _ => {}
        }
        let scope = scope(event, payload)?;
        // Claude Code, Codex and Gemini CLI set `stop_hook_active` once a stop hook made the
        // turn go on; when it is false, this is the turn's first stop and its count starts over.
        // TeammateIdle and TaskCompleted carry no such flag: their count runs for the session.
        let fresh = event == Event::Stop || event == Event::SubagentStop;
        let active = payload.get("stop_hook_active") == Some(&Value::Bool(true));
        if fresh && !active {
            store.reset(&session, &scope);
        }
        let turn = store.load(&session, &scope);
        payload.insert("continuations".into(), Value::Number(turn.count.into()));
        Some(Tracker {
            store,
            session,
            scope,
            turn,
        })
    }

    /// How many times this turn really continued, for [`Request::continued`](crate::Request).
    pub fn continued(&self) -> u32 {
        self.turn.times
    }

    /// The hooks kept the agent going with `text`: count it, on the count as kept now (another
    /// hook process of the session may have counted since this one started).
    pub(crate) fn record(self, text: &str) -> Result<(), String> {
        self.store
            .update(&self.session, &self.scope, |turn: &mut Turn| {
                turn.record(text)
            })
    }

    /// After the dispatch: count the continuation when the outcome keeps the agent going and
    /// the host applies it (`applied`). The one place the adapters and `ka-hooks run` count.
    pub(crate) fn finish(self, outcome: &crate::Outcome, applied: bool) -> Result<(), String> {
        match (&outcome.keep_going, applied) {
            (Some(text), true) => self.record(text),
            _ => Ok(()),
        }
    }
}

const MAIN: &str = "main";

/// Whether the prompt of `payload` is the text of the turn's last continuation (an agent that
/// sends it as a prompt, as GitHub Copilot does), rather than a new prompt of the user.
fn continues(store: &Store, session: &str, payload: &Map<String, Value>) -> bool {
    let Some(prompt) = payload.get("prompt").and_then(Value::as_str) else {
        return false;
    };
    let turn = store.load(session, MAIN);
    turn.last
        .as_deref()
        .map(str::trim)
        .is_some_and(|last| !last.is_empty() && prompt.contains(last))
}

/// Who is about to stop, for stop-like events: the main agent, a subagent, a teammate, a task.
fn scope(event: Event, payload: &Map<String, Value>) -> Option<String> {
    let field = |key: &str| {
        payload
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    match event {
        Event::Stop => Some(MAIN.to_owned()),
        Event::SubagentStop => Some(format!("subagent {}", field("agent_id"))),
        Event::TeammateIdle => Some(format!("teammate {}", field("teammate_name"))),
        Event::TaskCompleted => Some(format!("task {}", field("task_id"))),
        _ => None,
    }
}

fn hash(text: &str) -> String {
    crate::trust::content_hash(text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_text_counts_once() {
        let mut turn = Turn::default();
        turn.record("tests fail");
        assert_eq!(turn.count, 1);
        turn.record("tests fail");
        assert_eq!(turn.count, 2);
        turn.record("one test fails");
        assert_eq!(turn.count, 3);
        assert_eq!(turn.times, 3, "what happened, each once");
    }

    #[test]
    fn store_keeps_resets_and_ends_sessions() -> Result<(), String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let store = Store::new(dir.path());
        let mut turn = Turn::default();
        turn.record("again");
        store.save("s1", "main", &turn)?;
        store.save("s1", "subagent a", &turn)?;
        store.save("s2", "main", &turn)?;
        assert_eq!(store.load("s1", "main"), turn);
        store.reset("s1", "main");
        assert_eq!(store.load("s1", "main"), Turn::default());
        assert_eq!(store.load("s1", "subagent a"), turn);
        store.end_session("s1");
        assert_eq!(store.load("s1", "subagent a"), Turn::default());
        assert_eq!(store.load("s2", "main"), turn);
        Ok(())
    }

    #[test]
    fn parallel_continuations_are_all_counted() -> Result<(), String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let threads: Vec<_> = (0..8)
            .map(|i| {
                let data = dir.path().to_path_buf();
                std::thread::spawn(move || -> Result<(), String> {
                    for j in 0..5 {
                        let mut payload = Map::new();
                        payload.insert("session_id".into(), Value::from("s1"));
                        payload.insert("stop_hook_active".into(), Value::Bool(true));
                        let tracker =
                            Tracker::start(&data, Event::Stop, &mut payload).ok_or("a session")?;
                        tracker.record(&format!("step {i} {j}"))?;
                    }
                    Ok(())
                })
            })
            .collect();
        for thread in threads {
            thread.join().map_err(|_| "a thread panicked")??;
        }
        let turn = Store::new(dir.path()).load("s1", MAIN);
        assert_eq!(turn.times, 40, "{turn:?}");
        Ok(())
    }

    #[test]
    fn store_is_bounded() -> Result<(), String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let store = Store::new(dir.path());
        for i in 0..MAX_FILES + 10 {
            store.save(&format!("s{i}"), "main", &Turn::default())?;
        }
        assert!(store.files().len() <= MAX_FILES);
        Ok(())
    }

    #[test]
    fn a_session_id_cannot_name_a_path() {
        let store = Store::new(Path::new("/data"));
        let file = store.file("../../etc/passwd", "main");
        assert_eq!(file.parent(), Some(Path::new("/data/continuations")));
    }
}
