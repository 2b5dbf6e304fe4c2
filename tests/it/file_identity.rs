//! Every spelling of a file is the same file: an `apply_patch` call's patch text names the files
//! it touches, for every host and `ka-hooks run`; a hard link to ka's own file is that file; `~`
//! is the home directory; Codex's `config.toml` is one of the files that call ka-hooks.

use std::fs;

use serde_json::{json, Value};

use crate::support::{hook, Project};

/// A user guard on `secrets/**` for every tool that writes files.
fn secrets_guarded() -> Project {
    Project::with_user_toml(&hook(
        "no-secrets",
        "pre_tool_use",
        "cat >/dev/null; echo 'secrets/ is off limits' >&2; exit 2",
        &[r#"tool = "write""#, r#"paths = ["secrets/**"]"#],
    ))
}

const PATCH: &str = "*** Begin Patch\n*** Update File: src/a.rs\n*** Move to: secrets/key\n@@\n-a\n+b\n*** End Patch\n";

#[test]
fn an_apply_patch_reaches_paths_guards_through_run_and_the_library() {
    let p = secrets_guarded();
    p.write("src/a.rs", "a\n");
    for args in [json!({"patch": PATCH}), json!({"command": PATCH})] {
        let out = p.run_json("apply_patch", args.clone());
        assert_eq!(out["blocked"], true, "{args}: {out:#}");
        let outcome = p.tool_call(ka_hooks::Event::PreToolUse, "apply_patch", args);
        assert!(outcome.blocked(), "{:?}", outcome.reason());
    }
    // An `Edit(…)` rule reads the patch too.
    let q = Project::with_user_toml(&hook(
        "no-secret-edits",
        "pre_tool_use",
        "cat >/dev/null; echo 'no secret edits' >&2; exit 2",
        &[r#"if = "Edit(secrets/**)""#],
    ));
    let out = q.run_json("apply_patch", json!({"patch": PATCH}));
    assert_eq!(out["blocked"], true, "{out:#}");
    // Through Codex: the same patch, as Codex sends it.
    let payload = json!({"session_id": "s", "turn_id": "1", "cwd": p.root,
        "hook_event_name": "PreToolUse", "model": "gpt-5-codex", "permission_mode": "default",
        "tool_name": "apply_patch", "tool_input": {"command": PATCH}, "tool_use_id": "c"});
    let out = p
        .cli()
        .arg("codex")
        .write_stdin(payload.to_string())
        .output()
        .expect("codex");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_hard_link_to_the_users_ka_toml_is_the_users_ka_toml() {
    let p = Project::with_user_toml("");
    fs::create_dir_all(p.root.join("src")).expect("mkdir");
    fs::hard_link(p.config_dir.join("ka.toml"), p.root.join("src/hard")).expect("link");
    let out = p.run_json(
        "write",
        json!({"path": "src/hard", "content": "disable_all = true"}),
    );
    assert_eq!(out["decision"], "ask", "{out:#}");
    let reason = out["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("one of ka's own hook files"), "{reason}");
    // An ordinary file with one name is not asked.
    p.write("src/plain", "x");
    let out = p.run_json("write", json!({"path": "src/plain", "content": "y"}));
    assert_eq!(out["decision"], Value::Null, "{out:#}");
}

#[test]
fn a_tilde_is_the_home_directory() {
    let p = Project::with_user_toml(&hook(
        "no-keys",
        "pre_tool_use",
        "cat >/dev/null; echo 'keys stay home' >&2; exit 2",
        &[r#"if = "Read(~/.ssh/**)""#],
    ));
    let home = p.base.join("home");
    fs::create_dir_all(home.join(".ssh")).expect("mkdir");
    let out = p
        .cli()
        .env("HOME", &home)
        .args(["run", "pre_tool_use", "--tool", "read", "--input"])
        .arg(json!({"arguments": {"path": "~/.ssh/id_rsa"}}).to_string())
        .output()
        .expect("run");
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn codex_config_toml_is_asked_like_hooks_json() {
    let p = Project::with_user_toml("");
    let codex_home = p.base.join("codex");
    fs::create_dir_all(&codex_home).expect("mkdir");
    for target in [
        p.root.join(".codex/config.toml"),
        codex_home.join("config.toml"),
    ] {
        let out = p
            .cli()
            .env("CODEX_HOME", &codex_home)
            .args(["run", "pre_tool_use", "--tool", "write", "--json", "--input"])
            .arg(json!({"arguments": {"path": target, "content": "[features]\ncodex_hooks = false\n"}}).to_string())
            .output()
            .expect("run");
        let out: Value = serde_json::from_slice(&out.stdout).expect("json");
        assert_eq!(out["decision"], "ask", "{}: {out:#}", target.display());
    }
}

#[test]
fn a_hard_link_into_a_guarded_folder_is_guarded() {
    let p = secrets_guarded();
    p.write("secrets/key", "k");
    p.write("src/ok.txt", "o");
    fs::hard_link(p.root.join("secrets/key"), p.root.join("src/hard")).expect("link");
    let args = json!({"path": "src/hard", "content": "overwritten"});
    // Through `ka-hooks run` and the library.
    let out = p.run_json("write", args.clone());
    assert_eq!(out["blocked"], true, "{out:#}");
    let outcome = p.tool_call(ka_hooks::Event::PreToolUse, "write", args);
    assert!(outcome.blocked(), "{:?}", outcome.reason());
    // Through Claude Code's Write.
    let payload = json!({"session_id": "s", "cwd": p.root, "hook_event_name": "PreToolUse",
        "tool_name": "Write", "tool_input": {"file_path": p.root.join("src/hard"), "content": "x"},
        "tool_use_id": "t", "permission_mode": "acceptEdits", "transcript_path": "/dev/null"});
    let out = p
        .cli()
        .arg("claude")
        .write_stdin(payload.to_string())
        .output()
        .expect("claude");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.code() == Some(2) || text.contains("\"deny\""),
        "{text} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // An `if` rule is the same: `Edit(secrets/**)` judges the link.
    let q = Project::with_user_toml(&hook(
        "no-secret-edits",
        "pre_tool_use",
        "cat >/dev/null; echo 'no secret edits' >&2; exit 2",
        &[r#"if = "Edit(secrets/**)""#],
    ));
    q.write("secrets/key", "k");
    fs::create_dir_all(q.root.join("src")).expect("mkdir");
    fs::hard_link(q.root.join("secrets/key"), q.root.join("src/hard")).expect("link");
    let out = q.run_json("edit", json!({"path": "src/hard", "old": "k", "new": "x"}));
    assert_eq!(out["blocked"], true, "{out:#}");
    // A file with one name elsewhere is not guarded, nor one linked only outside the folder.
    let out = p.run_json("write", json!({"path": "src/ok.txt", "content": "y"}));
    assert_eq!(out["blocked"], false, "{out:#}");
    fs::hard_link(p.root.join("src/ok.txt"), p.root.join("src/ok2.txt")).expect("link");
    let out = p.run_json("write", json!({"path": "src/ok2.txt", "content": "y"}));
    assert_eq!(out["blocked"], false, "{out:#}");
}

/// Attack: between two calls of one session, the model's shell swaps the working directory (no
/// project) for a symlink to the user's config dir; the second call writes `ka.toml` relative
/// to it. The root was resolved once per configuration, so the write was taken for a file of
/// the old directory and went through.
#[test]
fn a_working_directory_swapped_for_a_link_to_kas_files_mid_session_still_asks() {
    use ka_hooks::next::{Next, Permission};
    use ka_hooks::session::Session;
    use ka_hooks::{Config, Event, Request};
    let p = Project::with_user_toml("");
    let work = p.base.join("work");
    fs::create_dir_all(&work).expect("mkdir");
    let config = Config::load(&p.options(&work, false)).expect("load");
    assert_eq!(
        config.project_root, None,
        "an ancestor of the temp dir holds .ka/"
    );
    let session = Session::new(std::sync::Arc::new(config), "swap", &work);
    let write = |path: &str| {
        let args = crate::support::object(json!({"path": path, "content": "disable_all = true"}));
        session
            .dispatch(Request::tool_call(Event::PreToolUse, "write", args))
            .next()
    };
    assert!(
        matches!(write("notes.md"), Next::ToolCall(Permission::Run { .. }, _)),
        "an ordinary write runs"
    );
    fs::rename(&work, p.base.join("work.old")).expect("move the working dir away");
    std::os::unix::fs::symlink(&p.config_dir, &work).expect("symlink");
    match write("ka.toml") {
        Next::ToolCall(Permission::Ask { reason, .. }, _) => {
            assert!(reason.contains("one of ka's own hook files"), "{reason}")
        }
        other => panic!("the user's ka.toml, reached through the swapped dir: {other:?}"),
    }
}
