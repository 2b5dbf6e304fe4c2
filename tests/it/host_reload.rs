//! A session reloads when the user's own file appears: a user file created mid-session is
//! picked up (it was not: only files that loaded were watched).

use std::sync::Arc;

use ka_hooks::next::{Next, Permission};
use ka_hooks::session::Session;

use crate::support;

use support::{hook, write_call, Project};

#[test]
fn a_user_file_created_mid_session_is_loaded() {
    let p = Project::new();
    let session = Session::new(Arc::new(p.load()), "created-mid-session", &p.root);
    assert!(matches!(
        session.dispatch(write_call()).next(),
        Next::ToolCall(Permission::Run { .. }, _)
    ));
    p.user(&hook(
        "new-guard",
        "pre_tool_use",
        "echo 'the new guard' >&2; exit 2",
        &[],
    ));
    match session.dispatch(write_call()).next() {
        Next::ToolCall(Permission::Block { reason, .. }, _) => assert_eq!(reason, "the new guard"),
        other => panic!("the new user file was not loaded: {other:?}"),
    }
}
