//! `examples/agent.rs`: a real host loop over the public API; its transcript shows
//! every step an agent takes, and this test checks it.

use std::path::PathBuf;
use std::process::Command;

/// The example's binary, built beside this test binary (`cargo test` builds the examples).
fn agent_example() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let target = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target/<profile>/deps");
    target.join("examples").join("agent")
}

#[test]
fn the_agent_example_runs_a_whole_session() {
    let example = agent_example();
    assert!(
        example.is_file(),
        "{} is missing: build it with `cargo build --examples`",
        example.display()
    );
    let out = Command::new(&example)
        .env_remove("KA_MANAGED_DIR")
        .output()
        .expect("run the agent example");
    let transcript = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{transcript}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let expected = [
        // The project's layer was reviewed and trusted through the library; its hook runs.
        "project hooks: 1 file(s) reviewed (",
        r#"session start: context "this project builds with cargo""#,
        // The prompt's context is delivered to the model.
        "prompt \"fix the failing test\": sent to the model\n  model context: CI is red on main",
        r#"tool bash: runs pre-approved with {"command":"cargo test --quiet"}"#,
        // The result goes to post_tool_use, and its answer is applied.
        "result of bash: ok",
        r#"tool write: runs after the permission prompt with {"path":"src/lib.rs","content":"fn main() {}"}"#,
        "result of write: marked as an error: src/lib.rs must not define main",
        "tool bash: blocked: refusing rm -rf\ntool bash: blocked: refusing rm -rf\ntool bash: blocked: refusing rm -rf\n",
        // The session counted the denials: the guard's next match goes to a person.
        "tool bash: asked the user (the model was denied 3 times this turn by guard `shell-guard`",
        "tool bash: asked the user (pushing needs a person",
        "tool deploy: blocked: hooks cancelled (cancelled by the caller)",
        "async fmt (Ok): formatted the file",
        "stop: keep going: run the tests once more\nstop: keep going: run the tests once more\n",
        // The cap, said to the user (`for_user`), then the turn ends: exactly two continuations.
        "already continued 2 time(s) (max_continuations = 2); the agent stops\nstop: the turn ends",
        r#"prompt "my password is hunter2": blocked: never paste passwords into a prompt"#,
        "tool write: blocked: the changelog is generated",
        "session end",
    ];
    let mut from = 0;
    for line in expected {
        match transcript[from..].find(line) {
            Some(at) => from += at + line.len(),
            None => panic!("missing (in order) {line:?} in:\n{transcript}"),
        }
    }
}
