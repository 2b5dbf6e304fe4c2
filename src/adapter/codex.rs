//! `ka-hooks codex`: Codex CLI's hook contract, Claude Code's with less room: no `ask`, `allow`
//! only with a rewrite, no unknown keys. Codex's file edits are `apply_patch` calls, shown to the
//! hooks as ka's `write`, `edit` or `apply_patch`, and a rewrite is written back into the patch.
//! docs/adapters.md says what becomes of each verdict.

use std::path::Path;

use serde_json::{Map, Value};

use super::claude::{self, row, Dialect};
use super::table::{AgentAdapter, Import, Install};
use super::{
    fail_open_with_system_message, plain, tools, Agent, Answer, Call, EventRow, Flavour, Rejected,
    Verdict,
};
use crate::config::touched::{patch_files, PatchOp};
use crate::event::Event;
use crate::outcome::HookReport;

/// Codex CLI's entry of the adapter table.
#[derive(Debug, Clone, Copy)]
pub struct Codex;

impl AgentAdapter for Codex {
    fn command(&self) -> &'static str {
        "codex"
    }
    fn display(&self) -> &'static str {
        "Codex CLI"
    }
    fn events(&self) -> &'static [EventRow] {
        EVENTS
    }
    fn observed(&self) -> &'static [(&'static str, &'static str)] {
        OBSERVED
    }
    /// Codex names none (`codex-rs/hooks`: a command hook gets the config's `env` only); it runs
    /// hooks in the session's working directory, which is also its payload's `cwd`, and a `cd`
    /// in a shell command does not change it.
    fn project_dir_vars(&self) -> &'static [&'static str] {
        &[]
    }
    fn also_run_by(&self) -> Option<(&'static [&'static str], Agent)> {
        None
    }
    fn markers(&self) -> &'static [&'static str] {
        &["CODEX_SANDBOX", "CODEX_SANDBOX_NETWORK_DISABLED"]
    }
    /// Codex copies Claude Code's payload.
    fn reshape(&self, _: &mut Map<String, Value>, _: Option<&str>) -> Result<(), Rejected> {
        Ok(())
    }
    fn tool_names(&self, _: &Map<String, Value>, _: &str) -> Agent {
        Agent::Codex
    }
    fn own_tool(
        &self,
        tool: &str,
        input: &Map<String, Value>,
        cwd: Option<&Path>,
    ) -> Option<super::table::OwnTool> {
        read_patch(tool, input, cwd).map(|(tool, args, patch)| (tool, args, Some(patch)))
    }
    fn result(&self, payload: &Map<String, Value>) -> (Value, bool) {
        claude::result(payload)
    }
    fn stdout_is_context(&self, event: Event) -> bool {
        plain::claude_stdout_is_context(event)
    }
    fn user_texts(&self, _: Event, _: &[HookReport]) -> Vec<String> {
        Vec::new()
    }
    fn compaction_blocked(&self, _: Event, _: &[HookReport]) -> Option<String> {
        None
    }
    fn answer(&self, call: &Call, verdict: Verdict) -> Answer {
        answer(call, verdict)
    }
    fn block(&self, why: &str) -> Answer {
        Answer::exit_two(why)
    }
    fn fail_open(&self, _: Option<Event>, message: &str) -> Answer {
        fail_open_with_system_message(message)
    }
    fn install(&self) -> Install {
        Install::ByHand {
            file: "~/.codex/hooks.json",
            timeout_unit: 1,
            note: "Then approve them in Codex itself: run `codex` in the project, open `/hooks`, \
                   and trust each `ka-hooks codex` entry (until a person does, `codex exec` runs \
                   none of them and says nothing; `ka-hooks doctor` shows whether it is done). ",
        }
    }
    fn import(&self) -> Import {
        Import::Unsupported("Codex's hooks are not read")
    }
}

/// Codex's events that run ka events: every key of its `HookEventsToml` (`codex-rs/config`:
/// PreToolUse, PermissionRequest, PostToolUse, PreCompact, PostCompact, SessionStart,
/// SessionEnd, UserPromptSubmit, SubagentStart, SubagentStop, Stop, Interrupt) and
/// `StopFailure` (`codex-rs/hooks/schema/generated/stop-failure.command.*.json`).
pub const EVENTS: &[EventRow] = &[
    row("PreToolUse", Event::PreToolUse, Flavour::Plain),
    row(
        "PermissionRequest",
        Event::PermissionRequest,
        Flavour::Plain,
    ),
    row("PostToolUse", Event::PostToolUse, Flavour::Plain),
    row("UserPromptSubmit", Event::UserPromptSubmit, Flavour::Plain),
    row("Stop", Event::Stop, Flavour::Plain),
    row("StopFailure", Event::Stop, Flavour::StopError),
    row("SessionStart", Event::SessionStart, Flavour::Plain),
    row("SessionEnd", Event::SessionEnd, Flavour::Plain),
    row("PreCompact", Event::PreCompact, Flavour::Plain),
    row("PostCompact", Event::PostCompact, Flavour::Plain),
    row("SubagentStart", Event::SubagentStart, Flavour::Plain),
    row("SubagentStop", Event::SubagentStop, Flavour::Plain),
    row("Interrupt", Event::Interrupt, Flavour::Plain),
];

/// Codex's events with no ka event of their own, which run `observe`: the source-only events
/// of `codex-rs/hooks/src/events/` (`model.rs`: PreModelRequest, PostModelResponse;
/// `user_instructions.rs`: UserInstructions).
pub const OBSERVED: &[(&str, &str)] = &[
    (
        "PreModelRequest",
        "ka has no model-request events: the hook would see Codex's raw model request",
    ),
    (
        "PostModelResponse",
        "ka has no model-request events: the hook would see Codex's raw model response",
    ),
    (
        "UserInstructions",
        "its stdout becomes the thread's user instructions; ka hooks have no such contract",
    ),
];

/// The answer in Codex's contract.
pub fn answer(call: &Call, mut verdict: Verdict) -> Answer {
    if call.event == Event::PreToolUse {
        if let Some(halt) = verdict.halt.take() {
            // Codex 0.171 rejects `continue: false` on PreToolUse ("unsupported") and then runs
            // the call: the halt is sent as a plain deny, and said to the user.
            verdict.messages.push(format!(
                "a ka hook halted the turn ({halt}); Codex cannot end a turn from a PreToolUse \
                 hook, so ka-hooks denied the call"
            ));
        }
        verdict.ask_becomes_block(Agent::Codex);
        if verdict.input.is_none() {
            verdict.allow_is_unsupported(Agent::Codex);
        } else if verdict.block.is_none() && !verdict.failed.is_empty() {
            // Codex takes a rewrite only with `allow`, which skips its approval; a failed guard
            // must not let that happen, and running the original input would undo the rewrite.
            // A guard judged again after a rewrite reports each of its runs: name it once.
            let mut failed: Vec<String> = Vec::new();
            for name in &verdict.failed {
                let shown = format!("`{}`", crate::terminal::escape(name));
                if !failed.contains(&shown) {
                    failed.push(shown);
                }
            }
            verdict.block = Some(format!(
                "a ka hook rewrote this call's input, but guard {} failed; Codex applies a \
                 rewrite only with `permissionDecision: \"allow\"`, which skips its approval, \
                 and a failed guard must not give that, so the call is blocked rather than \
                 pre-approved or run as the model wrote it",
                failed.join(", ")
            ));
            verdict.input = None;
            verdict.decision = None;
        } else if verdict.decision.is_none() && verdict.block.is_none() {
            verdict.messages.push(
                "a ka hook rewrote this call's input; Codex applies a hook's rewrite only with \
                 `permissionDecision: \"allow\"`, so ka-hooks sent it with one"
                    .into(),
            );
        }
    }
    claude::answer_as(call, verdict, Dialect::Codex)
}

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File: ";
const UPDATE: &str = "*** Update File: ";

/// An `apply_patch` call, as the hooks see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Patch {
    shape: Shape,
    /// The patch text, as received.
    text: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Shape {
    /// Only `*** Add File: <header>`: ka's `write`.
    Add { header: String },
    /// Only `*** Update File: <header>`, no move: ka's `edit`.
    Update { header: String },
    /// Anything else: ka's `apply_patch`.
    Other,
}

/// Reads Codex's `apply_patch` call as ka's `write`, `edit` or `apply_patch`; `None` for any
/// other tool (or an `apply_patch` without a patch string).
pub(super) fn read_patch(
    tool: &str,
    input: &Map<String, Value>,
    cwd: Option<&Path>,
) -> Option<(String, Map<String, Value>, Patch)> {
    if tool != "apply_patch" {
        return None;
    }
    let text = input.get("command")?.as_str()?.to_owned();
    let mut adds = Vec::new();
    let mut updates = Vec::new();
    let mut others = Vec::new();
    let mut moved = false;
    // The headers as the library reads them for every host (`config::touched`), so this shape
    // and every path guard agree on the files.
    for (op, path) in patch_files(&text) {
        match op {
            PatchOp::Add => adds.push(path.to_owned()),
            PatchOp::Update => updates.push(path.to_owned()),
            PatchOp::Delete => others.push(path.to_owned()),
            PatchOp::MoveTo => {
                moved = true;
                others.push(path.to_owned());
            }
        }
    }
    let mut content = String::new();
    for added in text.lines().filter_map(|line| line.strip_prefix('+')) {
        content.push_str(added);
        content.push('\n');
    }
    let absolute = |p: &str| -> Value {
        let path = Path::new(p);
        Value::String(match cwd {
            Some(cwd) if path.is_relative() => cwd.join(path).to_string_lossy().into_owned(),
            _ => p.to_owned(),
        })
    };
    let mut args = Map::new();
    let (ka_name, shape) = match (adds.as_slice(), updates.as_slice(), others.is_empty()) {
        ([header], [], true) => {
            args.insert("path".into(), absolute(header));
            args.insert("content".into(), Value::String(content));
            (
                "write",
                Shape::Add {
                    header: header.clone(),
                },
            )
        }
        ([], [header], true) if !moved => {
            args.insert("path".into(), absolute(header));
            args.insert("patch".into(), Value::String(text.clone()));
            (
                "edit",
                Shape::Update {
                    header: header.clone(),
                },
            )
        }
        _ => {
            args = tools::args_to_ka(Agent::Codex, tool, input);
            let paths = adds
                .iter()
                .chain(&updates)
                .chain(&others)
                .map(|p| absolute(p))
                .collect();
            args.insert("paths".into(), Value::Array(paths));
            ("apply_patch", Shape::Other)
        }
    };
    Some((ka_name.to_owned(), args, Patch { shape, text }))
}

impl Patch {
    /// Codex's `tool_input` for the arguments the hooks left (`after`), given what they were
    /// shown (`before`); `Err` when the patch cannot carry the rewrite.
    pub(super) fn rebuild(
        &self,
        original: &Map<String, Value>,
        before: &Map<String, Value>,
        after: &Map<String, Value>,
    ) -> Result<Map<String, Value>, String> {
        let changed = |key: &str| before.get(key) != after.get(key);
        let known: &[&str] = match self.shape {
            Shape::Add { .. } => &["path", "content"],
            Shape::Update { .. } => &["path", "patch"],
            Shape::Other => &["patch", "paths"],
        };
        let keys = before.keys().chain(after.keys());
        if let Some(key) = keys
            .filter(|k| !known.contains(&k.as_str()))
            .find(|k| changed(k))
        {
            return Err(format!("Codex's apply_patch has no argument `{key}`"));
        }
        let text_of = |key: &str| -> Result<Option<&str>, String> {
            match after.get(key) {
                Some(Value::String(s)) => Ok(Some(s)),
                None | Some(Value::Null) => Ok(None),
                Some(_) => Err(format!("`{key}` must be a string")),
            }
        };
        let header = |key: &str, original: &str| -> Result<String, String> {
            if changed(key) {
                Ok(text_of(key)?.ok_or("a patch needs a `path`")?.to_owned())
            } else {
                Ok(original.to_owned())
            }
        };
        let patch = match &self.shape {
            Shape::Add { header: original } => {
                let path = header("path", original)?;
                let content = text_of("content")?.unwrap_or("");
                let mut patch = format!("{BEGIN}\n{ADD}{path}\n");
                for line in content.lines() {
                    patch.push('+');
                    patch.push_str(line);
                    patch.push('\n');
                }
                patch.push_str(END);
                patch.push('\n');
                patch
            }
            Shape::Update { header: original } => {
                if changed("path") && changed("patch") {
                    return Err("both `path` and `patch` were rewritten".into());
                }
                let path = header("path", original)?;
                let text = text_of("patch")?.unwrap_or(&self.text);
                text.lines()
                    .map(|line| match line.trim().strip_prefix(UPDATE) {
                        Some(_) if changed("path") => format!("{UPDATE}{path}\n"),
                        _ => format!("{line}\n"),
                    })
                    .collect()
            }
            Shape::Other => {
                if changed("paths") {
                    return Err("`paths` is read from the patch; rewrite `patch` instead".into());
                }
                text_of("patch")?.unwrap_or(&self.text).to_owned()
            }
        };
        let mut input = original.clone();
        input.insert("command".into(), Value::String(patch));
        Ok(input)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn input(patch: &str) -> Map<String, Value> {
        json!({ "command": patch })
            .as_object()
            .cloned()
            .unwrap_or_default()
    }

    #[test]
    fn single_add_is_a_write_with_absolute_path() {
        let patch = "*** Begin Patch\n*** Add File: README.md\n+hello\n+world\n*** End Patch\n";
        let (tool, args, _) =
            read_patch("apply_patch", &input(patch), Some(Path::new("/repo"))).expect("a patch");
        assert_eq!(tool, "write");
        assert_eq!(args["path"], "/repo/README.md");
        assert_eq!(args["content"], "hello\nworld\n");
    }

    #[test]
    fn rewritten_content_goes_back_into_the_patch() {
        let patch = "*** Begin Patch\n*** Add File: a.txt\n+secret\n*** End Patch\n";
        let original = input(patch);
        let (_, before, shape) = read_patch("apply_patch", &original, None).expect("a patch");
        let mut after = before.clone();
        after.insert("content".into(), "[REDACTED]\n".into());
        let input = shape.rebuild(&original, &before, &after).expect("rebuilt");
        assert_eq!(
            input["command"],
            "*** Begin Patch\n*** Add File: a.txt\n+[REDACTED]\n*** End Patch\n"
        );
    }

    #[test]
    fn multi_file_patch_is_apply_patch_with_paths() {
        let patch = "*** Begin Patch\n*** Add File: a\n+x\n*** Delete File: b\n*** End Patch";
        let (tool, args, shape) =
            read_patch("apply_patch", &input(patch), Some(Path::new("/r"))).expect("a patch");
        assert_eq!(tool, "apply_patch");
        assert_eq!(args["paths"], json!(["/r/a", "/r/b"]));
        assert_eq!(args["patch"], patch);
        let mut after = args.clone();
        after.insert("paths".into(), json!(["/elsewhere"]));
        assert!(shape.rebuild(&input(patch), &args, &after).is_err());
    }

    #[test]
    fn update_path_rewrite_changes_the_header_only() {
        let patch = "*** Begin Patch\n*** Update File: src/a.rs\n@@\n-a\n+b\n*** End Patch\n";
        let original = input(patch);
        let (tool, before, shape) = read_patch("apply_patch", &original, None).expect("a patch");
        assert_eq!(tool, "edit");
        let mut after = before.clone();
        after.insert("path".into(), "src/b.rs".into());
        let input = shape.rebuild(&original, &before, &after).expect("rebuilt");
        assert_eq!(
            input["command"],
            "*** Begin Patch\n*** Update File: src/b.rs\n@@\n-a\n+b\n*** End Patch\n"
        );
    }
}
