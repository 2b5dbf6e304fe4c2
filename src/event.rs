//! The hook events, their canonical names, the aliases accepted in `ka.toml`, and what each one
//! means, as data ([`Event::info`]) so `ka-hooks events` and the docs can print it. An agent's
//! event ka has no event for runs [`Event::Observe`], so an agent's hook is never failed because
//! ka does not know its event.

use std::fmt;
use std::str::FromStr;

/// A fixed point in the agent's life at which hooks run.
///
/// Declaration order is the order `ka-hooks list` and error messages use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Event {
    /// Before a tool call: hooks may block, rewrite, ask or pre-approve it.
    PreToolUse,
    /// After a tool call succeeded: hooks may add feedback or mark the result as an error.
    PostToolUse,
    /// The agent is about to stop: hooks may keep it going.
    Stop,
    /// A session starts (or resumes, or is cleared).
    SessionStart,
    /// A session ends.
    SessionEnd,
    /// The user submitted a prompt: hooks may block it or add context.
    UserPromptSubmit,
    /// Before the context is compacted.
    PreCompact,
    /// After a tool call failed.
    PostToolUseFailure,
    /// A permission prompt is about to be shown: hooks may decide it.
    PermissionRequest,
    /// The user or the host denied a permission.
    PermissionDenied,
    /// The agent sends the user a notification.
    Notification,
    /// A subagent starts.
    SubagentStart,
    /// A subagent is about to stop: hooks may keep it going.
    SubagentStop,
    /// After the context was compacted.
    PostCompact,
    /// Once, when the project is set up.
    Setup,
    /// A teammate is about to go idle: hooks may keep it going.
    TeammateIdle,
    /// A task is about to be marked completed: hooks may keep it going.
    TaskCompleted,
    /// The user interrupted the turn.
    Interrupt,
    /// A file of instructions (CLAUDE.md, a rules file) was loaded into the model's context.
    InstructionsLoaded,
    /// Any other event of an agent ka has no event for (its name is the payload's
    /// `agent_event`): matching hooks run, and nothing they say changes what the agent does.
    Observe,
}

/// What one event means, as data: `ka-hooks events` prints it, the README tables follow it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventInfo {
    /// When the host fires it.
    pub when: &'static str,
    /// Payload fields beyond `event` and `cwd`: `(name, meaning)`.
    pub payload: &'static [(&'static str, &'static str)],
    /// What a hook's exit 2 means.
    pub exit_two: &'static str,
    /// The action keys that mean something on it (beyond `note`, `message` and `halt`, which
    /// every event takes).
    pub actions: &'static [&'static str],
    /// The payload field `matcher` is matched against, if the event takes a matcher.
    pub matcher: Option<&'static str>,
}

/// What a hook's exit 2 does on an event, as data: the one answer `events`, `doctor`, `check`,
/// the dispatcher and the adapters read (the text is [`EventInfo::exit_two`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitTwo {
    /// The call, prompt or permission is refused (pipeline events).
    Veto,
    /// The tool's result is marked as an error and stderr appended to it (`post_tool_use`).
    MarkError,
    /// Stderr is appended to the error the model reads (`post_tool_use_failure`).
    Feedback,
    /// The agent keeps going: stderr is its next input, capped by `max_continuations`
    /// (Claude Code hooks reference, "Exit code 2 behavior": Stop "prevents stopping").
    KeepGoing,
    /// Recorded, no effect.
    Advisory,
}

impl ExitTwo {
    /// True when exit 2 is a legitimate answer on the event (anything but advisory).
    pub const fn is_meaningful(self) -> bool {
        !matches!(self, ExitTwo::Advisory)
    }
}

/// Action keys every event takes.
pub const COMMON_ACTIONS: &[&str] = &["note", "halt", "mode"];

const TOOL_FIELDS: &[(&str, &str)] = &[
    ("tool", "the tool's ka name (`bash`, `write`, ...)"),
    ("arguments", "the tool's arguments, in ka's names"),
];
const STOP_FIELDS: &[(&str, &str)] = &[
    ("stop", "`done` | `aborted` | `error`"),
    (
        "stop_hook_active",
        "true when this turn already continued because of a stop hook",
    ),
    (
        "continuations",
        "how many times this turn continued because of a stop hook",
    ),
];
const KEEP_GOING: &str =
    "keep going: stderr becomes the model's next input (capped by `max_continuations`)";
const ADVISORY: &str = "advisory: recorded, no effect";

/// What each event means, one row per event in declaration order (checked below), so
/// [`Event::info`] reads an event's row by its discriminant.
const INFO: [(Event, EventInfo); Event::ALL.len()] = [
    (
        Event::PreToolUse,
        row(
            "before a tool call runs",
            TOOL_FIELDS,
            "block the call; stderr is the reason shown to the model",
            &["decision", "reason", "updated_input", "context"],
            Some("tool"),
        ),
    ),
    (
        Event::PostToolUse,
        row(
            "after a tool call ran",
            &[
                ("tool", "the tool's ka name"),
                ("arguments", "the arguments that ran"),
                ("result", "the tool's result"),
                ("is_error", "whether the call failed"),
            ],
            "mark the result as an error; stderr is appended to it",
            &["feedback", "context"],
            Some("tool"),
        ),
    ),
    (
        Event::Stop,
        row(
            "the agent finished its turn and is about to wait for the user",
            STOP_FIELDS,
            KEEP_GOING,
            &["keep_going", "context"],
            Some("stop"),
        ),
    ),
    (
        Event::SessionStart,
        row(
            "a session starts, resumes, is cleared or compacted",
            &[("source", "`startup` | `resume` | `clear` | `compact`")],
            ADVISORY,
            &["context"],
            Some("source"),
        ),
    ),
    (
        Event::SessionEnd,
        row(
            "a session ends",
            &[(
                "reason",
                "`clear` | `logout` | `prompt_input_exit` | `exit` | `other`",
            )],
            ADVISORY,
            &[],
            Some("reason"),
        ),
    ),
    (
        Event::UserPromptSubmit,
        row(
            "the user submitted a prompt, before the model sees it",
            &[("prompt", "the prompt's text")],
            "block the prompt; stderr is shown to the user",
            &["context"],
            None,
        ),
    ),
    (
        Event::PreCompact,
        row(
            "before the conversation is compacted",
            &[
                ("trigger", "`manual` | `auto`"),
                ("focus", "the user's compaction instructions, if any"),
            ],
            "advisory: cannot stop the compaction (under Claude Code it does: see the adapters)",
            &[],
            Some("trigger"),
        ),
    ),
    (
        Event::PostToolUseFailure,
        row(
            "after a tool call failed; `post_tool_use` hooks run first, with `is_error: true`",
            &[
                ("tool", "the tool's ka name"),
                ("arguments", "the arguments that ran"),
                ("result", "the error"),
                ("is_error", "always true"),
            ],
            "stderr is appended to the error the model reads",
            &["feedback", "context"],
            Some("tool"),
        ),
    ),
    (
        Event::PermissionRequest,
        row(
            "the agent is about to ask the user to approve a tool call",
            TOOL_FIELDS,
            "deny the permission; stderr is the reason shown to the model",
            &["decision", "reason", "updated_input"],
            Some("tool"),
        ),
    ),
    (
        Event::PermissionDenied,
        row(
            "the agent's own permission rules denied a tool call",
            TOOL_FIELDS,
            ADVISORY,
            &[],
            Some("tool"),
        ),
    ),
    (
        Event::Notification,
        row(
            "the agent shows the user a notification (waiting for input, a permission prompt)",
            &[
                ("message", "the notification's text"),
                (
                    "notification_type",
                    "`permission_prompt` | `idle_prompt` | ... (agent-specific)",
                ),
            ],
            ADVISORY,
            &[],
            Some("notification_type"),
        ),
    ),
    (
        Event::SubagentStart,
        row(
            "a subagent starts",
            &[
                ("agent_id", "the subagent's id"),
                ("agent_type", "its type"),
            ],
            ADVISORY,
            &["context"],
            Some("agent_type"),
        ),
    ),
    (
        Event::SubagentStop,
        row(
            "a subagent finished and is about to return to the main agent",
            &[
                ("agent_id", "the subagent's id"),
                ("agent_type", "its type"),
                ("stop_hook_active", "as on stop"),
                ("continuations", "as on stop"),
            ],
            KEEP_GOING,
            &["keep_going"],
            Some("agent_type"),
        ),
    ),
    (
        Event::PostCompact,
        row(
            "after the conversation was compacted",
            &[("trigger", "`manual` | `auto`")],
            ADVISORY,
            &[],
            Some("trigger"),
        ),
    ),
    (
        Event::Setup,
        row(
            "the agent is set up for a repository (Claude Code `--init`, `--maintenance`)",
            &[("trigger", "`init` | `maintenance`")],
            ADVISORY,
            &[],
            Some("trigger"),
        ),
    ),
    (
        Event::TeammateIdle,
        row(
            "an agent-team teammate is about to go idle",
            &[("teammate_name", "the teammate"), ("team_name", "its team")],
            "keep the teammate working: stderr is its next instruction (capped)",
            &["keep_going"],
            None,
        ),
    ),
    (
        Event::TaskCompleted,
        row(
            "a task is about to be marked completed",
            &[("task_id", "the task"), ("task_subject", "its title")],
            "do not mark the task completed: stderr is the model's next input (capped)",
            &["keep_going"],
            None,
        ),
    ),
    (
        Event::Interrupt,
        row(
            "the user interrupted the turn (Codex CLI)",
            &[],
            ADVISORY,
            &[],
            None,
        ),
    ),
    // Claude Code hooks reference, "InstructionsLoaded": fires when a CLAUDE.md or
    // `.claude/rules/*.md` file is loaded into context; "exit code ignored", no decision.
    (
        Event::InstructionsLoaded,
        row(
            "an instructions file (CLAUDE.md, a rules file) was loaded into the model's \
             context (Claude Code)",
            &[
                ("file_path", "the file that was loaded"),
                (
                    "load_reason",
                    "`session_start` | `nested_traversal` | `path_glob_match` | `include` | \
                     `compact`",
                ),
                ("memory_type", "`User` | `Project` | `Local` | `Managed`"),
            ],
            ADVISORY,
            &[],
            Some("load_reason"),
        ),
    ),
    (
        Event::Observe,
        row(
            "an agent sent an event ka has no event for (Gemini's BeforeModel, Claude Code's \
             ConfigChange, Codex's PreModelRequest, ...): its hooks run, the adapter answers \
             nothing for them",
            &[(
                "agent_event",
                "the agent's name of the event (`BeforeModel`, `ConfigChange`, ...)",
            )],
            ADVISORY,
            &[],
            Some("agent_event"),
        ),
    ),
];

// Every row of INFO is its own event's.
const _: () = {
    let mut i = 0;
    while i < INFO.len() {
        assert!(
            INFO[i].0 as usize == i,
            "INFO's rows are not in declaration order"
        );
        i += 1;
    }
};

/// One row of [`INFO`].
const fn row(
    when: &'static str,
    payload: &'static [(&'static str, &'static str)],
    exit_two: &'static str,
    actions: &'static [&'static str],
    matcher: Option<&'static str>,
) -> EventInfo {
    EventInfo {
        when,
        payload,
        exit_two,
        actions,
        matcher,
    }
}

impl Event {
    /// Every event, in declaration order.
    pub const ALL: [Event; 20] = [
        Event::PreToolUse,
        Event::PostToolUse,
        Event::Stop,
        Event::SessionStart,
        Event::SessionEnd,
        Event::UserPromptSubmit,
        Event::PreCompact,
        Event::PostToolUseFailure,
        Event::PermissionRequest,
        Event::PermissionDenied,
        Event::Notification,
        Event::SubagentStart,
        Event::SubagentStop,
        Event::PostCompact,
        Event::Setup,
        Event::TeammateIdle,
        Event::TaskCompleted,
        Event::Interrupt,
        Event::InstructionsLoaded,
        Event::Observe,
    ];

    /// The canonical (snake_case) name, as written in payloads and `ka.toml`.
    pub const fn as_str(self) -> &'static str {
        self.names()[0]
    }

    /// The agents' spelling of the event (`PreToolUse`, `Stop`, `Interrupt`, ...): Claude
    /// Code's, or Codex's for the one event only Codex has.
    pub const fn claude_name(self) -> &'static str {
        self.names()[1]
    }

    /// Events that concern one tool call; only these take a `tool` filter, `paths` and `if`.
    pub const fn is_tool_event(self) -> bool {
        matches!(
            self,
            Event::PreToolUse
                | Event::PostToolUse
                | Event::PostToolUseFailure
                | Event::PermissionRequest
                | Event::PermissionDenied
        )
    }

    /// Events whose hooks run one after another, each seeing what the previous ones
    /// decided (a guard must judge the arguments that will really run).
    pub const fn is_pipeline(self) -> bool {
        matches!(
            self,
            Event::PreToolUse | Event::UserPromptSubmit | Event::PermissionRequest
        )
    }

    /// Events at which the agent is about to stop working, where a hook can ask it to keep
    /// going (exit 2, `keep_going`, Claude's `decision: "block"`).
    pub const fn can_keep_going(self) -> bool {
        matches!(
            self,
            Event::Stop | Event::SubagentStop | Event::TeammateIdle | Event::TaskCompleted
        )
    }

    /// The event whose action keys this one reads: `post_tool_use_failure` reads its actions as
    /// `post_tool_use` does, `permission_request` as `pre_tool_use`, the other "about to stop"
    /// events as `stop`.
    pub const fn acts_as(self) -> Event {
        match self {
            Event::PostToolUseFailure => Event::PostToolUse,
            Event::PermissionRequest => Event::PreToolUse,
            Event::SubagentStop | Event::TeammateIdle | Event::TaskCompleted => Event::Stop,
            other => other,
        }
    }

    /// What exit 2 does on this event; [`EventInfo::exit_two`] says it in words.
    pub const fn exit_two(self) -> ExitTwo {
        if self.is_pipeline() {
            return ExitTwo::Veto;
        }
        match self {
            Event::PostToolUse => ExitTwo::MarkError,
            Event::PostToolUseFailure => ExitTwo::Feedback,
            _ if self.can_keep_going() => ExitTwo::KeepGoing,
            _ => ExitTwo::Advisory,
        }
    }

    /// The payload field a `matcher` is matched against: the tool on tool events, the source
    /// of a session start, the trigger of a compaction, the type of a notification or subagent
    /// (Claude Code's matchers; hooks reference, "Matcher patterns").
    pub const fn matcher_field(self) -> Option<&'static str> {
        self.info().matcher
    }

    /// Every name accepted for this event: canonical, the agents' spelling, extra aliases.
    const fn names(self) -> &'static [&'static str] {
        match self {
            Event::PreToolUse => &["pre_tool_use", "PreToolUse", "BeforeTool"],
            Event::PostToolUse => &["post_tool_use", "PostToolUse", "AfterTool"],
            Event::Stop => &["stop", "Stop", "turn_end", "AfterAgent"],
            Event::SessionStart => &["session_start", "SessionStart"],
            Event::SessionEnd => &["session_end", "SessionEnd"],
            Event::UserPromptSubmit => &["user_prompt_submit", "UserPromptSubmit", "BeforeAgent"],
            Event::PreCompact => &["pre_compact", "PreCompact", "PreCompress"],
            Event::PostToolUseFailure => &["post_tool_use_failure", "PostToolUseFailure"],
            Event::PermissionRequest => &["permission_request", "PermissionRequest"],
            Event::PermissionDenied => &["permission_denied", "PermissionDenied"],
            Event::Notification => &["notification", "Notification"],
            Event::SubagentStart => &["subagent_start", "SubagentStart"],
            Event::SubagentStop => &["subagent_stop", "SubagentStop"],
            Event::PostCompact => &["post_compact", "PostCompact"],
            Event::Setup => &["setup", "Setup"],
            Event::TeammateIdle => &["teammate_idle", "TeammateIdle"],
            Event::TaskCompleted => &["task_completed", "TaskCompleted"],
            Event::Interrupt => &["interrupt", "Interrupt"],
            Event::InstructionsLoaded => &["instructions_loaded", "InstructionsLoaded"],
            Event::Observe => &["observe", "Observe"],
        }
    }

    /// Every accepted name other than the canonical one (agent spellings and `turn_end`).
    pub fn aliases(self) -> &'static [&'static str] {
        &self.names()[1..]
    }

    /// What the event means: when it fires, its payload, exit 2, its action keys.
    pub const fn info(self) -> EventInfo {
        INFO[self as usize].1
    }

    /// The canonical names joined for messages: `pre_tool_use, post_tool_use, ...`.
    pub fn valid_names() -> String {
        let mut names: Vec<&str> = Event::ALL.iter().map(|e| e.as_str()).collect();
        names.push("turn_end");
        names.join(", ")
    }
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is not an event; carries the closest valid name, if any is close.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownEvent {
    /// The name as given.
    pub given: String,
    /// The closest event name, when one is close.
    pub suggestion: Option<&'static str>,
}

impl fmt::Display for UnknownEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown event `{}`", self.given)?;
        if let Some(s) = self.suggestion {
            write!(f, " (did you mean `{s}`?)")?;
        }
        write!(f, "; valid events: {}", Event::valid_names())
    }
}

impl std::error::Error for UnknownEvent {}

impl FromStr for Event {
    type Err = UnknownEvent;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        for event in Event::ALL {
            if event.names().contains(&s) {
                return Ok(event);
            }
        }
        Err(UnknownEvent {
            given: s.to_owned(),
            suggestion: closest_name(s),
        })
    }
}

/// The canonical name closest to `given`, compared case- and separator-insensitively
/// (`PreToolUse`, `pre-tool-use` and `pretooluse` are all near `pre_tool_use`).
fn closest_name(given: &str) -> Option<&'static str> {
    let squash = |s: &str| -> String {
        s.chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .map(|c| c.to_ascii_lowercase())
            .collect()
    };
    let given = squash(given);
    let mut best: Option<(usize, &'static str)> = None;
    for event in Event::ALL {
        for name in event.names() {
            let d = edit_distance(&given, &squash(name));
            if best.is_none_or(|(bd, _)| d < bd) {
                best = Some((d, event.as_str()));
            }
        }
    }
    // Only suggest when the typo is small relative to the name.
    best.filter(|&(d, name)| d <= 3.max(name.len() / 3))
        .map(|(_, name)| name)
}

/// Levenshtein distance over chars, with two reused rows (it runs for every unknown key a
/// hook prints, so it should not allocate per character).
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut row = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            row[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(row[j] + 1);
        }
        std::mem::swap(&mut prev, &mut row);
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_claude_and_turn_end_names_parse() {
        assert_eq!("pre_tool_use".parse(), Ok(Event::PreToolUse));
        assert_eq!("PreToolUse".parse(), Ok(Event::PreToolUse));
        assert_eq!("turn_end".parse(), Ok(Event::Stop));
        assert_eq!("Stop".parse(), Ok(Event::Stop));
        for e in Event::ALL {
            assert_eq!(e.as_str().parse(), Ok(e));
            assert_eq!(e.claude_name().parse(), Ok(e));
        }
    }

    #[test]
    fn agent_spellings_are_aliases_and_names_are_unique() {
        assert_eq!("BeforeTool".parse(), Ok(Event::PreToolUse));
        assert_eq!("AfterAgent".parse(), Ok(Event::Stop));
        assert_eq!("PreCompress".parse(), Ok(Event::PreCompact));
        assert_eq!("PermissionRequest".parse(), Ok(Event::PermissionRequest));
        assert_eq!("Interrupt".parse(), Ok(Event::Interrupt));
        let mut seen = std::collections::HashSet::new();
        for event in Event::ALL {
            for name in event.names() {
                assert!(seen.insert(*name), "`{name}` names two events");
            }
        }
    }

    #[test]
    fn every_event_says_what_it_means() {
        for event in Event::ALL {
            let info = event.info();
            assert!(
                !info.when.is_empty() && !info.exit_two.is_empty(),
                "{event}"
            );
            assert_eq!(
                event.is_tool_event(),
                info.matcher == Some("tool"),
                "{event}: tool events match the tool"
            );
            assert_eq!(
                event.can_keep_going(),
                event.acts_as() == Event::Stop,
                "{event}"
            );
        }
    }

    #[test]
    fn unknown_event_suggests_the_closest_name() {
        let err = "pre_tool_usee".parse::<Event>().unwrap_err();
        assert_eq!(err.suggestion, Some("pre_tool_use"));
        let err = "post-tool-use".parse::<Event>().unwrap_err();
        assert_eq!(err.suggestion, Some("post_tool_use"));
        let err = "sesion_end".parse::<Event>().unwrap_err();
        assert_eq!(err.suggestion, Some("session_end"));
        assert!(err.to_string().contains("valid events: pre_tool_use"));
    }

    #[test]
    fn unrelated_name_gets_no_suggestion() {
        let err = "zzzzzzzzzzzzzzzzzzzzzzzz".parse::<Event>().unwrap_err();
        assert_eq!(err.suggestion, None);
    }
}

/// `Event` as its name in JSON (`"pre_tool_use"`), for `#[serde(with = ...)]`.
pub(crate) mod by_name {
    use super::Event;

    pub(crate) fn serialize<S: serde::Serializer>(event: &Event, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(event.as_str())
    }

    pub(crate) fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Event, D::Error> {
        let name = <std::borrow::Cow<'de, str> as serde::Deserialize>::deserialize(d)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}
