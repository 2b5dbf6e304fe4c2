//! Hooks die with their host, even when the host is killed by SIGKILL or ends with
//! `process::exit` while a hook runs.
//!
//! Every hook runs in a process group of its own ([`crate::process`]), so a host that dies leaves
//! it reparented to init, running with no timeout. On the first hook it starts, a process starts
//! one **watchdog**: a small `/bin/sh` loop in a process group of its own (so the host's Ctrl-C
//! does not end it first), ignoring SIGINT, SIGHUP, SIGTERM and SIGQUIT, whose stdin is the read
//! end of a pipe that only this process holds (the write end is close-on-exec, so no hook
//! inherits it). Each hook's process group is registered with it when it starts (`+<pgid>`) and
//! removed once the runner has ended the group (`-<pgid>`). When this process dies, however it
//! dies, the kernel closes the write end; the watchdog reads end-of-file and sends SIGKILL to
//! every group still registered, then exits.
//!
//! The watchdog is plain POSIX (`sh`, `read`, `kill -s KILL -- -<pgid>`), so macOS gets exactly the
//! same guarantee: no `prctl(PR_SET_PDEATHSIG)` is needed (Linux-only, and it fires on the death
//! of the spawning *thread*, not the process). A process that deliberately leaves its hook's
//! process group (`setsid`) escapes it, as it escapes every other kill of the runner.
//!
//! The registration is one `write(2)` right after the spawn returns (the watchdog itself is up
//! before the spawn); a SIGKILL of the host inside that window of microseconds leaves that one
//! hook unregistered. Closing it would need code in the forked child (`pre_exec`), which turns
//! std's `posix_spawn` into a full `fork` of the host for every hook.
//!
//! When the watchdog cannot be started (no `/bin/sh`, out of processes), hooks still run, under
//! every other guarantee of the runner; [`status`] says why, so a host can report it.

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::process::{ChildStdin, Command, Stdio};
use std::sync::{Mutex, OnceLock};

/// The shell, by absolute path (as every hook's): no `PATH` search a planted `sh` could win.
const SHELL: &str = "/bin/sh";

/// The watchdog's program: register, unregister, and on end-of-file kill what is registered.
const SCRIPT: &str = r#"trap '' INT HUP TERM QUIT PIPE
g=' '
while IFS= read -r l; do
  case $l in
    +*) g="$g${l#+} " ;;
    -*) p=${l#-}; case $g in *" $p "*) g="${g%% $p *} ${g#* $p }" ;; esac ;;
  esac
done
for p in $g; do kill -s KILL -- "-$p" 2>/dev/null; done
"#;

/// The write end of the watchdog's stdin (`Err`: why there is no watchdog).
static WATCHDOG: OnceLock<Result<Mutex<ChildStdin>, String>> = OnceLock::new();

fn start() -> Result<Mutex<ChildStdin>, String> {
    let mut child = Command::new(SHELL)
        .arg("-c")
        .arg(SCRIPT)
        .env_clear()
        .current_dir("/")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot start the hook watchdog ({}): {e}", SHELL))?;
    // It lives as long as this process; init reaps it after we are gone.
    child
        .stdin
        .take()
        .map(Mutex::new)
        .ok_or_else(|| "the hook watchdog has no stdin".to_owned())
}

/// This process's watchdog, started on first use (`None`: it could not be; see [`status`]).
pub(crate) fn get() -> Option<&'static Mutex<ChildStdin>> {
    WATCHDOG.get_or_init(start).as_ref().ok()
}

fn send(watchdog: &Mutex<ChildStdin>, line: &str) {
    let mut stdin = watchdog
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    // One write of a few bytes: atomic on a pipe. A watchdog that died cannot be helped.
    let _ = stdin.write_all(line.as_bytes());
}

/// Whether this process has a watchdog (`Err`: why not). Starts it if no hook did yet.
pub fn status() -> Result<(), String> {
    match WATCHDOG.get_or_init(start) {
        Ok(_) => Ok(()),
        Err(e) => Err(e.clone()),
    }
}

/// A process group registered with the watchdog; unregistered on drop, which must come after
/// the runner ended the group (so a recycled pgid is never killed).
pub(crate) struct Registered(Option<(&'static Mutex<ChildStdin>, u32)>);

/// Register the process group `pgid` (a hook's leader's pid) with `watchdog` (from [`get`]).
pub(crate) fn register(watchdog: Option<&'static Mutex<ChildStdin>>, pgid: u32) -> Registered {
    if let Some(w) = watchdog {
        send(w, &format!("+{pgid}\n"));
    }
    Registered(watchdog.map(|w| (w, pgid)))
}

impl Drop for Registered {
    fn drop(&mut self) {
        if let Some((w, pgid)) = self.0 {
            send(w, &format!("-{pgid}\n"));
        }
    }
}
