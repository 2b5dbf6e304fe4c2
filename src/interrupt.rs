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

use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::sync::OnceLock;

use crate::cancel::CancelToken;

/// The signals that interrupt `ka-hooks`.
pub const SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

static TOKEN: OnceLock<CancelToken> = OnceLock::new();
/// The answer when interrupted outside a dispatch under `--fail-closed` (see
/// [`block_when_interrupted`]): a static message, as pointer and length for the handler.
static BLOCK_MESSAGE: AtomicPtr<u8> = AtomicPtr::new(std::ptr::null_mut());
static BLOCK_MESSAGE_LEN: AtomicUsize = AtomicUsize::new(0);

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
    BLOCK_MESSAGE_LEN.store(message.len(), Ordering::SeqCst);
    BLOCK_MESSAGE.store(message.as_ptr().cast_mut(), Ordering::SeqCst);
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
    let message = BLOCK_MESSAGE.load(Ordering::SeqCst);
    let len = BLOCK_MESSAGE_LEN.load(Ordering::SeqCst);
    if !message.is_null() {
        // SAFETY: `message` and `len` describe a `&'static str` (block_when_interrupted); write
        // and _exit are async-signal-safe.
        unsafe {
            libc::write(libc::STDERR_FILENO, message.cast(), len);
            libc::_exit(2);
        }
    }
    // SAFETY: _exit is async-signal-safe.
    unsafe { libc::_exit(libc::c_int::from(exit_code(signal))) }
}
