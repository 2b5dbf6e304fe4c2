//! `install` and `import` finish the job in Claude Code's settings: `install claude` warns when
//! the command it writes does not resolve, `install claude --remove` takes out only the adapter's
//! own entries, and `import claude --write` names the Claude hooks that would now run twice, which
//! `import claude --remove-originals` takes out.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use clap::Args;
use serde_json::Value;

use crate::adapter::import::ImportArgs;
use crate::adapter::install::{self, is_adapter_command, InstallArgs};
use crate::adapter::Agent;
use crate::config::LoadOptions;
use crate::event::Event;
use crate::paths;
use crate::terminal::{escape, escape_path};

/// `ka-hooks install`.
#[derive(Debug, Args)]
pub struct InstallCli {
    #[command(flatten)]
    args: InstallArgs,
    /// Remove the adapter's own entries (commands running `ka-hooks <agent>`) and nothing else.
    #[arg(long, conflicts_with = "all_events")]
    remove: bool,
    /// Print the whole hook file that would be written, and change nothing (copilot, cursor,
    /// antigravity).
    #[arg(long, conflicts_with = "write")]
    print: bool,
}

/// `ka-hooks import`.
#[derive(Debug, Args)]
pub struct ImportCli {
    #[command(flatten)]
    args: ImportArgs,
    /// Remove from Claude Code's settings the hooks that ka.toml already has (with the adapter
    /// installed they would run twice); prints the diff, --write applies it.
    #[arg(long)]
    remove_originals: bool,
}

/// One command hook found in a Claude Code settings file.
struct Found {
    event: String,
    group: usize,
    index: usize,
    command: String,
}

/// Whether `install <agent>` writes Claude Code's settings (and `import <agent>` reads them).
fn writes_claude_settings(agent: Agent) -> bool {
    matches!(
        agent.adapter().install(),
        crate::adapter::table::Install::ClaudeSettings
    )
}

pub fn install(opts: &LoadOptions, cli: &InstallCli) -> Result<u8, String> {
    let args = &cli.args;
    if cli.remove {
        if let Some(refusal) = crate::review::refusal_inside_agent("remove ka-hooks from an agent")
        {
            return Err(refusal);
        }
    }
    if crate::adapter::hookfile::is_hookfile_agent(args.agent) {
        let mode = if cli.remove {
            crate::adapter::hookfile::Mode::Remove
        } else {
            crate::adapter::hookfile::Mode::Install
        };
        let code = crate::adapter::hookfile::install(opts, args, mode, cli.print)?;
        if !cli.remove {
            if let Some(note) = crate::adapter::shell_sandbox::no_sandbox(args.agent) {
                eprintln!("note: {note}");
            }
        }
        return Ok(code);
    }
    if cli.print {
        return Err(format!(
            "install {} --print: --print is for the hook-file agents (copilot, cursor, \
             antigravity); without --write, install already prints the diff",
            args.agent.command()
        ));
    }
    if cli.remove {
        if !writes_claude_settings(args.agent) {
            return Err(format!(
                "install {} --remove: ka-hooks writes only Claude Code's settings; remove the \
                 entries from that agent's settings by hand",
                args.agent.command()
            ));
        }
        let file = settings_file(opts, args.user)?;
        let command = args.command.clone();
        let data_dir = opts.paths.data_dir.as_deref();
        // What `install` added to Claude Code's sandbox goes too, when it is all that is there.
        let deny = crate::adapter::shell_sandbox::claude_deny_write(
            &opts.paths,
            crate::paths::home_dir().as_deref(),
        );
        return edit_settings(
            &file,
            args.write,
            (data_dir, Some(&deny)),
            "the adapter's entries",
            |_, hook| {
                let c = hook_command(hook);
                is_adapter_command(c, args.agent) || command.as_deref() == Some(c)
            },
        );
    }
    let code = install::run(opts, args)?;
    if writes_claude_settings(args.agent) {
        let command = args
            .command
            .clone()
            .unwrap_or_else(|| crate::adapter::own_binary::adapter_command(args.agent));
        if let Some(warning) = unresolved(&command, &opts.start_dir) {
            eprintln!("warning: {warning}");
        }
        claude_notes(opts, args.user);
    }
    Ok(code)
}

/// What Claude Code does that the settings file cannot say (measured with 2.1.332): it reads a
/// project's `.claude/settings.json` only when started in the project root, and ends a turn
/// after 8 stop-hook continuations unless `CLAUDE_CODE_STOP_HOOK_BLOCK_CAP` says more.
fn claude_notes(opts: &LoadOptions, user: bool) {
    if !user {
        println!(
            "note: Claude Code started in a subdirectory of the project does not read \
             .claude/settings.json, so ka-hooks is not called there; install with --user (the \
             user's settings are read wherever Claude Code starts), or keep the entries in \
             .claude/settings.local.json"
        );
    }
    let read_all = LoadOptions {
        trust_once: true,
        ..opts.clone()
    };
    let cap = crate::config::Config::load(&read_all)
        .map(|c| c.settings.max_continuations)
        .unwrap_or(0);
    if cap > 8 {
        println!(
            "note: max_continuations = {cap}, but Claude Code ends a turn after 8 stop-hook \
             continuations of its own; set CLAUDE_CODE_STOP_HOOK_BLOCK_CAP={cap} in the \
             environment Claude Code starts in (or in the \"env\" of its settings) to let ka's \
             cap decide"
        );
    }
}

/// Why `command`'s program would not start where Claude Code runs it, with the fix; `None` when
/// it resolves (a path to an executable file, or a name on `PATH`).
fn unresolved(command: &str, dir: &Path) -> Option<String> {
    // The first simple command's words, as the shell reads them.
    let tokens = crate::shell::tokens(command).ok()?;
    let words: Vec<String> = tokens
        .iter()
        .map_while(|t| match t {
            crate::shell::Token::Word(w) => Some(w.text.clone()),
            _ => None,
        })
        .collect();
    let program = words.first()?;
    let path_var = std::env::var("PATH").unwrap_or_default();
    let found = if program.contains('/') {
        let path = dir.join(program);
        std::fs::metadata(&path).is_ok_and(|m| {
            use std::os::unix::fs::PermissionsExt as _;
            m.is_file() && m.permissions().mode() & 0o111 != 0
        })
    } else {
        crate::doctor::find_on_path(program, &path_var, dir).is_some()
    };
    if found {
        return None;
    }
    let absolute = std::env::current_exe()
        .map(|exe| {
            let rest: Vec<String> = words[1..]
                .iter()
                .map(|w| shell_words::quote(w).into_owned())
                .collect();
            format!(
                "{} {}",
                shell_words::quote(&exe.to_string_lossy()),
                rest.join(" ")
            )
        })
        .unwrap_or_else(|_| "/path/to/ka-hooks claude".to_owned());
    Some(format!(
        "`{}` is not found on PATH here, so Claude Code cannot run `{}` (a hook that cannot \
         start fails open). Put ka-hooks on PATH (`cargo install --path .` in its checkout), or \
         write the absolute path: ka-hooks install claude --command {}",
        escape(program),
        escape(command),
        shell_words::quote(&absolute)
    ))
}

pub fn import(opts: &LoadOptions, cli: &ImportCli) -> Result<u8, String> {
    let args = &cli.args;
    if cli.remove_originals {
        if let Some(refusal) =
            crate::review::refusal_inside_agent("remove an agent's own hooks (--remove-originals)")
        {
            return Err(refusal);
        }
    }
    if cli.remove_originals && !writes_claude_settings(args.agent) {
        return Err(format!(
            "import {} --remove-originals: only Claude Code's settings can be edited this way; \
             remove the imported entries from that agent's hook file by hand",
            args.agent.command()
        ));
    }
    if cli.remove_originals {
        let target = import_target(opts, args)?;
        if !args.user {
            replacements_run(opts, &target)?;
        }
        let in_ka = ka_hooks_in(&target);
        let mut code = 0;
        for file in claude_sources(opts, args) {
            if !file.exists() {
                continue;
            }
            let what = format!("the hooks {} already has", escape_path(&target));
            code = code.max(edit_settings(
                &file,
                args.write,
                (opts.paths.data_dir.as_deref(), None),
                &what,
                |event, hook| imported(&in_ka, event, hook_command(hook)),
            )?);
        }
        return Ok(code);
    }
    let code = crate::adapter::import::run(opts, args)?;
    if code == 0 && args.write {
        twice_note(opts, args)?;
    }
    Ok(code)
}

/// `--remove-originals` only once the replacements run: while the project file that holds them
/// is untrusted (or changed since it was trusted), its hooks are skipped, and removing Claude
/// Code's own would leave the agent with neither.
fn replacements_run(opts: &LoadOptions, target: &Path) -> Result<(), String> {
    let gated = LoadOptions {
        trust_once: false,
        ..opts.clone()
    };
    let config = crate::config::Config::load(&gated).map_err(|e| {
        format!(
            "import claude --remove-originals: the hooks that would replace Claude Code's do not \
             load ({e}); nothing removed. Fix {}, then run this again",
            escape_path(target)
        )
    })?;
    let same = |file: &Path| {
        paths::absolute(file) == paths::absolute(target)
            || std::fs::canonicalize(file).ok() == std::fs::canonicalize(target).ok()
    };
    let Some(skipped) = config.untrusted.iter().find(|u| same(&u.file)) else {
        return Ok(());
    };
    let root = paths::find_project_root(&opts.start_dir).unwrap_or_else(|| opts.start_dir.clone());
    Err(format!(
        "import claude --remove-originals: {} is {}, so the hooks imported into it do not run; \
         removing Claude Code's own now would leave neither. Nothing removed. Review and trust \
         it first (`{}`), then run this again",
        escape_path(&skipped.file),
        skipped.status,
        escape(&crate::config::trust_command(&root))
    ))
}

/// After `import --write`: the Claude hooks now in ka.toml too, and the command that removes them.
fn twice_note(opts: &LoadOptions, args: &ImportArgs) -> Result<(), String> {
    let target = import_target(opts, args)?;
    let in_ka = ka_hooks_in(&target);
    let mut lines = Vec::new();
    for file in claude_sources(opts, args) {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let Ok(settings) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        for f in command_hooks(&settings) {
            if imported(&in_ka, &f.event, &f.command) {
                lines.push(format!(
                    "  {}: hooks.{}[{}].hooks[{}]: {}",
                    escape_path(&file),
                    escape(&f.event),
                    f.group,
                    f.index,
                    escape(&f.command)
                ));
            }
        }
    }
    if lines.is_empty() {
        return Ok(());
    }
    let mut remove = String::from("ka-hooks import claude --remove-originals --write");
    if args.user {
        remove.push_str(" --user");
    }
    for from in &args.from {
        remove.push_str(&format!(
            " --from {}",
            shell_words::quote(&from.to_string_lossy())
        ));
    }
    println!(
        "these Claude Code hooks now also run through ka; with the adapter installed (`ka-hooks \
         install claude`) each would run twice:\n{}\nonce ka.toml is trusted (until then its hooks \
         do not run), remove them from Claude Code's settings with: {}",
        lines.join("\n"),
        escape(&remove)
    );
    Ok(())
}

/// The ka.toml `import` writes to (the same rule as `import` itself).
fn import_target(opts: &LoadOptions, args: &ImportArgs) -> Result<PathBuf, String> {
    if args.user {
        return opts
            .paths
            .user_file()
            .ok_or_else(|| "no config directory: set KA_CONFIG_DIR".to_owned());
    }
    let root = paths::find_project_root(&opts.start_dir).unwrap_or_else(|| opts.start_dir.clone());
    Ok(root.join(paths::PROJECT_DIR).join(paths::CONFIG_FILE))
}

/// The Claude Code settings files `import` reads (the same rule as `import` itself).
fn claude_sources(opts: &LoadOptions, args: &ImportArgs) -> Vec<PathBuf> {
    if !args.from.is_empty() {
        return args.from.clone();
    }
    if args.user {
        return install::user_settings().into_iter().collect();
    }
    let root = paths::find_project_root(&opts.start_dir).unwrap_or_else(|| opts.start_dir.clone());
    let dir = root.join(".claude");
    vec![dir.join("settings.json"), dir.join("settings.local.json")]
}

fn settings_file(opts: &LoadOptions, user: bool) -> Result<PathBuf, String> {
    if user {
        install::user_settings().ok_or_else(|| {
            "no home directory: set CLAUDE_CONFIG_DIR to the folder of Claude Code's settings"
                .to_owned()
        })
    } else {
        Ok(install::project_settings(&opts.start_dir))
    }
}

/// (ka event, command) of each hook in a ka.toml.
fn ka_hooks_in(file: &Path) -> BTreeSet<(Event, String)> {
    let table = std::fs::read_to_string(file)
        .ok()
        .and_then(|text| text.parse::<toml::Table>().ok())
        .unwrap_or_default();
    table
        .get("hooks")
        .and_then(toml::Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|hook| {
            let event = hook.get("event")?.as_str()?.parse::<Event>().ok()?;
            Some((event, hook.get("command")?.as_str()?.to_owned()))
        })
        .collect()
}

/// Whether the Claude hook (`event` in Claude's spelling) is among ka.toml's hooks.
fn imported(in_ka: &BTreeSet<(Event, String)>, event: &str, command: &str) -> bool {
    !is_adapter_command(command, Agent::Claude)
        && event
            .parse::<Event>()
            .is_ok_and(|e| in_ka.contains(&(e, command.to_owned())))
}

fn hook_command(hook: &Value) -> &str {
    hook.get("command").and_then(Value::as_str).unwrap_or("")
}

/// Every hook with a `command` in `settings.hooks`, with where it is.
fn command_hooks(settings: &Value) -> Vec<Found> {
    let mut found = Vec::new();
    let Some(hooks) = settings.get("hooks").and_then(Value::as_object) else {
        return found;
    };
    for (event, groups) in hooks {
        for (gi, group) in groups.as_array().into_iter().flatten().enumerate() {
            let list = group.get("hooks").and_then(Value::as_array);
            for (hi, hook) in list.into_iter().flatten().enumerate() {
                if let Some(command) = hook.get("command").and_then(Value::as_str) {
                    found.push(Found {
                        event: event.clone(),
                        group: gi,
                        index: hi,
                        command: command.to_owned(),
                    });
                }
            }
        }
    }
    found
}

/// Remove the hooks `doomed(event, hook)` picks from `settings`; a group, event or `hooks` table
/// left empty by that removal goes too (one that was empty before stays). Returns what went.
fn remove_hooks(settings: &mut Value, doomed: &dyn Fn(&str, &Value) -> bool) -> Vec<String> {
    let mut removed = Vec::new();
    let Some(hooks) = settings.get_mut("hooks").and_then(Value::as_object_mut) else {
        return removed;
    };
    let mut emptied_events = Vec::new();
    for (event, groups) in hooks.iter_mut() {
        let Some(groups) = groups.as_array_mut() else {
            continue;
        };
        let before = groups.len();
        groups.retain_mut(|group| {
            let Some(list) = group.get_mut("hooks").and_then(Value::as_array_mut) else {
                return true;
            };
            let had = list.len();
            list.retain(|hook| {
                let gone = doomed(event, hook);
                if gone {
                    removed.push(format!("{}: {}", escape(event), escape(hook_command(hook))));
                }
                !gone
            });
            !(had > 0 && list.is_empty())
        });
        if before > 0 && groups.is_empty() {
            emptied_events.push(event.clone());
        }
    }
    for event in &emptied_events {
        hooks.remove(event);
    }
    if !emptied_events.is_empty() && hooks.is_empty() {
        if let Some(root) = settings.as_object_mut() {
            root.remove("hooks");
        }
    }
    removed
}

/// Remove what `doomed` picks from one settings file: print the diff, or write it with `write`.
/// `install --remove` also takes out the sandbox paths `install` added (`deny`), and the
/// sandbox itself when nothing but what `install` set is left of it.
fn edit_settings(
    file: &Path,
    write: bool,
    (data_dir, deny): (Option<&Path>, Option<&[String]>),
    what: &str,
    doomed: impl Fn(&str, &Value) -> bool,
) -> Result<u8, String> {
    let shown = escape_path(file);
    let original = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            println!("nothing to remove: {shown} does not exist");
            return Ok(0);
        }
        Err(e) => return Err(format!("failed to read {shown}: {e}")),
    };
    let mut settings: Value = serde_json::from_str(&original)
        .map_err(|e| format!("{shown}: not valid JSON ({e}); fix it, then run again"))?;
    let removed = remove_hooks(&mut settings, &doomed);
    if removed.is_empty() {
        println!("nothing to remove: {shown} has none of {what}");
        return Ok(0);
    }
    if let Some(deny) = deny {
        crate::adapter::shell_sandbox::unmerge_claude(&mut settings, deny);
    }
    let new = install::render(&settings, Some(&original))?;
    // A file `install` created and that is now empty goes, rather than leaving `{}` behind.
    let ours_and_empty = settings.as_object().is_some_and(serde_json::Map::is_empty)
        && crate::adapter::created::created(data_dir, file);
    if write && ours_and_empty {
        std::fs::remove_file(file).map_err(|e| format!("failed to delete {shown}: {e}"))?;
        crate::adapter::created::forget(data_dir, file);
        println!("deleted {shown}: `ka-hooks install` created it, and nothing else is left in it");
    } else if write {
        install::write_atomically(file, &new)?;
        println!("updated {shown}: removed");
    } else {
        let diff = similar::TextDiff::from_lines(&original, &new);
        print!(
            "{}",
            install::escape_diff(
                &diff
                    .unified_diff()
                    .context_radius(3)
                    .header(&shown, &shown)
                    .to_string()
            )
        );
        println!("would remove:");
    }
    for r in &removed {
        println!("  {r}");
    }
    if !write {
        println!("dry run: nothing written; run again with --write to apply");
    }
    Ok(0)
}
