//! Adapters: run the same `ka.toml` hooks inside other agents (Claude Code, Codex CLI, Gemini
//! CLI, GitHub Copilot, Cursor, Antigravity). Each agent is one module implementing
//! [`AgentAdapter`], registered in [`table`]; the pipeline here is shared: read the agent's
//! payload, turn it into a ka event and payload, dispatch, and answer in the agent's contract.
//! An unreadable payload fails closed on events that can be vetoed, since the model shapes it.

pub mod antigravity;
pub mod claude;
pub mod codex;
pub use crate::continuations;
pub mod copilot;
pub mod created;
pub mod cursor;
pub mod gemini;
#[cfg(feature = "cli")]
pub mod hookfile;
#[cfg(feature = "cli")]
pub mod import;
#[cfg(feature = "cli")]
pub mod install;
pub mod jsonedit;
#[cfg(feature = "cli")]
pub(crate) mod own_binary;
pub mod plain;
pub mod reshape;
#[cfg(feature = "cli")]
pub mod shell_sandbox;
pub mod table;
pub use crate::tools;
pub use crate::tools::agents as tools_agents;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::action::Decision;
use crate::config::{Config, LayerState, LoadError, LoadOptions};
use crate::dispatch::{PayloadMirror, Request};
use crate::event::Event;
use crate::outcome::Outcome;
use crate::paths::{self, Paths};
use crate::payload;

pub use crate::agent::Agent;
pub use table::{AgentAdapter, ADAPTERS};

/// One of an agent's hook events, and the ka event it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventRow {
    /// The agent's name of the event (`PreToolUse`, `BeforeTool`, ...).
    pub name: &'static str,
    pub event: Event,
    pub flavour: Flavour,
}

/// What an agent event adds to the plain ka event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavour {
    Plain,
    /// The turn ended on an error (`StopFailure`): `stop` is `error`.
    StopError,
}

/// Options of `ka-hooks claude|codex|gemini`.
#[derive(Debug, Clone, Default)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct AdapterArgs {
    /// When ka-hooks itself cannot run the hooks (configuration error, interrupted), block the
    /// tool call or prompt (exit 2) instead of failing open. (A payload that cannot be read
    /// blocks them anyway.)
    #[cfg_attr(feature = "cli", arg(long))]
    pub fail_closed: bool,
    /// The agent's event name, for agents whose payload does not carry one (set by
    /// `hookfile::HookArgs`, the command line of the hook-file agents).
    #[cfg_attr(feature = "cli", arg(skip))]
    pub event: Option<String>,
}

/// Where an adapter run loads its configuration from.
#[derive(Debug, Clone)]
pub struct Context {
    pub paths: Paths,
    /// `--project DIR`; without it, the session's project directory as the agent names it, then
    /// the payload's `cwd`, then the working directory (see [`start_dir`]).
    pub project: Option<PathBuf>,
    /// `--trust`: load untrusted project layers for this run.
    pub trust_once: bool,
    /// `--log FILE`.
    pub log: Option<PathBuf>,
}

/// An adapter's reply: exit code, stdout, stderr.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Answer {
    pub exit: u8,
    pub stdout: String,
    pub stderr: String,
}

impl Answer {
    /// Exit 0 with this JSON object on stdout (nothing when it is empty).
    pub fn json(object: Map<String, Value>) -> Answer {
        Answer {
            exit: 0,
            stdout: if object.is_empty() {
                String::new()
            } else {
                Value::Object(object).to_string()
            },
            stderr: String::new(),
        }
    }

    /// Exit 2 with `reason` on stderr: the agent blocks and shows it.
    pub fn exit_two(reason: &str) -> Answer {
        Answer {
            exit: 2,
            stdout: String::new(),
            stderr: format!("{reason}\n"),
        }
    }
}

/// How much a payload read from stdin starts with: a typical payload in one `read` (an empty
/// `String` starts with 32-byte reads and doubles), growing as needed for a whole file's content.
pub(crate) const PAYLOAD_READ_CAPACITY: usize = 16 * 1024;

/// `ka-hooks claude|codex|gemini`: read stdin, answer, print; returns the exit code.
pub fn run_cli(agent: Agent, ctx: &Context, args: &AdapterArgs) -> u8 {
    let mut input = Vec::with_capacity(PAYLOAD_READ_CAPACITY);
    let answer = match std::io::stdin().read_to_end(&mut input) {
        Ok(_) => respond_with(agent.adapter(), ctx, args, &input),
        Err(e) => fail(
            agent.adapter(),
            args,
            None,
            &format!("failed to read the hook payload from stdin: {e}"),
        ),
    };
    let _ = std::io::stdout().write_all(answer.stdout.as_bytes());
    if !answer.stdout.is_empty() {
        let _ = std::io::stdout().write_all(b"\n");
    }
    let _ = std::io::stderr().write_all(answer.stderr.as_bytes());
    answer.exit
}

/// The adapter's answer to one hook payload (`input` is the agent's stdin).
pub fn respond(agent: Agent, ctx: &Context, args: &AdapterArgs, input: &str) -> Answer {
    respond_bytes(agent, ctx, args, input.as_bytes())
}

/// [`respond`], to the bytes the agent wrote (read lossily where they are not UTF-8).
pub fn respond_bytes(agent: Agent, ctx: &Context, args: &AdapterArgs, input: &[u8]) -> Answer {
    respond_with(agent.adapter(), ctx, args, input)
}

/// [`respond_bytes`], for the agent of any entry of an adapter table (see [`table`]).
pub fn respond_with(
    agent: &'static dyn AgentAdapter,
    ctx: &Context,
    args: &AdapterArgs,
    input: &[u8],
) -> Answer {
    let mut call = match parse_with(agent, input, args.event.as_deref()) {
        Ok(call) => call,
        Err(Rejected::Broken(message)) => {
            return unreadable(agent, input, args.event.as_deref(), &message)
        }
    };
    if let Some(why) = stands_aside(agent, ctx, &call) {
        return Answer {
            stderr: format!("{why}\n"),
            ..Answer::default()
        };
    }
    let config = match load(ctx, &call) {
        Ok(config) => config,
        Err(message) => return fail(agent, args, Some(call.event), &message),
    };
    if args.fail_closed && call.event.is_pipeline() {
        // `--fail-closed` asked for a block whenever a configuration error keeps hooks from
        // running: a managed or user file that does not load is one, whatever still runs.
        if let Some(why) = ungated_layer_not_loaded(&config) {
            return fail(agent, args, Some(call.event), &why);
        }
    }
    let tracker = ctx
        .paths
        .data_dir
        .as_deref()
        .and_then(|dir| continuations::Tracker::start(dir, call.event, &mut call.payload));
    let denials = ctx
        .paths
        .data_dir
        .as_deref()
        .and_then(|dir| crate::backstop::Tracker::start(dir, call.event, &call.payload));
    let mut request = Request::new(call.event, std::mem::take(&mut call.payload));
    // The answer reads the agent's permission mode (Claude Code's `bypassPermissions`).
    if let Some(mode) = request.payload.get("permission_mode") {
        call.payload.insert("permission_mode".into(), mode.clone());
    }
    request.cancel = crate::interrupt::token();
    request.plain_stdout_is_context = agent.stdout_is_context(call.event);
    request.denials = denials.as_ref().map(|d| d.denials.clone());
    request.continued = tracker.as_ref().map(continuations::Tracker::continued);
    request.on_patch = call.tool.clone().map(mirror_tool_input);
    let outcome = config.dispatch_uncounted(request);
    if let Some(why) = &outcome.cancelled {
        // Interrupted (SIGINT/SIGTERM/SIGHUP): a failure like any other, so --fail-closed decides.
        return fail(
            agent,
            args,
            Some(call.event),
            &format!("hooks cancelled ({why})"),
        );
    }
    let mut verdict = Verdict::of(agent, &call, &outcome);
    #[cfg(feature = "cli")]
    if call.event == Event::SessionStart {
        verdict
            .messages
            .extend(shell_sandbox_note(ctx, &call, &config));
    }
    let applied = call.flavour != Flavour::StopError; // see claude::answer_as
    verdict
        .messages
        .extend(keep_counts(agent, &outcome, denials, tracker, applied));
    agent.answer(&call, verdict)
}

/// Records the turn's denials and continuations; what could not be kept, in words.
fn keep_counts(
    agent: &dyn AgentAdapter,
    outcome: &Outcome,
    denials: Option<crate::backstop::Tracker>,
    tracker: Option<continuations::Tracker>,
    applied: bool,
) -> Vec<String> {
    let mut messages = Vec::new();
    if let Some(Err(e)) = denials.map(|d| d.finish(outcome)) {
        messages.push(format!(
            "ka-hooks {}: the denial count could not be kept ({e}); denial_backstop may not hold",
            agent.command()
        ));
    }
    if let Some(tracker) = tracker {
        if let Err(e) = tracker.finish(outcome, applied) {
            messages.push(format!(
                "ka-hooks {}: the continuation count could not be kept ({e}); \
                 max_continuations may not hold",
                agent.command()
            ));
        }
    }
    messages
}

/// The first managed or user file that does not load (invalid or refused), in words.
fn ungated_layer_not_loaded(config: &Config) -> Option<String> {
    let broken = config.layers.iter().find(|l| {
        !l.layer.is_gated() && matches!(l.state, LayerState::Invalid | LayerState::Refused)
    })?;
    Some(format!(
        "the {} file {} does not load (see `ka-hooks check`)",
        broken.layer,
        crate::terminal::escape_path(&broken.file)
    ))
}

/// Keeps `tool_input` equal to the patched `arguments`, in the agent's names: scripts written
/// for the agent read `tool_input`, so a guard later in the pipeline judges what will really run.
fn mirror_tool_input(tool: ToolCall) -> PayloadMirror {
    PayloadMirror(Arc::new(move |payload| {
        let Some(Value::Object(args)) = payload.get("arguments") else {
            return;
        };
        if let Ok(input) = tool.input_for_agent(args) {
            payload.insert("tool_input".into(), Value::Object(input));
        }
    }))
}

/// At session start: whether the model's shell can reach ka's state here (see
/// [`shell_sandbox`]), said when it can.
#[cfg(feature = "cli")]
fn shell_sandbox_note(ctx: &Context, call: &Call, config: &Config) -> Option<String> {
    let id = Agent::ALL
        .into_iter()
        .find(|a| a.command() == call.agent.command())?;
    let root = config.project_root.clone().or_else(|| call.cwd.clone())?;
    crate::adapter::shell_sandbox::session_note(id, &ctx.paths, &root)
}

/// Why this adapter stands aside for another agent's, which runs the same hooks in this
/// session (see [`AgentAdapter::also_run_by`]); `None` when it runs them.
fn stands_aside(agent: &dyn AgentAdapter, ctx: &Context, call: &Call) -> Option<String> {
    let (markers, other) = agent.also_run_by()?;
    let set = |var: &&str| std::env::var_os(var).is_some_and(|v| !v.is_empty() && v != "0");
    // The variables alone prove nothing: a repository's `.claude/settings.json` can set them
    // (`env`) for every hook, which would switch off every guard of `ka-hooks claude`. The
    // other agent must really be the one running this hook.
    if !markers.iter().all(set) || !crate::caller::run_by(other.command()) {
        return None;
    }
    let table::Install::HookFile(file) = other.adapter().install() else {
        return None;
    };
    let dir = start_dir(ctx, call, |var: &str| std::env::var_os(var));
    let root = paths::find_project_root(&dir).unwrap_or(dir);
    let (user_dir, under) = file.user;
    let files = [
        Some(root.join(file.project)),
        user_dir().map(|d| d.join(under)),
    ];
    let command = format!("ka-hooks {}", other.command());
    let installed = files
        .iter()
        .flatten()
        .any(|f| std::fs::read_to_string(f).is_ok_and(|text| text.contains(&command)));
    installed.then(|| {
        format!(
            "ka-hooks {}: {} runs this registration as well as `{command}`, which is installed \
             too; the hooks run there, once",
            agent.command(),
            other.display()
        )
    })
}

/// The payload cannot be read (see [`crate::payload`]): fail closed unless the event, as far as
/// the text names it, is one that cannot be vetoed. Fails open there, where nothing could have
/// been stopped (and an exit 2 would mean something else, such as "keep going" on `Stop`).
fn unreadable(
    agent: &'static dyn AgentAdapter,
    input: &[u8],
    named: Option<&str>,
    why: &str,
) -> Answer {
    let event = match named {
        Some(name) => agent
            .events()
            .iter()
            .find(|r| r.name == name)
            .map(|r| r.event),
        None => event_named_in(agent, input),
    };
    if event.is_some_and(|event| !event.is_pipeline()) {
        return fail(agent, &AdapterArgs::default(), event, why);
    }
    agent.block(&format!(
        "ka-hooks {}: {why}; blocked, because the guards could not judge this call (a payload \
         that cannot be read always fails closed on a tool call, prompt or permission request)",
        agent.command()
    ))
}

/// The ka event of the `"hook_event_name": "..."` a payload that is not JSON still spells out,
/// when it names exactly one event of `agent`.
fn event_named_in(agent: &dyn AgentAdapter, input: &[u8]) -> Option<Event> {
    let text = String::from_utf8_lossy(input);
    let mut named = text.match_indices("\"hook_event_name\"").map(|(at, key)| {
        let rest = text[at + key.len()..].trim_start().strip_prefix(':')?;
        let rest = rest.trim_start().strip_prefix('"')?;
        let name = &rest[..rest.find('"')?];
        agent
            .events()
            .iter()
            .find(|row| row.name == name)
            .map(|row| row.event)
            .or_else(|| {
                let observed = agent.observed().iter().any(|(n, _)| *n == name);
                observed.then_some(Event::Observe)
            })
    });
    let first = named.next()??;
    named.all(|other| other == Some(first)).then_some(first)
}

/// Whether `agent` reads a hook's plain (non-JSON) stdout on `event` as context for the model
/// (see [`plain`]). Natively, ka reads only a JSON object.
pub fn plain_stdout_is_context(agent: Agent, event: Event) -> bool {
    agent.adapter().stdout_is_context(event)
}

/// ka-hooks could not run the hooks: fail open (exit 0, said to the user), or with
/// `--fail-closed` block what can be blocked.
fn fail(agent: &dyn AgentAdapter, args: &AdapterArgs, event: Option<Event>, why: &str) -> Answer {
    let name = agent.command();
    let blockable = event.is_none_or(Event::is_pipeline);
    if args.fail_closed && blockable {
        return agent.block(&format!(
            "ka-hooks {name}: {why}; blocked because of --fail-closed"
        ));
    }
    agent.fail_open(
        event,
        &format!("ka-hooks {name}: {why}; no ka hook ran (failing open)"),
    )
}

/// The fail-open answer of the agents that read `systemMessage`: said there and on stderr.
pub(crate) fn fail_open_with_system_message(message: &str) -> Answer {
    let mut object = Map::new();
    object.insert("systemMessage".into(), Value::String(message.to_owned()));
    Answer {
        stderr: format!("{message}\n"),
        ..Answer::json(object)
    }
}

/// The environment variables in which `agent` names the session's project directory, most
/// specific first (each adapter's entry says where it comes from).
pub fn project_dir_vars(agent: Agent) -> &'static [&'static str] {
    agent.adapter().project_dir_vars()
}

/// Where the project root is searched from: `--project DIR`; else the session's project directory
/// as the agent names it ([`project_dir_vars`]); else the payload's `cwd`; else the working
/// directory. The payload's `cwd` follows the model's `cd` (Claude Code's shell keeps its working
/// directory between calls), so it comes last: a `cd` by the model must never move the root and
/// leave the project's guards behind.
pub fn start_dir(
    ctx: &Context,
    call: &Call,
    env: impl Fn(&str) -> Option<std::ffi::OsString>,
) -> PathBuf {
    if let Some(dir) = &ctx.project {
        return paths::absolute(dir);
    }
    call.agent
        .project_dir_vars()
        .iter()
        .filter_map(|var| env(var))
        .filter(|value| !value.is_empty())
        .map(PathBuf::from)
        .find(|dir| dir.is_absolute() && dir.is_dir())
        .or_else(|| call.cwd.clone().filter(|dir| dir.is_dir()))
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("/"))
}

fn load(ctx: &Context, call: &Call) -> Result<Config, String> {
    let start_dir = start_dir(ctx, call, |var: &str| std::env::var_os(var));
    let opts = LoadOptions {
        paths: ctx.paths.clone(),
        start_dir,
        trust_once: ctx.trust_once,
    };
    let mut config = Config::load(&opts).map_err(|e| match e {
        LoadError::Config(errors) => format!(
            "{} configuration error(s), see `ka-hooks check`: {}",
            errors.0.len(),
            errors
                .0
                .first()
                .map(ToString::to_string)
                .unwrap_or_default()
                .replace('\n', " ")
        ),
    })?;
    if ctx.log.is_some() {
        config.settings.log.clone_from(&ctx.log);
    }
    Ok(config)
}

// ---------------------------------------------------------------------------------------------
// The agent's payload as a ka event
// ---------------------------------------------------------------------------------------------

/// An agent's hook payload, read as a ka event.
#[derive(Debug, Clone)]
pub struct Call {
    /// The agent's entry of the adapter table.
    pub agent: &'static dyn AgentAdapter,
    pub event: Event,
    /// The agent's name of the event (as sent: an event ka has no row for runs `observe`).
    pub agent_event: String,
    pub flavour: Flavour,
    /// The payload the hooks get: the agent's own fields (so scripts written for the agent
    /// keep working) plus ka's (`tool`, `arguments`, `result`, `is_error`, `prompt`, ...).
    pub payload: Map<String, Value>,
    pub cwd: Option<PathBuf>,
    pub tool: Option<ToolCall>,
    /// What was replaced reading the payload (lone surrogates, bytes that are not UTF-8), for
    /// the user.
    pub notes: Vec<String>,
}

/// The tool call of a tool event.
#[derive(Debug, Clone)]
pub struct ToolCall {
    /// The agent's name (`Write`).
    pub agent_name: String,
    /// The ka name (`write`).
    pub ka_name: String,
    /// The agent's `tool_input`, as received.
    pub agent_input: Map<String, Value>,
    /// The arguments the hooks see, in ka's names.
    pub ka_args: Map<String, Value>,
    /// Codex's `apply_patch`, read as a write or an edit.
    pub patch: Option<codex::Patch>,
    /// The agent whose tool and argument names the payload uses: the agent itself, except
    /// for Copilot's PascalCase events, which use Claude Code's (`reshape::tool_names`).
    pub names: Agent,
}

/// Why a payload was not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rejected {
    /// The payload cannot be read (fails closed on the events that can be vetoed).
    Broken(String),
}

/// Reads an agent's hook payload. All three agents share Claude Code's field names
/// (`hook_event_name`, `tool_name`, `tool_input`, `tool_response`, `prompt`, `cwd`).
pub fn parse(agent: Agent, input: &str) -> Result<Call, Rejected> {
    parse_bytes(agent, input.as_bytes())
}

/// [`parse`], from the bytes the agent wrote (read lossily where they are not UTF-8).
pub fn parse_bytes(agent: Agent, input: &[u8]) -> Result<Call, Rejected> {
    parse_bytes_as(agent, input, None)
}

/// [`parse_bytes`], with the event name the agent's command line gave (`--event`), for agents
/// whose payload does not name its event (see [`reshape`]).
pub fn parse_bytes_as(agent: Agent, input: &[u8], named: Option<&str>) -> Result<Call, Rejected> {
    parse_with(agent.adapter(), input, named)
}

/// [`parse_bytes_as`], for the agent of any entry of an adapter table.
pub fn parse_with(
    agent: &'static dyn AgentAdapter,
    input: &[u8],
    named: Option<&str>,
) -> Result<Call, Rejected> {
    let payload::Payload {
        object: mut original,
        notes,
    } = payload::parse(input).map_err(|e| Rejected::Broken(e.to_string()))?;
    agent.reshape(&mut original, named)?;
    let name = original
        .get("hook_event_name")
        .and_then(Value::as_str)
        .ok_or_else(|| Rejected::Broken("the hook payload has no `hook_event_name`".into()))?;
    // An event ka has no row for (one of `agent.observed()`, or one newer than this table) is
    // observed: its hooks run and the answer says nothing for them. Failing the agent's hook
    // (exit 1) would show an error on every such event and gain nothing.
    let row = agent
        .events()
        .iter()
        .find(|row| row.name == name)
        .copied()
        .unwrap_or(EventRow {
            name: "",
            event: Event::Observe,
            flavour: Flavour::Plain,
        });
    let agent_event = name.to_owned();
    let cwd = original
        .get("cwd")
        .and_then(Value::as_str)
        .map(PathBuf::from);
    // What the payload gains, worked out from the original, which then becomes the payload
    // itself (no copy of a payload that may carry a whole file).
    let mut extra: Vec<(&str, Value)> = Vec::new();
    let mut tool = None;
    if row.event.is_tool_event() {
        let call = tool_call(agent, &original, cwd.as_deref())?;
        extra.push(("tool", Value::String(call.ka_name.clone())));
        extra.push(("arguments", Value::Object(call.ka_args.clone())));
        tool = Some(call);
    }
    extra.extend(event_fields(agent, row, &original, &agent_event));
    let mut payload = original;
    for (key, value) in extra {
        payload.insert(key.to_owned(), value);
    }
    Ok(Call {
        agent,
        event: row.event,
        agent_event,
        flavour: row.flavour,
        payload,
        cwd,
        tool,
        notes,
    })
}

/// The fields ka's payload of `row`'s event adds: a tool's `result` and `is_error`, the `stop`
/// reason, the observed `agent_event`, a compaction's `focus`.
fn event_fields(
    agent: &dyn AgentAdapter,
    row: EventRow,
    original: &Map<String, Value>,
    agent_event: &str,
) -> Vec<(&'static str, Value)> {
    let mut fields = Vec::new();
    match row.event {
        Event::PostToolUse => {
            let (result, is_error) = agent.result(original);
            fields.push(("result", result));
            fields.push(("is_error", Value::Bool(is_error)));
        }
        Event::PostToolUseFailure => {
            let (result, _) = claude::result(original);
            fields.push(("result", result));
            fields.push(("is_error", Value::Bool(true)));
        }
        Event::Stop => {
            let stop = if row.flavour == Flavour::StopError {
                "error"
            } else {
                "done"
            };
            fields.push(("stop", Value::String(stop.into())));
        }
        Event::Observe => fields.push(("agent_event", Value::String(agent_event.to_owned()))),
        Event::PreCompact | Event::PostCompact => {
            if let Some(focus) = original
                .get("custom_instructions")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
            {
                fields.push(("focus", Value::String(focus.to_owned())));
            }
        }
        _ => {}
    }
    fields
}

fn tool_call(
    agent: &dyn AgentAdapter,
    original: &Map<String, Value>,
    cwd: Option<&Path>,
) -> Result<ToolCall, Rejected> {
    let agent_name = original
        .get("tool_name")
        .and_then(Value::as_str)
        .ok_or_else(|| Rejected::Broken("the tool event's payload has no `tool_name`".into()))?
        .to_owned();
    let agent_input = match original.get("tool_input") {
        Some(Value::Object(input)) => input.clone(),
        None | Some(Value::Null) => Map::new(),
        Some(_) => {
            return Err(Rejected::Broken(
                "the payload's `tool_input` is not a JSON object".into(),
            ))
        }
    };
    let names = agent.tool_names(original, &agent_name);
    if let Some((ka_name, ka_args, patch)) = agent.own_tool(&agent_name, &agent_input, cwd) {
        return Ok(ToolCall {
            agent_name,
            ka_name,
            agent_input,
            ka_args,
            patch,
            names,
        });
    }
    Ok(ToolCall {
        ka_name: tools::ka_tool_name(names, &agent_name),
        ka_args: tools::args_to_ka(names, &agent_name, &agent_input),
        agent_name,
        agent_input,
        patch: None,
        names,
    })
}

impl ToolCall {
    /// The whole input for the agent after the hooks patched ka's arguments into `ka_args`,
    /// in the agent's names; `Err` says why the agent cannot take this rewrite.
    pub fn input_for_agent(
        &self,
        ka_args: &Map<String, Value>,
    ) -> Result<Map<String, Value>, String> {
        match &self.patch {
            Some(patch) => patch.rebuild(&self.agent_input, &self.ka_args, ka_args),
            None => Ok(tools::args_back(
                self.names,
                &self.agent_name,
                &self.ka_name,
                ka_args,
            )),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The outcome, ready to be said in an agent's contract
// ---------------------------------------------------------------------------------------------

/// What the hooks decided, in terms every adapter can answer with.
#[derive(Debug, Clone, Default)]
pub struct Verdict {
    /// Block the call or prompt, with this reason.
    pub block: Option<String>,
    /// `allow` or `ask` (a deny is a block).
    pub decision: Option<Decision>,
    /// Why, for `decision`.
    pub reason: Option<String>,
    /// The whole rewritten input, in the agent's names.
    pub input: Option<Map<String, Value>>,
    /// Text for the model, appended to the tool result.
    pub feedback: Option<String>,
    /// The tool result is an error.
    pub mark_error: bool,
    /// The permission mode the hooks asked for.
    pub mode: Option<String>,
    /// Text for the model's context.
    pub context: Option<String>,
    /// Do not stop: the model's next input (stop-like events).
    pub keep_going: Option<String>,
    /// Stop the whole turn; the reason, for the user.
    pub halt: Option<String>,
    /// For the user: notes, failed hooks, skipped layers, what the agent cannot express.
    pub messages: Vec<String>,
    /// A hook deferred the call and none decided or rewrote it (Claude Code's `defer`).
    pub deferred: bool,
    /// Permission-rule updates of an allowed permission request, as the hooks wrote them.
    pub permission_updates: Vec<Value>,
    /// Hooks of this call that failed (error, timeout, cannot start, voided output), whatever
    /// their `on_error`: an agent that carries a rewrite only as a pre-approval must not give
    /// one past them.
    pub failed: Vec<String>,
}

/// The library names only what a person must do about a skipped or stale layer; the binary's
/// answers add its own command for it (`ka-hooks --project DIR trust`).
fn with_trust_commands(outcome: &Outcome, guards: Vec<String>) -> Vec<String> {
    guards
        .into_iter()
        .map(
            |line| match outcome.untrusted.iter().find(|u| u.to_string() == line) {
                Some(u) => u.with_fix(),
                None => line,
            },
        )
        .collect()
}

/// A block by a guard of a changed or removed layer (never spawned: no command) gets the
/// `trust` command that reviews it.
fn stale_block_with_command(outcome: &Outcome, block: &mut String) {
    use std::fmt::Write as _;
    let stale = outcome.hooks.iter().find_map(|h| {
        let blocked = h.status == crate::outcome::Status::Blocked && h.command.is_empty();
        outcome.untrusted.iter().find(|u| {
            blocked
                && matches!(u.state, LayerState::Stale | LayerState::Removed)
                && *u.file == *h.source.file
        })
    });
    if let Some(u) = stale {
        let _ = write!(block, "; in your own terminal: `{}`", u.fix);
        if u.state == LayerState::Removed {
            let _ = write!(block, " (or `{} --revoke`)", u.fix);
        }
    }
}

impl Verdict {
    /// A tool result's feedback and context as one text, for an agent whose hooks can only add
    /// context to a result: a result marked as an error, which it cannot mark, is said to the
    /// user and read to the model.
    fn result_as_context(&mut self, agent: Agent) -> Option<String> {
        if self.mark_error {
            self.messages.push(format!(
                "a ka hook marked this tool result as an error; {} hooks cannot mark a result as \
                 an error, so the hook's message was added as context instead",
                agent.display()
            ));
        }
        let feedback = self.feedback.take().or_else(|| {
            self.mark_error
                .then(|| "a ka hook marked this tool result as an error".to_owned())
        });
        let text: Vec<String> = feedback.into_iter().chain(self.context.take()).collect();
        (!text.is_empty()).then(|| text.join("\n\n"))
    }

    /// The verdict, derived from [`Outcome::next`] (the one copy of the rules) and
    /// [`Outcome::for_user`]; only what the agent's contract needs on top is added here.
    fn of(agent: &dyn AgentAdapter, call: &Call, outcome: &Outcome) -> Verdict {
        let mut verdict = Verdict {
            feedback: outcome.feedback.clone(),
            mode: outcome.mode.clone(),
            context: outcome.context.clone(),
            deferred: outcome.deferred
                && !outcome.blocked()
                && outcome.decision().is_none()
                && outcome.updated_input.is_none(),
            permission_updates: if outcome.blocked() {
                Vec::new()
            } else {
                outcome.permission_updates.clone()
            },
            failed: outcome
                .hooks
                .iter()
                .filter(|h| h.status == crate::outcome::Status::Error)
                .map(|h| h.name.clone())
                .collect(),
            ..Verdict::default()
        };
        verdict.take_next(outcome);
        // What weakened guards comes first: the user must hear it on every call it concerns.
        let for_user = outcome.for_user();
        verdict
            .messages
            .extend(with_trust_commands(outcome, for_user.guards));
        if let Some(block) = &mut verdict.block {
            stale_block_with_command(outcome, block);
        }
        verdict.messages.extend(
            call.notes
                .iter()
                .map(|note| format!("ka-hooks {}: {note}", agent.command())),
        );
        verdict.messages.extend(for_user.hooks);
        // What the agent itself shows of a hook's plain output, or of its exit 2 (per agent).
        verdict
            .messages
            .extend(agent.user_texts(call.event, &outcome.hooks));
        if let Some(why) = agent.compaction_blocked(call.event, &outcome.hooks) {
            verdict.block = Some(why);
        }
        if let Some(mode) = &verdict.mode {
            verdict.messages.push(format!(
                "a ka hook asked to switch to `{mode}` mode; {} hooks cannot switch the \
                 permission mode, so switch to it yourself if you agree",
                agent.display()
            ));
        }
        verdict.take_rewrite(agent, call, outcome);
        verdict
    }

    /// What the outcome's next step means for the agent: a block, a halt, an ask or a
    /// pre-approval of a tool call; a blocked prompt; a result marked as an error; keep going.
    fn take_next(&mut self, outcome: &Outcome) {
        use crate::next::{Next, Other, Permission, Prompt, Stop, ToolResult};
        match outcome.next() {
            Next::ToolCall(permission, _) => match permission {
                Permission::Block { reason, .. } => self.block = Some(reason),
                Permission::Halt { reason } => {
                    // The model learns only that the call did not go ahead.
                    self.block = Some(
                        outcome
                            .reason()
                            .unwrap_or("the turn was halted by a ka hook")
                            .to_owned(),
                    );
                    self.halt = Some(reason);
                }
                Permission::Ask { reason, .. } => {
                    self.decision = Some(Decision::Ask);
                    self.reason = Some(reason);
                }
                Permission::Run { pre_approved, .. } => {
                    self.decision = pre_approved.then_some(Decision::Allow);
                    self.reason = outcome.reason().map(str::to_owned);
                }
            },
            Next::Prompt(prompt, _) => match prompt {
                Prompt::Block { reason } => self.block = Some(reason),
                Prompt::Halt { reason } => {
                    self.block = Some(
                        outcome
                            .reason()
                            .unwrap_or("the turn was halted by a ka hook")
                            .to_owned(),
                    );
                    self.halt = Some(reason);
                }
                Prompt::Submit { .. } => {}
            },
            Next::ToolResult(result, _) => match result {
                ToolResult::Halt { reason } => {
                    self.mark_error = outcome.mark_error;
                    self.halt = Some(reason);
                }
                ToolResult::Block { .. } => self.mark_error = true,
                ToolResult::Feedback { .. } => {}
            },
            Next::Stop(stop, _) => match stop {
                Stop::Halt { reason } => self.halt = Some(reason),
                Stop::KeepGoing { reason, .. } => self.keep_going = Some(reason),
                Stop::End { .. } => {}
            },
            Next::Other(other, _) => match other {
                Other::Halt { reason } => self.halt = Some(reason),
                Other::Continue { .. } => {}
            },
        }
    }

    /// A rewritten input in the agent's argument names; when the agent cannot take it, a block
    /// rather than run the original input.
    fn take_rewrite(&mut self, agent: &dyn AgentAdapter, call: &Call, outcome: &Outcome) {
        if let (Some(args), Some(tool), None) = (&outcome.updated_input, &call.tool, &self.block) {
            match tool.input_for_agent(args) {
                Ok(input) => self.input = Some(input),
                Err(why) => {
                    self.block = Some(format!(
                        "a ka hook rewrote this call's input, but {} cannot take that rewrite \
                         ({why}); blocked rather than run the original input",
                        agent.display()
                    ));
                    self.decision = None;
                    self.reason = None;
                }
            }
        }
    }

    /// The messages for the user, one per line (`None` when there are none).
    pub fn system_message(&self) -> Option<String> {
        (!self.messages.is_empty()).then(|| self.messages.join("\n"))
    }

    /// An `ask` the agent cannot put to the user becomes a block that says so.
    fn ask_becomes_block(&mut self, agent: Agent) {
        if self.block.is_none() && self.decision == Some(Decision::Ask) {
            let why = self
                .reason
                .take()
                .unwrap_or_else(|| "a ka hook asks for a human".into());
            self.block = Some(format!(
                "{why} — a human must approve this call, and {} hooks cannot ask the user, so \
                 ka-hooks blocked it",
                agent.display()
            ));
            self.decision = None;
            self.input = None;
        }
    }

    /// A deferral the agent has no form for is said: its own permission flow decides.
    fn defer_is_unsupported(&mut self, agent: Agent) {
        if std::mem::take(&mut self.deferred) {
            self.messages.push(format!(
                "a ka hook deferred this call (Claude Code's `defer`); {} has no deferral, so \
                 its own permission rules decide",
                agent.display()
            ));
        }
    }

    /// A pre-approval the agent cannot express is said, not dropped.
    fn allow_is_unsupported(&mut self, agent: Agent) {
        if self.block.is_none() && self.decision == Some(Decision::Allow) {
            self.decision = None;
            self.messages.push(format!(
                "a ka hook pre-approved this call; {} hooks cannot pre-approve, so its own \
                 permission rules decide",
                agent.display()
            ));
        }
    }
}

/// `{"systemMessage": ..}` when there is something to tell the user, and
/// `{"continue": false, "stopReason": ..}` when a hook halted the turn (the shape all three
/// agents read: Claude Code hooks reference "Common JSON fields", Codex's output schemas,
/// Gemini CLI `docs/hooks/reference.md` "Common output fields").
fn with_system_message(object: &mut Map<String, Value>, verdict: &Verdict) {
    if let Some(reason) = &verdict.halt {
        object.insert("continue".into(), Value::Bool(false));
        let reason = if reason.trim().is_empty() {
            "a ka hook halted the turn"
        } else {
            reason
        };
        object.insert("stopReason".into(), Value::String(reason.to_owned()));
    }
    if let Some(message) = verdict.system_message() {
        object.insert("systemMessage".into(), Value::String(message));
    }
}

/// Context the agent cannot take on this event is said to the user, never dropped silently.
fn context_is_unsupported(verdict: &mut Verdict, agent: Agent, event_name: &str) {
    if let Some(context) = verdict.context.take() {
        verdict.messages.push(format!(
            "a ka hook gave context for the model, but {}'s {event_name} hooks cannot add \
             context; it was not given to the model: {context}",
            agent.display()
        ));
    }
}

/// `{"hookEventName": name, ..}`
fn specific(name: &str) -> Map<String, Value> {
    let mut map = Map::new();
    map.insert("hookEventName".into(), Value::String(name.to_owned()));
    map
}
