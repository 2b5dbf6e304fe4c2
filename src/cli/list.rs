//! `ka-hooks list`: the hooks in effect, grouped by event, with where each came from.

use serde_json::{Map, Value};

use std::fmt::Write as _;

use super::{load, parse_event, Output, EXIT_OK};
use crate::config::{Config, Hook, LayerState, LoadOptions, ToolFilter};

/// A hook as JSON: the keys of `[[hooks]]` (`tool` or `matcher`, `timeout` in seconds), then
/// `filter` (the filter in words), `source` and `overrides`.
fn hook_json(h: &Hook) -> Value {
    let (tool, matcher) = match &h.filter {
        ToolFilter::Tools(tools) => (serde_json::json!(tools.patterns), Value::Null),
        ToolFilter::Matcher(matcher) => (Value::Null, Value::String(matcher.source.clone())),
        ToolFilter::All => (Value::Null, Value::Null),
    };
    serde_json::json!({
        "name": h.name,
        "event": h.event.as_str(),
        "tool": tool,
        "matcher": matcher,
        "filter": if h.event.is_tool_event() { Value::String(h.filter.describe()) } else { Value::Null },
        "command": h.command,
        "timeout": h.timeout.as_secs_f64(),
        "on_error": h.on_error.as_str(),
        "enabled": h.enabled,
        "paths": h.paths.as_ref().map(|p| p.patterns.clone()),
        "if": h.rule.as_ref().map(|r| r.source.clone()),
        "async": h.is_async,
        "enforce": h.enforce,
        "env": h.env.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect::<Map<String, Value>>(),
        "source": h.source,
        "overrides": h.overrides,
    })
}

/// How `list` prints.
pub enum Format {
    Text,
    Json,
    /// The hook names only, one a line, sorted (for shell completion).
    Names,
}

pub fn list(
    opts: &LoadOptions,
    event: Option<&str>,
    format: Format,
    out: &Output,
) -> Result<u8, String> {
    let event = event.map(parse_event).transpose()?;
    let config = load(opts, out)?;
    // What weakened guards (a broken user file, ...): `list` says it too, without moving the
    // snapshots on (only a dispatch does).
    for a in &config.announcements {
        out.warn(&super::output::relative_to_root(
            a,
            config.project_root.as_deref(),
        ));
    }
    let mut hooks: Vec<&Hook> = config
        .hooks
        .iter()
        .filter(|h| event.is_none_or(|e| h.event == e))
        .collect();
    // Grouped by event; a stable sort keeps the run order within each event.
    hooks.sort_by_key(|h| h.event);
    match format {
        Format::Names => print_names(&hooks),
        Format::Json => print_json(&config, &hooks),
        Format::Text => out!("{}", text(&config, &hooks, out)),
    }
    Ok(EXIT_OK)
}

/// The hook names, escaped, sorted and deduplicated, one a line.
fn print_names(hooks: &[&Hook]) {
    let mut names: Vec<String> = hooks
        .iter()
        .map(|h| crate::terminal::escape(&h.name).into_owned())
        .collect();
    names.sort();
    names.dedup();
    for name in names {
        outln!("{name}");
    }
}

/// The configuration in effect as one pretty JSON object.
fn print_json(config: &Config, hooks: &[&Hook]) {
    let value = serde_json::json!({
        "project_root": config.project_root,
        "disabled": config.settings.disabled,
        "hooks": hooks.iter().map(|h| hook_json(h)).collect::<Vec<_>>(),
        "deduplicated": config.deduplicated,
        "layers": config.layers,
        "untrusted": config.untrusted,
        "announcements": config.announcements,
        "settings": config.settings,
    });
    outln!(
        "{}",
        serde_json::to_string_pretty(&value).unwrap_or_default()
    );
}

/// The text listing: the config files and their state, the hooks by event, the duplicates
/// dropped and where each setting came from.
fn text(config: &Config, hooks: &[&Hook], out: &Output) -> String {
    let mut w = String::new();
    for layer in &config.layers {
        let _ = writeln!(
            w,
            "{:8} {}  {}",
            layer.layer.as_str(),
            layer.file.display(),
            layer_state(layer.state)
        );
    }
    if config.layers.is_empty() {
        let _ = writeln!(w, "no config files found");
    }
    if let Some(why) = &config.settings.disabled {
        let _ = writeln!(w, "every hook is OFF: {why}");
    }
    let mut current = None;
    for h in hooks {
        if current != Some(h.event) {
            current = Some(h.event);
            let _ = writeln!(w, "\n{}", out.paint("1", h.event.as_str()));
        }
        write_hook(&mut w, h);
    }
    if hooks.is_empty() {
        let _ = writeln!(w, "\nno hooks in effect");
    }
    for d in &config.deduplicated {
        let _ = writeln!(
            w,
            "\nduplicate: {} ({}) runs once, as {}",
            d.name, d.source, d.kept
        );
    }
    for (key, origin) in &config.settings.provenance {
        let _ = writeln!(w, "setting {key} from {origin}");
    }
    w
}

/// A config file's state in words.
fn layer_state(state: LayerState) -> &'static str {
    match state {
        LayerState::Loaded => "loaded",
        LayerState::TrustedOnce => "loaded (--trust, this run only)",
        LayerState::TrustedRoot => "loaded (under a trusted root)",
        LayerState::Untrusted => "SKIPPED: untrusted",
        LayerState::Stale => "CHANGED since trusted: new content skipped, its guards fail closed",
        LayerState::Removed => "REMOVED since trusted: its guards fail closed",
        LayerState::Refused => "SKIPPED: refused (see the warning)",
        LayerState::Invalid => "SKIPPED: configuration errors (see `ka-hooks check`)",
    }
}

/// One hook of the text listing: its name, filter and state, then its paths, rule, command,
/// source and overrides, untrusted text escaped.
fn write_hook(w: &mut String, h: &Hook) {
    let state = format!(
        "{}{}{}",
        if h.enabled { "" } else { "  [disabled]" },
        if h.enforce {
            ""
        } else {
            "  [report-only: its verdicts are reported, never applied]"
        },
        if h.is_async { "  [async]" } else { "" },
    );
    let filter = if h.event.is_tool_event() {
        format!("  {}", h.filter.describe())
    } else {
        String::new()
    };
    let _ = writeln!(
        w,
        "  {}{}{state}",
        crate::terminal::escape(&h.name),
        crate::terminal::escape(&filter)
    );
    if let Some(paths) = &h.paths {
        let _ = writeln!(
            w,
            "    paths: {}",
            crate::terminal::escape(&paths.patterns.join(", "))
        );
    }
    if let Some(rule) = &h.rule {
        let _ = writeln!(w, "    if: {}", crate::terminal::escape(&rule.source));
    }
    let _ = writeln!(
        w,
        "    command: {}  (timeout {}s, on_error {})",
        crate::terminal::escape(&h.command),
        h.timeout.as_secs_f64(),
        h.on_error.as_str()
    );
    let _ = writeln!(w, "    from {}", h.source);
    for o in &h.overrides {
        let what = if o.keys == ["enabled"] && !h.enabled {
            "disabled".to_owned()
        } else {
            format!("set {}", o.keys.join(", "))
        };
        let _ = writeln!(w, "    {what} by {}", o.source);
    }
}
