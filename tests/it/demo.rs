//! `examples/demo.sh`, the newcomer's first run: it finds the binary wherever cargo puts it
//! (here: `CARGO_TARGET_DIR`, the target dir this test was built in, so its build is a no-op),
//! checks every step's exit code, and keeps its scratch project with `--keep`.

use crate::support;
use crate::support::repo;
use crate::support::target_dir;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `bash examples/demo.sh ARGS` with `CARGO_TARGET_DIR` set, and a scratch `HOME` (cargo and
/// rustup keep theirs: `CARGO_HOME` and `RUSTUP_HOME` are pinned before `HOME` moves).
fn demo(args: &[&str], home: &Path) -> Output {
    let mut cmd = Command::new("bash");
    cmd.arg(repo().join("examples/demo.sh"))
        .args(args)
        .current_dir(home)
        .env("CARGO_TARGET_DIR", target_dir());
    for var in support::AMBIENT_VARS {
        cmd.env_remove(var);
    }
    if let Some(real_home) = std::env::var_os("HOME") {
        let real_home = PathBuf::from(real_home);
        for (var, default) in [("CARGO_HOME", ".cargo"), ("RUSTUP_HOME", ".rustup")] {
            if std::env::var_os(var).is_none() {
                cmd.env(var, real_home.join(default));
            }
        }
    }
    cmd.env("HOME", home)
        .output()
        .expect("bash examples/demo.sh")
}

#[test]
#[ignore = "slow: runs the whole demo (its cargo build and every step); scripts/test.sh runs it"]
fn demo_finds_the_binary_in_cargo_target_dir_and_every_step_exits_as_expected() {
    let home = tempfile::tempdir().expect("tempdir");
    let output = demo(&["--keep"], home.path());
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stdout}\n{stderr}");
    let using = format!("using {}", target_dir().join("debug/ka-hooks").display());
    assert!(stdout.contains(&using), "{using} not in:\n{stdout}");
    for line in [
        "pre_tool_use (write): blocked",
        "reason: guard-writes: /etc/passwd is outside the allowed roots",
        "pre_tool_use (apply_patch): blocked",
        "reason: guard-writes: main.rs is outside the allowed roots",
        "pre_tool_use (bash): proceed",
        "[REDACTED:aws-key]",
        "feedback: src/NOTES.md: trailing whitespace on line(s) 1",
        "mode: plan",
        "test result: ok.",
        "demo.sh: every step exited as expected",
    ] {
        assert!(stdout.contains(line), "`{line}` not in:\n{stdout}");
    }
    assert!(!stdout.contains("EXPECTED"), "{stdout}");
    assert!(!stdout.contains("No such file"), "{stdout}");

    // --keep: the scratch project is still there, and says where.
    let kept = stdout
        .lines()
        .find_map(|l| l.strip_prefix("kept the scratch project: "))
        .and_then(|rest| rest.split(" (config: ").next())
        .expect("the kept project's path");
    let kept = Path::new(kept);
    assert!(kept.join(".ka/ka.toml").is_file(), "{}", kept.display());
    // It says how to use it: with the printed variables, its hooks load (trusted there).
    let export = stdout
        .lines()
        .find_map(|l| l.strip_prefix("  cd "))
        .expect("the line that sets the variables");
    let list = Command::new("bash")
        .arg("-c")
        .arg(format!("cd {export} && \"$KA\" list",))
        .env("KA", target_dir().join("debug/ka-hooks"))
        .env_remove("KA_CONFIG_DIR")
        .env_remove("KA_DATA_DIR")
        .env("HOME", home.path())
        .output()
        .expect("ka-hooks list in the kept project");
    let listed = String::from_utf8_lossy(&list.stdout);
    assert!(list.status.success(), "{listed}{list:?}");
    assert!(listed.contains("guard-writes"), "{listed}");
    assert!(!listed.contains("untrusted"), "{listed}");
    if let Some(scratch) = kept.parent() {
        let _ = std::fs::remove_dir_all(scratch);
    }
}

#[test]
fn demo_rejects_an_unknown_argument_before_building() {
    let home = tempfile::tempdir().expect("tempdir");
    let output = demo(&["--nope"], home.path());
    assert_eq!(output.status.code(), Some(64), "{output:?}");
    assert!(String::from_utf8_lossy(&output.stderr).contains("unknown argument"));
}

#[test]
fn readme_test_command_and_demo_are_what_set_up_says() {
    let readme = std::fs::read_to_string(repo().join("README.md")).expect("README.md");
    let setup = &readme[readme.find("## Set up").expect("a Set up section")..];
    let setup = &setup[..setup[3..].find("\n## ").map_or(setup.len(), |i| i + 3)];
    for needle in [
        "bash examples/demo.sh",
        "cargo install --path .",
        "python3",
        "trust --yes",
    ] {
        assert!(setup.contains(needle), "Set up lacks `{needle}`");
    }
    // No links to files outside the repository.
    assert!(
        !setup.contains("](/"),
        "Set up links outside the repository"
    );
    assert!(
        !setup.contains("](../"),
        "Set up links outside the repository"
    );
}
