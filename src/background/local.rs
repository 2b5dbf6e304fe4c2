//! Async hooks in process (the library): a reaper thread takes the async hooks of each dispatch
//! from a channel, prepares them and runs each on a thread of its own; results wait in memory
//! for the next dispatch of their session.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};

use super::{Batch, Delivered, Job};
use crate::cancel::CancelToken;

/// Results not delivered yet, by session (`""`: calls without a session id).
static MAILBOX: Mutex<Option<HashMap<String, Vec<Delivered>>>> = Mutex::new(None);
/// How many results wait in [`MAILBOX`]: a dispatch with none to collect takes no lock.
static WAITING: AtomicUsize = AtomicUsize::new(0);
/// Most results kept per session; past it the oldest go (a host that never dispatches again for
/// a session must not grow memory without bound).
const MAX_KEPT: usize = 256;

/// The reaper's inbox.
static REAPER: OnceLock<Sender<Batch>> = OnceLock::new();

/// Runs still going, by supersede key.
static RUNNING: Mutex<Option<HashMap<String, Running>>> = Mutex::new(None);
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Sessions that were shut down ([`end_session`]): a job of theirs still queued never starts.
static ENDED: Mutex<Option<std::collections::HashSet<String>>> = Mutex::new(None);
/// Signalled whenever a result is kept ([`wait`]).
static ARRIVED: Condvar = Condvar::new();

#[derive(Clone)]
struct Running {
    id: u64,
    session: String,
    cancel: CancelToken,
    superseded: Arc<AtomicBool>,
    done: Arc<(Mutex<bool>, Condvar)>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A thread that panicked while holding the lock left plain data behind: still usable.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Hand `batch` to the reaper (started on first use).
pub(super) fn start(batch: Batch) -> Result<(), String> {
    let inbox = match REAPER.get() {
        Some(inbox) => inbox,
        None => {
            let (tx, rx) = mpsc::channel::<Batch>();
            std::thread::Builder::new()
                .name("ka-hooks-reaper".into())
                .spawn(move || {
                    for batch in rx {
                        let (jobs, noticed) = batch.jobs();
                        for mut job in jobs {
                            // No dispatch reported it: it comes with the result.
                            job.noticed.extend(noticed.iter().cloned());
                            run(job);
                        }
                    }
                })
                .map_err(|e| format!("cannot start the background reaper thread: {e}"))?;
            REAPER.get_or_init(|| tx)
        }
    };
    inbox
        .send(batch)
        .map_err(|_| "the background reaper thread is gone".to_owned())
}

/// On the reaper thread: supersede an older run of the same key, then run `job` on its own thread.
fn run(job: Job) {
    let key = job.key();
    let session = job.session.clone().unwrap_or_default();
    if lock(&ENDED)
        .as_ref()
        .is_some_and(|ended| ended.contains(&session))
    {
        keep(
            session,
            job.failed("its session was shut down before it started".into()),
        );
        return;
    }
    let me = Running {
        id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
        session,
        cancel: CancelToken::new(),
        superseded: Arc::new(AtomicBool::new(false)),
        done: Arc::new((Mutex::new(false), Condvar::new())),
    };
    let older = lock(&RUNNING)
        .get_or_insert_with(HashMap::new)
        .insert(key.clone(), me.clone());
    let worker = me.clone();
    // Kept to report a thread that cannot start (the job itself moves into it).
    let spare = job.clone();
    let worker_key = key.clone();
    let spawned = std::thread::Builder::new()
        .name("ka-hooks-async".into())
        .spawn(move || {
            if let Some(older) = older {
                older.superseded.store(true, Ordering::SeqCst);
                older.cancel.cancel();
                // Start once the older run's process group is gone.
                let (done, cv) = &*older.done;
                let mut finished = lock(done);
                while !*finished {
                    finished = cv.wait(finished).unwrap_or_else(|e| e.into_inner());
                }
            }
            let session = job.session.clone().unwrap_or_default();
            let flag = Arc::clone(&worker.superseded);
            let delivered = job.execute(&worker.cancel, move || flag.load(Ordering::SeqCst));
            finish(&worker_key, &worker, session, delivered);
        });
    if let Err(e) = spawned {
        let session = spare.session.clone().unwrap_or_default();
        let why = format!("cannot start a thread for the async hook: {e}");
        finish(&key, &me, session, spare.failed(why));
    }
}

fn finish(key: &str, me: &Running, session: String, delivered: Delivered) {
    {
        let mut running = lock(&RUNNING);
        if let Some(map) = running.as_mut() {
            if map.get(key).is_some_and(|r| r.id == me.id) {
                map.remove(key);
            }
        }
    }
    keep(session, delivered);
    let (done, cv) = &*me.done;
    *lock(done) = true;
    cv.notify_all();
}

/// Keep a result for its session's next dispatch.
fn keep(session: String, delivered: Delivered) {
    let mut mailbox = lock(&MAILBOX);
    let list = mailbox
        .get_or_insert_with(HashMap::new)
        .entry(session)
        .or_default();
    list.push(delivered);
    if list.len() > MAX_KEPT {
        list.remove(0);
    } else {
        WAITING.fetch_add(1, Ordering::SeqCst);
    }
    ARRIVED.notify_all();
}

/// Wait up to `timeout` for a result of `session`, then take what waits (maybe nothing).
pub(super) fn wait(session: &str, timeout: std::time::Duration) -> Vec<Delivered> {
    let end = std::time::Instant::now() + timeout;
    let mut mailbox = lock(&MAILBOX);
    loop {
        let has = mailbox
            .as_ref()
            .and_then(|m| m.get(session))
            .is_some_and(|l| !l.is_empty());
        let left = end.saturating_duration_since(std::time::Instant::now());
        if has || left.is_zero() {
            break;
        }
        mailbox = ARRIVED
            .wait_timeout(mailbox, left)
            .map(|(guard, _)| guard)
            .unwrap_or_else(|e| e.into_inner().0);
    }
    let taken = mailbox
        .as_mut()
        .and_then(|m| m.remove(session))
        .unwrap_or_default();
    WAITING.fetch_sub(taken.len(), Ordering::SeqCst);
    taken
}

/// A session starts (again): its jobs run.
pub(super) fn begin_session(session: &str) {
    if let Some(ended) = lock(&ENDED).as_mut() {
        ended.remove(session);
    }
}

/// End every async run of `session`: running ones are cancelled (their process groups get TERM,
/// then KILL) and waited for; queued ones never start. Returns how many were running.
pub(super) fn end_session(session: &str) -> usize {
    lock(&ENDED)
        .get_or_insert_with(Default::default)
        .insert(session.to_owned());
    let mine: Vec<Running> = lock(&RUNNING)
        .as_ref()
        .map(|m| {
            m.values()
                .filter(|r| r.session == session)
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    for run in &mine {
        run.cancel.cancel();
    }
    for run in &mine {
        let (done, cv) = &*run.done;
        let mut finished = lock(done);
        while !*finished {
            finished = cv.wait(finished).unwrap_or_else(|e| e.into_inner());
        }
    }
    mine.len()
}

/// Take the results waiting for `session`.
pub(super) fn collect(session: Option<&str>) -> Vec<Delivered> {
    if WAITING.load(Ordering::SeqCst) == 0 {
        return Vec::new();
    }
    let mut mailbox = lock(&MAILBOX);
    let taken = mailbox
        .as_mut()
        .and_then(|m| m.remove(session.unwrap_or("")))
        .unwrap_or_default();
    WAITING.fetch_sub(taken.len(), Ordering::SeqCst);
    taken
}
