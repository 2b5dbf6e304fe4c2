//! The `ka-hooks` command line: clap commands and the human / `--json` output of each.
//!
//! Exit codes: 0 ok, 1 usage or configuration error, 2 blocked (`run` follows the exit-2 contract).

use std::ffi::OsString;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use clap::{Args, Parser, Subcommand};
use serde_json::{Map, Value};

use crate::adapter::Agent;
use crate::config::{Config, Hook, LayerState, LoadError, LoadOptions};
use crate::event::Event;
use crate::paths::{self, Paths};
use crate::trust::TrustStore;

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

/// The commands an agent runs once per tool call, parsed by a clap tree that holds only them.
/// Building the whole tree was about 40% of a no-hook `ka-hooks run`. Anything this parser
/// rejects (another command, `--help`, a typo) is parsed again by [`Cli`], which owns every
/// message, so both parsers accept exactly the same command lines for these commands.
#[derive(Debug, Parser)]
#[command(name = "ka-hooks")]
struct HotCli {
    #[command(flatten)]
    global: GlobalArgs,
    #[command(subcommand)]
    command: HotCommand,
}

#[derive(Debug, Subcommand)]
enum HotCommand {
    Run(run::RunArgs),
    Claude(crate::adapter::AdapterArgs),
    Codex(crate::adapter::AdapterArgs),
    Gemini(crate::adapter::AdapterArgs),
}

impl From<HotCli> for Cli {
    fn from(hot: HotCli) -> Cli {
        Cli {
            global: hot.global,
            command: match hot.command {
                HotCommand::Run(args) => Command::Run(args),
                HotCommand::Claude(args) => Command::Claude(args),
                HotCommand::Codex(args) => Command::Codex(args),
                HotCommand::Gemini(args) => Command::Gemini(args),
            },
        }
    }
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Dispatch an event to the hooks and print the outcome (exit 2 when blocked).
    Run(run::RunArgs),
    /// List the hooks in effect, in run order, with where each came from.
    List {
        /// Only hooks of this event.
        #[arg(long)]
        event: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Validate every layer (trusted or not) and report all errors.
    Check {
        #[arg(long)]
        json: bool,
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
    /// Register the adapter in Claude Code's settings (prints the diff; --write applies it).
    Install(crate::adapter::install::InstallArgs),
    /// Turn Claude Code's hooks into `[[hooks]]` entries (prints them; --write appends them).
    Import(crate::adapter::import::ImportArgs),
    /// Check every hook is wired and working: command found, script executable, layer trusted.
    Doctor {
        /// Also run each hook once on a synthetic payload in a scratch directory (KA_HOOKS_DOCTOR=1).
        #[arg(long)]
        exec: bool,
        /// Print the report as a JSON array, one object per hook, layer or configuration error.
        #[arg(long)]
        json: bool,
    },
    /// Print the JSON Schema of ka.toml's `[[hooks]]` and `[hook_settings]` (for editors).
    Schema,
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions {
        /// The shell to complete for.
        shell: clap_complete::Shell,
    },
}

/// Run the CLI; returns the process exit code.
pub fn main(args: impl IntoIterator<Item = OsString>) -> u8 {
    let args: Vec<OsString> = args.into_iter().collect();
    let parsed = HotCli::try_parse_from(&args)
        .map(Cli::from)
        .or_else(|_| Cli::try_parse_from(&args));
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
    if let Command::Claude(args) | Command::Codex(args) | Command::Gemini(args) = &cli.command {
        if args.fail_closed {
            fail_closed_adapter = true;
            crate::interrupt::block_when_interrupted(interrupted_message(&cli.command));
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

/// Terminal styling: colour only on a terminal, never with `NO_COLOR`.
struct Output {
    color: bool,
}

impl Output {
    fn new() -> Output {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Output {
            color: !no_color && std::io::stderr().is_terminal(),
        }
    }

    fn paint(&self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    fn error(&self, message: &str) {
        eprintln!("{} {message}", self.paint("1;31", "error:"));
    }

    fn warn(&self, message: &str) {
        eprintln!("{} {message}", self.paint("1;33", "warning:"));
    }
}

fn execute(cli: Cli, out: &Output) -> Result<u8, String> {
    let start_dir = match &cli.global.project {
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
    if cli.global.trust {
        if let Some(refusal) = crate::review::refusal_inside_agent("load untrusted hooks (--trust)")
        {
            return Err(refusal);
        }
    }
    let opts = LoadOptions {
        paths: Paths::from_env(),
        start_dir,
        trust_once: cli.global.trust,
    };
    let explicit = cli.global.project.is_some();
    match cli.command {
        Command::Run(args) => run::run(&opts, cli.global.log, args, out),
        Command::List { event, json } => list(&opts, event.as_deref(), json, out),
        Command::Check { json } => check(&opts, json, out),
        Command::Trust { show, revoke, yes } => crate::review::run(
            &opts,
            match (show, revoke) {
                (true, _) => crate::review::Mode::Show,
                (_, true) => crate::review::Mode::Revoke,
                _ => crate::review::Mode::Trust { yes },
            },
        ),
        Command::Test(args) => test::run(&opts, args, out),
        Command::Init { nested } => init(&opts, nested),
        Command::Claude(args) => Ok(adapter_run(
            Agent::Claude,
            explicit,
            cli.global.log.clone(),
            &opts,
            &args,
        )),
        Command::Codex(args) => Ok(adapter_run(
            Agent::Codex,
            explicit,
            cli.global.log.clone(),
            &opts,
            &args,
        )),
        Command::Gemini(args) => Ok(adapter_run(
            Agent::Gemini,
            explicit,
            cli.global.log.clone(),
            &opts,
            &args,
        )),
        Command::Install(args) => crate::adapter::install::run(&opts, &args),
        Command::Import(args) => crate::adapter::import::run(&opts, &args),
        Command::Doctor { exec, json } => doctor(&opts, exec, json, out),
        Command::Schema => {
            out!("{}", crate::schema::schema_text());
            Ok(EXIT_OK)
        }
        Command::Completions { shell } => completions(shell),
    }
}

/// What an adapter with `--fail-closed` answers when interrupted before its hooks could run.
const INTERRUPTED_CLAUDE: &str =
    "ka-hooks claude: interrupted by a signal before the hooks ran; blocked because of --fail-closed\n";
const INTERRUPTED_CODEX: &str =
    "ka-hooks codex: interrupted by a signal before the hooks ran; blocked because of --fail-closed\n";
const INTERRUPTED_GEMINI: &str =
    "ka-hooks gemini: interrupted by a signal before the hooks ran; blocked because of --fail-closed\n";

fn interrupted_message(command: &Command) -> &'static str {
    match command {
        Command::Codex(_) => INTERRUPTED_CODEX,
        Command::Gemini(_) => INTERRUPTED_GEMINI,
        _ => INTERRUPTED_CLAUDE,
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
            for u in &config.untrusted {
                out.warn(&u.to_string());
            }
            for w in &config.warnings {
                out.warn(w);
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

// ---------------------------------------------------------------------------------------------
// list
// ---------------------------------------------------------------------------------------------

fn hook_json(h: &Hook) -> Value {
    serde_json::json!({
        "name": h.name,
        "event": h.event.as_str(),
        "filter": if h.event.is_tool_event() { Value::String(h.filter.describe()) } else { Value::Null },
        "command": h.command,
        "timeout_secs": h.timeout.as_secs_f64(),
        "on_error": h.on_error.as_str(),
        "enabled": h.enabled,
        "env": h.env.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect::<Map<String, Value>>(),
        "source": h.source,
        "overrides": h.overrides,
    })
}

fn list(opts: &LoadOptions, event: Option<&str>, json: bool, out: &Output) -> Result<u8, String> {
    let event = event.map(parse_event).transpose()?;
    let config = load(opts, out)?;
    let hooks: Vec<&Hook> = config
        .hooks
        .iter()
        .filter(|h| event.is_none_or(|e| h.event == e))
        .collect();
    if json {
        let value = serde_json::json!({
            "project_root": config.project_root,
            "disabled": config.settings.disabled,
            "hooks": hooks.iter().map(|h| hook_json(h)).collect::<Vec<_>>(),
            "deduplicated": config.deduplicated,
            "layers": config.layers,
            "untrusted": config.untrusted,
            "settings": config.settings,
        });
        outln!(
            "{}",
            serde_json::to_string_pretty(&value).unwrap_or_default()
        );
        return Ok(EXIT_OK);
    }
    let mut w = String::new();
    use std::fmt::Write as _;
    for layer in &config.layers {
        let state = match layer.state {
            LayerState::Loaded => "loaded",
            LayerState::TrustedOnce => "loaded (--trust, this run only)",
            LayerState::TrustedRoot => "loaded (under a trusted root)",
            LayerState::Untrusted => "SKIPPED: untrusted",
            LayerState::Stale => {
                "CHANGED since trusted: new content skipped, its guards fail closed"
            }
            LayerState::Removed => "REMOVED since trusted: its guards fail closed",
            LayerState::Refused => "SKIPPED: refused (see the warning)",
            LayerState::Invalid => "SKIPPED: configuration errors (see `ka-hooks check`)",
        };
        let _ = writeln!(
            w,
            "{:8} {}  {state}",
            layer.layer.as_str(),
            layer.file.display()
        );
    }
    if config.layers.is_empty() {
        let _ = writeln!(w, "no config files found");
    }
    if let Some(why) = &config.settings.disabled {
        let _ = writeln!(w, "every hook is OFF: {why}");
    }
    let mut current = None;
    for h in &hooks {
        if current != Some(h.event) {
            current = Some(h.event);
            let _ = writeln!(w, "\n{}", out.paint("1", h.event.as_str()));
        }
        let state = if h.enabled { "" } else { "  [disabled]" };
        let filter = if h.event.is_tool_event() {
            format!("  {}", h.filter.describe())
        } else {
            String::new()
        };
        let _ = writeln!(
            w,
            "  {}{}{state}",
            crate::terminal::escape(&h.name),
            crate::terminal::escape(&filter)
        );
        let _ = writeln!(
            w,
            "    command: {}  (timeout {}s, on_error {})",
            crate::terminal::escape(&h.command),
            h.timeout.as_secs_f64(),
            h.on_error.as_str()
        );
        let _ = writeln!(w, "    from {}", h.source);
        for o in &h.overrides {
            let what = if o.keys == ["enabled"] && !h.enabled {
                "disabled".to_owned()
            } else {
                format!("set {}", o.keys.join(", "))
            };
            let _ = writeln!(w, "    {what} by {}", o.source);
        }
    }
    if hooks.is_empty() {
        let _ = writeln!(w, "\nno hooks in effect");
    }
    for d in &config.deduplicated {
        let _ = writeln!(
            w,
            "\nduplicate: {} ({}) runs once, as {}",
            d.name, d.source, d.kept
        );
    }
    for (key, origin) in &config.settings.provenance {
        let _ = writeln!(w, "setting {key} from {origin}");
    }
    out!("{w}");
    Ok(EXIT_OK)
}

// ---------------------------------------------------------------------------------------------
// check
// ---------------------------------------------------------------------------------------------

fn check(opts: &LoadOptions, json: bool, out: &Output) -> Result<u8, String> {
    let report = Config::check(opts);
    if json {
        let value = serde_json::json!({
            "ok": report.errors.is_empty(),
            "errors": report.errors,
            "active_hooks": report.config.as_ref().map(active_hooks),
            "untrusted": report.config.as_ref().map(|c| c.untrusted.clone()).unwrap_or_default(),
            "warnings": report.config.as_ref().map(fail_open_warnings).unwrap_or_default(),
        });
        outln!(
            "{}",
            serde_json::to_string_pretty(&value).unwrap_or_default()
        );
    } else {
        for e in &report.errors {
            out.error(&e.to_string());
        }
    }
    if !report.errors.is_empty() {
        if !json {
            eprintln!("{} error(s) found", report.errors.len());
        }
        return Ok(EXIT_ERROR);
    }
    if let Some(config) = &report.config {
        if !json {
            for u in &config.untrusted {
                out.warn(&u.to_string());
            }
            for w in &config.warnings {
                out.warn(w);
            }
            for n in &config.notes {
                outln!("note: {n}");
            }
            for warning in fail_open_warnings(config) {
                out.warn(&warning);
            }
            let files = config.layers.len();
            outln!(
                "ok: {} active hook(s) from {files} file(s)",
                active_hooks(config)
            );
        }
    }
    Ok(EXIT_OK)
}

/// Guards that fail open (see [`crate::doctor::fail_open_warning`]); warnings, not errors.
fn fail_open_warnings(config: &Config) -> Vec<String> {
    if config.settings.disabled.is_some() {
        return Vec::new();
    }
    config
        .hooks
        .iter()
        .filter_map(crate::doctor::fail_open_warning)
        .collect()
}

fn active_hooks(config: &Config) -> usize {
    if config.settings.disabled.is_some() {
        return 0;
    }
    config.hooks.iter().filter(|h| h.enabled).count()
}

// ---------------------------------------------------------------------------------------------
// trust
// ---------------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------------
// doctor, completions
// ---------------------------------------------------------------------------------------------

fn doctor(opts: &LoadOptions, exec: bool, json: bool, out: &Output) -> Result<u8, String> {
    let progress = exec && !json && std::io::stderr().is_terminal();
    let report = crate::doctor::diagnose(opts, exec, &mut |name| {
        if progress {
            eprintln!("running hook {name} on a synthetic payload...");
        }
    })
    .map_err(|e| e.to_string())?;
    if json {
        let text = serde_json::to_string_pretty(&report.entries)
            .map_err(|e| format!("failed to serialise the report: {e}"))?;
        outln!("{text}");
    } else {
        out!("{}", report.to_text(out.color));
    }
    Ok(if report.failing() {
        EXIT_ERROR
    } else {
        EXIT_OK
    })
}

fn completions(shell: clap_complete::Shell) -> Result<u8, String> {
    // Generated into memory: clap_complete panics on a write error, such as a closed pipe.
    let mut script = Vec::new();
    let mut command = <Cli as clap::CommandFactory>::command();
    clap_complete::generate(shell, &mut command, "ka-hooks", &mut script);
    let _ = std::io::stdout().write_all(&script);
    Ok(EXIT_OK)
}

// ---------------------------------------------------------------------------------------------
// init
// ---------------------------------------------------------------------------------------------

const STARTER: &str = include_str!("../starter.toml");

fn init(opts: &LoadOptions, nested: bool) -> Result<u8, String> {
    let start = paths::absolute(&opts.start_dir);
    if let Some(outer) = start.parent().and_then(paths::find_project_root) {
        if !nested {
            return Err(format!(
                "{} already has `.ka/`: its hooks apply here too. Add hooks to {}, or pass \
                 --nested to add a second layer in this directory (both then run)",
                crate::terminal::escape_path(&outer),
                crate::terminal::escape_path(
                    &outer.join(paths::PROJECT_DIR).join(paths::CONFIG_FILE)
                )
            ));
        }
    }
    let dir = start.join(paths::PROJECT_DIR);
    let file = dir.join(paths::CONFIG_FILE);
    if file.exists() {
        return Err(format!(
            "{} already exists; not overwriting it (edit it, then `ka-hooks trust`)",
            file.display()
        ));
    }
    std::fs::create_dir_all(&dir)
        .map_err(|e| format!("failed to create {}: {e}", dir.display()))?;
    write_new(&file, STARTER)?;
    let cases = start.join(crate::golden::TESTS_DIR);
    let example = cases.join("example.toml");
    if !example.exists() {
        std::fs::create_dir_all(&cases)
            .map_err(|e| format!("failed to create {}: {e}", cases.display()))?;
        write_new(&example, crate::golden::STARTER_CASES)?;
    }
    let ignore = dir.join(".gitignore");
    if !ignore.exists() {
        write_new(
            &ignore,
            "# personal overrides stay out of the repository\nka.local.toml\n",
        )?;
    }
    // The starter defines no active hook, so trusting it exposes nothing; the user's first edit
    // makes it stale, and that edit is what `ka-hooks trust` then reviews (as a diff).
    if let Some(data_dir) = &opts.paths.data_dir {
        crate::trust::keep_reviewed(data_dir, STARTER.as_bytes())
            .map_err(|e| format!("failed to write {}: {e}", data_dir.display()))?;
    }
    TrustStore::update(opts.paths.trust_file().as_deref(), |store| {
        store.allow(
            &start,
            ".ka/ka.toml",
            crate::trust::TrustRecord::new(STARTER.as_bytes(), Vec::new()),
        );
        (true, ())
    })
    .map_err(|e| e.to_string())?;
    outln!("wrote {}", file.display());
    outln!("wrote {}", example.display());
    outln!(
        "next: uncomment or add hooks, review and trust them with `ka-hooks trust`, \
         then check them with `ka-hooks test`"
    );
    Ok(EXIT_OK)
}

fn write_new(path: &Path, content: &str) -> Result<(), String> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| format!("failed to create {}: {e}", path.display()))?;
    f.write_all(content.as_bytes())
        .map_err(|e| format!("failed to write {}: {e}", path.display()))
}
