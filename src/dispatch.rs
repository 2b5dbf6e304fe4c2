//! Dispatching one event: pick the matching hooks, run them (as a pipeline or concurrently),
//! and combine what they did into one [`Outcome`].
//!
//! `pre_tool_use` and `user_prompt_submit` run in declared order, each hook seeing the arguments as
//! patched by the hooks before it, so a guard always judges what will really run; the first block
//! stops the chain. Every other event runs its hooks concurrently and combines their results in
//! declared order, so the outcome never depends on which hook finished first.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use crate::action::{self, Decision, InputPatch};
use crate::background;
use crate::backstop;
use crate::cancel::CancelToken;
use crate::config::call::CallMatch;
use crate::config::paths_filter::CallPaths;
use crate::config::{Config, Hook, Layer, OnError};
use crate::event::{Event, ExitTwo};
use crate::outcome::{ActionReport, HookReport, Outcome, Status, STDERR_EXCERPT};
use crate::paths::Paths;
use crate::process::{self, HookProcess, Termination};

/// One event to dispatch: build it with [`Request::new`] or [`Request::tool_call`], then set
/// the fields you need.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Request {
    /// The event to dispatch.
    pub event: Event,
    /// The payload object; `event`, `cwd` (and `tool` when given) are filled in when absent.
    pub payload: Map<String, Value>,
    /// Called on the payload after each pipeline patch of `arguments`, so fields that restate the
    /// arguments in another shape (an adapter's `tool_input`) stay in step: every later guard
    /// must judge what will really run, whichever field it reads.
    pub on_patch: Option<PayloadMirror>,
    /// Cancels the dispatch from another thread (the user pressed Esc, the turn was aborted):
    /// running hooks are killed, the rest never start, and the [`Outcome`] says so (see
    /// [`crate::cancel`]).
    pub cancel: Option<CancelToken>,
    /// Cancels the dispatch at this instant, the same way; each hook's own `timeout` still
    /// applies within it.
    pub deadline: Option<Instant>,
    /// Read a hook's plain (non-JSON) stdout as `context` for the model, as an adapter's agent
    /// does (Claude Code on SessionStart and UserPromptSubmit). Natively `false`: only a JSON
    /// object acts.
    pub plain_stdout_is_context: bool,
    /// The turn's denials so far, to turn on the denial backstop ([`crate::backstop`]): once a
    /// guard denied `denial_backstop` calls this turn, every further call it matches asks a
    /// human. Keep [`Outcome::denials`] for the turn's next call; `None` (the default) keeps the
    /// backstop off.
    pub denials: Option<crate::backstop::Denials>,
    /// How many times this turn really continued because of a stop hook, when the host counts
    /// them apart from the payload's `continuations` (which counts a repeated request twice);
    /// the cap's message then shows this count. The adapters and `ka-hooks run` set it from
    /// their [`Tracker`](crate::adapter::continuations::Tracker).
    pub continued: Option<u32>,
}

/// See [`Request::on_patch`].
#[derive(Clone)]
pub struct PayloadMirror(pub Arc<MirrorFn>);

/// Rewrites the agent-shaped fields of a payload from its `arguments`.
pub type MirrorFn = dyn Fn(&mut Map<String, Value>) + Send + Sync;

impl std::fmt::Debug for PayloadMirror {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PayloadMirror(..)")
    }
}

impl Request {
    /// A request for `event` with this payload.
    pub fn new(event: Event, payload: Map<String, Value>) -> Request {
        Request {
            event,
            payload,
            on_patch: None,
            cancel: None,
            deadline: None,
            plain_stdout_is_context: false,
            denials: None,
            continued: None,
        }
    }

    /// The same request, cancelled when `token` is.
    pub fn with_cancel(mut self, token: CancelToken) -> Request {
        self.cancel = Some(token);
        self
    }

    /// The same request, cancelled at `deadline`.
    pub fn with_deadline(mut self, deadline: Instant) -> Request {
        self.deadline = Some(deadline);
        self
    }

    /// A tool-call request: `{"tool": .., "arguments": ..}`.
    pub fn tool_call(event: Event, tool: &str, arguments: Map<String, Value>) -> Request {
        let mut payload = Map::new();
        payload.insert("tool".into(), Value::String(tool.to_owned()));
        payload.insert("arguments".into(), Value::Object(arguments));
        Request::new(event, payload)
    }
}

/// Why [`Config::replay`] could not run its hook.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ReplayError {
    /// No hook of the loaded layers has this name.
    #[error("no hook named `{0}` (see `ka-hooks list`)")]
    NoSuchHook(String),
    /// The hook exists, but for another event than the request's.
    #[error("hook `{name}` is a {actual} hook, not {requested}")]
    WrongEvent {
        /// The hook's name.
        name: String,
        /// The event it is defined for.
        actual: Event,
        /// The event of the request.
        requested: Event,
    },
}

impl Config {
    /// Run the hooks of `request.event` and combine their results. It cannot fail: whatever
    /// goes wrong with a hook or a layer is in the [`Outcome`], and fails closed where it must.
    pub fn dispatch(&self, request: Request) -> Outcome {
        dispatch(self, request, None)
    }

    /// Run hook `hook` alone on `request` (`ka-hooks run --hook`, golden tests, doctor), even
    /// if it is disabled or its filters do not match (a diagnostic says so). It is not a step of
    /// the session: async results and the snapshots of changed layers are left for the next
    /// [`Config::dispatch`].
    pub fn replay(&self, request: Request, hook: &str) -> Result<Outcome, ReplayError> {
        let found = self
            .hook(hook)
            .ok_or_else(|| ReplayError::NoSuchHook(hook.to_owned()))?;
        if found.event != request.event {
            return Err(ReplayError::WrongEvent {
                name: hook.to_owned(),
                actual: found.event,
                requested: request.event,
            });
        }
        Ok(dispatch(self, request, Some(found)))
    }
}

// The front page promises a `Config` can be shared behind an `Arc` across threads.
const _: fn() = || {
    fn shared<T: Send + Sync>() {}
    shared::<Config>();
};

/// See [`Config::dispatch`] and [`Config::replay`].
fn dispatch(config: &Config, request: Request, only_hook: Option<&Hook>) -> Outcome {
    dispatch_with(config, request, only_hook, true)
}

/// [`dispatch`]; with `deliver` false, results of the session's async hooks are left for its
/// receiver ([`crate::session::Session::poll_delivered`]) instead of this outcome.
pub(crate) fn dispatch_with(
    config: &Config,
    request: Request,
    only_hook: Option<&Hook>,
    deliver: bool,
) -> Outcome {
    // Results of this session's async hooks that ended since its last dispatch. (A `--hook`
    // replay is not a step of the session: it leaves them for the next one.)
    let delivered = match only_hook {
        Some(_) => Vec::new(),
        None if !deliver => Vec::new(),
        None => background::collect(request.payload.get("session_id").and_then(Value::as_str)),
    };
    let replay = only_hook.is_some();
    let mut outcome = run_hooks(config, request, only_hook);
    if !replay {
        // What changed since the last dispatch is said in this answer: the snapshots move on.
        outcome.diagnostics.extend(config.pending.record());
    }
    if !delivered.is_empty() {
        background::deliver(&mut outcome, delivered);
    }
    if let Some(log) = &config.settings.log {
        if let Err(e) = crate::audit::append(log, &outcome) {
            outcome.diagnostics.push(e);
        }
    }
    outcome
}

fn run_hooks(config: &Config, request: Request, only_hook: Option<&Hook>) -> Outcome {
    let Request {
        event,
        mut payload,
        on_patch,
        cancel,
        deadline,
        plain_stdout_is_context,
        denials,
        continued,
    } = request;
    let stop = Stop {
        token: cancel,
        deadline,
    };
    // While this lives, a signal to `ka-hooks` waits for the dispatch to end its hooks.
    let _watching = stop.token.as_ref().map(CancelToken::watch);
    let tool = payload
        .get("tool")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let mut outcome = Outcome::new(event, tool.clone());
    if event.acts_as() == Event::PreToolUse {
        outcome.arguments = payload.get("arguments").and_then(Value::as_object).cloned();
    }
    outcome.denials.clone_from(&denials);
    outcome.untrusted = config.untrusted.clone();
    outcome.announcements = config.announcements.clone();
    // A refused weakening is news for the user on every call (a guard someone tried to switch
    // off still guards); the other warnings are diagnostics.
    outcome.messages.extend(config.refused.iter().cloned());
    outcome.diagnostics.extend(
        config
            .warnings
            .iter()
            .filter(|w| !config.refused.contains(w))
            .cloned(),
    );

    // The payload's `cwd`, else the process's: worked out once (a `getcwd` each time otherwise).
    let fallback_cell = std::cell::OnceCell::new();
    let cwd_fallback = || {
        fallback_cell
            .get_or_init(|| {
                payload
                    .get("cwd")
                    .and_then(Value::as_str)
                    .map(PathBuf::from)
                    .or_else(|| std::env::current_dir().ok())
                    .unwrap_or_else(|| PathBuf::from("/"))
            })
            .clone()
    };
    // `paths` and `if` are checked in-process: a hook that does not match is never spawned.
    let root = config.project_root.clone().unwrap_or_else(cwd_fallback);
    let args = payload.get("arguments").and_then(Value::as_object);
    let call_paths = CallPaths::new(args, &root, config.has_paths_filters());
    let call = CallMatch::new(config, tool.as_deref(), args, &call_paths, &root);
    let mut hooks: Vec<&Hook> = match only_hook {
        Some(hook) => {
            let name = &hook.name;
            if !hook.enabled {
                outcome.diagnostics.push(format!(
                    "hook `{name}` is disabled; ran it because --hook asked"
                ));
            }
            if !hook.matches_tool(tool.as_deref()) {
                outcome.diagnostics.push(format!(
                    "hook `{name}` ({}) does not match tool {:?}; ran it because --hook asked",
                    hook.filter.describe(),
                    tool.as_deref().unwrap_or("(none)")
                ));
            }
            vec![hook]
        }
        None => matching_hooks(config, event, tool.as_deref(), &payload, &call),
    };
    // Guards let through because their `if` could not be checked statically: say why.
    outcome.diagnostics.extend(call.take_unchecked());
    if let Some(why) = &config.settings.disabled {
        if only_hook.is_none() {
            // Managed hooks cannot be turned off from below.
            hooks.retain(|h| h.is_managed());
            outcome
                .diagnostics
                .push(format!("every hook but managed ones is off: {why}"));
            outcome.announcements.push(format!(
                "every ka hook except managed ones is off ({}): no user or project guard ran \
                 for this call; {}",
                crate::terminal::escape(why),
                if why.starts_with("KA_HOOKS_DISABLE") {
                    "unset KA_HOOKS_DISABLE to turn them back on"
                } else {
                    "remove `disable_all = true` to turn them back on"
                }
            ));
        }
    }
    // A permission request is the same call on its way to a human: a hook's `allow` there must
    // not approve a call aimed at ka's own files either.
    if event.acts_as() == Event::PreToolUse && only_hook.is_none() {
        let args = payload.get("arguments").and_then(Value::as_object);
        if let Some(reason) = crate::protect::check(config, args, &cwd_fallback()) {
            outcome.decision = Some(Decision::Ask);
            outcome.reason = Some(reason);
        }
    }
    if hooks.is_empty() {
        return outcome;
    }
    if !event.is_pipeline() && only_hook.is_none() {
        // `async = true`: handed over before anything else is worked out (a stale guard is
        // answered at once).
        let (later, now): (Vec<&Hook>, Vec<&Hook>) =
            hooks.iter().partition(|h| h.is_async && h.stale.is_none());
        if !later.is_empty() {
            let handover = Handover {
                tool: tool.as_deref(),
                root: &root,
                cwd: fallback_cell.get().cloned(),
                plain_context: plain_stdout_is_context,
            };
            if now.is_empty() {
                // Nothing runs now: the payload itself goes.
                let payload = std::mem::take(&mut payload);
                start_background(config, &later, payload, &handover, &mut outcome);
                return outcome;
            }
            start_background(config, &later, payload.clone(), &handover, &mut outcome);
            hooks = now;
        }
    }

    let cwd_fallback = cwd_fallback();
    let preferred = config.run_dir(&cwd_fallback);
    let run_dir = match working_dir(preferred, || Fallbacks::of(config)) {
        Ok(dir) => dir,
        Err((dir, why)) => {
            outcome.diagnostics.push(why);
            dir
        }
    };
    fill_payload(event, &mut payload, || cwd_fallback.clone());

    let payload_continuations = Continuations::of(&payload, continued);
    let base_env = base_env(event, &run_dir, tool.as_deref());
    let run = Run {
        dir: &run_dir,
        env: &base_env,
        stop: &stop,
        tool: tool.as_deref(),
        root: &root,
        replay: only_hook.is_some(),
        plain_context: plain_stdout_is_context,
    };
    if event.is_pipeline() {
        let backstop = denials
            .filter(|_| event == Event::PreToolUse && only_hook.is_none())
            .and_then(|denials| {
                let args = payload.get("arguments").and_then(Value::as_object);
                let call = (tool.as_deref(), args, root.as_path());
                backstop::Armed::arm(config.settings.denial_backstop, denials, &hooks, call)
            });
        let denied_by = run_pipeline(&hooks, payload, on_patch.as_ref(), &run, &mut outcome);
        if let Some(armed) = backstop {
            let call = (tool.as_deref(), root.as_path());
            armed.settle(&hooks, call, denied_by, &mut outcome);
        }
    } else {
        let bytes: Arc<[u8]> = serialize(&payload);
        let args = payload.get("arguments").and_then(Value::as_object);
        let finished: Vec<process::Finished> = if hooks.is_empty() {
            Vec::new()
        } else if hooks.len() == 1 {
            vec![run_one(hooks[0], &bytes, args, &run)]
        } else {
            std::thread::scope(|scope| {
                let handles: Vec<_> = hooks
                    .iter()
                    .map(|hook| {
                        let bytes = Arc::clone(&bytes);
                        let run = &run;
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
            })
        };
        for (hook, finished) in hooks.iter().zip(finished) {
            combine_observational(hook, finished, run.plain_context, &mut outcome);
        }
    }
    mark_cancelled(&stop, &mut outcome);
    no_pre_approval_past_a_failed_guard(&mut outcome);
    govern_continuation(config, &payload_continuations, &mut outcome);
    if outcome.decision == Some(Decision::Allow) && !outcome.blocked {
        outcome.diagnostics.push(
            "decision `allow` is a request: the host's hardstops, protected paths and deny rules \
             still apply"
                .into(),
        );
    }
    outcome
}

/// A failed guard never pre-approves: when a hook of a tool call failed (error, timeout, cannot
/// start, voided or cut output), whatever its `on_error`, an `allow` from the others is dropped,
/// and the call goes to the agent's normal permission flow. The user hears which guard failed.
/// (An `allow` skips the permission prompt; a guard that could not say no must not let it.)
fn no_pre_approval_past_a_failed_guard(outcome: &mut Outcome) {
    if outcome.event.acts_as() != Event::PreToolUse
        || outcome.blocked
        || outcome.decision != Some(Decision::Allow)
    {
        return;
    }
    let failed: Vec<String> = outcome
        .hooks
        .iter()
        .filter(|h| h.status == Status::Error)
        .map(|h| format!("`{}`", h.name))
        .collect();
    if failed.is_empty() {
        return;
    }
    outcome.decision = None;
    outcome.reason = None;
    outcome.messages.push(format!(
        "a ka hook pre-approved this call, but guard {} failed, so it is not pre-approved: \
         the normal permission rules decide",
        failed.join(", ")
    ));
}

/// The enabled hooks of `event` for this payload: on tool events, those whose tool filter
/// matches; on events with another matcher field (`source` of session_start, `trigger` of
/// pre_compact, ...), those whose `matcher` matches that field (Claude Code's matchers, hooks
/// reference "Matcher patterns"). A failed tool call runs the `post_tool_use` hooks first
/// (they see `is_error: true`), then the `post_tool_use_failure` ones.
fn matching_hooks<'c>(
    config: &'c Config,
    event: Event,
    tool: Option<&'c str>,
    payload: &Map<String, Value>,
    call: &CallMatch<'_>,
) -> Vec<&'c Hook> {
    let mut hooks: Vec<&Hook> = Vec::new();
    // A pipeline checks each hook again on the arguments as patched so far (see run_pipeline):
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

/// The dispatcher's fields of the payload: `event` (the dispatcher, not the caller's payload,
/// says which event this is; KA_EVENT agrees), the event's own fields, and `cwd` when absent.
pub(crate) fn fill_payload(
    event: Event,
    payload: &mut Map<String, Value>,
    cwd: impl FnOnce() -> PathBuf,
) {
    payload.insert("event".into(), Value::String(event.as_str().to_owned()));
    fill_event_fields(event, payload);
    payload
        .entry("cwd")
        .or_insert_with(|| Value::String(cwd().to_string_lossy().into_owned()));
}

/// This process's working directory (`/` when it has none).
pub(crate) fn process_cwd() -> PathBuf {
    std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"))
}

/// Fields every hook of `event` may rely on, whatever the host sent. (`stop_hook_active` and
/// `continuations` on stop-like events come from the host, which alone knows the turn: an
/// absent `continuations` reads as 0.)
fn fill_event_fields(event: Event, payload: &mut Map<String, Value>) {
    if event == Event::PostToolUseFailure {
        payload.insert("is_error".into(), Value::Bool(true));
    }
}

/// How many continuations this turn already had: the payload's `continuations` (what the cap
/// compares, a repeated request counting twice), and how many really happened when the host
/// counted them ([`Request::continued`]).
struct Continuations {
    counted: u64,
    happened: Option<u32>,
}

impl Continuations {
    fn of(payload: &Map<String, Value>, happened: Option<u32>) -> Continuations {
        Continuations {
            counted: payload
                .get("continuations")
                .and_then(Value::as_u64)
                .unwrap_or(0),
            happened,
        }
    }

    /// "continued 5 time(s) (9 counting each repeated request twice)", or the plain count.
    fn said(&self) -> String {
        match self.happened {
            Some(times) if u64::from(times) != self.counted => format!(
                "continued {times} time(s) ({} counting each repeated request twice)",
                self.counted
            ),
            _ => format!("continued {} time(s)", self.counted),
        }
    }
}

/// A request to keep going is applied only while the turn is under
/// `[hook_settings] max_continuations`; past it, and when a hook halted the turn, it is
/// recorded and a note says so.
fn govern_continuation(config: &Config, had: &Continuations, outcome: &mut Outcome) {
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
        let note = format!(
            "a stop hook asked to keep going, but this turn already {} \
             (max_continuations = {max}); the agent stops",
            had.said()
        );
        outcome
            .diagnostics
            .push(format!("{note}; not applied: {}", excerpt(&text)));
        outcome.notes.push(note);
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
fn excerpt(text: &str) -> String {
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
fn mark_cancelled(stop: &Stop, outcome: &mut Outcome) {
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

/// Where hooks run when the directory they should run in cannot be entered (see
/// [`working_dir`]): what a dispatch knows of them without a system call.
#[derive(Debug, Clone, Default)]
pub(crate) struct Fallbacks {
    pub project_root: Option<PathBuf>,
    /// The user layer's directory; without one, the user's config dir is looked up when needed.
    pub user_dir: Option<PathBuf>,
}

impl Fallbacks {
    pub(crate) fn of(config: &Config) -> Fallbacks {
        Fallbacks {
            project_root: config.project_root.clone(),
            user_dir: config
                .layers
                .iter()
                .find(|l| l.layer == Layer::User)
                .and_then(|l| l.file.parent().map(Path::to_path_buf)),
        }
    }
}

/// The directory hooks run in: `preferred` (the project root, else the payload's `cwd`) when it
/// can be entered; otherwise the first of the project root, the session's root (the working
/// directory of this process: where the agent or `ka-hooks` was started), the user's config dir
/// and `/` that can, with a diagnostic saying which and why. A guard must never fail to start,
/// and so fail open, because the model `cd`'d into a directory it then deleted.
pub(crate) fn working_dir(
    preferred: &Path,
    fallbacks: impl FnOnce() -> Fallbacks,
) -> Result<PathBuf, (PathBuf, String)> {
    let why = match enterable(preferred) {
        Ok(()) => return Ok(preferred.to_path_buf()),
        Err(why) => why,
    };
    let Fallbacks {
        project_root,
        user_dir,
    } = fallbacks();
    let user_dir = user_dir.or_else(|| Paths::from_env().config_dir);
    let candidates = [
        (project_root, "the project root"),
        (std::env::current_dir().ok(), "the session's root"),
        (user_dir, "the user's config dir"),
    ];
    let (dir, which) = candidates
        .into_iter()
        .filter_map(|(dir, which)| Some((dir?, which)))
        .find(|(dir, _)| enterable(dir).is_ok())
        .unwrap_or_else(|| (PathBuf::from("/"), "`/`"));
    let message = format!(
        "the working directory {} cannot be entered ({why}); hooks ran in {which}, {}",
        preferred.display(),
        dir.display()
    );
    Err((dir, message))
}

/// `Ok` when `dir` is a directory this process may enter (search permission).
fn enterable(dir: &Path) -> Result<(), String> {
    use std::os::unix::ffi::OsStrExt;
    match std::fs::metadata(dir) {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => return Err("not a directory".to_owned()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err("it does not exist".to_owned())
        }
        Err(e) => return Err(e.to_string()),
    }
    let path = std::ffi::CString::new(dir.as_os_str().as_bytes())
        .map_err(|_| "a NUL byte in the path".to_owned())?;
    // SAFETY: `path` is a valid NUL-terminated string that outlives the call; access only reads it.
    if unsafe { libc::access(path.as_ptr(), libc::X_OK) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error().to_string())
    }
}

/// The environment every hook of this dispatch shares: `KA_EVENT`, `KA_PROJECT_DIR` (and
/// `CLAUDE_PROJECT_DIR`), `KA_AGENT_TOOL_CALL`, `KA_TOOL`.
pub(crate) fn base_env(event: Event, run_dir: &Path, tool: Option<&str>) -> Vec<(String, String)> {
    let dir = run_dir.to_string_lossy().into_owned();
    let mut env = vec![
        ("KA_EVENT".to_owned(), event.as_str().to_owned()),
        ("KA_PROJECT_DIR".to_owned(), dir.clone()),
        ("CLAUDE_PROJECT_DIR".to_owned(), dir),
        // A hook runs inside an agent's tool call: `ka-hooks trust` refuses there.
        ("KA_AGENT_TOOL_CALL".to_owned(), "1".to_owned()),
    ];
    if let (true, Some(tool)) = (event.is_tool_event(), tool) {
        env.push(("KA_TOOL".to_owned(), tool.to_owned()));
    }
    env
}

fn serialize(payload: &Map<String, Value>) -> Arc<[u8]> {
    // A Map of Values always serialises; the fallback only keeps this panic-free.
    serde_json::to_vec(payload)
        .unwrap_or_else(|_| b"{}".to_vec())
        .into()
}

/// What stops a dispatch early: its cancel token and its deadline.
struct Stop {
    token: Option<CancelToken>,
    deadline: Option<Instant>,
}

impl Stop {
    fn stopped(&self) -> bool {
        self.token.as_ref().is_some_and(CancelToken::is_cancelled)
            || self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    /// Why it stopped, in words.
    fn reason(&self) -> String {
        self.token
            .as_ref()
            .and_then(CancelToken::reason)
            .unwrap_or_else(|| "the dispatch deadline passed".to_owned())
    }
}

/// What every hook of one dispatch shares.
struct Run<'a> {
    dir: &'a Path,
    env: &'a [(String, String)],
    stop: &'a Stop,
    tool: Option<&'a str>,
    /// The project root (else the working directory): `paths` globs and `{root}`.
    root: &'a Path,
    /// `--hook NAME`: run it whatever its filters say.
    replay: bool,
    /// See [`Request::plain_stdout_is_context`].
    plain_context: bool,
}

fn run_one(
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

/// Run `hook` as its sandbox `plan` says, `{root}` being `root`: confined, unconfined, or not at
/// all (a failure its `on_error` judges: `require_sandbox` where it cannot be confined, or a
/// ruleset that could not be built).
pub(crate) fn run_sandboxed(
    hook: &HookProcess<'_>,
    plan: &crate::sandbox::Plan,
    root: &Path,
) -> process::Finished {
    match crate::sandbox::Run::prepare(plan, root) {
        crate::sandbox::Run::Unconfined => process::run(hook),
        crate::sandbox::Run::Confined(prepared) => process::run_confined(hook, Some(&prepared)),
        crate::sandbox::Run::Refused(why) => process::Finished {
            termination: Termination::SpawnFailed(why),
            stdout: String::new(),
            stdout_truncated: false,
            stderr: String::new(),
            stderr_truncated: false,
            duration: Duration::ZERO,
            output_held_open: false,
            pid: None,
        },
    }
}

/// What `hook` runs for this call: its command (placeholders filled in), its working directory
/// and the variables set for it.
fn prepare<'r>(
    hook: &'r Hook,
    args: Option<&Map<String, Value>>,
    run: &Run<'r>,
) -> (std::borrow::Cow<'r, str>, &'r Path, Vec<(String, String)>) {
    let env = hook_env(run.env, &hook.name, &hook.env);
    let cwd = hook_dir(hook.root.as_deref(), run.dir);
    (hook.command_for(run.tool, args, run.root), cwd, env)
}

/// The variables set for hook `name`: the dispatch's, its name, its own.
pub(crate) fn hook_env(
    base: &[(String, String)],
    name: &str,
    own: &[(String, String)],
) -> Vec<(String, String)> {
    let mut env = Vec::with_capacity(base.len() + 1 + own.len());
    env.extend_from_slice(base);
    env.push(("KA_HOOK_NAME".to_owned(), name.to_owned()));
    env.extend(own.iter().cloned());
    env
}

/// Where a hook runs: a project layer's hooks in their own `root` (an outer `.ka/` is not the
/// inner one) when it is a directory, the others in `dir`.
pub(crate) fn hook_dir<'a>(root: Option<&'a Path>, dir: &'a Path) -> &'a Path {
    root.filter(|r| r.is_dir()).unwrap_or(dir)
}

/// What [`start_background`] needs of the call besides its payload.
struct Handover<'a> {
    tool: Option<&'a str>,
    /// The project root (else the working directory): `paths` globs, `{root}`, and where the
    /// hooks run.
    root: &'a Path,
    /// The payload's `cwd`, else the process's, if worked out already.
    cwd: Option<PathBuf>,
    plain_context: bool,
}

/// Hand the async hooks of this call to the background; the outcome lists them as started.
/// Only what takes no system call happens here (their paths and commands); the rest is left to
/// the background (see [`background::Batch`]).
fn start_background(
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

/// `pre_tool_use` / `user_prompt_submit`: in order, each hook sees the arguments patched so far.
/// Returns the hook that said no (exit 2, a deny or a block), when one did.
fn run_pipeline<'h>(
    hooks: &[&'h Hook],
    mut payload: Map<String, Value>,
    on_patch: Option<&PayloadMirror>,
    run: &Run<'_>,
    outcome: &mut Outcome,
) -> Option<&'h Hook> {
    let mut bytes = serialize(&payload);
    let mut patched = false;
    let mut denied_by = None;
    for (i, hook) in hooks.iter().enumerate() {
        if outcome.blocked || run.stop.stopped() {
            let cancelled = !outcome.blocked;
            for skipped in &hooks[i..] {
                outcome.hooks.push(skipped_report(skipped, cancelled));
            }
            break;
        }
        let args = payload.get("arguments").and_then(Value::as_object);
        if !run.replay && !hook.matches_call(run.tool, args, run.root) {
            // Its `paths` / `if` no longer match the call as patched so far.
            continue;
        }
        let finished = run_one(hook, &bytes, args, run);
        let mut report = report(hook, &finished);
        if !hook.enforce {
            would_have(hook, &finished, &mut report, outcome);
            continue;
        }
        match report.status {
            Status::Ok => {
                if let Some(action) =
                    read_action(hook, &finished, run.plain_context, &mut report, outcome)
                {
                    if let Some(patch) = &action.input_patch {
                        let args = payload
                            .entry("arguments")
                            .or_insert_with(|| Value::Object(Map::new()));
                        if !args.is_object() {
                            *args = Value::Object(Map::new());
                        }
                        if let Value::Object(args) = args {
                            patch.apply(args);
                            if matches!(patch, InputPatch::Replace(_)) {
                                outcome.diagnostics.push(format!(
                                    "hook `{}` replaced the whole input (Claude `updatedInput`)",
                                    hook.name
                                ));
                            }
                        }
                        patched = true;
                        if let Some(mirror) = on_patch {
                            (mirror.0)(&mut payload);
                        }
                        bytes = serialize(&payload);
                    }
                    apply_common(&action, outcome);
                    if let Some(d) = action.decision {
                        apply_decision(hook, d, action.reason.clone(), outcome);
                    } else if action.reason.is_some() && outcome.reason.is_none() {
                        outcome.diagnostics.push(format!(
                            "hook `{}` gave a `reason` without a `decision`; kept for the record",
                            hook.name
                        ));
                    }
                    if let Some(reason) = action.block.clone() {
                        block(outcome, non_empty(reason, hook));
                    }
                    if action.halt.is_some() && !outcome.blocked {
                        // The halt's reason is for the user; the model learns only that the
                        // call (or prompt) did not go ahead.
                        block(
                            outcome,
                            format!("the turn was halted by hook `{}`", hook.name),
                        );
                    }
                }
            }
            Status::Blocked => block(outcome, block_reason(hook, &finished.stderr)),
            Status::Error => apply_failure(hook, &failure_text(hook, &finished), outcome),
            Status::Skipped | Status::Cancelled => {}
        }
        if outcome.blocked && matches!(report.status, Status::Ok | Status::Blocked) {
            denied_by = Some(*hook);
        }
        outcome.hooks.push(report);
    }
    if patched && !outcome.blocked {
        outcome.updated_input = payload.get("arguments").and_then(Value::as_object).cloned();
    }
    denied_by
}

/// Judge one finished run of `hook` on an event that cannot be vetoed, into `outcome` (an async
/// hook's run, in the background).
pub(crate) fn judge_observational(
    hook: &Hook,
    finished: process::Finished,
    plain_context: bool,
    outcome: &mut Outcome,
) {
    combine_observational(hook, finished, plain_context, outcome);
}

/// Every other event: results combined in declared order.
fn combine_observational(
    hook: &Hook,
    finished: process::Finished,
    plain_context: bool,
    outcome: &mut Outcome,
) {
    let mut report = report(hook, &finished);
    if !hook.enforce {
        return would_have(hook, &finished, &mut report, outcome);
    }
    match report.status {
        Status::Ok => {
            if let Some(action) = read_action(hook, &finished, plain_context, &mut report, outcome)
            {
                apply_common(&action, outcome);
                if let Some(feedback) = action.feedback {
                    append_feedback(outcome, feedback);
                }
                if action.mark_error {
                    outcome.mark_error = true;
                }
                if let Some(text) = &action.keep_going {
                    append_line(&mut outcome.keep_going, text);
                }
            }
        }
        Status::Blocked => exit_two_observed(hook, &finished.stderr, outcome),
        Status::Error => apply_failure(hook, &failure_text(hook, &finished), outcome),
        Status::Skipped | Status::Cancelled => {}
    }
    outcome.hooks.push(report);
}

/// What exit 2 means on an event that cannot be blocked.
fn exit_two_observed(hook: &Hook, stderr: &str, outcome: &mut Outcome) {
    match outcome.event.exit_two() {
        ExitTwo::MarkError | ExitTwo::Feedback => {
            outcome.mark_error = true;
            let text = stderr.trim();
            if !text.is_empty() {
                append_feedback(outcome, text.to_owned());
            }
        }
        // Claude Code: exit 2 on Stop "prevents stopping" and stderr tells Claude how to go on
        // (hooks reference, "Exit code 2 behavior"). The seed reserved stop's exit 2 for this.
        ExitTwo::KeepGoing => {
            let text = match stderr.trim() {
                "" => format!("hook `{}` asked you to keep going", hook.name),
                text => text.to_owned(),
            };
            append_line(&mut outcome.keep_going, &text);
        }
        _ => outcome.diagnostics.push(format!(
            "hook `{}` exited 2 on {}: recorded, no effect ({} cannot be blocked)",
            hook.name, outcome.event, outcome.event
        )),
    }
}

/// Appends `text` to an optional `\n`-joined text.
fn append_line(target: &mut Option<String>, text: &str) {
    match target {
        Some(existing) => {
            existing.push('\n');
            existing.push_str(text);
        }
        None => *target = Some(text.to_owned()),
    }
}

fn append_feedback(outcome: &mut Outcome, text: String) {
    match &mut outcome.feedback {
        Some(existing) => {
            existing.push('\n');
            existing.push_str(&text);
        }
        None => outcome.feedback = Some(text),
    }
}

/// `mode`, `note`, the user message, `context` and `halt`.
fn apply_common(action: &action::Action, outcome: &mut Outcome) {
    outcome.deferred |= action.deferred;
    for rule in action.permission_updates.iter().flatten() {
        if !outcome.permission_updates.contains(rule) {
            outcome.permission_updates.push(rule.clone());
        }
    }
    if let Some(mode) = &action.mode {
        outcome.mode = Some(mode.clone());
    }
    if let Some(note) = &action.note {
        outcome.notes.push(note.clone());
    }
    if let Some(message) = &action.message {
        outcome.messages.push(message.clone());
    }
    if let Some(context) = &action.context {
        append_line(&mut outcome.context, context);
    }
    if let Some(reason) = &action.halt {
        match &mut outcome.halt {
            Some(existing) if !reason.is_empty() => {
                if !existing.is_empty() {
                    existing.push_str("; ");
                }
                existing.push_str(reason);
            }
            Some(_) => {}
            None => outcome.halt = Some(reason.clone()),
        }
    }
}

/// Combine deny > ask > allow; a deny blocks.
fn apply_decision(hook: &Hook, decision: Decision, reason: Option<String>, outcome: &mut Outcome) {
    match decision {
        Decision::Deny => block(
            outcome,
            reason.unwrap_or_else(|| format!("denied by hook {}", hook.name)),
        ),
        Decision::Ask => {
            if outcome.decision != Some(Decision::Ask) {
                outcome.reason =
                    Some(reason.unwrap_or_else(|| format!("hook {} asks for a human", hook.name)));
            }
            outcome.decision = Some(Decision::Ask);
        }
        Decision::Allow => {
            if outcome.decision.is_none() {
                outcome.decision = Some(Decision::Allow);
                outcome.reason = reason;
            }
        }
    }
}

fn block(outcome: &mut Outcome, reason: String) {
    outcome.blocked = true;
    outcome.decision = None;
    outcome.reason = Some(reason);
}

fn non_empty(reason: String, hook: &Hook) -> String {
    if reason.trim().is_empty() {
        format!("blocked by hook {}", hook.name)
    } else {
        reason
    }
}

fn block_reason(hook: &Hook, stderr: &str) -> String {
    non_empty(stderr.trim().to_owned(), hook)
}

/// What went wrong with a hook that ended badly, for its `on_error` diagnostic or block reason.
fn failure_text(hook: &Hook, finished: &process::Finished) -> String {
    let failure = match finished.termination {
        Termination::Exited(2) => "exit 2: the shell could not open the script".to_owned(),
        _ => finished.termination.describe_with_timeout(hook.timeout),
    };
    match finished.termination {
        Termination::Exited(127) => format!("{failure}: command not found"),
        Termination::Exited(126) => format!("{failure}: command not executable"),
        _ => failure,
    }
}

/// Exit 0: read stdout as an action; `None` when there is nothing to apply. Output that cannot be
/// applied (cut at the cap, so not one JSON object; or one object voided by a key of the wrong
/// type or event) is a failure of the hook that `on_error` decides, never an `ok` that says
/// nothing: a guard whose deny cannot be read must not read as an allow. Empty stdout and plain
/// text stay "nothing to say".
fn read_action(
    hook: &Hook,
    finished: &process::Finished,
    plain_context: bool,
    report: &mut HookReport,
    outcome: &mut Outcome,
) -> Option<action::Action> {
    if finished.stdout_truncated {
        let why = format!(
            "stdout exceeded the {} KiB cap and was cut, so it is not one JSON object; none of \
             it was applied",
            process::STDOUT_CAP / 1024
        );
        output_failure(hook, why, report, outcome);
        return None;
    }
    let mut parsed = action::parse(&finished.stdout, outcome.event);
    if plain_context && parsed.action.is_none() && !parsed.voided {
        if let Some(plain) = action::plain_context(&finished.stdout, outcome.event) {
            parsed = plain;
        }
    }
    if parsed.voided {
        let why = format!(
            "its stdout object cannot be applied: {}",
            parsed.diagnostics.join("; ")
        );
        output_failure(hook, why, report, outcome);
        return None;
    }
    note_parse(hook, parsed, report, outcome)
}

/// A report-only hook (`enforce = false`): record what it would have done, apply nothing.
fn would_have(
    hook: &Hook,
    finished: &process::Finished,
    report: &mut HookReport,
    outcome: &mut Outcome,
) {
    use crate::outcome::{Effect, WouldHave};
    let event = outcome.event;
    let (effect, detail) = match report.status {
        Status::Blocked if event.is_pipeline() => {
            (Effect::Block, Some(block_reason(hook, &finished.stderr)))
        }
        Status::Blocked if event.acts_as() == Event::PostToolUse => {
            (Effect::MarkError, Some(finished.stderr.trim().to_owned()))
        }
        Status::Blocked if event.can_keep_going() => {
            (Effect::KeepGoing, Some(finished.stderr.trim().to_owned()))
        }
        Status::Error => (
            Effect::Fail,
            report
                .error
                .clone()
                .map(|e| format!("{e}; on_error = {}", hook.on_error.as_str())),
        ),
        Status::Ok if finished.stdout_truncated => {
            (Effect::Fail, Some("stdout exceeded its cap".to_owned()))
        }
        Status::Ok => {
            let parsed = action::parse(&finished.stdout, event);
            match parsed.action {
                _ if parsed.voided => (Effect::Fail, Some(parsed.diagnostics.join("; "))),
                Some(a) if a.halt.is_some() => (Effect::Halt, a.halt.clone()),
                Some(a) if a.keep_going.is_some() => (Effect::KeepGoing, a.keep_going.clone()),
                Some(a) if a.mark_error => (Effect::MarkError, a.feedback.clone()),
                Some(a) => match (a.decision, &a.block, &a.input_patch, &a.feedback) {
                    (Some(Decision::Deny), ..) | (_, Some(_), ..) => {
                        (Effect::Block, a.reason.clone().or(a.block.clone()))
                    }
                    (Some(Decision::Ask), ..) => (Effect::Ask, a.reason.clone()),
                    (_, _, Some(InputPatch::Merge(m) | InputPatch::Replace(m)), _) => {
                        let keys: Vec<&str> = m.keys().map(String::as_str).collect();
                        (Effect::Rewrite, Some(keys.join(", ")))
                    }
                    (Some(Decision::Allow), ..) => (Effect::Allow, a.reason.clone()),
                    (_, _, _, Some(f)) => (Effect::Feedback, Some(f.clone())),
                    _ => (Effect::Nothing, None),
                },
                None => (Effect::Nothing, None),
            }
        }
        _ => (Effect::Nothing, None),
    };
    report.action.ignored = Some(format!(
        "report-only (enforce = false): would {}; not applied",
        effect.as_str()
    ));
    outcome.report_only.push(WouldHave {
        hook: hook.name.clone(),
        effect,
        detail: detail.filter(|d| !d.is_empty()),
    });
    outcome.hooks.push(report.clone());
}

/// Exit 0 with output that cannot be applied: the hook's status becomes `error`.
fn output_failure(hook: &Hook, why: String, report: &mut HookReport, outcome: &mut Outcome) {
    report.status = Status::Error;
    report.action = ActionReport {
        applied: false,
        action: None,
        ignored: Some(why.clone()),
    };
    apply_failure(hook, &why, outcome);
    report.error = Some(why);
}

/// A failing hook: `on_error` decides: open (`ignore`), closed (`block`) or a human (`ask`).
fn apply_failure(hook: &Hook, failure: &str, outcome: &mut Outcome) {
    let event = outcome.event;
    match hook.on_error {
        OnError::Ignore => outcome.diagnostics.push(format!(
            "hook `{}` failed ({failure}); ignored (on_error = \"ignore\")",
            hook.name
        )),
        OnError::Block => {
            let reason = format!(
                "hook `{}` failed ({failure}) and on_error = \"block\"",
                hook.name
            );
            match event {
                _ if event.is_pipeline() => block(outcome, reason),
                _ if event.acts_as() == Event::PostToolUse => {
                    exit_two_observed(hook, &reason, outcome)
                }
                _ => outcome.diagnostics.push(format!(
                    "{reason}: recorded, no effect ({event} cannot be blocked)"
                )),
            }
        }
        OnError::Ask if event.acts_as() == Event::PreToolUse => {
            let reason = format!(
                "hook `{}` failed ({failure}) and on_error = \"ask\"",
                hook.name
            );
            apply_decision(hook, Decision::Ask, Some(reason), outcome);
        }
        OnError::Ask if event.is_pipeline() => {
            // A prompt cannot be put to a human the way a tool call can: fail closed.
            block(
                outcome,
                format!(
                    "hook `{}` failed ({failure}) and on_error = \"ask\" (blocked: {event} has no ask)",
                    hook.name
                ),
            );
        }
        OnError::Ask => outcome.diagnostics.push(format!(
            "hook `{}` failed ({failure}); on_error = \"ask\" has no effect on {event}",
            hook.name
        )),
    }
}

/// Record the parse result on the report; returns the action to apply.
fn note_parse(
    hook: &Hook,
    parsed: action::Parsed,
    report: &mut HookReport,
    outcome: &mut Outcome,
) -> Option<action::Action> {
    for d in &parsed.diagnostics {
        outcome
            .diagnostics
            .push(format!("hook `{}`: {d}", hook.name));
    }
    report.action = ActionReport {
        applied: parsed.action.is_some(),
        action: parsed.action.clone(),
        ignored: if parsed.action.is_none() && !parsed.diagnostics.is_empty() {
            Some(parsed.diagnostics.join("; "))
        } else {
            None
        },
    };
    parsed.action
}

/// dash (Debian's `sh`) exits 2 when it cannot open a script (`sh: 0: cannot open x.sh: No such
/// file`): a typo in a guard's path must read as a broken hook, never as a deliberate veto.
fn shell_could_not_open_script(stderr: &str) -> bool {
    let first = stderr.lines().next().unwrap_or("");
    first.starts_with("sh: ")
        && (first.contains(": cannot open ") || first.contains(": Can't open "))
}

fn report(hook: &Hook, finished: &process::Finished) -> HookReport {
    let status = match finished.termination {
        Termination::Exited(0) => Status::Ok,
        Termination::Cancelled => Status::Cancelled,
        Termination::Exited(2) if shell_could_not_open_script(&finished.stderr) => Status::Error,
        Termination::Exited(2) => Status::Blocked,
        _ => Status::Error,
    };
    let error =
        matches!(status, Status::Error | Status::Cancelled).then(|| match finished.termination {
            Termination::Exited(2) => format!(
                "exit 2: the shell could not open the script ({})",
                finished.stderr.lines().next().unwrap_or("").trim()
            ),
            _ => finished.termination.describe_with_timeout(hook.timeout),
        });
    let excerpt = |text: &str| {
        let mut cut = text.len().min(STDERR_EXCERPT);
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text[..cut].to_owned()
    };
    let stderr = excerpt(&finished.stderr);
    let stdout = excerpt(&finished.stdout);
    let mut report = HookReport {
        name: hook.name.clone(),
        source: hook.source.clone(),
        command: hook.command.clone(),
        status,
        exit_code: finished.termination.exit_code(),
        signal: finished
            .termination
            .signal()
            .map(|s| process::signal_name(s).map_or_else(|| format!("signal {s}"), str::to_owned)),
        timed_out: finished.termination == Termination::TimedOut,
        duration_ms: finished.duration.as_secs_f64() * 1000.0,
        error,
        on_error: hook.on_error,
        stderr,
        stdout,
        stdout_truncated: finished.stdout_truncated,
        stderr_truncated: finished.stderr_truncated,
        action: ActionReport {
            applied: false,
            action: None,
            ignored: None,
        },
        sandbox: hook.sandbox.describe(crate::sandbox::probe()),
        sandbox_note: crate::sandbox::note(
            &hook.sandbox,
            finished.termination.exit_code(),
            &finished.stderr,
        ),
    };
    if finished.output_held_open {
        let held = "stdout/stderr still held open by a process that left the hook's process group";
        report.error = Some(match report.error.take() {
            Some(e) => format!("{e}; {held}"),
            None => held.to_owned(),
        });
    }
    report
}

/// A pipeline hook that did not run: an earlier one blocked, or the dispatch was cancelled.
fn skipped_report(hook: &Hook, cancelled: bool) -> HookReport {
    HookReport {
        name: hook.name.clone(),
        source: hook.source.clone(),
        command: hook.command.clone(),
        status: if cancelled {
            Status::Cancelled
        } else {
            Status::Skipped
        },
        exit_code: None,
        signal: None,
        timed_out: false,
        duration_ms: 0.0,
        error: None,
        on_error: hook.on_error,
        stderr: String::new(),
        stdout: String::new(),
        stdout_truncated: false,
        stderr_truncated: false,
        action: ActionReport {
            applied: false,
            action: None,
            ignored: Some(if cancelled {
                "not run: the dispatch was cancelled".into()
            } else {
                "not run: an earlier hook blocked".into()
            }),
        },
        sandbox: None,
        sandbox_note: None,
    }
}
