//! Cancelling a dispatch in flight: [`CancelToken`].
//!
//! An agent that embeds the library cancels a dispatch when the user pressed Esc or the turn was
//! aborted: it puts a clone of a token in the [`Request`](crate::Request) and calls
//! [`CancelToken::cancel`] from any thread. Every running hook's process group then gets `TERM`,
//! then `KILL` after [`KILL_GRACE`](crate::process::KILL_GRACE); hooks not started yet never
//! start; and `dispatch` returns with those hooks reported as
//! [`Status::Cancelled`](crate::outcome::Status::Cancelled) and [`Outcome::cancelled`] set. A
//! cancelled `pre_tool_use` or `user_prompt_submit` dispatch is blocked, with a reason saying it
//! was cancelled: a guard that was cut short never reads as allowed. A
//! [`Request::deadline`](crate::Request::deadline) does the same at an instant.
//!
//! How: the token owns a pipe whose read end becomes readable, and stays so, once it is
//! cancelled; each hook's `poll` loop watches it next to the hook's own descriptors, so a cancel
//! is noticed at once, without polling on a timer. Cancelling is a store and a one-byte `write`,
//! which is also safe from a signal handler (`ka-hooks` cancels its dispatch that way on
//! SIGINT, SIGTERM and SIGHUP).
//!
//! [`Outcome::cancelled`]: crate::Outcome::cancelled

use std::fmt;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};

use crate::signal::signal_name;

/// A handle that cancels every dispatch it was given to. Cheap to clone; all clones share one
/// state. Cancelling is permanent: use a new token for the next turn.
#[derive(Clone)]
pub struct CancelToken {
    inner: Arc<Inner>,
}

struct Inner {
    /// 0: not cancelled; [`BY_CALLER`]: [`CancelToken::cancel`]; > 0: the signal that
    /// interrupted `ka-hooks`.
    why: AtomicI32,
    /// Read end (watched by the poll loops) and write end; `None` when no pipe could be made
    /// (out of descriptors): the loops then look at `why` every [`CHECK_EVERY_MS`].
    pipe: Option<(OwnedFd, OwnedFd)>,
    /// Dispatches watching this token right now.
    watchers: AtomicUsize,
    /// Tokens cancelled with this one ([`CancelToken::linked`]): one dispatch's own token,
    /// cancelled by the session's or the host's, never the other way round.
    links: Mutex<Vec<Weak<Inner>>>,
}

const BY_CALLER: i32 = -1;
/// How often a loop without the token's pipe looks at the token.
pub(crate) const CHECK_EVERY_MS: i32 = 50;

impl CancelToken {
    /// A token that is not cancelled.
    pub fn new() -> CancelToken {
        CancelToken {
            inner: Arc::new(Inner {
                why: AtomicI32::new(0),
                pipe: nonblocking_pipe(),
                watchers: AtomicUsize::new(0),
                links: Mutex::new(Vec::new()),
            }),
        }
    }

    /// A new token that is cancelled when this one is (now, if it already is), for one
    /// dispatch: cancelling it leaves this one, and every other token linked to it, alone.
    pub(crate) fn linked(&self) -> CancelToken {
        let child = CancelToken::new();
        self.link(&child);
        child
    }

    /// Cancel `child` when this token is cancelled (at once, if it already is).
    pub(crate) fn link(&self, child: &CancelToken) {
        let mut links = self.inner.links.lock().unwrap_or_else(|e| e.into_inner());
        let why = self.inner.why.load(Ordering::SeqCst);
        if why != 0 {
            drop(links);
            child.cancel_because(why);
            return;
        }
        // Dispatches that ended dropped their tokens: forget them.
        links.retain(|l| l.strong_count() > 0);
        links.push(Arc::downgrade(&child.inner));
    }

    /// Cancel every dispatch that holds this token (or a clone), now and later. Idempotent, and
    /// callable from any thread.
    pub fn cancel(&self) {
        self.cancel_because(BY_CALLER);
        self.cancel_links();
    }

    /// Cancel the tokens [`linked`](Self::linked) to this one, with its reason. (Not from a
    /// signal handler: it takes a lock. `ka-hooks`' own token, cancelled by signals, has no
    /// links.)
    fn cancel_links(&self) {
        let why = self.inner.why.load(Ordering::SeqCst);
        let links =
            std::mem::take(&mut *self.inner.links.lock().unwrap_or_else(|e| e.into_inner()));
        for link in links.iter().filter_map(Weak::upgrade) {
            let link = CancelToken { inner: link };
            link.cancel_because(why);
            link.cancel_links();
        }
    }

    /// Whether [`cancel`](Self::cancel) was called (or a signal interrupted `ka-hooks`).
    pub fn is_cancelled(&self) -> bool {
        self.inner.why.load(Ordering::SeqCst) != 0
    }

    /// The signal that cancelled this token, when a signal did (`ka-hooks`' own token).
    pub fn signal(&self) -> Option<i32> {
        Some(self.inner.why.load(Ordering::SeqCst)).filter(|&s| s > 0)
    }

    /// Why it was cancelled, in words: `cancelled by the caller`, `interrupted by SIGINT`.
    pub fn reason(&self) -> Option<String> {
        match self.inner.why.load(Ordering::SeqCst) {
            0 => None,
            BY_CALLER => Some("cancelled by the caller".to_owned()),
            sig => Some(match signal_name(sig) {
                Some(name) => format!("interrupted by {name}"),
                None => format!("interrupted by signal {sig}"),
            }),
        }
    }

    /// Cancel because of `signal`. Async-signal-safe: atomics and one `write(2)`, no allocation,
    /// no lock.
    #[cfg(feature = "cli")]
    pub(crate) fn cancel_by_signal(&self, signal: i32) {
        self.cancel_because(signal);
    }

    fn cancel_because(&self, why: i32) {
        // The first reason stays.
        let _ = self
            .inner
            .why
            .compare_exchange(0, why, Ordering::SeqCst, Ordering::SeqCst);
        if let Some((_, write_end)) = &self.inner.pipe {
            // A full pipe (EAGAIN) is fine: it is readable already.
            let _ = rustix::io::write(write_end, &[1]);
        }
    }

    /// The descriptor that is readable once cancelled, for the poll loop (Linux). The thread
    /// fallback looks at the token every [`CHECK_EVERY_MS`] instead.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub(crate) fn fd(&self) -> Option<RawFd> {
        self.inner
            .pipe
            .as_ref()
            .map(|(read_end, _)| read_end.as_raw_fd())
    }

    /// Count a dispatch as watching this token until the guard drops.
    pub(crate) fn watch(&self) -> Watching {
        self.inner.watchers.fetch_add(1, Ordering::SeqCst);
        Watching(self.clone())
    }

    /// Dispatches watching this token right now.
    #[cfg(feature = "cli")]
    pub(crate) fn watchers(&self) -> usize {
        self.inner.watchers.load(Ordering::SeqCst)
    }
}

impl Default for CancelToken {
    fn default() -> Self {
        CancelToken::new()
    }
}

impl fmt::Debug for CancelToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CancelToken")
            .field("cancelled", &self.reason())
            .finish()
    }
}

/// A dispatch watching a token; see [`CancelToken::watch`].
pub(crate) struct Watching(CancelToken);

impl Drop for Watching {
    fn drop(&mut self) {
        self.0.inner.watchers.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A pipe with both ends non-blocking and close-on-exec (hooks must not inherit it).
fn nonblocking_pipe() -> Option<(OwnedFd, OwnedFd)> {
    // Atomically close-on-exec where pipe2 exists, so a hook spawned by another thread at the
    // same moment cannot inherit it.
    #[cfg(target_os = "linux")]
    {
        use rustix::pipe::PipeFlags;
        rustix::pipe::pipe_with(PipeFlags::CLOEXEC | PipeFlags::NONBLOCK).ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        let (read_end, write_end) = rustix::pipe::pipe().ok()?;
        for fd in [&read_end, &write_end] {
            let status = rustix::fs::fcntl_getfl(fd).ok()?;
            rustix::fs::fcntl_setfl(fd, status | rustix::fs::OFlags::NONBLOCK).ok()?;
            let flags = rustix::io::fcntl_getfd(fd).ok()?;
            rustix::io::fcntl_setfd(fd, flags | rustix::io::FdFlags::CLOEXEC).ok()?;
        }
        Some((read_end, write_end))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_token_is_not_cancelled_and_cancel_is_shared_by_clones() {
        let token = CancelToken::new();
        let clone = token.clone();
        assert!(!clone.is_cancelled());
        assert_eq!(token.reason(), None);
        token.cancel();
        token.cancel();
        assert!(clone.is_cancelled());
        assert_eq!(clone.reason().as_deref(), Some("cancelled by the caller"));
        assert_eq!(clone.signal(), None);
    }

    #[test]
    fn the_first_reason_stays() {
        let token = CancelToken::new();
        token.cancel_by_signal(libc::SIGTERM);
        token.cancel();
        assert_eq!(token.signal(), Some(libc::SIGTERM));
        assert_eq!(token.reason().as_deref(), Some("interrupted by SIGTERM"));
    }

    #[test]
    fn the_pipe_becomes_readable_on_cancel() {
        let token = CancelToken::new();
        let fd = token.fd().expect("a pipe");
        let readable = |fd| {
            let mut p = libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd, zero timeout.
            unsafe { libc::poll(&mut p, 1, 0) == 1 }
        };
        assert!(!readable(fd));
        token.cancel();
        assert!(readable(fd));
        assert!(readable(fd), "stays readable for every watcher");
    }

    #[test]
    fn a_linked_token_is_cancelled_by_its_parent_and_never_cancels_it() {
        let session = CancelToken::new();
        let (one, two) = (session.linked(), session.linked());
        one.cancel();
        assert!(one.is_cancelled());
        assert!(
            !session.is_cancelled(),
            "one dispatch cancelled the session"
        );
        assert!(!two.is_cancelled(), "one dispatch cancelled another");
        session.cancel();
        assert!(two.is_cancelled());
        let later = session.linked();
        assert_eq!(later.reason().as_deref(), Some("cancelled by the caller"));
    }

    #[test]
    fn watchers_are_counted_while_the_guard_lives() {
        let token = CancelToken::new();
        let guard = token.watch();
        assert_eq!(token.watchers(), 1);
        drop(guard);
        assert_eq!(token.watchers(), 0);
    }
}
