//! The `expect` table of a case, matched against the [`Outcome`] of its dispatch: `verdict`,
//! `FIELD = VALUE` (a table matches a subset; `false` also matches an absent field) and
//! `FIELD_contains = "TEXT"`, for any field of `ka-hooks run --json`. Fields are looked up in the
//! serialised outcome, so a new field of [`Outcome`] can be expected without a change here.

use serde_json::{Map, Value};

use crate::event::Event;
use crate::outcome::Outcome;

const CONTAINS: &str = "_contains";

/// The fields an expectation can name: those of the outcome's JSON, and `verdict`.
fn known_fields() -> Vec<String> {
    let blank = serde_json::to_value(Outcome::new(Event::Stop, None)).unwrap_or_default();
    let mut fields: Vec<String> = match blank {
        Value::Object(map) => map.keys().cloned().collect(),
        _ => Vec::new(),
    };
    fields.retain(|f| !matches!(f.as_str(), "event" | "hooks" | "untrusted"));
    fields.push("verdict".into());
    fields
}

/// Every expectation names a known field, with a value of a usable type.
pub fn validate(expect: &[(String, Value)]) -> Result<(), String> {
    let known = known_fields();
    for (key, value) in expect {
        let field = key.strip_suffix(CONTAINS).unwrap_or(key);
        if !known.iter().any(|k| k == field) {
            // The whole key against every key it could be, so `reson_contains` suggests
            // `reason_contains`, not the bare field.
            let closest = known
                .iter()
                .flat_map(|k| [k.clone(), format!("{k}{CONTAINS}")])
                .min_by_key(|k| crate::event::edit_distance(key, k))
                .map(|k| format!(" (did you mean `{k}`?)"))
                .unwrap_or_default();
            return Err(format!(
                "unknown expectation `{}`{closest}; expect fields: {} (each also as \
                 FIELD_contains = \"text\")",
                crate::terminal::escape(key),
                known.join(", ")
            ));
        }
        if key.ends_with(CONTAINS) && !value.is_string() {
            return Err(format!("`{key}` takes a string, such as {key} = \"text\""));
        }
        if key == "verdict" {
            let ok = value
                .as_str()
                .is_some_and(|v| crate::verdict::NAMES.contains(&v));
            if !ok {
                return Err(format!(
                    "verdict = {value}: expected one of {}",
                    crate::verdict::NAMES.join(", ")
                ));
            }
        }
    }
    Ok(())
}

/// Each unmet expectation, in words: `expected X, got Y`.
pub fn check(expect: &[(String, Value)], outcome: &Outcome) -> Vec<String> {
    let verdict = crate::verdict::verdict(outcome);
    let actual = match serde_json::to_value(outcome) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    };
    let mut failures = Vec::new();
    for (key, wanted) in expect {
        if key == "verdict" {
            let wanted = wanted.as_str().unwrap_or_default();
            if !crate::verdict::matches(&verdict, wanted) {
                failures.push(format!("expected verdict {wanted}, got {verdict}"));
            }
            continue;
        }
        if let Some(field) = key.strip_suffix(CONTAINS) {
            let needle = wanted.as_str().unwrap_or_default();
            let got = actual.get(field).unwrap_or(&Value::Null);
            if !contains(got, needle) {
                failures.push(format!(
                    "expected {field} to contain {:?}, got {}",
                    needle,
                    shown(got)
                ));
            }
            continue;
        }
        let got = actual.get(key).unwrap_or(&Value::Null);
        if !subset(wanted, got) {
            failures.push(format!(
                "expected {key} = {}, got {}",
                shown(wanted),
                shown(got)
            ));
        }
    }
    failures
}

fn contains(got: &Value, needle: &str) -> bool {
    match got {
        Value::String(s) => s.contains(needle),
        Value::Array(items) => items.iter().any(|i| contains(i, needle)),
        Value::Null => false,
        other => other.to_string().contains(needle),
    }
}

/// `wanted` equals `got`, except that a table matches a subset of an object's keys.
fn subset(wanted: &Value, got: &Value) -> bool {
    match (wanted, got) {
        (Value::Object(w), Value::Object(g)) => w
            .iter()
            .all(|(k, v)| g.get(k).is_some_and(|gv| subset(v, gv))),
        (Value::Number(w), Value::Number(g)) => w.as_f64() == g.as_f64(),
        // `mode = false`: no mode was set (the field is null).
        (Value::Bool(false), Value::Null) => true,
        _ => wanted == got,
    }
}

/// A value for a failure message: escaped, cut at 300 characters.
fn shown(value: &Value) -> String {
    let text = match value {
        Value::Null => "nothing".to_owned(),
        other => other.to_string(),
    };
    let mut cut: String = text.chars().take(300).collect();
    if cut.len() < text.len() {
        cut.push('…');
    }
    crate::terminal::escape(&cut).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_table_matches_a_subset_and_contains_looks_into_lists() {
        assert!(subset(&json!({"a": 1}), &json!({"a": 1, "b": 2})));
        assert!(!subset(&json!({"a": 1, "c": 3}), &json!({"a": 1, "b": 2})));
        assert!(contains(&json!(["x", "hello y"]), "hello"));
        assert!(!contains(&Value::Null, ""));
    }

    #[test]
    fn an_unknown_field_is_an_error_with_a_suggestion() {
        let err = validate(&[("reason_contain".into(), json!("x"))]).unwrap_err();
        assert!(
            err.contains("unknown expectation `reason_contain`"),
            "{err}"
        );
        let err = validate(&[("verdict".into(), json!("denied"))]).unwrap_err();
        assert!(err.contains("expected one of blocked"), "{err}");
        assert!(validate(&[("reason_contains".into(), json!("x"))]).is_ok());
    }
}
