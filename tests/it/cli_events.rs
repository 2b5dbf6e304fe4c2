//! `ka-hooks events` documents every event, and shell completions offer event and hook names.

use crate::support;

use std::path::Path;

use ka_hooks::Event;
use predicates::prelude::*;
use serde_json::Value;
use support::{hook, Project};

#[test]
fn events_describe_when_each_fires_its_payload_exit_2_actions_and_aliases() {
    let p = Project::new();
    let out = p.cli().arg("events").assert().success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    for event in Event::ALL {
        assert!(
            text.contains(&format!("\n{}\n  fires:", event.as_str()))
                || text.starts_with(event.as_str()),
            "{event}"
        );
    }
    for needle in [
        "arguments",
        "actions:  ",
        "decision",
        "updated_input",
        "turn_end",
        "example:  {\"event\":\"pre_tool_use\"",
    ] {
        assert!(text.contains(needle), "`{needle}` not in:\n{text}");
    }
    p.cli()
        .args(["events", "turn_end"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with("stop\n"));
    p.cli()
        .args(["events", "stopp"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("did you mean `stop`?"));
}

#[test]
fn events_json_holds_every_event_with_an_example_payload() {
    let p = Project::new();
    let out = p.cli().args(["events", "--json"]).assert().success();
    let value: Value = serde_json::from_slice(&out.get_output().stdout).expect("JSON");
    let events = value.as_array().expect("array");
    assert_eq!(events.len(), Event::ALL.len());
    let post = events
        .iter()
        .find(|e| e["event"] == "post_tool_use")
        .expect("post_tool_use");
    assert_eq!(post["example"]["event"], "post_tool_use");
    assert!(post["example"]["arguments"].is_object());
    assert!(post["payload"]
        .as_array()
        .expect("fields")
        .iter()
        .any(|f| f["name"] == "is_error"));
    assert_eq!(post["aliases"][1], "PostToolUse");
}

/// Complete `words` (the last one being completed) with the bash script `ka-hooks completions
/// bash` prints, with the binary under test first on `PATH`.
fn bash_complete(p: &Project, words: &[&str]) -> Vec<String> {
    let bin = Path::new(env!("CARGO_BIN_EXE_ka-hooks"));
    let dir = bin.parent().expect("bin dir");
    let script = p
        .cli()
        .args(["completions", "bash"])
        .output()
        .expect("completions");
    let file = p.base.join("ka-hooks.bash");
    std::fs::write(&file, &script.stdout).expect("write script");
    let words: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let program = format!(
        "source '{}'; COMP_WORDS=({}); COMP_CWORD={}; COMP_LINE=\"${{COMP_WORDS[*]}}\"; \
         COMP_POINT=${{#COMP_LINE}}; _ka_hooks_with_hook_names ka-hooks \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        file.display(),
        words.join(" "),
        words.len() - 1
    );
    let path = format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = std::process::Command::new("bash")
        .args(["-c", &program])
        .current_dir(&p.root)
        .env("PATH", path)
        .env("KA_CONFIG_DIR", &p.config_dir)
        .env("KA_DATA_DIR", &p.data_dir)
        .output()
        .expect("bash");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn bash_completion_offers_event_names_and_hook_names() {
    let p = Project::with_user_toml(&format!(
        "{}{}",
        hook("guard-writes", "pre_tool_use", "true", &[]),
        hook("notify", "stop", "true 2", &[])
    ));
    let events = bash_complete(&p, &["ka-hooks", "run", "pre_"]);
    assert_eq!(events, ["pre_tool_use", "pre_compact"], "{events:?}");
    let hooks = bash_complete(&p, &["ka-hooks", "run", "stop", "--hook", ""]);
    assert_eq!(hooks, ["guard-writes", "notify"], "{hooks:?}");
}

#[test]
fn list_names_prints_the_hook_names_only() {
    let p = Project::with_user_toml(&format!(
        "{}{}",
        hook("b-hook", "stop", "true", &[]),
        hook("a-hook", "pre_tool_use", "true 2", &[])
    ));
    p.cli()
        .args(["list", "--names"])
        .assert()
        .success()
        .stdout("a-hook\nb-hook\n");
}
