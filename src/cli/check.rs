//! `ka-hooks check`: validate every layer, trusted or not, and report all errors. A gate: it
//! exits 1 on a configuration error, on a hook whose command cannot run (a missing or
//! non-executable script, judged as `doctor` judges it), and on a layer file that exists but is
//! skipped (untrusted, changed since it was trusted, not loadable) unless `--allow-skipped`.
//! A skipped file's warnings are reported too: it is parsed and linted as if trusted, which runs
//! nothing (reading is safe; running is what the trust gate guards).

use std::path::Path;

use super::{Output, EXIT_ERROR, EXIT_OK};
use crate::config::{Config, Hook, LayerState, LoadOptions, Untrusted};
use crate::doctor::State;

/// What `check` found beyond the configuration errors.
#[derive(Default)]
struct Findings {
    /// Warnings, the skipped files' included (prefixed with the file).
    warnings: Vec<String>,
    /// Hooks whose command cannot run, as the doctor says it: `hook `x`: message (fix: ...)`.
    broken: Vec<String>,
    /// Layer files that exist and were skipped.
    skipped: Vec<String>,
    /// Tool names of an enabled guard that no agent has: the guard never sees the tool meant.
    unknown_tools: Vec<String>,
}

pub fn check(
    opts: &LoadOptions,
    json: bool,
    allow_skipped: bool,
    out: &Output,
) -> Result<u8, String> {
    let report = Config::check(opts);
    let findings = report
        .config
        .as_ref()
        .map(|config| findings(opts, config))
        .unwrap_or_default();
    let gate_fails = !findings.broken.is_empty()
        || !findings.unknown_tools.is_empty()
        || (!allow_skipped && !findings.skipped.is_empty());
    let ok = report.errors.is_empty() && !gate_fails;
    if json {
        let value = serde_json::json!({
            "ok": ok,
            "errors": report.errors,
            "active_hooks": report.config.as_ref().map(active_hooks),
            "untrusted": report.config.as_ref().map(|c| c.untrusted.clone()).unwrap_or_default(),
            "skipped": findings.skipped,
            "broken_commands": findings.broken,
            "unknown_tools": findings.unknown_tools,
            "warnings": findings.warnings,
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
    let Some(config) = &report.config else {
        return Ok(EXIT_OK);
    };
    if json {
        return Ok(if ok { EXIT_OK } else { EXIT_ERROR });
    }
    Ok(report_text(config, &findings, allow_skipped, out))
}

/// The text report of a configuration without errors: the warnings, the commands that cannot
/// run and the guard tool names no agent has, then the verdict line; the exit code.
fn report_text(config: &Config, findings: &Findings, allow_skipped: bool, out: &Output) -> u8 {
    let root = config.project_root.as_deref();
    for u in &config.untrusted {
        out.warn(&super::output::relative_to_root(&u.with_fix(), root));
    }
    for n in &config.notes {
        outln!("note: {n}");
    }
    for w in &findings.warnings {
        out.warn(&super::output::relative_to_root(w, root));
    }
    for b in &findings.broken {
        out.error(b);
    }
    for u in &findings.unknown_tools {
        out.error(&format!(
            "{u}\n  help: a guard with a name no agent has never sees the tool meant; fix the \
             name"
        ));
    }
    let hooks = active_hooks(config);
    let files = config.layers.len();
    if !findings.unknown_tools.is_empty() {
        eprintln!(
            "{} guard tool name(s) match no tool (see above)",
            findings.unknown_tools.len()
        );
        return EXIT_ERROR;
    }
    if !findings.broken.is_empty() {
        eprintln!(
            "{} hook(s) cannot run as written (see above; `ka-hooks doctor` says more)",
            findings.broken.len()
        );
        return EXIT_ERROR;
    }
    match (findings.skipped.len(), allow_skipped) {
        (0, _) => outln!("ok: {hooks} active hook(s) from {files} file(s)"),
        (n, true) => outln!(
            "ok (--allow-skipped): {hooks} active hook(s) from {files} file(s); {n} layer(s) \
             skipped, their hooks do not run until trusted (see the warning above)"
        ),
        (n, false) => {
            eprintln!(
                "not ok: {n} layer file(s) exist but are skipped, so their hooks do not run: {}\n  \
                 help: review and trust them (`ka-hooks trust`), or pass --allow-skipped to \
                 accept that they do not run",
                findings.skipped.join(", ")
            );
            return EXIT_ERROR;
        }
    }
    EXIT_OK
}

/// Warnings of the loaded layers and of every skipped one (linted as if trusted), commands that
/// cannot run, and the skipped files that exist.
fn findings(opts: &LoadOptions, config: &Config) -> Findings {
    let mut f = Findings {
        warnings: config.warnings.clone(),
        ..Findings::default()
    };
    f.warnings.extend(fail_open_warnings(config));
    if config.settings.disabled.is_none() {
        f.unknown_tools = config
            .hooks
            .iter()
            .filter(|h| h.enabled && h.enforce && h.is_guard())
            .flat_map(crate::config::unknown_tools)
            .collect();
        f.warnings.retain(|w| !f.unknown_tools.contains(w));
    }
    let run_dir = config
        .project_root
        .clone()
        .unwrap_or_else(|| crate::paths::absolute(&opts.start_dir));
    let active = config
        .hooks
        .iter()
        .filter(|h| h.enabled && config.settings.disabled.is_none());
    for hook in active {
        f.broken.extend(broken_command(hook, &run_dir, false));
        f.warnings.extend(broken_command(hook, &run_dir, true));
    }
    let skipped: Vec<&Untrusted> = config.untrusted.iter().filter(|u| exists(u)).collect();
    f.skipped = skipped
        .iter()
        .map(|u| crate::terminal::escape_path(&u.file))
        .collect();
    if skipped.is_empty() {
        return f;
    }
    // Every layer as if trusted: what the skipped files say. Loading runs nothing.
    let full = Config::check(&LoadOptions {
        trust_once: true,
        ..opts.clone()
    });
    let Some(full) = full.config else {
        return f;
    };
    for w in full.warnings.iter().chain(&fail_open_warnings(&full)) {
        if !f.warnings.contains(w) {
            f.warnings.push(format!("(in a skipped layer) {w}"));
        }
    }
    let from_skipped = |h: &&Hook| skipped.iter().any(|u| *u.file == *h.source.file);
    for hook in full.hooks.iter().filter(from_skipped).filter(|h| h.enabled) {
        for missing_program in [false, true] {
            if let Some(b) = broken_command(hook, &run_dir, missing_program) {
                f.warnings.push(format!("(in a skipped layer) {b}"));
            }
        }
    }
    f
}

/// A skipped layer whose file is there (not one that was removed).
fn exists(u: &Untrusted) -> bool {
    u.state != LayerState::Removed && u.file.exists()
}

/// What the doctor's static checks fail for `hook`'s command (a missing script, one that is
/// not executable), in one line; `missing_program` picks instead a program not on this
/// machine's `PATH` (a warning: the hooks may run on another machine).
fn broken_command(hook: &Hook, run_dir: &Path, missing_program: bool) -> Option<String> {
    let failing: Vec<String> = crate::doctor::command_checks(hook, run_dir)
        .into_iter()
        .filter(|c| c.state == State::Failing)
        .filter(|c| crate::doctor::is_missing_program(c) == missing_program)
        .map(|c| match c.fix {
            Some(fix) => format!("{}\n  help: {fix}", c.message),
            None => c.message,
        })
        .collect();
    if failing.is_empty() {
        return None;
    }
    Some(format!(
        "hook `{}` ({}): {}",
        crate::terminal::escape(&hook.name),
        hook.source,
        failing.join("; ")
    ))
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
