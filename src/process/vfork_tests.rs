//! Unit tests of ka's own spawn ([`super::vfork`]): what the hook inherits, and what fails.

use std::{
    os::fd::AsRawFd,
    sync::Arc,
    time::{Duration, Instant},
};

use crate::{sandbox::Confiner, watchdog::Watch};

use super::{child::HookChild, run_spawned, vfork, Finished, HookProcess, Termination};

fn hook<'a>(
    command: &'a str,
    cwd: &'a std::path::Path,
    env: &'a [(String, String)],
) -> HookProcess<'a> {
    HookProcess {
        command,
        cwd,
        env,
        stdin: Arc::from(&b"payload"[..]),
        timeout: Duration::from_secs(20),
        cancel: None,
        deadline: None,
        clean_env: false,
    }
}

fn run(hook: &HookProcess<'_>, ruleset: Option<i32>) -> Result<Finished, std::io::Error> {
    let child: HookChild = vfork::spawn(hook, ruleset.map(Confiner::of_fd))?;
    Ok(run_spawned(
        child,
        hook,
        Instant::now(),
        false,
        &mut Watch::off(),
    ))
}

/// The hook gets the calling thread's signal mask on both spawn paths, as `posix_spawn` and
/// `std` give it (the own spawn blocks every signal while its child runs our code, and must
/// put the caller's mask back), and SIGPIPE at its default (Rust ignores it in the host).
/// `/bin/bash` runs the hook here: dash, a usual `/bin/sh`, empties the mask itself at start.
#[test]
fn the_hook_gets_the_callers_signal_mask_on_both_paths_and_sigpipe_at_its_default() {
    const BASH: &str = "/bin/bash";
    assert!(
        std::path::Path::new(BASH).exists(),
        "{BASH} is needed to see the mask"
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let command = "grep -E '^Sig(Blk|Ign)' /proc/self/status";
    let winch = sigset_of(libc::SIGWINCH);
    let mut old = sigset_of(0);
    // SAFETY: valid sigsets of this frame; only this thread's mask changes, restored below.
    unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &winch, &mut old) };
    let spawned = [false, true].map(|std_spawn| {
        let hook = hook(command, dir.path(), &[]);
        let child = if std_spawn {
            super::spawn::spawn_std_with(BASH, &hook, None)
        } else {
            vfork::spawn_with(BASH, &hook, None, false)
        }
        .expect("spawn");
        run_spawned(child, &hook, Instant::now(), false, &mut Watch::off())
    });
    // SAFETY: puts back the mask saved above.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut()) };
    let winch_bit = 1u64 << (libc::SIGWINCH - 1);
    let sigpipe_bit = 1u64 << (libc::SIGPIPE - 1);
    for (how, finished) in ["own spawn", "std"].iter().zip(&spawned) {
        assert_eq!(
            finished.termination,
            Termination::Exited(0),
            "{how}: {finished:?}"
        );
        let blocked = status_mask(&finished.stdout, "SigBlk");
        assert_eq!(blocked, winch_bit, "{how}: {}", finished.stdout);
        let ignored = status_mask(&finished.stdout, "SigIgn");
        assert_eq!(ignored & sigpipe_bit, 0, "{how}: {}", finished.stdout);
    }
}

/// The signal set holding `signal` (none for 0).
fn sigset_of(signal: libc::c_int) -> libc::sigset_t {
    // SAFETY: sigset_t is plain old data; sigemptyset and sigaddset only write it.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        if signal > 0 {
            libc::sigaddset(&mut set, signal);
        }
        set
    }
}

/// The hexadecimal mask on the line `name:` of a `/proc/<pid>/status`.
fn status_mask(status: &str, name: &str) -> u64 {
    let line = status
        .lines()
        .find(|line| line.starts_with(name))
        .unwrap_or_else(|| panic!("no {name} in {status:?}"));
    u64::from_str_radix(line.rsplit(['\t', ' ']).next().unwrap_or(""), 16).expect("hex mask")
}

/// `env` goes over the inherited environment: one entry per name, the last of `env` winning.
#[test]
fn the_hook_gets_each_variable_once_with_the_last_value() {
    let dir = tempfile::tempdir().expect("tempdir");
    let env = [
        ("PATH".to_owned(), "/usr/bin:/bin".to_owned()),
        ("KA_TEST_TWICE".to_owned(), "first".to_owned()),
        ("KA_TEST_TWICE".to_owned(), "second".to_owned()),
    ];
    let finished = run(
        &hook(
            "env | grep -c '^PATH='; env | grep '^KA_TEST_TWICE='; echo \"$PATH\"; cat",
            dir.path(),
            &env,
        ),
        None,
    )
    .expect("spawn");
    assert_eq!(
        finished.stdout, "1\nKA_TEST_TWICE=second\n/usr/bin:/bin\npayload",
        "{finished:?}"
    );
    assert!(std::env::var_os("HOME").is_some() || std::env::var_os("USER").is_some());
}

/// Set in the inner run of [`a_host_without_stdin_still_hands_the_hook_its_payload`].
const STDIN_CLOSED: &str = "KA_HOOKS_TEST_STDIN_CLOSED";

/// A host that closed its own stdin: the hook's stdin pipe, or the Landlock ruleset, then lands
/// on descriptor 0 in the host. A `dup` onto 0 in the child would leave the pipe close-on-exec
/// (the hook would read nothing) or replace the ruleset before it is applied (every confined
/// hook would fail). The test runs itself again and closes stdin there, so that no other test
/// of this process sees descriptor 0 closed.
#[test]
fn a_host_without_stdin_still_hands_the_hook_its_payload() {
    if std::env::var_os(STDIN_CLOSED).is_some() {
        // Rust's runtime opens /dev/null on a descriptor 0 closed at start: close it here, in
        // a process that runs this test alone.
        // SAFETY: closing our own stdin, which nothing in this process reads.
        unsafe { libc::close(0) };
        return without_stdin();
    }
    let exe = std::env::current_exe().expect("test binary");
    let name = "process::vfork_tests::a_host_without_stdin_still_hands_the_hook_its_payload";
    let output = std::process::Command::new("/bin/sh")
        .args(["-c", r#"exec "$0" --exact "$1" --nocapture"#])
        .arg(exe)
        .arg(name)
        .env(STDIN_CLOSED, "1")
        .output()
        .expect("run the test binary");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && stdout.contains("1 passed"),
        "{stdout}\n{stderr}"
    );
}

fn without_stdin() {
    let dir = tempfile::tempdir().expect("tempdir");
    let finished = run(&hook("cat; echo", dir.path(), &[]), None).expect("spawn");
    assert_eq!(finished.stdout, "payload\n", "{finished:?}");
    let rules = crate::sandbox::Rules::profile("project").expect("the project profile");
    let plan = crate::sandbox::Plan::Confine {
        rules,
        required: true,
    };
    let prepared = match crate::sandbox::Run::prepare(&plan, dir.path()) {
        crate::sandbox::Run::Confined(prepared) => prepared,
        other => {
            eprintln!("no Landlock here ({other:?}): only the unconfined half ran");
            return;
        }
    };
    let child = vfork::spawn(
        &hook("cat; echo", dir.path(), &[]),
        Some(prepared.confiner()),
    )
    .expect("a confined spawn");
    let finished = run_spawned(
        child,
        &hook("", dir.path(), &[]),
        Instant::now(),
        false,
        &mut Watch::off(),
    );
    assert_eq!(finished.stdout, "payload\n", "{finished:?}");
}

/// A step that fails in the child fails the spawn, and `sh` never runs: here the Landlock step
/// with a descriptor that is no ruleset (a hook must never run unconfined by mistake), a working
/// directory that is gone, and a command with a NUL byte.
#[test]
fn a_failed_step_in_the_child_fails_the_spawn_and_runs_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let marker = dir.path().join("ran");
    let command = format!("touch '{}'", marker.display());
    let not_a_ruleset = std::fs::File::open("/dev/null").expect("/dev/null");
    let err = run(
        &hook(&command, dir.path(), &[]),
        Some(not_a_ruleset.as_raw_fd()),
    )
    .expect_err("confinement must fail");
    assert!(err.raw_os_error().is_some(), "{err}");
    let gone = dir.path().join("gone");
    let err = run(&hook(&command, &gone, &[]), None).expect_err("no such cwd");
    assert_eq!(err.raw_os_error(), Some(libc::ENOENT), "{err}");
    let err = run(&hook("true\0; touch x", dir.path(), &[]), None).expect_err("NUL");
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput, "{err}");
    assert!(!marker.exists(), "the hook ran");
    // The last step, `execve`, fails too (one argument over the kernel's 128 KiB limit), and
    // is reported after confinement, which marks every other descriptor close-on-exec.
    let huge = format!("true {}", "x".repeat(200 * 1024));
    let err = run(&hook(&huge, dir.path(), &[]), None).expect_err("E2BIG");
    assert_eq!(err.raw_os_error(), Some(libc::E2BIG), "{err}");
    let plan = crate::sandbox::Plan::Confine {
        rules: crate::sandbox::Rules::profile("read-only").expect("the read-only profile"),
        required: true,
    };
    if let crate::sandbox::Run::Confined(prepared) = crate::sandbox::Run::prepare(&plan, dir.path())
    {
        let err = vfork::spawn(&hook(&huge, dir.path(), &[]), Some(prepared.confiner()))
            .expect_err("E2BIG, confined");
        assert_eq!(err.raw_os_error(), Some(libc::E2BIG), "{err}");
    }
    // The failed children were reaped: none is left as a zombie of this process.
    let zombies = std::fs::read_to_string(format!("/proc/self/task/{}/children", gettid()))
        .unwrap_or_default();
    assert_eq!(zombies.trim(), "", "children left: {zombies}");
}

fn gettid() -> libc::pid_t {
    // SAFETY: gettid takes no arguments.
    unsafe { libc::gettid() }
}

/// On a real kernel the child of `CLONE_VM | CLONE_VFORK` runs in our memory, which the first
/// spawn finds out (under qemu-user or valgrind it would not, and `std` would start the hooks).
#[test]
fn the_first_spawn_finds_that_the_child_shares_our_memory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let finished = run(&hook("true", dir.path(), &[]), None).expect("spawn");
    assert_eq!(finished.termination, Termination::Exited(0), "{finished:?}");
    assert_eq!(vfork::memory_shared(), Some(true));
    assert!(vfork::usable());
}

/// Where the child shares no memory with us, the first spawn learns of a failed step through
/// its pipe, and of a successful one by the pipe closing at `execve` (`unshared` makes the
/// parent read the pipe as it would there).
#[test]
fn the_report_pipe_tells_a_failed_step_from_a_started_hook() {
    let dir = tempfile::tempdir().expect("tempdir");
    let gone = dir.path().join("gone");
    let err = vfork::spawn_with(super::SHELL, &hook("true", &gone, &[]), None, true)
        .expect_err("no such cwd");
    assert_eq!(err.raw_os_error(), Some(libc::ENOENT), "{err}");
    let hook = hook("cat", dir.path(), &[]);
    let child = vfork::spawn_with(super::SHELL, &hook, None, true).expect("spawn");
    let finished = run_spawned(child, &hook, Instant::now(), false, &mut Watch::off());
    assert_eq!(finished.termination, Termination::Exited(0), "{finished:?}");
    assert_eq!(finished.stdout, "payload");
}

/// The hook's leader dies when the thread that spawned it does, whatever ends it (the host's
/// SIGKILL ends them all): the watchdog relies on it for a hook's first milliseconds.
#[test]
fn the_leader_dies_with_the_thread_that_spawned_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cwd = dir.path().to_owned();
    let mut child = std::thread::spawn(move || {
        vfork::spawn(&hook("exec sleep 60", &cwd, &[]), None).expect("spawn")
    })
    .join()
    .expect("the spawning thread");
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = child.try_wait().expect("waitpid") {
            break status;
        }
        if Instant::now() > deadline {
            super::kill_leader(child.id() as libc::pid_t, libc::SIGKILL);
            let _ = child.wait();
            panic!("the hook outlived the thread that spawned it");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(libc::SIGKILL), "{status:?}");
}

/// The allocator guard of the test build fails a spawn whose child allocated: here a child
/// that does, through the same `clone`.
#[test]
fn the_allocation_guard_catches_a_child_that_allocates() {
    extern "C" fn allocates(_: *mut libc::c_void) -> libc::c_int {
        super::alloc_guard::enter_child();
        drop(std::hint::black_box(Box::new(7u64)));
        // SAFETY: ends the child at once.
        unsafe { libc::syscall(libc::SYS_exit_group, 0 as libc::c_long) };
        0
    }
    let mut stack = vfork::ChildStack::new();
    let pid = vfork::clone_raw(allocates, std::ptr::null_mut(), &mut stack).expect("clone");
    vfork::reap_exited(pid);
    let caught = std::panic::catch_unwind(super::alloc_guard::check);
    assert!(
        caught.is_err(),
        "the guard let an allocation in the child pass"
    );
    super::alloc_guard::check();
    drop(stack);
}

/// glibc before 2.25 wrote into the calling thread's control block from `clone`: those fall
/// back to `std`'s spawn.
#[test]
fn only_a_glibc_from_2_25_on_gets_the_own_spawn() {
    for (version, fit) in [
        ("2.17", false),
        ("2.24", false),
        ("2.25", true),
        ("2.36", true),
        ("3.0", true),
        ("2", false),
        ("", false),
        ("x.y", false),
    ] {
        assert_eq!(vfork::glibc_clone_is_fit(version), fit, "{version}");
    }
}

/// Landlock checks a write when a file is opened: a descriptor the host left open without
/// close-on-exec would let a confined hook write wherever it points. Both ways of spawning
/// leave the hook no descriptor above 2 once it is confined.
#[test]
fn a_confined_hook_cannot_write_through_a_descriptor_the_host_left_open() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let victim = dir.path().join("victim");
    let path = std::ffi::CString::new(victim.as_os_str().as_bytes()).expect("no NUL");
    // SAFETY: a plain open of a path we own, on purpose without O_CLOEXEC.
    let leaked = unsafe { libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CREAT, 0o600) };
    assert!(leaked > 2, "open: {}", std::io::Error::last_os_error());
    let command = format!(
        "echo direct > '{}'; echo via-fd >&{leaked}",
        victim.display()
    );
    let rules = crate::sandbox::Rules::profile("read-only").expect("the read-only profile");
    let plan = crate::sandbox::Plan::Confine {
        rules,
        required: true,
    };
    for (how, std_spawn) in [("own spawn", false), ("std", true)] {
        let prepared = match crate::sandbox::Run::prepare(&plan, dir.path()) {
            crate::sandbox::Run::Confined(prepared) => prepared,
            other => {
                eprintln!("no Landlock here ({other:?}): nothing to test");
                return;
            }
        };
        let hook = hook(&command, dir.path(), &[]);
        let child = if std_spawn {
            super::spawn::spawn_std(&hook, Some(&prepared))
        } else {
            vfork::spawn(&hook, Some(prepared.confiner()))
        }
        .expect("a confined spawn");
        let finished = run_spawned(child, &hook, Instant::now(), false, &mut Watch::off());
        let written = std::fs::read_to_string(&victim).expect("read the victim");
        assert_eq!(
            written, "",
            "{how}: the hook wrote {written:?}: {finished:?}"
        );
        assert_ne!(
            finished.termination,
            Termination::Exited(0),
            "{how}: {finished:?}"
        );
    }
    // SAFETY: our own descriptor, opened above.
    unsafe { libc::close(leaked) };
}
