//! The translation table row by row, and what Codex CLI and Gemini CLI get where their hook
//! contracts cannot say what the hooks decided.

use crate::support;
use crate::support::agents::codex_pre;
use crate::support::agents::{agent_answer, Stdout};

use std::path::Path;

use ka_hooks::adapter::tools::{self, TOOLS};
use ka_hooks::adapter::{parse, Agent};
use serde_json::{json, Map, Value};
use support::{hook, Project};

/// The agents whose tools are columns of [`TOOLS`]; the hook-file agents' rows are in
/// `tools_agents` (tested in `adapter_hookfiles`, listed in docs/agents.md).
const COLUMNS: [Agent; 3] = [Agent::Claude, Agent::Codex, Agent::Gemini];

#[test]
fn every_row_translates_both_ways_for_every_agent() {
    for row in TOOLS {
        for agent in COLUMNS {
            let Some(name) = row.name(agent) else {
                assert_eq!(
                    tools::agent_tool_name(agent, row.ka),
                    None,
                    "{agent:?} has no {}",
                    row.ka
                );
                continue;
            };
            assert_eq!(tools::ka_tool_name(agent, name), row.ka, "{agent:?} {name}");
            assert_eq!(
                tools::agent_tool_name(agent, row.ka).as_deref(),
                Some(name),
                "{agent:?} {}",
                row.ka
            );
            // Every renamed argument, plus one the table does not know, in the agent's names.
            let mut agent_args = Map::new();
            for arg in row.args {
                agent_args.insert(arg.name(agent).to_owned(), json!(arg.ka));
            }
            agent_args.insert("untouched".into(), json!(1));
            let ka_args = tools::args_to_ka(agent, name, &agent_args);
            for arg in row.args {
                assert_eq!(
                    ka_args.get(arg.ka),
                    Some(&json!(arg.ka)),
                    "{agent:?} {name}"
                );
            }
            assert_eq!(ka_args.get("untouched"), Some(&json!(1)));
            assert_eq!(
                tools::args_from_ka(agent, row.ka, &ka_args),
                agent_args,
                "{agent:?} {name}: the round trip changed the arguments"
            );
        }
    }
}

#[test]
fn readme_translation_table_lists_every_row() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/adapters.md"))
            .expect("docs/adapters.md");
    let table = &readme[readme
        .find("## The translation table")
        .expect("a translation table section")..];
    for row in TOOLS {
        let line = table
            .lines()
            .find(|l| l.starts_with(&format!("| `{}` |", row.ka)))
            .unwrap_or_else(|| panic!("docs/adapters.md's table has no row for `{}`", row.ka));
        for agent in COLUMNS {
            if let Some(name) = row.name(agent) {
                assert!(line.contains(&format!("`{name}`")), "{line} lacks `{name}`");
            }
        }
        for arg in row.args {
            for agent in COLUMNS {
                assert!(
                    line.contains(&format!("`{}`", arg.name(agent))),
                    "{line} lacks `{}`",
                    arg.name(agent)
                );
            }
        }
    }
}

#[test]
fn agents_payloads_become_ka_events() {
    let cases = [
        (Agent::Claude, "PreCompact", "pre_compact"),
        (Agent::Claude, "StopFailure", "stop"),
        (Agent::Codex, "SessionStart", "session_start"),
        (Agent::Gemini, "BeforeAgent", "user_prompt_submit"),
        (Agent::Gemini, "AfterAgent", "stop"),
        (Agent::Gemini, "PreCompress", "pre_compact"),
    ];
    for (agent, name, event) in cases {
        let payload = json!({"hook_event_name": name, "cwd": "/tmp", "custom_instructions": "focus on tests"});
        let call = parse(agent, &payload.to_string()).expect("supported");
        assert_eq!(call.event.as_str(), event, "{agent:?} {name}");
    }
    let call = parse(
        Agent::Claude,
        r#"{"hook_event_name": "PreCompact", "custom_instructions": "keep the API notes"}"#,
    )
    .expect("supported");
    assert_eq!(call.payload["focus"], "keep the API notes");
    let call = parse(Agent::Claude, r#"{"hook_event_name": "StopFailure"}"#).expect("supported");
    assert_eq!(call.payload["stop"], "error");
}

/// `ka-hooks <agent>` on `payload`: exit code, JSON answer (`Null` when none), stderr trimmed.
fn adapter_answer(p: &Project, agent: &str, payload: &Value) -> (Option<i32>, Value, String) {
    let (code, answer, stderr) = agent_answer(p.cli(), agent, None, payload, Stdout::Json);
    (code, answer, stderr.trim().to_owned())
}

fn gemini(p: &Project, event: &str, extra: Value) -> Value {
    let mut payload = json!({"session_id": "s", "transcript_path": "/tmp/t.json", "cwd": p.root,
                             "hook_event_name": event, "timestamp": "2026-01-01T00:00:00Z"});
    for (k, v) in extra.as_object().into_iter().flatten() {
        payload[k] = v.clone();
    }
    payload
}

#[test]
fn codex_ask_becomes_a_block_that_says_why() {
    let p = Project::with_user_toml(&hook(
        "ask",
        "pre_tool_use",
        r#"echo '{"decision": "ask", "reason": "deploys need a human"}'"#,
        &[],
    ));
    let (code, answer, stderr) = adapter_answer(
        &p,
        "codex",
        &codex_pre(&p, "Bash", json!({"command": "make deploy"})),
    );
    assert_eq!(code, Some(2), "{answer}");
    assert!(stderr.starts_with("deploys need a human"), "{stderr}");
    assert!(
        stderr.contains("Codex CLI hooks cannot ask the user"),
        "{stderr}"
    );
}

#[test]
fn codex_bare_allow_is_said_not_sent() {
    let p = Project::with_user_toml(&hook(
        "allow",
        "pre_tool_use",
        r#"echo '{"decision": "allow"}'"#,
        &[],
    ));
    let (code, answer, _) = adapter_answer(
        &p,
        "codex",
        &codex_pre(&p, "Bash", json!({"command": "ls"})),
    );
    assert_eq!(code, Some(0));
    assert!(answer.get("hookSpecificOutput").is_none(), "{answer}");
    assert!(answer["systemMessage"]
        .as_str()
        .is_some_and(|m| m.contains("cannot pre-approve")));
}

#[test]
fn codex_rewrite_is_allow_with_the_whole_input_and_only_known_keys() {
    let p = Project::with_user_toml(&hook(
        "fix",
        "pre_tool_use",
        r#"echo '{"updated_input": {"command": "ls -la"}}'"#,
        &[],
    ));
    let (_, answer, _) = adapter_answer(
        &p,
        "codex",
        &codex_pre(&p, "Bash", json!({"command": "ls"})),
    );
    let hso = &answer["hookSpecificOutput"];
    assert_eq!(hso["permissionDecision"], "allow");
    assert_eq!(hso["updatedInput"], json!({"command": "ls -la"}));
    // Codex rejects unknown output keys.
    let known = ["hookSpecificOutput", "systemMessage"];
    for key in answer.as_object().expect("object").keys() {
        assert!(known.contains(&key.as_str()), "unexpected key {key}");
    }
    let hso_known = [
        "hookEventName",
        "permissionDecision",
        "permissionDecisionReason",
        "updatedInput",
        "additionalContext",
    ];
    for key in hso.as_object().expect("object").keys() {
        assert!(hso_known.contains(&key.as_str()), "unexpected key {key}");
    }
}

#[test]
fn codex_patch_rewrite_it_cannot_carry_blocks() {
    let p = Project::with_user_toml(&hook(
        "paths",
        "pre_tool_use",
        r#"echo '{"updated_input": {"paths": ["/elsewhere"]}}'"#,
        &[r#"tool = "apply_patch""#],
    ));
    let patch = "*** Begin Patch\n*** Add File: a\n+x\n*** Delete File: b\n*** End Patch\n";
    let (code, _, stderr) = adapter_answer(
        &p,
        "codex",
        &codex_pre(&p, "apply_patch", json!({"command": patch})),
    );
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("Codex CLI cannot take that rewrite"),
        "{stderr}"
    );
}

#[test]
fn codex_session_end_and_interrupt_run_ka_events() {
    let p = Project::new();
    p.write_user_toml(&format!(
        "{}{}",
        hook("end", "session_end", "cat > end.json", &[]),
        hook("interrupt", "interrupt", "cat > interrupt.json", &[])
    ));
    for (name, file, event) in [
        ("SessionEnd", "end.json", "session_end"),
        ("Interrupt", "interrupt.json", "interrupt"),
    ] {
        let (code, _, stderr) = adapter_answer(
            &p,
            "codex",
            &json!({"hook_event_name": name, "cwd": p.root, "session_id": "s"}),
        );
        assert_eq!(code, Some(0), "{name}: {stderr}");
        let seen: Value = serde_json::from_str(&p.read(file).expect("dumped")).expect("json");
        assert_eq!(seen["event"], event);
    }
}

/// An observe hook that says which agent event it saw.
const OBSERVER: &str = r#"
[[hooks]]
name = "observer"
event = "observe"
command = '''printf '{"systemMessage":"observed %s"}' "$(grep -o '"agent_event":"[^"]*"' | cut -d'"' -f4)"'''
"#;

#[test]
fn unknown_codex_event_runs_observe_hooks_and_exits_0() {
    let p = Project::with_user_toml(OBSERVER);
    let (code, answer, stderr) = adapter_answer(
        &p,
        "codex",
        &json!({"hook_event_name": "NoSuchEvent", "cwd": p.root}),
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(answer["systemMessage"], "observed NoSuchEvent", "{answer}");
}

#[test]
fn gemini_mark_error_is_appended_and_said() {
    let p = Project::with_user_toml(&hook(
        "lint",
        "post_tool_use",
        "echo 'lint: 2 errors' >&2; exit 2",
        &[],
    ));
    let payload = gemini(
        &p,
        "AfterTool",
        json!({"tool_name": "write_file", "tool_input": {"file_path": "/x/a.rs", "content": ""},
               "tool_response": {"llmContent": "ok", "returnDisplay": "", "error": null}}),
    );
    let (code, answer, _) = adapter_answer(&p, "gemini", &payload);
    assert_eq!(code, Some(0));
    assert_eq!(answer["hookSpecificOutput"]["hookEventName"], "AfterTool");
    assert_eq!(
        answer["hookSpecificOutput"]["additionalContext"],
        "lint: 2 errors"
    );
    assert!(
        answer.get("decision").is_none(),
        "a deny would replace the result"
    );
    assert!(answer["systemMessage"]
        .as_str()
        .is_some_and(|m| m.contains("cannot mark a result as an error")));
}

#[test]
fn gemini_failed_tool_is_an_error_result() {
    let p = Project::with_user_toml(&hook("dump", "post_tool_use", "cat > payload.json", &[]));
    let payload = gemini(
        &p,
        "AfterTool",
        json!({"tool_name": "run_shell_command", "tool_input": {"command": "false"},
               "tool_response": {"llmContent": "Exit Code: 1", "returnDisplay": "", "error": {"message": "exit 1"}}}),
    );
    adapter_answer(&p, "gemini", &payload);
    let seen: Value = serde_json::from_str(&p.read("payload.json").expect("dumped")).expect("json");
    assert_eq!(seen["tool"], "bash");
    assert_eq!(seen["is_error"], true);
    assert_eq!(seen["result"], "Exit Code: 1");
}

#[test]
fn gemini_model_events_run_observe_hooks_and_exit_0() {
    let p = Project::with_user_toml(OBSERVER);
    for event in ["BeforeModel", "AfterModel", "BeforeToolSelection"] {
        let (code, answer, stderr) = adapter_answer(&p, "gemini", &gemini(&p, event, json!({})));
        assert_eq!(code, Some(0), "{event}: {stderr}");
        assert_eq!(
            answer["systemMessage"],
            format!("observed {event}"),
            "{answer}"
        );
        assert!(answer.get("decision").is_none(), "{event}: {answer}");
    }
}
