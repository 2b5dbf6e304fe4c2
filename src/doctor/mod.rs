//! `ka-hooks doctor`: is every hook wired and working?
//!
//! For each hook in effect, and each hook of a layer the trust gate skipped, the doctor checks
//! without running anything that its command resolves and its layer is trusted; with `exec` it
//! also runs each runnable hook once on a [synthetic payload](synthetic_payload) and judges the
//! answer. Every check ends `ok`, `warning` or `failing`; an entry's state is its worst check's.

mod agents;
mod command;
mod exec;
mod fitted;
mod report;
mod static_checks;
#[cfg(test)]
mod tests;

use std::fmt::Write as _;
use std::io::Read as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::config::{
    self, Config, ConfigError, Hook, Layer, LayerState, LoadError, LoadOptions, MatcherKind,
    ToolFilter, Untrusted,
};
use crate::dispatch::Request;
use crate::event::{Event, ExitTwo};
use crate::outcome::{HookReport, Status};
use crate::paths;
use crate::trust::{TrustError, TrustStatus};

pub(crate) use command::*;
pub(crate) use exec::exec_check;
pub use exec::{prepare_scratch, synthetic_payload, synthetic_tool};
pub use report::{Check, Entry, Kind, Report, State};
pub use static_checks::fail_open_warning;
pub(crate) use static_checks::*;

/// The environment variable set (to `1`) for a hook the doctor runs, so a hook can skip side
/// effects (notifications, network calls) on a synthetic payload.
pub const DOCTOR_ENV: &str = "KA_HOOKS_DOCTOR";
/// The longest the doctor waits for one hook: its own timeout, capped at this.
pub const EXEC_TIMEOUT_CAP: Duration = Duration::from_secs(10);
/// The file the synthetic payloads name, relative to the scratch directory.
pub const EXAMPLE_FILE: &str = "src/example.rs";
/// Content of [`EXAMPLE_FILE`], and of `arguments.content` in write-like synthetic calls.
pub const EXAMPLE_SOURCE: &str = "fn main() {\n    println!(\"hello from ka-hooks\");\n}\n";
/// `session_id` of every synthetic payload (`doctor --exec`, `run --example`, `events`); a hook
/// the doctor runs also sees [`DOCTOR_ENV`].
pub const SESSION_ID: &str = "ka-hooks-example";

/// Diagnose every hook that `opts` loads, and every hook of a layer the trust gate skips. With
/// `exec`, run each runnable hook once on a synthetic payload; `progress` is told the name of each
/// hook before it runs. Fails only when the trust store cannot be read.
pub fn diagnose(
    opts: &LoadOptions,
    exec: bool,
    progress: &mut dyn FnMut(&str),
) -> Result<Report, TrustError> {
    let mut entries = Vec::new();
    let checked = Config::check(opts);
    for error in &checked.errors {
        entries.push(config_entry(error));
    }
    let start_dir = paths::absolute(&opts.start_dir);
    let gated = match Config::load(opts) {
        Ok(config) => config,
        Err(LoadError::Config(_)) => {
            // Already reported, one entry per error: nothing loads until they are fixed.
            return Ok(Report {
                project_root: paths::find_project_root(&start_dir),
                run_dir: start_dir,
                executed: false,
                entries,
            });
        }
    };
    // Every layer as if trusted: what the skipped layers would add. Loading runs nothing.
    let full = Config::load(&LoadOptions {
        trust_once: true,
        ..opts.clone()
    })
    .ok();
    let run_dir = gated
        .project_root
        .clone()
        .unwrap_or_else(|| start_dir.clone());
    let fix = trust_fix(gated.project_root.as_deref());
    entries.extend(trusted_once_entries(&gated, &fix));
    let mut executed = false;
    for hook in &gated.hooks {
        let (entry, ran) =
            loaded_hook_entry(hook, &gated, full.as_ref(), &fix, &run_dir, exec, progress);
        executed |= ran;
        entries.push(entry);
    }
    for skipped in &gated.untrusted {
        entries.push(layer_entry(skipped, full.as_ref()));
        if let Some(full) = &full {
            entries.extend(skipped_hook_entries(skipped, full, &run_dir, exec));
        }
    }
    entries.extend(agents::entries(&gated, &start_dir));
    entries.extend(agents::agent_entries(opts, &run_dir));

    Ok(Report {
        project_root: gated.project_root.clone(),
        run_dir,
        executed: exec && executed,
        entries,
    })
}

/// A warning for each layer trusted for this run only (`--trust`): in a session its hooks do not
/// run.
fn trusted_once_entries(gated: &Config, fix: &str) -> Vec<Entry> {
    gated
        .layers
        .iter()
        .filter(|layer| layer.state == LayerState::TrustedOnce)
        .map(|layer| {
            Entry {
                kind: Kind::Layer,
                name: layer.file.display().to_string(),
                state: State::Ok,
                event: None,
                filter: None,
                command: None,
                layer: Some(layer.layer),
                file: Some(layer.file.clone()),
                line: None,
                runs: None,
                checks: vec![Check::warning(
                    "trust",
                    "trusted for this run only (--trust): in a session its hooks do not run",
                    Some(fix.to_owned()),
                )],
            }
            .finish()
        })
        .collect()
}

/// The entry of a hook in effect: its static checks, whether it is trusted, enabled, enforced
/// and confined, and with `exec` its run on a synthetic payload; and whether it was run.
fn loaded_hook_entry(
    hook: &Hook,
    gated: &Config,
    full: Option<&Config>,
    fix: &str,
    run_dir: &Path,
    exec: bool,
    progress: &mut dyn FnMut(&str),
) -> (Entry, bool) {
    let mut entry = hook_entry(hook, run_dir);
    entry.checks.insert(0, trust_check(hook, gated, fix));
    for o in pending_overrides(hook, full, &gated.untrusted) {
        entry.checks.insert(1, o);
    }
    let mut runs = hook.enabled;
    if !hook.enabled {
        entry.checks.insert(
            1,
            Check::ok("enabled", "disabled (`enabled = false`): never runs"),
        );
        downgrade(&mut entry.checks);
    } else if let Some(why) = &gated.settings.disabled {
        runs = false;
        entry.checks.insert(
            1,
            Check::warning(
                "enabled",
                format!("every hook is off: {why}"),
                Some("unset KA_HOOKS_DISABLE, or remove `disable_all = true`".into()),
            ),
        );
    }
    if hook.enabled && !hook.enforce {
        entry.checks.insert(1, report_only_check(hook));
    }
    if let Some(check) = sandbox_check(hook) {
        entry.checks.push(check);
    }
    entry.runs = Some(
        runs && !gated
            .layers
            .iter()
            .any(|l| l.state == LayerState::TrustedOnce && *l.file == *hook.source.file),
    );
    let mut executed = false;
    if exec {
        if runs {
            progress(&hook.name);
            let exec = exec_check(gated, hook, run_dir);
            if exec.state == State::Ok {
                // The run answered: what could not be checked statically works.
                for c in &mut entry.checks {
                    if c.state == State::Warning && c.message.starts_with(NOT_CHECKED) {
                        c.state = State::Ok;
                    }
                }
            }
            entry.checks.push(exec);
            executed = true;
        } else {
            entry
                .checks
                .push(Check::ok("exec", "not run: the hook is off"));
        }
    }
    (entry.finish(), executed)
}

/// The entries of the hooks of a layer the trust gate skipped (loaded as if trusted): each
/// failing its trust check, none run.
fn skipped_hook_entries(
    skipped: &Untrusted,
    full: &Config,
    run_dir: &Path,
    exec: bool,
) -> Vec<Entry> {
    let mut entries = Vec::new();
    for hook in full
        .hooks
        .iter()
        .filter(|h| *h.source.file == *skipped.file)
    {
        let mut entry = hook_entry(hook, run_dir);
        entry.runs = Some(false);
        entry.checks.insert(
            0,
            Check::failing(
                "trust",
                format!(
                    "its {} layer {}: this hook does not run",
                    skipped.layer,
                    trust_words(skipped.status)
                ),
                Some(skipped.fix.clone()),
            ),
        );
        if exec {
            entry.checks.push(Check::ok(
                "exec",
                "not run: the trust gate skips its layer (review it, then trust it)",
            ));
        }
        entries.push(entry.finish());
    }
    entries
}

/// How the hook's runs are confined on this system: ok when confined, a warning when
/// it would be confined and is not, failing when it cannot run (`require_sandbox`).
fn sandbox_check(hook: &Hook) -> Option<Check> {
    let text = hook.sandbox.describe()?;
    Some(if text.starts_with("confined") {
        Check::ok("sandbox", text)
    } else if text.starts_with("not run") {
        Check::failing(
            "sandbox",
            text,
            Some(
                "run ka-hooks on Linux 6.7 or later with Landlock enabled, or remove \
                  `require_sandbox` from your user file"
                    .into(),
            ),
        )
    } else {
        Check::warning(
            "sandbox",
            text,
            Some("see docs/sandbox.md: what the sandbox stops, and where it works".into()),
        )
    })
}

/// A report-only hook (`enforce = false`) runs but applies nothing: a warning on a guard, which
/// guards nothing yet.
fn report_only_check(hook: &Hook) -> Check {
    let message = if hook.event.is_pipeline() {
        "report-only (`enforce = false`): it runs, but what it would block, ask or rewrite is only \
         reported; it guards nothing yet"
    } else {
        "report-only (`enforce = false`): it runs, but what it would do is only reported"
    };
    Check::warning(
        "enforce",
        message,
        Some("remove `enforce = false` once its reports look right".into()),
    )
}
