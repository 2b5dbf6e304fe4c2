//! `install claude` warns when its command does not resolve and `--remove` takes out only its own
//! entries; `import claude --write` names the Claude hooks that would run twice, and
//! `--remove-originals` takes them out. `CLAUDE_CONFIG_DIR` points at a temp dir.

use crate::support;
use crate::support::agents::{claude_settings, claude_settings_file};

use std::fs;
use std::path::Path;

use serde_json::json;
use support::{hook, Project};

fn ka(p: &Project, args: &[&str], path: &str) -> (Option<i32>, String, String) {
    let output = p
        .cli()
        .env("CLAUDE_CONFIG_DIR", p.base.join("claude-home"))
        .env("PATH", path)
        .args(args)
        .output()
        .expect("ka-hooks");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// A PATH holding the directory of the binary under test (so `ka-hooks` resolves).
fn path_with_ka() -> String {
    let bin = Path::new(env!("CARGO_BIN_EXE_ka-hooks"));
    format!("{}:/usr/bin:/bin", bin.parent().expect("dir").display())
}

fn one_guard() -> Project {
    Project::with_user_toml(&hook("guard", "pre_tool_use", "true guard", &[]))
}

#[test]
fn install_warns_when_its_command_is_not_on_path_and_suggests_the_absolute_command() {
    let p = one_guard();
    // By default the entry names this binary by its absolute path: nothing to warn about.
    let (code, _, stderr) = ka(&p, &["install", "claude", "--write"], "/usr/bin:/bin");
    assert_eq!(code, Some(0), "{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");
    assert_eq!(
        claude_settings(&p)["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
        support::adapter_command("claude")
    );
    // A bare name that PATH does not resolve.
    let bare = ["install", "claude", "--command", "ka-hooks claude"];
    let (code, _, stderr) = ka(&p, &bare, "/usr/bin:/bin");
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("warning: `ka-hooks` is not found on PATH"),
        "{stderr}"
    );
    let exe = Path::new(env!("CARGO_BIN_EXE_ka-hooks"));
    assert!(stderr.contains("--command"), "{stderr}");
    assert!(stderr.contains(&exe.display().to_string()), "{stderr}");
    // On PATH: no warning.
    let (code, _, stderr) = ka(&p, &bare, &path_with_ka());
    assert_eq!(code, Some(0));
    assert!(!stderr.contains("warning"), "{stderr}");
    // An absolute --command that exists: no warning.
    let command = format!("{} claude", exe.display());
    let (_, _, stderr) = ka(
        &p,
        &["install", "claude", "--command", &command],
        "/usr/bin:/bin",
    );
    assert!(!stderr.contains("warning"), "{stderr}");
}

#[test]
fn install_remove_takes_out_only_the_adapters_entries() {
    let p = one_guard();
    let own = json!({"matcher": "Bash", "hooks": [{"type": "command", "command": "./audit.sh"}]});
    fs::create_dir_all(p.root.join(".claude")).expect("mkdir");
    fs::write(
        claude_settings_file(&p),
        serde_json::to_string_pretty(&json!({
            "model": "opus",
            "hooks": {"PreToolUse": [own.clone()]}
        }))
        .expect("json"),
    )
    .expect("write");
    let (code, _, stderr) = ka(&p, &["install", "claude", "--write"], &path_with_ka());
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        claude_settings(&p)["hooks"]["PreToolUse"]
            .as_array()
            .map(Vec::len),
        Some(2)
    );

    // Dry run: a diff, nothing written.
    let (code, stdout, _) = ka(&p, &["install", "claude", "--remove"], &path_with_ka());
    assert_eq!(code, Some(0));
    assert!(
        stdout.contains("-") && stdout.contains("ka-hooks claude"),
        "{stdout}"
    );
    assert!(stdout.contains("dry run"), "{stdout}");
    assert_eq!(
        claude_settings(&p)["hooks"]["PreToolUse"]
            .as_array()
            .map(Vec::len),
        Some(2)
    );

    let (code, stdout, _) = ka(
        &p,
        &["install", "claude", "--remove", "--write"],
        &path_with_ka(),
    );
    assert_eq!(code, Some(0), "{stdout}");
    assert_eq!(
        claude_settings(&p),
        json!({"model": "opus", "hooks": {"PreToolUse": [own]}}),
        "{stdout}"
    );
    // Again: nothing of ours is left.
    let (_, stdout, _) = ka(
        &p,
        &["install", "claude", "--remove", "--write"],
        &path_with_ka(),
    );
    assert!(stdout.contains("nothing to remove"), "{stdout}");
}

#[test]
fn import_write_names_the_hooks_that_would_run_twice_and_remove_originals_takes_them_out() {
    let p = Project::new();
    fs::create_dir_all(p.root.join(".claude")).expect("mkdir");
    fs::write(
        claude_settings_file(&p),
        serde_json::to_string_pretty(&json!({
            "hooks": {
                "PreToolUse": [
                    {"matcher": "Write", "hooks": [{"type": "command", "command": "./no-env.sh"}]},
                    {"matcher": "*", "hooks": [{"type": "command", "command": "ka-hooks claude"}]}
                ],
                "Notification": [
                    {"hooks": [{"type": "command", "command": "notify-send hi"}]}
                ]
            }
        }))
        .expect("json"),
    )
    .expect("write");
    let (code, stdout, stderr) = ka(&p, &["import", "claude", "--write"], &path_with_ka());
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("each would run twice"), "{stdout}");
    assert!(
        stdout.contains("hooks.PreToolUse[0].hooks[0]: ./no-env.sh"),
        "{stdout}"
    );
    // Notification is a ka event now: it is imported, so it too would run twice.
    assert!(stdout.contains("notify-send"), "{stdout}");
    assert!(
        stdout.contains("ka-hooks import claude --remove-originals --write"),
        "{stdout}"
    );

    // The imported hooks run once the file is trusted; only then do the originals go.
    p.cli().args(["trust", "--yes"]).assert().success();
    let (code, stdout, _) = ka(
        &p,
        &["import", "claude", "--remove-originals", "--write"],
        &path_with_ka(),
    );
    assert_eq!(code, Some(0), "{stdout}");
    let after = claude_settings(&p);
    let pre = after["hooks"]["PreToolUse"].as_array().expect("PreToolUse");
    assert_eq!(pre.len(), 1, "{after}");
    assert_eq!(pre[0]["hooks"][0]["command"], "ka-hooks claude");
    // The imported Notification hook now runs through ka, so its original is removed too.
    assert!(!after.to_string().contains("notify-send"), "{after}");
}
