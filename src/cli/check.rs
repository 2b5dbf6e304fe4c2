//! `ka-hooks check`: validate every layer, trusted or not, and report all errors.

use super::{Output, EXIT_ERROR, EXIT_OK};
use crate::config::{Config, LoadOptions};

pub fn check(opts: &LoadOptions, json: bool, out: &Output) -> Result<u8, String> {
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
            let skipped = match config.untrusted.len() {
                0 => String::new(),
                n => format!(
                    "; {n} layer(s) skipped, their hooks do not run until trusted (see the \
                     warning above)"
                ),
            };
            outln!(
                "ok: {} active hook(s) from {files} file(s){skipped}",
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
