//! The JSONL audit log under concurrent dispatches.

use ka_hooks::config::{Config, LoadOptions};
use ka_hooks::dispatch::Request;
use ka_hooks::paths::Paths;
use ka_hooks::Event;
use serde_json::{json, Value};

#[test]
fn concurrent_dispatches_append_whole_parsable_lines() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let config_dir = tmp.path().join("config");
    std::fs::create_dir_all(&config_dir).expect("mkdir");
    let log = tmp.path().join("audit.jsonl");
    // A long stderr makes each outcome line big, so interleaving would show.
    std::fs::write(
        config_dir.join("ka.toml"),
        format!(
            "[hook_settings]\nlog = {:?}\n\
             [[hooks]]\nname = \"ok\"\nevent = \"pre_tool_use\"\ncommand = \"echo '{{\\\"note\\\":\\\"hi\\\"}}'\"\n\
             [[hooks]]\nname = \"no\"\nevent = \"pre_tool_use\"\ncommand = \"head -c 3000 /dev/zero | tr '\\\\0' x >&2; exit 2\"\n",
            log.to_string_lossy()
        ),
    )
    .expect("write");
    let config = Config::load(&LoadOptions {
        paths: Paths::new(&config_dir, tmp.path().join("data")),
        start_dir: tmp.path().to_path_buf(),
        trust_once: false,
    })
    .expect("load");
    std::thread::scope(|s| {
        for i in 0..16 {
            let config = &config;
            s.spawn(move || {
                let args = json!({ "command": format!("echo secret-{i}") });
                let args = args.as_object().cloned().unwrap_or_default();
                let outcome = config
                    .dispatch(Request::tool_call(Event::PreToolUse, "bash", args))
                    .expect("dispatch");
                assert!(outcome.blocked);
                assert!(outcome.diagnostics.iter().all(|d| !d.contains("audit log")));
            });
        }
    });
    let text = std::fs::read_to_string(&log).expect("log");
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("every line is whole JSON"))
        .collect();
    assert_eq!(
        lines.len(),
        16 * 3,
        "two hook lines and one outcome line each"
    );
    let outcomes: Vec<_> = lines.iter().filter(|l| l["kind"] == "outcome").collect();
    assert_eq!(outcomes.len(), 16);
    assert!(outcomes.iter().all(|o| o["verdict"] == "blocked"));
    let hooks: Vec<_> = lines.iter().filter(|l| l["kind"] == "hook").collect();
    assert!(hooks
        .iter()
        .any(|h| h["hook"] == "ok" && h["status"] == "ok"));
    assert!(hooks
        .iter()
        .any(|h| h["hook"] == "no" && h["status"] == "blocked"));
    assert!(!text.contains("secret-"), "tool arguments are not copied");
}

#[test]
fn unwritable_log_is_a_diagnostic_not_a_failure() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let config_dir = tmp.path().join("config");
    std::fs::create_dir_all(&config_dir).expect("mkdir");
    std::fs::write(
        config_dir.join("ka.toml"),
        "[hook_settings]\nlog = \"/nonexistent-dir/for/sure/audit.jsonl\"\n\
         [[hooks]]\nevent = \"stop\"\ncommand = \"true\"\n",
    )
    .expect("write");
    let config = Config::load(&LoadOptions {
        paths: Paths::new(&config_dir, tmp.path().join("data")),
        start_dir: tmp.path().to_path_buf(),
        trust_once: false,
    })
    .expect("load");
    let outcome = config
        .dispatch(Request::new(Event::Stop, serde_json::Map::new()))
        .expect("dispatch");
    assert_eq!(outcome.hooks.len(), 1);
    assert!(
        outcome.diagnostics.iter().any(|d| d.contains("audit log")),
        "{:?}",
        outcome.diagnostics
    );
}
