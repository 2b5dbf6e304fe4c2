//! `ka-hooks run`: build the payload (stdin, `--input`, `--example`), dispatch it, and print a
//! headline that names the verdict truthfully.

use std::fmt::Write as _;
use std::io::{IsTerminal, Read};
use std::path::PathBuf;

use clap::Args;
use serde_json::{Map, Value};

use super::{load, parse_event, Output, EXIT_BLOCKED, EXIT_OK};
use crate::config::{Config, LoadOptions};
use crate::dispatch::Request;
use crate::event::{Event, ExitTwo};
use crate::outcome::{HookReport, Outcome, Status};
use crate::verdict::{denied_by_json, verdict};

/// `ka-hooks run`.
#[derive(Debug, Args)]
#[command(after_help = "\
Payload: --input, else --example, else stdin when it is not a terminal, else `{}`.
A tool event's payload holds the tool's arguments under `arguments`:
  echo '{\"tool\":\"write\",\"arguments\":{\"path\":\".env\"}}' | ka-hooks run pre_tool_use

Headline: blocked (a hook exited 2), blocked (deny) (a JSON deny), ask, allow, proceed (nothing
objected), result marked as error (post_tool_use exit 2).

Exit codes: 0 the call may proceed (proceed, allow, ask: the host asks a human),
1 usage or configuration error, 2 blocked, 128+N interrupted by signal N.")]
pub struct RunArgs {
    /// Event name: pre_tool_use, post_tool_use, stop, ... (Claude spellings accepted; see `ka-hooks events`).
    #[arg(value_parser = super::event_parser(), hide_possible_values = true)]
    pub(super) event: String,
    /// Tool name, for tool events (filled into the payload's `tool`; must agree with it).
    #[arg(long)]
    pub(super) tool: Option<String>,
    /// Payload object: inline JSON, `@FILE`, or `-` for stdin (default: stdin when piped).
    #[arg(long, value_name = "JSON|@FILE|-", conflicts_with = "example")]
    pub(super) input: Option<String>,
    /// Send a realistic example payload for the event and tool (the doctor's synthetic payload).
    #[arg(long)]
    pub(super) example: bool,
    /// Replay the payload against this one hook only.
    #[arg(long, value_name = "NAME")]
    pub(super) hook: Option<String>,
    /// Print the outcome as JSON.
    #[arg(long)]
    pub(super) json: bool,
    /// Print the payload sent, and each hook's raw stdout, stderr and duration (on stderr).
    #[arg(short, long)]
    pub(super) verbose: bool,
}

/// Top-level payload keys that are not a tool's arguments (for the flat-payload hint).
const ENVELOPE_KEYS: [&str; 8] = [
    "event",
    "tool",
    "cwd",
    "session_id",
    "result",
    "is_error",
    "transcript_path",
    "arguments",
];

pub fn run(
    opts: &LoadOptions,
    log: Option<PathBuf>,
    args: RunArgs,
    out: &Output,
) -> Result<u8, String> {
    let event = parse_event(&args.event)?;
    if args.tool.is_some() && !event.is_tool_event() {
        return Err(format!(
            "--tool only applies to pre_tool_use and post_tool_use, not {event}"
        ));
    }
    let (mut payload, notes) = if args.example {
        (
            example_payload(event, args.tool.as_deref(), opts),
            Vec::new(),
        )
    } else {
        match read_payload(args.input.as_deref()) {
            Ok(read) => read,
            // Piped, as an agent's hook command pipes it: a guard that cannot judge the call
            // blocks it (see crate::payload).
            Err(e) if e.piped && event.is_pipeline() => {
                out.error(&format!(
                    "{}; blocked, because the guards could not judge it (a piped payload that \
                     cannot be read always fails closed on {event})",
                    e.message
                ));
                return Ok(EXIT_BLOCKED);
            }
            Err(e) => return Err(e.message),
        }
    };
    check_tool(event, args.tool.as_deref(), &mut payload)?;
    // `--tool Bash` reads as a `tool = "Bash"` entry does: any agent's spelling is ka's tool.
    if event.is_tool_event() {
        crate::adapter::tools::payload_to_ka(&mut payload)?;
    }
    let mut config = load(opts, out)?;
    if log.is_some() {
        config.settings.log = log;
    }
    fill_envelope(event, &mut payload);
    if args.verbose {
        let text =
            serde_json::to_string_pretty(&Value::Object(payload.clone())).unwrap_or_default();
        eprintln!("payload sent:\n{}", multiline(&text, ""));
    }
    let outcome = dispatch(opts, &config, event, payload, args.hook.as_deref(), notes)?;
    if args.verbose {
        eprint!("{}", verbose_hooks(&outcome));
    }
    if args.json {
        let text = serde_json::to_string_pretty(&outcome)
            .map_err(|e| format!("failed to serialise the outcome: {e}"))?;
        outln!("{text}");
    } else {
        out!("{}", outcome_text(&outcome, out));
    }
    Ok(if outcome.blocked {
        EXIT_BLOCKED
    } else {
        EXIT_OK
    })
}

/// What the dispatcher fills in, filled here so `--verbose` shows what the hooks get: the event
/// and, when the payload has none, the working directory as `cwd`.
fn fill_envelope(event: Event, payload: &mut Map<String, Value>) {
    payload.insert("event".into(), Value::String(event.as_str().to_owned()));
    if !payload.contains_key("cwd") {
        if let Ok(dir) = std::env::current_dir() {
            payload.insert("cwd".into(), Value::String(dir.to_string_lossy().into()));
        }
    }
}

/// Dispatches the payload (or replays it against one hook), with the denial backstop and the
/// continuation count kept as the adapters keep them; `notes` (what reading the payload
/// replaced) go first among the outcome's diagnostics.
fn dispatch(
    opts: &LoadOptions,
    config: &Config,
    event: Event,
    mut payload: Map<String, Value>,
    hook: Option<&str>,
    notes: Vec<String>,
) -> Result<Outcome, String> {
    // A payload that names its session (an agent's hook command piping it) gets the denial
    // backstop, counted in the data dir as the adapters count it.
    let denials = opts
        .paths
        .data_dir
        .as_deref()
        .filter(|_| hook.is_none())
        .and_then(|dir| crate::backstop::Tracker::start(dir, event, &payload));
    // Stop-like events are counted as the adapters count them, so `max_continuations` holds here
    // too (the payload's `session_id` keys the count).
    let tracker = opts
        .paths
        .data_dir
        .as_deref()
        .filter(|_| hook.is_none())
        .and_then(|dir| crate::adapter::continuations::Tracker::start(dir, event, &mut payload));
    let mut request = Request::new(event, payload);
    request.denials = denials.as_ref().map(|d| d.denials.clone());
    request.continued = tracker.as_ref().map(|t| t.continued());
    request.cancel = crate::interrupt::token();
    let mut outcome = match hook {
        Some(hook) => config.replay(request, hook).map_err(|e| e.to_string())?,
        None => config.dispatch_uncounted(request),
    };
    outcome.diagnostics.extend(notes);
    if let Some(Err(e)) = denials.map(|d| d.finish(&outcome)) {
        outcome.diagnostics.push(format!(
            "the denial count could not be kept ({e}); denial_backstop may not hold"
        ));
    }
    if let Some(Err(e)) = tracker.map(|t| t.finish(&outcome, true)) {
        outcome.diagnostics.push(format!(
            "the continuation count could not be kept ({e}); max_continuations may not hold"
        ));
    }
    Ok(outcome)
}

/// `--example`: the doctor's synthetic payload, its paths inside the project (or working) dir.
fn example_payload(event: Event, tool: Option<&str>, opts: &LoadOptions) -> Map<String, Value> {
    let base =
        crate::paths::find_project_root(&opts.start_dir).unwrap_or_else(|| opts.start_dir.clone());
    let tool = tool.or(event.is_tool_event().then_some("write"));
    crate::doctor::synthetic_payload(event, tool, &base)
}

/// A tool event needs a tool and an `arguments` object; `--tool` must agree with the payload.
/// With no payload at all (`run pre_tool_use --tool bash`), the arguments are empty.
fn check_tool(
    event: Event,
    tool: Option<&str>,
    payload: &mut Map<String, Value>,
) -> Result<(), String> {
    if !event.is_tool_event() {
        return Ok(());
    }
    if payload.is_empty() {
        payload.insert("arguments".into(), Value::Object(Map::new()));
    }
    match (tool, payload.get("tool")) {
        (Some(flag), Some(Value::String(given))) if flag != given => {
            return Err(format!(
                "--tool {} disagrees with the payload's \"tool\": {}; drop one of them",
                crate::terminal::escape(flag),
                crate::terminal::escape(&Value::String(given.clone()).to_string())
            ))
        }
        (_, Some(given)) if !given.is_string() => {
            return Err(format!(
                "the payload's \"tool\" must be a string, not {}",
                crate::terminal::escape(&given.to_string())
            ))
        }
        (Some(flag), None) => {
            payload.insert("tool".into(), Value::String(flag.to_owned()));
        }
        (None, None) => {
            return Err(format!(
                "{event} needs a tool: pass --tool NAME or a payload with \"tool\" \
                 (or --example for a realistic one)"
            ))
        }
        _ => {}
    }
    match payload.get("arguments") {
        Some(Value::Object(_)) => Ok(()),
        Some(other) => Err(format!(
            "the payload's \"arguments\" must be an object of the tool's arguments, not {}",
            crate::terminal::escape(&other.to_string())
        )),
        None => Err(flat_payload_hint(event, payload)),
    }
}

fn flat_payload_hint(event: Event, payload: &Map<String, Value>) -> String {
    let mut envelope = Map::new();
    let mut arguments = Map::new();
    for (key, value) in payload {
        if ENVELOPE_KEYS.contains(&key.as_str()) {
            envelope.insert(key.clone(), value.clone());
        } else {
            arguments.insert(key.clone(), value.clone());
        }
    }
    envelope.insert("arguments".into(), Value::Object(arguments.clone()));
    let what = if arguments.is_empty() {
        "no \"arguments\" object".to_owned()
    } else {
        let keys: Vec<&str> = arguments.keys().map(String::as_str).collect();
        format!(
            "no \"arguments\" object, so the hooks would not see {}",
            keys.join(", ")
        )
    };
    format!(
        "the {event} payload has {}\n  help: a tool's arguments go under \"arguments\", \
         such as {}\n  help: or pass --example for a realistic payload",
        crate::terminal::escape(&what),
        crate::terminal::escape(&Value::Object(envelope).to_string())
    )
}

/// A payload that could not be read.
struct Unread {
    message: String,
    /// It came from stdin (as an agent's hook command gets it).
    piped: bool,
}

/// The payload: `--input` (inline, `@FILE`, `-`), else stdin when it is not a terminal; read as
/// the agents write JSON ([`crate::payload`]), with what was replaced.
fn read_payload(input: Option<&str>) -> Result<(Map<String, Value>, Vec<String>), Unread> {
    let usage = |message: String| Unread {
        message,
        piped: false,
    };
    let (bytes, origin) = match input {
        None if std::io::stdin().is_terminal() => return Ok((Map::new(), Vec::new())),
        None | Some("-") => {
            let mut bytes = Vec::with_capacity(crate::adapter::PAYLOAD_READ_CAPACITY);
            std::io::stdin()
                .read_to_end(&mut bytes)
                .map_err(|e| Unread {
                    message: format!("failed to read the payload from stdin: {e}"),
                    piped: true,
                })?;
            if input.is_none() && bytes.trim_ascii().is_empty() {
                return Ok((Map::new(), Vec::new()));
            }
            (bytes, "stdin".to_owned())
        }
        Some(arg) if arg.starts_with('@') => {
            let path = &arg[1..];
            let bytes = std::fs::read(path)
                .map_err(|e| usage(format!("--input {arg}: failed to read {path}: {e}")))?;
            (bytes, path.to_owned())
        }
        Some(arg) => (arg.as_bytes().to_vec(), "--input".to_owned()),
    };
    let piped = origin == "stdin";
    match crate::payload::parse(&bytes) {
        Ok(read) => Ok((read.object, read.notes)),
        Err(crate::payload::Unreadable::NotAnObject) => Err(Unread {
            message: format!(
                "{origin}: the payload must be a JSON object, such as '{{\"tool\":\"write\",\"arguments\":{{\"path\":\"src/a.rs\"}}}}'"
            ),
            piped,
        }),
        Err(crate::payload::Unreadable::NotJson(e)) => Err(Unread {
            message: format!("{origin}: invalid JSON payload: {e}"),
            piped,
        }),
        Err(e) => Err(Unread {
            message: format!("{origin}: {e}"),
            piped,
        }),
    }
}

/// When a layer was skipped (and so, perhaps, no hook ran): say so, with the fix.
fn skipped_layers(outcome: &Outcome) -> Option<String> {
    if outcome.untrusted.is_empty() {
        return None;
    }
    let fixes: Vec<String> = outcome
        .untrusted
        .iter()
        .map(|u| match u.state {
            // The library's texts name the action; the binary names its command.
            crate::config::LayerState::Removed => format!("{} (or `{} --revoke`)", u.fix, u.fix),
            _ => u.fix.clone(),
        })
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    Some(format!(
        "{}{} layer(s) skipped ({}), their hooks did not run; to run them: {}",
        if outcome.hooks.is_empty() {
            "no hook ran: "
        } else {
            ""
        },
        outcome.untrusted.len(),
        outcome
            .untrusted
            .iter()
            .map(|u| crate::terminal::escape_path(&u.file))
            .collect::<Vec<_>>()
            .join(", "),
        crate::terminal::escape(&fixes.join(" ; "))
    ))
}

/// `hook NAME [layer]: how it ended, N ms`: the line of one hook in `run`'s output.
fn hook_line(h: &HookReport, event: Event) -> String {
    let name = crate::terminal::escape(&h.name);
    if h.blocked_without_running {
        return format!(
            "hook {name} [{}]: blocked without running ({})",
            h.source.layer,
            first_line(&h.stderr)
        );
    }
    format!(
        "hook {name} [{}]: {}, {:.1} ms",
        h.source.layer,
        hook_state(h, event),
        h.duration_ms
    )
}

/// How a hook that ran ended, in the words of its event: an exit 2 blocks a pipeline event, but
/// keeps a stop going and marks a tool's result as an error.
fn hook_state(h: &HookReport, event: Event) -> String {
    if denied_by_json(h) {
        return "blocked (deny, exit 0)".to_owned();
    }
    let stderr = match first_line(&h.stderr) {
        line if line.is_empty() || h.error.as_deref().is_some_and(|e| e.contains(&line)) => {
            String::new()
        }
        line => format!("; stderr: {line}"),
    };
    let detail = match (&h.status, &h.error, h.exit_code) {
        (Status::Error, Some(e), _) => format!(" ({e}{stderr})"),
        (Status::Skipped, _, _) => " (an earlier hook blocked)".to_owned(),
        (_, Some(e), Some(code)) => format!(" (exit {code}; {e})"),
        (_, _, Some(code)) => format!(" (exit {code})"),
        _ => String::new(),
    };
    let decision = h
        .action
        .action
        .as_ref()
        .and_then(|a| a.decision)
        .filter(|_| h.action.applied)
        .map(|d| format!(", decision {d}"))
        .unwrap_or_default();
    let status = match (h.status, event.exit_two()) {
        (Status::Blocked, ExitTwo::KeepGoing) => "asked to keep going",
        (Status::Blocked, ExitTwo::MarkError) => "marked the result as an error",
        (Status::Blocked, ExitTwo::Feedback) => "gave feedback",
        (Status::Blocked, ExitTwo::Advisory) => "exit 2, advisory: no effect",
        (status, _) => status.as_str(),
    };
    format!("{status}{detail}{decision}")
}

/// The first non-empty line of a hook's stderr, escaped and cut to fit one terminal line.
fn first_line(stderr: &str) -> String {
    const MAX: usize = 120;
    let line = stderr.lines().map(str::trim).find(|l| !l.is_empty());
    let line = line.unwrap_or("");
    let cut: String = line.chars().take(MAX).collect();
    let more = if line.chars().count() > MAX {
        "…"
    } else {
        ""
    };
    format!("{}{more}", crate::terminal::escape(&cut))
}

/// `-v`: each hook's raw output and duration, escaped.
fn verbose_hooks(outcome: &Outcome) -> String {
    let mut w = String::new();
    // Once a hook rewrote the call, each guard's line says which version of it it judged.
    let rewritten = outcome.hooks.iter().any(|h| h.input.is_some());
    for h in &outcome.hooks {
        let _ = writeln!(w, "{}", hook_line(h, outcome.event));
        let ran = !matches!(h.status, Status::Skipped | Status::Cancelled);
        if rewritten && ran {
            let _ = writeln!(w, "  {}", saw(h));
        }
        for (name, text) in [("sandbox", &h.sandbox), ("sandbox note", &h.sandbox_note)] {
            if let Some(text) = text {
                let _ = writeln!(w, "  {name}: {}", crate::terminal::escape(text));
            }
        }
        for (name, text, cut) in [
            ("stdout", &h.stdout, h.stdout_truncated),
            ("stderr", &h.stderr, h.stderr_truncated),
        ] {
            if text.is_empty() {
                let _ = writeln!(w, "  {name}: (empty)");
                continue;
            }
            let _ = writeln!(w, "  {name}:");
            for line in text.lines() {
                let _ = writeln!(w, "    | {}", crate::terminal::escape(line));
            }
            if cut || text.len() >= crate::outcome::STDERR_EXCERPT {
                let _ = writeln!(w, "    (cut)");
            }
        }
    }
    w
}

/// `saw: the call as made` or `saw: the call as rewritten: {...}`, and whether it judged it again.
fn saw(h: &HookReport) -> String {
    let input = match &h.input {
        None => "the call as made".to_owned(),
        Some(args) => format!(
            "the call as rewritten: {}",
            crate::terminal::escape(&Value::Object(args.clone()).to_string())
        ),
    };
    let again = if h.rejudged {
        " (judged again: a later hook rewrote the call it had judged)"
    } else {
        ""
    };
    format!("saw: {input}{again}")
}

/// The human output of `run`: the headline, then what the host must do, then each hook.
pub fn outcome_text(outcome: &Outcome, out: &Output) -> String {
    let mut w = String::new();
    let tool = outcome
        .tool
        .as_deref()
        .map(|t| format!(" ({})", crate::terminal::escape(t)))
        .unwrap_or_default();
    let word = verdict(outcome);
    let painted = match word.as_str() {
        w if w.starts_with("blocked") => out.paint("1;31", w),
        "result marked as error" | "ask" | "capped" | "halt" => out.paint("1;33", &word),
        _ => out.paint("1;32", &word),
    };
    let _ = writeln!(w, "{}{tool}: {painted}", outcome.event);
    // What weakened guards, first: the user must hear it.
    for a in &outcome.announcements {
        let _ = writeln!(w, "  {}: {}", out.paint("1;33", "warning"), escape_line(a));
    }
    if let Some(skipped) = skipped_layers(outcome) {
        let _ = writeln!(w, "  {skipped}");
    }
    write_answer(&mut w, outcome);
    let nothing_ran = outcome.hooks.is_empty() && outcome.background.is_empty();
    if nothing_ran && outcome.untrusted.is_empty() {
        let _ = writeln!(w, "  no hook matched");
    }
    write_hooks(&mut w, outcome);
    for d in &outcome.diagnostics {
        let _ = writeln!(w, "  diagnostic: {}", escape_line(d));
    }
    w
}

/// What the host must do: the reason, the rewritten input, the mode, notes, feedback, context,
/// the text to keep going with, the halt and the messages, escaped.
fn write_answer(w: &mut String, outcome: &Outcome) {
    if let Some(reason) = &outcome.reason {
        let _ = writeln!(w, "  reason: {}", multiline(reason, "          "));
    }
    if let Some(input) = &outcome.updated_input {
        let _ = writeln!(
            w,
            "  updated input: {}",
            escape_line(&Value::Object(input.clone()).to_string())
        );
    }
    if let Some(mode) = &outcome.mode {
        let _ = writeln!(w, "  mode: {}", escape_line(mode));
    }
    for note in &outcome.notes {
        let _ = writeln!(w, "  note: {}", escape_line(note));
    }
    if let Some(feedback) = &outcome.feedback {
        let _ = writeln!(w, "  feedback: {}", multiline(feedback, "            "));
    }
    if let Some(context) = &outcome.context {
        let _ = writeln!(w, "  context: {}", multiline(context, "           "));
    }
    if let Some(text) = &outcome.keep_going {
        let _ = writeln!(w, "  keep going: {}", multiline(text, "              "));
    }
    if let Some(why) = &outcome.halt {
        let _ = writeln!(w, "  halt: {}", multiline(why, "        "));
    }
    for m in &outcome.messages {
        let _ = writeln!(w, "  message: {}", multiline(m, "           "));
    }
}

/// A line for each hook: those that ran, those started in the background, the async hooks
/// whose results came with this dispatch, and what report-only hooks would have done.
fn write_hooks(w: &mut String, outcome: &Outcome) {
    for h in &outcome.hooks {
        let _ = writeln!(w, "  {}", hook_line(h, outcome.event));
    }
    for b in &outcome.background {
        let state = match &b.error {
            Some(e) => format!("could not start: {}", escape_line(e)),
            None => "started in the background (async); its result comes with the session's \
                     next dispatch"
                .to_owned(),
        };
        let _ = writeln!(w, "  hook {}: {state}", escape_line(&b.hook));
    }
    for d in &outcome.delivered {
        let what = match (d.superseded, d.status) {
            (true, _) => "superseded by a newer run".to_owned(),
            (_, Status::Error) => {
                format!("failed: {}", escape_line(d.error.as_deref().unwrap_or("")))
            }
            (_, status) => status.as_str().to_owned(),
        };
        let _ = writeln!(
            w,
            "  async hook {} (after {}) ended: {what}, {:.1} ms",
            escape_line(&d.hook),
            d.event,
            d.duration_ms
        );
    }
    for r in &outcome.report_only {
        let detail = r
            .detail
            .as_deref()
            .map(|d| format!(": {}", escape_line(d)))
            .unwrap_or_default();
        let _ = writeln!(
            w,
            "  report-only hook {} would have: {}{detail} (not applied: enforce = false)",
            escape_line(&r.hook),
            r.effect.as_str()
        );
    }
}

/// `text` escaped, on one line.
fn escape_line(text: &str) -> String {
    crate::terminal::escape(text).into_owned()
}

/// `text` escaped line by line, the lines after the first indented by `indent`.
fn multiline(text: &str, indent: &str) -> String {
    text.lines()
        .map(|l| crate::terminal::escape(l).into_owned())
        .collect::<Vec<_>>()
        .join(&format!("\n{indent}"))
}
