//! ka-hooks: the hooks system of the ka coding agent.
//!
//! Hooks are shell commands run at fixed points of a session ([`Event`]). They are defined in
//! layered `ka.toml` files and follow the Claude Code hook contract: a JSON payload on stdin,
//! exit 2 to veto, and on exit 0 an optional JSON object on stdout that is a small action
//! language ([`action`]).
//!
//! # Using it from an agent
//! Load once per session, then dispatch each event and apply the [`Outcome`]:
//!
//! ```
//! use ka_hooks::{config::{Config, LoadOptions}, paths::Paths, Event, Request};
//! # let tmp = tempfile::tempdir()?;
//! # let (config_dir, data_dir) = (tmp.path().join("config"), tmp.path().join("data"));
//! # std::fs::create_dir_all(&config_dir)?;
//! # std::fs::write(config_dir.join("ka.toml"), r#"
//! # [[hooks]]
//! # event = "pre_tool_use"
//! # tool = "write"
//! # command = "echo 'only src/ is writable' >&2; exit 2"
//! # "#)?;
//! let config = Config::load(&LoadOptions {
//!     paths: Paths::new(config_dir, data_dir), // or LoadOptions::from_env()
//!     start_dir: tmp.path().to_path_buf(),
//!     trust_once: false,
//! })?;
//! let args = serde_json::json!({"path": "/etc/passwd"});
//! let args = args.as_object().cloned().unwrap_or_default();
//! let outcome = config.dispatch(Request::tool_call(Event::PreToolUse, "write", args))?;
//! assert!(outcome.blocked);
//! assert_eq!(outcome.reason.as_deref(), Some("only src/ is writable"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
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
//! loads only after a person has trusted its exact content and that of the scripts its commands
//! name inside the project ([`trust`], [`config::scripts`]); the record binds the project root,
//! so a symlink to another project's trusted file never loads. When a trusted file or a covered
//! script changes or vanishes, its new content never runs and the guards of the reviewed version
//! fail closed: they block every call they would have matched until a person reviews the change
//! ([`review`]). `trust` refuses inside an agent's tool call, and a tool call aimed at ka's own
//! files asks a human first ([`protect`]). A broken, unreadable or untrusted project file, or a
//! corrupt trust store, is reported and skipped; it never disables the user's own hooks.
//! Settings of the gate are read only from the user's own file (or the managed one). Trust does
//! not cover programs on `PATH`, files outside the project, or what a script runs in turn; and
//! none of this is a sandbox: the model can run any program.
//!
//! A hook is trusted to run, but not to behave. It may hang, fork daemons, flood its output,
//! ignore its stdin, print garbage, or die by a signal. None of that can wedge the caller, leave a
//! process behind, or change state through unparsable output ([`process`], [`action`]). A hook
//! that breaks is reported as broken, never as a hook that allowed or vetoed; `on_error` decides
//! whether broken fails open or closed.
pub mod action;
pub mod adapter;
pub mod audit;
pub mod cli;
pub mod config;
pub mod dispatch;
pub mod doctor;
pub mod event;
pub mod outcome;
pub mod paths;
pub mod process;
pub mod protect;
pub mod review;
pub mod schema;
pub mod terminal;
pub mod trust;

pub use config::{Config, ConfigError, Hook, Layer, LoadOptions};
pub use dispatch::Request;
pub use event::{Event, UnknownEvent};
pub use outcome::Outcome;
