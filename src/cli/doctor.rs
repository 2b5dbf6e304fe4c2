//! `ka-hooks doctor`: the report of [`crate::doctor`], as text or JSON.

use std::io::IsTerminal;

use super::{Output, EXIT_ERROR, EXIT_OK};
use crate::config::LoadOptions;

pub fn doctor(opts: &LoadOptions, exec: bool, json: bool, out: &Output) -> Result<u8, String> {
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
