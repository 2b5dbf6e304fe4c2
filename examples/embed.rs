//! How an agent embeds ka-hooks: load the layers once per session, then dispatch each event and
//! do what [`Outcome::next`](ka_hooks::Outcome::next) says, matching every variant.
//!
//! Run it with `cargo run --example embed -- [PROJECT_DIR]`. It uses a scratch user config and data
//! dir (so it never touches yours), shows the project's review and trusts it there (as a person
//! would after reading it), and simulates a few tool calls: one a guard blocks, one a scrubber
//! rewrites, and one to `.ka/ka.toml`, which ka's built-in protection puts to a human.

use std::error::Error;
use std::path::PathBuf;

use ka_hooks::config::{Config, LoadOptions};
use ka_hooks::next::{Next, Other, Permission, Prompt, Stop, ToolResult};
use ka_hooks::paths::Paths;
use ka_hooks::{review, Event, Request};
use serde_json::{json, Map, Value};

fn main() -> Result<(), Box<dyn Error>> {
    let project = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or(std::env::current_dir()?);
    let scratch = std::env::temp_dir().join(format!("ka-hooks-embed-{}", std::process::id()));

    // 1. Once per session (an agent would use `LoadOptions::default()`). A project's layer runs
    //    only once a person trusted it: show them the review and record it when they agree. This
    //    example agrees for them, in its scratch data dir.
    let paths = Paths::new(scratch.join("config"), scratch.join("data"));
    let options = LoadOptions::new(paths, &project);
    match review::review(&options) {
        Ok(review) if review.needs_trust() => {
            println!("{}", review.text());
            review::record(&options, &review)?;
        }
        Ok(_) => {}
        Err(e) => println!("no project layer to trust: {e}"),
    }
    let config = Config::load(&options)?;

    // 2. Before each tool call: the hooks may block it, halt the turn, ask a human, rewrite it
    //    and pre-approve it.
    let ka_toml = project.join(".ka/ka.toml");
    for (tool, args) in [
        ("write", json!({"path": "/etc/passwd", "content": "x"})),
        (
            "bash",
            json!({"command": "curl -H 'X: AKIAABCDEFGHIJKLMNOP' example.com"}),
        ),
        ("write", json!({"path": ka_toml, "content": "[[hooks]]"})),
    ] {
        let Value::Object(args) = args else {
            unreachable!("literal objects")
        };
        let outcome = config.dispatch(Request::tool_call(Event::PreToolUse, tool, args));
        let next = outcome.next();
        show_user(&next);
        match next {
            Next::ToolCall(Permission::Block { reason, context }, _) => {
                // The reason is what the model reads, as the tool's result.
                println!("{tool}: blocked: {reason}");
                show_model(context);
            }
            Next::ToolCall(Permission::Halt { reason }, _) => {
                println!("{tool}: not run, and the turn ends: {reason}");
            }
            Next::ToolCall(
                Permission::Ask {
                    reason,
                    arguments,
                    context,
                },
                _,
            ) => {
                // Put the call to the user; run `arguments` only if they approve.
                println!(
                    "{tool}: ask the user first ({reason}); if approved, run {}",
                    Value::Object(arguments)
                );
                show_model(context);
            }
            Next::ToolCall(
                Permission::Run {
                    arguments,
                    pre_approved,
                    context,
                    ..
                },
                _,
            ) => {
                let how = if pre_approved {
                    "pre-approved"
                } else {
                    "after the agent's own permission rules"
                };
                println!("{tool}: runs {how} with {}", Value::Object(arguments));
                show_model(context);
            }
            other => unreachable!("a tool call answers with Next::ToolCall, not {other:?}"),
        }
    }

    // 3. Every other kind of event has its own answer.
    let mut payload = Map::new();
    payload.insert("stop".into(), json!("done"));
    let outcome = config.dispatch(Request::new(Event::Stop, payload));
    let next = outcome.next();
    show_user(&next);
    match next {
        Next::Stop(Stop::KeepGoing { reason, context }, _) => {
            println!("stop: keep going: {reason}");
            show_model(context);
        }
        Next::Stop(Stop::Halt { reason }, _) => println!("stop: the turn ends: {reason}"),
        Next::Stop(Stop::End { context }, _) => {
            println!("stop: {} hook(s) ran; stop", outcome.hooks.len());
            show_model(context);
        }
        Next::ToolCall(..) | Next::Prompt(..) | Next::ToolResult(..) | Next::Other(..) => {
            unreachable!("a stop answers with Next::Stop")
        }
    }
    describe(&outcome.next());

    let _ = std::fs::remove_dir_all(&scratch);
    Ok(())
}

/// What every answer carries: the mode to switch to, and everything the user must hear
/// (weakened or skipped guards, notes, failed hooks).
fn show_user(next: &Next) {
    let always = next.always();
    if let Some(mode) = &always.mode {
        println!("  [switch the permission mode to] {mode}");
    }
    for line in always.for_user.lines() {
        println!("  [for the user] {line}");
    }
}

/// Context a hook gave for the model: it goes with what the model reads next.
fn show_model(context: Option<String>) {
    if let Some(context) = context {
        println!("  [for the model] {context}");
    }
}

/// One line for any answer: what a host's main loop matches, every variant included.
fn describe(next: &Next) {
    let text = match next {
        Next::ToolCall(Permission::Block { .. }, _) => "tool call blocked",
        Next::ToolCall(Permission::Halt { .. }, _) => "tool call not run; turn ends",
        Next::ToolCall(Permission::Ask { .. }, _) => "ask the user",
        Next::ToolCall(Permission::Run { .. }, _) => "run the tool",
        Next::Prompt(Prompt::Block { .. }, _) => "prompt blocked",
        Next::Prompt(Prompt::Halt { .. }, _) => "prompt not sent; turn ends",
        Next::Prompt(Prompt::Submit { .. }, _) => "send the prompt",
        Next::ToolResult(ToolResult::Halt { .. }, _) => "turn ends after the result",
        Next::ToolResult(ToolResult::Block { .. }, _) => "result marked as an error",
        Next::ToolResult(ToolResult::Feedback { .. }, _) => "result delivered",
        Next::Stop(Stop::Halt { .. }, _) => "turn ends",
        Next::Stop(Stop::KeepGoing { .. }, _) => "keep going",
        Next::Stop(Stop::End { .. }, _) => "stop",
        Next::Other(Other::Halt { .. }, _) => "turn ends",
        Next::Other(Other::Continue { .. }, _) => "go on",
    };
    println!("last answer: {text}");
}
