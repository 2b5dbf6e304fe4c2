//! Hooks published for GitHub Copilot, Cursor and Antigravity, imported with `ka-hooks import <agent>` and
//! run through `ka-hooks <agent>`, answer as the agent would: their own output format is read,
//! Copilot's fail-closed `preToolUse` is kept, Cursor's per-tool events keep their scope and
//! read the call where Cursor puts it, and every imported hook has a stable name.

use crate::support::agents::{agent_answer, Stdout};
use crate::support::Project;

use std::fs;

use serde_json::{json, Value};

/// `ka-hooks --trust <agent> [--event E]` on `payload`: (exit code, stdout JSON or Null).
fn trusted_event_answer(
    p: &Project,
    agent: &str,
    event: Option<&str>,
    payload: &Value,
) -> (Option<i32>, Value) {
    let mut cmd = p.cli();
    cmd.arg("--trust");
    let (code, answer, _) = agent_answer(cmd, agent, event, payload, Stdout::Json);
    (code, answer)
}

fn import_write(p: &Project, agent: &str, extra: &[&str]) -> String {
    let out = p
        .cli()
        .args(["import", agent, "--write"])
        .args(extra)
        .output()
        .expect("import");
    assert!(out.status.success(), "{out:?}");
    fs::read_to_string(p.root.join(".ka/ka.toml")).unwrap_or_default()
}

fn script(p: &Project, rel: &str, body: &str) {
    p.write(rel, body);
    let path = p.root.join(rel);
    let mut perms = fs::metadata(&path).expect("script").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    fs::set_permissions(&path, perms).expect("chmod");
}

/// A Copilot guard that answers in Copilot's own top-level fields, and one that crashes on
/// every payload (Copilot denies the call when a preToolUse hook crashes).
#[test]
fn copilot_guards_round_trip() {
    let p = Project::new();
    script(
        &p,
        "scripts/no-rm-rf.sh",
        "#!/bin/sh\npython3 -c 'import json,sys; c=json.load(sys.stdin)[\"toolArgs\"][\"command\"]; \
         print(json.dumps({\"permissionDecision\": \"deny\", \"permissionDecisionReason\": \
         \"rm -rf / is not allowed\"})) if \"rm -rf /\" in c else None'\n",
    );
    p.write(
        ".github/hooks/guards.json",
        r#"{"version": 1, "hooks": {"preToolUse": [
            {"type": "command", "bash": "./scripts/no-rm-rf.sh", "timeoutSec": 10}
        ]}}"#,
    );
    let toml = import_write(&p, "copilot", &[]);
    assert!(toml.contains("on_error = \"block\""), "{toml}");
    assert!(toml.contains("name = \"copilot-preToolUse-"), "{toml}");
    let payload = json!({"sessionId": "s", "timestamp": 1, "cwd": p.root, "toolName": "bash",
        "toolArgs": {"command": "rm -rf /"}});
    let (code, answer) = trusted_event_answer(&p, "copilot", Some("preToolUse"), &payload);
    assert_eq!(code, Some(0));
    assert_eq!(answer["permissionDecision"], "deny", "{answer}");
    let reason = answer["permissionDecisionReason"]
        .as_str()
        .unwrap_or_default();
    assert!(reason.contains("rm -rf / is not allowed"), "{answer}");

    // A guard that crashes blocks the call, as it does in Copilot.
    let p = Project::new();
    p.write(
        ".github/hooks/crash.json",
        r#"{"version": 1, "hooks": {"preToolUse": [{"type": "command", "bash": "exit 1"}]}}"#,
    );
    import_write(&p, "copilot", &[]);
    let (_, answer) = trusted_event_answer(&p, "copilot", Some("preToolUse"), &payload);
    assert_eq!(answer["permissionDecision"], "deny", "{answer}");
}

/// Cursor hooks: a shell guard on beforeShellExecution reading Cursor's top-level `command`, a
/// `.env` read guard answering `permission: deny`, and a stop hook's `followup_message`.
#[test]
fn cursor_hooks_round_trip() {
    let p = Project::new();
    script(
        &p,
        ".cursor/hooks/no-push.sh",
        "#!/bin/sh\npython3 -c 'import json,sys; c=json.load(sys.stdin).get(\"command\",\"\"); \
         print(json.dumps({\"permission\": \"deny\", \"agent_message\": \"no git push\"})) if \
         \"git push\" in c else print(json.dumps({\"permission\": \"allow\"}))'\n",
    );
    script(
        &p,
        ".cursor/hooks/env-guard.sh",
        "#!/bin/sh\npython3 -c 'import json,sys; f=json.load(sys.stdin).get(\"file_path\",\"\"); \
         print(json.dumps({\"permission\": \"deny\", \"user_message\": \"secrets stay out\"})) \
         if f.endswith(\".env\") else print(\"{}\")'\n",
    );
    script(
        &p,
        ".cursor/hooks/again.sh",
        "#!/bin/sh\ntest -f done.txt || echo '{\"followup_message\": \"finish the docs\"}'\n",
    );
    p.write(
        ".cursor/hooks.json",
        r#"{"version": 1, "hooks": {
            "beforeShellExecution": [{"command": ".cursor/hooks/no-push.sh"}],
            "beforeReadFile": [{"command": ".cursor/hooks/env-guard.sh"}],
            "stop": [{"command": ".cursor/hooks/again.sh"}]
        }}"#,
    );
    let toml = import_write(&p, "cursor", &[]);
    assert!(toml.contains("tool = \"bash\""), "{toml}");
    assert!(toml.contains("tool = \"@file_reads\""), "{toml}");
    assert!(toml.contains("name = \"cursor-stop-"), "{toml}");
    let base = |event: &str| {
        json!({"conversation_id": "c", "generation_id": "g", "hook_event_name": event,
               "workspace_roots": [p.root], "cwd": p.root})
    };
    // Installed on preToolUse, as `install cursor` does: the shell guard reads `command`.
    let mut push = base("preToolUse");
    push["tool_name"] = json!("Shell");
    push["tool_input"] = json!({"command": "git push origin main"});
    let (_, answer) = trusted_event_answer(&p, "cursor", None, &push);
    assert_eq!(answer["permission"], "deny", "{answer}");
    // The read guard does not judge a shell call, and the shell guard not a read.
    let mut read = base("preToolUse");
    read["tool_name"] = json!("Read");
    read["tool_input"] = json!({"file_path": p.root.join(".env")});
    let (_, answer) = trusted_event_answer(&p, "cursor", None, &read);
    assert_eq!(answer["permission"], "deny", "{answer}");
    let mut ls = base("preToolUse");
    ls["tool_name"] = json!("Shell");
    ls["tool_input"] = json!({"command": "ls"});
    let (_, answer) = trusted_event_answer(&p, "cursor", None, &ls);
    assert_ne!(answer["permission"], "deny", "{answer}");
    let mut stop = base("stop");
    stop["status"] = json!("completed");
    stop["loop_count"] = json!(0);
    let (_, answer) = trusted_event_answer(&p, "cursor", None, &stop);
    assert_eq!(answer["followup_message"], "finish the docs", "{answer}");
}

/// `import cursor --user`: `./hooks/x.sh` is relative to `~/.cursor`, where Cursor runs it.
#[test]
fn cursor_user_hooks_run_from_the_cursor_folder() {
    let p = Project::new();
    let home = p.base.join("home");
    fs::create_dir_all(home.join(".cursor/hooks")).expect("mkdir");
    fs::write(
        home.join(".cursor/hooks.json"),
        r#"{"version": 1, "hooks": {"stop": [{"command": "./hooks/again.sh"}]}}"#,
    )
    .expect("write");
    fs::write(
        home.join(".cursor/hooks/again.sh"),
        "#!/bin/sh\necho '{\"followup_message\": \"from home\"}'\n",
    )
    .expect("write");
    let mut perms = fs::metadata(home.join(".cursor/hooks/again.sh"))
        .expect("meta")
        .permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    fs::set_permissions(home.join(".cursor/hooks/again.sh"), perms).expect("chmod");
    let out = p
        .cli()
        .env("HOME", &home)
        .args(["import", "cursor", "--user"])
        .output()
        .expect("import");
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    let cursor_dir = home.join(".cursor");
    assert!(
        text.contains(&format!(
            "cd '{}' && ./hooks/again.sh",
            cursor_dir.display()
        )),
        "{text}"
    );
}

/// A Copilot entry's `cwd`, `env` and `timeoutSec` carry over: the hook runs in its folder with
/// its variables (a literal one, and one Copilot expands), and a `cwd` that does not exist fails
/// the hook instead of running it in the project root.
#[test]
fn copilot_cwd_env_and_timeout_round_trip() {
    let p = Project::new();
    fs::create_dir_all(p.root.join("tools")).expect("mkdir");
    p.write(
        ".github/hooks/audit.json",
        r#"{"version": 1, "hooks": {"preToolUse": [
            {"type": "command", "cwd": "tools", "timeoutSec": 7,
             "env": {"AUDIT_TAG": "ka test", "AUDIT_BIN": "$HOME/bin", "ODD": "$(touch pwned)"},
             "bash": "pwd > \"$KA_PROJECT_DIR/seen\"; echo \"$AUDIT_TAG|$AUDIT_BIN|$ODD\" >> \"$KA_PROJECT_DIR/seen\""},
            {"type": "command", "cwd": "missing", "bash": "touch \"$KA_PROJECT_DIR/ran-in-root\""}
        ]}}"#,
    );
    let toml = import_write(&p, "copilot", &[]);
    assert!(toml.contains("timeout = 7"), "{toml}");
    assert!(!toml.contains("not imported"), "{toml}");
    let payload = json!({"sessionId": "s", "timestamp": 1, "cwd": p.root, "toolName": "bash",
        "toolArgs": {"command": "ls"}});
    let (_, answer) = trusted_event_answer(&p, "copilot", Some("preToolUse"), &payload);
    let seen = fs::read_to_string(p.root.join("seen")).expect("the hook ran");
    let home = std::env::var("HOME").unwrap_or_default();
    let mut lines = seen.lines();
    let cwd = lines.next().unwrap_or_default();
    assert!(cwd.ends_with("/tools"), "{seen}");
    assert_eq!(
        lines.next(),
        Some(format!("ka test|{home}/bin|$(touch pwned)").as_str()),
        "{seen}"
    );
    assert!(!p.root.join("tools/pwned").exists() && !p.root.join("pwned").exists());
    assert!(!p.root.join("ran-in-root").exists());
    // The failing `cd` failed the guard, and Copilot blocks a preToolUse hook that fails.
    assert_eq!(answer["permissionDecision"], "deny", "{answer}");
}

/// An Antigravity guard (a named group in `.agents/hooks.json`, matcher on its own tool name,
/// reading `toolCall.args.CommandLine`) blocks through `ka-hooks antigravity` after the import,
/// lets other commands through, and is scoped to the tool it named.
#[test]
fn antigravity_guard_round_trips() {
    let p = Project::new();
    script(
        &p,
        ".agents/no-push.sh",
        "#!/bin/sh\npython3 -c 'import json,sys; c=json.load(sys.stdin)[\"toolCall\"][\"args\"][\"CommandLine\"]; \
         sys.exit(2) if \"git push\" in c else None' || { echo 'no pushes from the agent' >&2; exit 2; }\n",
    );
    p.write(
        ".agents/hooks.json",
        r#"{"team-guards": {"enabled": true, "PreToolUse": [
            {"matcher": "run_command", "hooks": [{"type": "command", "command": "./.agents/no-push.sh", "timeout": 9}]}
        ]}}"#,
    );
    let toml = import_write(&p, "antigravity", &[]);
    assert!(toml.contains("timeout = 9"), "{toml}");
    assert!(toml.contains("on_error = \"block\""), "{toml}");
    let call = |command: &str| {
        json!({"conversationId": "s", "workspacePaths": [p.root], "transcriptPath": "/tmp/t",
            "toolCall": {"name": "run_command", "args": {"CommandLine": command}}, "stepIdx": 1})
    };
    let (code, answer) = trusted_event_answer(
        &p,
        "antigravity",
        Some("PreToolUse"),
        &call("git push origin main"),
    );
    let said = format!("{code:?} {answer}");
    assert!(
        code == Some(2) || answer["decision"] == "deny",
        "not blocked: {said}"
    );
    let (code, answer) =
        trusted_event_answer(&p, "antigravity", Some("PreToolUse"), &call("git status"));
    assert!(
        code == Some(0) && answer["decision"] != "deny",
        "{code:?} {answer}"
    );
    // A file tool is not the guard's business.
    let write = json!({"conversationId": "s", "workspacePaths": [p.root], "transcriptPath": "/tmp/t",
        "toolCall": {"name": "write_to_file", "args": {"TargetFile": "git push", "CodeContent": "x"}},
        "stepIdx": 1});
    let (code, answer) = trusted_event_answer(&p, "antigravity", Some("PreToolUse"), &write);
    assert!(
        code == Some(0) && answer["decision"] != "deny",
        "{code:?} {answer}"
    );
}
