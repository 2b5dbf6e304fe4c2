//! Values that do not parse fail closed: a `KA_HOOKS_*` override that does not parse is an error
//! that names the variable, every guard blocks, and no layer is switched off. A load that runs
//! out of file descriptors blocks and says so. `ka-hooks codex` never pre-approves a rewritten
//! call past a failed guard.

use crate::support;

use std::path::Path;

use serde_json::{json, Value};
use support::{hook, Project};

/// Every value of the issue: empty, not a number, not above 0, a unit, a bool for a path.
const BAD: [(&str, &str); 6] = [
    ("KA_HOOKS_TIMEOUT", ""),
    ("KA_HOOKS_TIMEOUT", "abc"),
    ("KA_HOOKS_TIMEOUT", "0"),
    ("KA_HOOKS_TIMEOUT", "-1"),
    ("KA_HOOKS_TIMEOUT", "10s"),
    ("KA_HOOKS_LOG", "true"),
];

fn claude_pre_tool_use(p: &Project) -> String {
    json!({
        "session_id": "s",
        "cwd": p.root,
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
    })
    .to_string()
}

/// The answer blocks the call: exit 2, or Claude's JSON deny.
fn answer_blocks(out: &std::process::Output) -> bool {
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    out.status.code() == Some(2) || answer["hookSpecificOutput"]["permissionDecision"] == "deny"
}

fn managed(p: &Project, toml: &str) -> std::path::PathBuf {
    let dir = p.base.join("managed");
    std::fs::create_dir_all(&dir).expect("managed dir");
    std::fs::write(dir.join("ka.toml"), toml).expect("managed ka.toml");
    dir
}

/// Attack: `KA_HOOKS_TIMEOUT` set to empty, `abc`, `0`, `-1` or `10s`, or `KA_HOOKS_LOG=true`,
/// gave "no ka hook ran (failing open)", past the managed `on_error = "block"` guard too.
#[test]
fn an_override_that_does_not_parse_blocks_every_guard_and_names_the_variable() {
    let p = Project::with_user_toml(&hook("user-guard", "pre_tool_use", "exit 0", &[]));
    let dir = managed(
        &p,
        &hook(
            "managed-guard",
            "pre_tool_use",
            "exit 0",
            &[r#"on_error = "block""#],
        ),
    );
    for (var, value) in BAD {
        let out = p
            .cli()
            .env("KA_MANAGED_DIR", &dir)
            .env(var, value)
            .arg("claude")
            .write_stdin(claude_pre_tool_use(&p))
            .output()
            .expect("ka-hooks claude");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(answer_blocks(&out), "{var}={value:?}: {text}");
        assert!(!text.contains("failing open"), "{var}={value:?}: {text}");
        assert!(text.contains(&format!("{var}=")), "{var}={value:?}: {text}");
        assert!(text.contains("user-guard"), "{var}={value:?}: {text}");
    }
}

/// The managed guard holds even with `KA_HOOKS_DISABLE=1` and a bad override.
#[test]
fn a_bad_override_with_every_hook_off_still_blocks_at_the_managed_guard() {
    let p = Project::new();
    let dir = managed(
        &p,
        &hook(
            "managed-guard",
            "pre_tool_use",
            "exit 0",
            &[r#"on_error = "block""#],
        ),
    );
    let out = p
        .cli()
        .env("KA_MANAGED_DIR", &dir)
        .env("KA_HOOKS_DISABLE", "1")
        .env("KA_HOOKS_TIMEOUT", "abc")
        .arg("claude")
        .write_stdin(claude_pre_tool_use(&p))
        .output()
        .expect("ka-hooks claude");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(answer_blocks(&out), "{stdout}");
    assert!(stdout.contains("managed-guard"), "{stdout}");
    assert!(stdout.contains("KA_HOOKS_TIMEOUT"), "{stdout}");
}

/// No layer is switched off: the other hooks run, and the files' own settings hold.
#[test]
fn a_bad_override_switches_no_layer_off() {
    let p = Project::with_user_toml(&format!(
        "[hook_settings]\nlog = \"audit.jsonl\"\n\n{}",
        hook("observer", "post_tool_use", "touch observed", &[])
    ));
    let out = p
        .cli()
        .env("KA_HOOKS_LOG", "true")
        .args(["run", "post_tool_use", "--tool", "bash"])
        .output()
        .expect("ka-hooks run");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(p.exists("observed"), "the observer ran");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("KA_HOOKS_LOG=\"true\""), "{stdout}");
    assert!(
        p.config_dir.join("audit.jsonl").exists(),
        "the user file's own `log` still holds"
    );
}

/// `check` reports each bad override as an error naming it, and exits 1.
#[test]
fn check_fails_on_an_override_that_does_not_parse() {
    let p = Project::with_user_toml(&hook("guard", "pre_tool_use", "exit 0", &[]));
    for (var, value) in BAD {
        let out = p
            .cli()
            .env(var, value)
            .arg("check")
            .output()
            .expect("check");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{var}={value:?}: {stderr}");
        assert!(
            stderr.contains(&format!("error: {var}:")),
            "{var}={value:?}: {stderr}"
        );
        assert!(stderr.contains("help: set"), "{var}={value:?}: {stderr}");
    }
}

/// Starts `ka-hooks claude` with every descriptor below its limit taken but `free`, through a
/// Python wrapper that opens them without close-on-exec and then execs.
fn with_descriptors_left(p: &Project, free: usize) -> std::process::Output {
    const WRAPPER: &str = r#"
import os, resource, sys
free = int(sys.argv[1])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))
listed = [int(n) for n in os.listdir("/proc/self/fd")]
opened = []
while True:
    try:
        opened.append(os.open("/dev/null", os.O_RDONLY))
    except OSError:
        break
for fd in opened[len(opened) - free:] if free else []:
    os.close(fd)
    opened.remove(fd)
for fd in listed + opened:
    if fd > 2:
        try:
            os.set_inheritable(fd, True)
        except OSError:
            pass
os.execv(sys.argv[2], sys.argv[2:])
"#;
    let binary = assert_cmd::cargo::cargo_bin("ka-hooks");
    let mut wrapped = assert_cmd::Command::new("python3");
    for var in support::AMBIENT_VARS {
        wrapped.env_remove(var);
    }
    wrapped
        .env("KA_CONFIG_DIR", &p.config_dir)
        .env("KA_DATA_DIR", &p.data_dir)
        .current_dir(&p.root)
        .args(["-c", WRAPPER, &free.to_string()])
        .arg(Path::new(&binary))
        .arg("claude")
        .write_stdin(claude_pre_tool_use(p))
        .output()
        .expect("python3 wrapper")
}

/// Attack: with 200 inherited descriptors and the file limit just above them, both the user
/// file and its last good copy failed with EMFILE; the call went through past an `on_error =
/// "block"` guard, with the false message "no last good version … kept".
#[test]
fn running_out_of_descriptors_while_loading_blocks_and_says_so() {
    let p = Project::with_user_toml(&hook(
        "guard",
        "pre_tool_use",
        "exit 2",
        &[r#"on_error = "block""#],
    ));
    // One normal call keeps the user file's last good version.
    let out = p
        .cli()
        .arg("claude")
        .write_stdin(claude_pre_tool_use(&p))
        .output()
        .expect("ka-hooks claude");
    assert!(answer_blocks(&out), "{out:?}");
    let mut said = false;
    for free in 1..=8 {
        let out = with_descriptors_left(&p, free);
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(answer_blocks(&out), "{free} free descriptor(s): {text}");
        assert!(!text.contains("no last good version"), "{free}: {text}");
        said |= text.contains("run out of file descriptors");
    }
    assert!(said, "no run said that the descriptors ran out");
}

/// Attack: `ka-hooks codex` answered `permissionDecision: allow` (with the rewrite) when a user
/// guard failed (`on_error = "ignore"`) and a project hook rewrote the call.
#[test]
fn codex_does_not_pre_approve_a_rewrite_past_a_failed_guard() {
    let p = Project::new();
    p.user(&hook(
        "guard",
        "pre_tool_use",
        "exit 3",
        &[r#"on_error = "ignore""#],
    ));
    p.project(&hook(
        "rewriter",
        "pre_tool_use",
        r#"echo '{"updated_input":{"command":"ls -la"}}'"#,
        &[],
    ));
    let payload = json!({
        "session_id": "s",
        "turn_id": "t",
        "cwd": p.root,
        "hook_event_name": "PreToolUse",
        "model": "m",
        "permission_mode": "default",
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
    });
    let out = p
        .cli()
        .args(["--trust", "codex"])
        .write_stdin(payload.to_string())
        .output()
        .expect("ka-hooks codex");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let answer: Value = serde_json::from_str(stdout.trim()).unwrap_or(Value::Null);
    assert_ne!(
        answer["hookSpecificOutput"]["permissionDecision"], "allow",
        "{stdout}"
    );
    assert!(answer_blocks(&out), "{stdout}");
    let text = format!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("guard `guard` failed"), "{text}");
    // Control: with the guard healthy, the rewrite goes back as Codex takes it.
    p.user(&hook("guard", "pre_tool_use", "exit 0", &[]));
    let out = p
        .cli()
        .args(["--trust", "codex"])
        .write_stdin(payload.to_string())
        .output()
        .expect("ka-hooks codex");
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert_eq!(
        answer["hookSpecificOutput"]["permissionDecision"], "allow",
        "{out:?}"
    );
}
