//! The pipeline of `pre_tool_use`, `permission_request` and `user_prompt_submit`: hooks run in
//! declared order (managed, user, then each root's project and local files, outermost first),
//! each on the arguments as rewritten before it. Declared order is trust order, so a hook that
//! judged the call before a later hook rewrote it is at least as trusted as the rewriter: after a
//! rewrite, each such hook judges the call again, as it now stands, until a pass rewrites
//! nothing; then the built-in protection of ka's own files judges the final call too, and only
//! the judgments of the final call decide. The call that runs is the one every guard last saw.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::scheduling::{run_one, serialize, Run};
use super::{OwnFiles, PayloadMirror};
use crate::action::{Action, Decision, InputPatch};
use crate::config::Hook;
use crate::judge::{
    apply_common, apply_decision, apply_failure, block, block_reason, failure_text, non_empty,
    read_action, report, skipped_report, would_have,
};
use crate::outcome::{Outcome, Status};

/// How many passes the pipeline makes before it gives up on rewrites that keep changing the
/// call (two hooks each undoing the other's rewrite): the call is then blocked.
pub(super) const MAX_PASSES: u32 = 4;

/// What one hook last judged: the version of the call it saw (or made, when it rewrote it), and
/// the decision it gave on it.
struct Judgment {
    version: u32,
    decision: Option<(Decision, Option<String>)>,
}

/// One pipeline run: the call as it stands, its version (0: as made; each rewrite that changes
/// the arguments adds one), and each hook's last judgment.
struct Pipeline<'h, 'r> {
    hooks: &'r [&'h Hook],
    payload: Map<String, Value>,
    bytes: Arc<[u8]>,
    version: u32,
    judged: Vec<Option<Judgment>>,
    /// Any hook applied a rewrite, even one that left the arguments as they were.
    patched: bool,
    /// The last hook whose rewrite changed the call.
    rewriter: Option<&'h Hook>,
    denied_by: Option<&'h Hook>,
}

/// Runs the pipeline. Returns the hook that said no (exit 2, a deny or a block), when one did.
/// `own_files` is the built-in protection, when it applies to this call: it judges the call again
/// when a hook changed it.
pub(super) fn run_pipeline<'h>(
    hooks: &[&'h Hook],
    payload: Map<String, Value>,
    on_patch: Option<&PayloadMirror>,
    run: &Run<'_>,
    own_files: Option<&OwnFiles<'_>>,
    outcome: &mut Outcome,
) -> Option<&'h Hook> {
    let mut pipeline = Pipeline {
        hooks,
        bytes: serialize(&payload),
        payload,
        version: 0,
        judged: hooks.iter().map(|_| None).collect(),
        patched: false,
        rewriter: None,
        denied_by: None,
    };
    let mut pass = 1;
    loop {
        let start = pipeline.version;
        pipeline.pass(pass, on_patch, run, outcome);
        if outcome.blocked || pipeline.version == start {
            break;
        }
        if pass == MAX_PASSES {
            pipeline.unsettled(outcome);
            break;
        }
        pass += 1;
    }
    if pipeline.version > 0 && !outcome.blocked {
        pipeline.decide_on_the_final_call(own_files, outcome);
    }
    if pipeline.patched && !outcome.blocked {
        outcome.updated_input = pipeline.arguments().cloned();
    }
    pipeline.denied_by
}

impl<'h> Pipeline<'h, '_> {
    fn arguments(&self) -> Option<&Map<String, Value>> {
        self.payload.get("arguments").and_then(Value::as_object)
    }

    /// Whether hook `i` last judged the call as it stands now.
    fn current(&self, i: usize) -> bool {
        self.judged[i]
            .as_ref()
            .is_some_and(|j| j.version == self.version)
    }

    /// Whether hook `i` runs on the call as it stands (its `paths` and `if` are read again on
    /// each version).
    fn matches(&self, i: usize, run: &Run<'_>) -> bool {
        run.replay || self.hooks[i].matches_call(run.tool, self.arguments(), run.root)
    }

    /// One pass: the first runs every hook that matches; a later one only those whose last
    /// judgment was of another version of the call (or that never ran, and match it now).
    fn pass(
        &mut self,
        pass: u32,
        on_patch: Option<&PayloadMirror>,
        run: &Run<'_>,
        outcome: &mut Outcome,
    ) {
        for i in 0..self.hooks.len() {
            if pass > 1 && self.current(i) {
                continue;
            }
            if outcome.blocked || run.stop.stopped() {
                self.skip_from(i, pass, run, outcome);
                return;
            }
            if !self.matches(i, run) {
                // It judged an earlier version it no longer matches: that judgment goes.
                if let Some(earlier) = self.judged[i].take() {
                    self.dropped(i, earlier, outcome);
                }
                continue;
            }
            self.run_hook(i, pass, on_patch, run, outcome);
        }
    }

    /// The hooks from `i` on that this pass would still have run, reported skipped (an earlier
    /// one blocked) or cancelled.
    fn skip_from(&self, i: usize, pass: u32, run: &Run<'_>, outcome: &mut Outcome) {
        let cancelled = !outcome.blocked;
        for j in i..self.hooks.len() {
            if pass > 1 && (self.current(j) || !self.matches(j, run)) {
                continue;
            }
            outcome.hooks.push(skipped_report(self.hooks[j], cancelled));
        }
    }

    fn dropped(&self, i: usize, earlier: Judgment, outcome: &mut Outcome) {
        if earlier.decision.is_some() {
            outcome.diagnostics.push(format!(
                "hook `{}` judged this call before {} rewrote it, and does not match it now: \
                 its decision on the earlier call no longer counts",
                self.hooks[i].name,
                self.rewriter
                    .map_or_else(|| "a hook".to_owned(), |h| format!("hook `{}`", h.name))
            ));
        }
    }

    /// Runs hook `i` on the call as it stands and judges what it did. Its decision is kept apart
    /// (and folded into the outcome) so that a later pass can replace it.
    fn run_hook(
        &mut self,
        i: usize,
        pass: u32,
        on_patch: Option<&PayloadMirror>,
        run: &Run<'_>,
        outcome: &mut Outcome,
    ) {
        let hook = self.hooks[i];
        if pass > 1 {
            // What it would have done is said of the call as it stands.
            outcome.report_only.retain(|w| w.hook != hook.name);
        }
        let before = (outcome.decision.take(), outcome.reason.take());
        let args = self.arguments();
        let finished = run_one(hook, &self.bytes, args, run);
        let mut report = report(hook, &finished);
        report.input = (self.version > 0).then(|| args.cloned()).flatten();
        report.rejudged = pass > 1;
        if !hook.enforce {
            would_have(hook, &finished, &mut report, outcome);
        } else {
            match report.status {
                Status::Ok => {
                    if let Some(action) =
                        read_action(hook, &finished, run.plain_context, &mut report, outcome)
                    {
                        if let Some(patch) = &action.input_patch {
                            self.rewrite(hook, patch, on_patch, outcome);
                        }
                        apply_pipeline_action(hook, &action, outcome);
                    }
                }
                Status::Blocked => block(outcome, block_reason(hook, &finished.stderr)),
                Status::Error => apply_failure(hook, &failure_text(hook, &finished), outcome),
                Status::Skipped | Status::Cancelled => {}
            }
            if outcome.blocked && matches!(report.status, Status::Ok | Status::Blocked) {
                self.denied_by = Some(hook);
            }
            outcome.hooks.push(report);
        }
        if outcome.blocked {
            return;
        }
        let own = (outcome.decision.take()).map(|d| (d, outcome.reason.take()));
        (outcome.decision, outcome.reason) = before;
        if let Some((decision, reason)) = &own {
            combine(outcome, *decision, reason.clone());
        }
        self.judged[i] = Some(Judgment {
            version: self.version,
            decision: own,
        });
    }

    /// Applies a hook's rewrite to the payload the next hooks see; a rewrite that changes the
    /// arguments makes a new version of the call.
    fn rewrite(
        &mut self,
        hook: &'h Hook,
        patch: &InputPatch,
        on_patch: Option<&PayloadMirror>,
        outcome: &mut Outcome,
    ) {
        let before = self.arguments().cloned();
        patch_arguments(hook, patch, &mut self.payload, on_patch, outcome);
        self.patched = true;
        if self.arguments() != before.as_ref() {
            self.version += 1;
            self.rewriter = Some(hook);
            self.bytes = serialize(&self.payload);
        }
    }

    /// After a rewrite: the decision is made again from the built-in protection's judgment of
    /// the final call and the decisions of the hooks that judged it, in declared order.
    fn decide_on_the_final_call(&self, own_files: Option<&OwnFiles<'_>>, outcome: &mut Outcome) {
        outcome.decision = None;
        outcome.reason = None;
        if let Some(reason) = own_files.and_then(|o| o.check(self.arguments())) {
            outcome.decision = Some(Decision::Ask);
            outcome.reason = Some(reason);
        }
        for judgment in self.judged.iter().flatten() {
            if let (true, Some((decision, reason))) =
                (judgment.version == self.version, &judgment.decision)
            {
                combine(outcome, *decision, reason.clone());
            }
        }
    }

    /// The rewrites did not settle in [`MAX_PASSES`] passes: some guard has not judged the call
    /// as it stands, so it does not run.
    fn unsettled(&self, outcome: &mut Outcome) {
        let by = self
            .rewriter
            .map_or_else(|| "a hook".to_owned(), |h| format!("hook `{}`", h.name));
        block(
            outcome,
            format!(
                "the hooks' rewrites of this call did not settle: after {MAX_PASSES} passes {by} \
                 still changed it, so not every guard judged the call that would run (a \
                 rewriting hook must leave a call it already rewrote as it is)"
            ),
        );
    }
}

/// Folds one hook's `ask` or `allow` into the outcome: ask over allow, the first reason of each.
fn combine(outcome: &mut Outcome, decision: Decision, reason: Option<String>) {
    match decision {
        Decision::Ask if outcome.decision != Some(Decision::Ask) => {
            outcome.decision = Some(Decision::Ask);
            outcome.reason = reason;
        }
        Decision::Allow if outcome.decision.is_none() => {
            outcome.decision = Some(Decision::Allow);
            outcome.reason = reason;
        }
        _ => {}
    }
}

/// Apply a hook's rewrite of the arguments to the payload the next hooks see (and, through
/// `on_patch`, to the agent-shaped fields that restate them).
fn patch_arguments(
    hook: &Hook,
    patch: &InputPatch,
    payload: &mut Map<String, Value>,
    on_patch: Option<&PayloadMirror>,
    outcome: &mut Outcome,
) {
    let args = payload
        .entry("arguments")
        .or_insert_with(|| Value::Object(Map::new()));
    if !args.is_object() {
        *args = Value::Object(Map::new());
    }
    if let Value::Object(args) = args {
        patch.apply(args);
        if matches!(patch, InputPatch::Replace(_)) {
            outcome.diagnostics.push(format!(
                "hook `{}` replaced the whole input (Claude `updatedInput`)",
                hook.name
            ));
        }
    }
    if let Some(mirror) = on_patch {
        (mirror.0)(payload);
    }
}

/// What a pipeline hook's action decides besides a rewrite: its common keys, a decision, a
/// block, a halt.
fn apply_pipeline_action(hook: &Hook, action: &Action, outcome: &mut Outcome) {
    apply_common(action, outcome);
    if let Some(d) = action.decision {
        apply_decision(hook, d, action.reason.clone(), outcome);
    } else if action.reason.is_some() && outcome.reason.is_none() {
        outcome.diagnostics.push(format!(
            "hook `{}` gave a `reason` without a `decision`; kept for the record",
            hook.name
        ));
    }
    if let Some(reason) = action.block.clone() {
        block(outcome, non_empty(reason, hook));
    }
    if action.halt.is_some() && !outcome.blocked {
        // The halt's reason is for the user; the model learns only that the call (or prompt)
        // did not go ahead.
        block(
            outcome,
            format!("the turn was halted by hook `{}`", hook.name),
        );
    }
}
