//! Entries of all layers into effective hooks: merge by name, validate, de-duplicate.
//!
//! Both passes are linear in the number of entries (maps by name and by handler), so a file of
//! 10 000 hooks loads in about ten times the time of 1 000 (`cargo bench --bench loading`). The
//! gate's validation of each project file ([`own_errors`]) looks at that file's own entries only.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use super::error::ConfigError;
use super::filter::ToolFilter;
use super::hook::{Deduplicated, Hook, Layer, Override, Source};
use super::parse::{ParsedFile, RawHook};
use super::settings::Settings;
use super::{event_slot, DEFAULT_TIMEOUT};
use crate::event::Event;

struct Merged {
    raw: RawHook,
    source: Source,
    overrides: Vec<Override>,
    root: Option<PathBuf>,
}

/// Merge entries by name in run order, validate the merged hooks, compile filters, dedupe.
/// An entry of another layer that names a managed hook is ignored, with a warning: managed hooks
/// cannot be disabled or changed from above.
pub(super) fn merge_hooks(
    files: Vec<ParsedFile>,
    settings: &Settings,
    errors: &mut Vec<ConfigError>,
    warnings: &mut Vec<String>,
) -> (Vec<Hook>, Vec<Deduplicated>) {
    let merged = by_name(files, warnings);
    let mut hooks: Vec<Hook> = Vec::with_capacity(merged.len());
    let mut counts = [0usize; Event::ALL.len()];
    for m in merged {
        let (event, command, filter) = match validate(&m.raw, &m.source) {
            Ok(valid) => valid,
            Err(e) => {
                errors.push(*e);
                continue;
            }
        };
        let Merged {
            raw,
            source,
            overrides,
            root,
        } = m;
        let named = raw.name.map(|n| n.value);
        let template = super::template::Template::parse(&command).ok().flatten();
        counts[event_slot(event)] += 1;
        hooks.push(Hook {
            paths: raw.paths.map(|p| p.value),
            rule: raw.rule.map(|r| r.value),
            template,
            is_async: raw.is_async.is_some_and(|a| a.value),
            enforce: raw.enforce.is_none_or(|e| e.value),
            status_message: raw.status_message.map(|m| m.value),
            named: named.is_some(),
            name: named.unwrap_or_else(|| format!("{event}#{}", counts[event_slot(event)])),
            event,
            filter,
            command,
            timeout: raw
                .timeout
                .map(|t| t.value)
                .or(settings.timeout)
                .unwrap_or(DEFAULT_TIMEOUT),
            on_error: raw.on_error.map(|o| o.value).unwrap_or_default(),
            enabled: raw.enabled.is_none_or(|e| e.value),
            env: raw
                .env
                .map(|e| e.value.into_iter().collect())
                .unwrap_or_default(),
            source,
            overrides,
            root,
            stale: None,
        });
    }

    let deduplicated = dedupe(&mut hooks);
    (hooks, deduplicated)
}

/// The errors [`merge_hooks`] would report for the hooks `file` starts, on top of files whose
/// entry names are `below`, without building hooks or copying entries.
///
/// An entry named like an earlier one merges into that hook, whose errors belong to the earlier
/// file; every other entry starts a hook of `file`'s own, merged with the later entries of its
/// name in `file`. One pass, and a map of the names written more than once.
pub(super) fn own_errors(file: &ParsedFile, below: &HashSet<String>) -> Vec<ConfigError> {
    let mut by_name: HashMap<&str, Vec<usize>> = HashMap::new();
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
            Some(n) if below.contains(n) => continue,
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

/// Entries merged by name, in the order of their first definition: one map lookup per entry.
fn by_name(files: Vec<ParsedFile>, warnings: &mut Vec<String>) -> Vec<Merged> {
    let mut merged: Vec<Merged> = Vec::with_capacity(files.iter().map(|f| f.hooks.len()).sum());
    let mut by_name: HashMap<String, usize> = HashMap::new();
    for file in files {
        for (source, raw) in file.hooks {
            let earlier = raw
                .name
                .as_ref()
                .and_then(|n| by_name.get(&n.value).copied());
            match earlier {
                Some(i)
                    if merged[i].source.layer == Layer::Managed
                        && source.layer != Layer::Managed =>
                {
                    warnings.push(format!(
                        "{}:{}: `hooks[{}]` names the managed hook `{}`, which cannot be disabled \
                         or overridden; the entry is ignored",
                        crate::terminal::escape_path(&source.file),
                        source.line,
                        source.index,
                        crate::terminal::escape(raw.name.as_ref().map_or("", |n| &n.value)),
                    ));
                }
                Some(i) => {
                    let m = &mut merged[i];
                    let keys = raw.keys().into_iter().filter(|k| k != "name").collect();
                    m.overrides.push(Override { source, keys });
                    m.raw.merge(raw);
                }
                None => {
                    if let Some(name) = &raw.name {
                        by_name.insert(name.value.clone(), merged.len());
                    }
                    merged.push(Merged {
                        raw,
                        source,
                        overrides: Vec::new(),
                        root: file.root.clone(),
                    })
                }
            }
        }
    }
    merged
}

/// A merged entry's event, command and filter, or the first error that keeps it from running
/// (reported at `source`, where the hook was first defined).
fn validate(
    raw: &RawHook,
    source: &Source,
) -> Result<(Event, String, ToolFilter), Box<ConfigError>> {
    let err = |key: &str, at: Option<(usize, usize)>, message: String, help: &str| ConfigError {
        file: source.file.clone(),
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
    let Some(command) = raw.command.as_ref().map(|c| c.value.clone()) else {
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
        tool.value.clone()
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
        matcher.value.clone()
    } else {
        ToolFilter::All
    };
    check_call_keys(raw, event, &filter, &err)?;
    Ok((event, command, filter))
}

/// `paths` and `if` need a tool call; `async` an event that cannot be vetoed; `{path}` a hook
/// that sees one path per call.
/// Builds an error at `hooks[i].<key>`, at a position or the entry's line.
type ErrAt<'a> = &'a dyn Fn(&str, Option<(usize, usize)>, String, &str) -> ConfigError;

fn check_call_keys(
    raw: &RawHook,
    event: Event,
    filter: &ToolFilter,
    err: ErrAt<'_>,
) -> Result<(), Box<ConfigError>> {
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
    let single = raw
        .command
        .as_ref()
        .and_then(|c| super::template::Template::parse(&c.value).ok().flatten())
        .is_some_and(|t| t.uses_single_path());
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
    Ok(())
}

/// Identical enabled handlers (event, filter, command) run once; the later one (its settings and
/// place) wins. One pass from the end: the first occurrence seen from there is the one kept.
fn dedupe(hooks: &mut Vec<Hook>) -> Vec<Deduplicated> {
    let mut kept_by_handler: HashMap<(Event, String, &str), usize> = HashMap::new();
    let mut drop = vec![None; hooks.len()];
    for (i, hook) in hooks.iter().enumerate().rev() {
        if !hook.enabled {
            continue;
        }
        let key = (hook.event, hook.filter.describe(), hook.command.as_str());
        match kept_by_handler.get(&key) {
            Some(&kept) => drop[i] = Some(kept),
            None => {
                kept_by_handler.insert(key, i);
            }
        }
    }
    let kept_names: Vec<Option<String>> = drop
        .iter()
        .map(|d| d.map(|k| hooks[k].name.clone()))
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
mod tests {
    use std::path::Path;

    use super::*;
    use crate::config::parse::parse_file;

    fn parsed(layer: Layer, path: &str, text: &str) -> ParsedFile {
        let mut errors = Vec::new();
        let file = parse_file(layer, Path::new(path), text, &mut errors);
        assert!(errors.is_empty(), "{errors:?}");
        file
    }

    #[test]
    fn own_errors_are_the_errors_of_merging_on_top_of_the_files_below() {
        let below = parsed(
            Layer::User,
            "user.toml",
            "[[hooks]]\nname = \"u\"\nevent = \"stop\"\ncommand = \"u\"\n",
        );
        let file = parsed(
            Layer::Project,
            "project.toml",
            "[[hooks]]\nname = \"a\"\nevent = \"stop\"\n\
             [[hooks]]\nname = \"b\"\nevent = \"stop\"\ntool = \"write\"\ncommand = \"b\"\n\
             [[hooks]]\nname = \"a\"\ncommand = \"a\"\n\
             [[hooks]]\nname = \"u\"\ntool = \"write\"\n\
             [[hooks]]\nname = \"c\"\ntimeout = 3\n\
             [[hooks]]\nevent = \"stop\"\n\
             [[hooks]]\nname = \"c\"\nevent = \"pre_tool_use\"\n",
        );
        let names: HashSet<String> = ["u".to_owned()].into();
        let own = own_errors(&file, &names);
        let mut all = Vec::new();
        merge_hooks(
            vec![below, file],
            &Settings::default(),
            &mut all,
            &mut Vec::new(),
        );
        let reference: Vec<ConfigError> = all
            .into_iter()
            .filter(|e| e.file == Path::new("project.toml"))
            .collect();
        assert_eq!(own, reference);
        let keys: Vec<_> = own.iter().filter_map(|e| e.key.as_deref()).collect();
        // `a` merges its two entries (no error); `u` belongs to the user file; `c` merges too.
        assert_eq!(
            keys,
            ["hooks[1].tool", "hooks[4].command", "hooks[5].command"]
        );
    }
}
