//! `ka-hooks copilot` against what GitHub Copilot CLI 1.0.102 really sends and reads, driven
//! headless: permission requests with `hookName` and `toolInput`, PascalCase tool events with
//! Claude's tool names and Copilot's argument names, prompt blocks and context, continuation
//! prompts, a subagent's agentStop, the channel of ka's messages, and Copilot running
//! `.claude/settings.json` too.

use crate::support;
use crate::support::agents::{agent_answer, Stdout};

use serde_json::{json, Value};
use support::{hook, Project};

/// Guards that read ka's arguments: no `git push` (permission requests and tool calls), no
/// file outside `src/`, no `SECRET` in written content (redacted), context on prompts and shell
/// calls, and a stop hook that always wants more, capped at 2.
fn copilot_cli_project() -> Project {
    let mut toml = String::from("[hook_settings]\nmax_continuations = 2\n\n");
    toml.push_str(&hook(
        "no-push",
        "permission_request",
        r#"python3 -c 'import json,sys; c=json.load(sys.stdin)["arguments"].get("command",""); (print("no git push", file=sys.stderr), sys.exit(2)) if "git push" in c else None'"#,
        &[],
    ));
    toml.push_str(&hook(
        "src-only",
        "permission_request",
        r#"python3 -c 'import json,sys; p=json.load(sys.stdin)["arguments"].get("path",""); (print(p+" is outside src/", file=sys.stderr), sys.exit(2)) if p and "/src/" not in p else None'"#,
        &["tool = [\"write\", \"edit\"]"],
    ));
    toml.push_str(&hook(
        "redact",
        "pre_tool_use",
        r#"python3 -c 'import json,sys; a=json.load(sys.stdin)["arguments"]; c=a.get("content",""); print(json.dumps({"updated_input": {"content": c.replace("SECRET", "[REDACTED]")}})) if "SECRET" in c else None'"#,
        &["tool = [\"write\"]"],
    ));
    toml.push_str(&hook(
        "shell-context",
        "pre_tool_use",
        r#"echo '{"context": "the build runs in CI only"}'"#,
        &["tool = [\"bash\"]"],
    ));
    toml.push_str(&hook(
        "prompt-guard",
        "user_prompt_submit",
        r#"grep -q DROP && { echo 'no destructive SQL in prompts' >&2; exit 2; }; echo '{"context": "the style guide says tabs"}'"#,
        &[],
    ));
    toml.push_str(&hook(
        "never-done",
        "stop",
        r#"echo '{"keep_going": "run the tests once more"}'"#,
        &[],
    ));
    Project::with_user_toml(&toml)
}

/// `ka-hooks <agent> [--event NAME]` with `env`: (exit code, stdout JSON or Null, stderr).
fn copilot_cli_answer(
    p: &Project,
    agent: &str,
    event: Option<&str>,
    env: &[(&str, &str)],
    payload: &Value,
) -> (Option<i32>, Value, String) {
    answer_from(p.cli(), agent, event, env, payload)
}

/// [`copilot_cli_answer`] with the command given: e.g. started by a process named like an agent.
fn answer_from(
    mut cmd: assert_cmd::Command,
    agent: &str,
    event: Option<&str>,
    env: &[(&str, &str)],
    payload: &Value,
) -> (Option<i32>, Value, String) {
    for (k, v) in env {
        cmd.env(k, v);
    }
    agent_answer(cmd, agent, event, payload, Stdout::Json)
}

fn copilot_event(p: &Project, event: &str, payload: &Value) -> (Option<i32>, Value, String) {
    copilot_cli_answer(p, "copilot", Some(event), &[], payload)
}

/// Copilot CLI 1.0.102's permissionRequest payload: `hookName`, `toolInput`,
/// `permissionSuggestions` (no `toolArgs`).
fn permission_request(p: &Project, tool: &str, input: Value) -> Value {
    json!({"sessionId": "s", "timestamp": 1_767_225_600_000_u64, "cwd": p.root,
           "hookName": "permissionRequest", "toolName": tool, "toolInput": input,
           "permissionSuggestions": [{"type": "addRules", "rules": [{"toolName": tool}]}]})
}

#[test]
fn a_permission_request_guard_sees_tool_input() {
    let p = copilot_cli_project();
    let payload = permission_request(&p, "bash", json!({"command": "git push origin main"}));
    let (code, answer, _) = copilot_event(&p, "permissionRequest", &payload);
    assert_eq!(code, Some(0), "{answer}");
    assert_eq!(answer["behavior"], "deny", "{answer}");
    assert!(answer["message"]
        .as_str()
        .unwrap_or_default()
        .contains("no git push"));
    // An ordinary command is not denied.
    let payload = permission_request(&p, "bash", json!({"command": "git status"}));
    let (_, answer, _) = copilot_event(&p, "permissionRequest", &payload);
    assert!(answer.get("behavior").is_none(), "{answer}");
}

/// A create asks permission as tool `edit` with `{file_path, diff}`: the path guard sees it.
#[test]
fn a_create_permission_request_is_judged_by_its_path() {
    let p = copilot_cli_project();
    let input = json!({"file_path": p.root.join("README.md"), "diff": "+hello\n"});
    let (_, answer, _) = copilot_event(
        &p,
        "permissionRequest",
        &permission_request(&p, "edit", input),
    );
    assert_eq!(answer["behavior"], "deny", "{answer}");
    let input = json!({"file_path": p.root.join("src/a.rs"), "diff": "+fn a() {}\n"});
    let (_, answer, _) = copilot_event(
        &p,
        "permissionRequest",
        &permission_request(&p, "edit", input),
    );
    assert!(answer.get("behavior").is_none(), "{answer}");
}

/// The PascalCase PermissionRequest payload has no `hook_event_name`: it is judged, not
/// denied for want of a name, whether or not the command line names the event.
#[test]
fn a_pascal_case_permission_request_without_an_event_name_is_judged() {
    let p = copilot_cli_project();
    let payload = json!({"session_id": "s", "timestamp": "2026-12-01T10:00:00.000Z",
        "cwd": p.root, "hookName": "PermissionRequest", "tool_name": "Bash",
        "tool_input": {"command": "ls"}, "permission_suggestions": []});
    for event in [Some("permissionRequest"), Some("PermissionRequest"), None] {
        let (code, answer, stderr) = copilot_cli_answer(&p, "copilot", event, &[], &payload);
        assert_eq!(code, Some(0), "{event:?}: {stderr}");
        assert!(answer.get("behavior").is_none(), "{event:?}: {answer}");
    }
}

/// PascalCase tool events: Claude's tool name, Copilot's argument names. The write guard sees
/// the content, and the rewrite goes back as `{path, file_text}`.
#[test]
fn a_pascal_case_write_is_read_and_rewritten_in_copilots_names() {
    let p = copilot_cli_project();
    let path = p.root.join("src/config.txt");
    let payload = json!({"hook_event_name": "PreToolUse", "session_id": "s",
        "timestamp": "2026-12-01T10:00:00.000Z", "cwd": p.root, "tool_name": "Write",
        "tool_input": {"path": path, "file_text": "key=SECRET\n"}});
    let (code, answer, _) = copilot_event(&p, "PreToolUse", &payload);
    assert_eq!(code, Some(0));
    let args = &answer["modifiedArgs"];
    assert_eq!(args["path"], json!(path), "{answer}");
    assert_eq!(args["file_text"], "key=[REDACTED]\n", "{answer}");
    assert!(
        args.get("file_path").is_none() && args.get("content").is_none(),
        "{answer}"
    );
}

#[test]
fn prompt_context_and_pre_tool_context_reach_the_model() {
    let p = copilot_cli_project();
    let payload = json!({"sessionId": "s", "timestamp": 1, "cwd": p.root, "prompt": "hi"});
    let (code, answer, _) = copilot_event(&p, "userPromptSubmitted", &payload);
    assert_eq!(code, Some(0));
    assert_eq!(answer["additionalContext"], "the style guide says tabs");
    let payload = json!({"sessionId": "s", "timestamp": 1, "cwd": p.root, "toolName": "bash",
        "toolArgs": {"command": "make"}});
    let (_, answer, _) = copilot_event(&p, "preToolUse", &payload);
    assert_eq!(
        answer["additionalContext"], "the build runs in CI only",
        "{answer}"
    );
}

/// Copilot sends each continuation back as a userPromptSubmitted prompt: it must not start the
/// turn's count over, so `max_continuations = 2` holds.
#[test]
fn continuation_prompts_do_not_reset_the_count() {
    let p = copilot_cli_project();
    let stop = json!({"sessionId": "turn", "timestamp": 1, "cwd": p.root,
        "transcriptPath": "/tmp/t", "stopReason": "end_turn", "stop_hook_active": true});
    let prompt = json!({"sessionId": "turn", "timestamp": 1, "cwd": p.root,
        "prompt": "run the tests once more"});
    let first = json!({"sessionId": "turn", "timestamp": 1, "cwd": p.root, "prompt": "go"});
    copilot_event(&p, "userPromptSubmitted", &first);
    let mut continued = 0;
    for _ in 0..6 {
        let (_, answer, _) = copilot_event(&p, "agentStop", &stop);
        if answer["decision"] == "block" {
            continued += 1;
            copilot_event(&p, "userPromptSubmitted", &prompt);
        }
    }
    assert_eq!(continued, 2);
}

/// agentStop at a subagent's end (`agentId`) is that subagent's stop: the turn's stop hooks do
/// not run, and no continuation of the turn is spent.
#[test]
fn a_subagents_agent_stop_spends_no_continuation() {
    let p = copilot_cli_project();
    let sub = json!({"sessionId": "child", "timestamp": 1, "cwd": p.root, "agentId": "a1",
        "transcriptPath": "/tmp/t", "stopReason": "end_turn"});
    let (_, answer, _) = copilot_event(&p, "agentStop", &sub);
    assert_ne!(answer["decision"], "block", "{answer}");
}

/// Copilot shows an exit-0 hook's stderr only at debug level: ka's messages ride the text
/// the model reads, or exit 2, which Copilot shows as a warning.
#[test]
fn messages_use_a_channel_copilot_shows() {
    let p = copilot_cli_project();
    let stop = json!({"sessionId": "cap", "timestamp": 1, "cwd": p.root,
        "transcriptPath": "/tmp/t", "stopReason": "end_turn", "stop_hook_active": true});
    let mut last = (None, Value::Null, String::new());
    for _ in 0..4 {
        last = copilot_event(&p, "agentStop", &stop);
    }
    let (code, answer, stderr) = last;
    assert_eq!(code, Some(2), "{answer}");
    assert!(stderr.contains("max_continuations = 2"), "{stderr}");
}

/// With both `install claude` and `install copilot`, Copilot runs `.claude/settings.json`
/// too: `ka-hooks claude` run by Copilot stands aside, and the hooks run once.
#[test]
fn ka_hooks_claude_run_by_copilot_stands_aside_for_the_copilot_install() {
    let p = copilot_cli_project();
    let payload = json!({"hook_event_name": "UserPromptSubmit", "session_id": "s",
        "cwd": p.root, "prompt": "DROP TABLE users"});
    // What Copilot CLI 1.0.102 sets for a `.claude/settings.json` hook (no COPILOT_HOOK_DIR,
    // which only its own hook files get).
    let root = p.root.display().to_string();
    let env = [
        ("COPILOT_CLI", "1"),
        ("COPILOT_PROJECT_DIR", root.as_str()),
        ("CLAUDE_PROJECT_DIR", root.as_str()),
    ];
    // Without the Copilot install, `ka-hooks claude` runs the hooks.
    let (code, _, _) = copilot_cli_answer(&p, "claude", None, &env, &payload);
    assert_eq!(code, Some(2));
    p.write(
        ".github/hooks/ka-hooks.json",
        r#"{"version": 1, "hooks": {"userPromptSubmitted": [{"type": "command", "bash": "ka-hooks copilot --event userPromptSubmitted"}]}}"#,
    );
    // The variables alone are not Copilot: a repository's `.claude/settings.json` can set them
    // for every hook of Claude Code (`env`). Not run by Copilot, the hooks run.
    let (code, _, stderr) = copilot_cli_answer(&p, "claude", None, &env, &payload);
    assert_eq!(code, Some(2), "{stderr}");
    let (code, _, stderr) = answer_from(p.cli_under("claude"), "claude", None, &env, &payload);
    assert_eq!(code, Some(2), "{stderr}");
    // Run by Copilot, ka-hooks claude stands aside.
    let (code, answer, stderr) =
        answer_from(p.cli_under("copilot"), "claude", None, &env, &payload);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(answer, Value::Null);
    assert!(stderr.contains("once"), "{stderr}");
    // Claude Code itself (no Copilot variables) still runs them.
    let (code, _, _) = copilot_cli_answer(&p, "claude", None, &[], &payload);
    assert_eq!(code, Some(2));
}

/// Through `ka-hooks claude`, Copilot does not give an exit 2's stderr to the model: a block
/// is answered with the deny and its reason in JSON.
#[test]
fn a_block_through_ka_hooks_claude_under_copilot_carries_its_reason() {
    let p = copilot_cli_project();
    let payload = json!({"hook_event_name": "PermissionRequest", "session_id": "s",
        "cwd": p.root, "tool_name": "Bash", "tool_input": {"command": "git push"}});
    let env = [("COPILOT_CLI", "1")];
    let (_, answer, _) = copilot_cli_answer(&p, "claude", None, &env, &payload);
    assert_eq!(
        answer["hookSpecificOutput"]["decision"]["behavior"], "deny",
        "{answer}"
    );
    let p = Project::with_user_toml(&hook(
        "deny-writes",
        "pre_tool_use",
        "echo 'no writes here' >&2; exit 2",
        &[],
    ));
    let payload = json!({"hook_event_name": "PreToolUse", "session_id": "s", "cwd": p.root,
        "tool_name": "Write", "tool_input": {"file_path": p.root.join("x.txt"), "content": "x"}});
    let (code, answer, _) = copilot_cli_answer(&p, "claude", None, &env, &payload);
    assert_eq!(code, Some(0), "{answer}");
    assert_eq!(answer["permissionDecision"], "deny", "{answer}");
    let reason = answer["permissionDecisionReason"]
        .as_str()
        .unwrap_or_default();
    assert!(reason.contains("no writes here"), "{answer}");
    // Claude Code itself gets its exit 2.
    let (code, _, _) = copilot_cli_answer(&p, "claude", None, &[], &payload);
    assert_eq!(code, Some(2));
}

/// A project with only a formatter: `install copilot` registers `preToolUse` all the same, so
/// ka's protection of its own files runs (Copilot CLI 1.0.102 let the model edit `.ka/ka.toml`).
#[test]
fn install_copilot_registers_pre_tool_use_with_only_a_formatter() {
    let p = support::Project::new();
    p.project(&hook("fmt", "post_tool_use", "true", &[]));
    let out = p
        .cli()
        .args(["--trust", "install", "copilot", "--write"])
        .output()
        .expect("install");
    assert_eq!(out.status.code(), Some(0));
    let text =
        std::fs::read_to_string(p.root.join(".github/hooks/ka-hooks.json")).expect("hook file");
    let file: Value = serde_json::from_str(&text).expect("json");
    assert_eq!(
        file["hooks"]["preToolUse"][0]["bash"],
        format!("{} --event preToolUse", support::adapter_command("copilot")),
        "{text}"
    );
    assert!(file["hooks"]["postToolUse"][0].is_object(), "{text}");
}

/// `disableAllHooks` in `.github/copilot/settings.local.json` switches every Copilot hook off
/// (Copilot CLI 1.0.102): the model's create of that file is not let through.
#[test]
fn the_models_write_of_copilots_settings_is_not_let_through() {
    let p = copilot_cli_project();
    for rel in [
        ".github/copilot/settings.local.json",
        ".github/copilot/settings.json",
    ] {
        let payload = json!({"sessionId": "s", "timestamp": 1, "cwd": p.root, "toolName": "create",
            "toolArgs": {"path": p.root.join(rel), "file_text": "{\"disableAllHooks\": true}"}});
        let (code, answer, _) = copilot_event(&p, "preToolUse", &payload);
        let decision = answer["permissionDecision"].as_str().unwrap_or_default();
        assert!(
            code == Some(2) || decision == "deny" || decision == "ask",
            "{rel}: {answer}"
        );
    }
}
