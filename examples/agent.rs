//! A small agent loop over scripted tool calls (no model), using the public API the way an agent
//! does: the project's layer reviewed and trusted through the library; one [`Session`] for the
//! whole session; session start, prompts, guarded tool calls
//! (block, ask, rewrite, pre-approval), tool results passed to `post_tool_use` and its answer
//! applied, the denial backstop the session counts, an async formatter whose results arrive on their own, the
//! stop loop, cancelling a hook (the user pressed Esc), a configuration edit picked up mid-session,
//! and shutdown.
//!
//! Run it with `cargo run --example agent`. It works in a scratch directory (its own project, user
//! config and data dir; `Paths::isolated`, so the machine's `/etc/ka` is not read), prints a
//! transcript, and removes the scratch directory. A real host uses `LoadOptions::from_env()`.

use std::error::Error;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use ka_hooks::config::{Config, LoadOptions};
use ka_hooks::next::{Next, Other, Permission, Prompt, Stop, ToolResult};
use ka_hooks::paths::Paths;
use ka_hooks::review;
use ka_hooks::session::Session;
use ka_hooks::{CancelToken, Event, Request};
use serde_json::{json, Map, Value};

/// The project's hooks (`.ka/ka.toml`, which travels with the repository): they run only once a
/// person reviewed and trusted them.
const PROJECT_HOOKS: &str = r#"
[[hooks]]
name = "welcome"
event = "session_start"
command = '''echo '{"context":"this project builds with cargo"}' '''
"#;

/// The user's hooks for this demo (a real user keeps them in `~/.config/ka/ka.toml`).
const HOOKS: &str = r#"
[hook_settings]
max_continuations = 2

[[hooks]]
name = "ci-status"
event = "user_prompt_submit"
command = '''echo '{"context":"CI is red on main"}' '''

[[hooks]]
name = "no-passwords"
event = "user_prompt_submit"
command = '''grep -q password && { echo 'never paste passwords into a prompt' >&2; exit 2; }; exit 0'''

[[hooks]]
name = "shell-guard"
event = "pre_tool_use"
tool = "bash"
command = '''
input=$(cat)
case $input in
  *'rm -rf'*) echo 'refusing rm -rf' >&2; exit 2 ;;
  *'git push'*) echo '{"decision":"ask","reason":"pushing needs a person"}' ;;
  *'cargo test"'*) echo '{"updated_input":{"command":"cargo test --quiet"},"decision":"allow"}' ;;
esac
exit 0
'''

[[hooks]]
name = "deploy-check"
event = "pre_tool_use"
tool = "deploy"
command = "sleep 30"

[[hooks]]
name = "fmt"
event = "post_tool_use"
tool = "write"
async = true
command = '''echo '{"context":"formatted the file"}' '''

[[hooks]]
name = "no-main-in-lib"
event = "post_tool_use"
tool = "write"
command = '''grep -q 'fn main' && { echo 'src/lib.rs must not define main' >&2; exit 2; }; exit 0'''

[[hooks]]
name = "tests-again"
event = "stop"
command = "echo 'run the tests once more' >&2; exit 2"
"#;

/// What every answer carries besides the verdict: the permission mode to switch to, and what
/// the user should see (weakened or skipped guards, notes, messages, failed hooks).
fn show(next: &Next) {
    let always = next.always();
    if let Some(mode) = &always.mode {
        println!("  mode -> {mode}");
    }
    for line in always.for_user.lines() {
        println!("  ! {line}");
    }
}

/// Context a hook gave for the model: a real agent adds it to what the model reads next.
fn to_model(context: Option<String>) {
    if let Some(context) = context {
        println!("  model context: {context}");
    }
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

struct Agent {
    session: Arc<Session>,
}

impl Agent {
    fn prompt(&self, text: &str) -> Result<bool, Box<dyn Error>> {
        let request = Request::new(Event::UserPromptSubmit, object(json!({ "prompt": text })));
        let next = self.session.dispatch(request).next();
        show(&next);
        match next {
            Next::Prompt(Prompt::Block { reason } | Prompt::Halt { reason }, _) => {
                println!("prompt {text:?}: blocked: {reason}");
                Ok(false)
            }
            Next::Prompt(Prompt::Submit { context }, _) => {
                println!("prompt {text:?}: sent to the model");
                to_model(context);
                Ok(true)
            }
            other => Err(format!("a prompt answered {other:?}").into()),
        }
    }

    /// One tool call; `user_says_yes` answers a permission prompt; `esc_after` presses Esc.
    fn tool(
        &self,
        tool: &str,
        args: Value,
        user_says_yes: bool,
        esc_after: Option<Duration>,
    ) -> Result<(), Box<dyn Error>> {
        let args = object(args);
        let esc = CancelToken::new();
        let request =
            Request::tool_call(Event::PreToolUse, tool, args.clone()).with_cancel(esc.clone());
        let outcome = match esc_after {
            Some(after) => std::thread::scope(|s| {
                let dispatch = s.spawn(|| self.session.dispatch(request));
                std::thread::sleep(after);
                esc.cancel(); // from the UI thread
                dispatch.join().unwrap_or_else(|_| std::process::abort())
            }),
            None => self.session.dispatch(request),
        };
        let next = outcome.next();
        show(&next);
        let Next::ToolCall(permission, _) = next else {
            return Err(format!("a tool call answered {next:?}").into());
        };
        // Every way a tool call can end, matched whole: a new one would not compile here.
        let run = match permission {
            Permission::Block { reason, context } => {
                println!("tool {tool}: blocked: {reason}");
                to_model(context);
                None
            }
            Permission::Halt { reason } => {
                println!("tool {tool}: not run, the turn ends: {reason}");
                None
            }
            Permission::Ask {
                reason,
                arguments,
                context,
            } if user_says_yes => {
                println!("tool {tool}: asked the user ({reason}): yes");
                to_model(context);
                Some(arguments)
            }
            Permission::Ask { reason, .. } => {
                println!("tool {tool}: asked the user ({reason}): no");
                None
            }
            Permission::Run {
                arguments: args,
                pre_approved: approved,
                context,
                deferred: _,
                permission_updates: _,
            } => {
                to_model(context);
                let how = if approved {
                    "pre-approved"
                } else {
                    "after the permission prompt"
                };
                println!(
                    "tool {tool}: runs {how} with {}",
                    Value::Object(args.clone())
                );
                Some(args)
            }
        };
        if let Some(args) = run {
            self.result(tool, args, "ok")?;
        }
        Ok(())
    }

    /// The tool ran: its result goes to `post_tool_use`, and what the model reads is its answer.
    fn result(
        &self,
        tool: &str,
        args: Map<String, Value>,
        result: &str,
    ) -> Result<(), Box<dyn Error>> {
        let mut post = Request::tool_call(Event::PostToolUse, tool, args);
        post.payload.insert("result".into(), json!(result));
        let next = self.session.dispatch(post).next();
        show(&next);
        match next {
            Next::ToolResult(ToolResult::Feedback { feedback, context }, _) => {
                let feedback = feedback.map(|f| format!(" + {f}")).unwrap_or_default();
                println!("result of {tool}: {result}{feedback}");
                to_model(context);
            }
            Next::ToolResult(ToolResult::Block { feedback, context }, _) => {
                let feedback = feedback.unwrap_or_default();
                println!("result of {tool}: marked as an error: {feedback}");
                to_model(context);
            }
            Next::ToolResult(ToolResult::Halt { reason }, _) => {
                println!("result of {tool}: the turn ends: {reason}");
            }
            other => return Err(format!("a tool result answered {other:?}").into()),
        }
        Ok(())
    }

    /// The end of a turn: stop hooks may keep the agent going, up to `max_continuations`.
    fn stop_loop(&self) -> Result<(), Box<dyn Error>> {
        loop {
            let next = self
                .session
                .dispatch(Request::new(Event::Stop, Map::new()))
                .next();
            show(&next);
            match next {
                Next::Stop(Stop::KeepGoing { reason, context }, _) => {
                    println!("stop: keep going: {reason}");
                    to_model(context);
                }
                Next::Stop(Stop::Halt { reason }, _) => {
                    println!("stop: halted: {reason}");
                    return Ok(());
                }
                Next::Stop(Stop::End { context }, _) => {
                    println!("stop: the turn ends");
                    to_model(context);
                    return Ok(());
                }
                other => return Err(format!("a stop answered {other:?}").into()),
            }
        }
    }

    /// Async results arrive on their own: an idle agent waits for them.
    fn receive(&self) {
        for d in self.session.wait_delivered(Duration::from_secs(10)) {
            let text = d.context.as_deref().or(d.feedback.as_deref()).unwrap_or("");
            println!("async {} ({:?}): {text}", d.hook, d.status);
        }
    }
}

fn main() -> Result<(), Box<dyn Error>> {
    let scratch = tempfile::tempdir()?;
    let base = scratch.path();
    let (project, config_dir, data_dir) =
        (base.join("project"), base.join("config"), base.join("data"));
    for dir in [&project.join(".ka"), &config_dir, &data_dir] {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(config_dir.join("ka.toml"), HOOKS)?;
    std::fs::write(project.join(".ka/ka.toml"), PROJECT_HOOKS)?;

    // The project's layer runs once a person trusted it: a host shows the review's text and
    // records exactly what was shown when the user agrees (this demo agrees for them).
    let options = LoadOptions::new(Paths::isolated(&config_dir, &data_dir), &project);
    let review = review::review(&options)?;
    if review.needs_trust() {
        review::record(&options, &review)?;
        println!(
            "project hooks: {} file(s) reviewed ({} lines shown) and trusted",
            review.files().count(),
            review.text().lines().count()
        );
    }

    // Once per session. `Config` is cheap to share: one `Arc` for every session of the process.
    let config = Arc::new(Config::load(&options)?);
    let agent = Agent {
        session: Arc::new(Session::new(config, "demo-session", &project)),
    };
    let start = agent.session.dispatch(Request::new(
        Event::SessionStart,
        object(json!({ "source": "startup" })),
    ));
    let next = start.next();
    show(&next);
    match next {
        Next::Other(Other::Continue { context }, _) => {
            println!("session start: context {:?}", context.unwrap_or_default());
        }
        Next::Other(Other::Halt { reason }, _) => return Err(reason.into()),
        other => return Err(format!("session start answered {other:?}").into()),
    }

    if agent.prompt("fix the failing test")? {
        agent.tool("bash", json!({ "command": "cargo test" }), false, None)?;
        agent.tool(
            "write",
            json!({ "path": "src/lib.rs", "content": "fn main() {}" }),
            false,
            None,
        )?;
        // Three denials by one guard in a turn: the session counts them, and the guard's next
        // match, which it would let through, goes to a person (the denial backstop).
        for _ in 0..3 {
            agent.tool("bash", json!({ "command": "rm -rf target" }), true, None)?;
        }
        agent.tool("bash", json!({ "command": "cargo clean" }), false, None)?;
        agent.tool("bash", json!({ "command": "git push" }), false, None)?;
        agent.tool(
            "deploy",
            json!({ "to": "staging" }),
            false,
            Some(Duration::from_millis(300)),
        )?;
        agent.receive();
        agent.stop_loop()?;
    }
    agent.prompt("my password is hunter2")?;

    // The user tightens their hooks mid-session: the session sees the edit at the next dispatch.
    edit(&config_dir.join("ka.toml"))?;
    if agent.prompt("write the changelog")? {
        agent.tool(
            "write",
            json!({ "path": "CHANGELOG.md", "content": "..." }),
            false,
            None,
        )?;
    }
    agent.session.shutdown();
    println!("session end");
    Ok(())
}

/// Add a guard that blocks writes to `CHANGELOG.md`.
fn edit(file: &Path) -> std::io::Result<()> {
    let mut text = std::fs::read_to_string(file)?;
    text.push_str(
        "\n[[hooks]]\nname = \"changelog-guard\"\nevent = \"pre_tool_use\"\ntool = \"write\"\n\
         command = \"grep -q CHANGELOG && { echo 'the changelog is generated' >&2; exit 2; }; exit 0\"\n",
    );
    std::fs::write(file, text)
}
