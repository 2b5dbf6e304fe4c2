//! The `ka-hooks` command line: the clap commands, and a thin dispatcher to the module of each
//! (`run`, `test`, `list`, `check`, `init`, `doctor`, `events`, `completions`, and `install` and
//! `import` for the agents' settings and hook files); `trust` and the six agents' adapters live
//! in [`crate::review`] and [`crate::adapter`].
//!
//! Exit codes: 0 ok, 1 usage or configuration error, 2 blocked (`run` follows the exit-2 contract).

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::adapter::Agent;
use crate::config::{Config, LoadError, LoadOptions};
use crate::event::Event;
use crate::paths::{self, Paths};

/// Print to stdout, ignoring a closed pipe (`ka-hooks list | head` must not panic).
macro_rules! out {
    ($($arg:tt)*) => {{
        let _ = std::io::Write::write_fmt(&mut std::io::stdout(), format_args!($($arg)*));
    }};
}
macro_rules! outln {
    ($($arg:tt)*) => {{
        let mut stdout = std::io::stdout().lock();
        let _ = std::io::Write::write_fmt(&mut stdout, format_args!($($arg)*));
        let _ = std::io::Write::write_all(&mut stdout, b"\n");
    }};
}

use events::event_parser;
use output::Output;

mod check;
mod claude_settings;
mod completions;
mod doctor;
mod events;
mod fast;
mod init;
mod list;
mod output;
mod run;
mod test;

pub const EXIT_OK: u8 = 0;
pub const EXIT_ERROR: u8 = 1;
pub const EXIT_BLOCKED: u8 = 2;

#[derive(Debug, Parser)]
#[command(
    name = "ka-hooks",
    version,
    about = "Run, check and trust the hooks of the ka coding agent",
    after_help = "Config layers: $KA_CONFIG_DIR/ka.toml (user), <root>/.ka/ka.toml (project), \
                  <root>/.ka/ka.local.toml (local). Project layers run only once trusted."
)]
struct Cli {
    #[command(flatten)]
    global: GlobalArgs,
    #[command(subcommand)]
    command: Command,
}

/// Flags accepted before or after any command.
#[derive(Debug, Args)]
struct GlobalArgs {
    /// Project directory (default: the working directory); its nearest ancestor with `.ka/` is the root.
    #[arg(long, global = true, value_name = "DIR")]
    project: Option<PathBuf>,
    /// Trust the project's hook files for this run only.
    #[arg(long, global = true)]
    trust: bool,
    /// Append a JSON line per hook and per outcome to FILE (overrides hook_settings.log).
    #[arg(long, global = true, value_name = "FILE")]
    log: Option<PathBuf>,
}

/// `--trust` and `--log` on a command that loads no hooks: hidden from its `--help` (the global
/// flags are not propagated to a command that defines its own) and refused when given.
#[derive(Debug, Args, Default)]
struct NoHooks {
    /// Refused: this command loads no hooks.
    #[arg(long, hide = true)]
    trust: bool,
    /// Refused: this command runs no hooks.
    #[arg(long, hide = true, value_name = "FILE")]
    log: Option<PathBuf>,
}

impl NoHooks {
    /// An error when `--trust` or `--log` was given to `command` (before or after its name).
    fn refuse(&self, global: &GlobalArgs, command: &str) -> Result<(), String> {
        self.refuse_because(global, command, "loads and runs no hooks")
    }

    /// [`NoHooks::refuse`], saying what `command` does instead (`what`).
    fn refuse_because(&self, global: &GlobalArgs, command: &str, what: &str) -> Result<(), String> {
        let flag = if self.trust || global.trust {
            "--trust"
        } else if self.log.is_some() || global.log.is_some() {
            "--log"
        } else {
            return Ok(());
        };
        Err(format!(
            "{flag} means nothing for `ka-hooks {command}`, which {what}; drop it"
        ))
    }
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Dispatch an event to the hooks and print the outcome (exit 2 when blocked).
    Run(run::RunArgs),
    /// List the hooks in effect, in run order, with where each came from.
    List {
        /// Only hooks of this event (see `ka-hooks events`).
        #[arg(long, value_parser = event_parser(), hide_possible_values = true)]
        event: Option<String>,
        /// Print the layers, hooks and settings as JSON (hook keys as in ka.toml).
        #[arg(long, conflicts_with = "names")]
        json: bool,
        /// Print only the hook names, one a line (what shell completion offers for --hook).
        #[arg(long)]
        names: bool,
    },
    /// Validate every layer (trusted or not) and report all errors; exit 1 on an error, a hook
    /// whose command cannot run, or a layer file that exists but is skipped.
    Check {
        /// Print `ok`, the errors with their positions, and the warnings as JSON.
        #[arg(long)]
        json: bool,
        /// Exit 0 even when a layer file that exists is skipped (untrusted, changed, broken).
        #[arg(long)]
        allow_skipped: bool,
    },
    /// Review the project's hook files and trust their current content.
    Trust {
        /// Show the trust status of the project's files; change nothing.
        #[arg(long, conflicts_with = "revoke")]
        show: bool,
        /// Forget the trust of the project's files.
        #[arg(long)]
        revoke: bool,
        /// Record without asking (required when there is no terminal to confirm on).
        #[arg(long, conflicts_with_all = ["show", "revoke"])]
        yes: bool,
        #[command(flatten)]
        no_hooks: NoHooks,
    },
    /// Run the project's golden cases (`.ka/tests/*.toml`) through the hooks; exit 1 on a failure.
    Test(test::TestArgs),
    /// Write a commented starter `.ka/ka.toml` and an example case (never overwrites).
    Init {
        /// Create it even though a parent directory already has `.ka/` (both then apply).
        #[arg(long)]
        nested: bool,
    },
    /// Claude Code hook: run the ka.toml hooks on Claude's payload (stdin), answer in its contract.
    Claude(crate::adapter::AdapterArgs),
    /// Codex CLI hook: run the ka.toml hooks on Codex's payload (stdin), answer in its contract.
    Codex(crate::adapter::AdapterArgs),
    /// Gemini CLI hook: run the ka.toml hooks on Gemini's payload (stdin), answer in its contract.
    Gemini(crate::adapter::AdapterArgs),
    /// GitHub Copilot hook (CLI, cloud agent, VS Code): run the ka.toml hooks on Copilot's
    /// payload (stdin), answer in its contract.
    Copilot(crate::adapter::hookfile::HookArgs),
    /// Cursor hook: run the ka.toml hooks on Cursor's payload (stdin), answer in its contract.
    Cursor(crate::adapter::hookfile::HookArgs),
    /// Antigravity hook (EXPERIMENTAL: its contract has no published reference; see
    /// docs/agents.md): run the ka.toml hooks on agy's payload (stdin), answer in its contract.
    Antigravity(crate::adapter::hookfile::HookArgs),
    /// Register the adapter in an agent's settings or hook file, or --remove it (prints the diff; --write applies it).
    Install(claude_settings::InstallCli),
    /// Turn an agent's hooks (Claude Code, Copilot, Cursor, Antigravity) into `[[hooks]]` entries (prints them; --write appends them).
    Import(claude_settings::ImportCli),
    /// Check every hook is wired and working: command found, script executable, layer trusted.
    Doctor {
        /// Also run each hook once, in the project root, on a synthetic payload whose paths point into a scratch directory (KA_HOOKS_DOCTOR=1).
        #[arg(long)]
        exec: bool,
        /// Print the report as a JSON array, one object per hook, layer or configuration error.
        #[arg(long)]
        json: bool,
    },
    /// Describe each event: when it fires, its payload with an example, exit 2, actions, aliases.
    Events {
        #[command(flatten)]
        args: events::EventsArgs,
        #[command(flatten)]
        no_hooks: NoHooks,
    },
    /// Print the JSON Schema of ka.toml's `[[hooks]]` and `[hook_settings]` (for editors).
    Schema {
        #[command(flatten)]
        no_hooks: NoHooks,
    },
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions {
        /// The shell to complete for.
        shell: clap_complete::Shell,
        #[command(flatten)]
        no_hooks: NoHooks,
    },
}

/// Run the CLI; returns the process exit code.
pub fn main(args: impl IntoIterator<Item = OsString>) -> u8 {
    let args: Vec<OsString> = args.into_iter().collect();
    if args
        .get(1)
        .is_some_and(|a| a == crate::background::SUPERVISOR_ARG)
    {
        // A dispatch of another `ka-hooks` handed this process an async hook to supervise.
        return crate::background::supervise();
    }
    // The hot command lines are read without clap's tree; anything else is clap's (see fast.rs).
    let parsed = fast::parse(&args).map_or_else(|| Cli::try_parse_from(&args), Ok);
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                    EXIT_OK
                }
                _ => EXIT_ERROR,
            };
        }
    };
    // SIGINT, SIGTERM and SIGHUP end every running hook before ka-hooks exits (128 + signal).
    // Installed once the arguments are read, so that an adapter's --fail-closed answer to an
    // interrupt is known before any interrupt is handled.
    let mut fail_closed_adapter = false;
    let fail_closed = match &cli.command {
        Command::Claude(args) | Command::Codex(args) | Command::Gemini(args) => args.fail_closed,
        Command::Copilot(args) | Command::Cursor(args) | Command::Antigravity(args) => {
            args.adapter.fail_closed
        }
        _ => false,
    };
    {
        if let (true, Some(message)) = (fail_closed, interrupted_message(&cli.command)) {
            fail_closed_adapter = true;
            crate::interrupt::block_when_interrupted(message);
        }
    }
    crate::interrupt::install();
    let out = Output::new();
    let code = match execute(cli, &out) {
        Ok(code) => code,
        Err(message) => {
            out.error(&message);
            EXIT_ERROR
        }
    };
    // Interrupted: every hook has ended by now. Exit the conventional way (128 + signal), except
    // for the block (exit 2) of an adapter under --fail-closed.
    match crate::interrupt::signal() {
        Some(_) if fail_closed_adapter && code == EXIT_BLOCKED => code,
        Some(signal) => crate::interrupt::exit_code(signal),
        None => code,
    }
}

/// This executable, to re-execute as a supervisor. On Linux `/proc/self/exe`, resolved by the
/// kernel when the supervisor is spawned: right even if the file was replaced since.
fn self_exe() -> PathBuf {
    if cfg!(target_os = "linux") {
        PathBuf::from("/proc/self/exe")
    } else {
        std::env::current_exe().unwrap_or_else(|_| PathBuf::from("ka-hooks"))
    }
}

fn execute(cli: Cli, out: &Output) -> Result<u8, String> {
    let opts = load_options(&cli.global)?;
    // This process exits right after its dispatch: async hooks run in detached supervisors.
    crate::background::detach(self_exe(), opts.paths.data_dir.clone());
    let explicit = cli.global.project.is_some();
    let log = cli.global.log.clone();
    match cli.command {
        Command::Run(args) => run::run(&opts, log, args, out),
        Command::List { event, json, names } => {
            let format = match (json, names) {
                (true, _) => list::Format::Json,
                (_, true) => list::Format::Names,
                _ => list::Format::Text,
            };
            list::list(&opts, event.as_deref(), format, out)
        }
        Command::Check {
            json,
            allow_skipped,
        } => check::check(&opts, json, allow_skipped, out),
        Command::Trust {
            show,
            revoke,
            yes,
            no_hooks,
        } => {
            no_hooks.refuse_because(
                &cli.global,
                "trust",
                "records trust itself and runs no hooks",
            )?;
            crate::review::run(&opts, trust_mode(show, revoke, yes))
        }
        Command::Test(args) => test::run(&opts, args, out),
        Command::Init { nested } => init::init(&opts, nested),
        Command::Claude(args) => Ok(adapter_run(Agent::Claude, explicit, log, &opts, &args)),
        Command::Codex(args) => Ok(adapter_run(Agent::Codex, explicit, log, &opts, &args)),
        Command::Gemini(args) => Ok(adapter_run(Agent::Gemini, explicit, log, &opts, &args)),
        Command::Copilot(args) => {
            let args = args.adapter_args();
            Ok(adapter_run(Agent::Copilot, explicit, log, &opts, &args))
        }
        Command::Cursor(args) => {
            let args = args.adapter_args();
            Ok(adapter_run(Agent::Cursor, explicit, log, &opts, &args))
        }
        Command::Antigravity(args) => {
            let args = args.adapter_args();
            Ok(adapter_run(Agent::Antigravity, explicit, log, &opts, &args))
        }
        Command::Install(args) => claude_settings::install(&opts, &args),
        Command::Import(args) => claude_settings::import(&opts, &args),
        Command::Doctor { exec, json } => doctor::doctor(&opts, exec, json, out),
        Command::Events { args, no_hooks } => {
            no_hooks.refuse(&cli.global, "events")?;
            events::run(args)
        }
        Command::Schema { no_hooks } => {
            no_hooks.refuse(&cli.global, "schema")?;
            out!("{}", crate::schema::schema_text());
            Ok(EXIT_OK)
        }
        Command::Completions { shell, no_hooks } => {
            no_hooks.refuse(&cli.global, "completions")?;
            completions::run(shell)
        }
    }
}

/// The load options of the global flags: the start directory (`--project` or the working
/// directory) and `--trust`, refused inside an agent.
fn load_options(global: &GlobalArgs) -> Result<LoadOptions, String> {
    let start_dir = match &global.project {
        Some(dir) if !dir.is_dir() => {
            return Err(format!(
                "--project {}: not a directory; give the project's directory",
                dir.display()
            ))
        }
        Some(dir) => paths::absolute(dir),
        None => std::env::current_dir()
            .map_err(|e| format!("failed to read the working directory: {e}"))?,
    };
    if global.trust {
        if let Some(refusal) = crate::review::refusal_inside_agent("load untrusted hooks (--trust)")
        {
            return Err(refusal);
        }
    }
    Ok(LoadOptions {
        paths: Paths::from_env(),
        start_dir,
        trust_once: global.trust,
    })
}

/// What `ka-hooks trust` does: `--show`, `--revoke`, or trust (without asking under `--yes`).
fn trust_mode(show: bool, revoke: bool, yes: bool) -> crate::review::Mode {
    match (show, revoke) {
        (true, _) => crate::review::Mode::Show,
        (_, true) => crate::review::Mode::Revoke,
        _ => crate::review::Mode::Trust { yes },
    }
}

/// What an adapter with `--fail-closed` answers when interrupted before its hooks could run
/// (`None` for a command that is no adapter).
fn interrupted_message(command: &Command) -> Option<&'static str> {
    let agent = command.agent()?;
    // Once per process, before any hook runs: the signal handler needs a `'static` text.
    Some(Box::leak(
        format!(
            "ka-hooks {}: interrupted by a signal before the hooks ran; blocked because of \
             --fail-closed\n",
            agent.command()
        )
        .into_boxed_str(),
    ))
}

impl Command {
    /// The agent whose adapter this command runs.
    fn agent(&self) -> Option<Agent> {
        Some(match self {
            Command::Claude(_) => Agent::Claude,
            Command::Codex(_) => Agent::Codex,
            Command::Gemini(_) => Agent::Gemini,
            Command::Copilot(_) => Agent::Copilot,
            Command::Cursor(_) => Agent::Cursor,
            Command::Antigravity(_) => Agent::Antigravity,
            _ => return None,
        })
    }
}

/// `ka-hooks claude|codex|gemini`: without `--project`, the agent's project directory (then the
/// payload's `cwd`) finds the project.
fn adapter_run(
    agent: Agent,
    explicit_project: bool,
    log: Option<PathBuf>,
    opts: &LoadOptions,
    args: &crate::adapter::AdapterArgs,
) -> u8 {
    let ctx = crate::adapter::Context {
        paths: opts.paths.clone(),
        project: explicit_project.then(|| opts.start_dir.clone()),
        trust_once: opts.trust_once,
        log,
    };
    crate::adapter::run_cli(agent, &ctx, args)
}

fn load(opts: &LoadOptions, out: &Output) -> Result<Config, String> {
    match Config::load(opts) {
        Ok(config) => {
            let root = config.project_root.as_deref();
            for u in &config.untrusted {
                out.warn(&output::relative_to_root(&u.with_fix(), root));
            }
            for w in &config.warnings {
                out.warn(&output::relative_to_root(w, root));
            }
            Ok(config)
        }
        // `out.error` says "error:" once; the list says it for each further error.
        Err(LoadError::Config(errors)) => Err(format!(
            "{}\n{} configuration error(s); run `ka-hooks check` after fixing",
            errors.to_string().trim_start_matches("error: "),
            errors.0.len()
        )),
    }
}

fn parse_event(name: &str) -> Result<Event, String> {
    name.parse::<Event>().map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every argument and flag of every command says what it does in `--help`.
    #[test]
    fn every_argument_has_help_text() {
        fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
            for arg in cmd.get_arguments() {
                let id = arg.get_id().as_str();
                if matches!(id, "help" | "version") {
                    continue;
                }
                if arg.get_help().is_none() && arg.get_long_help().is_none() {
                    missing.push(format!("{path} {id}"));
                }
            }
            for sub in cmd.get_subcommands() {
                walk(sub, &format!("{path} {}", sub.get_name()), missing);
            }
        }
        let mut missing = Vec::new();
        walk(
            &<Cli as clap::CommandFactory>::command(),
            "ka-hooks",
            &mut missing,
        );
        assert!(missing.is_empty(), "arguments without help: {missing:?}");
    }
}
