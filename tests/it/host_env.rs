//! A host chooses the environment of its session's hooks: its whole environment (the default),
//! or only what it allows plus ka's own variables. Before, hooks always inherited everything,
//! API keys included.

use std::sync::Arc;
use std::time::Duration;

use ka_hooks::next::{Next, Permission};
use ka_hooks::session::{HookEnv, Session};
use ka_hooks::{Event, Request};
use serde_json::json;

use crate::support;

use support::{hook, object, Project};

/// Not a `KA_*` name: only an allowlist passes it.
const KEY: &str = "HOST_API_KEY_SEEN_BY_HOOKS";

/// What the guard saw, as its block reason.
const SHOW: &str = r#"echo "key=${HOST_API_KEY_SEEN_BY_HOOKS:-none} path=${PATH:+set} home=${HOME:+set} event=$KA_EVENT" >&2; exit 2"#;

fn seen(session: &Session) -> String {
    let call = Request::tool_call(Event::PreToolUse, "bash", object(json!({"command": "ls"})));
    match session.dispatch(call).next() {
        Next::ToolCall(Permission::Block { reason, .. }, _) => reason,
        other => panic!("expected the guard's block, got {other:?}"),
    }
}

fn project() -> Project {
    // Set before any hook runs; a name no other test reads.
    std::env::set_var(KEY, "sk-secret");
    let p = Project::new();
    p.user(&hook("show-env", "pre_tool_use", SHOW, &[]));
    p
}

#[test]
fn a_hook_sees_only_the_variables_the_host_allows() {
    let p = project();
    let config = Arc::new(p.load());
    let inherit = Session::new(Arc::clone(&config), "env-inherit", &p.root);
    assert!(
        seen(&inherit).starts_with("key=sk-secret"),
        "{}",
        seen(&inherit)
    );

    let allowed = Session::new(Arc::clone(&config), "env-allow", &p.root)
        .with_hook_env(HookEnv::allow(["NOT_SET_ANYWHERE"]));
    let text = seen(&allowed);
    assert!(text.starts_with("key=none path=set home=set"), "{text}");
    assert!(
        text.contains("event=pre_tool_use"),
        "ka's own variables: {text}"
    );

    let allowed_key = Session::new(Arc::clone(&config), "env-allow-key", &p.root)
        .with_hook_env(HookEnv::allow([KEY]));
    assert!(seen(&allowed_key).starts_with("key=sk-secret"));

    let bare = Session::new(config, "env-only", &p.root).with_hook_env(HookEnv::Only(vec![]));
    let text = seen(&bare);
    // (`sh` sets a default `PATH` of its own when it gets none; `HOME` it does not.)
    assert!(
        text.starts_with("key=none") && text.contains(" home= event=pre_tool_use"),
        "{text}"
    );
}

#[test]
fn an_async_hook_gets_the_sessions_environment_too() {
    let p = project();
    let out = p.base.join("async-env.txt");
    p.user(&hook(
        "record-env",
        "post_tool_use",
        &format!(
            "echo \"key=${{{KEY}:-none}} event=$KA_EVENT\" > '{}'",
            out.display()
        ),
        &["async = true", "timeout = 10"],
    ));
    let session = Session::new(Arc::new(p.load()), "env-async", &p.root)
        .with_hook_env(HookEnv::allow(Vec::<String>::new()));
    let result = Request::tool_call(Event::PostToolUse, "bash", object(json!({"command": "ls"})));
    session.dispatch(result);
    let delivered = session.wait_delivered(Duration::from_secs(15));
    assert_eq!(delivered.len(), 1, "{delivered:?}");
    let text = std::fs::read_to_string(&out).expect("the async hook ran");
    assert_eq!(text.trim(), "key=none event=post_tool_use");
}
