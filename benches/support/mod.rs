//! What both benchmarks share: reading back the means criterion wrote in this run, for their
//! `Targets` blocks.

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
