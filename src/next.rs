//! What the agent does next, as one enum per kind of event that the host must match
//! ([`Outcome::next`]), and what it shows the user ([`Outcome::for_user`]).
//!
//! [`Next`] is complete: each variant carries what the agent must do and say (the arguments
//! to run, the reasons, the context for the model) and, in [`Always`], the permission mode to
//! switch to and the lines to show the user. A host that follows `next()` alone delivers every
//! item exactly once; the [`Outcome`]'s fields are the report of the dispatch (logs, `--json`),
//! not a second channel.
//!
//! These are the only rules that turn an [`Outcome`] into an action: the adapters
//! (`ka-hooks claude|codex|gemini`), `ka-hooks run`'s verdict and the audit log all derive theirs
//! from [`Outcome::next`]. The enums are deliberately not `#[non_exhaustive]`: a new way to end
//! a tool call must break a host's build, never fall into a `_ =>` arm that runs the call.

use serde_json::{Map, Value};

use crate::action::Decision;
use crate::config::OnError;
use crate::event::Event;
use crate::outcome::{Outcome, Status, UnknownTool};

/// What the agent does next, per kind of event. Match it exhaustively; do what [`Always`]
/// says too, whatever the variant.
#[derive(Debug, Clone, PartialEq)]
pub enum Next {
    /// `pre_tool_use` and `permission_request`: whether and how the tool call runs.
    ToolCall(Permission, Always),
    /// `user_prompt_submit`: whether the prompt reaches the model.
    Prompt(Prompt, Always),
    /// `post_tool_use` and `post_tool_use_failure`: what the model reads with the tool result.
    ToolResult(ToolResult, Always),
    /// `stop`, `subagent_stop`, `teammate_idle`, `task_completed`: whether the agent stops.
    Stop(Stop, Always),
    /// Every other event (session start and end, compaction, notifications, ...).
    Other(Other, Always),
}

/// What the host does after every dispatch, whatever it decided.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Always {
    /// Switch the permission mode to this (the last hook that set one wins; the host validates
    /// the name).
    pub mode: Option<String>,
    /// Show these lines to the user (see [`ForUser`]).
    pub for_user: ForUser,
    /// The call's tool name is not one of ka's: the host's bug to fix (another agent's spelling)
    /// or a tool of its own that only unfiltered hooks see. See [`UnknownTool`].
    pub unknown_tool: Option<UnknownTool>,
}

impl Next {
    /// The part of every variant the host always applies: the mode and the user's lines.
    pub fn always(&self) -> &Always {
        match self {
            Next::ToolCall(_, a)
            | Next::Prompt(_, a)
            | Next::ToolResult(_, a)
            | Next::Stop(_, a)
            | Next::Other(_, a) => a,
        }
    }
}

/// What happens to a tool call.
#[derive(Debug, Clone, PartialEq)]
pub enum Permission {
    /// Do not run it; `reason` goes to the model as the tool's result, `context` with it.
    Block {
        /// Why, for the model.
        reason: String,
        /// Text for the model's context, when a hook gave some.
        context: Option<String>,
    },
    /// Do not run it, and end the whole turn; `reason` is for the user (possibly empty). Tell
    /// the model only that the call did not run (the model reads nothing more this turn: a
    /// hook's context is dropped).
    Halt {
        /// Why, for the user.
        reason: String,
    },
    /// A human must approve the call before it runs with `arguments`; show them `reason`. The
    /// host's own permission rules cannot skip this question.
    Ask {
        /// Why a human must decide.
        reason: String,
        /// The arguments the call runs with once approved (rewritten by the hooks, or as sent).
        arguments: Map<String, Value>,
        /// Text for the model's context, when a hook gave some (whatever the human decides).
        context: Option<String>,
    },
    /// Run the call with `arguments`.
    Run {
        /// The arguments to run with: rewritten by the hooks, or as sent.
        arguments: Map<String, Value>,
        /// A hook pre-approved the call, and no guard failed: the host may skip its permission
        /// prompt (its own hardstops, protected paths and deny rules still apply). `false`: the
        /// host's normal permission flow decides.
        pre_approved: bool,
        /// Text for the model's context, when a hook gave some.
        context: Option<String>,
        /// A hook deferred the decision (Claude Code's `permissionDecision: "defer"`) and no
        /// hook decided: the host's own permission flow decides (a host that cannot ask a
        /// person pauses the call). Never set with `pre_approved`.
        deferred: bool,
        /// `permission_request`: the permission-rule updates the allowing hooks returned
        /// (Claude Code's `updatedPermissions`), distinct, in hook order: the host applies them
        /// with the approval. Empty otherwise.
        permission_updates: Vec<Value>,
    },
}

/// What happens to a prompt.
#[derive(Debug, Clone, PartialEq)]
pub enum Prompt {
    /// Do not send it to the model; show `reason` to the user.
    Block {
        /// Why, for the user.
        reason: String,
    },
    /// Do not send it, and end the turn; `reason` is for the user (possibly empty).
    Halt {
        /// Why, for the user.
        reason: String,
    },
    /// Send it, with `context` added to what the model reads.
    Submit {
        /// Text for the model's context, when a hook gave some.
        context: Option<String>,
    },
}

/// What the model reads with a tool result.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolResult {
    /// End the turn after this result; `reason` is for the user (possibly empty).
    Halt {
        /// Why, for the user.
        reason: String,
    },
    /// Mark the result as an error, with `feedback` appended to it and `context` added.
    Block {
        /// Text appended to the result, when a hook gave some.
        feedback: Option<String>,
        /// Text for the model's context, when a hook gave some.
        context: Option<String>,
    },
    /// Deliver the result, with `feedback` appended to it and `context` added.
    Feedback {
        /// Text appended to the result, when a hook gave some.
        feedback: Option<String>,
        /// Text for the model's context, when a hook gave some.
        context: Option<String>,
    },
}

/// Whether the agent stops.
#[derive(Debug, Clone, PartialEq)]
pub enum Stop {
    /// Stop, and end the turn; `reason` is for the user (possibly empty).
    Halt {
        /// Why, for the user.
        reason: String,
    },
    /// Do not stop: `reason` is the model's next input. The turn's `max_continuations` is
    /// already applied (past it, this is [`Stop::End`] and a note says so).
    KeepGoing {
        /// The model's next input.
        reason: String,
        /// Text for the model's context, with `reason`, when a hook gave some.
        context: Option<String>,
    },
    /// Stop as the agent meant to; `context` goes with the model's next input (the user's
    /// next prompt).
    End {
        /// Text for the model's context, when a hook gave some.
        context: Option<String>,
    },
}

/// Any other event.
#[derive(Debug, Clone, PartialEq)]
pub enum Other {
    /// End the turn; `reason` is for the user (possibly empty).
    Halt {
        /// Why, for the user.
        reason: String,
    },
    /// Go on, with `context` added to what the model reads (session start, for one).
    Continue {
        /// Text for the model's context, when a hook gave some.
        context: Option<String>,
    },
}

/// What to show the user after a dispatch, folded from the whole outcome.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ForUser {
    /// What weakened or skipped guards: announced weakenings (a file that does not load,
    /// `disable_all`, `KA_HOOKS_DISABLE`, an unreviewed edit that removed a guard) and layers
    /// the trust gate skipped (these at the first dispatch of each session on a loaded
    /// configuration). Show these on every dispatch they come with.
    pub guards: Vec<String>,
    /// Transcript notes, hooks' messages, hooks that failed, and objects a hook printed that
    /// were ignored whole, in that order.
    pub hooks: Vec<String>,
}

impl ForUser {
    /// Every line, guards first.
    pub fn lines(&self) -> impl Iterator<Item = &str> {
        self.guards.iter().chain(&self.hooks).map(String::as_str)
    }

    /// Nothing to show.
    pub fn is_empty(&self) -> bool {
        self.guards.is_empty() && self.hooks.is_empty()
    }
}

impl Outcome {
    /// What the agent does next. Match every variant: this is the one place the rules live
    /// (a block wins over an ask, an ask over an allow; a halt ends the turn; a failed guard
    /// never pre-approves; a cancelled guard blocks).
    ///
    /// ```compile_fail,E0004
    /// # fn host(outcome: &ka_hooks::Outcome) {
    /// use ka_hooks::next::{Next, Permission};
    /// match outcome.next() {
    ///     Next::ToolCall(Permission::Block { .. }, _) => {}
    ///     Next::ToolCall(Permission::Run { .. }, _) => {} // forgot Halt and Ask: does not compile
    ///     Next::Prompt(..) | Next::ToolResult(..) | Next::Stop(..) | Next::Other(..) => {}
    /// }
    /// # }
    /// ```
    pub fn next(&self) -> Next {
        let halt = self.halt.clone();
        let context = self.context.clone();
        let always = Always {
            mode: self.mode.clone(),
            for_user: self.for_user(),
            unknown_tool: self.unknown_tool.clone(),
        };
        match self.event.acts_as() {
            Event::PreToolUse => Next::ToolCall(self.permission(context), always),
            Event::UserPromptSubmit => Next::Prompt(
                match halt {
                    Some(reason) => Prompt::Halt { reason },
                    // A prompt has no ask: one that asks for a human fails closed.
                    None if self.blocked || self.decision == Some(Decision::Ask) => Prompt::Block {
                        reason: self.reason_or("blocked by a ka hook"),
                    },
                    None => Prompt::Submit { context },
                },
                always,
            ),
            Event::PostToolUse => Next::ToolResult(
                match halt {
                    Some(reason) => ToolResult::Halt { reason },
                    None if self.mark_error => ToolResult::Block {
                        feedback: self.feedback.clone(),
                        context,
                    },
                    None => ToolResult::Feedback {
                        feedback: self.feedback.clone(),
                        context,
                    },
                },
                always,
            ),
            Event::Stop => Next::Stop(
                match (halt, &self.keep_going) {
                    (Some(reason), _) => Stop::Halt { reason },
                    (None, Some(reason)) => Stop::KeepGoing {
                        reason: reason.clone(),
                        context,
                    },
                    (None, None) => Stop::End { context },
                },
                always,
            ),
            _ => Next::Other(
                match halt {
                    Some(reason) => Other::Halt { reason },
                    None => Other::Continue { context },
                },
                always,
            ),
        }
    }

    fn permission(&self, context: Option<String>) -> Permission {
        if let Some(reason) = &self.halt {
            return Permission::Halt {
                reason: reason.clone(),
            };
        }
        if self.blocked {
            return Permission::Block {
                reason: self.reason_or("blocked by a ka hook"),
                context,
            };
        }
        let arguments = self
            .updated_input
            .clone()
            .or_else(|| self.arguments.clone())
            .unwrap_or_default();
        match self.decision {
            Some(Decision::Ask) => Permission::Ask {
                reason: self.reason_or("a ka hook asks for a human"),
                arguments,
                context,
            },
            // A deny is always recorded as a block; read one here as a block all the same.
            Some(Decision::Deny) => Permission::Block {
                reason: self.reason_or("denied by a ka hook"),
                context,
            },
            decision => {
                let pre_approved = decision == Some(Decision::Allow) && !self.any_hook_failed();
                Permission::Run {
                    arguments,
                    pre_approved,
                    context,
                    deferred: self.deferred && !pre_approved,
                    permission_updates: if pre_approved {
                        self.permission_updates.clone()
                    } else {
                        Vec::new()
                    },
                }
            }
        }
    }

    fn reason_or(&self, default: &str) -> String {
        self.reason.clone().unwrap_or_else(|| default.to_owned())
    }

    /// What to show the user: see [`ForUser`]. A hook's failure that already is the block's
    /// reason (`on_error = "block"`) is not repeated.
    pub fn for_user(&self) -> ForUser {
        let mut guards: Vec<String> = self
            .announcements
            .iter()
            .map(|a| format!("ka-hooks: {a}"))
            .collect();
        if !self.untrusted_told {
            guards.extend(self.untrusted.iter().map(ToString::to_string));
        }
        let mut hooks: Vec<String> = self.notes.clone();
        hooks.extend(self.messages.iter().cloned());
        let said_in_reason = |on_error| self.blocked && on_error == OnError::Block;
        hooks.extend(
            self.hooks
                .iter()
                .filter(|h| h.status == Status::Error && !said_in_reason(h.on_error))
                .map(|h| {
                    let error = h.error.clone().unwrap_or_else(|| "error".to_owned());
                    format!(
                        "hook `{}` failed ({}); on_error = \"{}\"",
                        h.name,
                        crate::judge::explain_failure(error, h.exit_code, &h.stderr),
                        h.on_error.as_str()
                    )
                }),
        );
        hooks.extend(
            self.diagnostics
                .iter()
                .filter(|d| d.contains("the whole object was ignored"))
                .cloned(),
        );
        ForUser { guards, hooks }
    }
}
