//! A started hook: its pid, our ends of its three pipes, and its exit status once reaped.
//!
//! Both ways of starting a hook ([`super::spawn`]) end in this one type, so the poll loop and
//! the thread fallback watch a hook the same way whichever started it. It waits with
//! `waitpid` on its own pid only, never on any child (`-1`), and, like `std`'s `Child`, a drop
//! neither kills nor reaps: the runner always does both itself.

use std::{
    fs::File,
    io,
    os::{fd::OwnedFd, unix::process::ExitStatusExt},
    process::{Child, ExitStatus},
};

use rustix::process::WaitOptions;

/// A hook process we started and have not given up.
#[derive(Debug)]
pub(super) struct HookChild {
    /// Positive: a child's pid (and its process group's id).
    pid: libc::pid_t,
    /// Our end of its stdin (write).
    pub(super) stdin: Option<File>,
    /// Our end of its stdout (read).
    pub(super) stdout: Option<File>,
    /// Our end of its stderr (read).
    pub(super) stderr: Option<File>,
    /// Set once reaped: asking again returns it, as `std` does.
    status: Option<ExitStatus>,
}

impl HookChild {
    /// A child just started with these pipe ends.
    #[cfg(target_os = "linux")]
    pub(super) fn new(pid: libc::pid_t, stdin: File, stdout: File, stderr: File) -> HookChild {
        HookChild {
            pid,
            stdin: Some(stdin),
            stdout: Some(stdout),
            stderr: Some(stderr),
            status: None,
        }
    }

    /// Take over a child that `std` started (with all three streams piped). The `Child` is
    /// dropped, which neither kills nor reaps it; from here on it is waited for by pid.
    pub(super) fn from_std(mut child: Child) -> HookChild {
        // Pids are positive `pid_t`s; `Child::id` just widened one to u32.
        let pid = child.id() as libc::pid_t;
        fn file(pipe: impl Into<OwnedFd>) -> File {
            File::from(pipe.into())
        }
        HookChild {
            pid,
            stdin: child.stdin.take().map(file),
            stdout: child.stdout.take().map(file),
            stderr: child.stderr.take().map(file),
            status: None,
        }
    }

    /// The pid, which is also the hook's process-group id.
    pub(super) fn id(&self) -> u32 {
        // Positive (see the field).
        self.pid as u32
    }

    /// Reap it if it has ended; `None` while it runs.
    #[cfg(target_os = "linux")]
    pub(super) fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        self.reap(WaitOptions::NOHANG)
    }

    /// Block until it has ended, and reap it.
    pub(super) fn wait(&mut self) -> io::Result<ExitStatus> {
        loop {
            if let Some(status) = self.reap(WaitOptions::empty())? {
                return Ok(status);
            }
        }
    }

    /// One `waitpid(pid, options)`, retried on EINTR.
    fn reap(&mut self, options: WaitOptions) -> io::Result<Option<ExitStatus>> {
        if let Some(status) = self.status {
            return Ok(Some(status));
        }
        let pid = rustix::process::Pid::from_raw(self.pid)
            .ok_or_else(|| io::Error::from_raw_os_error(libc::ECHILD))?;
        loop {
            match rustix::process::waitpid(Some(pid), options) {
                Ok(Some((_, raw))) => {
                    let status = ExitStatus::from_raw(raw.as_raw());
                    self.status = Some(status);
                    return Ok(Some(status));
                }
                Ok(None) => return Ok(None),
                Err(rustix::io::Errno::INTR) => {}
                Err(err) => return Err(err.into()),
            }
        }
    }
}
