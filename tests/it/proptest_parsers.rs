//! Property tests of the parsers that read what others write: the action parser
//! (`action::parse`, a hook's stdout), the adapters' payload parser (`adapter::parse`, an
//! agent's stdin), plus the adapters' answers end to end, and the shell reader
//! (`shell::simple_commands`, the model's command lines).
//!
//! Properties: no panic on any input; an object is applied all or nothing; a decision, a rewrite
//! or feedback never lands on an event that cannot take it; a voided object never changes state.
//!
//! Each property runs a bounded number of cases so the whole file stays fast (a few seconds).
//! `PROPTEST_CASES=N` (proptest's own variable) runs N cases of every property instead, e.g.
//! `PROPTEST_CASES=5000 cargo nextest run -E 'test(/^proptest_parsers::/)'`.

use crate::support;

use ka_hooks::action::{self, Decision, InputPatch};
use ka_hooks::adapter::{self, AdapterArgs, Agent, Context};
use ka_hooks::Event;
use proptest::prelude::*;
use serde_json::{json, Map, Value};
use support::Project;

/// `default` cases, unless `PROPTEST_CASES` says otherwise.
fn cases(default: u32) -> ProptestConfig {
    let mut config = ProptestConfig::default();
    if std::env::var_os("PROPTEST_CASES").is_none() {
        config.cases = default;
    }
    config
}

fn any_event() -> impl Strategy<Value = Event> {
    prop::sample::select(Event::ALL.to_vec())
}

/// The agents whose answers these properties read: Claude Code's contract and its two copies.
/// The hook-file agents (Copilot, Cursor, Antigravity) answer in contracts of their own, tested
/// in `adapter_copilot`, `adapter_cursor` and `adapter_antigravity`.
const CLAUDE_LIKE: [Agent; 3] = [Agent::Claude, Agent::Codex, Agent::Gemini];

fn any_agent() -> impl Strategy<Value = Agent> {
    prop::sample::select(CLAUDE_LIKE.to_vec())
}

/// Short strings, with the characters that break naive parsers.
fn tricky_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z ]{0,12}",
        "[\"\\\\{}\\[\\]:,\n\r\t\u{0}\u{1b}\u{202e}é😀a-z]{0,12}",
    ]
}

/// Any JSON value, a few levels deep.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::from)),
        tricky_text().prop_map(Value::String),
        prop::sample::select(vec!["allow", "ask", "deny", "block", "approve", "plan"])
            .prop_map(|s| Value::String(s.to_owned())),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(key(), inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Keys the action parser reads (top level and in `hookSpecificOutput`), and some it does not.
fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "mode",
            "note",
            "updated_input",
            "decision",
            "reason",
            "feedback",
            "continue",
            "stopReason",
            "suppressOutput",
            "systemMessage",
            "hookSpecificOutput",
            "hookEventName",
            "permissionDecision",
            "permissionDecisionReason",
            "updatedInput",
            "additionalContext",
        ])
        .prop_map(str::to_owned),
        "[a-z_]{1,8}",
    ]
}

/// A JSON object made of the action vocabulary, with values of any type.
fn action_object() -> impl Strategy<Value = Map<String, Value>> {
    let specific = prop::collection::btree_map(key(), any_json(), 0..4)
        .prop_map(|m| Value::Object(m.into_iter().collect()));
    (
        prop::collection::btree_map(key(), any_json(), 0..5),
        prop::option::of(specific),
    )
        .prop_map(|(map, specific)| {
            let mut object: Map<String, Value> = map.into_iter().collect();
            if let Some(specific) = specific {
                object.insert("hookSpecificOutput".into(), specific);
            }
            object
        })
}

/// A well-formed pre_tool_use object: every key valid, each with its expected effect.
#[derive(Debug, Clone)]
struct Valid {
    mode: String,
    note: String,
    decision: Decision,
    reason: String,
    input: Map<String, Value>,
}

fn valid_pre_tool_use() -> impl Strategy<Value = Valid> {
    (
        "[a-zA-Z]{1,10}",
        "[a-z]{1,20}",
        prop::sample::select(vec![Decision::Allow, Decision::Ask, Decision::Deny]),
        "[a-z ]{1,20}",
        prop::collection::btree_map("[a-z]{1,6}", any_json(), 0..3),
    )
        .prop_map(|(mode, note, decision, reason, input)| Valid {
            mode,
            note,
            decision,
            reason,
            input: input.into_iter().collect(),
        })
}

impl Valid {
    fn object(&self) -> Map<String, Value> {
        let value = json!({
            "mode": self.mode, "note": self.note, "decision": self.decision.as_str(),
            "reason": self.reason, "updated_input": self.input,
        });
        support::object(value)
    }
}

/// One key that voids a pre_tool_use object: a known key with the wrong type or value, or a
/// key that means nothing on pre_tool_use.
fn poison() -> impl Strategy<Value = (String, Value)> {
    prop::sample::select(vec![
        ("mode", json!(5)),
        ("note", json!(["a"])),
        ("decision", json!("maybe")),
        ("decision", json!(true)),
        ("reason", json!({"a": 1})),
        ("updated_input", json!("not an object")),
        ("feedback", json!("feedback is for post_tool_use")),
        ("continue", json!("yes")),
        ("suppressOutput", json!(1)),
        ("hookSpecificOutput", json!("not an object")),
    ])
    .prop_map(|(k, v)| (k.to_owned(), v))
}

proptest! {
    #![proptest_config(cases(256))]

    #[test]
    fn action_parse_never_panics_on_any_text(stdout in "\\PC{0,64}", event in any_event()) {
        let _ = action::parse(&stdout, event);
    }

    #[test]
    fn action_parse_never_panics_on_any_json(value in any_json(), event in any_event()) {
        let parsed = action::parse(&value.to_string(), event);
        if !value.is_object() {
            prop_assert!(parsed.action.is_none(), "only an object is read: {value}");
        }
    }

    #[test]
    fn decisions_rewrites_and_feedback_only_land_where_they_mean_something(
        object in action_object(),
        event in any_event(),
    ) {
        let parsed = action::parse(&Value::Object(object.clone()).to_string(), event);
        if let Some(a) = parsed.action {
            // permission_request reads its actions as pre_tool_use does (`Event::acts_as`).
            if event.acts_as() != Event::PreToolUse {
                prop_assert_eq!(a.decision, None, "{} on {:?}", Value::Object(object.clone()), event);
                prop_assert!(a.input_patch.is_none());
                prop_assert_eq!(a.reason, None);
            }
            if event.acts_as() != Event::PostToolUse {
                prop_assert_eq!(a.feedback, None);
            }
        }
    }

    #[test]
    fn a_valid_object_applies_whole(valid in valid_pre_tool_use()) {
        let parsed = action::parse(&Value::Object(valid.object()).to_string(), Event::PreToolUse);
        let a = parsed.action.expect("a valid object is applied");
        prop_assert_eq!(a.mode.as_deref(), Some(valid.mode.as_str()));
        prop_assert_eq!(a.note.as_deref(), Some(valid.note.as_str()));
        prop_assert_eq!(a.decision, Some(valid.decision));
        prop_assert_eq!(a.reason.as_deref(), Some(valid.reason.as_str()));
        prop_assert_eq!(a.input_patch, Some(InputPatch::Merge(valid.input.clone())));
    }

    #[test]
    fn one_bad_key_voids_the_whole_object(valid in valid_pre_tool_use(), (key, value) in poison()) {
        let mut object = valid.object();
        object.insert(key.clone(), value);
        let parsed = action::parse(&Value::Object(object).to_string(), Event::PreToolUse);
        prop_assert!(parsed.action.is_none(), "`{}` did not void the object", key);
        prop_assert!(
            parsed.diagnostics.iter().any(|d| d.contains(&key)),
            "no diagnostic names `{}`: {:?}", key, parsed.diagnostics
        );
    }
}

// ---------------------------------------------------------------------------------------------
// The adapters' payload parser
// ---------------------------------------------------------------------------------------------

/// An agent payload: a real or made-up event name, a tool name, and fields of any type.
fn any_payload(agent: Agent) -> impl Strategy<Value = Value> {
    let mut names: Vec<String> = agent.events().iter().map(|r| r.name.to_owned()).collect();
    names.extend(agent.observed().iter().map(|(n, _)| (*n).to_owned()));
    names.push("NoSuchEvent".into());
    let tools = vec![
        "Write",
        "Edit",
        "MultiEdit",
        "NotebookEdit",
        "Bash",
        "apply_patch",
        "write_file",
        "replace",
        "run_shell_command",
        "mcp__x__y",
    ];
    (
        prop::sample::select(names),
        prop::option::of(prop::sample::select(tools)),
        prop::option::of(any_json()),
        prop::option::of(prop_oneof![
            Just(json!(
                "*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\n"
            )),
            Just(json!(
                "*** Begin Patch\n*** Update File: a\n*** Move to: b\n*** End Patch"
            )),
            any_json(),
        ]),
        prop::collection::btree_map(key(), any_json(), 0..3),
    )
        .prop_map(|(event, tool, input, command, extra)| {
            let mut map: Map<String, Value> = extra.into_iter().collect();
            map.insert("hook_event_name".into(), json!(event));
            map.insert("cwd".into(), json!("/tmp"));
            if let Some(tool) = tool {
                map.insert("tool_name".into(), json!(tool));
            }
            match (input, command) {
                (_, Some(command)) => {
                    map.insert("tool_input".into(), json!({ "command": command }));
                }
                (Some(input), None) => {
                    map.insert("tool_input".into(), input);
                }
                (None, None) => {}
            }
            Value::Object(map)
        })
}

fn agent_and_payload() -> impl Strategy<Value = (Agent, Value)> {
    any_agent().prop_flat_map(|agent| (Just(agent), any_payload(agent)))
}

proptest! {
    #![proptest_config(cases(256))]

    #[test]
    fn adapter_parse_never_panics_on_any_text(input in "\\PC{0,64}", agent in any_agent()) {
        let _ = adapter::parse(agent, &input);
    }

    #[test]
    fn adapter_parse_reads_events_by_the_agents_table((agent, payload) in agent_and_payload()) {
        let Ok(call) = adapter::parse(agent, &payload.to_string()) else {
            return Ok(());
        };
        let name = payload["hook_event_name"].as_str().unwrap_or_default();
        let row = agent.events().iter().find(|r| r.name == name);
        // A name the table lacks is observed, its name in `agent_event`.
        prop_assert_eq!(row.map_or(Event::Observe, |r| r.event), call.event);
        if row.is_none() {
            prop_assert_eq!(call.payload.get("agent_event"), Some(&json!(name)));
        }
        if call.event.is_tool_event() {
            let tool = call.tool.as_ref().expect("a tool event has its tool");
            prop_assert_eq!(call.payload.get("tool"), Some(&json!(tool.ka_name)));
            prop_assert!(call.payload.get("arguments").is_some_and(Value::is_object));
        } else {
            prop_assert!(call.tool.is_none());
        }
        if call.event == Event::PostToolUse {
            prop_assert!(call.payload.get("is_error").is_some_and(Value::is_boolean));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// End to end: a real hook prints an arbitrary object; the agent's answer
// ---------------------------------------------------------------------------------------------

/// A project whose user layer runs one hook on every event: it prints `action.json`.
fn echo_project() -> Project {
    let mut toml = String::new();
    for event in Event::ALL {
        toml.push_str(&format!(
            "[[hooks]]\nname = \"echo-{0}\"\nevent = \"{0}\"\ncommand = \"cat action.json\"\n\n",
            event.as_str()
        ));
    }
    Project::with_user_toml(&toml)
}

fn context(p: &Project) -> Context {
    Context {
        paths: p.paths(),
        project: Some(p.root.clone()),
        trust_once: false,
        log: None,
    }
}

/// The agent's payload for `row`, with a write for tool events.
fn agent_payload(p: &Project, agent: Agent, name: &str, tool_event: bool) -> Value {
    let mut map = support::object(json!({
        "session_id": "s", "transcript_path": "/tmp/t", "cwd": p.root, "hook_event_name": name,
        "prompt": "hello", "tool_response": {"success": true},
    }));
    if tool_event {
        let (tool, input) = match agent {
            Agent::Claude => ("Write", json!({"file_path": "a.txt", "content": "x"})),
            Agent::Gemini => ("write_file", json!({"file_path": "a.txt", "content": "x"})),
            Agent::Codex => ("Bash", json!({"command": "ls"})),
            Agent::Copilot | Agent::Cursor | Agent::Antigravity => {
                unreachable!("not a Claude-like agent")
            }
        };
        map.insert("tool_name".into(), json!(tool));
        map.insert("tool_input".into(), input);
    }
    Value::Object(map)
}

/// Events whose answer may hold `hookSpecificOutput.additionalContext` (context for the model):
/// Claude Code's hooks reference, "Adding context"; Codex's output schemas with
/// `additionalContext`; Gemini CLI's reference (AfterTool, BeforeAgent, SessionStart).
fn takes_context(agent: Agent, event: Event) -> bool {
    match agent {
        Agent::Claude => matches!(
            event,
            Event::SessionStart
                | Event::UserPromptSubmit
                | Event::PostToolUse
                | Event::PostToolUseFailure
                | Event::Stop
                | Event::SubagentStart
        ),
        Agent::Codex => matches!(
            event,
            Event::SessionStart | Event::UserPromptSubmit | Event::PostToolUse
        ),
        Agent::Gemini => matches!(
            event,
            Event::SessionStart | Event::UserPromptSubmit | Event::PostToolUse
        ),
        Agent::Copilot | Agent::Cursor | Agent::Antigravity => false,
    }
}

/// Events whose answer may hold a top-level `decision` + `reason`: a post-tool block, a blocked
/// prompt, a stop that keeps the agent going.
fn takes_decision(event: Event) -> bool {
    matches!(
        event,
        Event::PostToolUse | Event::UserPromptSubmit | Event::Stop | Event::SubagentStop
    )
}

/// Keys an answer may carry on a non-pre_tool_use event.
fn allowed_keys(agent: Agent, event: Event) -> Vec<&'static str> {
    // A halt (`continue: false` + `stopReason`) and a message for the user fit every event.
    let mut keys = vec!["systemMessage", "continue", "stopReason"];
    if takes_decision(event) {
        keys.extend(["decision", "reason"]);
    }
    // Claude Code's PermissionRequest takes `hookSpecificOutput.decision` (hooks reference,
    // "PermissionRequest decision control").
    if takes_context(agent, event) || event == Event::PermissionRequest {
        keys.push("hookSpecificOutput");
    }
    keys
}

/// Keys of `hookSpecificOutput` an answer may carry on a non-pre_tool_use event.
fn allowed_specific_keys(agent: Agent, event: Event) -> Vec<&'static str> {
    let mut keys = vec!["hookEventName"];
    if event == Event::PermissionRequest {
        keys.push("decision");
    }
    if takes_context(agent, event) {
        keys.push("additionalContext");
    }
    keys
}

proptest! {
    // Each case runs a real hook process: fewer cases by default.
    #![proptest_config(cases(48))]

    #[test]
    fn adapters_never_answer_a_decision_on_an_event_that_cannot_take_it(
        agent in any_agent(),
        row in any::<prop::sample::Index>(),
        object in action_object(),
    ) {
        let p = echo_project();
        p.write("action.json", &Value::Object(object.clone()).to_string());
        let row = row.get(agent.events());
        let payload = agent_payload(&p, agent, row.name, row.event.is_tool_event());
        let answer = adapter::respond(agent, &context(&p), &AdapterArgs::default(), &payload.to_string());
        if row.event == Event::PreToolUse {
            return Ok(());
        }
        prop_assert!(
            answer.exit == 0 || (answer.exit == 2 && row.event == Event::UserPromptSubmit),
            "{:?} {} answered exit {} to {}", agent, row.name, answer.exit, Value::Object(object)
        );
        if answer.stdout.is_empty() {
            return Ok(());
        }
        let out: Value = serde_json::from_str(&answer.stdout).expect("the answer is JSON");
        let out = out.as_object().expect("an object");
        for key in out.keys() {
            prop_assert!(
                allowed_keys(agent, row.event).contains(&key.as_str()),
                "{:?} {}: `{}` in {}", agent, row.name, key, answer.stdout
            );
        }
        if let Some(hso) = out.get("hookSpecificOutput").and_then(Value::as_object) {
            for key in hso.keys() {
                prop_assert!(
                    allowed_specific_keys(agent, row.event).contains(&key.as_str()),
                    "{:?} {}: hookSpecificOutput.{} in {}", agent, row.name, key, answer.stdout
                );
            }
        }
    }

    #[test]
    fn a_voided_object_changes_nothing(valid in valid_pre_tool_use(), (key, value) in poison()) {
        // `on_error = "ignore"`: what the voided object itself changes (nothing), not what its
        // failure means (a guard without `on_error` blocks).
        let p = Project::with_user_toml(
            "[[hooks]]\nname = \"echo\"\nevent = \"pre_tool_use\"\ncommand = \"cat action.json\"\n\
             on_error = \"ignore\"\n",
        );
        let args = json!({"path": "a", "content": "x"});
        // Control: without the bad key, the same object does change the outcome.
        p.write("action.json", &Value::Object(valid.object()).to_string());
        let control = p.tool_call(Event::PreToolUse, "write", args.clone());
        prop_assert_eq!(control.mode.as_deref(), Some(valid.mode.as_str()));

        let mut object = valid.object();
        object.insert(key, value);
        p.write("action.json", &Value::Object(object).to_string());
        let outcome = p.tool_call(Event::PreToolUse, "write", args);
        prop_assert!(!outcome.blocked());
        prop_assert_eq!(outcome.decision(), None);
        prop_assert_eq!(outcome.reason(), None);
        prop_assert_eq!(outcome.updated_input, None);
        prop_assert_eq!(outcome.mode, None);
        prop_assert!(outcome.notes.is_empty());
        prop_assert_eq!(outcome.feedback, None);
        prop_assert!(!outcome.mark_error);
    }
}

/// The echo project really answers: a deny printed by its hook blocks the call in every agent.
#[test]
fn echo_hook_deny_blocks_pre_tool_use_in_every_agent() {
    let p = echo_project();
    p.write("action.json", r#"{"decision": "deny", "reason": "no"}"#);
    for agent in CLAUDE_LIKE {
        let name = agent.events()[0].name;
        let payload = agent_payload(&p, agent, name, true);
        let answer = adapter::respond(
            agent,
            &context(&p),
            &AdapterArgs::default(),
            &payload.to_string(),
        );
        if answer.stdout.contains("\"deny\"") && answer.exit == 0 {
            // Gemini CLI: a block is `decision: "deny"` on exit 0.
            assert!(
                answer.stdout.contains("\"reason\":\"no"),
                "{agent:?}: {answer:?}"
            );
            continue;
        }
        assert_eq!(answer.exit, 2, "{agent:?}: {answer:?}");
        assert_eq!(answer.stderr, "no\n", "{agent:?}");
    }
}

/// Command-line text: shell syntax characters, quotes, nesting openers, and words.
fn shell_text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            "[a-z]{1,4}",
            prop::sample::select(vec![
                " ",
                "\t",
                "\n",
                ";",
                "&",
                "&&",
                "|",
                "||",
                "(",
                ")",
                "{",
                "}",
                "$(",
                "`",
                "'",
                "\"",
                "\\",
                "$'",
                "${",
                "$((",
                "))",
                "<<",
                "<<-",
                "<(",
                ">",
                "2>&1",
                "#",
                "*",
                "=",
                "$x",
                "-c",
                "bash -c ",
                "eval ",
                "sudo ",
                "env -S ",
                "git -C ",
                "\u{0}",
                "é",
                "\\x7",
                "EOF",
                "\\u{1F600}",
            ])
            .prop_map(str::to_owned),
        ],
        0..40,
    )
    .prop_map(|parts| parts.concat())
}

/// A word quoted one of the ways the shell removes again.
fn spelled(word: &'static str) -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        word.to_owned(),
        format!("\"{word}\""),
        format!("'{word}'"),
        format!("\\{word}"),
        format!("$'{word}'"),
        format!("{}''{}", &word[..1], &word[1..]),
        format!("/usr/bin/{word}"),
    ])
}

proptest! {
    #![proptest_config(cases(512))]

    /// The shell reader never panics, whatever the line.
    #[test]
    fn the_shell_reader_never_panics(line in shell_text()) {
        let _ = ka_hooks::shell::tokens(&line);
        let _ = ka_hooks::shell::simple_commands(&line);
        // The trust coverage reads every hook command the same way.
        let _ = ka_hooks::config::scripts::coverage(
            std::path::Path::new("/nonexistent-ka-root"),
            [("hooks[0]", line.as_str())],
        );
    }

    /// `rm` however quoted, behind any chain of wrappers and separators, is found as `rm`.
    #[test]
    fn a_wrapped_rm_is_always_found(
        prefix in prop::collection::vec(prop::sample::select(vec![
            "sudo ", "sudo -u x ", "env ", "env -i A=1 ", "command ", "nohup ", "nice -n 5 ",
            "timeout 5 ", "exec ", "builtin ", "time ", "stdbuf -oL ", "xargs ",
        ]), 0..4),
        before in prop::sample::select(vec![
            "", "X=1 ", "ls; ", "ls && ", "ls | ", "( ", "{ ", "echo $(", "bash -c ",
        ]),
        rm in spelled("rm"),
    ) {
        let line = format!("{before}{}{rm} -f a", prefix.concat());
        let line = match before {
            "( " => format!("{line} )"),
            "{ " => format!("{line}; }}"),
            "echo $(" => format!("{line})"),
            "bash -c " => format!("bash -c {}", shell_words::quote(&line["bash -c ".len()..])),
            _ => line,
        };
        let read = ka_hooks::shell::simple_commands(&line);
        prop_assert!(
            read.commands.iter().any(|c| c.text() == "rm -f a"),
            "{:?} gave {:?}", line, read
        );
        prop_assert!(read.unknown.is_empty(), "{:?}: {:?}", line, read.unknown);
    }
}
