//! A new user's first hour: every line `run`, `events`, `import`, `install` and `doctor` print
//! is true and names what happened (a hook's failure and its cause, a stop hook that keeps the
//! turn going, a guard that blocked without running, the stop cap said once).

use crate::support;

use serde_json::json;
use support::{hook, Project};

/// `ka-hooks ARGS...`: exit code, stdout, stderr.
fn run(p: &Project, args: &[&str]) -> (i32, String, String) {
    let out = p.cli().args(args).output().expect("ka-hooks");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The line of hook `name` in `run`'s output, up to its duration.
fn hook_line<'a>(stdout: &'a str, name: &str) -> &'a str {
    let prefix = format!("  hook {name} [");
    let line = stdout
        .lines()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("no line for hook {name}: {stdout}"));
    line.rsplit_once(", ").map_or(line, |(head, _)| head)
}

#[test]
fn a_failing_hook_line_carries_the_first_line_of_its_stderr() {
    let p = Project::with_user_toml(&hook(
        "rustfmt",
        "post_tool_use",
        "echo 'error: toolchain stable is not installed' >&2; echo 'help: rustup install' >&2; exit 1",
        &[],
    ));
    let (_, stdout, _) = run(&p, &["run", "post_tool_use", "--tool", "write"]);
    assert_eq!(
        hook_line(&stdout, "rustfmt"),
        "  hook rustfmt [user]: error (exit 1; stderr: error: toolchain stable is not installed)"
    );
}

#[test]
fn a_stop_hook_that_exits_2_is_said_to_keep_going_not_to_block() {
    let p = Project::with_user_toml(&hook("more", "stop", "echo 'tests fail' >&2; exit 2", &[]));
    let (_, stdout, _) = run(&p, &["run", "stop"]);
    assert_eq!(
        hook_line(&stdout, "more"),
        "  hook more [user]: asked to keep going (exit 2)"
    );
    let p = Project::with_user_toml(&hook("mark", "post_tool_use", "exit 2", &[]));
    let (_, stdout, _) = run(&p, &["run", "post_tool_use", "--tool", "write"]);
    assert_eq!(
        hook_line(&stdout, "mark"),
        "  hook mark [user]: marked the result as an error (exit 2)"
    );
}

#[test]
fn the_stop_cap_is_said_once() {
    let p = Project::with_user_toml(&format!(
        "[hook_settings]\nmax_continuations = 3\n{}",
        hook("more", "stop", "echo 'tests fail' >&2; exit 2", &[])
    ));
    let payload = json!({"stop_hook_active": true, "continuations": 3}).to_string();
    let (_, stdout, _) = run(&p, &["run", "stop", "--input", &payload]);
    assert!(stdout.starts_with("stop: capped\n"), "{stdout}");
    assert_eq!(stdout.matches("max_continuations").count(), 1, "{stdout}");
    assert!(
        stdout.contains(
            "  note: a stop hook asked to keep going (\"tests fail\"), but this turn already \
             continued 3 time(s) (max_continuations = 3); the agent stops\n"
        ),
        "{stdout}"
    );
}

#[test]
fn a_guard_that_blocked_without_running_says_so() {
    let p = Project::with_user_toml(&hook("no-env", "pre_tool_use", "exit 0", &[]));
    let (code, _, _) = run(&p, &["run", "pre_tool_use", "--tool", "bash"]);
    assert_eq!(code, 0);
    // A stray table header makes the user file stop loading: its last good guard blocks.
    let user = p.config_dir.join("ka.toml");
    let mut text = std::fs::read_to_string(&user).expect("user file");
    text.push_str("\n[[hooks\n");
    std::fs::write(&user, text).expect("write user file");
    let (code, stdout, _) = run(&p, &["run", "pre_tool_use", "--tool", "bash"]);
    assert_eq!(code, 2, "{stdout}");
    let line = stdout
        .lines()
        .find(|l| l.starts_with("  hook no-env [user]: "))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(
        line.starts_with(
            "  hook no-env [user]: blocked without running (blocked by the guard `no-env`"
        ),
        "{line}"
    );
    assert!(!line.contains("exit 2") && !line.contains(" ms"), "{line}");
}
