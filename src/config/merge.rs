//! Entries of all layers into effective hooks: merge by name, validate, de-duplicate.
//!
//! The merge is monotone across trust boundaries ([`super::monotone`]): an override by name, or
//! a de-duplicated copy, that would weaken a hook of a layer its own layer may not weaken is not
//! applied, and comes back as a [`Refusal`] (a warning on every dispatch, an error in `check`).
//! Each override is judged against the hook as merged so far, so a chain of entries cannot
//! weaken a hook step by step. The hook's owner is the layer whose entry first made it a hook:
//! a user entry that only changes a project's hook (`name = "fmt"`, `enabled = false`) leaves
//! the hook the project's, and is applied again after every other entry, as the user's word.
//!
//! Both passes are linear in the number of entries (maps by name and by handler), so a file of
//! 10 000 hooks loads in about ten times the time of 1 000 (`cargo bench --bench loading`). The
//! gate's validation of each project file ([`own_errors`]) looks at that file's own entries only.

use std::collections::HashMap;
use std::path::PathBuf;

use super::error::ConfigError;
use super::filter::ToolFilter;
use super::hook::{Deduplicated, Hook, Layer, OnError, Override, Source};
use super::monotone::{apply_scoped, scoped_settings, Owner, Refusal};
use super::parse::{ParsedFile, RawHook};
use super::settings::Settings;
use super::strength::{weakenings, Weakening};
use super::template::Template;
use super::{event_slot, DEFAULT_TIMEOUT};
use crate::event::Event;

/// One effective hook before validation: the entry that first defined it and the later entries
/// merged over it by name, as (file, entry) positions in the parsed files.
struct Slot {
    first: (usize, usize),
    overrides: Vec<(usize, usize)>,
}

/// What [`merge_hooks`] makes of the parsed files.
pub(super) struct Merged {
    /// Every effective hook in run order.
    pub hooks: Vec<Hook>,
    /// Hooks replaced by a later identical one.
    pub deduplicated: Vec<Deduplicated>,
    /// Entries that would have weakened another layer's hook, not applied (see [`monotone`]).
    pub refused: Vec<Refusal>,
}

/// Merge entries by name in run order, validate the merged hooks, compile filters, dedupe.
/// An entry of another layer that names a managed hook is ignored, with a warning: managed hooks
/// cannot be disabled or changed from above. An entry that would weaken a hook of a layer it may
/// not weaken (see [`monotone`]) is not applied, and comes back in [`Merged::refused`].
///
/// Entries are moved out of `files` straight into their hooks (an entry is large: a copy of all
/// of them in between was a second few-MB array on 10 000 hooks, written and read once each).
pub(super) fn merge_hooks(
    mut files: Vec<ParsedFile>,
    settings: &Settings,
    errors: &mut Vec<ConfigError>,
    warnings: &mut Vec<String>,
) -> Merged {
    let slots = by_name(&files, warnings);
    let scoped = scoped_settings(&files);
    let mut hooks: Vec<Hook> = Vec::with_capacity(slots.len());
    let mut refused = Vec::new();
    let mut counts = [0usize; Event::ALL.len()];
    for slot in slots {
        let root = files[slot.first.0].root.clone();
        let file_sandbox = files[slot.first.0].sandbox_default();
        let (source, mut raw, overrides) = merge_slot(&mut files, slot, settings, &mut refused);
        if raw.sandbox.is_none() {
            // `[hook_settings] sandbox` of the file that defined the hook: its default.
            raw.sandbox = file_sandbox.map(|d| super::parse::At {
                value: d,
                line: source.line,
                column: 1,
            });
        }
        if let Some(warning) = change_of_nothing(&source, &raw, &overrides) {
            warnings.push(warning);
            continue;
        }
        let (event, template) = match validate(&raw, &source) {
            Ok(valid) => valid,
            Err(e) => {
                errors.push(*e);
                continue;
            }
        };
        counts[event_slot(event)] += 1;
        let own_timeout = raw.timeout.is_some();
        let mut hook = hook(
            raw,
            event,
            template,
            counts[event_slot(event)],
            settings,
            source,
            overrides,
            root,
        );
        if !scoped.is_empty() {
            apply_scoped(&mut hook, own_timeout, &scoped);
        }
        hooks.push(hook);
    }
    for s in scoped.iter().filter(|s| s.disable_all) {
        warnings.push(format!(
            "`disable_all = true` in the {} layer {} turns off its own project's hooks only; \
             a project or local file cannot turn off the user's, managed or an outer project's \
             hooks",
            s.owner.layer,
            crate::terminal::escape_path(&s.file),
        ));
    }

    let deduplicated = dedupe(&mut hooks, settings, &mut refused);
    Merged {
        hooks,
        deduplicated,
        refused,
    }
}

/// A user entry that only changes a hook by name (`name = "fmt"`, `enabled = false`: no `event`,
/// no `command`) in a session where no other layer defines that hook changes nothing: a warning,
/// not an error, since the user's file serves every project and failing its load would take
/// every guard with it.
fn change_of_nothing(source: &Source, raw: &RawHook, overrides: &[Override]) -> Option<String> {
    let users_only = source.layer == Layer::User
        && raw.name.is_some()
        && overrides.iter().all(|o| o.source.layer == Layer::User)
        && raw.event.is_none()
        && raw.command.is_none();
    users_only.then(|| {
        format!(
            "{}:{}: `hooks[{}]` changes the hook `{}`, which no other loaded layer defines here; \
             it changes nothing in this session",
            crate::terminal::escape_path(&source.file),
            source.line,
            source.index,
            crate::terminal::escape(raw.name.as_ref().map_or("", |n| n.value.as_str())),
        )
    })
}

/// Whether an entry defines a hook on its own (an entry without both only changes one).
pub(super) fn defines(raw: &RawHook) -> bool {
    raw.event.is_some() && raw.command.is_some()
}

/// The entries of one slot merged in order, under the monotone rule: each override is checked
/// against the hook as merged so far, and one that weakens a hook its layer may not weaken is
/// left out (and recorded in `refused`). The hook's owner is the layer whose entry first made it
/// a hook: the user file's `name = "fmt"`, `enabled = false` for a project's `fmt` changes the
/// project's hook, and (the user's word about a repository being final) is applied again last.
fn merge_slot(
    files: &mut [ParsedFile],
    slot: Slot,
    settings: &Settings,
    refused: &mut Vec<Refusal>,
) -> (Source, RawHook, Vec<Override>) {
    let (f, e) = slot.first;
    let first_owner = Owner::new(files[f].layer, files[f].root.as_deref());
    let (source, mut raw) = files[f].take(e);
    let mut owner = defines(&raw).then(|| (first_owner.clone(), source.clone()));
    let mut users_word = Vec::new();
    if owner.is_none() && first_owner.layer == Layer::User {
        users_word.push(raw.clone());
    }
    let mut overrides = Vec::with_capacity(slot.overrides.len());
    for (f, e) in slot.overrides {
        let by = Owner::new(files[f].layer, files[f].root.as_deref());
        let (at, over) = files[f].take(e);
        let keys = over.keys().into_iter().filter(|k| k != "name").collect();
        if owner.is_none() && by.layer == Layer::User {
            users_word.push(over.clone());
        }
        match owner.as_ref().filter(|(o, _)| !o.may_be_weakened_by(&by)) {
            // Across a boundary that may not weaken: judge the result before keeping it.
            Some((_, original)) => {
                let mut merged = raw.clone();
                merged.merge(over);
                let weakenings = weakened(&raw, &merged, &source, settings);
                if !weakenings.is_empty() {
                    refused.push(Refusal {
                        name: raw
                            .name
                            .as_ref()
                            .map(|n| n.value.clone())
                            .unwrap_or_default(),
                        original: original.clone(),
                        at,
                        weakenings,
                        copy: false,
                    });
                    continue;
                }
                raw = merged;
            }
            None => raw.merge(over),
        }
        if owner.is_none() && defines(&raw) {
            owner = Some((by, at.clone()));
        }
        overrides.push(Override { source: at, keys });
    }
    for word in users_word.into_iter().filter(|_| owner.is_some()) {
        raw.merge(word);
    }
    (source, raw, overrides)
}

/// The hook a merged entry makes, as far as comparing its strength goes (its name and place do
/// not count); `None` when it is not a valid hook.
pub(super) fn probe(raw: &RawHook, source: &Source, settings: &Settings) -> Option<Hook> {
    let (event, template) = validate(raw, source).ok()?;
    Some(hook(
        raw.clone(),
        event,
        template,
        0,
        settings,
        source.clone(),
        Vec::new(),
        None,
    ))
}

/// How `after` weakens the hook `before` makes. Nothing, when `before` is not a hook yet (there
/// is nothing to weaken) or `after` is invalid (its error is reported and it does not load).
fn weakened(
    before: &RawHook,
    after: &RawHook,
    source: &Source,
    settings: &Settings,
) -> Vec<Weakening> {
    match (
        probe(before, source, settings),
        probe(after, source, settings),
    ) {
        (Some(before), Some(after)) => weakenings(&before, &after),
        _ => Vec::new(),
    }
}

/// The hook a validated merged entry makes; `n` counts the hooks of its event so far (the name
/// of an unnamed one).
#[allow(clippy::too_many_arguments)]
fn hook(
    raw: RawHook,
    event: Event,
    template: Option<Template>,
    n: usize,
    settings: &Settings,
    source: Source,
    overrides: Vec<Override>,
    root: Option<PathBuf>,
) -> Hook {
    let named = raw.name.map(|n| n.value);
    // `validate` passed: the command is set, and `tool` and `matcher` are never both set.
    let command = raw.command.map(|c| c.value).unwrap_or_default();
    let filter = raw
        .tool
        .or(raw.matcher)
        .map_or(ToolFilter::All, |f| f.value);
    Hook {
        paths: raw.paths.map(|p| p.value),
        rule: raw.rule.map(|r| r.value),
        template,
        is_async: raw.is_async.is_some_and(|a| a.value),
        enforce: raw.enforce.is_none_or(|e| e.value),
        status_message: raw.status_message.map(|m| m.value),
        sandbox: crate::sandbox::Plan::of(
            source.layer.is_gated(),
            raw.sandbox.as_ref().map(|s| &s.value),
            &settings.sandbox,
        ),
        named: named.is_some(),
        name: named.unwrap_or_else(|| format!("{event}#{n}")),
        event,
        filter,
        command,
        timeout: raw
            .timeout
            .map(|t| t.value)
            .or(settings.timeout)
            .unwrap_or(DEFAULT_TIMEOUT),
        on_error: raw
            .on_error
            .map_or(OnError::default_for(event), |o| o.value),
        enabled: raw.enabled.is_none_or(|e| e.value),
        env: raw
            .env
            .map(|e| e.value.into_iter().collect())
            .unwrap_or_default(),
        source,
        overrides,
        root,
        stale: None,
        pinned: None,
    }
}

/// The files loaded before a gated file, with where each entry name is written in them.
pub(super) struct Below<'a> {
    pub names: &'a HashMap<String, Vec<(usize, usize)>>,
    pub files: &'a [ParsedFile],
}

impl Below<'_> {
    pub(super) fn contains(&self, name: &str) -> bool {
        self.names.contains_key(name)
    }

    /// The hook named `name` as the files below make it, as [`Below::merged`] makes it, with its
    /// owner: the layer whose entry first made it a hook, and that entry (see [`merge_slot`]).
    /// `None` when the files below do not make it a hook.
    pub(super) fn owned(&self, name: &str) -> Option<(Owner, &Source, RawHook)> {
        let (_, merged) = self.merged(name)?;
        let mut so_far: Option<RawHook> = None;
        for &(f, e) in self.names.get(name)? {
            let Some(file) = self.files.get(f) else {
                continue;
            };
            let Some((source, raw)) = file.hooks.get(e) else {
                continue;
            };
            let next = match so_far.take() {
                None => raw.clone(),
                Some(mut base) => {
                    base.merge(raw.clone());
                    base
                }
            };
            if defines(&next) {
                return Some((Owner::new(file.layer, file.root.as_deref()), source, merged));
            }
            so_far = Some(next);
        }
        None
    }

    /// The hook named `name` as the files below make it: where it was first defined, and its
    /// entries merged as [`merge_hooks`] merges them (a managed hook takes no other layer's).
    fn merged(&self, name: &str) -> Option<(&Source, RawHook)> {
        let mut entries = self
            .names
            .get(name)?
            .iter()
            .filter_map(|&(f, e)| self.files.get(f)?.hooks.get(e));
        let (first, raw) = entries.next()?;
        let mut merged = raw.clone();
        for (source, raw) in entries {
            if first.layer != Layer::Managed || source.layer == Layer::Managed {
                merged.merge(raw.clone());
            }
        }
        Some((first, merged))
    }
}

/// The errors [`merge_hooks`] would report for the hooks `file` starts or changes, on top of the
/// files `below`, without building hooks.
///
/// Every entry that starts a hook of `file`'s own is merged with the later entries of its name in
/// `file` and validated. An entry named like a hook below merges into it: the merged hook is
/// validated too, and what breaks it is `file`'s error (at the overriding entry), so that a
/// project file can never make the user's own file fail to load (a hostile override would
/// otherwise switch off every guard). One pass, and a map of the names written more than once.
pub(super) fn own_errors(file: &ParsedFile, below: &Below<'_>) -> Vec<ConfigError> {
    let mut by_name: HashMap<&str, Vec<usize>> = HashMap::with_capacity(file.hooks.len());
    for (i, (_, raw)) in file.hooks.iter().enumerate() {
        if let Some(name) = &raw.name {
            by_name.entry(name.value.as_str()).or_default().push(i);
        }
    }
    let mut errors = Vec::new();
    for (i, (source, raw)) in file.hooks.iter().enumerate() {
        let name = raw.name.as_ref().map(|n| n.value.as_str());
        let same = name
            .and_then(|n| by_name.get(n))
            .map_or(&[][..], Vec::as_slice);
        let result = match name {
            Some(n) if below.contains(n) => {
                if same.first().is_some_and(|&first| first != i) {
                    continue;
                }
                match override_errors(file, below, n, same, source) {
                    Some(e) => Err(e),
                    None => continue,
                }
            }
            // A later entry of the name was merged where the name first appeared.
            _ if same.first().is_some_and(|&first| first != i) => continue,
            _ if same.len() > 1 => {
                let mut merged = raw.clone();
                for &later in &same[1..] {
                    merged.merge(file.hooks[later].1.clone());
                }
                validate(&merged, source)
            }
            _ => validate(raw, source),
        };
        errors.extend(result.err().map(|e| *e));
    }
    errors
}

/// The error of the entries of `file` named `name` (at `same`) merged over the hook of that name
/// below, at the first of them; `None` when the merged hook is valid or is managed (then the
/// entries are ignored, with a warning, by [`merge_hooks`]).
fn override_errors(
    file: &ParsedFile,
    below: &Below<'_>,
    name: &str,
    same: &[usize],
    at: &Source,
) -> Option<Box<ConfigError>> {
    let (first, mut merged) = below.merged(name)?;
    if first.layer == Layer::Managed && file.layer != Layer::Managed {
        return None;
    }
    for &j in same {
        merged.merge(file.hooks[j].1.clone());
    }
    let e = validate(&merged, first).err()?;
    Some(Box::new(ConfigError {
        file: at.file.to_path_buf(),
        line: Some(at.line),
        column: None,
        key: Some(format!("hooks[{}]", at.index)),
        message: format!(
            "this entry overrides `{}` of {}:{}, and the hook it makes is invalid: {}{}",
            crate::terminal::escape(name),
            crate::terminal::escape_path(&first.file),
            first.line,
            e.key.map(|k| format!("`{k}`: ")).unwrap_or_default(),
            e.message
        ),
        help: Some(format!(
            "{} (the override is this file's; the hook's own file stays as it is)",
            e.help
                .unwrap_or_else(|| "fix or remove the override".to_owned())
        )),
    }))
}

/// Entries merged by name, in the order of their first definition: one map lookup per entry.
fn by_name(files: &[ParsedFile], warnings: &mut Vec<String>) -> Vec<Slot> {
    let total = files.iter().map(|f| f.hooks.len()).sum();
    let mut slots: Vec<Slot> = Vec::with_capacity(total);
    let mut by_name: HashMap<&str, usize> = HashMap::with_capacity(total);
    for (f, file) in files.iter().enumerate() {
        for (e, (source, raw)) in file.hooks.iter().enumerate() {
            let name = raw.name.as_ref().map(|n| n.value.as_str());
            let earlier = name.and_then(|n| by_name.get(n).copied());
            match earlier {
                Some(i) => {
                    let (ff, fe) = slots[i].first;
                    let first_layer = files[ff].hooks[fe].0.layer;
                    if first_layer == Layer::Managed && source.layer != Layer::Managed {
                        warnings.push(format!(
                            "{}:{}: `hooks[{}]` names the managed hook `{}`, which cannot be \
                             disabled or overridden; the entry is ignored",
                            crate::terminal::escape_path(&source.file),
                            source.line,
                            source.index,
                            crate::terminal::escape(name.unwrap_or("")),
                        ));
                    } else {
                        slots[i].overrides.push((f, e));
                    }
                }
                None => {
                    if let Some(name) = name {
                        by_name.insert(name, slots.len());
                    }
                    slots.push(Slot {
                        first: (f, e),
                        overrides: Vec::new(),
                    })
                }
            }
        }
    }
    slots
}

/// A merged entry's event and command template, or the first error that keeps it from running
/// (reported at `source`, where the hook was first defined). When it passes, the entry has a
/// command, and a `tool` or `matcher` only on an event that takes it.
fn validate(raw: &RawHook, source: &Source) -> Result<(Event, Option<Template>), Box<ConfigError>> {
    let err = |key: &str, at: Option<(usize, usize)>, message: String, help: &str| ConfigError {
        file: source.file.to_path_buf(),
        line: Some(at.map_or(source.line, |a| a.0)),
        column: at.map(|a| a.1),
        key: Some(format!("hooks[{}].{key}", source.index)),
        message,
        help: Some(help.to_owned()),
    };
    let named = raw.name.as_ref().map(|n| n.value.as_str());
    let Some(event) = raw.event.as_ref().map(|e| e.value) else {
        return Err(Box::new(err(
            "event",
            None,
            match named {
                Some(n) => {
                    format!("hook `{n}` has no `event`, and no earlier hook is named `{n}`")
                }
                None => "missing `event`".into(),
            },
            &format!(
                "add `event = \"pre_tool_use\"` (valid events: {})",
                Event::valid_names()
            ),
        )));
    };
    let Some(command) = raw.command.as_ref() else {
        return Err(Box::new(err(
            "command",
            None,
            match named {
                Some(n) => {
                    format!("hook `{n}` has no `command`, and no earlier hook is named `{n}`")
                }
                None => "missing `command`".into(),
            },
            "add the shell command to run, such as `command = \"examples/hooks/guard.sh\"`",
        )));
    };
    let filter = if let Some(tool) = &raw.tool {
        if !event.is_tool_event() {
            return Err(Box::new(err(
                "tool",
                Some((tool.line, tool.column)),
                format!("`tool` only applies to pre_tool_use and post_tool_use, not {event}"),
                "remove `tool`, or change the event to a tool event",
            )));
        }
        &tool.value
    } else if let Some(matcher) = &raw.matcher {
        // Claude Code's matchers also select the source, trigger or type of some non-tool
        // events (`startup` on session_start, `auto` on pre_compact): see Event::matcher_field.
        if event.matcher_field().is_none() {
            return Err(Box::new(err(
                "matcher",
                Some((matcher.line, matcher.column)),
                format!("`matcher` does not apply to {event}: it has nothing to match"),
                "remove `matcher`, or change the event to one that takes a matcher \
                 (see `ka-hooks events`)",
            )));
        }
        &matcher.value
    } else {
        &ToolFilter::All
    };
    let template = check_call_keys(raw, event, &command.value, filter, &err)?;
    Ok((event, template))
}

/// Builds an error at `hooks[i].<key>`, at a position or the entry's line.
type ErrAt<'a> = &'a dyn Fn(&str, Option<(usize, usize)>, String, &str) -> ConfigError;

/// `paths` and `if` need a tool call; `async` an event that cannot be vetoed; `{path}` a hook
/// that sees one path per call. Returns the command's template (parsed once, here).
fn check_call_keys(
    raw: &RawHook,
    event: Event,
    command: &str,
    filter: &ToolFilter,
    err: ErrAt<'_>,
) -> Result<Option<Template>, Box<ConfigError>> {
    for (key, at) in [
        ("paths", raw.paths.as_ref().map(|p| (p.line, p.column))),
        ("if", raw.rule.as_ref().map(|r| (r.line, r.column))),
    ] {
        if at.is_some() && !event.is_tool_event() {
            return Err(Box::new(err(
                key,
                at,
                format!("`{key}` only applies to pre_tool_use and post_tool_use, not {event}"),
                &format!("remove `{key}`, or change the event to a tool event"),
            )));
        }
    }
    if let Some(a) = raw.is_async.as_ref().filter(|a| a.value) {
        if event.is_pipeline() {
            return Err(Box::new(err(
                "async",
                Some((a.line, a.column)),
                format!("`async = true` on {event}: the call waits for its guards' verdict"),
                "remove `async`; only events that cannot be vetoed run hooks in the background",
            )));
        }
    }
    let template = Template::parse(command).ok().flatten();
    let single = template.as_ref().is_some_and(Template::uses_single_path);
    if single && (!event.is_tool_event() || filter.matches(Some("apply_patch"))) {
        let at = raw.command.as_ref().map(|c| (c.line, c.column));
        return Err(Box::new(err(
            "command",
            at,
            "`{path}` names one path, but this hook can see a call with several (a patch) or none"
                .into(),
            "use `{paths}`, or limit `tool` to tools that write one file",
        )));
    }
    Ok(template)
}

/// Identical enabled handlers (event, filter, command) run once; the later one (its settings and
/// place) wins, unless it is a copy across a trust boundary that guards less (see [`monotone`]):
/// then the earlier one runs, and the copy is refused. A managed hook is replaced only by a copy
/// as strong, and only when nothing turns the other layers off (`disable_all`,
/// `KA_HOOKS_DISABLE`, `allow_managed_hooks_only`), which would take the copy, and the guard,
/// away. One pass in order, keeping the winner of each handler so far.
fn dedupe(
    hooks: &mut Vec<Hook>,
    settings: &Settings,
    refused: &mut Vec<Refusal>,
) -> Vec<Deduplicated> {
    let mut winner: HashMap<(Event, String, &str), usize> = HashMap::with_capacity(hooks.len());
    let mut dropped = vec![false; hooks.len()];
    let others_off = settings.disabled.is_some() || settings.managed_only;
    for (i, hook) in hooks.iter().enumerate() {
        if !hook.enabled {
            continue;
        }
        let key = (hook.event, hook.filter.describe(), hook.command.as_str());
        let Some(&w) = winner.get(&key) else {
            winner.insert(key, i);
            continue;
        };
        let kept = &hooks[w];
        // A copy is the same handler: its sandbox guards less only when it lets the hook do
        // more (a project copy of a user guard runs confined, which is no override of it).
        let weaker = || -> Vec<Weakening> {
            weakenings(kept, hook)
                .into_iter()
                .filter(|w| w.key != "sandbox" || hook.sandbox.looser_than(&kept.sandbox))
                .collect()
        };
        let replaces = if kept.is_managed() && !hook.is_managed() {
            !others_off && weaker().is_empty()
        } else {
            Owner::of(kept).may_be_weakened_by(&Owner::of(hook)) || weaker().is_empty()
        };
        if replaces {
            dropped[w] = true;
            winner.insert(key, i);
        } else {
            dropped[i] = true;
            let weakenings = weaker();
            if !weakenings.is_empty() {
                refused.push(Refusal {
                    name: kept.name.clone(),
                    original: kept.source.clone(),
                    at: hook.source.clone(),
                    weakenings,
                    copy: true,
                });
            }
        }
    }
    let kept_names: Vec<Option<String>> = hooks
        .iter()
        .zip(&dropped)
        .map(|(hook, &dropped)| {
            let key = (hook.event, hook.filter.describe(), hook.command.as_str());
            dropped.then(|| winner.get(&key).map(|&k| hooks[k].name.clone()))?
        })
        .collect();
    let mut deduplicated = Vec::new();
    let mut i = 0;
    hooks.retain(|hook| {
        let keep = match &kept_names[i] {
            Some(kept) => {
                deduplicated.push(Deduplicated {
                    name: hook.name.clone(),
                    source: hook.source.clone(),
                    kept: kept.clone(),
                });
                false
            }
            None => true,
        };
        i += 1;
        keep
    });
    deduplicated
}

#[cfg(test)]
mod tests;
