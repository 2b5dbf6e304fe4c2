//! SIGINT, SIGTERM and SIGHUP to `ka-hooks`: end every running hook before exiting.
//!
//! Ctrl-C, or an agent killing its hook command at its own timeout, must not orphan the hooks
//! (each runs in its own process group, so the terminal's SIGINT never reaches them). [`install`]
//! (called by the CLI once it has read its arguments, never by the library on its own) sets a handler for the three signals
//! that cancels one process-wide [`CancelToken`], which the CLI puts in every
//! [`Request`](crate::Request) it dispatches. The dispatch then ends each running hook's group
//! (TERM, then KILL after [`KILL_GRACE`](crate::process::KILL_GRACE)) and returns, and the
//! binary exits with the conventional code, 128 + the signal (130, 143, 129). When no dispatch is
//! running (reading the payload, loading the configuration), no hook can be running either, and
//! the handler exits at once with that code.
//!
//! A signal that was ignored when `ka-hooks` started (`nohup`, a background job of a
//! non-interactive shell) stays ignored.

use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::OnceLock;

use crate::cancel::CancelToken;

/// The signals that interrupt `ka-hooks`.
pub const SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

static TOKEN: OnceLock<CancelToken> = OnceLock::new();
/// The answer when interrupted outside a dispatch under `--fail-closed` (see
/// [`block_when_interrupted`]): one record that is never changed nor freed, holding the
/// message's pointer and length together, so that the handler can never pair the pointer of
/// one message with the length of another.
static BLOCK_MESSAGE: AtomicPtr<&'static str> = AtomicPtr::new(std::ptr::null_mut());

/// Install the handler (once; later calls do nothing). Call it before dispatching.
pub fn install() {
    if TOKEN.set(CancelToken::new()).is_err() {
        return;
    }
    for signal in SIGNALS {
        // SAFETY: sigaction is given valid, zero-initialised structs owned by this frame; the
        // handler only touches atomics, write(2) and _exit(2), which are async-signal-safe.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(signal, std::ptr::null(), &mut old) != 0
                || old.sa_sigaction == libc::SIG_IGN
            {
                continue;
            }
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            libc::sigemptyset(&mut action.sa_mask);
            action.sa_flags = libc::SA_RESTART;
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
}

/// Under an adapter with `--fail-closed`: a signal that arrives while no dispatch runs (the
/// payload is being read, the configuration loaded) answers by printing `message` on stderr and
/// exiting 2, so the interrupted call is blocked like any other failure. (During a dispatch, the
/// adapter answers itself once the hooks have ended.)
#[cfg(feature = "cli")]
pub fn block_when_interrupted(message: &'static str) {
    // Leaked: the handler may read it at any moment from now on. The CLI sets it once.
    let record: &'static mut &'static str = Box::leak(Box::new(message));
    BLOCK_MESSAGE.store(record, Ordering::SeqCst);
}

/// The `--fail-closed` answer, if one was set. Async-signal-safe: one atomic load.
fn block_message() -> Option<&'static str> {
    let record = BLOCK_MESSAGE.load(Ordering::SeqCst);
    // SAFETY: a non-null pointer is a leaked `&'static &'static str` (block_when_interrupted),
    // written whole before it was published and never changed nor freed.
    (!record.is_null()).then(|| unsafe { *record })
}

/// The process-wide token the handler cancels, once [`install`] ran.
pub fn token() -> Option<CancelToken> {
    TOKEN.get().cloned()
}

/// The signal that interrupted `ka-hooks`, if one did.
#[cfg(feature = "cli")]
pub fn signal() -> Option<libc::c_int> {
    TOKEN.get().and_then(CancelToken::signal)
}

/// The exit code after `signal`: 128 + its number.
pub fn exit_code(signal: libc::c_int) -> u8 {
    u8::try_from(128 + signal).unwrap_or(u8::MAX)
}

extern "C" fn on_signal(signal: libc::c_int) {
    // errno is thread-local; saving and restoring it keeps the interrupted code's view (the
    // cancel token's write(2) may change it). `errno` reads and writes it through the C
    // library's own accessor (`__errno_location` on Linux, `__error` on macOS).
    let saved = errno::errno();
    match TOKEN.get() {
        Some(token) => {
            token.cancel_by_signal(signal);
            if token.watchers() == 0 {
                exit_now(signal);
            }
        }
        None => exit_now(signal),
    }
    errno::set_errno(saved);
}

/// No dispatch runs, so no hook does: exit at once, with the `--fail-closed` answer if one was
/// set. Async-signal-safe: atomics, write(2) and _exit(2) only.
fn exit_now(signal: libc::c_int) -> ! {
    let message = block_message();
    let code = match message {
        Some(_) => 2,
        None => libc::c_int::from(exit_code(signal)),
    };
    // SAFETY: `message` is a `&'static str`; write and _exit are async-signal-safe.
    unsafe {
        if let Some(message) = message {
            libc::write(libc::STDERR_FILENO, message.as_ptr().cast(), message.len());
        }
        libc::_exit(code)
    }
}

#[cfg(all(test, feature = "cli"))]
mod tests {
    use super::*;

    /// The handler reads the message while the CLI may be setting another: it must always get
    /// one whole message, never the pointer of one with the length of the other (which reads
    /// past the end of the shorter one).
    #[test]
    fn the_handler_never_pairs_one_messages_pointer_with_anothers_length() {
        static SHORT: &str = "short";
        static LONG: &str = "a much longer message than the short one";
        block_when_interrupted(SHORT);
        let setter = std::thread::spawn(|| {
            for round in 0..200_000 {
                block_when_interrupted(if round % 2 == 0 { LONG } else { SHORT });
            }
        });
        let mut torn = 0;
        while !setter.is_finished() {
            for _ in 0..1000 {
                let message = block_message().expect("set above");
                let whole = (message.as_ptr(), message.len());
                if whole != (SHORT.as_ptr(), SHORT.len()) && whole != (LONG.as_ptr(), LONG.len()) {
                    torn += 1;
                }
            }
        }
        setter.join().expect("the setter");
        assert_eq!(torn, 0, "messages read torn");
    }
}
