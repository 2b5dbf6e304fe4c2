//! The README's event and action tables follow `src/event.rs` (the data `ka-hooks events`
//! prints) and the action language, so neither can drift from the code.

use ka_hooks::Event;

fn readme() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).expect("README")
}

/// The events table, as the README must hold it.
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
        readme().contains(&expected),
        "README's events table is stale; it must contain:\n{expected}"
    );
}

#[test]
fn readme_what_works_where_names_every_event() {
    let text = readme();
    let start = text.find("### What works where").expect("the section");
    let section = &text[start..];
    let end = section[4..].find("\n### ").map_or(section.len(), |e| e + 4);
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
    let text = readme();
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
            "README's action table lacks `{key}`"
        );
    }
}
