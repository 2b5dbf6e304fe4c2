//! `--exec`: run a hook once, through the real dispatcher and in the project root, on a synthetic
//! payload whose paths point into a scratch directory, and judge its answer.

use super::*;
use crate::outcome::Outcome;

// ---------------------------------------------------------------------------------------------
// Running a hook on a synthetic payload
// ---------------------------------------------------------------------------------------------

/// A tool call that `hook`'s filter matches, for the synthetic payload of a tool event: a name the
/// filter spells out, else a common tool name it matches; `None` on other events.
pub fn synthetic_tool(hook: &Hook) -> Option<String> {
    if !hook.event.is_tool_event() {
        return None;
    }
    let named: Vec<String> = match &hook.filter {
        ToolFilter::All => Vec::new(),
        ToolFilter::Tools(tools) => tools.patterns.clone(),
        ToolFilter::Matcher(matcher) => match &matcher.kind {
            MatcherKind::Names(names) => names.clone(),
            MatcherKind::Regex(_) => Vec::new(),
        },
    };
    let literal = |t: &String| !t.contains(['*', '?', '[', '{']);
    let common = [
        "write", "edit", "bash", "read", "Write", "Edit", "Bash", "Read",
    ];
    named
        .iter()
        .filter(|t| literal(t))
        .cloned()
        .chain(common.iter().map(|t| (*t).to_owned()))
        .chain(named.iter().map(|t| t.replace(['*', '?'], "doctor")))
        .find(|t| hook.filter.matches(Some(t)))
        .or_else(|| Some("write".to_owned()))
}

/// The payload the doctor sends on `event`: every path in it lies inside `scratch` (which
/// [`prepare_scratch`] fills). `tool` names the tool of a tool event (see [`synthetic_tool`]). The
/// tests use this same function, so what they check is what the doctor sends.
pub fn synthetic_payload(event: Event, tool: Option<&str>, scratch: &Path) -> Map<String, Value> {
    payload_of(event, tool.unwrap_or("write"), scratch, EXAMPLE_FILE, None)
}

/// Whether `tool` runs shell commands (its synthetic arguments are a `command`).
pub(super) fn shell_like(tool: &str) -> bool {
    ["bash", "shell", "sh", "exec", "run"]
        .iter()
        .any(|t| tool.eq_ignore_ascii_case(t))
}

/// [`synthetic_payload`] naming `rel` (relative to `scratch`), and running `command` (else
/// `cat FILE`) on a shell tool.
pub(super) fn payload_of(
    event: Event,
    tool: &str,
    scratch: &Path,
    rel: &str,
    command: Option<&str>,
) -> Map<String, Value> {
    let file = scratch.join(rel).to_string_lossy().into_owned();
    let mut payload = Map::new();
    payload.insert("event".into(), json!(event.as_str()));
    payload.insert("cwd".into(), json!(scratch.to_string_lossy()));
    payload.insert("session_id".into(), json!(SESSION_ID));
    let shell_like = shell_like(tool);
    let arguments = if shell_like {
        let cat = || format!("cat {}", quote(Path::new(&file)));
        json!({ "command": command.map_or_else(cat, str::to_owned) })
    } else {
        json!({ "path": file, "file_path": file, "content": EXAMPLE_SOURCE })
    };
    match event {
        Event::PreToolUse | Event::PermissionRequest | Event::PermissionDenied => {
            payload.insert("tool".into(), json!(tool));
            payload.insert("arguments".into(), arguments);
        }
        Event::PostToolUse | Event::PostToolUseFailure => {
            payload.insert("tool".into(), json!(tool));
            payload.insert("arguments".into(), arguments);
            let result = if shell_like {
                EXAMPLE_SOURCE.to_owned()
            } else {
                format!("wrote {} bytes to {file}", EXAMPLE_SOURCE.len())
            };
            payload.insert("result".into(), json!(result));
            payload.insert("is_error".into(), json!(event == Event::PostToolUseFailure));
        }
        Event::Stop => {
            payload.insert("stop".into(), json!("done"));
        }
        Event::UserPromptSubmit => {
            payload.insert("prompt".into(), json!(format!("explain {file}")));
        }
        Event::PreCompact => {
            payload.insert("focus".into(), json!("the example file"));
        }
        _ => {}
    }
    payload
}

/// Fill a scratch directory with the files the synthetic payloads name.
pub fn prepare_scratch(scratch: &Path) -> std::io::Result<()> {
    prepare_file(scratch, EXAMPLE_FILE)
}

/// Write [`EXAMPLE_SOURCE`] to `rel` under `scratch`, creating its folders.
fn prepare_file(scratch: &Path, rel: &str) -> std::io::Result<()> {
    let file = scratch.join(rel);
    if let Some(parent) = file.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(file, EXAMPLE_SOURCE)
}

pub(crate) fn ms(report: &HookReport) -> String {
    format!("{:.0} ms", report.duration_ms)
}

pub(crate) fn first_line(text: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let mut cut: String = line.chars().take(160).collect();
    if cut.len() < line.len() {
        cut.push('…');
    }
    cut
}

pub(crate) fn format_secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0}s")
    } else {
        format!("{s}s")
    }
}

/// Run `hook` once, through the real dispatcher, on a synthetic payload in a fresh scratch
/// directory, with `KA_HOOKS_DOCTOR=1`, and judge its answer.
pub(crate) fn exec_check(config: &Config, hook: &Hook, run_dir: &Path) -> Check {
    let limit = hook.timeout.min(EXEC_TIMEOUT_CAP);
    let (outcome, tool) = match run_synthetic(config, hook, run_dir, limit) {
        Ok(ran) => ran,
        Err(check) => return check,
    };
    let Some(report) = outcome.hooks.first() else {
        return Check::failing("exec", "not run: the dispatcher ran no hook", None);
    };
    let on = match &tool {
        Some(tool) => format!("a synthetic {} call of `{tool}`", hook.event),
        None => format!("a synthetic {} payload", hook.event),
    };
    let held_open = report
        .error
        .as_deref()
        .filter(|e| e.contains("held open"))
        .map(str::to_owned);
    let mut check = match report.status {
        Status::Ok => exit_zero_check(report, &on),
        Status::Blocked => exit_two_check(hook.event, &on, ms(report), &report.stderr),
        Status::Error | Status::Skipped | Status::Cancelled => {
            failed_check(hook, report, &on, limit)
        }
    };
    if report.stdout_truncated && check.state == State::Ok {
        check = Check::warning(
            "exec",
            format!("{}; its stdout was over 1 MiB and was cut", check.message),
            None,
        );
    }
    if let (Some(held), State::Ok) = (held_open, check.state) {
        check = Check::warning(
            "exec",
            format!("{}; {held}", check.message),
            Some("do not leave background processes holding stdout or stderr".into()),
        );
    }
    check
}

/// Replays `hook` alone, its timeout capped at `limit`, on a call its filters select whose paths
/// point into a fresh scratch directory, outside the audit log; the outcome and the tool called.
/// A check when it could not run.
fn run_synthetic(
    config: &Config,
    hook: &Hook,
    run_dir: &Path,
    limit: Duration,
) -> Result<(Outcome, Option<String>), Check> {
    let scratch = tempfile::Builder::new()
        .prefix("ka-hooks-doctor-")
        .tempdir()
        .map_err(|e| {
            Check::warning(
                "exec",
                format!("not run: failed to create a scratch directory: {e}"),
                Some("check TMPDIR".into()),
            )
        })?;
    let scratch_path = paths::absolute(scratch.path());
    let unfilled = |e: std::io::Error| {
        Check::warning(
            "exec",
            format!("not run: failed to fill the scratch directory: {e}"),
            None,
        )
    };
    prepare_scratch(&scratch_path).map_err(unfilled)?;
    let mut config = config.clone();
    // A synthetic run is not a decision: keep it out of the audit log.
    config.settings.log = None;
    config.project_root = Some(run_dir.to_path_buf());
    if let Some(h) = config.hooks.iter_mut().find(|h| h.name == hook.name) {
        h.timeout = limit;
        h.env.push((DOCTOR_ENV.to_owned(), "1".to_owned()));
    }
    let fitted = super::fitted::fitted_call(hook, &scratch_path).map_err(|why| {
        let fix = format!(
            "run it on a call it matches: ka-hooks run {} --tool TOOL --input \
             '{{\"arguments\": {{...}}}}' --hook {}",
            hook.event,
            shell_words::quote(&crate::terminal::escape(&hook.name))
        );
        Check::warning("exec", why, Some(fix))
    })?;
    prepare_file(&scratch_path, &fitted.file).map_err(unfilled)?;
    let mut request = Request::new(hook.event, fitted.payload);
    request.cancel = crate::interrupt::token();
    let outcome = config
        .replay(request, &hook.name)
        .map_err(|e| Check::failing("exec", format!("not run: {e}"), None))?;
    Ok((outcome, fitted.tool))
}

/// What the doctor says of an exit 0: ok, with the action it printed, unless its stdout is not a
/// valid action.
fn exit_zero_check(report: &HookReport, on: &str) -> Check {
    match (&report.action.ignored, &report.action.action) {
        (Some(why), _) => Check::warning(
            "exec",
            format!(
                "exit 0 in {} on {on}, but its stdout is not a valid action: {why}",
                ms(report)
            ),
            Some("print nothing, or one JSON object of the action language".into()),
        ),
        (None, Some(action)) => Check::ok(
            "exec",
            format!(
                "exit 0 in {} on {on}, with the action {}",
                ms(report),
                serde_json::to_string(action).unwrap_or_default()
            ),
        ),
        (None, None) => Check::ok("exec", format!("exit 0 in {} on {on}", ms(report))),
    }
}

/// What the doctor says of a hook that failed, was skipped or cancelled: failing, with its
/// error and stderr; a warning when it only outlived the doctor's cap.
fn failed_check(hook: &Hook, report: &HookReport, on: &str, limit: Duration) -> Check {
    let mut what = report.error.clone().unwrap_or_else(|| "failed".into());
    match report.exit_code {
        Some(127) => what.push_str(": command not found"),
        Some(126) => what.push_str(": command not executable"),
        _ => {}
    }
    let _ = write!(what, " on {on}");
    let stderr = first_line(&report.stderr);
    if !stderr.is_empty() {
        let _ = write!(what, "; stderr: {stderr}");
    }
    if report.timed_out && limit < hook.timeout {
        Check::warning(
            "exec",
            format!(
                "no answer within the doctor's {} cap on {on} (its own timeout is {}); \
                 it may only be slow",
                format_secs(limit),
                format_secs(hook.timeout)
            ),
            None,
        )
    } else if report.timed_out {
        Check::failing(
            "exec",
            what,
            Some(format!(
                "make it answer within {} on its stdin, or raise `timeout`",
                format_secs(hook.timeout)
            )),
        )
    } else {
        Check::failing("exec", what, None)
    }
}

/// What the doctor says of an exit 2, from [`Event::exit_two`]: a legitimate answer everywhere
/// but on advisory events (on `stop` it means "keep going", which is not an error).
fn exit_two_check(event: Event, on: &str, took: String, stderr: &str) -> Check {
    let stderr = first_line(stderr);
    let said = if stderr.is_empty() {
        String::new()
    } else {
        format!(": {stderr}")
    };
    match event.exit_two() {
        ExitTwo::Veto => Check::ok(
            "exec",
            format!("exit 2 in {took}: vetoed {on} (a legitimate answer for a guard){said}"),
        ),
        ExitTwo::KeepGoing => Check::ok(
            "exec",
            format!(
                "exit 2 in {took} on {on}: keep going (the agent continues, capped by \
                 `max_continuations`; a legitimate answer){said}"
            ),
        ),
        ExitTwo::MarkError | ExitTwo::Feedback => Check::ok(
            "exec",
            format!("exit 2 in {took} on {on}: {}{said}", event.info().exit_two),
        ),
        ExitTwo::Advisory => Check::warning(
            "exec",
            format!("exit 2 in {took} on {on}, which has no effect on {event}{said}"),
            Some(format!(
                "exit 0 or 1: exit 2 on {event} is {}",
                event.info().exit_two
            )),
        ),
    }
}
