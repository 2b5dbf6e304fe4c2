//! ka-hooks: the hooks system of the ka coding agent.
//!
//! Hooks are shell commands run at fixed points of a session ([`Event`]). They are defined in
//! layered `ka.toml` files and follow the Claude Code hook contract: a JSON payload on stdin,
//! exit 2 to veto, and on exit 0 an optional JSON object on stdout that is a small action
//! language ([`action`]).
//!
//! # Using it from an agent
//! Load once per session, then dispatch each event and do what [`Outcome::next`] says, and
//! nothing else. It is an enum per kind of event, and a host must match every variant: a `_ =>`
//! arm that runs the call would run calls a hook (or ka's own protection of its files) wants a
//! human to approve. Each variant carries everything to deliver: the arguments to run, the
//! reasons, the context for the model, and ([`next::Always`]) the permission mode to switch to
//! and the lines to show the user. A host that follows `next()` alone delivers each of them
//! exactly once; the [`Outcome`]'s fields are the dispatch's report (logs, `ka-hooks run
//! --json`), not a second thing to deliver.
//!
//! What an embedder uses:
//! - [`Config`] (loaded with [`LoadOptions`] over [`paths::Paths`]; [`config::LoadError`] when
//!   it cannot load at all, [`ConfigError`] for one file's mistake, named by file, line and key)
//!   and [`session::Session`], one per agent session (with the hooks' environment,
//!   [`session::HookEnv`]: the host's whole one, or an allowlist);
//! - [`Request`] for each event, [`Outcome`] and its [`Next`] back ([`next`]), with
//!   [`CancelToken`] to cut a dispatch short;
//! - the trust of a project's layer, after a person read it: [`review::review`] (the text to
//!   show), [`review::record`] (trust exactly what was shown), [`review::revoke`]; the records
//!   are in [`trust`].
//!
//! Everything else (the runner, the watchdog, the sandbox, the adapters of other agents) works
//! behind these; a build with `default-features = false` compiles no command-line code.
//! Payloads and tool arguments are JSON objects, `serde_json::Map<String, Value>`: hooks read
//! JSON, and a host holds its tool calls as JSON already. The crate re-exports the
//! [`serde_json`] it uses, so a host never meets two versions of it. No other crate's type is
//! part of the API.
//!
//! ```
//! use ka_hooks::{config::{Config, LoadOptions}, paths::Paths, Event, Request};
//! use ka_hooks::next::{Next, Permission};
//! # let tmp = tempfile::tempdir()?;
//! # let (config_dir, data_dir) = (tmp.path().join("config"), tmp.path().join("data"));
//! # std::fs::create_dir_all(&config_dir)?;
//! # std::fs::write(config_dir.join("ka.toml"), r#"
//! # [[hooks]]
//! # event = "pre_tool_use"
//! # tool = "write"
//! # command = "echo 'only src/ is writable' >&2; exit 2"
//! # "#)?;
//! // The user's layers in `config_dir`, the projects around the session's working directory.
//! // (`LoadOptions::default()` reads both from the environment.)
//! let config = Config::load(&LoadOptions::new(Paths::new(config_dir, data_dir), tmp.path()))?;
//! let args = serde_json::json!({"path": "/etc/passwd"});
//! let args = args.as_object().cloned().unwrap_or_default();
//! let outcome = config.dispatch(Request::tool_call(Event::PreToolUse, "write", args));
//! let next = outcome.next();
//! for line in next.always().for_user.lines() {
//!     println!("{line}"); // weakened guards, notes, failed hooks: the user must see them
//! }
//! // `next.always().mode`: a hook asked to switch the permission mode.
//! let ran = match next {
//!     // The reason goes to the model, as the tool's result (with `context`, if any).
//!     Next::ToolCall(Permission::Block { reason, context: _ }, _) => {
//!         assert_eq!(reason, "only src/ is writable");
//!         false
//!     }
//!     // Not run, and the turn ends; the reason is for the user.
//!     Next::ToolCall(Permission::Halt { .. }, _) => false,
//!     // A human approves first; then run `arguments` (they may have been rewritten).
//!     Next::ToolCall(Permission::Ask { .. }, _) => false,
//!     // Run `arguments`, not the call as the model made it: hooks may have rewritten it.
//!     // `pre_approved`: the host may skip its permission prompt. `context`: for the model.
//!     // `deferred`: the host's own permission flow decides; `permission_updates`: rules to
//!     // apply with a pre-approved `permission_request`.
//!     Next::ToolCall(
//!         Permission::Run { arguments: _, pre_approved: _, context: _, deferred: _, permission_updates: _ },
//!         _,
//!     ) => true,
//!     Next::Prompt(..) | Next::ToolResult(..) | Next::Stop(..) | Next::Other(..) => {
//!         unreachable!("a tool call is answered with Next::ToolCall")
//!     }
//! };
//! assert!(!ran);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Embedding checklist
//! - **Children.** `SIGCHLD` must not be ignored (`SIG_IGN`) in the host, and nothing else may
//!   reap its children with `waitpid(-1)`: the runner waits for each hook itself.
//! - **The agent marker.** Set `KA_AGENT_TOOL_CALL=1` in the environment of the host's own tool
//!   processes (the model's shell commands): `ka-hooks trust` refuses to run there, so the
//!   model cannot trust a project for itself. Every hook already gets it.
//! - **Sessions.** Dispatch through a [`session::Session`], or put the same `session_id` in
//!   every payload of a session: the library then counts each turn itself (the continuation
//!   cap and the denial backstop; a turn starts at each `user_prompt_submit`), and async
//!   hooks' results come back to that session. Without either, nothing is counted.
//! - **Reload.** Call [`Config::load`] again when the user edits the layers or trusts a
//!   project; a loaded `Config` keeps the content it loaded.
//! - **Sharing.** A `Config` is `Send + Sync`: share one behind an `Arc` and dispatch from
//!   several threads. [`Config::dispatch`] cannot fail; everything that went wrong is in the
//!   outcome, and fails closed where it must.
//! - **Cancel.** Give each request a [`CancelToken`] (the user's Esc) and a deadline, below.
//!
//! # Cancelling a dispatch
//! When the user presses Esc or the turn is aborted, cancel the dispatch in flight from another
//! thread with a [`CancelToken`] (or give the [`Request`] a deadline). Every running hook's
//! process group is killed (TERM, then KILL after half a second), hooks not started yet
//! never start, and `dispatch` returns promptly with them reported as
//! [`Status::Cancelled`](outcome::Status::Cancelled). A cancelled `pre_tool_use` or
//! `user_prompt_submit` is blocked: a guard that was cut short never reads as allowed.
//!
//! ```
//! use std::time::{Duration, Instant};
//! use ka_hooks::{config::{Config, LoadOptions}, outcome::Status, paths::Paths};
//! use ka_hooks::{CancelToken, Event, Request};
//! use ka_hooks::next::{Next, Permission};
//! # let tmp = tempfile::tempdir()?;
//! # let (config_dir, data_dir) = (tmp.path().join("config"), tmp.path().join("data"));
//! # std::fs::create_dir_all(&config_dir)?;
//! # std::fs::write(config_dir.join("ka.toml"), r#"
//! # [[hooks]]
//! # name = "slow-guard"
//! # event = "pre_tool_use"
//! # command = "sleep 30"
//! # "#)?;
//! # let config = Config::load(&LoadOptions::new(Paths::new(config_dir, data_dir), tmp.path()))?;
//! let esc = CancelToken::new();
//! let args = serde_json::json!({"command": "cargo test"});
//! let request = Request::tool_call(Event::PreToolUse, "bash", args.as_object().cloned().unwrap_or_default())
//!     .with_cancel(esc.clone())                                  // the user may press Esc
//!     .with_deadline(Instant::now() + Duration::from_secs(120)); // and the turn has a budget
//! let started = Instant::now();
//! let outcome = std::thread::scope(|s| {
//!     let dispatch = s.spawn(|| config.dispatch(request));
//!     std::thread::sleep(Duration::from_millis(100));
//!     esc.cancel(); // from the UI thread
//!     dispatch.join().map_err(|_| "dispatch thread panicked")
//! })?;
//! assert!(started.elapsed() < Duration::from_secs(10));
//! assert_eq!(outcome.hooks[0].status, Status::Cancelled);
//! assert!(
//!     matches!(outcome.next(), Next::ToolCall(Permission::Block { .. }, _)),
//!     "a cancelled guard never reads as allowed"
//! );
//! assert_eq!(outcome.cancelled.as_deref(), Some("cancelled by the caller"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Failure rules
//! Broken never reads as allowed:
//! - A hook that exits other than 0 or 2, dies by a signal, times out or cannot start is an
//!   `error`; `on_error` decides (`block` fails closed, the default on events that can veto;
//!   `ignore` fails open, the default on every other; `ask` asks a human). So is exit 0 with stdout that cannot be applied: cut at the 1 MiB cap, or one
//!   JSON object voided by a key of the wrong type or event. Empty stdout and plain text say
//!   nothing.
//! - When the working directory cannot be entered, hooks run in the project root, else the
//!   session's root (this process's working directory), else the user's config dir, else `/`,
//!   with a diagnostic; they never fail to start, and so fail open, because of it.
//! - At a timeout or cancel, the hook's process group and its leader (even one that left the
//!   group) get TERM, then KILL; nothing of the hook outlives the dispatch but a process that
//!   deliberately left the group itself.
//! - The `ka-hooks` binary ends every running hook on SIGINT, SIGTERM and SIGHUP, then exits
//!   with 128 + the signal (`interrupt`).
//! - The audit log (`audit`) holds no argument values, prompts, patches or output excerpts, and
//!   is written only to a regular file, never through a symlink, never blocking.
//! - A hook payload is read as the agents write JSON (lone surrogates become U+FFFD, nesting up
//!   to 1024 levels, never a stack overflow: `payload`); one that still cannot be read blocks
//!   a tool call, prompt or permission request in the adapters and in `ka-hooks run`.
//! - A model denied several times by one guard within a turn meets a person: further calls the
//!   guard matches ask ([the denial backstop](#the-denial-backstop)).
//!
//! # The denial backstop
//! A guard that says no tells the model why, and a model that wants the call badly enough
//! rephrases it: another spelling of the command, another tool, the same write in two steps.
//! So denials are counted per turn and per guard (its name and the file that defines it); once
//! one guard has denied `denial_backstop` calls in a turn (3 unless the user or managed file
//! sets `[hook_settings] denial_backstop`; 0 turns it off), every further `pre_tool_use` call
//! its filter matches in that turn asks a human ([`next::Permission::Ask`]), including calls
//! the guard itself would allow: those are the rephrasings. A call a guard still denies stays
//! denied. A guard that fails (`on_error`) is not counted. The library counts for a
//! [`session::Session`] and, for [`Config::dispatch`], per payload `session_id`; a host that
//! counts itself passes [`Request::denials`] and keeps [`Outcome::denials`].
//!
//! # Precedence
//! The layers are managed (`/etc/ka/ka.toml`), user (`~/.config/ka/ka.toml`), then the project
//! (`<root>/.ka/ka.toml`) and local (`<root>/.ka/ka.local.toml`) files of every directory from
//! `/` down to the working directory that has a `.ka/`, outermost first. Hooks of all layers run
//! in that order. An entry that names an earlier hook is merged over it key by key, except a
//! managed hook, which nothing above can disable or change ([`config`]).
//!
//! # Threat model
//! Three adversaries: a hostile hook process, a hostile cloned repository, and the model itself,
//! which writes files and runs commands.
//!
//! A project file comes from a repository someone cloned, and it runs commands. It therefore
//! loads only after a person has trusted its exact content and that of the files of the project
//! its hooks execute (the scripts they run, not the data they read; [`trust`]); the record binds the project root,
//! so a symlink to another project's trusted file never loads. When a trusted file or a covered
//! script changes or vanishes, its new content never runs and the guards of the reviewed version
//! fail closed: they block every call they would have matched until a person reviews the change
//! ([`review`]). A covered script that is a symlink out of the project is bound to its target's
//! content, and a project that was renamed or moved is judged changed, not unreviewed.
//! `trust` refuses inside an agent's tool call, and a tool call aimed at ka's own
//! files asks a human first (`protect`). A broken, unreadable or untrusted project file, or a
//! corrupt trust store, is reported and skipped; it never disables the user's own hooks. A
//! managed or user file that does not load (one stray byte appended by the model's shell) is
//! skipped too, never the whole load: the other layers run, and the guards of its last good
//! version (kept in the data dir) block what they matched. What weakens guards is said to the
//! user on every dispatch it concerns ([`Outcome::announcements`]): a broken file,
//! `disable_all`, `KA_HOOKS_DISABLE`, `stale = "skip"`, and, once, a guard removed or weakened by
//! an edit no one reviewed.
//! Settings of the gate are read only from the user's own file (or the managed one). Trust does
//! not cover programs on `PATH`, files outside the project, or what a script runs in turn. The
//! hook sandbox (`docs/sandbox.md`, Linux Landlock) covers them for project hooks: they run confined by
//! default, writing only their project root and the temp dir and reaching no TCP port unless
//! they declare more (shown in the review; a change of it makes the file stale). It confines
//! hooks, not the agent's own tools: the model can still run any program its agent lets it, and
//! a confined hook can still read what you can (docs/sandbox.md says what it stops and what not).
//!
//! A hook is trusted to run, but not to behave. It may hang, fork daemons, flood its output,
//! ignore its stdin, print garbage, or die by a signal. None of that can wedge the caller, leave a
//! process behind, or change state through unparsable output ([`action`]). A hook
//! that breaks is reported as broken, never as a hook that allowed or vetoed; `on_error` decides
//! whether broken fails open or closed.
#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod action;
// The command line's modules and the internals its tests reach: public (and hidden) only in a
// build with the `cli` feature, which the binary, the integration tests and the benches have;
// private in a library build (`default-features = false`), where an embedder cannot name them.
#[cfg(feature = "cli")]
#[doc(hidden)] // `ka-hooks claude|codex|...`: the binary's, public for its tests
pub mod adapter;
#[cfg(feature = "cli")]
#[doc(hidden)] // the adapters' agents: the binary's, public for its tests
pub mod agent;
#[cfg(not(feature = "cli"))]
mod agent;
pub(crate) mod audit;
#[cfg(feature = "cli")]
#[doc(hidden)] // async hooks' supervisor: the binary runs it, the tests read its handover
pub mod background;
#[cfg(not(feature = "cli"))]
mod background;
#[cfg(feature = "cli")]
#[doc(hidden)] // the denial backstop's counts: the adapters' and the tests'
pub mod backstop;
#[cfg(not(feature = "cli"))]
mod backstop;
mod caller;
mod cancel;
#[cfg(feature = "cli")]
#[doc(hidden)] // the command line's own, public for the binary and its tests
pub mod cli;
pub mod config;
#[cfg(feature = "cli")]
#[doc(hidden)] // the adapters' continuation counts across processes, public for their tests
pub mod continuations;
pub mod dispatch;
#[cfg(feature = "cli")]
#[doc(hidden)] // the command line's own, public for the binary and its tests
pub mod doctor;
mod environment;
pub mod event;
mod fd;
#[cfg(feature = "cli")]
#[doc(hidden)] // the command line's own, public for the binary and its tests
pub mod golden;
#[cfg(feature = "cli")]
pub(crate) mod interrupt;
mod judge;
pub(crate) mod layout;
pub mod next;
pub mod outcome;
pub mod paths;
#[cfg(feature = "cli")]
pub(crate) mod payload;
#[cfg(feature = "cli")]
#[doc(hidden)] // the hook runner, public for its tests
pub mod process;
#[cfg(not(feature = "cli"))]
mod process;
pub(crate) mod protect;
mod resolve;
pub mod review;
mod sandbox;
#[cfg(feature = "cli")]
#[doc(hidden)] // the command line's own, public for the binary and its tests
pub mod schema;
pub mod session;
#[cfg(feature = "cli")]
#[doc(hidden)] // the shell command splitter, public for its property tests
pub mod shell;
#[cfg(not(feature = "cli"))]
mod shell;
mod signal;
pub(crate) mod terminal;
#[cfg(feature = "cli")]
#[doc(hidden)] // the tool table (`tool = "Write"` matches `write`): public for the adapters' tests
pub mod tools;
#[cfg(not(feature = "cli"))]
mod tools;
pub mod trust;
pub(crate) mod verdict;
#[cfg(feature = "cli")]
#[doc(hidden)] // the subreaper watchdog, public for its tests
pub mod watchdog;
#[cfg(not(feature = "cli"))]
mod watchdog;

pub use cancel::CancelToken;

/// The JSON types of payloads and arguments (`Map<String, Value>`), as this crate uses them.
pub use serde_json;

/// What an embedder cannot reach, checked by `cargo test --doc`: the internals of `paths` (one
/// returned a `figment` type), the compiled globs and regexes of a tool filter, the hooks'
/// matching helpers.
///
/// ```compile_fail,E0603
/// let _ = ka_hooks::paths::settings_env();
/// ```
/// ```compile_fail,E0603
/// use ka_hooks::config::MatcherKind;
/// ```
/// ```compile_fail,E0616
/// fn globs(tools: &ka_hooks::config::Tools) -> bool { tools.globs.is_some() }
/// ```
/// ```compile_fail,E0624
/// fn matches(hook: &ka_hooks::Hook, root: &std::path::Path) -> bool {
///     hook.matches_call(Some("bash"), None, root)
/// }
/// ```
/// ```
/// // What replaced them: `LoadOptions` without naming the CLI's `--trust`.
/// let _ = ka_hooks::LoadOptions { start_dir: "/".into(), ..Default::default() };
/// ```
#[cfg(doctest)]
struct SurfaceChecks;

/// `docs/library.md`, so that its Rust blocks are compiled by `cargo test --doc`.
#[cfg(doctest)]
#[doc = include_str!("../docs/library.md")]
struct LibraryDocs;
/// `docs/library-session.md`, the same way.
#[cfg(doctest)]
#[doc = include_str!("../docs/library-session.md")]
struct LibrarySessionDocs;
/// The README: it has no Rust block today; one it gains is compiled.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDocs;
pub use config::{Config, ConfigError, Hook, Layer, LoadOptions};
pub use dispatch::Request;
pub use event::{Event, ExitTwo, UnknownEvent};
pub use next::{ForUser, Next};
pub use outcome::Outcome;
