//! `ka-hooks test`: golden cases for hooks, kept in the project (`.ka/tests/*.toml`), each run
//! through the real dispatcher with the real layers and checked against what must happen.
//!
//! A run never passes vacuously: a skipped (untrusted, changed, invalid) layer, a case file with
//! an error, or a filter that selects no case fails it.

pub mod case;
pub mod expect;

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;
use serde_json::Value;

pub use case::Case;

use crate::cancel::CancelToken;
use crate::config::Config;
use crate::dispatch::Request;
use crate::outcome::Outcome;

/// Where a project keeps its cases, relative to its root.
pub const TESTS_DIR: &str = ".ka/tests";

/// The example case `ka-hooks init` writes.
pub const STARTER_CASES: &str = include_str!("../starter_cases.toml");

/// The case files of the project: `<root>/.ka/tests/*.toml`, sorted by name.
pub fn case_files(root: &Path) -> Result<Vec<PathBuf>, String> {
    let dir = root.join(TESTS_DIR);
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(format!(
                "cannot read {}: {e}",
                crate::terminal::escape_path(&dir)
            ))
        }
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml") && p.is_file())
        .collect();
    files.sort();
    Ok(files)
}

/// Every case of `files`, and every error of every file.
pub fn read_cases(files: &[PathBuf]) -> (Vec<Case>, Vec<String>) {
    let mut cases = Vec::new();
    let mut errors = Vec::new();
    for file in files {
        match case::read_file(file) {
            Ok(found) => cases.extend(found),
            Err(found) => errors.extend(found),
        }
    }
    (cases, errors)
}

/// The id a filter matches: `<file stem>: <case name>`.
pub fn case_id(case: &Case) -> String {
    let stem = case
        .file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!("{}: {}", crate::terminal::escape(&stem), case.name)
}

/// What one case did.
#[derive(Debug, Clone, Serialize)]
pub struct CaseResult {
    pub id: String,
    pub file: PathBuf,
    pub line: usize,
    pub name: String,
    pub passed: bool,
    /// Each unmet expectation, or why the case could not run.
    pub failures: Vec<String>,
    /// The verdict of the dispatch (see `crate::verdict`).
    pub verdict: Option<String>,
    pub duration_ms: f64,
    /// The whole outcome, for `--json`.
    pub outcome: Option<Outcome>,
}

/// Dispatch `case` through `config` and check its expectations. The payload's `cwd` is the
/// project root unless the case gives one.
pub fn run_case(
    config: &Config,
    root: &Path,
    case: &Case,
    cancel: Option<CancelToken>,
) -> CaseResult {
    let started = Instant::now();
    let mut payload = case.payload.clone();
    payload
        .entry("cwd")
        .or_insert_with(|| Value::String(root.to_string_lossy().into_owned()));
    let mut request = Request::new(case.event, payload);
    request.continued = case.continuations;
    request.cancel = cancel;
    let mut result = CaseResult {
        id: case_id(case),
        file: case.file.clone(),
        line: case.line,
        name: case.name.clone(),
        passed: false,
        failures: Vec::new(),
        verdict: None,
        duration_ms: 0.0,
        outcome: None,
    };
    let outcome = match &case.hook {
        Some(hook) => config.replay(request, hook),
        None => Ok(config.dispatch_uncounted(request)),
    };
    match outcome {
        Ok(outcome) => {
            result.failures = expect::check(&case.expect, &outcome);
            result.verdict = Some(crate::verdict::verdict(&outcome));
            result.outcome = Some(outcome);
        }
        Err(e) => result.failures.push(format!("could not run: {e}")),
    }
    result.passed = result.failures.is_empty();
    result.duration_ms = started.elapsed().as_secs_f64() * 1000.0;
    result
}
