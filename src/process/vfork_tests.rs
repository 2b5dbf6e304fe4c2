//! Unit tests of ka's own spawn ([`super::vfork`]): what the hook inherits, and what fails.

use std::{
    os::fd::AsRawFd,
    sync::Arc,
    time::{Duration, Instant},
};

use crate::sandbox::Confiner;

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
    }
}

fn run(hook: &HookProcess<'_>, ruleset: Option<i32>) -> Result<Finished, std::io::Error> {
    let child: HookChild = vfork::spawn(hook, ruleset.map(Confiner::of_fd))?;
    Ok(run_spawned(child, hook, Instant::now(), false))
}

/// The child blocks every signal while it runs our code and may have inherited handlers of the
/// host: what `sh` starts must see an empty mask and SIGPIPE at its default (Rust ignores it in
/// the host), as `std` gives its children. (dash clears the mask itself at start, so only the
/// SIGPIPE half can fail where `/bin/sh` is dash; a `/bin/sh` that keeps the mask shows both.)
#[test]
fn the_hook_starts_with_no_signal_blocked_and_sigpipe_at_its_default() {
    let dir = tempfile::tempdir().expect("tempdir");
    let finished = run(
        &hook("grep -E '^Sig(Blk|Ign)' /proc/self/status", dir.path(), &[]),
        None,
    )
    .expect("spawn");
    assert_eq!(finished.termination, Termination::Exited(0), "{finished:?}");
    let mask = |name: &str| {
        let line = finished
            .stdout
            .lines()
            .find(|line| line.starts_with(name))
            .unwrap_or_else(|| panic!("no {name} in {:?}", finished.stdout));
        u64::from_str_radix(line.rsplit(['\t', ' ']).next().unwrap_or(""), 16).expect("hex mask")
    };
    assert_eq!(mask("SigBlk"), 0, "{}", finished.stdout);
    let sigpipe_bit = 1u64 << (libc::SIGPIPE - 1);
    assert_eq!(mask("SigIgn") & sigpipe_bit, 0, "{}", finished.stdout);
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
    let finished = run_spawned(child, &hook("", dir.path(), &[]), Instant::now(), false);
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

/// On a real kernel the child of `CLONE_VM | CLONE_VFORK` runs in our memory (under qemu-user
/// or valgrind it would not, and `std` would start the hooks).
#[test]
fn the_clone_child_shares_our_memory_here() {
    assert!(vfork::clone_shares_memory());
    assert!(vfork::usable());
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
        let finished = run_spawned(child, &hook, Instant::now(), false);
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
