//! A seventh agent, added the way docs/adapters.md ("Adding an agent") says: one module (this
//! one) implementing `AgentAdapter`, and one row of a table (here the test's own, the shipped
//! table plus this entry). The table passes the same check as the shipped one, and every case
//! of the corpus runs through the toy agent (its payload generated from the case's `ka`
//! description) and must reach the case's native verdict: each case's test in
//! [`crate::adapter_corpus`] calls [`run_toy`].

use crate::adapter_corpus::{check_verdict, corpus_dir, corpus_project, seen, text_of, Seen};

use std::fs;
use std::path::Path;
use std::sync::OnceLock;

use ka_hooks::adapter::table::{self, AgentAdapter, Import, Install};
use ka_hooks::adapter::{
    self, reshape, AdapterArgs, Agent, Answer, Call, Context, EventRow, Flavour, Rejected, Verdict,
};
use ka_hooks::event::Event;
use ka_hooks::outcome::HookReport;
use ka_hooks::tools;
use serde_json::{json, Map, Value};

/// The toy agent: its events are ka's own names, its payload `{event, session, dir, call:
/// {name, input}, ...}` with Claude Code's tool names, its answer one JSON object that says
/// every part of the verdict.
#[derive(Debug)]
struct Toy;

static TOY: Toy = Toy;

fn toy_events() -> &'static [EventRow] {
    static ROWS: OnceLock<Vec<EventRow>> = OnceLock::new();
    ROWS.get_or_init(|| {
        Event::ALL
            .iter()
            .filter(|e| **e != Event::Observe)
            .map(|e| EventRow {
                name: e.as_str(),
                event: *e,
                flavour: Flavour::Plain,
            })
            .collect()
    })
}

impl AgentAdapter for Toy {
    fn command(&self) -> &'static str {
        "toy"
    }
    fn display(&self) -> &'static str {
        "Toy Agent"
    }
    fn events(&self) -> &'static [EventRow] {
        toy_events()
    }
    fn observed(&self) -> &'static [(&'static str, &'static str)] {
        &[("model_request", "ka has no model-request events")]
    }
    fn project_dir_vars(&self) -> &'static [&'static str] {
        &[]
    }
    fn also_run_by(&self) -> Option<(&'static [&'static str], Agent)> {
        None
    }
    fn markers(&self) -> &'static [&'static str] {
        &[]
    }
    fn reshape(
        &self,
        payload: &mut Map<String, Value>,
        named: Option<&str>,
    ) -> Result<(), Rejected> {
        for (from, to) in [
            ("event", "hook_event_name"),
            ("session", "session_id"),
            ("dir", "cwd"),
        ] {
            if let Some(value) = payload.get(from).cloned() {
                payload.insert(to.into(), value);
            }
        }
        if let Some(call) = payload.get("call").cloned() {
            payload.insert("tool_name".into(), call["name"].clone());
            payload.insert("tool_input".into(), call["input"].clone());
        }
        reshape::name_event(self, payload, named)
    }
    fn tool_names(&self, _: &Map<String, Value>, _: &str) -> Agent {
        Agent::Claude
    }
    fn own_tool(
        &self,
        _: &str,
        _: &Map<String, Value>,
        _: Option<&Path>,
    ) -> Option<table::OwnTool> {
        None
    }
    fn result(&self, payload: &Map<String, Value>) -> (Value, bool) {
        let result = payload.get("result").cloned().unwrap_or(Value::Null);
        (result, payload.get("is_error") == Some(&Value::Bool(true)))
    }
    fn stdout_is_context(&self, _: Event) -> bool {
        false
    }
    fn user_texts(&self, _: Event, _: &[HookReport]) -> Vec<String> {
        Vec::new()
    }
    fn compaction_blocked(&self, _: Event, _: &[HookReport]) -> Option<String> {
        None
    }
    fn answer(&self, _: &Call, verdict: Verdict) -> Answer {
        let mut object = Map::new();
        let mut put = |key: &str, value: Option<Value>| {
            if let Some(value) = value {
                object.insert(key.into(), value);
            }
        };
        put("block", verdict.block.map(Value::from));
        put("decision", verdict.decision.map(|d| d.as_str().into()));
        put("reason", verdict.reason.map(Value::from));
        put("input", verdict.input.map(Value::Object));
        put("feedback", verdict.feedback.map(Value::from));
        put("error", verdict.mark_error.then_some(Value::Bool(true)));
        put("mode", verdict.mode.map(Value::from));
        put("context", verdict.context.map(Value::from));
        put("keep_going", verdict.keep_going.map(Value::from));
        put("halt", verdict.halt.map(Value::from));
        put("deferred", verdict.deferred.then_some(Value::Bool(true)));
        put(
            "permission_updates",
            (!verdict.permission_updates.is_empty()).then(|| json!(verdict.permission_updates)),
        );
        put(
            "messages",
            (!verdict.messages.is_empty()).then(|| json!(verdict.messages)),
        );
        Answer::json(object)
    }
    fn block(&self, why: &str) -> Answer {
        Answer::json(
            json!({ "block": why })
                .as_object()
                .cloned()
                .unwrap_or_default(),
        )
    }
    fn fail_open(&self, _: Option<Event>, message: &str) -> Answer {
        Answer::json(
            json!({ "messages": [message] })
                .as_object()
                .cloned()
                .unwrap_or_default(),
        )
    }
    fn install(&self) -> Install {
        Install::ByHand {
            file: "~/.toy/hooks.json",
            timeout_unit: 1,
            note: "",
        }
    }
    fn import(&self) -> Import {
        Import::Unsupported("the toy agent has no hooks of its own")
    }
}

/// The shipped table with the toy agent's row.
fn table_with_toy() -> Vec<&'static dyn AgentAdapter> {
    let mut table: Vec<&'static dyn AgentAdapter> = table::ADAPTERS.to_vec();
    table.push(&TOY);
    table
}

#[test]
fn a_seventh_agent_is_one_module_and_one_row() {
    let table = table_with_toy();
    table::check(&table).unwrap_or_else(|e| panic!("{e}"));
    assert!(table.iter().any(|a| a.command() == "toy"));
}

/// A row that repeats another's command fails the table's check.
#[test]
fn a_row_without_its_own_command_fails_the_check() {
    let mut table = table_with_toy();
    table.push(&TOY);
    let err = table::check(&table).expect_err("a repeated command");
    assert!(err.contains("two entries"), "{err}");
}

/// The toy agent's payload for a corpus case, generated from its `ka` description.
fn toy_payload(root: &Path, name: &str, case: &Value) -> Value {
    let ka = &case["ka"];
    let mut payload = ka["payload"].as_object().cloned().unwrap_or_default();
    let mut out = Map::new();
    // An event ka observes is sent under the agent's own name.
    let event = match ka["event"].as_str() {
        Some("observe") => payload.remove("agent_event").unwrap_or(Value::Null),
        _ => ka["event"].clone(),
    };
    out.insert("event".into(), event);
    out.insert("session".into(), json!(format!("toy-{name}")));
    out.insert("dir".into(), json!(root));
    if let Some(Value::String(tool)) = payload.remove("tool") {
        let args = match payload.remove("arguments") {
            Some(Value::Object(args)) => args,
            _ => Map::new(),
        };
        let toy_name = tools::agent_tool_name(Agent::Claude, &tool).unwrap_or(tool.clone());
        let input = tools::args_from_ka(Agent::Claude, &tool, &args);
        out.insert("call".into(), json!({"name": toy_name, "input": input}));
    }
    for (key, value) in payload {
        out.entry(key).or_insert(value);
    }
    let text = Value::Object(out)
        .to_string()
        .replace("$ROOT", &root.to_string_lossy());
    serde_json::from_str(&text).expect("the toy payload")
}

/// What the toy agent's answer says, in the corpus' verdicts (as `native` reads ka's outcome).
fn toy_seen(answer: &Answer) -> Seen {
    assert_eq!(answer.exit, 0, "{answer:?}");
    let a: Value = if answer.stdout.is_empty() {
        json!({})
    } else {
        serde_json::from_str(&answer.stdout).expect("the toy answer")
    };
    let messages = a["messages"].to_string();
    let verdict = if !a["halt"].is_null() {
        ("halted", text_of(a.get("halt")))
    } else if !a["block"].is_null() {
        ("blocked", text_of(a.get("block")))
    } else if a["decision"] == "ask" {
        ("ask", text_of(a.get("reason")))
    } else if a["decision"] == "allow" && a["input"].is_null() {
        ("approved", a["permission_updates"].to_string())
    } else if a["deferred"] == true {
        ("deferred", messages)
    } else if !a["input"].is_null() {
        ("rewritten", a["input"].to_string())
    } else if !a["keep_going"].is_null() {
        ("keep_going", text_of(a.get("keep_going")))
    } else if !a["feedback"].is_null() || a["error"] == true {
        ("feedback", text_of(a.get("feedback")))
    } else if !a["context"].is_null() {
        ("context", text_of(a.get("context")))
    } else if !a["mode"].is_null() {
        ("mode", text_of(a.get("mode")))
    } else if messages.contains("max_continuations") {
        ("capped", messages)
    } else if a["messages"].is_array() {
        ("message", messages)
    } else {
        ("allowed", String::new())
    };
    seen(verdict.0, verdict.1)
}

/// The case `name` through the toy agent, in a project of its own (each case's test in
/// [`crate::adapter_corpus`] runs it).
pub(crate) fn run_toy(name: &str) -> Result<(), String> {
    let path = corpus_dir().join(format!("{name}.json"));
    let case: Value = serde_json::from_str(&fs::read_to_string(&path).map_err(|e| e.to_string())?)
        .map_err(|e| format!("{name}: {e}"))?;
    let p = corpus_project();
    for (rel, content) in case["setup"].as_object().into_iter().flatten() {
        p.write(rel, content.as_str().unwrap_or_default());
    }
    let ctx = Context {
        paths: p.paths(),
        project: Some(p.root.clone()),
        trust_once: true,
        log: None,
    };
    let input = toy_payload(&p.root, name, &case).to_string();
    let expect = case["expect_by_agent"]
        .get("toy")
        .unwrap_or(&case["expect"]);
    let repeat = case["repeat"].as_u64().unwrap_or(1);
    let mut answer = Answer::default();
    for _ in 0..repeat {
        answer = adapter::respond_with(&TOY, &ctx, &AdapterArgs::default(), input.as_bytes());
    }
    std::panic::catch_unwind(|| check_verdict(&format!("{name} (toy)"), &toy_seen(&answer), expect))
        .map_err(|e| {
            e.downcast_ref::<String>()
                .cloned()
                .unwrap_or_else(|| format!("{name}: the check failed"))
        })
}
