//! The load itself: read every layer, judge each gated file against the trust store, parse what
//! may run, merge, and add the fail-closed guards of changed or removed files.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::broken::{self, Ghost};
use super::discover::{self, GATED_FILES};
use super::error::ConfigError;
use super::hook::{Hook, Layer};
use super::merge::{defines, merge_hooks, own_errors, Below};
use super::monotone;
use super::parse::{parse_file, ParsedFile};
use super::read::{self, Found};
use super::settings::{layer_settings, Gate, StalePolicy};
use super::snapshot::{self, Pending, Update};
use super::stale::{tombstones, Change};
use super::touched::RealDirs;
use super::unparsed;
use super::weakened::{self, Changed};

use super::{scripts, trust_command, Config, LayerFile, LayerState, LoadOptions, Untrusted};
use crate::paths;
use crate::trust::{TrustRecord, TrustStatus, TrustStore};

/// Everything a load gathers before merging.
#[derive(Default)]
struct Loading {
    errors: Vec<ConfigError>,
    warnings: Vec<String>,
    layers: Vec<LayerFile>,
    untrusted: Vec<Untrusted>,
    parsed: Vec<ParsedFile>,
    /// Where each entry name of `parsed` is written (file, entry), for validating the next gated
    /// file on top of them.
    names: HashMap<String, Vec<(usize, usize)>>,
    tombstones: Vec<Hook>,
    /// Managed or user files that did not load (see [`broken`]).
    ghosts: Vec<Ghost>,
    /// Files that load without review and changed since their snapshot (see [`weakened`]).
    changed: Vec<Changed>,
    /// Snapshots the first dispatch replaces.
    updates: Vec<Update>,
    /// The scripts trust covers for the layers that loaded as reviewed.
    covered: Vec<super::Covered>,
}

impl Loading {
    fn push_parsed(&mut self, file: ParsedFile) {
        let f = self.parsed.len();
        self.names.reserve(file.hooks.len());
        for (e, (_, raw)) in file.hooks.iter().enumerate() {
            if let Some(name) = &raw.name {
                self.names
                    .entry(name.value.clone())
                    .or_default()
                    .push((f, e));
            }
        }
        self.parsed.push(file);
    }

    fn below(&self) -> Below<'_> {
        Below {
            names: &self.names,
            files: &self.parsed,
        }
    }
}

/// Load every layer. With `check_all`, gated files that do not load are parsed too, and their
/// errors returned (reading is safe; running is what the gate guards).
pub(super) fn load(opts: &LoadOptions, check_all: bool) -> (Option<Config>, Vec<ConfigError>) {
    let (l, gate, roots) = read_layers(opts, check_all);
    let Loading {
        mut errors,
        mut warnings,
        layers,
        untrusted,
        parsed,
        tombstones,
        ghosts,
        changed,
        updates,
        covered,
        ..
    } = l;
    let mut parsed = parsed;
    if !check_all {
        drop_dangling(&mut parsed, &mut warnings);
    }
    // A setting that does not parse is `check`'s error; a load goes on, and every guard
    // blocks until it is fixed ([`unparsed`]).
    let mut unparsed_settings = Vec::new();
    let settings = layer_settings(&parsed, &opts.paths, &gate, &mut unparsed_settings);
    if check_all {
        errors.append(&mut unparsed_settings);
    }
    let stale_skip = stale_skip_source(&parsed);
    // What the layers made before each unreviewed file changed (only when one did).
    let before = weakened::befores(changed, &parsed, &settings);
    let merged = merge_hooks(parsed, &settings, &mut errors, &mut warnings);
    let (mut hooks, deduplicated) = (merged.hooks, merged.deduplicated);
    // A refused weakening is `check`'s error (naming both files); a load goes on with the
    // original hook guarding, and says so on every dispatch.
    let refused = refusals(merged.refused, check_all, &mut errors);
    warnings.extend(refused.iter().cloned());
    if !errors.is_empty() {
        in_reading_order(&layers, &mut errors);
        return (None, errors);
    }
    let mut announcements = announce_and_hold(&before, &mut hooks, &ghosts, &unparsed_settings);
    if settings.managed_only {
        keep_managed_only(&mut hooks, &mut warnings);
    }
    // Fail-closed guards first: a call they block spawns nothing.
    if settings.stale == StalePolicy::Block && !settings.managed_only {
        hooks.splice(0..0, tombstones);
    }
    // The covered scripts of trusted layers run from their reviewed copies.
    super::pinned::pin(&mut hooks, &covered, opts.paths.data_dir.as_deref());
    announcements.extend(stale_skip_announcement(&settings, &untrusted, stale_skip));
    announcements.extend(sandbox_announcements(&hooks));
    let notes = filter_notes(&hooks, &mut warnings);
    let mut config = Config {
        project_root: roots.last().cloned(),
        protected: std::sync::OnceLock::new(),
        covered,
        options: opts.clone(),
        roots,
        hooks,
        deduplicated,
        settings,
        layers,
        untrusted,
        warnings,
        announcements,
        refused,
        notes,
        guard_scripts: std::sync::OnceLock::new(),
        pending: Pending::new(opts.paths.data_dir.clone(), updates),
        told: Default::default(),
        by_event: Default::default(),
        paths_index: None,
        has_paths: false,
    };
    config.index();
    (Some(config), errors)
}

/// What each unreviewed change weakened, announced; then the hooks of broken files and of
/// unparsed settings held (their announcements follow).
fn announce_and_hold(
    before: &[(Changed, Vec<Hook>)],
    hooks: &mut Vec<Hook>,
    ghosts: &[Ghost],
    unparsed_settings: &[ConfigError],
) -> Vec<String> {
    let mut announcements: Vec<String> = before
        .iter()
        .flat_map(|(c, old)| weakened::announce(old, hooks, c))
        .collect();
    announcements.extend(broken::hold(hooks, ghosts));
    announcements.extend(unparsed::hold(hooks, unparsed_settings));
    announcements
}

/// The refused weakenings: `check`'s errors, or (for a load) the messages every dispatch says.
fn refusals(
    merged: Vec<monotone::Refusal>,
    check_all: bool,
    errors: &mut Vec<ConfigError>,
) -> Vec<String> {
    let mut refused = Vec::with_capacity(merged.len());
    for refusal in merged {
        if check_all {
            errors.push(refusal.error());
        } else {
            refused.push(refusal.message());
        }
    }
    refused
}

/// Sort errors in reading order: layer by layer, top to bottom (errors are found in phases).
fn in_reading_order(layers: &[LayerFile], errors: &mut [ConfigError]) {
    let file_rank = |e: &ConfigError| {
        layers
            .iter()
            .position(|l| l.file == e.file)
            .unwrap_or(usize::MAX)
    };
    errors.sort_by_key(|e| (file_rank(e), e.line, e.column));
}

/// Under a managed file that allows managed hooks only, every other hook is dropped, and a
/// warning counts them.
fn keep_managed_only(hooks: &mut Vec<Hook>, warnings: &mut Vec<String>) {
    let before = hooks.len();
    hooks.retain(Hook::is_managed);
    if before > hooks.len() {
        warnings.push(format!(
            "the managed file allows managed hooks only: {} other hook(s) do not run",
            before - hooks.len()
        ));
    }
}

/// Every layer file read, judged and parsed, with the gate's settings and the project roots.
fn read_layers(opts: &LoadOptions, check_all: bool) -> (Loading, Gate, Vec<PathBuf>) {
    let mut l = Loading::default();
    let start = paths::absolute(&opts.start_dir);
    let trust_file = opts.paths.trust_file();
    let store = match TrustStore::load(trust_file.as_deref()) {
        Ok(store) => store,
        Err(e) => {
            l.warnings.push(format!(
                "{e}; until then every project layer is treated as untrusted"
            ));
            TrustStore::default()
        }
    };
    let data_dir = opts.paths.data_dir.as_deref();
    for (layer, path) in discover::ungated(&opts.paths) {
        load_ungated(&mut l, data_dir, check_all, layer, &path);
    }
    // A broken file's last good version stands in for it here too: its `trusted_roots` hold.
    let gate = Gate::from_files(&l.parsed);
    let roots = discover::roots(&start, &store);
    for root in &roots {
        for (layer, rel) in GATED_FILES {
            let judged = judge(root, rel, &store);
            // Each file is validated on top of what loaded before it (overrides by name).
            load_gated(&mut l, opts, &gate, check_all, root, layer, judged);
        }
    }
    if let (false, Some(data_dir)) = (check_all, data_dir) {
        vanished_under_trusted_roots(&mut l, data_dir, &gate, &start);
    }
    (l, gate, roots)
}

/// A project or local file under a trusted root that is gone (`rm .ka/ka.toml`, `mv .ka
/// elsewhere`) while its snapshot says it loaded: nobody reviews that, so its guards that are
/// gone with it are announced, as an edit that removed them would be ([`weakened`]).
fn vanished_under_trusted_roots(l: &mut Loading, data_dir: &Path, gate: &Gate, start: &Path) {
    if gate.trusted_roots.is_empty() {
        return;
    }
    let under = |dir: &Path| gate.trusted_roots.iter().any(|r| dir.starts_with(r));
    for dir in start.ancestors().filter(|d| under(d)) {
        for (layer, rel) in GATED_FILES {
            let path = dir.join(rel);
            if std::fs::symlink_metadata(&path).is_ok() {
                continue;
            }
            let Some(before) = snapshot::read(data_dir, layer, &path) else {
                continue;
            };
            l.changed.push(Changed {
                layer,
                file: path.clone(),
                root: Some(dir.to_path_buf()),
                before,
                removed: true,
            });
            l.updates.push(Update {
                layer,
                file: path,
                text: None,
            });
        }
    }
}

/// The tool names of `hook`'s filter that no agent has, one line each as the load warns about
/// them (`check` makes them errors on a guard, which would never see the tool meant).
pub(crate) fn unknown_tools(hook: &Hook) -> Vec<String> {
    if !hook.event.is_tool_event() {
        return Vec::new();
    }
    hook.filter
        .review()
        .1
        .into_iter()
        .map(|w| at_hook(hook, w))
        .collect()
}

fn at_hook(hook: &Hook, what: String) -> String {
    format!(
        "hook `{}` ({}): {what}",
        crate::terminal::escape(&hook.name),
        hook.source
    )
}

/// Tool names read in another agent's spelling (notes), and names no agent has (warnings).
fn filter_notes(hooks: &[Hook], warnings: &mut Vec<String>) -> Vec<String> {
    let mut notes = Vec::new();
    for hook in hooks {
        // A matcher on another event names a source, a trigger, a type (`startup`, `auto`,
        // `idle_prompt`; `Event::matcher_field`), never a tool: only tool events' are tools.
        let translated = if hook.event.is_tool_event() {
            hook.filter.review().0
        } else {
            Vec::new()
        };
        let at = |w: String| at_hook(hook, w);
        notes.extend(translated.into_iter().map(at));
        warnings.extend(unknown_tools(hook));
        let single = hook
            .template
            .as_ref()
            .is_some_and(super::template::Template::uses_single_path);
        if single && hook.is_guard() && hook.matches_tool(Some("apply_patch")) {
            warnings.push(at(
                "its command names one path (`{path}`), but as a guard it also sees patches of \
                 several files, which it then blocks unread; write `{paths}` to judge them all"
                    .into(),
            ));
        }
        if let Some(missing) = hook.filter.missing_writers(hook.is_guard()) {
            // A guard that misses a writer lets that write through; elsewhere it is a note.
            if hook.is_guard() {
                warnings.push(at(missing));
            } else {
                notes.push(at(missing));
            }
        }
    }
    notes
}

/// The managed or user file: loaded as it is. One that does not load is reported and skipped,
/// and its last good version stands in for it ([`broken`]); `check` reports its errors.
fn load_ungated(
    l: &mut Loading,
    data_dir: Option<&Path>,
    check_all: bool,
    layer: Layer,
    path: &Path,
) {
    let layer_file = |state, sha256| LayerFile {
        layer,
        file: path.to_path_buf(),
        root: None,
        state,
        sha256,
    };
    let last_good = || data_dir.and_then(|d| snapshot::read(d, layer, path));
    match read::ungated(path) {
        Found::Missing => {
            if let (false, Some(before)) = (check_all, last_good()) {
                l.changed.push(Changed {
                    layer,
                    file: path.to_path_buf(),
                    root: None,
                    before,
                    removed: true,
                });
                l.updates.push(Update {
                    layer,
                    file: path.to_path_buf(),
                    text: None,
                });
            }
        }
        Found::Refused(why) => {
            let error =
                ConfigError::unpositioned(path, None, format!("the {layer} file {why}"), None);
            l.layers.push(layer_file(LayerState::Refused, None));
            broken_file(l, data_dir, check_all, layer, path, vec![error]);
        }
        Found::Text { text, sha256 } => {
            let mut errors = Vec::new();
            let file = parse_file(layer, path, &text, &mut errors);
            if check_all {
                // `check` reports every error, the ones only merging finds included.
                l.push_parsed(file);
                l.errors.extend(errors);
                l.layers.push(layer_file(LayerState::Loaded, Some(sha256)));
                return;
            }
            validate_ungated(l, &file, &mut errors);
            if !errors.is_empty() {
                l.layers.push(layer_file(LayerState::Invalid, Some(sha256)));
                broken_file(l, data_dir, check_all, layer, path, errors);
                return;
            }
            l.push_parsed(file);
            l.layers.push(layer_file(LayerState::Loaded, Some(sha256)));
            watch(l, last_good(), layer, path, None, text);
        }
    }
}

/// The errors of a managed or user file on top of the files before it, as [`validate_alone`],
/// except for entries that only change a hook by name that no file so far defines
/// (`name = "fmt"`, `enabled = false`): such an entry may change a project's hook, which loads
/// later (the user's word, see [`super::merge`]). They are judged once every layer is read
/// ([`drop_dangling`]), so one of them never makes the whole file fail.
fn validate_ungated(l: &Loading, file: &ParsedFile, errors: &mut Vec<ConfigError>) {
    let in_file: std::collections::HashSet<&str> = file
        .hooks
        .iter()
        .filter(|(_, raw)| defines(raw))
        .filter_map(|(_, raw)| raw.name.as_ref().map(|n| n.value.as_str()))
        .collect();
    let later = |raw: &super::parse::RawHook| {
        !defines(raw)
            && raw.name.as_ref().is_some_and(|n| {
                !in_file.contains(n.value.as_str()) && !l.names.contains_key(&n.value)
            })
    };
    if !file.hooks.iter().any(|(_, raw)| later(raw)) {
        return validate_alone(&l.below(), file, errors);
    }
    let mut now = file.clone();
    now.hooks.retain(|(_, raw)| !later(raw));
    validate_alone(&l.below(), &now, errors);
}

/// Entries of the managed file that only change a hook by name that no layer defines: they
/// change nothing, so they are left out with a warning instead of failing the load (`check`
/// still reports each as an error). The merge does the same for the user file's.
fn drop_dangling(parsed: &mut [ParsedFile], warnings: &mut Vec<String>) {
    let mut defined: std::collections::HashSet<String> = std::collections::HashSet::new();
    for file in parsed.iter() {
        for (_, raw) in &file.hooks {
            if let (Some(name), true) = (&raw.name, defines(raw)) {
                defined.insert(name.value.clone());
            }
        }
    }
    // The user file's are the merge's to judge (a warning there too); the managed file's here.
    for file in parsed.iter_mut().filter(|f| f.layer == Layer::Managed) {
        file.hooks.retain(|(source, raw)| {
            let dangling = !defines(raw)
                && raw
                    .name
                    .as_ref()
                    .is_some_and(|n| !defined.contains(&n.value));
            if let (true, Some(name)) = (dangling, &raw.name) {
                warnings.push(format!(
                    "{source}: `name = \"{}\"` changes a hook that no layer here defines; \
                     ignored (`ka-hooks check` reports it)",
                    crate::terminal::escape(&name.value)
                ));
            }
            !dangling
        });
    }
}

/// A file that loads without review: when it differs from its snapshot, compare what it makes
/// with what the snapshot made, and replace the snapshot at the next dispatch.
fn watch(
    l: &mut Loading,
    last_good: Option<String>,
    layer: Layer,
    path: &Path,
    root: Option<&Path>,
    text: String,
) {
    if last_good.as_deref() == Some(text.as_str()) {
        return;
    }
    if let Some(before) = last_good {
        l.changed.push(Changed {
            layer,
            file: path.to_path_buf(),
            root: root.map(Path::to_path_buf),
            before,
            removed: false,
        });
    }
    l.updates.push(Update {
        layer,
        file: path.to_path_buf(),
        text: Some(text),
    });
}

/// A managed or user file that does not load: for `check`, its errors; otherwise its last good
/// version stands in for it, if one is kept and still loads.
fn broken_file(
    l: &mut Loading,
    data_dir: Option<&Path>,
    check_all: bool,
    layer: Layer,
    path: &Path,
    errors: Vec<ConfigError>,
) {
    if check_all {
        l.errors.extend(errors);
        return;
    }
    let mut ghost = Ghost::new(layer, path, &errors);
    match data_dir.map(|d| snapshot::read_checked(d, layer, path)) {
        None => ghost.why_not = Some("no data dir is set to keep its last good version in"),
        Some(Ok(None)) => {
            ghost.why_not = Some("no last good version of it is kept on this machine");
        }
        // Its guards are unknown: every call a guard could veto blocks ([`broken`]).
        Some(Err(why)) => ghost.unreadable = Some(why),
        Some(Ok(Some(text))) => {
            let mut errors = Vec::new();
            let file = parse_file(layer, path, &text, &mut errors);
            validate_ungated(l, &file, &mut errors);
            if errors.is_empty() {
                l.push_parsed(file);
                ghost.kept = true;
            } else {
                ghost.why_not = Some("its last good version no longer loads either");
            }
        }
    }
    l.ghosts.push(ghost);
}

/// The managed or user file that says `stale = "skip"` and is heeded (the managed file has the
/// last word).
fn stale_skip_source(parsed: &[ParsedFile]) -> Option<PathBuf> {
    fn says(f: &ParsedFile) -> Option<&str> {
        f.settings
            .as_ref()
            .and_then(|s| s.get("stale"))
            .and_then(toml::Value::as_str)
    }
    let last = |layer| {
        parsed
            .iter()
            .rev()
            .filter(|f| f.layer == layer)
            .find_map(|f| says(f).map(|v| (f, v)))
    };
    match last(Layer::Managed).or_else(|| last(Layer::User)) {
        Some((f, "skip")) => Some(f.path.to_path_buf()),
        _ => None,
    }
}

/// `stale = "skip"` kept the guards of changed or removed project files from failing closed:
/// said on every dispatch while it does.
fn stale_skip_announcement(
    settings: &super::Settings,
    untrusted: &[Untrusted],
    source: Option<PathBuf>,
) -> Option<String> {
    if settings.stale != StalePolicy::Skip {
        return None;
    }
    let skipped: Vec<String> = untrusted
        .iter()
        .filter(|u| matches!(u.state, LayerState::Stale | LayerState::Removed))
        .map(|u| crate::terminal::escape_path(&u.file))
        .collect();
    if skipped.is_empty() {
        return None;
    }
    Some(format!(
        "`stale = \"skip\"` in {}: the guards of {} changed or removed project layer(s) ({}) \
         do not run, where they would block every call they matched until a person reviews the \
         change; remove the setting to have them fail closed",
        source.map_or_else(
            || "the user or managed file".to_owned(),
            |p| crate::terminal::escape_path(&p)
        ),
        skipped.len(),
        skipped.join(", ")
    ))
}

/// A gated file as found, judged against its trust record.
struct Judged<'a> {
    path: PathBuf,
    found: Found,
    record: Option<&'a TrustRecord>,
    status: TrustStatus,
    /// What changed, for a stale file.
    what: Option<String>,
}

fn judge<'a>(root: &Path, rel: &str, store: &'a TrustStore) -> Judged<'a> {
    let path = root.join(rel);
    let found = read::gated(root, &path);
    let record = store.record(root, rel);
    if let (None, Found::Text { sha256, .. }) = (record, &found) {
        // Renamed or moved: the records are for the old path. Judged as changed (its reviewed
        // guards fail closed), never as unreviewed (skipped).
        if let Some((old, rec)) = store.moved_from(root, rel, sha256) {
            return Judged {
                path,
                found,
                record: Some(rec),
                status: TrustStatus::Stale,
                what: Some(format!(
                    "the project was moved or renamed: it was trusted at {}, and nothing is \
                     trusted at {} yet",
                    crate::terminal::escape_path(&old),
                    crate::terminal::escape_path(root)
                )),
            };
        }
    }
    let (status, what) = match (&found, record) {
        (Found::Missing, Some(_)) => (TrustStatus::Removed, Some("the file is gone".to_owned())),
        (Found::Missing | Found::Refused(_), None) => (TrustStatus::Untrusted, None),
        (Found::Refused(why), Some(_)) => (TrustStatus::Stale, Some(format!("the file {why}"))),
        (Found::Text { .. }, None) => (TrustStatus::Untrusted, None),
        (Found::Text { sha256, .. }, Some(rec)) if *sha256 != rec.sha256 => (
            TrustStatus::Stale,
            Some("the file itself changed".to_owned()),
        ),
        (Found::Text { .. }, Some(rec)) => match scripts::first_change(root, &rec.scripts) {
            Some(change) => (
                TrustStatus::Stale,
                Some(format!("{change}, which its hooks run")),
            ),
            None => (TrustStatus::Trusted, None),
        },
    };
    Judged {
        path,
        found,
        record,
        status,
        what,
    }
}

#[allow(clippy::too_many_arguments)]
fn load_gated(
    l: &mut Loading,
    opts: &LoadOptions,
    gate: &Gate,
    check_all: bool,
    root: &Path,
    layer: Layer,
    judged: Judged<'_>,
) {
    let Judged {
        path,
        found,
        record,
        status,
        what,
    } = judged;
    if matches!(found, Found::Missing) && record.is_none() {
        return;
    }
    let fix = trust_command(root);
    let text = match &found {
        Found::Text { text, .. } => Some(text.as_str()),
        _ => None,
    };
    let sha256 = match &found {
        Found::Text { sha256, .. } => Some(sha256.clone()),
        _ => None,
    };
    let state = gate_state(opts, gate, root, status, &found, text.is_some());
    let mut layer_file = LayerFile {
        layer,
        file: path.clone(),
        root: Some(root.to_path_buf()),
        state,
        sha256,
    };
    let file = Gated {
        layer,
        root,
        path: &path,
        record,
        status,
        fix,
    };
    match (state, text) {
        (LayerState::Loaded | LayerState::TrustedRoot | LayerState::TrustedOnce, Some(text)) => {
            load_trusted(l, opts, check_all, &file, text, &mut layer_file);
        }
        (LayerState::Stale | LayerState::Removed, _) => {
            hold_stale(l, opts, gate, check_all, &file, state, what, text);
        }
        (state, _) => {
            let why = match &found {
                Found::Refused(why) => Some(format!(" — it {why}")),
                _ => None,
            };
            l.untrusted.push(file.skipped(
                state,
                why.map(|w| w.trim_start_matches(" — ").to_owned()),
                0,
            ));
            check_text(l, check_all, (layer, root), &path, text);
        }
    }
    l.layers.push(layer_file);
}

/// How the gate handles a file, from its trust status and whether it has text to load.
fn gate_state(
    opts: &LoadOptions,
    gate: &Gate,
    root: &Path,
    status: TrustStatus,
    found: &Found,
    has_text: bool,
) -> LayerState {
    // The user's own file decides the gate: trusted roots, then `--trust`.
    match status {
        TrustStatus::Trusted => LayerState::Loaded,
        _ if has_text && gate.trusted_roots.iter().any(|r| root.starts_with(r)) => {
            LayerState::TrustedRoot
        }
        _ if has_text && opts.trust_once => LayerState::TrustedOnce,
        TrustStatus::Stale => LayerState::Stale,
        TrustStatus::Removed => LayerState::Removed,
        TrustStatus::Untrusted if matches!(found, Found::Refused(_)) => LayerState::Refused,
        TrustStatus::Untrusted => LayerState::Untrusted,
    }
}

/// A gated file being loaded: where it is, its trust record, and what its entry says when it
/// is skipped.
struct Gated<'a> {
    layer: Layer,
    root: &'a Path,
    path: &'a Path,
    record: Option<&'a TrustRecord>,
    status: TrustStatus,
    fix: String,
}

impl Gated<'_> {
    /// The file's entry among the skipped ones, handled as `state`.
    fn skipped(&self, state: LayerState, why: Option<String>, guards: usize) -> Untrusted {
        Untrusted {
            layer: self.layer,
            file: self.path.to_path_buf(),
            status: self.status,
            state,
            why,
            guards,
            fix: self.fix.clone(),
        }
    }
}

/// A file the gate lets load (trusted, under a trusted root, or `--trust`): parsed and checked
/// alone, its reviewed scripts covered and, under a trusted root, its changes watched. A file
/// with errors is skipped as invalid.
fn load_trusted(
    l: &mut Loading,
    opts: &LoadOptions,
    check_all: bool,
    gated: &Gated<'_>,
    text: &str,
    layer_file: &mut LayerFile,
) {
    let Gated {
        layer,
        root,
        path,
        record,
        ..
    } = *gated;
    let state = layer_file.state;
    let mut errors = Vec::new();
    let mut file = parse_file(layer, path, text, &mut errors);
    file.root = Some(root.to_path_buf());
    validate_alone(&l.below(), &file, &mut errors);
    if errors.is_empty() {
        l.push_parsed(file);
        if state == LayerState::Loaded {
            l.covered.extend(record.into_iter().flat_map(|rec| {
                rec.scripts.iter().map(|s| super::Covered {
                    root: root.to_path_buf(),
                    rel: s.path.clone(),
                    sha256: s.sha256.clone(),
                })
            }));
        }
        // Under a trusted root, no person reviews a change: it is watched instead.
        if state == LayerState::TrustedRoot && !check_all {
            let last = opts
                .paths
                .data_dir
                .as_deref()
                .and_then(|d| snapshot::read(d, layer, path))
                // A new personal file weakens its project's guards as much as an edit
                // of one: compared with none at all.
                .or_else(|| (layer == Layer::Local).then(String::new));
            watch(l, last, layer, path, Some(root), text.to_owned());
        }
    } else {
        layer_file.state = LayerState::Invalid;
        let why = format!(
            ": {} configuration error(s), the first: {}; run `ka-hooks check`",
            errors.len(),
            errors[0]
        );
        l.untrusted
            .push(gated.skipped(LayerState::Invalid, Some(why), 0));
        if check_all {
            l.errors.extend(errors);
        }
    }
}

/// A stale or removed file: its last reviewed version's guards become tombstones (blocking
/// under `stale = "block"`), and the file is skipped.
#[allow(clippy::too_many_arguments)]
fn hold_stale(
    l: &mut Loading,
    opts: &LoadOptions,
    gate: &Gate,
    check_all: bool,
    gated: &Gated<'_>,
    state: LayerState,
    what: Option<String>,
    text: Option<&str>,
) {
    let Gated {
        layer,
        root,
        path,
        record,
        ..
    } = *gated;
    let reviewed = record.and_then(|rec| {
        let bytes = crate::trust::reviewed(opts.paths.data_dir.as_deref()?, &rec.sha256)?;
        let text = String::from_utf8(bytes).ok()?;
        Some(parse_file(layer, path, &text, &mut Vec::new()))
    });
    let change = Change {
        layer,
        file: path,
        root,
        removed: state == LayerState::Removed,
        what: what.clone().unwrap_or_default(),
    };
    let guards = tombstones(reviewed, &change);
    let count = if gate.stale == StalePolicy::Block {
        guards.len()
    } else {
        0
    };
    l.tombstones.extend(guards);
    l.untrusted.push(gated.skipped(state, what, count));
    check_text(l, check_all, (layer, root), path, text);
}

/// `check` reports every error of a file that does not load, as if it did (on top of the files
/// loaded before it), a weakening it would make of a hook below included.
fn check_text(
    l: &mut Loading,
    check_all: bool,
    (layer, root): (Layer, &Path),
    path: &Path,
    text: Option<&str>,
) {
    if let (true, Some(text)) = (check_all, text) {
        let mut file = parse_file(layer, path, text, &mut l.errors);
        file.root = Some(root.to_path_buf());
        let errors = own_errors(&file, &l.below());
        l.errors.extend(errors);
        let refused = monotone::refusals(&file, &l.below());
        l.errors
            .extend(refused.iter().map(monotone::Refusal::error));
    }
}

/// The errors only merging finds (a missing `event` or `command`, `tool` on a non-tool event),
/// for `file` on top of the files loaded before it (`below`): each gated file is judged on its
/// own, so its errors stay in its layer, and an override that would break a hook below is this
/// file's error, never the hook's own file's. Linear in `file` (see [`own_errors`]).
fn validate_alone(below: &Below<'_>, file: &ParsedFile, errors: &mut Vec<ConfigError>) {
    errors.extend(own_errors(file, below));
}

impl Config {
    /// ka's own files and folders (a tool call aimed at them asks a human first), absolute and
    /// resolved: found at the first call that needs them, so a call that touches no path never
    /// looks them up.
    pub fn protected(&self) -> &[PathBuf] {
        self.protected.get_or_init(|| {
            let mut dirs = RealDirs::default();
            let mut protected = protected_paths(&self.options, &self.roots, &mut dirs);
            // A covered script is as much the reviewed configuration as the file that names
            // it: a write to it asks a person, like a write to `.ka/ka.toml`.
            protected.extend(self.covered.iter().map(|c| c.path()));
            protected.iter().map(|p| dirs.resolve(p)).collect()
        })
    }
}

/// ka's own files: every root's layer files, the user file, the managed and data dirs.
fn protected_paths(opts: &LoadOptions, roots: &[PathBuf], dirs: &mut RealDirs) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = roots
        .iter()
        .flat_map(|root| GATED_FILES.iter().map(move |(_, rel)| root.join(rel)))
        .collect();
    // The user's whole config dir: the guard scripts a user keeps beside `ka.toml` are as much
    // the user's configuration as the file (a write that empties one switches its guard off).
    out.extend(
        opts.paths
            .user_file()
            .and_then(|f| f.parent().map(Path::to_path_buf)),
    );
    out.extend(opts.paths.user_file());
    out.extend(opts.paths.managed_dir.clone());
    out.extend(opts.paths.data_dir.clone());
    // The agents' files that call ka-hooks: removing the call switches every guard off. Also
    // where the agent works when no `.ka/` marks a project (the user's guards may be all there
    // is): the start directory and the repository holding it.
    let start = dirs.resolve(&opts.start_dir);
    let repository = start
        .ancestors()
        .find(|dir| std::fs::symlink_metadata(dir.join(".git")).is_ok())
        .map(Path::to_path_buf);
    let mut agent_roots: Vec<PathBuf> = roots.to_vec();
    for dir in std::iter::once(start).chain(repository) {
        if !agent_roots.contains(&dir) {
            agent_roots.push(dir);
        }
    }
    out.extend(
        agent_roots
            .iter()
            .flat_map(|root| paths::agent_hook_files(root)),
    );
    out.extend(paths::user_agent_hook_files());
    out
}

/// One project or local file as `ka-hooks trust` reviews it.
#[derive(Debug)]
pub struct Reviewed {
    /// The project root the layer belongs to.
    pub root: PathBuf,
    /// Which layer (project or local).
    pub layer: Layer,
    /// Relative to the root, as the store keys it (`.ka/ka.toml`).
    pub rel: &'static str,
    /// The layer file.
    pub path: PathBuf,
    /// The file's text; `Err` when it cannot be loaded (why), `Ok(None)` when it is gone.
    pub text: Result<Option<String>, String>,
    /// The trust record of its content, when one exists.
    pub record: Option<TrustRecord>,
    /// What the trust store says of its content now.
    pub status: TrustStatus,
    /// What changed, for a stale or removed file.
    pub what: Option<String>,
}

/// Every gated file of every project root from `opts.start_dir` up, judged against `store`.
pub fn review_files(opts: &LoadOptions, store: &TrustStore) -> Vec<Reviewed> {
    let start = paths::absolute(&opts.start_dir);
    let mut out = Vec::new();
    for root in discover::roots(&start, store) {
        for (layer, rel) in GATED_FILES {
            let judged = judge(&root, rel, store);
            if matches!(judged.found, Found::Missing) && judged.record.is_none() {
                continue;
            }
            out.push(Reviewed {
                root: root.clone(),
                layer,
                rel,
                path: judged.path,
                text: match judged.found {
                    Found::Text { text, .. } => Ok(Some(text)),
                    Found::Missing => Ok(None),
                    Found::Refused(why) => Err(why),
                },
                record: judged.record.cloned(),
                status: judged.status,
                what: judged.what,
            });
        }
    }
    out
}

/// What the files a review judges are validated on top of: the managed and user files, then each
/// reviewed file in reading order. So an entry that only overrides a hook by name
/// (`name = "fmt"`, `enabled = false` in `.ka/ka.local.toml`) is judged with the hook it
/// overrides, as loading judges it, and can be trusted.
#[derive(Default)]
pub struct ReviewBase {
    l: Loading,
}

impl ReviewBase {
    /// The managed and user files of `opts` (their own errors are `check`'s to report).
    pub fn new(opts: &LoadOptions) -> ReviewBase {
        let mut l = Loading::default();
        for (layer, path) in discover::ungated(&opts.paths) {
            load_ungated(&mut l, None, true, layer, &path);
        }
        ReviewBase { l }
    }

    /// What one file changes in the hooks of the files before it, by name: for each, which hook
    /// of which file, every key before and after, and whether loading refuses it as a weakening
    /// (see `super::monotone`). One line each, for the review; call it before
    /// [`ReviewBase::file_commands`] adds the file.
    pub fn changes(&self, layer: Layer, path: &Path, text: &str) -> Vec<String> {
        let file = parse_reviewed(layer, path, text, &mut Vec::new());
        monotone::changes(&file, &self.l.below())
            .iter()
            .flat_map(monotone::Change::review)
            .collect()
    }

    /// The commands of one file (each with the hook as the review names it, `hooks[0] "guard"`)
    /// and its errors, on top of what came before it; the file then counts as below the next
    /// one.
    pub fn file_commands(
        &mut self,
        layer: Layer,
        path: &Path,
        text: &str,
    ) -> (Vec<(String, String)>, Vec<ConfigError>) {
        let mut errors = Vec::new();
        let file = parse_reviewed(layer, path, text, &mut errors);
        validate_alone(&self.l.below(), &file, &mut errors);
        let commands = file
            .hooks
            .iter()
            .filter_map(|(source, raw)| {
                let command = raw.command.as_ref()?.value.clone();
                let label = match &raw.name {
                    Some(name) => format!(
                        "hooks[{}] \"{}\"",
                        source.index,
                        crate::terminal::escape(&name.value)
                    ),
                    None => format!("hooks[{}]", source.index),
                };
                Some((label, command))
            })
            .collect();
        if errors.is_empty() {
            self.l.push_parsed(file);
        }
        (commands, errors)
    }
}

/// A reviewed gated file, parsed with its project root (`<root>/.ka/<file>`), so that the files
/// after it see whose hooks they change.
fn parse_reviewed(
    layer: Layer,
    path: &Path,
    text: &str,
    errors: &mut Vec<ConfigError>,
) -> ParsedFile {
    let mut file = parse_file(layer, path, text, errors);
    file.root = path.parent().and_then(Path::parent).map(Path::to_path_buf);
    file
}

/// Every weakening of the sandbox, announced on each dispatch: a project hook that declares
/// `sandbox = "off"` runs unconfined, and so does every project hook when the user file says
/// `sandbox_project_hooks = "off"` (said once for all of them).
fn sandbox_announcements(hooks: &[Hook]) -> Vec<String> {
    let mut out = Vec::new();
    let mut user_off = None;
    for hook in hooks.iter().filter(|h| h.enabled) {
        match &hook.sandbox {
            crate::sandbox::Plan::Off(why) if why.starts_with("`sandbox_project_hooks") => {
                user_off.get_or_insert_with(|| {
                    format!("project hooks run unconfined by the sandbox: {why}")
                });
            }
            crate::sandbox::Plan::Off(why) => out.push(format!(
                "project hook `{}` ({}) runs unconfined by the sandbox: {why}; set \
                 `require_sandbox = true` in your user file to refuse it",
                crate::terminal::escape(&hook.name),
                crate::terminal::escape(&hook.source.to_string())
            )),
            crate::sandbox::Plan::Confine { rules, .. } if hook.source.layer.is_gated() => {
                let outside = rules.outside_project();
                if !outside.is_empty() {
                    out.push(format!(
                        "project hook `{}` ({}) may write outside its project and the temp \
                         dir: {}; its sandbox does not keep it from your files there",
                        crate::terminal::escape(&hook.name),
                        crate::terminal::escape(&hook.source.to_string()),
                        crate::terminal::escape(&outside.join(", "))
                    ));
                }
            }
            _ => {}
        }
    }
    out.extend(user_off);
    out
}
