//! Async hooks of a process that exits after its dispatch (the CLI, the adapters): each runs in a
//! supervisor process, `ka-hooks __async-hook`, which outlives the call.
//!
//! The dispatch spawns the supervisor with its standard output and error on `/dev/null` (it must
//! never hold the agent's pipes open: an agent waits for EOF on the hook command's stdout) and
//! writes the job to its stdin, a pipe: the job never rests in a file the model could edit. The
//! supervisor starts a session of its own (`setsid`: signals to the agent's process group do not
//! reach it), then takes the supersede lock of its key, runs the hook under the runner (its own
//! group, timeout, caps; reaped), audits it, and leaves the result in the data dir's mailbox.
//!
//! **Supersede.** `<data dir>/async/running/<key>.lock` is held (`flock`) by the supervisor of
//! the run in progress, which writes its pid in it. A newer supervisor of the same key writes its
//! pid to `<key>.next`, sends SIGTERM to the holder through a pidfd (opened, then the lock checked
//! again, so a recycled pid is never signalled; by pid on macOS, see `end_holder`), and waits for
//! the lock. The holder's SIGTERM
//! handler cancels its run (TERM, then KILL, to the hook's group), and its result is delivered
//! marked superseded. A supervisor that gets the lock but finds a newer pid in `<key>.next` has
//! been superseded before it started, and does not run.

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::{Deserialize, Serialize};

use super::{Job, SUPERVISOR_ARG};

/// What a supervisor reads on stdin.
#[derive(Serialize, Deserialize)]
pub(super) struct Envelope {
    pub(super) job: Job,
    pub(super) data_dir: Option<PathBuf>,
}

/// Spawn a supervisor for `job` and hand it over; returns once the job is written.
pub(super) fn start(exe: &Path, data_dir: Option<&Path>, job: Job) -> Result<(), String> {
    let envelope = Envelope {
        job,
        data_dir: data_dir.map(Path::to_path_buf),
    };
    let bytes = serde_json::to_vec(&envelope).map_err(|e| e.to_string())?;
    let mut child = Command::new(exe)
        .arg(SUPERVISOR_ARG)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .current_dir("/")
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot start the supervisor {}: {e}", exe.display()))?;
    let written = match child.stdin.take() {
        Some(mut stdin) => stdin.write_all(&bytes),
        None => Err(std::io::Error::other("no stdin pipe")),
    };
    if let Err(e) = written {
        let _ = child.kill();
        let _ = child.wait();
        return Err(format!("cannot hand the job to its supervisor: {e}"));
    }
    // Not waited for: it outlives this process. Should it end first, it is reaped when this
    // short-lived process exits (by init, or the nearest subreaper).
    drop(child);
    Ok(())
}
