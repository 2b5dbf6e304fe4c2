//! What both benchmarks share: the body of a generated hook entry, and reading back the means
//! criterion wrote in this run, for their `Targets` blocks.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_json::Value;

/// Where criterion keeps its results: `$CRITERION_HOME`, else `<target dir>/criterion`.
pub fn criterion_home() -> Option<PathBuf> {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return Some(PathBuf::from(home));
    }
    if let Some(target) = std::env::var_os("CARGO_TARGET_DIR") {
        return Some(PathBuf::from(target).join("criterion"));
    }
    // A bench runs as <target>/<profile>/deps/<name>-<hash>.
    let exe = std::env::current_exe().ok()?;
    Some(exe.parent()?.parent()?.parent()?.join("criterion"))
}

/// Mean time in ns of `group/function`, if this run (since `since`) measured it.
pub fn mean_ns(home: &Path, id: &str, since: SystemTime) -> Option<f64> {
    let path = home.join(id).join("new/estimates.json");
    let fresh = std::fs::metadata(&path).ok()?.modified().ok()? >= since;
    let estimates: Value = serde_json::from_slice(&std::fs::read(&path).ok()?).ok()?;
    fresh
        .then(|| estimates["mean"]["point_estimate"].as_f64())
        .flatten()
}

/// The keys of generated entry `i` after its name: a mix of tool lists and globs, Claude matchers
/// (name lists and a regex), `env` tables, several events and settings. None of the tool-event
/// ones matches the tool `read`.
pub fn entry_body(i: usize) -> String {
    match i % 10 {
        0 => "event = \"pre_tool_use\"\ntool = [\"write\", \"edit\"]\n".to_owned(),
        1 => "event = \"pre_tool_use\"\ntool = \"mcp__*\"\n".to_owned(),
        2 => "event = \"PreToolUse\"\nmatcher = \"Edit|Write|MultiEdit\"\n".to_owned(),
        3 => "event = \"pre_tool_use\"\nmatcher = \"^(bash|shell)_.*\"\ntimeout = 5\n".to_owned(),
        4 => format!(
            "event = \"post_tool_use\"\ntool = [\"write\", \"edit\", \"notebook_*\"]\n\
             env = {{ FMT_LEVEL = \"{i}\", FMT_ROOTS = \"src,tests\" }}\n"
        ),
        5 => "event = \"post_tool_use\"\nmatcher = \"Bash\"\non_error = \"block\"\n".to_owned(),
        6 => "event = \"stop\"\n".to_owned(),
        7 => format!(
            "event = \"pre_tool_use\"\ntool = [\"bash\", \"git_*\", \"web_fetch\"]\n\
             on_error = \"ask\"\nenv = {{ GUARD_ROOTS = \"src,.ka\", GUARD_ID = \"{i}\" }}\n"
        ),
        8 => "event = \"user_prompt_submit\"\n".to_owned(),
        _ => "event = \"session_start\"\nenabled = true\n".to_owned(),
    }
}
