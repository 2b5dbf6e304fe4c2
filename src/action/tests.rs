//! Tests of the action language (split from `mod.rs` to keep both readable).
use super::*;
use serde_json::json;
use Event::{
    Notification, PostCompact, PostToolUse, PostToolUseFailure, PreCompact, PreToolUse, SessionEnd,
    SessionStart, Stop, SubagentStart, SubagentStop, TaskCompleted, TeammateIdle, UserPromptSubmit,
};

/// The action `stdout` yields on `event`; fails when it was ignored or voided.
#[track_caller]
fn action(stdout: &str, event: Event) -> Action {
    let parsed = parse(stdout, event);
    parsed.action.unwrap_or_else(|| {
        panic!(
            "expected an action from {stdout} on {event}, got: {:?}",
            parsed.diagnostics
        )
    })
}

/// The diagnostics of an object that must be voided as a whole.
#[track_caller]
fn voided(stdout: &str, event: Event) -> Vec<String> {
    let parsed = parse(stdout, event);
    assert_eq!(parsed.action, None, "{stdout} on {event} should be voided");
    assert!(
        parsed
            .diagnostics
            .iter()
            .any(|d| d.ends_with("; the whole object was ignored")),
        "{:?}",
        parsed.diagnostics
    );
    parsed.diagnostics
}

/// The single diagnostic of stdout that is not one JSON object.
#[track_caller]
fn not_an_object(stdout: &str) -> String {
    let parsed = parse(stdout, PreToolUse);
    assert_eq!(parsed.action, None);
    assert_eq!(parsed.diagnostics.len(), 1, "{:?}", parsed.diagnostics);
    let diagnostic = parsed.diagnostics.into_iter().next().unwrap();
    assert!(
        diagnostic.starts_with("stdout is not a single JSON object ("),
        "{diagnostic}"
    );
    assert!(diagnostic.contains("; ignored: \""), "{diagnostic}");
    diagnostic
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

fn has(diagnostics: &[String], needle: &str) -> bool {
    diagnostics.iter().any(|d| d.contains(needle))
}

const NON_PRE: [Event; 6] = [
    PostToolUse,
    Stop,
    SessionStart,
    SessionEnd,
    UserPromptSubmit,
    PreCompact,
];
const NON_POST: [Event; 6] = [
    PreToolUse,
    Stop,
    SessionStart,
    SessionEnd,
    UserPromptSubmit,
    PreCompact,
];

// --- What counts as one JSON object -------------------------------------------------

#[test]
fn empty_or_whitespace_stdout_is_no_action_and_no_diagnostic() {
    for stdout in ["", " ", "\n", " \t\r\n  "] {
        let parsed = parse(stdout, PreToolUse);
        assert_eq!(parsed.action, None);
        assert!(parsed.diagnostics.is_empty());
    }
}

#[test]
fn whitespace_around_the_object_is_trimmed() {
    let a = action("\n\n  {\"mode\": \"plan\"}  \n", Stop);
    assert_eq!(a.mode.as_deref(), Some("plan"));
}

#[test]
fn byte_order_mark_before_the_object_is_skipped() {
    let a = action("\u{feff}{\"mode\": \"plan\"}\n", Stop);
    assert_eq!(a.mode.as_deref(), Some("plan"));
}

#[test]
fn two_objects_back_to_back_are_ignored() {
    let d = not_an_object("{}{}");
    assert!(d.contains("trailing characters"), "{d}");
    not_an_object("{\"mode\":\"plan\"}\n{\"mode\":\"auto\"}");
}

#[test]
fn profile_noise_before_the_json_is_ignored() {
    let d = not_an_object("Welcome!\n{\"mode\":\"plan\"}");
    assert!(d.contains("expected value at line 1 column 1"), "{d}");
    assert!(d.contains(r#""Welcome!\n{\"mode\":\"plan\"}""#), "{d}");
}

#[test]
fn text_after_the_json_is_ignored() {
    not_an_object("{\"mode\":\"plan\"}\ndone.");
}

#[test]
fn json_that_is_not_an_object_is_ignored() {
    assert!(not_an_object("[{\"mode\":\"plan\"}]").contains("(it is an array)"));
    assert!(not_an_object("\"plan\"").contains("(it is a string)"));
    assert!(not_an_object("42").contains("(it is a number)"));
    assert!(not_an_object("true").contains("(it is a bool)"));
    assert!(not_an_object("null").contains("(it is null)"));
}

#[test]
fn invalid_json_is_ignored() {
    not_an_object("{\"mode\": plan}");
    not_an_object("{\"mode\": \"plan\",}");
    not_an_object("{\"mode\": \"plan\"");
    not_an_object("{'mode': 'plan'}");
    not_an_object("ok");
}

#[test]
fn replaced_invalid_utf8_is_just_not_json() {
    not_an_object("\u{fffd}\u{fffd}{\"mode\":\"plan\"}");
    not_an_object("\u{fffd}");
}

#[test]
fn deeply_nested_json_is_ignored_without_panic() {
    let d = not_an_object(&"[".repeat(10_000));
    assert!(d.contains("recursion limit"), "{d}");
    let closed = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    not_an_object(&closed);
    let inside = format!(
        "{{\"mode\":\"plan\",\"x\":{}{}}}",
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    not_an_object(&inside);
}

#[test]
fn quoted_output_is_cut_to_80_chars_at_a_char_boundary() {
    let d = not_an_object(&"é".repeat(300));
    let quoted = format!("\"{}\"…", "é".repeat(EXCERPT_MAX_CHARS));
    assert!(d.ends_with(&quoted), "{d}");
}

#[test]
fn empty_object_is_an_empty_action() {
    let a = action("{}", PreToolUse);
    assert!(a.is_empty());
    assert!(parse("{}", Stop).diagnostics.is_empty());
}

// --- ka keys on their events --------------------------------------------------------

#[test]
fn mode_and_note_are_valid_on_every_event() {
    for event in Event::ALL {
        let a = action(r#"{"mode":"plan","note":"tests failing"}"#, event);
        assert_eq!(a.mode.as_deref(), Some("plan"));
        assert_eq!(a.note.as_deref(), Some("tests failing"));
        assert!(parse(r#"{"mode":"plan"}"#, event).diagnostics.is_empty());
    }
}

#[test]
fn updated_input_on_pre_tool_use_is_a_merge_patch() {
    let a = action(
        r#"{"updated_input":{"command":"cargo fmt --all"},"decision":"allow"}"#,
        PreToolUse,
    );
    let patch = object(json!({"command": "cargo fmt --all"}));
    assert_eq!(a.input_patch, Some(InputPatch::Merge(patch)));
    assert_eq!(a.decision, Some(Decision::Allow));
}

#[test]
fn updated_input_on_any_other_event_voids_whole_object() {
    for event in NON_PRE {
        let d = voided(r#"{"mode":"plan","updated_input":{"a":1}}"#, event);
        assert_eq!(
            d,
            [format!(
                "`updated_input` is only valid on pre_tool_use (this is {event}); \
                 the whole object was ignored"
            )]
        );
    }
}

#[test]
fn decision_allow_ask_deny_on_pre_tool_use() {
    for (text, decision) in [
        ("allow", Decision::Allow),
        ("ask", Decision::Ask),
        ("deny", Decision::Deny),
    ] {
        let a = action(&format!(r#"{{"decision":"{text}"}}"#), PreToolUse);
        assert_eq!(a.decision, Some(decision));
    }
}

#[test]
fn decision_on_any_other_event_voids_whole_object() {
    // Stop-like events read Gemini's AfterAgent `allow` / `deny` (see the next test).
    for event in NON_PRE.into_iter().filter(|e| e.acts_as() != Stop) {
        let d = voided(r#"{"note":"x","decision":"allow"}"#, event);
        assert!(has(
            &d,
            "`decision: \"allow\"` is only valid on pre_tool_use"
        ));
    }
}

#[test]
fn deny_with_reason_keeps_the_reason() {
    let a = action(r#"{"decision":"deny","reason":"no rm -rf"}"#, PreToolUse);
    assert_eq!(a.decision, Some(Decision::Deny));
    assert_eq!(a.reason.as_deref(), Some("no rm -rf"));
}

#[test]
fn deny_without_reason_has_no_reason() {
    let a = action(r#"{"decision":"deny"}"#, PreToolUse);
    assert_eq!(a.decision, Some(Decision::Deny));
    assert_eq!(a.reason, None);
}

#[test]
fn reason_without_decision_is_kept() {
    let a = action(r#"{"reason":"looked fine"}"#, PreToolUse);
    assert_eq!(a.decision, None);
    assert_eq!(a.reason.as_deref(), Some("looked fine"));
}

#[test]
fn reason_on_any_other_event_voids_whole_object() {
    for event in NON_PRE {
        let d = voided(r#"{"reason":"why"}"#, event);
        assert!(has(&d, "`reason` is only valid on pre_tool_use"), "{d:?}");
    }
}

#[test]
fn feedback_on_post_tool_use_is_kept() {
    let a = action(
        r#"{"feedback":"rustfmt reports the edited file is unformatted"}"#,
        PostToolUse,
    );
    assert_eq!(
        a.feedback.as_deref(),
        Some("rustfmt reports the edited file is unformatted")
    );
}

#[test]
fn feedback_on_pre_tool_use_voids_whole_object() {
    let d = voided(r#"{"mode":"plan","feedback":"x"}"#, PreToolUse);
    assert_eq!(
        d,
        [
            "`feedback` is only valid on post_tool_use (this is pre_tool_use); \
          the whole object was ignored"
        ]
    );
}

#[test]
fn feedback_on_any_other_event_voids_whole_object() {
    for event in NON_POST {
        voided(r#"{"feedback":"x"}"#, event);
    }
}

// --- Wrong types ----------------------------------------------------------------------

#[test]
fn note_of_wrong_type_voids_whole_object() {
    let d = voided(r#"{"mode":"plan","note":5}"#, Stop);
    assert_eq!(
        d,
        ["`note` must be a string, got a number; the whole object was ignored"]
    );
}

#[test]
fn every_ka_key_of_wrong_type_voids_whole_object() {
    for (stdout, event, message) in [
        (
            r#"{"mode":["plan"]}"#,
            Stop,
            "`mode` must be a string, got an array",
        ),
        (
            r#"{"note":{}}"#,
            Stop,
            "`note` must be a string, got an object",
        ),
        (
            r#"{"updated_input":"x"}"#,
            PreToolUse,
            "`updated_input` must be an object, got a string",
        ),
        (
            r#"{"updated_input":[1]}"#,
            PreToolUse,
            "`updated_input` must be an object, got an array",
        ),
        (
            r#"{"decision":true}"#,
            PreToolUse,
            "`decision` must be a string, got a bool",
        ),
        (
            r#"{"reason":1}"#,
            PreToolUse,
            "`reason` must be a string, got a number",
        ),
        (
            r#"{"feedback":false}"#,
            PostToolUse,
            "`feedback` must be a string, got a bool",
        ),
    ] {
        let d = voided(stdout, event);
        assert_eq!(d, [format!("{message}; the whole object was ignored")]);
    }
}

#[test]
fn decision_of_unknown_value_voids_whole_object() {
    let d = voided(r#"{"decision":"maybe","mode":"plan"}"#, PreToolUse);
    assert!(has(&d, "`decision` must be \"allow\", \"ask\" or \"deny\""));
    assert!(has(&d, "got \"maybe\""));
    // Case matters, as in Claude Code.
    voided(r#"{"decision":"Allow"}"#, PreToolUse);
}

#[test]
fn every_offending_key_is_reported() {
    let d = voided(
        r#"{"note":5,"feedback":"x","decision":"maybe","mode":"plan","typo":1}"#,
        PreToolUse,
    );
    assert!(has(&d, "`note` must be a string"), "{d:?}");
    assert!(
        has(&d, "`feedback` is only valid on post_tool_use"),
        "{d:?}"
    );
    assert!(has(&d, "`decision` must be"), "{d:?}");
    assert!(has(&d, "unknown key `typo` ignored"), "{d:?}");
    assert_eq!(d.len(), 4, "{d:?}");
}

#[test]
fn null_values_count_as_absent() {
    let a = action(
        r#"{"mode":"plan","note":null,"feedback":null,"updated_input":null,
            "decision":null,"reason":null,"continue":null,"hookSpecificOutput":null}"#,
        PreToolUse,
    );
    assert_eq!(
        a,
        Action {
            mode: Some("plan".into()),
            ..Action::default()
        }
    );
    let parsed = parse(
        r#"{"hookSpecificOutput":{"updatedInput":null,"permissionDecision":null}}"#,
        Stop,
    );
    assert_eq!(parsed.action, Some(Action::default()));
    assert!(parsed.diagnostics.is_empty());
}

// --- Unknown keys ---------------------------------------------------------------------

#[test]
fn unknown_key_keeps_the_object_with_a_diagnostic() {
    let parsed = parse(r#"{"mode":"plan","colour":"red"}"#, Stop);
    assert_eq!(parsed.action.unwrap().mode.as_deref(), Some("plan"));
    assert_eq!(parsed.diagnostics, ["unknown key `colour` ignored"]);
}

#[test]
fn unknown_key_close_to_a_known_one_suggests_it() {
    let parsed = parse(r#"{"mdoe":"plan","updatedInput":{}}"#, PreToolUse);
    assert_eq!(parsed.action, Some(Action::default()));
    assert!(has(
        &parsed.diagnostics,
        "unknown key `mdoe` ignored (did you mean `mode`?)"
    ));
    assert!(has(
        &parsed.diagnostics,
        "unknown key `updatedInput` ignored (Claude Code expects it inside \
         `hookSpecificOutput`)"
    ));
}

#[test]
fn unknown_key_inside_hook_specific_output_is_reported() {
    let parsed = parse(
        r#"{"hookSpecificOutput":{"permisionDecision":"deny"}}"#,
        PreToolUse,
    );
    assert_eq!(parsed.action, Some(Action::default()));
    assert_eq!(
        parsed.diagnostics,
        [
            "unknown key `hookSpecificOutput.permisionDecision` ignored \
          (did you mean `hookSpecificOutput.permissionDecision`?)"
        ]
    );
}

#[test]
fn suppress_output_is_known_and_ignored_silently() {
    let parsed = parse(r#"{"suppressOutput":true,"mode":"plan"}"#, PostToolUse);
    assert_eq!(parsed.action.unwrap().mode.as_deref(), Some("plan"));
    assert!(parsed.diagnostics.is_empty());
    voided(r#"{"suppressOutput":"yes"}"#, PostToolUse);
}

// --- Cutting --------------------------------------------------------------------------

#[test]
fn note_over_200_chars_is_cut_at_a_char_boundary() {
    let stdout = json!({ "note": "é".repeat(300) }).to_string();
    let parsed = parse(&stdout, Stop);
    let note = parsed.action.unwrap().note.unwrap();
    assert_eq!(note, "é".repeat(NOTE_MAX_CHARS));
    assert_eq!(parsed.diagnostics, ["`note` was 300 chars; cut to 200"]);
}

#[test]
fn note_of_exactly_200_chars_is_not_cut() {
    let stdout = json!({ "note": "🦀".repeat(200) }).to_string();
    let parsed = parse(&stdout, Stop);
    assert_eq!(parsed.action.unwrap().note.unwrap(), "🦀".repeat(200));
    assert!(parsed.diagnostics.is_empty());
}

#[test]
fn feedback_over_2048_bytes_is_cut_at_a_char_boundary() {
    // "€" is 3 bytes: 2048 is not a multiple of 3, so a naive cut would split one.
    let stdout = json!({ "feedback": "€".repeat(1000) }).to_string();
    let parsed = parse(&stdout, PostToolUse);
    let feedback = parsed.action.unwrap().feedback.unwrap();
    assert_eq!(feedback, "€".repeat(682));
    assert!(feedback.len() <= FEEDBACK_MAX_BYTES);
    assert_eq!(
        parsed.diagnostics,
        ["`feedback` was 3000 bytes; cut to 2046 (limit 2048, cut at a character boundary)"]
    );
}

#[test]
fn feedback_of_exactly_2048_bytes_is_not_cut() {
    let stdout = json!({ "feedback": "a".repeat(2048) }).to_string();
    let parsed = parse(&stdout, PostToolUse);
    assert_eq!(parsed.action.unwrap().feedback.unwrap().len(), 2048);
    assert!(parsed.diagnostics.is_empty());
}

#[test]
fn empty_note_and_feedback_say_nothing() {
    assert!(action(r#"{"note":""}"#, Stop).is_empty());
    assert!(action(r#"{"feedback":""}"#, PostToolUse).is_empty());
}

// --- Claude Code: {"decision":"block"} and "approve" ----------------------------------

#[test]
fn claude_block_on_pre_tool_use_is_deny_with_reason() {
    let a = action(r#"{"decision":"block","reason":"not here"}"#, PreToolUse);
    assert_eq!(a.decision, Some(Decision::Deny));
    assert_eq!(a.reason.as_deref(), Some("not here"));
    assert_eq!(a.block, None);
}

#[test]
fn claude_block_on_user_prompt_submit_blocks_with_reason() {
    let a = action(
        r#"{"decision":"block","reason":"no secrets"}"#,
        UserPromptSubmit,
    );
    assert_eq!(a.block.as_deref(), Some("no secrets"));
    assert_eq!(a.decision, None);
    assert_eq!(a.reason, None);
    let a = action(r#"{"decision":"block"}"#, UserPromptSubmit);
    assert_eq!(a.block.as_deref(), Some(""));
}

#[test]
fn claude_block_on_post_tool_use_marks_the_result_as_an_error_with_feedback() {
    let a = action(
        r#"{"decision":"block","reason":"lint failed"}"#,
        PostToolUse,
    );
    assert_eq!(a.feedback.as_deref(), Some("lint failed"));
    assert!(a.mark_error);
    assert_eq!(a.decision, None);
    let a = action(
        r#"{"feedback":"formatted","decision":"block","reason":"lint failed"}"#,
        PostToolUse,
    );
    assert_eq!(a.feedback.as_deref(), Some("formatted\nlint failed"));
    assert!(a.mark_error);
}

#[test]
fn claude_block_on_post_tool_use_without_reason_still_marks_the_error() {
    let parsed = parse(r#"{"decision":"block"}"#, PostToolUse);
    let a = parsed.action.unwrap();
    assert!(a.mark_error);
    assert_eq!(a.feedback, None);
}

#[test]
fn claude_block_on_stop_like_events_keeps_the_agent_going() {
    for event in [Stop, SubagentStop, TeammateIdle, TaskCompleted] {
        let a = action(
            r#"{"decision":"block","reason":"tests still fail: fix them"}"#,
            event,
        );
        assert_eq!(a.keep_going.as_deref(), Some("tests still fail: fix them"));
    }
    let a = action(r#"{"keep_going":"the roadmap has 3 items left"}"#, Stop);
    assert_eq!(
        a.keep_going.as_deref(),
        Some("the roadmap has 3 items left")
    );
    let parsed = parse(r#"{"decision":"block"}"#, Stop);
    assert_eq!(parsed.action.unwrap().keep_going, None);
    assert!(has(&parsed.diagnostics, "without a `reason`"));
}

#[test]
fn keep_going_on_any_other_event_voids_whole_object() {
    for event in [PreToolUse, PostToolUse, SessionStart, UserPromptSubmit] {
        let d = voided(r#"{"keep_going":"more"}"#, event);
        assert!(has(&d, "`keep_going` is only valid on stop"), "{d:?}");
    }
}

#[test]
fn claude_block_on_advisory_events_is_ignored_without_voiding() {
    for event in [SessionStart, SessionEnd, PreCompact, Notification] {
        let parsed = parse(
            r#"{"decision":"block","reason":"keep going","mode":"plan"}"#,
            event,
        );
        let a = parsed.action.unwrap();
        assert_eq!(a.mode.as_deref(), Some("plan"));
        assert_eq!((a.block, a.decision, a.reason), (None, None, None));
        assert_eq!(a.keep_going, None);
        assert_eq!(parsed.diagnostics.len(), 1);
        assert!(
            parsed.diagnostics[0]
                .starts_with(&format!("`decision: \"block\"` has no effect on {event} (")),
            "{:?}",
            parsed.diagnostics
        );
    }
}

#[test]
fn claude_approve_on_pre_tool_use_is_allow() {
    let a = action(r#"{"decision":"approve","reason":"safe"}"#, PreToolUse);
    assert_eq!(a.decision, Some(Decision::Allow));
    assert_eq!(a.reason.as_deref(), Some("safe"));
}

#[test]
fn gemini_after_agent_allow_and_deny_are_read_on_stop_like_events() {
    for event in NON_PRE.into_iter().filter(|e| e.acts_as() == Stop) {
        let a = action(r#"{"decision":"allow"}"#, event);
        assert_eq!(a, Action::default(), "{event}");
        let a = action(r#"{"decision":"approve"}"#, event);
        assert_eq!(a, Action::default(), "{event}");
        let a = action(
            r#"{"decision":"deny","reason":"the tests fail; fix them"}"#,
            event,
        );
        assert_eq!(
            a.keep_going.as_deref(),
            Some("the tests fail; fix them"),
            "{event}"
        );
        voided(r#"{"decision":"ask"}"#, event);
    }
}

#[test]
fn claude_approve_on_any_other_event_voids_whole_object() {
    for event in NON_PRE.into_iter().filter(|e| e.acts_as() != Stop) {
        voided(r#"{"decision":"approve"}"#, event);
    }
}

// --- Claude Code: {"continue":false,"stopReason":..} ----------------------------------

#[test]
fn continue_false_halts_on_every_event_with_the_stop_reason() {
    for event in Event::ALL {
        let a = action(r#"{"continue":false,"stopReason":"budget spent"}"#, event);
        assert_eq!(a.halt.as_deref(), Some("budget spent"), "{event}");
        assert_eq!(a.block, None, "{event}: a halt is not a block");
        assert_eq!(a.reason, None, "{event}: the reason is not for the model");
        let a = action(r#"{"continue":false}"#, event);
        assert_eq!(a.halt.as_deref(), Some(""));
        let a = action(r#"{"halt":"ka's own key"}"#, event);
        assert_eq!(a.halt.as_deref(), Some("ka's own key"));
    }
}

#[test]
fn continue_true_does_nothing() {
    for event in Event::ALL {
        let parsed = parse(r#"{"continue":true}"#, event);
        assert!(parsed.action.unwrap().is_empty());
        assert!(parsed.diagnostics.is_empty());
    }
}

#[test]
fn stop_reason_without_continue_false_is_ignored_with_diagnostic() {
    let parsed = parse(r#"{"continue":true,"stopReason":"halt"}"#, PreToolUse);
    assert!(parsed.action.unwrap().is_empty());
    assert!(has(&parsed.diagnostics, "`stopReason` has no effect"));
}

#[test]
fn continue_or_stop_reason_of_wrong_type_voids_whole_object() {
    let d = voided(r#"{"continue":"false"}"#, PreToolUse);
    assert_eq!(
        d,
        ["`continue` must be a bool, got a string; the whole object was ignored"]
    );
    voided(r#"{"continue":0}"#, UserPromptSubmit);
    voided(r#"{"continue":false,"stopReason":1}"#, PreToolUse);
    voided(r#"{"halt":true}"#, Stop);
}

#[test]
fn block_and_continue_false_on_user_prompt_submit_block_and_halt() {
    let a = action(
        r#"{"decision":"block","reason":"a","continue":false,"stopReason":"b"}"#,
        UserPromptSubmit,
    );
    assert_eq!(a.block.as_deref(), Some("a"));
    assert_eq!(a.halt.as_deref(), Some("b"));
}

#[test]
fn permission_decision_defer_is_no_decision() {
    let parsed = parse(
        r#"{"hookSpecificOutput":{"permissionDecision":"defer"},"note":"later"}"#,
        PreToolUse,
    );
    let a = parsed.action.unwrap();
    assert_eq!(a.decision, None);
    assert_eq!(a.note.as_deref(), Some("later"));
    assert!(parsed.diagnostics.is_empty());
}

// --- Claude Code: hookSpecificOutput --------------------------------------------------

#[test]
fn permission_decision_on_pre_tool_use_with_reason() {
    for (text, decision) in [
        ("allow", Decision::Allow),
        ("ask", Decision::Ask),
        ("deny", Decision::Deny),
    ] {
        let stdout = json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": text,
            "permissionDecisionReason": "policy",
        }})
        .to_string();
        let parsed = parse(&stdout, PreToolUse);
        let a = parsed.action.unwrap();
        assert_eq!(a.decision, Some(decision));
        assert_eq!(a.reason.as_deref(), Some("policy"));
        assert!(parsed.diagnostics.is_empty());
    }
}

#[test]
fn permission_decision_on_any_other_event_voids_whole_object() {
    for event in NON_PRE {
        let d = voided(
            r#"{"hookSpecificOutput":{"permissionDecision":"deny"}}"#,
            event,
        );
        assert!(has(
            &d,
            "`hookSpecificOutput.permissionDecision` is only valid on pre_tool_use"
        ));
        voided(
            r#"{"hookSpecificOutput":{"permissionDecisionReason":"x"}}"#,
            event,
        );
    }
}

#[test]
fn permission_decision_of_unknown_value_or_type_voids_whole_object() {
    let d = voided(
        r#"{"hookSpecificOutput":{"permissionDecision":"block"}}"#,
        PreToolUse,
    );
    assert!(has(&d, "got \"block\""));
    voided(
        r#"{"hookSpecificOutput":{"permissionDecision":1}}"#,
        PreToolUse,
    );
    voided(
        r#"{"hookSpecificOutput":{"permissionDecisionReason":[]}}"#,
        PreToolUse,
    );
}

#[test]
fn updated_input_from_claude_on_pre_tool_use_replaces_the_input() {
    let a = action(
        r#"{"hookSpecificOutput":{"updatedInput":{"command":"ls"}}}"#,
        PreToolUse,
    );
    let input = object(json!({"command": "ls"}));
    assert_eq!(a.input_patch, Some(InputPatch::Replace(input)));
}

#[test]
fn updated_input_from_claude_on_other_events_or_of_wrong_type_voids() {
    for event in NON_PRE {
        voided(r#"{"hookSpecificOutput":{"updatedInput":{}}}"#, event);
    }
    let d = voided(
        r#"{"hookSpecificOutput":{"updatedInput":"ls"}}"#,
        PreToolUse,
    );
    assert!(has(
        &d,
        "`hookSpecificOutput.updatedInput` must be an object, got a string"
    ));
}

#[test]
fn both_updated_input_forms_void_as_ambiguous() {
    let d = voided(
        r#"{"updated_input":{"a":1},"hookSpecificOutput":{"updatedInput":{"b":2}}}"#,
        PreToolUse,
    );
    assert!(has(&d, "ambiguous"), "{d:?}");
}

#[test]
fn additional_context_and_context_are_context_on_the_context_events() {
    for event in [
        SessionStart,
        UserPromptSubmit,
        PreToolUse,
        PostToolUse,
        Stop,
        SubagentStart,
        PostToolUseFailure,
    ] {
        let a = action(
            r#"{"context":"one","hookSpecificOutput":{"additionalContext":"branch: main"}}"#,
            event,
        );
        assert_eq!(a.context.as_deref(), Some("one\nbranch: main"), "{event}");
        assert_eq!(a.note, None, "{event}: context is not a note");
        assert_eq!(a.feedback, None, "{event}: context is not feedback");
    }
}

#[test]
fn context_is_cut_to_10_000_chars() {
    let stdout =
        json!({"hookSpecificOutput": {"additionalContext": "ж".repeat(10_050)}}).to_string();
    let parsed = parse(&stdout, SessionStart);
    assert_eq!(parsed.action.unwrap().context.unwrap(), "ж".repeat(10_000));
    assert_eq!(
        parsed.diagnostics,
        ["`hookSpecificOutput.additionalContext` was 10050 chars; cut to 10000"]
    );
}

#[test]
fn additional_context_elsewhere_is_ignored_and_context_voids() {
    for event in [SessionEnd, PreCompact, Notification, PostCompact] {
        let parsed = parse(
            r#"{"note":"n","hookSpecificOutput":{"additionalContext":"x"}}"#,
            event,
        );
        let a = parsed.action.unwrap();
        assert_eq!((a.note.as_deref(), a.context), (Some("n"), None));
        assert!(has(&parsed.diagnostics, "has no effect on"), "{event}");
        let d = voided(r#"{"context":"x"}"#, event);
        assert!(has(&d, "`context` is only valid on"), "{d:?}");
    }
}

#[test]
fn plain_stdout_is_context_only_where_asked_and_only_when_not_an_object() {
    let parsed = plain_context("branch: main\n", SessionStart).unwrap();
    assert_eq!(
        parsed.action.unwrap().context.as_deref(),
        Some("branch: main")
    );
    assert!(plain_context(r#"{"note":"x"}"#, SessionStart).is_none());
    assert!(
        plain_context(r#"{"note":"#, SessionStart).is_none(),
        "a broken object"
    );
    assert!(plain_context("[info] on main", SessionStart).is_some());
    assert!(plain_context("  ", UserPromptSubmit).is_none());
    assert!(plain_context("text", SessionEnd).is_none());
}

#[test]
fn additional_context_of_wrong_type_voids_whole_object() {
    voided(
        r#"{"hookSpecificOutput":{"additionalContext":["x"]}}"#,
        PostToolUse,
    );
}

#[test]
fn hook_event_name_is_ignored_but_type_checked() {
    let parsed = parse(
        r#"{"hookSpecificOutput":{"hookEventName":"Stop"}}"#,
        PreToolUse,
    );
    assert!(parsed.action.unwrap().is_empty());
    assert!(parsed.diagnostics.is_empty());
    voided(r#"{"hookSpecificOutput":{"hookEventName":7}}"#, Stop);
}

#[test]
fn hook_specific_output_that_is_not_an_object_voids_whole_object() {
    let d = voided(r#"{"hookSpecificOutput":"deny"}"#, PreToolUse);
    assert_eq!(
        d,
        ["`hookSpecificOutput` must be an object, got a string; the whole object was ignored"]
    );
}

#[test]
fn ka_and_claude_decisions_that_disagree_take_the_stronger() {
    let parsed = parse(
        r#"{"decision":"allow","reason":"ka says ok",
            "hookSpecificOutput":{"permissionDecision":"deny",
                                  "permissionDecisionReason":"claude says no"}}"#,
        PreToolUse,
    );
    let a = parsed.action.unwrap();
    assert_eq!(a.decision, Some(Decision::Deny));
    assert_eq!(a.reason.as_deref(), Some("claude says no"));
    assert_eq!(
        parsed.diagnostics,
        [
            "`decision` says \"allow\" but `hookSpecificOutput.permissionDecision` says \
          \"deny\"; the stronger, \"deny\", applies"
        ]
    );

    let a = action(
        r#"{"decision":"ask","reason":"ka asks",
            "hookSpecificOutput":{"permissionDecision":"allow",
                                  "permissionDecisionReason":"fine"}}"#,
        PreToolUse,
    );
    assert_eq!(a.decision, Some(Decision::Ask));
    assert_eq!(a.reason.as_deref(), Some("ka asks"));
}

#[test]
fn ka_and_claude_decisions_that_agree_need_no_diagnostic() {
    let parsed = parse(
        r#"{"decision":"deny","hookSpecificOutput":{"permissionDecision":"deny",
            "permissionDecisionReason":"why"}}"#,
        PreToolUse,
    );
    let a = parsed.action.unwrap();
    assert_eq!(a.decision, Some(Decision::Deny));
    assert_eq!(a.reason.as_deref(), Some("why"));
    assert!(parsed.diagnostics.is_empty());
}

#[test]
fn system_message_is_a_user_message_not_a_note() {
    for event in Event::ALL {
        let a = action(r#"{"systemMessage":"heads up"}"#, event);
        assert_eq!(a.message.as_deref(), Some("heads up"));
        assert_eq!(a.note, None);
    }
    voided(r#"{"systemMessage":false}"#, Stop);
}

#[test]
fn system_message_is_kept_whole_up_to_10_000_chars_while_note_stays_200() {
    let stdout = json!({"note": "é".repeat(250), "systemMessage": "ü".repeat(5_000)}).to_string();
    let parsed = parse(&stdout, Stop);
    let a = parsed.action.unwrap();
    assert_eq!(a.message.unwrap(), "ü".repeat(5_000));
    assert_eq!(a.note.unwrap(), "é".repeat(NOTE_MAX_CHARS));
    assert_eq!(parsed.diagnostics, ["`note` was 250 chars; cut to 200"]);
    let stdout = json!({"systemMessage": "x".repeat(10_001)}).to_string();
    let parsed = parse(&stdout, Stop);
    assert_eq!(
        parsed.action.unwrap().message.unwrap().len(),
        MESSAGE_MAX_CHARS
    );
}

#[test]
fn full_claude_pre_tool_use_answer_is_read() {
    let a = action(
        r#"{"continue":true,"suppressOutput":false,"systemMessage":"rewrote the command",
            "hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow",
            "permissionDecisionReason":"safe after rewrite",
            "updatedInput":{"command":"ls -la"}}}"#,
        PreToolUse,
    );
    assert_eq!(
        a,
        Action {
            message: Some("rewrote the command".into()),
            input_patch: Some(InputPatch::Replace(object(json!({"command": "ls -la"})))),
            decision: Some(Decision::Allow),
            reason: Some("safe after rewrite".into()),
            ..Action::default()
        }
    );
}

// --- InputPatch, Decision, serialization ----------------------------------------------

#[test]
fn merge_patch_replaces_named_keys_and_keeps_the_rest() {
    let mut args = object(json!({"command": "rm -rf /", "timeout": 30}));
    InputPatch::Merge(object(json!({"command": "ls", "cwd": "/tmp"}))).apply(&mut args);
    assert_eq!(
        Value::Object(args),
        json!({"command": "ls", "timeout": 30, "cwd": "/tmp"})
    );
}

#[test]
fn merge_patch_writes_null_rather_than_deleting() {
    let mut args = object(json!({"a": 1, "b": 2}));
    InputPatch::Merge(object(json!({"a": null}))).apply(&mut args);
    assert_eq!(Value::Object(args), json!({"a": null, "b": 2}));
}

#[test]
fn replace_patch_drops_keys_it_does_not_name() {
    let mut args = object(json!({"command": "rm -rf /", "timeout": 30}));
    InputPatch::Replace(object(json!({"command": "ls"}))).apply(&mut args);
    assert_eq!(Value::Object(args), json!({"command": "ls"}));
}

#[test]
fn decision_strength_is_deny_over_ask_over_allow() {
    use Decision::{Allow, Ask, Deny};
    assert!(Deny > Ask && Ask > Allow);
    assert_eq!(Decision::strongest(Some(Allow), Some(Deny)), Some(Deny));
    assert_eq!(Decision::strongest(Some(Ask), Some(Allow)), Some(Ask));
    assert_eq!(Decision::strongest(Some(Deny), Some(Ask)), Some(Deny));
    assert_eq!(Decision::strongest(None, Some(Allow)), Some(Allow));
    assert_eq!(Decision::strongest(Some(Ask), None), Some(Ask));
    assert_eq!(Decision::strongest(None, None), None);
    assert_eq!([Allow, Deny, Ask].into_iter().max(), Some(Deny));
}

#[test]
fn decision_serializes_lowercase() {
    assert_eq!(serde_json::to_value(Decision::Ask).unwrap(), json!("ask"));
    let back: Decision = serde_json::from_value(json!("deny")).unwrap();
    assert_eq!(back, Decision::Deny);
    assert_eq!(Decision::Allow.to_string(), "allow");
}

#[test]
fn action_serializes_only_what_was_set() {
    let a = action(
        r#"{"updated_input":{"command":"ls"},"decision":"deny"}"#,
        PreToolUse,
    );
    assert_eq!(
        serde_json::to_value(&a).unwrap(),
        json!({
            "input_patch": {"kind": "merge", "value": {"command": "ls"}},
            "decision": "deny",
        })
    );
    assert_eq!(serde_json::to_value(Action::default()).unwrap(), json!({}));
}

#[test]
fn odd_inputs_never_panic() {
    let long = "x".repeat(100_000);
    let inputs = [
        "{",
        "}",
        "{\"",
        "{\"note\":\"\\ud800\"}",
        "{\"note\":\"\u{0}\"}",
        "{\"\":1}",
        "{\"hookSpecificOutput\":{\"hookSpecificOutput\":{}}}",
        "{\"decision\":\"\"}",
        "{\"note\":1e400}",
        "{\"note\":-0}",
        &long,
    ];
    for input in inputs {
        for event in Event::ALL {
            let parsed = parse(input, event);
            assert!(parsed.action.is_some() || !parsed.diagnostics.is_empty());
            assert!(parsed.diagnostics.iter().all(|d| d.len() < 1_000));
        }
    }
}

// --- Permission-request answers (Claude Code, Codex): hookSpecificOutput.decision ------------

#[test]
fn permission_request_allow_answer_is_allow_with_its_rewrite_and_rule_updates() {
    let a = action(
        r#"{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{
            "behavior":"allow","updatedInput":{"command":"ls -la"},
            "updatedPermissions":[{"type":"addRules","rules":[{"toolName":"Bash"}],
              "behavior":"allow","destination":"session"}]}}}"#,
        Event::PermissionRequest,
    );
    assert_eq!(a.decision, Some(Decision::Allow));
    assert_eq!(
        a.input_patch,
        Some(InputPatch::Replace(object(json!({"command": "ls -la"}))))
    );
    let rules = a.permission_updates.expect("rule updates");
    assert_eq!(rules[0]["destination"], "session");
}

#[test]
fn permission_request_deny_answer_is_deny_with_its_message_and_interrupt_halts() {
    let a = action(
        r#"{"hookSpecificOutput":{"decision":{"behavior":"deny","message":"no network"}}}"#,
        Event::PermissionRequest,
    );
    assert_eq!(a.decision, Some(Decision::Deny));
    assert_eq!(a.reason.as_deref(), Some("no network"));
    assert_eq!(a.halt, None);
    let a = action(
        r#"{"hookSpecificOutput":{"decision":{"behavior":"deny","message":"stop now",
            "interrupt":true}}}"#,
        Event::PermissionRequest,
    );
    assert_eq!(a.decision, Some(Decision::Deny));
    assert_eq!(a.halt.as_deref(), Some("stop now"));
}

#[test]
fn permission_answer_elsewhere_or_malformed_voids_whole_object() {
    let d = voided(
        r#"{"hookSpecificOutput":{"decision":{"behavior":"allow"}}}"#,
        PreToolUse,
    );
    assert!(has(&d, "only valid on permission_request"), "{d:?}");
    for bad in [
        r#"{"hookSpecificOutput":{"decision":{"behavior":"maybe"}}}"#,
        r#"{"hookSpecificOutput":{"decision":{"message":"x"}}}"#,
        r#"{"hookSpecificOutput":{"decision":"allow"}}"#,
        r#"{"hookSpecificOutput":{"decision":{"behavior":"allow","updatedPermissions":{}}}}"#,
    ] {
        voided(bad, Event::PermissionRequest);
    }
}

#[test]
fn permission_decision_defer_is_recorded_as_deferred() {
    let a = action(
        r#"{"hookSpecificOutput":{"permissionDecision":"defer"}}"#,
        PreToolUse,
    );
    assert!(a.deferred);
    assert_eq!(a.decision, None);
}

#[test]
fn every_action_key_an_event_documents_is_one_this_module_reads() {
    for event in Event::ALL {
        for key in event
            .info()
            .actions
            .iter()
            .chain(crate::event::COMMON_ACTIONS)
        {
            assert!(
                super::KNOWN_KEYS.contains(key),
                "{} documents `{key}`, which is read nowhere",
                event.as_str()
            );
        }
    }
}
