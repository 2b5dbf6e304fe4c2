//! The shared payload corpus (`tests/corpus/*.json`): each case is one tool call, prompt or turn
//! end, written as ka's payload and as the payload Claude Code, Codex CLI and Gemini CLI send
//! for it. Run natively (`ka-hooks run`) and through each adapter (`ka-hooks claude|codex|
//! gemini`) against the shipped example hooks (`ka.toml.example`, plus
//! `tests/corpus/ka.local.toml`), every run must reach the same verdict: blocked, allowed,
//! rewritten input, feedback, a mode switch, an ask, a halt, keep going, context for the model,
//! a capped continuation or a message for the user (where an agent cannot express a verdict the
//! case says what it gets instead, in `expect_by_agent`).
//!
//! A case file: `about`, `expect` (`verdict`, and text the verdict's detail `contains` or
//! `lacks`), optional `expect_by_agent`, optional `setup` (files to create), optional `repeat`
//! (how many times each agent sends its payload; the last answer is checked, as when a stop
//! hook keeps a turn going), `ka` (`event` and `payload`), and one payload per agent (`$ROOT`
//! stands for the project root), or `{"unsupported": "why"}`. The payloads of GitHub Copilot,
//! Cursor and Antigravity are in `tests/corpus/agents/` ([`crate::adapter_corpus_agents`]);
//! each case's test runs them too.

use crate::support;
use crate::support::repo;

use std::fs;
use std::path::PathBuf;

use serde_json::Value;
use support::Project;

pub(crate) fn corpus_dir() -> PathBuf {
    repo().join("tests").join("corpus")
}

/// The scratch project: the example config and scripts, the corpus' local layer, `src/`.
pub(crate) fn corpus_project() -> Project {
    let p = Project::new();
    let example = fs::read_to_string(repo().join("ka.toml.example")).expect("ka.toml.example");
    p.write(".ka/ka.toml", &example);
    let local = fs::read_to_string(corpus_dir().join("ka.local.toml")).expect("corpus layer");
    p.write(".ka/ka.local.toml", &local);
    let dest = p.root.join("examples").join("hooks");
    fs::create_dir_all(&dest).expect("mkdir examples/hooks");
    for entry in fs::read_dir(repo().join("examples").join("hooks")).expect("examples/hooks") {
        let path = entry.expect("dir entry").path();
        fs::copy(&path, dest.join(path.file_name().expect("file name"))).expect("copy");
    }
    fs::create_dir_all(p.root.join("src")).expect("mkdir src");
    p
}

/// What a run decided, agent-neutral: the verdict and its detail (reason, input, feedback).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Seen {
    pub(crate) verdict: String,
    pub(crate) detail: String,
}

pub(crate) fn seen(verdict: &str, detail: impl Into<String>) -> Seen {
    Seen {
        verdict: verdict.to_owned(),
        detail: detail.into(),
    }
}

pub(crate) fn text_of(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

/// `ka-hooks run` (its `--json` outcome).
pub(crate) fn native(p: &Project, case: &Value) -> Seen {
    let ka = &case["ka"];
    let event = ka["event"].as_str().expect("ka.event");
    let output = p
        .cli()
        .args(["--trust", "run", event, "--json", "--input"])
        .arg(ka["payload"].to_string())
        .output()
        .expect("ka-hooks run");
    let outcome: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("run --json printed no outcome ({e}): {output:?}"));
    if !outcome["halt"].is_null() {
        return seen("halted", text_of(outcome.get("halt")));
    }
    if outcome["blocked"] == true {
        return seen("blocked", text_of(outcome.get("reason")));
    }
    if outcome["decision"] == "ask" {
        return seen("ask", text_of(outcome.get("reason")));
    }
    if outcome["decision"] == "allow" && outcome["updated_input"].is_null() {
        return seen("approved", outcome["permission_updates"].to_string());
    }
    if outcome["deferred"] == true {
        return seen("deferred", outcome["messages"].to_string());
    }
    if !outcome["updated_input"].is_null() {
        return seen("rewritten", outcome["updated_input"].to_string());
    }
    if !outcome["keep_going"].is_null() {
        return seen("keep_going", text_of(outcome.get("keep_going")));
    }
    if !outcome["feedback"].is_null() {
        return seen("feedback", text_of(outcome.get("feedback")));
    }
    if !outcome["context"].is_null() {
        return seen("context", text_of(outcome.get("context")));
    }
    if !outcome["mode"].is_null() {
        return seen("mode", text_of(outcome.get("mode")));
    }
    let notes = outcome["notes"].to_string();
    if notes.contains("max_continuations") {
        return seen("capped", notes);
    }
    match outcome["messages"].as_array().map(Vec::as_slice) {
        Some([]) | None => seen("allowed", ""),
        Some(messages) => seen(
            "message",
            messages
                .iter()
                .map(|m| text_of(Some(m)))
                .collect::<Vec<_>>()
                .join("\n"),
        ),
    }
}

/// `ka-hooks <agent>` with the agent's payload on stdin, read back in the agent's contract.
fn corpus_adapter_run(p: &Project, agent: &str, payload: &Value) -> Seen {
    let stdin = payload
        .to_string()
        .replace("$ROOT", &p.root.to_string_lossy());
    let output = p
        .cli()
        .args(["--trust", agent])
        .write_stdin(stdin)
        .output()
        .expect("ka-hooks adapter");
    let stderr = String::from_utf8_lossy(&output.stderr).trim().to_owned();
    let event = payload["hook_event_name"].as_str().unwrap_or("");
    match output.status.code() {
        // TeammateIdle and TaskCompleted keep going by exit 2.
        Some(2) if matches!(event, "TeammateIdle" | "TaskCompleted") => {
            return seen("keep_going", stderr)
        }
        Some(2) => return seen("blocked", stderr),
        Some(0) => {}
        other => panic!("ka-hooks {agent} exited {other:?}: {stderr}"),
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    if stdout.trim().is_empty() {
        return seen("allowed", "");
    }
    let answer: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("ka-hooks {agent} printed no JSON object ({e}): {stdout}"));
    let hso = &answer["hookSpecificOutput"];
    let message = text_of(answer.get("systemMessage"));
    let said_mode = message.contains("asked to switch to `");
    if answer["continue"] == false {
        return seen("halted", text_of(answer.get("stopReason")));
    }
    // PermissionRequest (Claude Code, Codex): `hookSpecificOutput.decision.behavior`.
    match hso["decision"]["behavior"].as_str() {
        Some("deny") => return seen("blocked", text_of(hso["decision"].get("message"))),
        Some("allow") => {
            return seen(
                "approved",
                hso["decision"]["updatedPermissions"].to_string(),
            )
        }
        _ => {}
    }
    let stopping = matches!(event, "Stop" | "SubagentStop" | "AfterAgent");
    match agent {
        "gemini" => {
            if answer["decision"] == "deny" && stopping {
                return seen("keep_going", text_of(answer.get("reason")));
            }
            if answer["decision"] == "deny" {
                return seen("blocked", text_of(answer.get("reason")));
            }
            if !hso["tool_input"].is_null() {
                return seen("rewritten", hso["tool_input"].to_string());
            }
        }
        _ => {
            match hso["permissionDecision"].as_str() {
                Some("deny") => {
                    return seen("blocked", text_of(hso.get("permissionDecisionReason")))
                }
                Some("ask") if hso["updatedInput"].is_null() => {
                    return seen("ask", text_of(hso.get("permissionDecisionReason")))
                }
                Some("allow") if hso["updatedInput"].is_null() => {
                    return seen("approved", text_of(hso.get("permissionDecisionReason")))
                }
                Some("defer") => return seen("deferred", message),
                _ => {}
            }
            if !hso["updatedInput"].is_null() {
                return seen("rewritten", hso["updatedInput"].to_string());
            }
            if answer["decision"] == "block" && stopping {
                return seen("keep_going", text_of(answer.get("reason")));
            }
            if answer["decision"] == "block" {
                let verdict = if answer.get("reason").is_some() && hso.is_null() {
                    // PostToolUse: the reason goes to the model (a marked result).
                    "feedback"
                } else {
                    "blocked"
                };
                let verdict = if payload["hook_event_name"] == "UserPromptSubmit" {
                    "blocked"
                } else {
                    verdict
                };
                return seen(verdict, text_of(answer.get("reason")));
            }
        }
    }
    if !hso["additionalContext"].is_null() {
        // Context that rides a tool result is the tool's feedback; elsewhere it is context.
        let verdict = if matches!(event, "PostToolUse" | "PostToolUseFailure" | "AfterTool") {
            "feedback"
        } else {
            "context"
        };
        return seen(verdict, text_of(hso.get("additionalContext")));
    }
    if said_mode {
        return seen("mode", message);
    }
    if message.contains("max_continuations") {
        return seen("capped", message);
    }
    if !message.is_empty() {
        return seen("message", message);
    }
    seen("allowed", "")
}

#[track_caller]
pub(crate) fn check_verdict(who: &str, got: &Seen, expect: &Value) {
    let verdict = expect["verdict"].as_str().expect("expect.verdict");
    assert_eq!(got.verdict, verdict, "{who}: wrong verdict; saw {got:?}");
    if let Some(needle) = expect["contains"].as_str() {
        assert!(
            got.detail.contains(needle),
            "{who}: {verdict} detail lacks {needle:?}: {:?}",
            got.detail
        );
    }
    if let Some(needle) = expect["lacks"].as_str() {
        assert!(
            !got.detail.contains(needle),
            "{who}: {verdict} detail still has {needle:?}: {:?}",
            got.detail
        );
    }
}

/// Each agent's payload of a case is checked against the case's one description, `ka`: read by
/// the agent's adapter, it is the same ka event, and on a tool event the same ka tool (or the
/// one `tool_by_agent` names, where the agent has no such tool).
pub(crate) fn reads_as_described(
    name: &str,
    agent: &str,
    payload: &Value,
    named: Option<&str>,
    case: &Value,
) {
    let agent_id = ka_hooks::adapter::Agent::ALL
        .into_iter()
        .find(|a| a.command() == agent)
        .unwrap_or_else(|| panic!("{name}: no adapter `{agent}`"));
    let text = payload.to_string().replace("$ROOT", "/corpus-root");
    let Ok(call) = ka_hooks::adapter::parse_bytes_as(agent_id, text.as_bytes(), named) else {
        // A payload that cannot be read is a case of its own (it fails closed), not a mismatch.
        return;
    };
    let ka = &case["ka"];
    assert_eq!(
        Some(call.event.as_str()),
        ka["event"].as_str(),
        "{name}: the {agent} payload is not the event the case describes"
    );
    // Where the agent has no such tool, the case names the one it uses (`tool_by_agent`).
    let own = case["tool_by_agent"][agent].as_str();
    if let Some(tool) = own.or_else(|| ka["payload"]["tool"].as_str()) {
        assert_eq!(
            call.payload.get("tool").and_then(Value::as_str),
            Some(tool),
            "{name}: the {agent} payload is not the tool the case describes"
        );
    }
}

fn run_corpus_case(name: &str) {
    let file = corpus_dir().join(format!("{name}.json"));
    let text = fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let case: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
    let p = corpus_project();
    for (rel, content) in case["setup"].as_object().into_iter().flatten() {
        p.write(rel, content.as_str().expect("setup content is a string"));
    }
    let expect = &case["expect"];
    check_verdict(&format!("{name} (native run)"), &native(&p, &case), expect);
    for agent in ["claude", "codex", "gemini"] {
        let payload = &case[agent];
        assert!(
            payload.is_object(),
            "{name}: no {agent} payload (give one, or {{\"unsupported\": \"why\"}})"
        );
        if let Some(why) = payload["unsupported"].as_str() {
            assert!(
                !why.is_empty(),
                "{name}: {agent} unsupported without a reason"
            );
            continue;
        }
        reads_as_described(name, agent, payload, None, &case);
        let expect = case["expect_by_agent"].get(agent).unwrap_or(expect);
        let repeat = case["repeat"].as_u64().unwrap_or(1);
        let mut got = corpus_adapter_run(&p, agent, payload);
        for _ in 1..repeat {
            got = corpus_adapter_run(&p, agent, payload);
        }
        check_verdict(&format!("{name} ({agent})"), &got, expect);
    }
    crate::adapter_corpus_agents::run_agents_case(name, &case);
    crate::adapter_toy::run_toy(name).unwrap_or_else(|e| panic!("{e}"));
}

macro_rules! corpus {
    ($($test:ident => $case:literal,)*) => {
        $(
            #[test]
            fn $test() {
                run_corpus_case($case);
            }
        )*

        /// Every case file is run by a test above.
        #[test]
        fn every_corpus_file_has_a_test() {
            let listed: Vec<&str> = vec![$($case),*];
            let mut files: Vec<String> = fs::read_dir(corpus_dir())
                .expect("tests/corpus")
                .filter_map(|e| {
                    let path = e.ok()?.path();
                    if path.extension()? != "json" {
                        return None;
                    }
                    Some(path.file_stem()?.to_string_lossy().into_owned())
                })
                .collect();
            files.sort();
            for file in &files {
                assert!(listed.contains(&file.as_str()), "tests/corpus/{file}.json has no test");
            }
        }
    };
}

corpus! {
    write_outside_src_is_blocked_everywhere => "write-outside-src",
    write_inside_src_is_allowed_everywhere => "write-inside-src",
    edit_outside_src_is_blocked_everywhere => "edit-outside-src",
    multi_edit_outside_src_is_blocked_everywhere => "multi-edit-outside-src",
    notebook_edit_outside_src_is_blocked_everywhere => "notebook-edit-outside-src",
    patch_move_outside_src_is_blocked_everywhere => "patch-move-outside-src",
    bash_secret_is_rewritten_everywhere => "bash-secret",
    write_secret_in_src_is_rewritten_everywhere => "write-secret-in-src",
    post_write_feedback_reaches_the_model_everywhere => "post-write-feedback",
    failing_tests_mode_switch_is_said_everywhere => "tests-failing-plan-mode",
    unfiltered_tool_is_allowed_everywhere => "read-no-hook",
    guarded_prompt_is_blocked_everywhere => "prompt-blocked",
    ordinary_prompt_is_allowed_everywhere => "prompt-allowed",
    ask_is_asked_or_blocked_with_why => "fetch-asks",
    turn_end_changes_nothing_everywhere => "stop",
    stop_hook_keeps_the_turn_going_everywhere => "stop-until-done",
    stop_hook_lets_the_turn_end_once_done_everywhere => "stop-until-done-finished",
    endless_stop_hook_is_capped_everywhere => "stop-until-done-capped",
    session_start_context_reaches_the_model_everywhere => "session-start-context",
    session_start_matcher_selects_the_source_everywhere => "session-start-matcher-resume",
    session_start_plain_stdout_is_context_only_under_claude => "session-start-plain-stdout",
    prompt_context_reaches_the_model_everywhere => "prompt-context",
    long_system_message_reaches_the_user_whole_everywhere => "long-system-message",
    halt_stops_the_turn_everywhere => "halt",
    defer_is_no_decision_everywhere => "defer",
    post_tool_block_marks_an_error_everywhere => "post-tool-block",
    notification_hooks_run_everywhere => "notification",
    permission_request_denies_everywhere => "permission-request",
    subagent_start_context_everywhere => "subagent-start",
    subagent_stop_keeps_going_everywhere => "subagent-stop",
    post_compact_hooks_run_everywhere => "post-compact",
    setup_hooks_run_everywhere => "setup",
    teammate_idle_keeps_going_everywhere => "teammate-idle",
    task_completed_keeps_going_everywhere => "task-completed",
    permission_denied_hooks_run_everywhere => "permission-denied",
    interrupt_hooks_run_everywhere => "interrupt",
    post_tool_use_failure_hint_everywhere => "post-tool-use-failure",
    permission_request_allow_is_answered_everywhere => "permission-request-allow",
    permission_request_deny_message_is_answered_everywhere => "permission-request-deny-message",
    instructions_loaded_runs_its_hooks => "instructions-loaded",
    model_events_are_observed_everywhere => "observed-model-events",
    plain_stdout_is_a_message_under_gemini => "gemini-plain-stdout",
    broken_json_is_a_message_under_gemini => "gemini-broken-json",
    exit_0_stderr_is_a_message_under_gemini => "gemini-exit0-stderr",
    session_start_exit_2_shows_stderr_under_claude => "session-start-exit-2",
    pre_compact_exit_2_blocks_compaction_under_claude => "pre-compact-exit-2",
    after_agent_allow_is_no_failure_everywhere => "after-agent-allow",
    plain_allow_is_said_only_where_it_means_something => "plain-allow",
}
