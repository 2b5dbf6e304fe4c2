//! `ka-hooks events`: each event, when it fires, its payload with an example, what exit 2 means,
//! which action keys apply, and its aliases.
//!
//! What each event means is [`Event::info`]'s data; this module only prints it.

use std::path::Path;

use clap::Args;
use serde_json::{json, Value};

use super::{parse_event, EXIT_OK};
use crate::event::Event;

/// `ka-hooks events`.
#[derive(Debug, Args)]
pub struct EventsArgs {
    /// Show only this event (any alias).
    #[arg(value_parser = event_parser())]
    event: Option<String>,
    /// Print the events as a JSON array.
    #[arg(long)]
    json: bool,
}

/// What the documentation of one event says.
pub struct EventDoc {
    pub event: Event,
    pub fires: &'static str,
    /// Payload fields beside `event` and `cwd`: (name, meaning).
    pub fields: &'static [(&'static str, &'static str)],
    pub exit_2: &'static str,
    /// Action keys a hook may print on exit 0 (besides the Claude Code forms).
    pub actions: &'static [&'static str],
    /// Every accepted name other than the canonical one (the agents' spellings, `turn_end`).
    pub extra_aliases: &'static [&'static str],
}

const COMMON: [(&str, &str); 3] = [
    ("event", "the canonical event name"),
    ("cwd", "the session's working directory"),
    ("session_id", "the session, when the host has one"),
];

/// Every event's documentation, from the data in [`Event::info`].
pub fn docs() -> Vec<EventDoc> {
    Event::ALL
        .iter()
        .map(|&event| {
            let info = event.info();
            EventDoc {
                event,
                fires: info.when,
                fields: info.payload,
                exit_2: info.exit_two,
                actions: info.actions,
                extra_aliases: event.aliases(),
            }
        })
        .collect()
}

pub fn doc(event: Event) -> EventDoc {
    let mut all = docs();
    let i = all.iter().position(|d| d.event == event).unwrap_or(0);
    all.swap_remove(i)
}

/// Every name the event is accepted under, canonical first.
pub fn aliases(doc: &EventDoc) -> Vec<&'static str> {
    let mut names = vec![doc.event.as_str()];
    names.extend(doc.extra_aliases);
    names
}

/// An example payload: the doctor's synthetic one, in `/path/to/project`.
fn example(event: Event) -> Value {
    let tool = event.is_tool_event().then_some("write");
    Value::Object(crate::doctor::synthetic_payload(
        event,
        tool,
        Path::new("/path/to/project"),
    ))
}

fn to_json(doc: &EventDoc) -> Value {
    let fields: Vec<Value> = COMMON
        .iter()
        .chain(doc.fields)
        .map(|(name, meaning)| json!({ "name": name, "meaning": meaning }))
        .collect();
    json!({
        "event": doc.event.as_str(),
        "aliases": aliases(doc),
        "fires": doc.fires,
        "tool_event": doc.event.is_tool_event(),
        "payload": fields,
        "example": example(doc.event),
        "exit_2": doc.exit_2,
        "actions": doc.actions,
    })
}

pub fn run(args: EventsArgs) -> Result<u8, String> {
    let selected: Vec<EventDoc> = match &args.event {
        Some(name) => vec![doc(parse_event(name)?)],
        None => docs(),
    };
    if args.json {
        let value: Vec<Value> = selected.iter().map(to_json).collect();
        outln!(
            "{}",
            serde_json::to_string_pretty(&value).unwrap_or_default()
        );
        return Ok(EXIT_OK);
    }
    let mut w = String::new();
    use std::fmt::Write as _;
    for d in &selected {
        let _ = writeln!(w, "{}", d.event.as_str());
        let _ = writeln!(w, "  fires:    {}", d.fires);
        let _ = writeln!(w, "  payload:");
        for (name, meaning) in COMMON.iter().chain(d.fields) {
            let _ = writeln!(w, "    {name:<19} {meaning}");
        }
        let example = serde_json::to_string(&example(d.event)).unwrap_or_default();
        let _ = writeln!(w, "  example:  {example}");
        let _ = writeln!(w, "  exit 2:   {}", d.exit_2);
        let _ = writeln!(w, "  actions:  {}", actions_line(d.actions));
        let _ = writeln!(w, "  aliases:  {}", aliases(d)[1..].join(", "));
        let _ = writeln!(w);
    }
    let _ = writeln!(
        w,
        "Every payload is one JSON object on the hook's stdin; hooks must tolerate unknown \
         fields. `ka-hooks run EVENT --example` sends the example."
    );
    out!("{w}");
    Ok(EXIT_OK)
}

/// The `actions:` line: the event's own keys, then those every event takes (never empty).
fn actions_line(own: &[&str]) -> String {
    let common = crate::event::COMMON_ACTIONS.join(", ");
    if own.is_empty() {
        format!("only those every event takes: {common}")
    } else {
        format!("{}; every event also takes {common}", own.join(", "))
    }
}

/// An event name: any alias (checked again by [`super::parse_event`]); its possible values are what shell
/// completions offer. Unknown names get the "did you mean" of [`Event`]'s parser.
pub fn event_parser() -> impl clap::builder::TypedValueParser<Value = String> {
    EventParser
}

#[derive(Clone)]
pub struct EventParser;

impl clap::builder::TypedValueParser for EventParser {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        _arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        let text = value.to_string_lossy();
        match text.parse::<Event>() {
            Ok(_) => Ok(text.into_owned()),
            Err(e) => Err(
                clap::Error::raw(clap::error::ErrorKind::InvalidValue, format!("{e}\n"))
                    .with_cmd(cmd),
            ),
        }
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        let mut names: Vec<&'static str> = Event::ALL.iter().map(|e| e.as_str()).collect();
        names.push("turn_end");
        Some(Box::new(
            names.into_iter().map(clap::builder::PossibleValue::new),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_is_documented_once_and_every_alias_parses() {
        for event in Event::ALL {
            assert_eq!(
                docs().iter().filter(|d| d.event == event).count(),
                1,
                "{event}"
            );
            for alias in aliases(&doc(event)) {
                assert_eq!(alias.parse::<Event>(), Ok(event), "{alias}");
            }
        }
    }

    #[test]
    fn aliases_are_listed_once_each_and_the_actions_line_is_never_empty() {
        for event in Event::ALL {
            let names = aliases(&doc(event));
            let mut unique = names.clone();
            unique.sort_unstable();
            unique.dedup();
            assert_eq!(unique.len(), names.len(), "{event}: {names:?}");
            assert!(!actions_line(event.info().actions).is_empty());
            assert!(actions_line(event.info().actions).contains("note"));
        }
    }

    #[test]
    fn the_example_payload_holds_every_documented_field_it_can() {
        for d in &docs() {
            let example = example(d.event);
            for (name, _) in d.fields {
                // Only the fields the doctor's synthetic payload always builds; the rest
                // (after a rewrite, counts of the turn, agent-specific) are host-provided.
                if !matches!(*name, "tool" | "arguments" | "result" | "prompt" | "focus") {
                    continue;
                }
                assert!(example.get(name).is_some(), "{}: {name}", d.event);
            }
        }
    }
}
