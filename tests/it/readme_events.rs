//! The event and action tables of `docs/events.md`, and the "What works where" table of
//! `docs/adapters.md`, follow `src/event.rs` (the data `ka-hooks events` prints) and the action
//! language, so none can drift from the code.

use ka_hooks::Event;

fn doc(name: &str) -> String {
    let path = format!("{}/docs/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The events table, as `docs/events.md` must hold it.
fn events_table() -> String {
    let mut table = String::from(
        "| event | also accepted as | fires | payload adds | exit 2 | `matcher` matches |\n\
         |---|---|---|---|---|---|\n",
    );
    for event in Event::ALL {
        let info = event.info();
        let aliases = event
            .aliases()
            .iter()
            .map(|a| format!("`{a}`"))
            .collect::<Vec<_>>()
            .join(", ");
        let payload = if info.payload.is_empty() {
            "—".to_owned()
        } else {
            info.payload
                .iter()
                .map(|(name, _)| format!("`{name}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let matcher = info.matcher.map_or("—".to_owned(), |m| format!("`{m}`"));
        table.push_str(&format!(
            "| `{}` | {aliases} | {} | {payload} | {} | {matcher} |\n",
            event.as_str(),
            info.when,
            info.exit_two
        ));
    }
    table
}

#[test]
fn readme_events_table_lists_every_event_as_event_rs_describes_it() {
    let expected = events_table();
    assert!(
        doc("events.md").contains(&expected),
        "docs/events.md's events table is stale; it must contain:\n{expected}"
    );
}

#[test]
fn readme_what_works_where_names_every_event() {
    let text = doc("adapters.md");
    let start = text.find("\n## What works where").expect("the section") + 1;
    let section = &text[start..];
    let end = section[3..].find("\n## ").map_or(section.len(), |e| e + 3);
    let section = &section[..end];
    for event in Event::ALL {
        assert!(
            section.contains(&format!("| `{}` |", event.as_str())),
            "What works where lacks {event}"
        );
    }
}

#[test]
fn readme_action_table_lists_every_key() {
    let text = doc("events.md");
    for key in [
        "mode",
        "note",
        "halt",
        "updated_input",
        "decision",
        "reason",
        "feedback",
        "context",
        "keep_going",
        "continue",
        "stopReason",
        "systemMessage",
        "suppressOutput",
        "hookSpecificOutput.permissionDecision",
        "hookSpecificOutput.permissionDecisionReason",
        "hookSpecificOutput.updatedInput",
        "hookSpecificOutput.additionalContext",
    ] {
        assert!(
            text.contains(&format!("| `{key}` |")),
            "docs/events.md's action table lacks `{key}`"
        );
    }
}
