//! A setting that does not parse fails closed.
//!
//! `KA_HOOKS_TIMEOUT=abc` (or empty, `0`, `-1`, `10s`), `KA_HOOKS_LOG=true`: the value says the
//! user meant something, and nobody can tell what. Such an error used to fail the whole load, and
//! the adapters then answered "no ka hook ran (failing open)", past every guard, the managed ones
//! included. Now the load goes on without the value (every layer loads, the files' own settings
//! hold), each guard (an enabled, enforcing hook on an event that can veto) is never spawned and
//! blocks every call it would have matched with a reason that names the variable and the fix,
//! and every dispatch announces it. `ka-hooks check` reports it and exits 1.

use super::broken::{self, close};
use super::error::ConfigError;
use super::hook::Hook;

/// Every guard of `hooks` blocks, with a reason naming what does not parse; returns what the
/// user must hear (nothing when every setting parsed).
pub(super) fn hold(hooks: &mut Vec<Hook>, errors: &[ConfigError]) -> Vec<String> {
    if errors.is_empty() {
        return Vec::new();
    }
    let what = errors.iter().map(describe).collect::<Vec<_>>().join("; ");
    let mut guards = 0;
    let held: Vec<Hook> = std::mem::take(hooks)
        .into_iter()
        .map(|hook| {
            if !broken::is_guard(&hook) {
                return hook;
            }
            guards += 1;
            let reason = format!(
                "blocked by the guard `{}`: {what}; until it is fixed or unset, every guard \
                 blocks the calls it would have matched",
                crate::terminal::escape(&hook.name)
            );
            close(hook, reason)
        })
        .collect();
    *hooks = held;
    vec![format!(
        "{what}; the value is not used, every layer still loads, and the {guards} guard(s) block \
         every call they would have matched until it is fixed or unset"
    )]
}

/// The error on one line: what does not parse, and the fix.
fn describe(e: &ConfigError) -> String {
    let mut out = crate::terminal::escape(e.message.trim()).into_owned();
    if let Some(help) = &e.help {
        out.push_str(" (");
        out.push_str(&crate::terminal::escape(help.trim()));
        out.push(')');
    }
    out
}
