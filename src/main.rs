//! The `ka-hooks` binary: parse arguments, call the library, choose the exit code in one place.
//!
//! The binary runs once per tool call, so its start-up is on the agent's hot path. It therefore
//! has a C `main` instead of Rust's `lang_start`, whose main-thread set-up reads the stack bounds
//! through `pthread_getattr_np`, which parses `/proc/self/maps` with `sscanf`, then installs a
//! SIGSEGV/SIGBUS handler on an alternate signal stack. Measured with callgrind on a run with no
//! matching hook (`benches/README.md`): 52k of 650k instructions (8%) of the static-pie build, 105k
//! of 896k (12%) of the PIE one. The things `lang_start` does that matter here are done below
//! (standard fds, SIGPIPE, flushing stdout).
//!
//! What is lost, exactly: Rust's stack-overflow report. A stack overflow still hits a guard page
//! (the kernel's gap below the main stack, glibc's guard page below each thread's), so it is never
//! silent memory corruption, but the process dies of a plain SIGSEGV instead of printing "thread
//! '...' has overflowed its stack" and aborting (SIGABRT); threads spawned later get no alternate
//! signal stack either. Nothing here recurses deeply (JSON nesting is capped by serde_json).
// The test harness brings its own `main`.
#![cfg_attr(not(test), no_main)]

#[cfg(not(test))]
use std::io::Write;

#[cfg(not(test))]
#[no_mangle]
/// # Safety
/// Only the C runtime calls this, with `argc` valid NUL-terminated strings in `argv`.
pub unsafe extern "C" fn main(argc: libc::c_int, argv: *const *const libc::c_char) -> libc::c_int {
    // SAFETY: both calls run before any thread exists. They only touch fds 0-2 and the SIGPIPE
    // disposition, exactly as Rust's own runtime start-up does.
    unsafe {
        open_closed_standard_fds();
        // A closed stdout must be an error (EPIPE), never a silent death by SIGPIPE.
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
    // SAFETY: the C runtime passes `argc` valid NUL-terminated strings in `argv`.
    let code = ka_hooks::cli::main(unsafe { args(argc, argv) });
    // Rust's stdout buffer is only flushed by `lang_start`'s exit path, so flush it here.
    let _ = std::io::stdout().flush();
    libc::c_int::from(code)
}

#[cfg(not(test))]
/// The command line, from `main`'s own arguments: `std::env::args_os` reads what glibc hands to
/// `.init_array` functions, which musl does not, so it would be empty in a musl build.
///
/// # Safety
/// `argv` holds `argc` valid NUL-terminated strings, as the C runtime passes them to `main`.
unsafe fn args(argc: libc::c_int, argv: *const *const libc::c_char) -> Vec<std::ffi::OsString> {
    use std::os::unix::ffi::OsStrExt;
    let count = usize::try_from(argc).unwrap_or(0);
    (0..count)
        .map(|i| *argv.add(i))
        .take_while(|arg| !arg.is_null())
        .map(|arg| std::ffi::OsStr::from_bytes(std::ffi::CStr::from_ptr(arg).to_bytes()).to_owned())
        .collect()
}

#[cfg(not(test))]
/// Reopen fds 0-2 on `/dev/null` if they are closed, so that pipes opened later (a hook's stdin,
/// say) never land on them and get mistaken for our own stdout.
///
/// # Safety
/// Call before other threads exist.
unsafe fn open_closed_standard_fds() {
    let mut fds = [0, 1, 2].map(|fd| libc::pollfd {
        fd,
        events: 0,
        revents: 0,
    });
    while libc::poll(fds.as_mut_ptr(), 3, 0) == -1 {
        if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return;
        }
    }
    for pfd in fds {
        if pfd.revents & libc::POLLNVAL != 0 {
            // open() returns the lowest free fd, which is this closed one.
            libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        }
    }
}
