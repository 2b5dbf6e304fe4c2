//! What is wrong with one key of `[hook_settings]`: its value, or the layer that sets it.

use super::super::hook::Layer;
use super::{
    seconds, suggest_key, type_name, DENIAL_BACKSTOP_LIMIT, GATE_KEYS, MAX_CONTINUATIONS_LIMIT,
    SANDBOX_HELP, SETTINGS_KEYS, USER_ONLY_KEYS,
};
use crate::terminal::escape;

/// One problem with a setting: the message, how to fix it, and whether it is the key (not its
/// value) that is wrong.
pub(super) struct Problem {
    pub message: String,
    pub help: Option<String>,
    pub on_key: bool,
}

fn value(message: String, help: Option<&str>) -> Problem {
    Problem {
        message,
        help: help.map(str::to_owned),
        on_key: false,
    }
}

fn expected(what: &str, v: &toml::Value) -> Problem {
    value(format!("expected {what}, got {}", type_name(v)), None)
}

/// Every problem with `key = v` in a file of `layer`, in the order they are reported: a value
/// the key never takes, then a key the layer may not set, then the rest of the values.
pub(super) fn problems(layer: Layer, key: &str, v: &toml::Value) -> Vec<Problem> {
    if let Some(problem) = bad_value(key, v) {
        return vec![problem];
    }
    if let Some(problem) = refused(layer, key) {
        return vec![problem];
    }
    late_value(key, v)
}

/// The numbers and kinds checked before the layer is.
fn bad_value(key: &str, v: &toml::Value) -> Option<Problem> {
    let whole = |limit: i64, help: &str| {
        (!v.as_integer().is_some_and(|n| (0..=limit).contains(&n))).then(|| {
            value(
                format!(
                    "expected a whole number from 0 to {limit}, got {}",
                    escape(&v.to_string())
                ),
                Some(help),
            )
        })
    };
    match key {
        "timeout" => seconds(v).err().map(|msg| {
            value(
                msg,
                Some("write a number of seconds greater than 0, such as `timeout = 30`"),
            )
        }),
        "disable_all" => (!v.is_bool()).then(|| expected("a boolean (`true` or `false`)", v)),
        "log" => (!v.is_str()).then(|| expected("a string (the path of the audit log)", v)),
        "max_continuations" => whole(
            MAX_CONTINUATIONS_LIMIT,
            "write how many times stop hooks may keep one turn going, such as \
             `max_continuations = 8`",
        ),
        "denial_backstop" => whole(
            DENIAL_BACKSTOP_LIMIT,
            "write after how many denials by one guard in a turn its calls ask you, such as \
             `denial_backstop = 3` (0 turns it off)",
        ),
        _ => None,
    }
}

/// A key `layer` may not set: the trust gate and sandbox policy outside the user and managed
/// files, what acts beyond the project in a gated file, the managed-only switch elsewhere.
fn refused(layer: Layer, key: &str) -> Option<Problem> {
    let on_key = |message: String, help: String| Problem {
        message,
        help: Some(help),
        on_key: true,
    };
    let user_file = "your user file ($KA_CONFIG_DIR/ka.toml, ~/.config/ka/ka.toml)";
    if key == "timeout" {
        return None;
    }
    if GATE_KEYS.contains(&key) && !matches!(layer, Layer::User | Layer::Managed) {
        let message = if key.contains("sandbox") {
            format!("a {layer} file cannot loosen or set the sandbox policy (`{key}`)")
        } else {
            format!("a {layer} file cannot change the trust gate (`{key}`)")
        };
        return Some(on_key(message, format!("move `{key}` to {user_file}")));
    }
    if USER_ONLY_KEYS.contains(&key) && layer.is_gated() {
        let why = if key == "log" {
            "ka-hooks itself, unconfined, appends the audit log where it points"
        } else {
            "it caps the stop hooks of every layer, yours included"
        };
        return Some(on_key(
            format!("a {layer} file cannot set `{key}`: it acts beyond the project ({why})"),
            format!("remove it; set it in {user_file} if you want it"),
        ));
    }
    if key == "allow_managed_hooks_only" && layer != Layer::Managed {
        return Some(on_key(
            format!("only the managed file can restrict hooks to managed ones, not a {layer} file"),
            "remove it, or set it in /etc/ka/ka.toml ($KA_MANAGED_DIR)".into(),
        ));
    }
    None
}

/// The values checked once the layer may set the key; an unknown key.
fn late_value(key: &str, v: &toml::Value) -> Vec<Problem> {
    let boolean = || {
        (!v.is_bool())
            .then(|| expected("a boolean (`true` or `false`)", v))
            .into_iter()
            .collect()
    };
    let sandbox = |help: &str| {
        crate::sandbox::Declared::from_toml(v)
            .err()
            .map(|msg| value(msg, Some(help)))
            .into_iter()
            .collect()
    };
    match key {
        "trusted_roots" => match v.as_array() {
            Some(roots) if roots.iter().all(toml::Value::is_str) => roots
                .iter()
                .filter_map(toml::Value::as_str)
                .filter(|root| !(root.starts_with('/') || *root == "~" || root.starts_with("~/")))
                .map(|root| {
                    value(
                        format!("`{}` is not an absolute path", escape(root)),
                        Some("write an absolute directory, or one under `~/`"),
                    )
                })
                .collect(),
            _ => vec![expected("an array of directory paths", v)],
        },
        "stale" if !matches!(v.as_str(), Some("block" | "skip")) => vec![value(
            "expected `block` (the guards of a changed or removed project file fail closed) \
             or `skip` (they are skipped)"
                .to_owned(),
            None,
        )],
        "protect_ka_files" | "allow_managed_hooks_only" | "require_sandbox" => boolean(),
        "sandbox" => sandbox(SANDBOX_HELP),
        "sandbox_project_hooks" => sandbox(
            "write `sandbox_project_hooks = \"read-only\"` (stricter than the default \
             `project`) or `\"off\"`",
        ),
        "stale" | "denial_backstop" | "disable_all" | "log" | "max_continuations" | "timeout" => {
            Vec::new()
        }
        _ => vec![Problem {
            message: format!("unknown key `{key}`"),
            help: Some(suggest_key(key, SETTINGS_KEYS)),
            on_key: true,
        }],
    }
}
