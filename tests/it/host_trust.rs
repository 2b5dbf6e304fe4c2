//! A host trusts a project through the library, as `ka-hooks trust` does: it shows the user the
//! review, records exactly what was reviewed, and can revoke it. What the library says of an
//! untrusted or changed project names the action a person takes, never a `ka-hooks` command a
//! host that embeds the library may not ship, and says it once per session, not on every call.

use std::fs;

use ka_hooks::next::{Next, Permission};
use ka_hooks::review::{self, RecordError};
use ka_hooks::session::Session;
use ka_hooks::Config;
use serde_json::json;

use crate::support;

use support::{hook, write_call, Project};

const GUARD: &str = "sh .ka/hooks/guard.sh";
const GUARD_SH: &str = "#!/bin/sh\ncat >/dev/null\necho 'only src/ is writable' >&2\nexit 2\n";

fn project() -> Project {
    let p = Project::new();
    p.project(&hook(
        "guard",
        "pre_tool_use",
        GUARD,
        &[r#"tool = "write""#],
    ));
    p.write(".ka/hooks/guard.sh", GUARD_SH);
    p
}

fn gated(p: &Project) -> Config {
    Config::load(&p.options(&p.root, false)).expect("load")
}

fn block_reason(config: &Config) -> String {
    match config.dispatch(write_call()).next() {
        Next::ToolCall(Permission::Block { reason, .. }, _) => reason,
        other => panic!("expected a block, got {other:?}"),
    }
}

#[test]
fn a_host_reviews_records_and_revokes_trust() {
    let p = project();
    let opts = p.options(&p.root, false);
    assert!(
        gated(&p).hooks.iter().all(|h| h.name != "guard"),
        "untrusted: the guard does not load"
    );
    let review = review::review(&opts).expect("review");
    assert!(review.needs_trust());
    // The same content as the command line's review: the hook, its command, the script.
    for needle in ["guard", GUARD, ".ka/hooks/guard.sh"] {
        assert!(
            review.text().contains(needle),
            "{needle:?} in {}",
            review.text()
        );
    }
    assert_eq!(
        review.files().collect::<Vec<_>>(),
        [p.root.join(".ka/ka.toml").as_path()]
    );
    review::record(&opts, &review).expect("record");
    assert_eq!(block_reason(&gated(&p)), "only src/ is writable");
    assert!(!review::review(&opts).expect("again").needs_trust());

    let revoked = review::revoke(&opts).expect("revoke");
    assert_eq!(revoked, [p.root.join(".ka/ka.toml")]);
    assert!(gated(&p).hooks.iter().all(|h| h.name != "guard"));
}

#[test]
fn record_trusts_only_what_was_reviewed() {
    let p = project();
    let opts = p.options(&p.root, false);
    let review = review::review(&opts).expect("review");
    // The script changes between the review and the user's yes.
    p.write(".ka/hooks/guard.sh", "#!/bin/sh\nexit 0\n");
    let err = review::record(&opts, &review).expect_err("a changed script is not recorded");
    assert!(
        matches!(err, RecordError::Changed(ref f) if f.ends_with("guard.sh")),
        "{err}"
    );
    assert!(gated(&p)
        .untrusted
        .iter()
        .any(|u| u.file.ends_with(".ka/ka.toml")));
    // So does the file.
    let review = review::review(&opts).expect("review");
    p.project(&hook("guard", "pre_tool_use", "true", &[]));
    let err = review::record(&opts, &review).expect_err("a changed file is not recorded");
    assert!(
        matches!(err, RecordError::Changed(ref f) if f.ends_with("ka.toml")),
        "{err}"
    );
}

#[test]
fn a_stale_guard_names_the_action_not_a_command() {
    let p = project();
    let opts = p.options(&p.root, false);
    review::record(&opts, &review::review(&opts).expect("review")).expect("record");
    let mut text = fs::read_to_string(p.root.join(".ka/ka.toml")).expect("read");
    text.push_str("# edited\n");
    p.project(&text);
    let next = gated(&p).dispatch(write_call()).next();
    let Next::ToolCall(Permission::Block { reason, .. }, always) = &next else {
        panic!("expected a block, got {next:?}");
    };
    assert!(reason.contains("changed since it was trusted"), "{reason}");
    assert!(
        reason.contains("the user must review the project's hooks and trust them again"),
        "{reason}"
    );
    let said: Vec<&str> = always.for_user.lines().collect();
    assert!(
        said.iter()
            .any(|l| l.contains("changed since it was trusted")),
        "{said:?}"
    );
    for text in said.into_iter().chain([reason.as_str()]) {
        assert!(!text.contains("ka-hooks"), "names the CLI: {text}");
        assert!(!text.contains("--project"), "names the CLI: {text}");
    }
}

#[test]
fn an_untrusted_layer_is_said_once_per_session() {
    let p = project();
    let config = std::sync::Arc::new(gated(&p));
    let session = Session::new(config.clone(), "told-once", &p.root);
    let lines = |o: ka_hooks::Outcome| {
        o.next()
            .always()
            .for_user
            .lines()
            .filter(|l| l.contains("skipped the project layer"))
            .count()
    };
    let first = lines(session.dispatch(write_call()));
    assert_eq!(first, 1, "the first dispatch says it");
    for _ in 0..3 {
        assert_eq!(lines(session.dispatch(write_call())), 0, "said again");
    }
    // Still in the report, and another session hears it too.
    assert_eq!(session.dispatch(write_call()).untrusted.len(), 1);
    let other = Session::new(config, "told-once-2", &p.root);
    assert_eq!(lines(other.dispatch(write_call())), 1);
}

#[test]
fn the_binary_adds_its_trust_command() {
    let p = project();
    p.cli().args(["trust", "--yes"]).assert().success();
    let mut text = fs::read_to_string(p.root.join(".ka/ka.toml")).expect("read");
    text.push_str("# edited\n");
    p.project(&text);
    let out = p
        .cli()
        .arg("claude")
        .write_stdin(
            json!({
                "hook_event_name": "PreToolUse",
                "session_id": "s",
                "cwd": p.root,
                "tool_name": "Write",
                "tool_input": {"file_path": "README.md", "content": "x"}
            })
            .to_string(),
        )
        .output()
        .expect("claude");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let fix = format!("ka-hooks --project {} trust", p.root.display());
    assert!(stdout.contains("\"deny\""), "{stdout}");
    assert!(stdout.contains(&fix), "{stdout}");
}
