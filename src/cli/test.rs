//! `ka-hooks test`: run the project's golden cases and report them like a test runner.

use clap::Args;

use super::{load, Output, EXIT_ERROR, EXIT_OK};
use crate::config::{Config, LayerState, LoadOptions};
use crate::golden::{self, CaseResult};

/// `ka-hooks test`.
#[derive(Debug, Args)]
#[command(after_help = "\
Cases live in <root>/.ka/tests/*.toml (`ka-hooks init` writes an example). Each [[case]] gives an
event, a tool and its arguments (or a payload) and `expect = { ... }`: verdict = \"blocked\" |
\"blocked (deny)\" | \"ask\" | \"allow\" | \"proceed\" | \"mark_error\", reason_contains = \"...\",
updated_input = { ... } (a subset), mode, feedback_contains, notes_contains, or any field of
`ka-hooks run --json` (FIELD = value, FIELD_contains = \"text\").

Exit codes: 0 every selected case passed; 1 a case failed, a case file has an error, no case
was selected, or a layer was skipped (untrusted or changed: its hooks would not run).")]
pub struct TestArgs {
    /// Run only the cases whose `<file>: <name>` contains this text (case-insensitive).
    filter: Option<String>,
    /// Print the results as JSON (with each case's outcome).
    #[arg(long)]
    json: bool,
}

pub fn run(opts: &LoadOptions, args: TestArgs, out: &Output) -> Result<u8, String> {
    let config = load(opts, out)?;
    let Some(root) = config.project_root.clone() else {
        return Err(format!(
            "no project: no directory from {} up has `.ka/`; run `ka-hooks init` in the project",
            crate::terminal::escape_path(&opts.start_dir)
        ));
    };
    let mut errors = skipped_or_off(&config);
    let files = golden::case_files(&root)?;
    let (mut cases, file_errors) = golden::read_cases(&files);
    errors.extend(file_errors);
    if let Some(filter) = &args.filter {
        let filter = filter.to_lowercase();
        cases.retain(|c| golden::case_id(c).to_lowercase().contains(&filter));
    }
    if errors.is_empty() && cases.is_empty() {
        errors.push(match (&args.filter, files.is_empty()) {
            (_, true) => format!(
                "no case files in {}; write one (`ka-hooks init` writes an example)",
                crate::terminal::escape_path(&root.join(golden::TESTS_DIR))
            ),
            (Some(f), false) => format!("no case matches `{}`", crate::terminal::escape(f)),
            (None, false) => "the case files hold no [[case]]".to_owned(),
        });
    }
    let results: Vec<CaseResult> = if errors.is_empty() {
        cases
            .iter()
            .map(|case| {
                let result = golden::run_case(&config, &root, case, crate::interrupt::token());
                if !args.json {
                    print_result(&result, out);
                }
                result
            })
            .collect()
    } else {
        Vec::new()
    };
    let failed = results.iter().filter(|r| !r.passed).count();
    let passed = results.len() - failed;
    let ok = errors.is_empty() && failed == 0;
    if args.json {
        let value = serde_json::json!({
            "ok": ok,
            "passed": passed,
            "failed": failed,
            "errors": errors,
            "cases": results,
        });
        outln!(
            "{}",
            serde_json::to_string_pretty(&value).unwrap_or_default()
        );
    } else {
        for e in &errors {
            out.error(e);
        }
        let word = if ok {
            out.paint("1;32", "ok")
        } else {
            out.paint("1;31", "FAILED")
        };
        outln!(
            "\ntest result: {word}. {passed} passed; {failed} failed{}",
            if errors.is_empty() {
                String::new()
            } else {
                format!("; {} error(s)", errors.len())
            }
        );
    }
    Ok(if ok { EXIT_OK } else { EXIT_ERROR })
}

/// Why the cases would prove nothing: a layer skipped (its hooks would not run), or every hook
/// off.
fn skipped_or_off(config: &Config) -> Vec<String> {
    let mut errors = Vec::new();
    for u in &config.untrusted {
        errors.push(format!(
            "the {} layer {} was skipped ({}), so its hooks would not run and the cases would \
             pass or fail for nothing; trust it: {}",
            u.layer.as_str(),
            crate::terminal::escape_path(&u.file),
            state_word(u.state),
            crate::terminal::escape(&u.fix)
        ));
    }
    if let Some(why) = &config.settings.disabled {
        errors.push(format!(
            "every hook is off ({}), so the cases would test nothing",
            crate::terminal::escape(why)
        ));
    }
    errors
}

fn print_result(result: &CaseResult, out: &Output) {
    if result.passed {
        outln!(
            "{}      {}  ({:.0} ms)",
            out.paint("32", "ok"),
            result.id,
            result.duration_ms
        );
        return;
    }
    outln!(
        "{}  {}  ({}:{})",
        out.paint("1;31", "FAILED"),
        result.id,
        crate::terminal::escape_path(&result.file),
        result.line
    );
    for failure in &result.failures {
        outln!("        {failure}");
    }
    if let Some(outcome) = &result.outcome {
        if let Some(reason) = &outcome.reason {
            outln!("        (reason: {})", crate::terminal::escape(reason));
        }
        for h in &outcome.hooks {
            if let Some(e) = &h.error {
                outln!(
                    "        (hook {}: {})",
                    crate::terminal::escape(&h.name),
                    crate::terminal::escape(e)
                );
            }
        }
    }
}

fn state_word(state: LayerState) -> &'static str {
    match state {
        LayerState::Stale => "changed since it was trusted",
        LayerState::Removed => "removed since it was trusted",
        LayerState::Refused => "refused",
        LayerState::Invalid => "it has configuration errors",
        _ => "untrusted",
    }
}
