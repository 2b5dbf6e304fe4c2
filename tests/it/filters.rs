//! Formatter and lint-loop hooks without glue: `paths`, `if`, placeholders, report-only.
//! Every hook here is a real `sh` command; "not spawned" is proven by a marker file.

use predicates::prelude::*;
use serde_json::json;

use crate::support;

use ka_hooks::Event;
use support::Project;

fn project_with(user: &str) -> Project {
    let p = Project::new();
    p.user(user);
    p
}

const FORMATTER: &str = r#"
[[hooks]]
name = "fmt"
event = "post_tool_use"
paths = ["src/**/*.rs", "!src/gen/**"]
command = "printf '%s\n' {paths} >> seen"
"#;

#[test]
fn paths_match_ka_tools_and_patches_and_exclude() {
    let p = project_with(FORMATTER);
    let abs = p.root.join("src/abs.rs");
    for args in [
        json!({"path": "src/a.rs"}),
        json!({"path": "README.md"}),
        json!({"path": "src/gen/x.rs"}),
        json!({"path": abs.to_string_lossy()}),
        json!({"path": "/elsewhere/src/a.rs"}),
        json!({"paths": ["README.md", "src/b.rs"]}),
        json!({"command": "ls"}),
    ] {
        p.tool_call(Event::PostToolUse, "write", args);
    }
    let seen = p.read("seen").unwrap_or_default();
    let abs_line = abs.to_string_lossy().into_owned();
    // `{paths}` holds the paths the filter passes: the patch's README.md is not handed to a
    // formatter for `*.rs`.
    let want = ["src/a.rs", abs_line.as_str(), "src/b.rs"].join("\n") + "\n";
    assert_eq!(seen, want);
}

#[test]
fn a_hook_whose_paths_match_nothing_is_never_spawned() {
    let p = project_with(FORMATTER);
    let out = p.tool_call(Event::PostToolUse, "write", json!({"path": "docs/x.md"}));
    assert!(out.hooks.is_empty(), "{:?}", out.hooks);
    assert!(!p.exists("seen"));
}

#[test]
fn paths_match_every_agents_path_arguments() {
    let p = project_with(FORMATTER);
    let file = p.root.join("src/agent.rs");
    for (agent, payload) in [
        (
            "claude",
            json!({"hook_event_name": "PostToolUse", "tool_name": "Write",
                   "tool_input": {"file_path": file, "content": "x"}, "tool_response": {},
                   "cwd": p.root, "session_id": "s"}),
        ),
        (
            "gemini",
            json!({"hook_event_name": "AfterTool", "tool_name": "write_file",
                   "tool_input": {"file_path": "src/agent.rs", "content": "x"},
                   "tool_response": {}, "cwd": p.root, "session_id": "s"}),
        ),
        (
            "codex",
            json!({"hook_event_name": "PostToolUse", "tool_name": "apply_patch",
                   "tool_input": {"command": "*** Begin Patch\n*** Update File: src/agent.rs\n@@\n-a\n+b\n*** End Patch\n"},
                   "tool_response": {}, "cwd": p.root, "session_id": "s"}),
        ),
    ] {
        p.cli()
            .arg(agent)
            .write_stdin(payload.to_string())
            .assert()
            .success();
    }
    let seen = p.read("seen").unwrap_or_default();
    assert_eq!(seen.lines().count(), 3, "{seen}");
    assert!(seen.lines().all(|l| l.ends_with("src/agent.rs")), "{seen}");
}

#[test]
fn placeholders_keep_hostile_file_names_inert() {
    let p = project_with(
        "[[hooks]]\nevent = \"post_tool_use\"\ntool = \"apply_patch\"\n\
         command = \"printf '[%s]\\\\n' {paths} > out; echo {tool} {root} >> out\"\n",
    );
    let names = [
        "a b",
        "$(touch pwned)",
        "-rf",
        "it's \"q\"",
        "new\nline",
        "`touch pwned2`",
    ];
    p.tool_call(Event::PostToolUse, "apply_patch", json!({"paths": names}));
    let out = p.read("out").unwrap_or_default();
    let expected =
        "[a b]\n[$(touch pwned)]\n[./-rf]\n[it's \"q\"]\n[new\nline]\n[`touch pwned2`]\n";
    assert!(out.starts_with(expected), "{out}");
    assert!(
        out.ends_with(&format!("apply_patch {}\n", p.root.display())),
        "{out}"
    );
    assert!(!p.exists("pwned") && !p.exists("pwned2"));
}

#[test]
fn if_rules_are_checked_before_spawning_and_per_subcommand() {
    let p = project_with(
        "[[hooks]]\nevent = \"pre_tool_use\"\nif = \"Bash(git commit *)\"\n\
         command = \"echo ran >> ran; echo 'no commits now' >&2; exit 2\"\n",
    );
    let blocked = |cmd: &str| {
        p.tool_call(Event::PreToolUse, "bash", json!({"command": cmd}))
            .blocked()
    };
    assert!(blocked("git commit -m x"));
    assert!(blocked("ls && git commit -m x"));
    assert!(blocked("GIT_AUTHOR=me git commit"));
    assert!(!blocked("git status"));
    assert!(!p
        .tool_call(Event::PreToolUse, "write", json!({"path": "a"}))
        .blocked());
    assert_eq!(p.read("ran").unwrap_or_default().lines().count(), 3);
}

#[test]
fn report_only_guards_say_what_they_would_do_and_apply_nothing() {
    let p = project_with(
        "[[hooks]]\nname = \"new-guard\"\nevent = \"pre_tool_use\"\nenforce = false\n\
         command = \"echo 'would block' >&2; exit 2\"\n\
         [[hooks]]\nname = \"new-rewriter\"\nevent = \"pre_tool_use\"\nenforce = false\n\
         command = \"echo '{\\\"updated_input\\\": {\\\"path\\\": \\\"x\\\"}, \\\"decision\\\": \\\"allow\\\"}'\"\n\
         [[hooks]]\nname = \"marker\"\nevent = \"post_tool_use\"\nenforce = false\n\
         command = \"echo bad >&2; exit 2\"\n",
    );
    let out = p.tool_call(Event::PreToolUse, "write", json!({"path": "a"}));
    assert!(
        !out.blocked() && out.decision().is_none() && out.updated_input.is_none(),
        "{out:?}"
    );
    let effects: Vec<(&str, &str)> = out
        .report_only
        .iter()
        .map(|w| (w.hook.as_str(), w.effect.as_str()))
        .collect();
    assert_eq!(
        effects,
        [("new-guard", "block"), ("new-rewriter", "rewrite")]
    );
    assert_eq!(out.report_only[0].detail.as_deref(), Some("would block"));
    let post = p.tool_call(Event::PostToolUse, "write", json!({"path": "a"}));
    assert!(!post.mark_error);
    assert_eq!(
        post.report_only[0].effect,
        ka_hooks::outcome::Effect::MarkError
    );
}

#[test]
fn filter_errors_point_at_the_key() {
    let p = project_with(
        "[[hooks]]\nevent = \"post_tool_use\"\ncommand = \"fmt {path}\"\n\
         [[hooks]]\nevent = \"pre_tool_use\"\nasync = true\ncommand = \"a\"\n\
         [[hooks]]\nevent = \"post_tool_use\"\ncommand = \"fmt {pahts}\"\n\
         [[hooks]]\nevent = \"pre_tool_use\"\nif = \"Bash(a)|Bash(b)\"\ncommand = \"a\"\n\
         [[hooks]]\nevent = \"stop\"\npaths = [\"src/**\"]\ncommand = \"a\"\n",
    );
    p.cli()
        .arg("check")
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "`hooks[0].command`: `{path}` names one path",
        ))
        .stderr(predicate::str::contains("`hooks[1].async`"))
        .stderr(predicate::str::contains("unknown placeholder `{pahts}`"))
        .stderr(predicate::str::contains("`hooks[3].if`: invalid rule"))
        .stderr(predicate::str::contains("`hooks[4].paths`"));
}

#[test]
fn a_single_path_placeholder_is_fine_on_single_file_tools() {
    let p = project_with(
        "[[hooks]]\nevent = \"post_tool_use\"\ntool = [\"write\", \"edit\"]\n\
         command = \"echo {path} > one\"\n",
    );
    p.tool_call(Event::PostToolUse, "edit", json!({"path": "src/x y.rs"}));
    assert_eq!(p.read("one").as_deref(), Some("src/x y.rs\n"));
}

#[test]
fn list_and_doctor_show_report_only_async_paths_and_if() {
    let p = project_with(
        r#"
[[hooks]]
name = "new-guard"
event = "pre_tool_use"
if = "Bash(git push:*)"
command = "exit 2"
enforce = false

[[hooks]]
name = "lint"
event = "post_tool_use"
paths = ["src/**/*.rs", "!src/gen/**"]
command = "true {paths}"
async = true
"#,
    );
    p.cli().arg("list").assert().success().stdout(
        predicate::str::contains("new-guard  *  [report-only: its verdicts are reported")
            .and(predicate::str::contains("if: Bash(git push:*)"))
            .and(predicate::str::contains("lint  *  [async]"))
            .and(predicate::str::contains("paths: src/**/*.rs, !src/gen/**")),
    );
    let out = p.cli().args(["list", "--json"]).output().expect("list");
    let listed: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let text = listed.to_string();
    assert!(text.contains(r#""enforce":false"#), "{text}");
    assert!(text.contains(r#""async":true"#), "{text}");
    assert!(text.contains(r#""if":"Bash(git push:*)""#), "{text}");
    assert!(
        text.contains(r#""paths":["src/**/*.rs","!src/gen/**"]"#),
        "{text}"
    );
    p.cli()
        .arg("doctor")
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "warning  enforce  report-only (`enforce = false`): it runs, but what it would block",
        ));
}

/// The release build has no Unicode tables (see Cargo.toml): matchers are ASCII regexes, as Claude
/// Code's JavaScript matchers are, and what would need the tables (`\p{…}`, `(?u)`) is refused by
/// name at its key in every build, instead of compiling only where dev-dependencies brought the
/// tables back. `(?i)`, `\w` and `\b` work (ASCII); literal non-ASCII text matches itself.
#[test]
fn matchers_are_ascii_regexes_and_refuse_what_needs_unicode_tables() {
    for (matcher, why) in [
        (r"\p{L}+", "Unicode property classes are not supported"),
        (r"Write|\pN", "Unicode property classes are not supported"),
        (
            r"[\p{Greek}a]",
            "Unicode property classes are not supported",
        ),
        (r"\P{Lu}", "Unicode property classes are not supported"),
        (r"(?u)\w+", "the `u` flag is not supported"),
        (r"(?i:(?u:k))", "the `u` flag is not supported"),
        // Would compile as bytes and quietly never match a UTF-8 name.
        (r"^mcp__caf\xe9__", "is a raw byte here"),
        (r"[\xe0-\xff]", "is a raw byte here"),
        // Would quietly keep the letter's case.
        ("(?i)^mcp__caf\u{e9}__", "folds ASCII letters only"),
    ] {
        let p = project_with(&format!(
            "[[hooks]]\nevent = \"pre_tool_use\"\nmatcher = '{matcher}'\ncommand = \"true\"\n"
        ));
        p.cli()
            .arg("check")
            .assert()
            .code(1)
            .stderr(predicate::str::contains("`hooks[0].matcher`"))
            .stderr(predicate::str::contains(why));
    }
    let p = project_with(
        "[[hooks]]\nevent = \"pre_tool_use\"\nmatcher = '(?i)^WRITE$'\ncommand = \"echo i >> seen\"\n\
         [[hooks]]\nevent = \"pre_tool_use\"\nmatcher = '^\\w+__\\w+$'\ncommand = \"echo w >> seen\"\n\
         [[hooks]]\nevent = \"pre_tool_use\"\nmatcher = '\\bedit\\b'\ncommand = \"echo b >> seen\"\n\
         [[hooks]]\nevent = \"pre_tool_use\"\nmatcher = '^mcp__caf\u{e9}__(?-u:\\w)'\ncommand = \"echo e >> seen\"\n",
    );
    p.tool_call(Event::PreToolUse, "write", json!({"path": "a"}));
    p.tool_call(Event::PreToolUse, "mcp__srv__tool", json!({}));
    p.tool_call(Event::PreToolUse, "multi_edit", json!({"path": "a"}));
    p.tool_call(Event::PreToolUse, "edit", json!({"path": "a"}));
    // `\w` is ASCII: the second hook does not take a non-ASCII name, the fourth's literal does.
    p.tool_call(Event::PreToolUse, "mcp__caf\u{e9}__t\u{e9}", json!({}));
    assert_eq!(p.read("seen").as_deref(), Some("i\nw\nb\ne\n"));
}

/// Bash rules match commands byte-wise: non-ASCII literal text matches itself, and only the
/// shell's own blanks separate the prefix from its arguments.
#[test]
fn bash_rules_match_non_ascii_commands_and_split_on_ascii_blanks() {
    let p = project_with(
        "[[hooks]]\nevent = \"pre_tool_use\"\nif = \"Bash(echo caf\u{e9}:*)\"\n\
         command = \"echo hit >> seen\"\n",
    );
    for (command, hit) in [
        ("echo caf\u{e9}", true),
        ("echo caf\u{e9} cr\u{e8}me", true),
        ("echo caf\u{e9}\tx", true),
        ("echo cafe", false),
        ("echo caf\u{e9}\u{a0}x", false),
    ] {
        let _ = std::fs::remove_file(p.root.join("seen"));
        p.tool_call(Event::PreToolUse, "bash", json!({ "command": command }));
        assert_eq!(p.exists("seen"), hit, "{command:?}");
    }
}
