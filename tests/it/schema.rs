//! What editors and shells get: `ka-hooks schema` (and the shipped `ka-hooks.schema.json`) and
//! `ka-hooks completions`.

use crate::support;

use std::path::Path;

use serde_json::Value;
use support::Project;

const MANIFEST_DIR: &str = env!("CARGO_MANIFEST_DIR");

fn schema() -> Value {
    ka_hooks::schema::schema()
}

fn validator() -> jsonschema::Validator {
    jsonschema::draft7::new(&schema())
        .unwrap_or_else(|e| panic!("the schema does not compile: {e}"))
}

/// A TOML document as the JSON value editors validate.
#[track_caller]
fn toml_to_json(text: &str) -> Value {
    let value: toml::Value = toml::from_str(text).unwrap_or_else(|e| panic!("invalid TOML: {e}"));
    serde_json::to_value(value).expect("TOML converts to JSON")
}

/// The schema's complaints about `text`, one line each (empty when it is valid).
fn schema_errors(text: &str) -> Vec<String> {
    let instance = toml_to_json(text);
    validator()
        .iter_errors(&instance)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

/// The loader's complaints about `text` as a user file.
fn loader_errors(text: &str) -> Vec<String> {
    let project = Project::with_user_toml(text);
    let report = ka_hooks::Config::check(&project.options(&project.root, false));
    report.errors.iter().map(ToString::to_string).collect()
}

#[test]
fn the_schema_is_a_valid_draft_7_schema() {
    jsonschema::draft7::meta::validate(&schema())
        .unwrap_or_else(|e| panic!("not a valid draft 7 schema: {e}"));
}

#[test]
fn shipped_schema_file_equals_the_schema_command_output() {
    let shipped = std::fs::read_to_string(Path::new(MANIFEST_DIR).join("ka-hooks.schema.json"))
        .expect("ka-hooks.schema.json is shipped at the top level");
    let project = Project::new();
    let out = project.cli().arg("schema").assert().success();
    let printed = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(
        shipped == printed,
        "ka-hooks.schema.json is stale; regenerate it with\n  cargo run -q -- schema > ka-hooks.schema.json"
    );
    assert_eq!(printed, ka_hooks::schema::schema_text());
}

#[test]
fn ka_toml_example_validates_against_the_schema() {
    let text = std::fs::read_to_string(Path::new(MANIFEST_DIR).join("ka.toml.example"))
        .expect("read ka.toml.example");
    let instance = toml_to_json(&text);
    assert!(
        instance["hooks"].as_array().is_some_and(|h| h.len() >= 5),
        "the example defines its hooks: {instance:#}"
    );
    assert_eq!(schema_errors(&text), Vec::<String>::new());
}

#[test]
fn the_init_starter_validates_against_the_schema() {
    let text = std::fs::read_to_string(Path::new(MANIFEST_DIR).join("src/starter.toml"))
        .expect("read src/starter.toml");
    assert_eq!(schema_errors(&text), Vec::<String>::new());
}

#[test]
fn schema_and_loader_reject_the_same_mistakes() {
    let cases = [
        ("unknown key", "[[hooks]]\nevent = \"stop\"\ncommand = \"x\"\ncomand = \"y\"\n"),
        ("unknown event", "[[hooks]]\nevent = \"pre_tool_usee\"\ncommand = \"x\"\n"),
        ("zero timeout", "[[hooks]]\nevent = \"stop\"\ncommand = \"x\"\ntimeout = 0\n"),
        ("negative timeout", "[[hooks]]\nevent = \"stop\"\ncommand = \"x\"\ntimeout = -1\n"),
        ("timeout as a string", "[[hooks]]\nevent = \"stop\"\ncommand = \"x\"\ntimeout = \"10\"\n"),
        ("timeout over a day", "[[hooks]]\nevent = \"stop\"\ncommand = \"x\"\ntimeout = 90000\n"),
        ("empty tool list", "[[hooks]]\nevent = \"pre_tool_use\"\ntool = []\ncommand = \"x\"\n"),
        ("tool as a number", "[[hooks]]\nevent = \"pre_tool_use\"\ntool = 3\ncommand = \"x\"\n"),
        ("tool on stop", "[[hooks]]\nevent = \"stop\"\ntool = \"write\"\ncommand = \"x\"\n"),
        // (stop takes a matcher on its `stop` field since StopFailure imports as stop + "error")
        (
            "matcher on user_prompt_submit",
            "[[hooks]]\nevent = \"UserPromptSubmit\"\nmatcher = \"Bash\"\ncommand = \"x\"\n",
        ),
        (
            "tool and matcher",
            "[[hooks]]\nevent = \"pre_tool_use\"\ntool = \"write\"\nmatcher = \"Write\"\ncommand = \"x\"\n",
        ),
        ("unknown on_error", "[[hooks]]\nevent = \"stop\"\ncommand = \"x\"\non_error = \"maybe\"\n"),
        ("enabled as a string", "[[hooks]]\nevent = \"stop\"\ncommand = \"x\"\nenabled = \"no\"\n"),
        ("bad env name", "[[hooks]]\nevent = \"stop\"\ncommand = \"x\"\nenv = { \"1X\" = \"a\" }\n"),
        ("env value not a string", "[[hooks]]\nevent = \"stop\"\ncommand = \"x\"\nenv = { X = 1 }\n"),
        ("empty command", "[[hooks]]\nevent = \"stop\"\ncommand = \"\"\n"),
        ("no command", "[[hooks]]\nevent = \"stop\"\n"),
        ("unknown setting", "[hook_settings]\ntimout = 5\n"),
        ("zero default timeout", "[hook_settings]\ntimeout = 0\n"),
        ("disable_all as a string", "[hook_settings]\ndisable_all = \"yes\"\n"),
    ];
    for (what, text) in cases {
        assert!(
            !loader_errors(text).is_empty(),
            "{what}: the loader accepts\n{text}"
        );
        assert!(
            !schema_errors(text).is_empty(),
            "{what}: the schema accepts\n{text}"
        );
    }
}

#[test]
fn schema_and_loader_accept_the_same_forms() {
    let cases = [
        ("claude spelling", "[[hooks]]\nevent = \"PreToolUse\"\nmatcher = \"Edit|Write\"\ncommand = \"x\"\n"),
        ("turn_end alias", "[[hooks]]\nevent = \"turn_end\"\ncommand = \"x\"\n"),
        ("tool as a string", "[[hooks]]\nevent = \"post_tool_use\"\ntool = \"write\"\ncommand = \"x\"\n"),
        ("tool globs", "[[hooks]]\nevent = \"pre_tool_use\"\ntool = [\"write\", \"mcp__*\"]\ncommand = \"x\"\n"),
        ("fractional timeout", "[[hooks]]\nevent = \"stop\"\ncommand = \"x\"\ntimeout = 0.5\n"),
        (
            "override by name",
            "[[hooks]]\nname = \"fmt\"\nevent = \"stop\"\ncommand = \"x\"\n\n[[hooks]]\nname = \"fmt\"\nenabled = false\ntimeout = 5\n",
        ),
        ("ka's other keys", "model = \"big\"\n[ui]\ntheme = \"dark\"\n"),
        (
            "every setting",
            "[hook_settings]\ntimeout = 30\ndisable_all = false\nlog = \"hooks.jsonl\"\ntrusted_roots = [\"~/work\"]\n",
        ),
    ];
    for (what, text) in cases {
        assert_eq!(loader_errors(text), Vec::<String>::new(), "{what}");
        assert_eq!(schema_errors(text), Vec::<String>::new(), "{what}");
    }
}

#[test]
fn completions_for_bash_zsh_and_fish_name_the_binary_and_its_commands() {
    let project = Project::new();
    for shell in ["bash", "zsh", "fish"] {
        let out = project
            .cli()
            .args(["completions", shell])
            .assert()
            .success();
        let script = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
        assert!(!script.trim().is_empty(), "{shell}: empty");
        assert!(
            script.contains("ka-hooks"),
            "{shell}: no `ka-hooks` in\n{script}"
        );
        for command in ["doctor", "schema", "trust"] {
            assert!(
                script.contains(command),
                "{shell}: no `{command}` in\n{script}"
            );
        }
    }
}

#[test]
fn completions_reject_an_unknown_shell() {
    Project::new()
        .cli()
        .args(["completions", "tcsh"])
        .assert()
        .code(1);
}
