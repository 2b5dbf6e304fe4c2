//! The shared corpus through the hook-file adapters: each case of `tests/corpus/*.json` has,
//! in `tests/corpus/agents/<case>.json`, the payload GitHub Copilot (with its `--event`), Cursor
//! and Antigravity (with its `--event`) send for it, or `{"unsupported": "why"}`. Run through
//! `ka-hooks copilot|cursor|antigravity` against the same project as the native run, each must
//! reach the case's verdict, or the one its `expect_by_agent` names where the agent's contract
//! cannot express the case (the matrix of docs/agents.md). Each case's test in
//! [`crate::adapter_corpus`] runs it here too. The files are generated from the case's Claude
//! Code payload and one description of each agent's contract, `tests/corpus/agents.py` (a new
//! case needs only a run of it); a test checks they are what it makes.

use crate::adapter_corpus::{check_verdict, corpus_dir, corpus_project, seen, text_of, Seen};
use crate::support::Project;

use std::fs;

use serde_json::Value;

const AGENTS: [&str; 3] = ["copilot", "cursor", "antigravity"];

/// The header of ka's messages in a Copilot answer's text.
const COPILOT_MESSAGES: &str = "[ka-hooks, for the user]";

/// What a run of `agent` decided, read from its contract.
fn through_hook_file_adapter(p: &Project, agent: &str, entry: &Value) -> Seen {
    let (event, payload) = match agent {
        "cursor" => (None, entry),
        _ => (entry["event"].as_str(), &entry["payload"]),
    };
    let stdin = payload
        .to_string()
        .replace("$ROOT", &p.root.to_string_lossy());
    let mut cmd = p.cli();
    cmd.args(["--trust", agent]);
    if let Some(event) = event {
        cmd.args(["--event", event]);
    }
    let output = cmd.write_stdin(stdin).output().expect("ka-hooks adapter");
    let stderr = String::from_utf8_lossy(&output.stderr).trim().to_owned();
    let name = event
        .or_else(|| payload["hook_event_name"].as_str())
        .unwrap_or("");
    let vetoable = matches!(
        name,
        "preToolUse" | "PreToolUse" | "permissionRequest" | "PermissionRequest"
    );
    match output.status.code() {
        // Copilot shows exit 2 as a warning to the user on the events it cannot veto.
        Some(2) if agent == "copilot" && !vetoable && name != "userPromptSubmitted" => {
            let verdict = if stderr.contains("max_continuations") {
                "capped"
            } else {
                "message"
            };
            return seen(verdict, stderr);
        }
        Some(2) => return seen("blocked", stderr),
        Some(0) => {}
        other => panic!("ka-hooks {agent} exited {other:?}: {stderr}"),
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let mut answer: Value = if stdout.trim().is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&stdout)
            .unwrap_or_else(|e| panic!("ka-hooks {agent} printed no JSON object ({e}): {stdout}"))
    };
    // Copilot's answers carry ka's messages in a text the model reads, after a header.
    let mut said = String::new();
    for key in [
        "permissionDecisionReason",
        "message",
        "reason",
        "additionalContext",
    ] {
        let Some(full) = answer.get(key).and_then(Value::as_str).map(str::to_owned) else {
            continue;
        };
        if let Some((own, messages)) = full.split_once(COPILOT_MESSAGES) {
            said = messages.trim().to_owned();
            match own.trim() {
                "" => answer.as_object_mut().map(|a| a.remove(key)),
                own => answer
                    .as_object_mut()
                    .map(|a| a.insert(key.into(), own.into())),
            };
        }
    }
    let user = match answer.get("user_message") {
        Some(m) => text_of(Some(m)),
        None if !said.is_empty() => said,
        None => stderr,
    };
    let post = matches!(name, "postToolUse" | "postToolUseFailure" | "PostToolUse");
    let decided = match agent {
        "copilot" => copilot_verdict(&answer, post, name),
        "cursor" => cursor_verdict(&answer, post),
        _ => antigravity_verdict(&answer),
    };
    if let Some(decided) = decided {
        return decided;
    }
    if user.contains("asked to switch to `") {
        return seen("mode", user);
    }
    if user.contains("max_continuations") {
        return seen("capped", user);
    }
    if !user.is_empty() {
        return seen("message", user);
    }
    seen("allowed", "")
}

fn copilot_verdict(answer: &Value, post: bool, event: &str) -> Option<Seen> {
    let reason = || text_of(answer.get("permissionDecisionReason"));
    match answer["permissionDecision"].as_str() {
        Some("deny") => return Some(seen("blocked", reason())),
        Some("ask") if answer["modifiedArgs"].is_null() => return Some(seen("ask", reason())),
        _ => {}
    }
    match answer["behavior"].as_str() {
        Some("deny") => return Some(seen("blocked", text_of(answer.get("message")))),
        // permissionRequest's `allow` answers the dialog: the call is approved.
        Some("allow") => return Some(seen("approved", text_of(answer.get("message")))),
        _ => {}
    }
    if !answer["modifiedArgs"].is_null() {
        return Some(seen("rewritten", answer["modifiedArgs"].to_string()));
    }
    if answer["permissionDecision"] == "allow" {
        return Some(seen("approved", reason()));
    }
    if answer["decision"] == "block" {
        // userPromptSubmitted: the prompt is blocked; agentStop: the agent goes on.
        let verdict = if event.starts_with("userPrompt") {
            "blocked"
        } else {
            "keep_going"
        };
        return Some(seen(verdict, text_of(answer.get("reason"))));
    }
    if !answer["additionalContext"].is_null() {
        let verdict = if post { "feedback" } else { "context" };
        return Some(seen(verdict, text_of(answer.get("additionalContext"))));
    }
    None
}

fn cursor_verdict(answer: &Value, post: bool) -> Option<Seen> {
    let agent_message = || text_of(answer.get("agent_message"));
    match answer["permission"].as_str() {
        Some("deny") => return Some(seen("blocked", agent_message())),
        Some("ask") => return Some(seen("ask", agent_message())),
        _ => {}
    }
    if !answer["updated_input"].is_null() {
        return Some(seen("rewritten", answer["updated_input"].to_string()));
    }
    if answer["permission"] == "allow" {
        return Some(seen("approved", agent_message()));
    }
    if answer["continue"] == false {
        return Some(seen("blocked", text_of(answer.get("user_message"))));
    }
    if !answer["followup_message"].is_null() {
        return Some(seen("keep_going", text_of(answer.get("followup_message"))));
    }
    if !answer["additional_context"].is_null() {
        let verdict = if post { "feedback" } else { "context" };
        return Some(seen(verdict, text_of(answer.get("additional_context"))));
    }
    None
}

fn antigravity_verdict(answer: &Value) -> Option<Seen> {
    let reason = || text_of(answer.get("reason"));
    match answer["decision"].as_str() {
        Some("deny") => return Some(seen("blocked", reason())),
        Some("ask") => return Some(seen("ask", reason())),
        _ => {}
    }
    if !answer["overwrite"].is_null() {
        return Some(seen("rewritten", answer["overwrite"].to_string()));
    }
    let steps = || text_of(answer["injectSteps"][0].get("ephemeralMessage"));
    if answer["terminationBehavior"] == "force_continue" {
        return Some(seen("keep_going", steps()));
    }
    if !answer["injectSteps"].is_null() {
        return Some(seen("context", steps()));
    }
    None
}

/// The case `name` (its file read as `case`) through the three hook-file adapters, in a
/// project of their own (each run keeps its continuation and denial counts there).
pub(crate) fn run_agents_case(name: &str, case: &Value) {
    let path = corpus_dir().join("agents").join(format!("{name}.json"));
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let agents: Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let p = corpus_project();
    for (rel, content) in case["setup"].as_object().into_iter().flatten() {
        p.write(rel, content.as_str().expect("setup content is a string"));
    }
    let expect = &case["expect"];
    for agent in AGENTS {
        let entry = &agents[agent];
        assert!(entry.is_object(), "{name}: no {agent} payload");
        if let Some(why) = entry["unsupported"].as_str() {
            assert!(
                !why.is_empty(),
                "{name}: {agent} unsupported without a reason"
            );
            continue;
        }
        let (named, payload) = match agent {
            "cursor" => (None, entry),
            _ => (entry["event"].as_str(), &entry["payload"]),
        };
        let mut described = case.clone();
        described["tool_by_agent"] = agents["tool_by_agent"].clone();
        crate::adapter_corpus::reads_as_described(name, agent, payload, named, &described);
        let expect = agents["expect_by_agent"].get(agent).unwrap_or(expect);
        let repeat = case["repeat"].as_u64().unwrap_or(1);
        let mut got = through_hook_file_adapter(&p, agent, entry);
        for _ in 1..repeat {
            got = through_hook_file_adapter(&p, agent, entry);
        }
        check_verdict(&format!("{name} ({agent})"), &got, expect);
    }
}

/// `tests/corpus/agents/` is exactly what `tests/corpus/agents.py` makes from the cases and its
/// description of each agent: no payload is edited by hand, and none is missing.
#[test]
fn the_agent_payloads_are_generated_from_one_description() {
    let out = std::process::Command::new("python3")
        .arg(corpus_dir().join("agents.py"))
        .arg("--check")
        .output()
        .expect("python3 runs tests/corpus/agents.py");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
