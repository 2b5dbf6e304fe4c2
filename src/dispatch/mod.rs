//! Dispatching one event: pick the matching hooks, run them (as a pipeline or concurrently),
//! and combine what they did into one [`Outcome`].
//!
//! `pre_tool_use`, `permission_request` and `user_prompt_submit` run in declared order, each hook
//! seeing the arguments as patched by the hooks before it; after a rewrite, the hooks that judged
//! an earlier version judge the final call again, so a guard always judges what will really run
//! (see `pipeline`); the first block stops the chain. Every other event runs its hooks
//! concurrently and combines their results in declared order, so the outcome never depends on
//! which hook finished first.

mod pipeline;
mod scheduling;
pub(crate) mod turns;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use serde_json::{Map, Value};

use crate::action::Decision;
use crate::cancel::CancelToken;
use crate::config::call::CallMatch;
use crate::config::paths_filter::CallPaths;
use crate::config::{Config, Hook};
use crate::environment::{fill_payload, hooks_env, working_dir, Fallbacks, HookEnv};
use crate::event::Event;
use crate::judge::{combine_observational, no_pre_approval_past_a_failed_guard};
use crate::outcome::{Outcome, UnknownTool};
use crate::{background, backstop};
use pipeline::run_pipeline;
use scheduling::{
    govern_continuation, mark_cancelled, matching_hooks, run_concurrently, start_background,
    Continuations, Handover, Run, Stop,
};

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
    #[doc(hidden)] // the adapters' (an agent's own payload shape); a native host has none
    pub on_patch: Option<PayloadMirror>,
    /// Cancels the dispatch from another thread (the user pressed Esc, the turn was aborted):
    /// running hooks are killed, the rest never start, and the [`Outcome`] says so (see
    /// [`CancelToken`]).
    pub cancel: Option<CancelToken>,
    /// Cancels the dispatch at this instant, the same way; each hook's own `timeout` still
    /// applies within it.
    pub deadline: Option<Instant>,
    /// Read a hook's plain (non-JSON) stdout as `context` for the model, as an adapter's agent
    /// does (Claude Code on SessionStart and UserPromptSubmit). Natively `false`: only a JSON
    /// object acts.
    pub plain_stdout_is_context: bool,
    /// The turn's denials so far, for a host that counts them itself ([the denial backstop](crate#the-denial-backstop)):
    /// once a guard denied `denial_backstop` calls this turn, every further call it matches
    /// asks a human. `None` (the default): a [`Session`](crate::session::Session), or
    /// [`Config::dispatch`] for a payload with a `session_id`, uses the library's own count;
    /// without a session, the backstop is off.
    pub denials: Option<crate::outcome::Denials>,
    /// How many times this turn really continued because of a stop hook, when the host counts
    /// them apart from the payload's `continuations`; the cap's message then shows this count
    /// where the two differ. The adapters and `ka-hooks run` set it from
    /// their `continuations::Tracker`.
    #[doc(hidden)] // the adapters' and `ka-hooks run`'s, which count across processes
    pub continued: Option<u32>,
    /// The environment the hooks get (a [`Session`](crate::session::Session)'s).
    pub(crate) hook_env: HookEnv,
}

/// See `Request::on_patch`.
#[doc(hidden)] // the adapters'
#[derive(Clone)]
pub struct PayloadMirror(pub Arc<MirrorFn>);

/// Rewrites the agent-shaped fields of a payload from its `arguments`.
#[doc(hidden)] // the adapters'
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
            hook_env: HookEnv::Inherit,
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
    ///
    /// When the payload names a `session_id`, the library counts that session's turn itself, as
    /// a [`Session`](crate::session::Session) does: the stop loop (for `max_continuations`) and
    /// the denials of [the denial backstop](crate#the-denial-backstop). A turn starts at each
    /// `user_prompt_submit`; `session_end` forgets the session. A larger `continuations` in the
    /// payload, or [`Request::denials`] set by the host, is used instead.
    pub fn dispatch(&self, request: Request) -> Outcome {
        turns::counted(request, |request| dispatch(self, request, None))
    }

    /// [`Config::dispatch`] without the library's counts: the adapters, `ka-hooks run` and the
    /// golden tests keep their own (in the data dir, or none).
    #[cfg(feature = "cli")]
    pub(crate) fn dispatch_uncounted(&self, request: Request) -> Outcome {
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
    let (event, plain_stdout_is_context) = (request.event, request.plain_stdout_is_context);
    let mut payload = request.payload;
    let stop = Stop {
        token: request.cancel,
        deadline: request.deadline,
    };
    // While this lives, a signal to `ka-hooks` waits for the dispatch to end its hooks.
    let _watching = stop.token.as_ref().map(CancelToken::watch);
    let tool = payload
        .get("tool")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let denials = request.denials.as_ref();
    let mut outcome = new_outcome(config, event, tool.as_deref(), &payload, denials);

    let cwd = Cwd::of(&payload);
    let cwd_fallback = || cwd.get();
    // `paths` and `if` are checked in-process: a hook that does not match is never spawned.
    let root = config.project_root.clone().unwrap_or_else(cwd_fallback);
    let mut hooks = selected_hooks(config, &payload, &root, only_hook, &mut outcome);
    let own_files = OwnFiles::guarding(config, event, tool.as_deref(), only_hook, &cwd);
    if let Some(own_files) = &own_files {
        own_files.protect(&payload, &mut outcome);
    }
    if hooks.is_empty() {
        return outcome;
    }
    if !event.is_pipeline() && only_hook.is_none() {
        let handover = Handover {
            tool: tool.as_deref(),
            root: &root,
            cwd: cwd.known(),
            plain_context: plain_stdout_is_context,
            hook_env: &request.hook_env,
        };
        hooks = hand_over_async(config, hooks, &mut payload, &handover, &mut outcome);
        if hooks.is_empty() {
            return outcome;
        }
    }

    let cwd_fallback = cwd_fallback();
    let run_dir = run_dir(config, &cwd_fallback, &mut outcome);
    fill_payload(event, &mut payload, || cwd_fallback.clone());

    let payload_continuations = Continuations::of(&payload, request.continued);
    let (base_env, clean_env) = hooks_env(&request.hook_env, event, &run_dir, tool.as_deref());
    let run = Run {
        dir: &run_dir,
        env: &base_env,
        clean_env,
        stop: &stop,
        tool: tool.as_deref(),
        root: &root,
        replay: only_hook.is_some(),
        plain_context: plain_stdout_is_context,
    };
    if event.is_pipeline() {
        let denials = (request.denials).filter(|_| event == Event::PreToolUse && !run.replay);
        let on_patch = request.on_patch.as_ref();
        let guarded = Guarded {
            on_patch,
            own_files: own_files.as_ref(),
            denials,
        };
        run_guarded(config, &hooks, payload, guarded, &run, &mut outcome);
    } else {
        for (hook, finished) in hooks.iter().zip(run_concurrently(&hooks, &payload, &run)) {
            combine_observational(hook, finished, run.plain_context, &mut outcome);
        }
    }
    finish(config, &stop, &payload_continuations, &mut outcome);
    outcome
}

/// The payload's `cwd`, else the process's: worked out once, and only when needed (a `getcwd`
/// each time otherwise).
struct Cwd {
    payload: Option<PathBuf>,
    known: std::cell::OnceCell<PathBuf>,
}

impl Cwd {
    fn of(payload: &Map<String, Value>) -> Cwd {
        Cwd {
            payload: payload
                .get("cwd")
                .and_then(Value::as_str)
                .map(PathBuf::from),
            known: std::cell::OnceCell::new(),
        }
    }

    fn get(&self) -> PathBuf {
        self.known
            .get_or_init(|| {
                (self.payload.clone())
                    .or_else(|| std::env::current_dir().ok())
                    .unwrap_or_else(|| PathBuf::from("/"))
            })
            .clone()
    }

    /// What [`Cwd::get`] found, if it was asked already.
    fn known(&self) -> Option<PathBuf> {
        self.known.get().cloned()
    }
}

/// The built-in protection: a tool call (or a permission request, the same call on its way to a
/// human) aimed at ka's own files asks a human, whatever a hook's `allow` says. It judges the
/// call as made, and again the call as rewritten when a hook changed it.
pub(super) struct OwnFiles<'a> {
    config: &'a Config,
    cwd: PathBuf,
}

impl<'a> OwnFiles<'a> {
    /// The protection of ka's own files, for a `pre_tool_use` call of every hook. A reader
    /// (`read`, `grep`, ...) changes nothing: only other calls are checked, which spares the most
    /// common call the resolution of its paths (a `lstat` per component).
    fn guarding(
        config: &'a Config,
        event: Event,
        tool: Option<&str>,
        only_hook: Option<&Hook>,
        cwd: &Cwd,
    ) -> Option<Self> {
        let reads_only = tool.is_some_and(|t| crate::config::FILE_READS.contains(&t));
        (event.acts_as() == Event::PreToolUse && only_hook.is_none() && !reads_only).then(|| {
            OwnFiles {
                config,
                cwd: cwd.get(),
            }
        })
    }

    /// Why a human must approve a call with these arguments, if one must.
    pub(super) fn check(&self, args: Option<&Map<String, Value>>) -> Option<String> {
        crate::protect::check(self.config, args, &self.cwd)
    }

    fn protect(&self, payload: &Map<String, Value>, outcome: &mut Outcome) {
        let args = payload.get("arguments").and_then(Value::as_object);
        if outcome.blocked {
            return;
        }
        if let Some(reason) = self.check(args) {
            outcome.decision = Some(Decision::Ask);
            outcome.reason = Some(reason);
        }
    }
}

/// The directory hooks run in (see [`working_dir`]); a fallback is said in the diagnostics.
fn run_dir(config: &Config, cwd: &Path, outcome: &mut Outcome) -> PathBuf {
    match working_dir(config.run_dir(cwd), || Fallbacks::of(config)) {
        Ok(dir) => dir,
        Err((dir, why)) => {
            outcome.diagnostics.push(why);
            dir
        }
    }
}

/// `async = true` hooks (not stale ones: those are answered at once) go to the background
/// before anything else is worked out; the hooks left to run now are returned. When none is
/// left, the payload itself goes with them.
fn hand_over_async<'c>(
    config: &Config,
    hooks: Vec<&'c Hook>,
    payload: &mut Map<String, Value>,
    handover: &Handover<'_>,
    outcome: &mut Outcome,
) -> Vec<&'c Hook> {
    let (later, now): (Vec<&Hook>, Vec<&Hook>) = hooks
        .into_iter()
        .partition(|h| h.is_async && h.stale.is_none());
    if !later.is_empty() {
        let payload = if now.is_empty() {
            std::mem::take(payload)
        } else {
            payload.clone()
        };
        start_background(config, &later, payload, handover, outcome);
    }
    now
}

/// What the pipeline needs besides its hooks: the host's mirror of a rewrite, the built-in
/// protection (tool calls), the turn's denials (when the host keeps them).
struct Guarded<'a> {
    on_patch: Option<&'a PayloadMirror>,
    own_files: Option<&'a OwnFiles<'a>>,
    denials: Option<backstop::Denials>,
}

/// `pre_tool_use` and `user_prompt_submit`: the pipeline, with the denial backstop armed when
/// the host keeps the turn's `denials`.
fn run_guarded(
    config: &Config,
    hooks: &[&Hook],
    payload: Map<String, Value>,
    guarded: Guarded<'_>,
    run: &Run<'_>,
    outcome: &mut Outcome,
) {
    let backstop = guarded.denials.and_then(|denials| {
        let args = payload.get("arguments").and_then(Value::as_object);
        let call = (run.tool, args, run.root);
        backstop::Armed::arm(config.settings.denial_backstop, denials, hooks, call)
    });
    let (on_patch, own_files) = (guarded.on_patch, guarded.own_files);
    let denied_by = run_pipeline(hooks, payload, on_patch, run, own_files, outcome);
    if let Some(armed) = backstop {
        armed.settle(hooks, (run.tool, run.root), denied_by, outcome);
    }
}

/// The outcome before any hook ran: the call's event, tool and arguments, the turn's denials,
/// and what the configuration has to say on every call (skipped layers, weakenings announced or
/// refused, warnings).
fn new_outcome(
    config: &Config,
    event: Event,
    tool: Option<&str>,
    payload: &Map<String, Value>,
    denials: Option<&backstop::Denials>,
) -> Outcome {
    let mut outcome = Outcome::new(event, tool.map(str::to_owned));
    if event.acts_as() == Event::PreToolUse {
        outcome.arguments = payload.get("arguments").and_then(Value::as_object).cloned();
    }
    outcome.denials = denials.cloned();
    if event.is_tool_event() {
        outcome.unknown_tool = tool.and_then(|given| {
            let ka = crate::config::unknown_tool(given)?;
            let given = given.to_owned();
            Some(match ka {
                Some(ka) => UnknownTool::Spelling {
                    given,
                    ka: ka.to_owned(),
                },
                None => UnknownTool::Unknown { given },
            })
        });
        if let Some(spelling @ UnknownTool::Spelling { .. }) = &outcome.unknown_tool {
            outcome.diagnostics.push(spelling.to_string());
        }
    }
    outcome.untrusted = config.untrusted.clone();
    if !config.untrusted.is_empty() {
        let session = payload.get("session_id").and_then(Value::as_str);
        outcome.untrusted_told = !config.told.first(session.unwrap_or(""));
        if event == Event::SessionEnd {
            config.told.forget(session.unwrap_or(""));
        }
    }
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
    outcome
}

/// The hooks this call runs: `only_hook` whatever its filters say (a replay), else the enabled
/// hooks whose filters match, managed ones only while every other hook is off.
fn selected_hooks<'c>(
    config: &'c Config,
    payload: &Map<String, Value>,
    root: &Path,
    only_hook: Option<&'c Hook>,
    outcome: &mut Outcome,
) -> Vec<&'c Hook> {
    let tool = payload.get("tool").and_then(Value::as_str);
    if let Some(hook) = only_hook {
        let name = &hook.name;
        if !hook.enabled {
            outcome.diagnostics.push(format!(
                "hook `{name}` is disabled; ran it because --hook asked"
            ));
        }
        if !hook.matches_tool(tool) {
            outcome.diagnostics.push(format!(
                "hook `{name}` ({}) does not match tool {:?}; ran it because --hook asked",
                hook.filter.describe(),
                tool.unwrap_or("(none)")
            ));
        }
        return vec![hook];
    }
    if let Some(guard) = bypassed_guard(config, outcome) {
        // Blocked without running: a guard on the ka name would have judged the call.
        outcome.blocked = true;
        outcome.reason = Some(guard);
        return Vec::new();
    }
    let args = payload.get("arguments").and_then(Value::as_object);
    let call_paths = CallPaths::new(args, root, config.has_paths_filters());
    let call = CallMatch::new(config, tool, args, &call_paths, root);
    let mut hooks = matching_hooks(config, outcome.event, tool, payload, &call);
    // Guards let through because their `if` could not be checked statically: say why.
    outcome.diagnostics.extend(call.take_unchecked());
    if let Some(why) = &config.settings.disabled {
        // Managed hooks cannot be turned off from below.
        hooks.retain(|h| h.is_managed());
        outcome
            .diagnostics
            .push(format!("every hook but managed ones is off: {why}"));
        outcome.announcements.push(format!(
            "every ka hook except managed ones is off ({}): no user or project guard ran for \
             this call; {}",
            crate::terminal::escape(why),
            if why.starts_with("KA_HOOKS_DISABLE") {
                "unset KA_HOOKS_DISABLE to turn them back on"
            } else {
                "remove `disable_all = true` to turn them back on"
            }
        ));
    }
    hooks
}

/// A guarded call made under another agent's spelling of a ka tool (`Write` for `write`) that
/// a guard on the ka name would have judged: why it is blocked rather than run unguarded.
fn bypassed_guard(config: &Config, outcome: &Outcome) -> Option<String> {
    let Some(UnknownTool::Spelling { given, ka }) = &outcome.unknown_tool else {
        return None;
    };
    if outcome.event.acts_as() != Event::PreToolUse {
        return None;
    }
    let off = config.settings.disabled.is_some();
    let guard = config.hooks.iter().find(|h| {
        h.event == outcome.event
            && h.enabled
            && (!off || h.is_managed())
            && h.matches_tool(Some(ka))
            && !h.matches_tool(Some(given))
    })?;
    Some(format!(
        "blocked: the tool `{}` is another agent's spelling of ka's `{ka}`, which the guard \
         `{}` judges; the host must pass ka's names (tool `{ka}`, argument `path`), or no \
         guard on `{ka}` sees the call",
        crate::terminal::escape(given),
        crate::terminal::escape(&guard.name)
    ))
}

/// After the hooks ran: a cancelled dispatch blocks, a failed guard withholds pre-approval, the
/// continuation cap applies, and an `allow` is said to be a request.
fn finish(config: &Config, stop: &Stop, had: &Continuations, outcome: &mut Outcome) {
    mark_cancelled(stop, outcome);
    no_pre_approval_past_a_failed_guard(outcome);
    govern_continuation(config, had, outcome);
    if outcome.decision == Some(Decision::Allow) && !outcome.blocked {
        outcome.diagnostics.push(
            "decision `allow` is a request: the host's hardstops, protected paths and deny rules \
             still apply"
                .into(),
        );
    }
}
