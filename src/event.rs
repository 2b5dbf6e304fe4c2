//! The hook events, their canonical names and the aliases accepted in `ka.toml`.

use std::fmt;
use std::str::FromStr;

/// A fixed point in the agent's life at which hooks run.
///
/// Declaration order is the order `ka-hooks list` and error messages use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Event {
    PreToolUse,
    PostToolUse,
    Stop,
    SessionStart,
    SessionEnd,
    UserPromptSubmit,
    PreCompact,
}

impl Event {
    /// Every event, in declaration order.
    pub const ALL: [Event; 7] = [
        Event::PreToolUse,
        Event::PostToolUse,
        Event::Stop,
        Event::SessionStart,
        Event::SessionEnd,
        Event::UserPromptSubmit,
        Event::PreCompact,
    ];

    /// The canonical (snake_case) name, as written in payloads and `ka.toml`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Event::PreToolUse => "pre_tool_use",
            Event::PostToolUse => "post_tool_use",
            Event::Stop => "stop",
            Event::SessionStart => "session_start",
            Event::SessionEnd => "session_end",
            Event::UserPromptSubmit => "user_prompt_submit",
            Event::PreCompact => "pre_compact",
        }
    }

    /// The Claude Code spelling of the event (`PreToolUse`, `Stop`, ...).
    pub const fn claude_name(self) -> &'static str {
        match self {
            Event::PreToolUse => "PreToolUse",
            Event::PostToolUse => "PostToolUse",
            Event::Stop => "Stop",
            Event::SessionStart => "SessionStart",
            Event::SessionEnd => "SessionEnd",
            Event::UserPromptSubmit => "UserPromptSubmit",
            Event::PreCompact => "PreCompact",
        }
    }

    /// Events that concern one tool call; only these take a `tool`/`matcher` filter.
    pub const fn is_tool_event(self) -> bool {
        matches!(self, Event::PreToolUse | Event::PostToolUse)
    }

    /// Events whose hooks run one after another, each seeing what the previous ones
    /// decided (a guard must judge the arguments that will really run).
    pub const fn is_pipeline(self) -> bool {
        matches!(self, Event::PreToolUse | Event::UserPromptSubmit)
    }

    /// Every name accepted for this event: canonical, Claude Code spelling, extra aliases.
    fn names(self) -> &'static [&'static str] {
        match self {
            Event::PreToolUse => &["pre_tool_use", "PreToolUse"],
            Event::PostToolUse => &["post_tool_use", "PostToolUse"],
            Event::Stop => &["stop", "Stop", "turn_end"],
            Event::SessionStart => &["session_start", "SessionStart"],
            Event::SessionEnd => &["session_end", "SessionEnd"],
            Event::UserPromptSubmit => &["user_prompt_submit", "UserPromptSubmit"],
            Event::PreCompact => &["pre_compact", "PreCompact"],
        }
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
    pub given: String,
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
