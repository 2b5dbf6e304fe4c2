//! `ka-hooks trust`: a person reviews what a project's hook files will run, and records it.
//!
//! The review shows what changed since the last trusted version (a diff of the hooks and of the
//! scripts they run), or the whole inventory the first time. Every name, command and path is
//! printed through `crate::terminal::escape`, so a `\r` or an escape sequence cannot make
//! `curl … | sh` read as `cargo fmt --check`. On a terminal it asks before recording; without one
//! it records only with `--yes`. Inside an agent's tool call it refuses: the model must not
//! approve its own edits (`caller`).

use std::fmt::Write as _;
use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

use crate::config::scripts::{self, Coverage};
use crate::config::{self, review_files, LoadOptions, Reviewed};
use crate::terminal::escape;
use crate::trust::{self, TrustRecord, TrustStatus, TrustStore};

mod inventory;

use inventory::{describe, short_label};

/// What `trust` was asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Review and record.
    Trust {
        /// Record without asking (`--yes`).
        yes: bool,
    },
    /// Print the status of each file.
    Show,
    /// Forget the records.
    Revoke,
}

/// Why a command that weakens a guard refuses to run here: inside an agent's tool call (see
/// `caller`).
pub fn refusal_inside_agent(what: &str) -> Option<String> {
    let why = crate::caller::tool_call()?;
    Some(format!(
        "refusing to {what} from inside an agent's tool call ({why}): a person must review \
         and approve hook changes in their own terminal, never the agent whose edits they are"
    ))
}

/// Run `trust`; the text goes to stdout, the result is the exit code or an error. The command
/// line's own: a host uses [`review`], [`record`] and [`revoke`].
#[doc(hidden)]
pub fn run(opts: &LoadOptions, mode: Mode) -> Result<u8, String> {
    let store = TrustStore::load(opts.paths.trust_file().as_deref()).map_err(|e| e.to_string())?;
    let files = review_files(opts, &store);
    if files.is_empty() {
        return Err(format!(
            "no `.ka/` folder with hook files in {} or its parents: nothing to trust (create one \
             with `ka-hooks init`)",
            crate::terminal::escape_path(&opts.start_dir)
        ));
    }
    match mode {
        Mode::Show => {
            for f in &files {
                show(f);
            }
            Ok(0)
        }
        Mode::Revoke => revoke_and_say(opts, &files),
        Mode::Trust { yes } => trust(opts, &files, yes),
    }
}

fn label(f: &Reviewed) -> String {
    format!(
        "{:8} {}",
        f.layer.as_str(),
        crate::terminal::escape_path(&f.path)
    )
}

fn show(f: &Reviewed) {
    let what = f
        .what
        .as_deref()
        .map(|w| format!(" ({})", escape(w)))
        .unwrap_or_default();
    println!("{}: {}{what}", label(f), f.status);
    if f.status != TrustStatus::Trusted {
        println!(
            "         review it with `{}`",
            config::trust_command(&f.root)
        );
    }
}

fn revoke_and_say(opts: &LoadOptions, files: &[Reviewed]) -> Result<u8, String> {
    // Revoking a stale record drops the guards that fail closed, and revoking a current one
    // stops the project's guards from running: either way a person's act.
    if let Some(refusal) = refusal_inside_agent("revoke trust") {
        return Err(refusal);
    }
    let removed = revoke_files(opts, files)?;
    for (f, removed) in files.iter().zip(removed) {
        println!(
            "{}: {}",
            label(f),
            if removed {
                "trust revoked"
            } else {
                "was not trusted"
            }
        );
    }
    Ok(0)
}

/// One file a review would record: exactly the bytes and script hashes that were shown.
#[derive(Debug, Clone)]
struct Pending {
    label: String,
    root: PathBuf,
    rel: &'static str,
    path: PathBuf,
    bytes: Vec<u8>,
    coverage: Coverage,
}

/// What a person must see before a project's hooks run, and what trusting it records: the
/// review `ka-hooks trust` prints (a diff against the last trusted version of each changed
/// file, or its whole inventory; the scripts its hooks run; what trust cannot cover), made by
/// [`review`]. Show [`Review::text`] to the user; if they agree, [`record`] trusts exactly what
/// it showed.
#[derive(Debug, Clone, Default)]
pub struct Review {
    text: String,
    pending: Vec<Pending>,
}

impl Review {
    /// The text the user must read before trusting (every name, command and path escaped).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether a file needs the user's trust (`false`: everything is trusted already, and
    /// [`record`] would record nothing).
    pub fn needs_trust(&self) -> bool {
        !self.pending.is_empty()
    }

    /// The layer files [`record`] would trust.
    pub fn files(&self) -> impl Iterator<Item = &Path> {
        self.pending.iter().map(|p| p.path.as_path())
    }
}

/// The review of the project files from `opts.start_dir` up (see [`Review`]). Reading is
/// safe: nothing is recorded, and it works inside an agent's tool call too.
pub fn review(opts: &LoadOptions) -> Result<Review, RecordError> {
    let data_dir = opts.paths.data_dir.clone().ok_or(RecordError::NoDataDir)?;
    let store = TrustStore::load(opts.paths.trust_file().as_deref())
        .map_err(|e| RecordError::Store(e.to_string()))?;
    let files = review_files(opts, &store);
    if files.is_empty() {
        return Err(RecordError::NothingToTrust(opts.start_dir.clone()));
    }
    let mut review = build(opts, &files, &data_dir).map_err(RecordError::Invalid)?;
    review.text = crate::layout::unmarked(&review.text);
    Ok(review)
}

/// Trust exactly what `review` showed, once the user agreed: the files' bytes and the scripts
/// their hooks run, as they were read for the review. A file or script that changed since is
/// not recorded ([`RecordError::Changed`]): review again. Refuses inside an agent's tool call.
pub fn record(opts: &LoadOptions, review: &Review) -> Result<(), RecordError> {
    if let Some(refusal) = refusal_inside_agent("record trust") {
        return Err(RecordError::InsideAgent(refusal));
    }
    let data_dir = opts.paths.data_dir.clone().ok_or(RecordError::NoDataDir)?;
    for p in &review.pending {
        if std::fs::read(&p.path).ok().as_deref() != Some(p.bytes.as_slice()) {
            return Err(RecordError::Changed(p.path.clone()));
        }
        for s in &p.coverage.scripts {
            if scripts::script_hash(&p.root, &s.path) != s.sha256 {
                return Err(RecordError::Changed(p.root.join(&s.path)));
            }
        }
    }
    keep_and_record(opts, &data_dir, &review.pending).map_err(RecordError::Store)
}

/// Forget the trust of every project file from `opts.start_dir` up: their hooks stop running
/// (and a changed file's guards stop failing closed). The files whose record was dropped.
/// Refuses inside an agent's tool call: revoking is a person's act too.
pub fn revoke(opts: &LoadOptions) -> Result<Vec<PathBuf>, RecordError> {
    if let Some(refusal) = refusal_inside_agent("revoke trust") {
        return Err(RecordError::InsideAgent(refusal));
    }
    let store = TrustStore::load(opts.paths.trust_file().as_deref())
        .map_err(|e| RecordError::Store(e.to_string()))?;
    let files = review_files(opts, &store);
    let removed = revoke_files(opts, &files).map_err(RecordError::Store)?;
    Ok(files
        .into_iter()
        .zip(removed)
        .filter_map(|(f, removed)| removed.then_some(f.path))
        .collect())
}

fn revoke_files(opts: &LoadOptions, files: &[Reviewed]) -> Result<Vec<bool>, String> {
    TrustStore::update(opts.paths.trust_file().as_deref(), |store| {
        let removed: Vec<bool> = files
            .iter()
            .map(|f| store.revoke(&f.root, f.rel).is_some())
            .collect();
        (removed.iter().any(|r| *r), removed)
    })
    .map_err(|e| e.to_string())
}

fn trust(opts: &LoadOptions, files: &[Reviewed], yes: bool) -> Result<u8, String> {
    if let Some(refusal) = refusal_inside_agent("record trust") {
        return Err(refusal);
    }
    let data_dir = opts.paths.data_dir.clone().ok_or_else(|| {
        "no data directory: set KA_DATA_DIR to where ka-hooks may keep its trust store".to_owned()
    })?;
    let review = build(opts, files, &data_dir)?;
    let width = crate::layout::width(std::io::stdout());
    print!("{}", crate::layout::wrap(&review.text, width));
    if review.pending.is_empty() {
        return Ok(0);
    }
    if !yes {
        if !std::io::stdin().is_terminal() {
            let line = "not recorded: there is no terminal to confirm on; read the review above \
                        and run `ka-hooks trust --yes` to record it";
            println!("{}", crate::layout::wrap(line, width));
            return Ok(1);
        }
        if !confirm()? {
            println!("not recorded");
            return Ok(1);
        }
    }
    keep_and_record(opts, &data_dir, &review.pending)?;
    for p in &review.pending {
        let line = format!(
            "{}: trusted (sha256 {}, {} script path(s) covered); editing it or a covered script \
             makes its guards fail closed until you review it again",
            p.label,
            &trust::content_hash(&p.bytes)[..12],
            p.coverage
                .scripts
                .iter()
                .filter(|s| s.sha256.is_some())
                .count()
        );
        println!("{}", crate::layout::wrap(&line, width));
    }
    Ok(0)
}

/// The review of `files` (see [`Review`]); an error when a file cannot be read or has errors.
fn build(opts: &LoadOptions, files: &[Reviewed], data_dir: &Path) -> Result<Review, String> {
    let mut base = config::ReviewBase::new(opts);
    let mut review = Review::default();
    for f in files {
        match &f.text {
            Err(why) => {
                return Err(format!(
                    "{} {}; fix it before trusting the project",
                    crate::terminal::escape_path(&f.path),
                    escape(why)
                ))
            }
            Ok(None) => {
                let _ = writeln!(
                    review.text,
                    "{}: removed since it was trusted; revoking its trust drops its record",
                    short_label(f)
                );
            }
            Ok(Some(text)) if f.status == TrustStatus::Trusted => {
                let _ = writeln!(
                    review.text,
                    "{}: already trusted, unchanged",
                    short_label(f)
                );
                // Later files may override its hooks by name.
                let _ = base.file_commands(f.layer, &f.path, text);
            }
            Ok(Some(text)) => {
                let pending = review_file(&mut base, f, text, data_dir, &mut review.text)?;
                review.pending.push(pending);
            }
        }
    }
    Ok(review)
}

/// One changed or new file: its review appended to `out`, and what trusting it records.
fn review_file(
    base: &mut config::ReviewBase,
    f: &Reviewed,
    text: &str,
    data_dir: &Path,
    out: &mut String,
) -> Result<Pending, String> {
    let changes = base.changes(f.layer, &f.path, text);
    let (commands, errors) = base.file_commands(f.layer, &f.path, text);
    if !errors.is_empty() {
        // The caller puts `error: ` before the first.
        let list: Vec<String> = errors
            .iter()
            .enumerate()
            .map(|(i, e)| {
                if i == 0 {
                    e.to_string()
                } else {
                    format!("error: {e}")
                }
            })
            .collect();
        return Err(format!(
            "{}\n{} has errors; fix them (see `ka-hooks check`) before trusting it",
            list.join("\n"),
            crate::terminal::escape_path(&f.path)
        ));
    }
    let coverage = scripts::coverage(
        &f.root,
        commands.iter().map(|(h, c)| (h.as_str(), c.as_str())),
    );
    describe(out, f, text, &changes, &coverage, data_dir);
    not_executable(out, &f.root, &commands);
    Ok(Pending::of(f, text, coverage))
}

impl Pending {
    fn of(f: &Reviewed, text: &str, coverage: Coverage) -> Pending {
        Pending {
            label: short_label(f),
            root: f.root.clone(),
            rel: f.rel,
            path: f.path.clone(),
            bytes: text.as_bytes().to_vec(),
            coverage,
        }
    }
}

/// Record the current content of every project file from `opts.start_dir` up, with the scripts
/// it covers, without a review: for tests. A host shows [`review`] and then calls [`record`].
/// Refuses inside an agent's tool call, like `ka-hooks trust`.
pub fn record_current(opts: &LoadOptions) -> Result<(), RecordError> {
    if let Some(refusal) = refusal_inside_agent("record trust") {
        return Err(RecordError::InsideAgent(refusal));
    }
    let data_dir = opts.paths.data_dir.clone().ok_or(RecordError::NoDataDir)?;
    let store = TrustStore::load(opts.paths.trust_file().as_deref())
        .map_err(|e| RecordError::Store(e.to_string()))?;
    let files = review_files(opts, &store);
    let mut base = config::ReviewBase::new(opts);
    let mut pending = Vec::new();
    for f in &files {
        if let Ok(Some(text)) = &f.text {
            let (commands, _) = base.file_commands(f.layer, &f.path, text);
            let coverage = scripts::coverage(
                &f.root,
                commands.iter().map(|(h, c)| (h.as_str(), c.as_str())),
            );
            pending.push(Pending::of(f, text, coverage));
        }
    }
    keep_and_record(opts, &data_dir, &pending).map_err(RecordError::Store)
}

/// Why a review, a record or a revoke did nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RecordError {
    /// Called inside an agent's tool call (`KA_AGENT_TOOL_CALL`, `CLAUDECODE`, ...): trust is
    /// a person's act, never the model's.
    #[error("{0}")]
    InsideAgent(String),
    /// No data directory to keep the trust store in (`KA_DATA_DIR`, else the user's data dir).
    #[error("no data directory to keep the trust store in: set KA_DATA_DIR or HOME")]
    NoDataDir,
    /// The trust store, or a reviewed copy, could not be read or written.
    #[error("{0}")]
    Store(String),
    /// No `.ka/` folder with hook files in this directory or its parents.
    #[error("no `.ka/` folder with hook files in {} or its parents: nothing to trust", crate::terminal::escape_path(.0))]
    NothingToTrust(PathBuf),
    /// A file cannot be read or has configuration errors: fix it before trusting it.
    #[error("{0}")]
    Invalid(String),
    /// This file changed since the review was made: nothing was recorded; review again.
    #[error("{} changed since the review; nothing was recorded: review it again", crate::terminal::escape_path(.0))]
    Changed(PathBuf),
}

fn confirm() -> Result<bool, String> {
    print!("trust these files? [y/N] ");
    let _ = std::io::stdout().flush();
    let mut answer = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut answer)
        .map_err(|e| format!("failed to read the answer: {e}"))?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes" | "Yes"))
}

/// Keep the reviewed bytes (file and scripts) and record every file in one locked update.
fn keep_and_record(opts: &LoadOptions, data_dir: &Path, pending: &[Pending]) -> Result<(), String> {
    for p in pending {
        trust::keep_reviewed(data_dir, &p.bytes).map_err(|e| {
            format!(
                "failed to keep the reviewed copy in {}: {e}",
                data_dir.display()
            )
        })?;
        for s in p.coverage.scripts.iter().filter(|s| s.sha256.is_some()) {
            if let Ok(bytes) = std::fs::read(p.root.join(&s.path)) {
                // Only what was hashed is kept; a script changed since is caught by its hash.
                if Some(trust::content_hash(&bytes)) == s.sha256 {
                    let _ = trust::keep_reviewed(data_dir, &bytes);
                }
            }
        }
    }
    TrustStore::update(opts.paths.trust_file().as_deref(), |store| {
        for p in pending {
            store.allow(
                &p.root,
                p.rel,
                TrustRecord::new(&p.bytes, p.coverage.scripts.clone()),
            );
        }
        (true, ())
    })
    .map_err(|e| e.to_string())
}

/// A warning for each script inside the project that a hook runs as a program (`./guard.sh`,
/// `.ka/hooks/guard.sh`) and that lacks the exec bit: it fails with exit 126 at every call, and
/// a guard that cannot run either blocks every call or, with `on_error = "ignore"`, none.
fn not_executable(out: &mut String, root: &Path, commands: &[(String, String)]) {
    use std::os::unix::fs::PermissionsExt;
    for (hook, command) in commands {
        let line = crate::shell::simple_commands(command);
        for cmd in &line.commands {
            let program = &cmd.program;
            if cmd.dynamic.first().copied().unwrap_or(true) || !program.contains('/') {
                continue;
            }
            let Ok(path) = root.join(program).canonicalize() else {
                continue;
            };
            let Ok(meta) = std::fs::metadata(&path) else {
                continue;
            };
            if path.starts_with(root) && meta.is_file() && meta.permissions().mode() & 0o111 == 0 {
                let _ = writeln!(
                    out,
                    "warning: {hook} runs {} as a program, but it is not executable: every call \
                     fails with exit 126; fix: `chmod +x {}`",
                    escape(program),
                    escape(program)
                );
            }
        }
    }
}
