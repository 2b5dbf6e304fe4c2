//! Which hooks run for a call and how: matching, running one hook, the concurrent run of every
//! event but the pipeline ones (see `super::pipeline`), the hand-over of async hooks to the
//! background, cancellation and the continuation cap.

use crate::action;
use crate::background;
use crate::cancel::CancelToken;
use crate::config::call::CallMatch;
use crate::config::{Config, Hook};
use crate::environment::{hook_dir, hook_env, run_sandboxed, Fallbacks, HookEnv};
use crate::event::Event;
use crate::judge::block;
use crate::outcome::{Outcome, Status};
use crate::process::{self, HookProcess, Termination};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The enabled hooks of `event` for this payload: on tool events, those whose tool filter
/// matches; on events with another matcher field (`source` of session_start, `trigger` of
/// pre_compact, ...), those whose `matcher` matches that field (Claude Code's matchers, hooks
/// reference "Matcher patterns"). A failed tool call runs the `post_tool_use` hooks first
/// (they see `is_error: true`), then the `post_tool_use_failure` ones.
pub(super) fn matching_hooks<'c>(
    config: &'c Config,
    event: Event,
    tool: Option<&str>,
    payload: &Map<String, Value>,
    call: &CallMatch<'_>,
) -> Vec<&'c Hook> {
    let mut hooks: Vec<&Hook> = Vec::new();
    // A pipeline checks each hook again on the arguments as patched so far (see `pipeline`):
    // it keeps every hook of the tool, unless none matches the call as made (then nothing can
    // patch it, and none runs). Elsewhere `paths` (one glob query for all hooks, already made)
    // and `if` come first: a hook with `paths` the call misses costs no tool comparison.
    let pipeline = event.is_pipeline();
    let mut any = false;
    let mut add = |event: Event| {
        for (i, hook) in config.enabled_hooks(event) {
            if pipeline {
                if hook.matches_tool(tool) {
                    any = any || call.passes(i, hook);
                    hooks.push(hook);
                }
            } else if call.passes(i, hook) && hook.matches_tool(tool) {
                hooks.push(hook);
            }
        }
    };
    if event == Event::PostToolUseFailure {
        add(Event::PostToolUse);
    }
    add(event);
    if pipeline && !any {
        hooks.clear();
    }
    if let Some(field) = event.matcher_field().filter(|_| !event.is_tool_event()) {
        let subject = payload.get(field).and_then(Value::as_str);
        hooks.retain(|h| h.filter.matches(subject));
    }
    hooks
}

/// How many continuations this turn already had: the payload's `continuations` (what the cap
/// compares), and how many really happened when the host counted them
/// ([`Request::continued`]).
pub(super) struct Continuations {
    counted: u64,
    happened: Option<u32>,
}

impl Continuations {
    pub(super) fn of(payload: &Map<String, Value>, happened: Option<u32>) -> Continuations {
        Continuations {
            counted: payload
                .get("continuations")
                .and_then(Value::as_u64)
                .unwrap_or(0),
            happened,
        }
    }

    /// "continued 5 time(s) (the payload says 6)", or the plain count.
    fn said(&self) -> String {
        match self.happened {
            Some(times) if u64::from(times) != self.counted => format!(
                "continued {times} time(s) (the payload says {})",
                self.counted
            ),
            _ => format!("continued {} time(s)", self.counted),
        }
    }
}

/// A request to keep going is applied only while the turn is under
/// `[hook_settings] max_continuations`; past it, and when a hook halted the turn, it is
/// recorded and a note says so.
pub(super) fn govern_continuation(config: &Config, had: &Continuations, outcome: &mut Outcome) {
    let Some(text) = outcome.keep_going.take() else {
        return;
    };
    let max = config.settings.max_continuations;
    if outcome.halt.is_some() {
        outcome.diagnostics.push(format!(
            "a hook asked to keep going ({}), but a hook halted the turn; the turn stops",
            excerpt(&text)
        ));
        return;
    }
    if had.counted >= u64::from(max) {
        outcome.capped = true;
        // Said once, as a note: the user reads it, and the adapters show it.
        outcome.notes.push(format!(
            "a stop hook asked to keep going ({}), but this turn already {} \
             (max_continuations = {max}); the agent stops",
            excerpt(&text),
            had.said()
        ));
        return;
    }
    // It becomes the model's next input: as long as a context may be (Claude Code caps hook
    // output at 10 000 characters), never a whole 64 KiB stderr.
    let max_chars = action::CONTEXT_MAX_CHARS;
    let text = match text.char_indices().nth(max_chars) {
        Some((end, _)) => {
            outcome.diagnostics.push(format!(
                "the request to keep going was {} chars; cut to {max_chars}",
                text.chars().count()
            ));
            text[..end].to_owned()
        }
        None => text,
    };
    outcome.keep_going = Some(text);
}

/// The start of `text`, on one line, for diagnostics.
pub(super) fn excerpt(text: &str) -> String {
    let line: String = text.chars().take(80).collect();
    format!(
        "{:?}{}",
        line,
        if text.chars().count() > 80 { "…" } else { "" }
    )
}

/// When the dispatch cut a hook short or kept one from starting: say why in
/// [`Outcome::cancelled`], and block a pipeline event, since a guard that did not finish never
/// reads as allowed.
pub(super) fn mark_cancelled(stop: &Stop, outcome: &mut Outcome) {
    if !outcome.hooks.iter().any(|h| h.status == Status::Cancelled) {
        return;
    }
    let why = stop.reason();
    let event = outcome.event;
    if event.is_pipeline() {
        let what = if event == Event::PreToolUse {
            "the tool call"
        } else {
            "the prompt"
        };
        block(
            outcome,
            format!("hooks cancelled ({why}): {what} was not cleared by its hooks"),
        );
        outcome.updated_input = None;
    }
    outcome.diagnostics.push(format!(
        "the dispatch was cancelled ({why}); the hooks it cut short or never started are \
         reported as cancelled"
    ));
    outcome.cancelled = Some(why);
}

pub(super) fn serialize(payload: &Map<String, Value>) -> Arc<[u8]> {
    // A Map of Values always serialises; the fallback only keeps this panic-free.
    serde_json::to_vec(payload)
        .unwrap_or_else(|_| b"{}".to_vec())
        .into()
}

/// What stops a dispatch early: its cancel token and its deadline.
pub(super) struct Stop {
    pub(super) token: Option<CancelToken>,
    pub(super) deadline: Option<Instant>,
}

impl Stop {
    pub(super) fn stopped(&self) -> bool {
        self.token.as_ref().is_some_and(CancelToken::is_cancelled)
            || self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    /// Why it stopped, in words.
    pub(super) fn reason(&self) -> String {
        self.token
            .as_ref()
            .and_then(CancelToken::reason)
            .unwrap_or_else(|| "the dispatch deadline passed".to_owned())
    }
}

/// What every hook of one dispatch shares.
pub(super) struct Run<'a> {
    pub(super) dir: &'a Path,
    pub(super) env: &'a [(String, String)],
    /// The hooks inherit nothing of the host's environment but `env` ([`HookEnv::Only`]).
    pub(super) clean_env: bool,
    pub(super) stop: &'a Stop,
    pub(super) tool: Option<&'a str>,
    /// The project root (else the working directory): `paths` globs and `{root}`.
    pub(super) root: &'a Path,
    /// `--hook NAME`: run it whatever its filters say.
    pub(super) replay: bool,
    /// See [`Request::plain_stdout_is_context`].
    pub(super) plain_context: bool,
}

pub(super) fn run_one(
    hook: &Hook,
    payload: &Arc<[u8]>,
    args: Option<&Map<String, Value>>,
    run: &Run<'_>,
) -> process::Finished {
    if let Some(reason) = &hook.stale {
        // A guard of a changed or removed layer: never spawned, it blocks (see config::stale).
        return process::Finished {
            termination: Termination::Exited(2),
            stdout: String::new(),
            stdout_truncated: false,
            stderr: reason.clone(),
            stderr_truncated: false,
            duration: Duration::ZERO,
            output_held_open: false,
            pid: None,
        };
    }
    if let Some(reason) = hook.cannot_render(args, run.root) {
        // `{path}` with several paths: judged as a block, never on one file of several.
        return process::Finished {
            termination: Termination::Exited(2),
            stdout: String::new(),
            stdout_truncated: false,
            stderr: reason,
            stderr_truncated: false,
            duration: Duration::ZERO,
            output_held_open: false,
            pid: None,
        };
    }
    let (command, cwd, env) = prepare(hook, args, run);
    let hook_process = HookProcess {
        command: &command,
        cwd,
        env: &env,
        clean_env: run.clean_env,
        stdin: Arc::clone(payload),
        timeout: hook.timeout,
        cancel: run.stop.token.as_ref(),
        deadline: run.stop.deadline,
    };
    run_sandboxed(
        &hook_process,
        &hook.sandbox,
        hook.root.as_deref().unwrap_or(run.root),
    )
}

/// What `hook` runs for this call: its command (placeholders filled in), its working directory
/// and the variables set for it.
pub(super) fn prepare<'r>(
    hook: &'r Hook,
    args: Option<&Map<String, Value>>,
    run: &Run<'r>,
) -> (std::borrow::Cow<'r, str>, &'r Path, Vec<(String, String)>) {
    let env = hook_env(run.env, &hook.name, &hook.env);
    let cwd = hook_dir(hook.root.as_deref(), run.dir);
    (hook.command_for(run.tool, args, run.root), cwd, env)
}

/// What [`start_background`] needs of the call besides its payload.
pub(super) struct Handover<'a> {
    pub(super) tool: Option<&'a str>,
    /// The project root (else the working directory): `paths` globs, `{root}`, and where the
    /// hooks run.
    pub(super) root: &'a Path,
    /// The payload's `cwd`, else the process's, if worked out already.
    pub(super) cwd: Option<PathBuf>,
    pub(super) plain_context: bool,
    /// The environment the hooks get.
    pub(super) hook_env: &'a HookEnv,
}

/// Hand the async hooks of this call to the background; the outcome lists them as started.
/// Only what takes no system call happens here (their paths and commands); the rest is left to
/// the background (see [`background::Batch`]).
pub(super) fn start_background(
    config: &Config,
    hooks: &[&Hook],
    payload: Map<String, Value>,
    call: &Handover<'_>,
    outcome: &mut Outcome,
) {
    let args = payload.get("arguments").and_then(Value::as_object);
    let later = hooks
        .iter()
        .map(|hook| background::Later {
            name: hook.name.clone(),
            source: hook.source.clone(),
            on_error: hook.on_error,
            enforce: hook.enforce,
            timeout_ms: u64::try_from(hook.timeout.as_millis()).unwrap_or(u64::MAX),
            command: hook.command_for(call.tool, args, call.root).into_owned(),
            root: hook.root.clone(),
            env: hook.env.clone(),
            sandbox: hook.sandbox.clone(),
            sandbox_root: hook.root.clone().unwrap_or_else(|| call.root.to_path_buf()),
            // The paths it runs for (its `paths` filter's selection): the supersede key.
            paths: hook
                .paths_for(args, call.root)
                .into_iter()
                .map(str::to_owned)
                .collect(),
        })
        .collect();
    let batch = background::Batch {
        event: outcome.event,
        tool: call.tool.map(str::to_owned),
        session: payload
            .get("session_id")
            .and_then(Value::as_str)
            .map(str::to_owned),
        payload,
        cwd: call.cwd.clone(),
        dir: call.root.to_path_buf(),
        fallbacks: Fallbacks::of(config),
        plain_context: call.plain_context,
        hook_env: call.hook_env.clone(),
        log: config.settings.log.clone(),
        hooks: later,
    };
    let (started, noticed) = background::start(batch);
    outcome.diagnostics.extend(noticed);
    for s in &started {
        if let Some(e) = &s.error {
            outcome
                .diagnostics
                .push(format!("async hook `{}` could not be started: {e}", s.hook));
        }
    }
    outcome.background.extend(started);
}

/// Every other event: its hooks run at once, each on a thread of its own (one runs on this
/// thread); their results come back in declared order.
pub(super) fn run_concurrently(
    hooks: &[&Hook],
    payload: &Map<String, Value>,
    run: &Run<'_>,
) -> Vec<process::Finished> {
    let bytes: Arc<[u8]> = serialize(payload);
    let args = payload.get("arguments").and_then(Value::as_object);
    match hooks {
        [] => Vec::new(),
        [hook] => vec![run_one(hook, &bytes, args, run)],
        _ => std::thread::scope(|scope| {
            let handles: Vec<_> = hooks
                .iter()
                .map(|hook| {
                    let bytes = Arc::clone(&bytes);
                    scope.spawn(move || run_one(hook, &bytes, args, run))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| process::Finished {
                        termination: Termination::SpawnFailed("runner thread panicked".into()),
                        stdout: String::new(),
                        stdout_truncated: false,
                        stderr: String::new(),
                        stderr_truncated: false,
                        duration: Duration::ZERO,
                        output_held_open: false,
                        pid: None,
                    })
                })
                .collect()
        }),
    }
}
