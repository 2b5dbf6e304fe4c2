//! How strong a hook is as a guard, compared key by key: what a later layer may change without
//! weakening it (`super::merge`). Anything not provably as strong is a weakening. The rules:
//! `docs/configuration.md`, "The merge is monotone".

use std::fmt;

use super::filter::{MatcherKind, ToolFilter};
use super::hook::{Hook, OnError};
use super::paths_filter::PathFilter;
use super::rule::Rule;

/// One way a hook got weaker, for messages: key, before, after (e.g. "enforce", "true", "false").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Weakening {
    /// The key that changed.
    pub key: &'static str,
    /// Its value before the edit.
    pub before: String,
    /// Its value after the edit.
    pub after: String,
}

impl fmt::Display for Weakening {
    /// `enforce: true -> false`, with control characters of file text escaped.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} -> {}",
            self.key,
            crate::terminal::escape(&self.before),
            crate::terminal::escape(&self.after)
        )
    }
}

/// Every way `after` is weaker than `before` (empty when `after` is as strong or stronger).
pub fn weakenings(before: &Hook, after: &Hook) -> Vec<Weakening> {
    let mut out = Vec::new();
    if !before.enabled {
        return out;
    }
    let mut push = |key: &'static str, before: String, after: String| {
        out.push(Weakening { key, before, after })
    };
    if !after.enabled {
        push("enabled", "true".into(), "false".into());
    }
    if before.enforce && !after.enforce {
        push("enforce", "true".into(), "false".into());
    }
    if before.event != after.event {
        push("event", before.event.to_string(), after.event.to_string());
    }
    if !filter_covers(&after.filter, &before.filter) {
        let key = match (&before.filter, &after.filter) {
            (ToolFilter::Matcher(_), _) | (_, ToolFilter::Matcher(_)) => "matcher",
            _ => "tool",
        };
        push(key, before.filter.describe(), after.filter.describe());
    }
    if !paths_cover(after.paths.as_deref(), before.paths.as_deref()) {
        push(
            "paths",
            show_paths(before.paths.as_deref()),
            show_paths(after.paths.as_deref()),
        );
    }
    if !rule_covers(after.rule.as_deref(), before.rule.as_deref()) {
        push(
            "if",
            show_rule(before.rule.as_deref()),
            show_rule(after.rule.as_deref()),
        );
    }
    if before.command != after.command {
        push("command", before.command.clone(), after.command.clone());
    }
    if before.env != after.env {
        push("env", show_env(&before.env), show_env(&after.env));
    }
    if rank(after.on_error) < rank(before.on_error) {
        push(
            "on_error",
            before.on_error.as_str().into(),
            after.on_error.as_str().into(),
        );
    }
    // Longer is weaker (a stuck script holds the call up longer); shorter is weaker too unless a
    // timed-out hook blocks: with `ignore` (or `ask`) a timeout cut short lets the call through
    // (or hands it to a person) where the slower script would have blocked it.
    if after.timeout > before.timeout
        || (after.timeout < before.timeout && after.on_error != OnError::Block)
    {
        push("timeout", seconds(before.timeout), seconds(after.timeout));
    }
    if after.is_async && !before.is_async {
        push("async", "false".into(), "true".into());
    }
    // A hook that may write more places, or reach the network, guards less. So does one that
    // may write fewer: a guard whose `mktemp` or cache write then fails is a failing guard, and
    // nothing says its author meant it to run so. Any other sandbox is not provably as strong.
    if after.sandbox != before.sandbox {
        push("sandbox", before.sandbox.summary(), after.sandbox.summary());
    }
    out
}

/// Every key of `hook` that decides what it guards, with its value as [`weakenings`] shows it,
/// in the order it compares them (the filter is `tool` whether written `tool` or `matcher`):
/// what a review prints before and after an override.
pub fn guard_keys(hook: &Hook) -> Vec<(&'static str, String)> {
    vec![
        ("enabled", hook.enabled.to_string()),
        ("enforce", hook.enforce.to_string()),
        ("event", hook.event.to_string()),
        ("tool", hook.filter.describe()),
        ("paths", show_paths(hook.paths.as_deref())),
        ("if", show_rule(hook.rule.as_deref())),
        ("command", hook.command.clone()),
        ("env", show_env(&hook.env)),
        ("on_error", hook.on_error.as_str().to_owned()),
        ("timeout", seconds(hook.timeout)),
        ("async", hook.is_async.to_string()),
        ("sandbox", hook.sandbox.summary()),
    ]
}

/// block > ask > ignore: what a failing guard does, from most to least guarding.
fn rank(on_error: OnError) -> u8 {
    match on_error {
        OnError::Ignore => 0,
        OnError::Ask => 1,
        OnError::Block => 2,
    }
}

fn seconds(d: std::time::Duration) -> String {
    format!("{}s", d.as_secs_f64())
}

/// Whether every tool `narrower` passes is provably passed by `wider`: `wider` takes every tool,
/// or is the same filter, or `narrower` is a list of exact names that `wider` all passes.
fn filter_covers(wider: &ToolFilter, narrower: &ToolFilter) -> bool {
    if matches!(wider, ToolFilter::All) || wider == narrower {
        return true;
    }
    let names: &[String] = match narrower {
        ToolFilter::Tools(tools) if tools.globs.is_none() => &tools.exact,
        ToolFilter::Matcher(m) => match &m.kind {
            MatcherKind::Names(names) => names,
            MatcherKind::Regex(_) => return false,
        },
        _ => return false,
    };
    names.iter().all(|n| wider.matches(Some(n)))
}

/// Whether every path `narrower` passes is provably passed by `wider`. No filter passes every
/// path; a filter passes more when its includes hold every include of the other (or `**`) and
/// each of its excludes is one of the other's.
fn paths_cover(wider: Option<&PathFilter>, narrower: Option<&PathFilter>) -> bool {
    let Some(wider) = wider else {
        return true;
    };
    let Some(narrower) = narrower else {
        return false;
    };
    let split = |f: &PathFilter| -> (Vec<String>, Vec<String>) {
        let (mut inc, mut exc) = (Vec::new(), Vec::new());
        for p in &f.patterns {
            match p.strip_prefix('!') {
                Some(e) => exc.push(e.strip_prefix("./").unwrap_or(e).to_owned()),
                None => inc.push(p.strip_prefix("./").unwrap_or(p).to_owned()),
            }
        }
        (inc, exc)
    };
    let (w_inc, w_exc) = split(wider);
    let (n_inc, n_exc) = split(narrower);
    let includes = w_inc.iter().any(|p| p == "**") || n_inc.iter().all(|p| w_inc.contains(p));
    includes && w_exc.iter().all(|p| n_exc.contains(p))
}

/// Whether every call `narrower` passes is provably passed by `wider` (no rule passes all).
fn rule_covers(wider: Option<&Rule>, narrower: Option<&Rule>) -> bool {
    match (wider, narrower) {
        (None, _) => true,
        (Some(_), None) => false,
        (Some(w), Some(n)) => w.covers(n),
    }
}

fn show_paths(paths: Option<&PathFilter>) -> String {
    paths.map_or_else(
        || "(none: every path)".into(),
        |p| format!("{:?}", p.patterns),
    )
}

fn show_rule(rule: Option<&Rule>) -> String {
    rule.map_or_else(
        || "(none: every call)".into(),
        |r| format!("{:?}", r.source),
    )
}

fn show_env(env: &[(String, String)]) -> String {
    let vars: Vec<String> = env.iter().map(|(k, v)| format!("{k}={v:?}")).collect();
    format!("{{{}}}", vars.join(", "))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::config::hook::Layer;
    use crate::config::merge::merge_hooks;
    use crate::config::parse::parse_file;
    use crate::config::settings::Settings;

    const GUARD: &str =
        "name = \"guard\"\nevent = \"pre_tool_use\"\ntool = [\"write\", \"edit\"]\n\
                         command = \"guard.sh\"\non_error = \"ask\"\ntimeout = 10\n";

    /// The hook one entry makes: the guard above with `extra` lines (later keys win).
    fn hook(extra: &str) -> Hook {
        let text = format!("[[hooks]]\n{GUARD}\n[[hooks]]\nname = \"guard\"\n{extra}\n");
        let mut errors = Vec::new();
        let file = parse_file(Layer::User, Path::new("ka.toml"), &text, &mut errors);
        assert!(errors.is_empty(), "{errors:?}");
        let mut hooks = merge_hooks(
            vec![file],
            &Settings::default(),
            &mut errors,
            &mut Vec::new(),
        )
        .hooks;
        assert!(errors.is_empty(), "{errors:?}");
        hooks.remove(0)
    }

    fn keys(before: &str, after: &str) -> Vec<&'static str> {
        weakenings(&hook(before), &hook(after))
            .iter()
            .map(|w| w.key)
            .collect()
    }

    #[test]
    fn the_same_hook_is_as_strong() {
        assert_eq!(keys("", ""), Vec::<&str>::new());
    }

    #[test]
    fn each_weaker_key_is_named() {
        for (after, key) in [
            ("enabled = false", "enabled"),
            ("enforce = false", "enforce"),
            ("event = \"post_tool_use\"", "event"),
            ("tool = \"write\"", "tool"),
            ("matcher = \"Write\"", "matcher"),
            ("paths = [\"src/**\"]", "paths"),
            ("if = \"Write(src/**)\"", "if"),
            ("command = \"true\"", "command"),
            ("env = { A = \"1\" }", "env"),
            ("on_error = \"ignore\"", "on_error"),
            ("timeout = 11", "timeout"),
        ] {
            assert_eq!(keys("", after), [key], "{after}");
        }
        // `async` is only valid on events that cannot be vetoed; the comparison does not care.
        let mut background = hook("");
        background.is_async = true;
        let w = weakenings(&hook(""), &background);
        assert_eq!(w.iter().map(|w| w.key).collect::<Vec<_>>(), ["async"]);
    }

    #[test]
    fn a_shorter_timeout_is_weaker_unless_a_timed_out_hook_blocks() {
        // Cut short with `ignore`, the guard fails open where the slow script would have blocked.
        assert_eq!(keys("", "timeout = 0.05"), ["timeout"]);
        assert_eq!(keys("", "timeout = 5\non_error = \"ask\""), ["timeout"]);
        assert_eq!(
            keys("", "timeout = 5\non_error = \"block\""),
            Vec::<&str>::new()
        );
    }

    #[test]
    fn stronger_keys_are_not_weakenings() {
        for after in [
            "on_error = \"block\"",
            "timeout = 5\non_error = \"block\"",
            "tool = [\"edit\", \"write\", \"read\"]",
            "tool = \"*\"",
            "matcher = \"Write|Edit|Read\"",
            "enforce = true",
            "enabled = true",
        ] {
            assert_eq!(keys("", after), Vec::<&str>::new(), "{after}");
        }
        // A disabled hook guards nothing: nothing is weaker than it.
        assert_eq!(
            keys("enabled = false", "enforce = false"),
            Vec::<&str>::new()
        );
        // Report-only becoming enforced is stronger.
        assert_eq!(keys("enforce = false", ""), Vec::<&str>::new());
        // on_error ignore < ask < block.
        assert_eq!(
            keys("on_error = \"block\"", "on_error = \"ask\""),
            ["on_error"]
        );
    }

    #[test]
    fn paths_are_as_broad_only_when_provably_a_superset() {
        let p = |before: &str, after: &str| {
            keys(&format!("paths = {before}"), &format!("paths = {after}"))
        };
        assert_eq!(
            p("[\"src/**\"]", "[\"src/**\", \"lib/**\"]"),
            Vec::<&str>::new()
        );
        assert_eq!(
            p("[\"src/**\", \"!src/gen/**\"]", "[\"src/**\"]"),
            Vec::<&str>::new()
        );
        assert_eq!(p("[\"src/**\"]", "[\"**\"]"), Vec::<&str>::new());
        assert_eq!(p("[\"./src/**\"]", "[\"src/**\"]"), Vec::<&str>::new());
        assert_eq!(p("[\"src/**\"]", "[\"src/a/**\"]"), ["paths"]);
        assert_eq!(p("[\"src/**\"]", "[\"src/**\", \"!src/x\"]"), ["paths"]);
        // No filter is the broadest; adding one narrows.
        assert_eq!(
            keys("paths = [\"src/**\"]", "tool = [\"write\", \"edit\"]"),
            Vec::<&str>::new()
        );
    }

    #[test]
    fn if_rules_are_as_broad_only_when_the_same_or_the_bare_tool() {
        let r = |before: &str, after: &str| {
            keys(&format!("if = {before:?}"), &format!("if = {after:?}"))
        };
        assert_eq!(r("Write(src/**)", "Write(src/**)"), Vec::<&str>::new());
        assert_eq!(r("Write(src/**)", "Edit"), Vec::<&str>::new());
        assert_eq!(r("Write(src/**)", "Write(src/a/**)"), ["if"]);
        assert_eq!(r("Bash(git push *)", "Bash(git push --force *)"), ["if"]);
        assert_eq!(r("Bash(git push *)", "Write"), ["if"]);
    }

    #[test]
    fn several_weakenings_at_once_are_all_named_and_displayed() {
        let w = weakenings(
            &hook(""),
            &hook("enforce = false\ncommand = \"true\\u001b[2K\"\non_error = \"ignore\""),
        );
        let shown: Vec<String> = w.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "enforce: true -> false",
                "command: guard.sh -> true\\x1b[2K",
                "on_error: ask -> ignore"
            ]
        );
    }
}
