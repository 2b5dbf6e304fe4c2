//! A native host that passes a tool name ka's guards do not know learns it from the outcome. A
//! name that is another agent's spelling of a ka tool (`Write`, `write_file`) matched no guard
//! and the call ran; now a guarded call under such a name is blocked, and every outcome says
//! which name was unknown (`Always::unknown_tool`).

use ka_hooks::next::{Next, Permission};
use ka_hooks::outcome::UnknownTool;
use ka_hooks::{Event, Outcome};
use serde_json::json;

use crate::support;

use support::{hook, Project};

fn guarded() -> Project {
    let p = Project::new();
    p.user(&hook(
        "src-only",
        "pre_tool_use",
        "echo 'only src/ is writable' >&2; exit 2",
        &[r#"tool = "write""#],
    ));
    p
}

fn unknown(o: &Outcome) -> Option<UnknownTool> {
    o.next().always().unknown_tool.clone()
}

#[test]
fn another_agents_spelling_of_a_guarded_tool_is_blocked_and_reported() {
    let p = guarded();
    for (given, args) in [
        ("Write", json!({"file_path": "/etc/passwd", "content": "x"})),
        (
            "write_file",
            json!({"file_path": "/etc/passwd", "content": "x"}),
        ),
    ] {
        let o = p.tool_call(Event::PreToolUse, given, args);
        let Next::ToolCall(Permission::Block { reason, .. }, always) = o.next() else {
            panic!("{given}: ran unguarded: {:?}", o.next());
        };
        assert!(
            reason.contains("`write`") && reason.contains("src-only"),
            "{reason}"
        );
        assert_eq!(
            always.unknown_tool,
            Some(UnknownTool::Spelling {
                given: given.to_owned(),
                ka: "write".to_owned()
            })
        );
        assert!(o.hooks.is_empty(), "blocked without running a hook");
    }
    // ka's own name runs the guard itself.
    let o = p.tool_call(Event::PreToolUse, "write", json!({"path": "/etc/passwd"}));
    assert!(matches!(
        o.next(),
        Next::ToolCall(Permission::Block { ref reason, .. }, _) if reason == "only src/ is writable"
    ));
    assert_eq!(unknown(&o), None);
}

#[test]
fn an_unguarded_spelling_runs_and_is_reported() {
    let p = guarded();
    let o = p.tool_call(Event::PreToolUse, "Bash", json!({"command": "ls"}));
    assert!(matches!(
        o.next(),
        Next::ToolCall(Permission::Run { .. }, _)
    ));
    assert!(matches!(unknown(&o), Some(UnknownTool::Spelling { ref ka, .. }) if ka == "bash"));
    let o = p.tool_call(Event::PostToolUse, "Write", json!({"file_path": "a"}));
    assert!(matches!(unknown(&o), Some(UnknownTool::Spelling { .. })));
}

#[test]
fn a_name_no_agent_has_is_reported_and_seen_by_unfiltered_hooks() {
    let p = Project::new();
    p.user(&hook(
        "every-call",
        "pre_tool_use",
        "echo 'looked at it' >&2; exit 2",
        &[],
    ));
    let o = p.tool_call(Event::PreToolUse, "deploy", json!({"path": "prod"}));
    assert_eq!(
        unknown(&o),
        Some(UnknownTool::Unknown {
            given: "deploy".to_owned()
        })
    );
    assert!(matches!(
        o.next(),
        Next::ToolCall(Permission::Block { ref reason, .. }, _) if reason == "looked at it"
    ));
    for known in [
        "write",
        "read",
        "mcp__github__create_issue",
        "read_many_files",
    ] {
        let o = p.tool_call(Event::PostToolUse, known, json!({}));
        assert_eq!(unknown(&o), None, "{known}");
    }
}
