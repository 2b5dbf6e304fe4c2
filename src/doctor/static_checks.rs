//! Checks made without running anything: trust of each layer, configuration errors, and whether
//! each hook's command resolves.

use super::*;

pub(crate) fn trust_fix(root: Option<&Path>) -> String {
    root.map(config::trust_command)
        .unwrap_or_else(|| "ka-hooks trust".into())
}

/// What is wrong with a skipped layer, after "the layer".
pub(crate) fn trust_words(status: TrustStatus) -> &'static str {
    match status {
        TrustStatus::Stale => "has changed since it was trusted",
        TrustStatus::Removed => "was removed since it was trusted",
        TrustStatus::Untrusted | TrustStatus::Trusted => "is not trusted",
    }
}

pub(crate) fn config_entry(error: &ConfigError) -> Entry {
    let mut message = String::new();
    if let Some(key) = &error.key {
        let _ = write!(message, "`{key}`: ");
    }
    message.push_str(&error.message);
    let at = match (error.line, error.column) {
        (Some(l), Some(c)) => format!("line {l}, column {c}: "),
        (Some(l), None) => format!("line {l}: "),
        _ => String::new(),
    };
    Entry {
        kind: Kind::Config,
        name: error.file.display().to_string(),
        state: State::Failing,
        event: None,
        filter: None,
        command: None,
        layer: None,
        file: Some(error.file.clone()),
        line: error.line,
        runs: None,
        checks: vec![Check::failing(
            "config",
            format!("{at}{message}"),
            error.help.clone(),
        )],
    }
    .finish()
}

pub(crate) fn layer_entry(skipped: &Untrusted, full: Option<&Config>) -> Entry {
    let what = match full {
        Some(full) => {
            let defined = full
                .hooks
                .iter()
                .filter(|h| *h.source.file == *skipped.file)
                .count();
            let overridden = full
                .hooks
                .iter()
                .filter(|h| h.overrides.iter().any(|o| *o.source.file == *skipped.file))
                .count();
            match (defined, overridden) {
                (0, 0) => "it defines no hooks".to_owned(),
                (d, 0) => format!("its {d} hook(s) do not run"),
                (0, o) => format!("its overrides of {o} hook(s) are not applied"),
                (d, o) => format!(
                    "its {d} hook(s) do not run and its overrides of {o} hook(s) are not applied"
                ),
            }
        }
        None => "its hooks could not be read (see the configuration errors)".to_owned(),
    };
    Entry {
        kind: Kind::Layer,
        name: skipped.file.display().to_string(),
        state: State::Failing,
        event: None,
        filter: None,
        command: None,
        layer: Some(skipped.layer),
        file: Some(skipped.file.clone()),
        line: None,
        runs: None,
        checks: vec![Check::failing(
            "trust",
            format!(
                "the layer {}, so it is skipped: {what}",
                trust_words(skipped.status)
            ),
            Some(skipped.fix.clone()),
        )],
    }
    .finish()
}

pub(crate) fn trust_check(hook: &Hook, config: &Config, fix: &str) -> Check {
    let state = config
        .layers
        .iter()
        .find(|l| *l.file == *hook.source.file)
        .map(|l| l.state);
    match (hook.source.layer, state) {
        (Layer::User, _) => Check::ok("trust", "user layer: always trusted"),
        (layer, Some(LayerState::TrustedOnce)) => Check::warning(
            "trust",
            format!("{layer} layer trusted for this run only (--trust): in a session this hook does not run"),
            Some(fix.to_owned()),
        ),
        (layer, Some(LayerState::TrustedRoot)) => {
            Check::ok("trust", format!("{layer} layer: under a trusted root"))
        }
        (layer, _) => Check::ok("trust", format!("{layer} layer: trusted")),
    }
}

/// Overrides of a hook in effect written in a layer the gate skipped: not applied until trusted.
pub(crate) fn pending_overrides(
    hook: &Hook,
    full: Option<&Config>,
    untrusted: &[Untrusted],
) -> Vec<Check> {
    let Some(full_hook) = full.filter(|_| hook.named).and_then(|f| f.hook(&hook.name)) else {
        return Vec::new();
    };
    full_hook
        .overrides
        .iter()
        .filter_map(|o| {
            let skipped = untrusted.iter().find(|u| *u.file == *o.source.file)?;
            Some(Check::warning(
                "trust",
                format!(
                    "the {} layer {} sets {} of this hook, but it {}: not applied",
                    skipped.layer,
                    skipped.file.display(),
                    o.keys.join(", "),
                    trust_words(skipped.status)
                ),
                Some(skipped.fix.clone()),
            ))
        })
        .collect()
}

/// A disabled hook cannot fail anything: its problems are warnings.
pub(crate) fn downgrade(checks: &mut [Check]) {
    for c in checks {
        if c.state == State::Failing {
            c.state = State::Warning;
        }
    }
}

pub(crate) fn hook_entry(hook: &Hook, run_dir: &Path) -> Entry {
    Entry {
        kind: Kind::Hook,
        name: hook.name.clone(),
        state: State::Ok,
        event: Some(hook.event.as_str()),
        filter: hook.event.is_tool_event().then(|| hook.filter.describe()),
        command: Some(hook.command.clone()),
        layer: Some(hook.source.layer),
        file: Some(hook.source.file.to_path_buf()),
        line: Some(hook.source.line),
        runs: None,
        checks: {
            let mut checks = command_checks(hook, run_dir);
            if let Some(message) = fail_open_warning(hook) {
                let fix = format!("set `on_error = \"block\"` on {}", which_hook(hook));
                checks.push(Check::warning("on_error", message, Some(fix)));
            }
            checks
        },
    }
}

/// How a message names `hook`: by its `name`, or, when it has none, by where its entry is (its
/// default name, `pre_tool_use#2`, counts the hooks of every layer: it is in no file, and shifts
/// when another file gains or loses a hook).
pub(crate) fn which_hook(hook: &Hook) -> String {
    if hook.named {
        format!("hook `{}`", hook.name)
    } else {
        format!(
            "the {} hook without a name at {}:{}",
            hook.event,
            crate::terminal::escape_path(&hook.source.file),
            hook.source.line
        )
    }
}

/// A guard (a hook of an event that can veto) that fails open: with `on_error = "ignore"` set for
/// it (the default there is `block`), a guard that crashes, times out or prints what cannot be
/// applied lets the call through, which users do not expect of a guard. A warning for `check`
/// and `doctor`, never an error.
pub fn fail_open_warning(hook: &Hook) -> Option<String> {
    (hook.enabled && hook.event.is_pipeline() && hook.on_error == config::OnError::Ignore).then(
        || {
            format!(
                "{} on {} fails open: on_error = \"ignore\" is set for it (the default on \
                 {} is \"block\"), so the {} \
                 proceeds when the hook crashes, times out or prints what cannot be applied; \
                 set on_error = \"block\" (or \"ask\") if it is a guard",
                which_hook(hook),
                hook.event,
                hook.event,
                if hook.event == Event::UserPromptSubmit {
                    "prompt"
                } else {
                    "tool call"
                }
            )
        },
    )
}

/// The hook's environment as the runner sets it, for expanding the command.
pub(crate) fn hook_lookup<'a>(
    hook: &'a Hook,
    run_dir: &'a Path,
) -> impl Fn(&str) -> Option<String> + 'a {
    move |name: &str| {
        if let Some((_, v)) = hook.env.iter().rev().find(|(k, _)| k == name) {
            return Some(v.clone());
        }
        match name {
            "KA_PROJECT_DIR" | "CLAUDE_PROJECT_DIR" | "PWD" => {
                Some(run_dir.to_string_lossy().into_owned())
            }
            "KA_EVENT" => Some(hook.event.as_str().to_owned()),
            "KA_HOOK_NAME" => Some(hook.name.clone()),
            _ => std::env::var(name).ok(),
        }
    }
}

/// How a check says a program is not installed on this machine (which may differ from the machine
/// the hooks run on): `check` reports it as a warning, not as a hook that cannot run.
pub(crate) const NOT_ON_PATH: &str = "is not on PATH";

/// Whether a failing command check is about a program missing from `PATH` (see [`NOT_ON_PATH`]).
pub(crate) fn is_missing_program(check: &Check) -> bool {
    check.message.ends_with(NOT_ON_PATH)
}

/// Whether the command resolves: its first word is a builtin, on `PATH`, or an existing file
/// (executable when run directly), and a script handed to an interpreter exists.
pub(crate) fn command_checks(hook: &Hook, run_dir: &Path) -> Vec<Check> {
    let lookup = hook_lookup(hook, run_dir);
    let unchecked = |why: &str| {
        vec![Check::warning(
            "command",
            format!(
                "{NOT_CHECKED} the command starts with {why}; `ka-hooks doctor --exec` runs it"
            ),
            None,
        )]
    };
    let words = match first_command(&hook.command, &lookup) {
        Ok(words) => words,
        Err(why) => return unchecked(&why),
    };
    let mut words = skip_prefix(words).into_iter();
    let Some(program) = words.next() else {
        return unchecked("no command word");
    };
    let args: Vec<Word> = words.collect();
    if program.dynamic {
        return unchecked("a shell expansion");
    }
    let name = program.text.as_str();
    if KEYWORDS.contains(&name) {
        return unchecked(&format!("the compound command `{name}`"));
    }
    let path_var = lookup("PATH").unwrap_or_default();

    if name.contains('/') {
        let path = join(run_dir, name);
        let check = file_check(name, &path, true, run_dir);
        if check.state == State::Ok {
            if let Some(broken) = shebang_check(name, &path, &path_var, run_dir) {
                return vec![broken];
            }
        }
        return vec![check];
    }
    if name == "." || name == "source" {
        let mut checks = vec![Check::ok("command", format!("`{name}` is a shell builtin"))];
        if let Some(script) = args.first() {
            checks.push(script_check(script, run_dir));
        }
        return checks;
    }
    if BUILTINS.contains(&name) {
        return vec![Check::ok("command", format!("`{name}` is a shell builtin"))];
    }
    program_on_path(name, &args, &path_var, run_dir)
}

/// The words from the program on: without leading assignments, `!`, and wrappers such as
/// `exec` and `env X=1`.
fn skip_prefix(words: Vec<Word>) -> Vec<Word> {
    let mut words = words.into_iter().peekable();
    while let Some(w) = words.peek() {
        let skip = !w.dynamic
            && (is_assignment(&w.text)
                || w.text == "!"
                || WRAPPERS.contains(&w.text.as_str())
                || (w.text.starts_with('-') && w.text.len() > 1));
        if !skip {
            break;
        }
        words.next();
    }
    words.collect()
}

/// The checks of a program named without a `/`: where `PATH` finds it, and for an interpreter,
/// that the script it is handed exists.
fn program_on_path(name: &str, args: &[Word], path_var: &str, run_dir: &Path) -> Vec<Check> {
    let Some(found) = find_on_path(name, path_var, run_dir) else {
        return vec![Check::failing(
            "command",
            format!("`{name}` is not a shell builtin and {NOT_ON_PATH}"),
            Some(format!(
                "install `{name}`, or give its path (commands run in {})",
                run_dir.display()
            )),
        )];
    };
    let mut checks = vec![Check::ok(
        "command",
        format!("`{name}` is {}", found.display()),
    )];
    let base = name.rsplit('/').next().unwrap_or(name);
    let interpreter = INTERPRETERS.contains(&base)
        || (base.starts_with("python")
            && base[6..].chars().all(|c| c.is_ascii_digit() || c == '.'));
    if interpreter {
        if let Some(script) = script_argument(args) {
            checks.push(script_check(script, run_dir));
        }
    }
    checks
}

/// The script an interpreter runs: its first argument that is no option nor an option's value;
/// `None` for inline code (`sh -c`, `python3 -m`, `node -e`).
pub(crate) fn script_argument(args: &[Word]) -> Option<&Word> {
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let text = arg.text.as_str();
        if arg.dynamic || !(text.starts_with('-') || text.starts_with('+')) {
            return Some(arg);
        }
        if INLINE_FLAGS.contains(&text) {
            return None;
        }
        if VALUE_OPTIONS.contains(&text) {
            args.next();
        }
    }
    None
}

/// A file run directly (`executable`) or read by an interpreter.
pub(crate) fn file_check(written: &str, path: &Path, executable: bool, run_dir: &Path) -> Check {
    let what = if executable { "command" } else { "script" };
    let check = if executable { "command" } else { "script" };
    match std::fs::metadata(path) {
        Err(_) => Check::failing(
            check,
            format!(
                "{what} `{written}` does not exist (looked for {})",
                path.display()
            ),
            Some(format!(
                "fix the path: commands run in {}, and relative paths start there",
                run_dir.display()
            )),
        ),
        Ok(m) if m.is_dir() => Check::failing(
            check,
            format!("{what} `{written}` is a directory"),
            Some("name the script inside it".into()),
        ),
        Ok(m) if executable && m.permissions().mode() & 0o111 == 0 => Check::failing(
            check,
            format!("`{written}` is not executable"),
            Some(format!("chmod +x {}", quote(path))),
        ),
        Ok(_) if executable => Check::ok(check, format!("`{written}` is an executable file")),
        Ok(_) => Check::ok(check, format!("script `{written}` exists")),
    }
}

pub(crate) fn script_check(script: &Word, run_dir: &Path) -> Check {
    if script.dynamic {
        return Check::warning(
            "script",
            format!(
                "{NOT_CHECKED} the script is a shell expansion; `ka-hooks doctor --exec` runs it"
            ),
            None,
        );
    }
    file_check(&script.text, &join(run_dir, &script.text), false, run_dir)
}

/// The `#!` line of an executable script names an interpreter that exists.
pub(crate) fn shebang_check(
    written: &str,
    path: &Path,
    path_var: &str,
    run_dir: &Path,
) -> Option<Check> {
    let mut head = [0u8; 256];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .ok()?;
    let head = &head[..n];
    let line = head.strip_prefix(b"#!")?;
    let line = &line[..line.iter().position(|&b| b == b'\n').unwrap_or(line.len())];
    let line = String::from_utf8_lossy(line);
    if line.ends_with('\r') {
        return Some(Check::failing(
            "command",
            format!(
                "`{written}` has Windows line endings: its #! line ends with a carriage return"
            ),
            Some(format!("sed -i 's/\\r$//' {}", quote(path))),
        ));
    }
    let mut parts = line.split_whitespace();
    let interpreter = parts.next()?;
    if !is_executable(Path::new(interpreter)) {
        return Some(Check::failing(
            "command",
            format!("the #! interpreter `{interpreter}` of `{written}` does not exist"),
            Some(format!("fix the first line of {}", quote(path))),
        ));
    }
    if interpreter.ends_with("/env") {
        let program = parts.find(|p| !p.starts_with('-') && !is_assignment(p))?;
        if find_on_path(program, path_var, run_dir).is_none() {
            return Some(Check::failing(
                "command",
                format!("`{written}` runs `{program}` (#!{line}), which {NOT_ON_PATH}"),
                Some(format!(
                    "install `{program}`, or fix the first line of the script"
                )),
            ));
        }
    }
    None
}
