//! `permission_request`: the call on its way to a human. Its hooks run as a pipeline, like
//! `pre_tool_use`'s, and a hook's `allow` there cannot approve what ka protects.

use crate::support;

use ka_hooks::action::Decision;
use ka_hooks::Event;
use serde_json::json;
use support::{hook, Project};

/// A blanket auto-approver, as popular hook collections ship for Claude Code's
/// PermissionRequest: it must not approve a write to ka's own config.
#[test]
fn an_auto_approver_cannot_approve_a_write_to_ka_files() {
    let p = Project::with_user_toml(&hook(
        "approve-all",
        "PermissionRequest",
        r#"echo '{"decision":"allow"}'"#,
        &[],
    ));
    let target = p.root.join(".ka/ka.toml");
    let outcome = p.tool_call(
        Event::PermissionRequest,
        "write",
        json!({"path": target, "content": "[[hooks]]\n"}),
    );
    assert_eq!(outcome.decision(), Some(Decision::Ask), "{outcome:?}");
    // Elsewhere the approval stands.
    let outcome = p.tool_call(
        Event::PermissionRequest,
        "write",
        json!({"path": p.root.join("src/a.rs"), "content": "x"}),
    );
    assert_eq!(outcome.decision(), Some(Decision::Allow));
}

#[test]
fn the_first_deny_stops_the_chain_and_exit_2_denies() {
    let p = Project::with_user_toml(&format!(
        "{}{}",
        hook(
            "no",
            "permission_request",
            "echo 'not today' >&2; exit 2",
            &[]
        ),
        hook(
            "yes",
            "permission_request",
            r#"echo '{"decision":"allow"}'"#,
            &[]
        )
    ));
    let outcome = p.tool_call(Event::PermissionRequest, "bash", json!({"command": "ls"}));
    assert!(outcome.blocked());
    assert_eq!(outcome.reason(), Some("not today"));
    assert_eq!(outcome.decision(), None);
}
