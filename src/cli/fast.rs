//! The command lines an agent runs once per tool call, read without building clap's command tree.
//!
//! Start-up is most of the cost of `ka-hooks run` and `ka-hooks claude|codex|gemini`. This reader
//! accepts only their plain forms (each flag once, values that do not start with `-`, no `--`,
//! UTF-8) and returns `None` for anything else, which [`super::Cli`] parses: clap stays the
//! interface. A test checks that whenever this reader answers, clap gives the same [`super::Cli`].

use std::ffi::OsString;
use std::path::PathBuf;

use super::{run::RunArgs, Cli, Command, GlobalArgs};
use crate::adapter::AdapterArgs;
use crate::event::Event;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Hot {
    Run,
    Claude,
    Codex,
    Gemini,
}

#[derive(Default)]
struct Seen {
    project: Option<PathBuf>,
    trust: bool,
    log: Option<PathBuf>,
    command: Option<Hot>,
    event: Option<String>,
    tool: Option<String>,
    input: Option<String>,
    hook: Option<String>,
    example: bool,
    json: bool,
    verbose: bool,
    fail_closed: bool,
}

/// `args` as clap would parse it, or `None` when it is not one of the plain hot command lines.
pub(super) fn parse(args: &[OsString]) -> Option<Cli> {
    let mut seen = Seen::default();
    let mut rest = args.iter().skip(1);
    while let Some(arg) = rest.next() {
        let arg = arg.to_str()?;
        if let Some(long) = arg.strip_prefix("--") {
            long_flag(&mut seen, long, &mut rest)?;
        } else if arg == "-v" && seen.command == Some(Hot::Run) {
            set_flag(&mut seen.verbose)?;
        } else if arg.starts_with('-') {
            return None;
        } else {
            positional(&mut seen, arg)?;
        }
    }
    build(seen)
}

fn long_flag<'a>(
    seen: &mut Seen,
    long: &str,
    rest: &mut impl Iterator<Item = &'a OsString>,
) -> Option<()> {
    let (name, inline) = match long.split_once('=') {
        Some((name, value)) => (name, Some(value)),
        None => (long, None),
    };
    let run = seen.command == Some(Hot::Run);
    let adapter = matches!(seen.command, Some(Hot::Claude | Hot::Codex | Hot::Gemini));
    // A flag without a value takes no `=value`.
    if inline.is_some()
        && matches!(
            name,
            "trust" | "json" | "example" | "verbose" | "fail-closed"
        )
    {
        return None;
    }
    match name {
        "project" => set(&mut seen.project, value(inline, rest)?.into()),
        "log" => set(&mut seen.log, value(inline, rest)?.into()),
        "trust" => set_flag(&mut seen.trust),
        "tool" if run => set(&mut seen.tool, value(inline, rest)?),
        "input" if run => set(&mut seen.input, value(inline, rest)?),
        "hook" if run => set(&mut seen.hook, value(inline, rest)?),
        "json" if run => set_flag(&mut seen.json),
        "example" if run => set_flag(&mut seen.example),
        "verbose" if run => set_flag(&mut seen.verbose),
        "fail-closed" if adapter => set_flag(&mut seen.fail_closed),
        _ => None,
    }
}

/// An option's value: inline (`--tool=write`) or the next argument. Empty values and values that
/// look like flags are left to clap (except `-`, the stdin convention, which clap takes as a value).
fn value<'a>(
    inline: Option<&str>,
    rest: &mut impl Iterator<Item = &'a OsString>,
) -> Option<String> {
    let value = match inline {
        Some(value) => value,
        None => rest.next()?.to_str()?,
    };
    if value.is_empty() || (value.starts_with('-') && value != "-") {
        return None;
    }
    Some(value.to_owned())
}

/// Set an option once; a repeated one is clap's error to report.
fn set<T>(slot: &mut Option<T>, value: T) -> Option<()> {
    match slot {
        Some(_) => None,
        None => {
            *slot = Some(value);
            Some(())
        }
    }
}

fn set_flag(flag: &mut bool) -> Option<()> {
    if *flag {
        return None;
    }
    *flag = true;
    Some(())
}

fn positional(seen: &mut Seen, arg: &str) -> Option<()> {
    match seen.command {
        None => {
            seen.command = Some(match arg {
                "run" => Hot::Run,
                "claude" => Hot::Claude,
                "codex" => Hot::Codex,
                "gemini" => Hot::Gemini,
                _ => return None,
            });
            Some(())
        }
        // The event as clap's value parser takes it: any name or alias `Event` parses, kept as
        // written; an unknown one gets clap's error with its did-you-mean.
        Some(Hot::Run) if seen.event.is_none() && arg.parse::<Event>().is_ok() => {
            seen.event = Some(arg.to_owned());
            Some(())
        }
        Some(_) => None,
    }
}

fn build(seen: Seen) -> Option<Cli> {
    let adapter = AdapterArgs {
        fail_closed: seen.fail_closed,
        event: None,
    };
    let command = match seen.command? {
        Hot::Run => {
            if seen.input.is_some() && seen.example {
                return None;
            }
            Command::Run(RunArgs {
                event: seen.event?,
                tool: seen.tool,
                input: seen.input,
                example: seen.example,
                hook: seen.hook,
                json: seen.json,
                verbose: seen.verbose,
            })
        }
        Hot::Claude => Command::Claude(adapter),
        Hot::Codex => Command::Codex(adapter),
        Hot::Gemini => Command::Gemini(adapter),
    };
    Some(Cli {
        global: GlobalArgs {
            project: seen.project,
            trust: seen.trust,
            log: seen.log,
        },
        command,
    })
}

#[cfg(test)]
mod tests {
    use clap::Parser;
    use proptest::prelude::*;

    use super::*;

    fn argv(words: &[&str]) -> Vec<OsString> {
        std::iter::once("ka-hooks")
            .chain(words.iter().copied())
            .map(OsString::from)
            .collect()
    }

    /// Some(cli) from the fast reader implies clap parses the same line to the same `Cli`.
    fn agrees(words: &[&str]) -> Result<bool, String> {
        let args = argv(words);
        let Some(fast) = parse(&args) else {
            return Ok(false);
        };
        match Cli::try_parse_from(&args) {
            Ok(clap) if format!("{clap:?}") == format!("{fast:?}") => Ok(true),
            Ok(clap) => Err(format!("{words:?}: fast {fast:?}, clap {clap:?}")),
            Err(e) => Err(format!("{words:?}: fast {fast:?}, clap refuses: {e}")),
        }
    }

    #[test]
    fn the_command_lines_agents_run_take_the_fast_path_and_agree_with_clap() {
        let input = r#"{"arguments":{"path":"src/lib.rs"}}"#;
        for words in [
            &["run", "pre_tool_use", "--tool", "write", "--input", input][..],
            &[
                "run",
                "PreToolUse",
                "--tool=write",
                "--input=@payload.json",
                "--json",
            ],
            &["run", "stop", "-v", "--hook", "fmt", "--input", "-"],
            &["run", "session_start", "--example"],
            &[
                "--project",
                "/repo",
                "--trust",
                "run",
                "stop",
                "--log",
                "ka.jsonl",
            ],
            &["claude"],
            &["--log=/tmp/l", "claude", "--fail-closed"],
            &["codex", "--project", "run"],
            &["gemini", "--trust"],
        ] {
            assert_eq!(agrees(words), Ok(true), "{words:?}");
        }
    }

    #[test]
    fn everything_else_is_left_to_clap() {
        for words in [
            &[][..],
            &["--help"],
            &["run", "--help"],
            &["run"],
            &["run", "bogus_event"],
            &["run", "stop", "extra"],
            &["run", "stop", "--tool", "a", "--tool", "b"],
            &["run", "stop", "--json", "--json"],
            &["run", "stop", "--json=true"],
            &["run", "stop", "--tool="],
            &["run", "stop", "--tool", "-x"],
            &["run", "stop", "--input", "{}", "--example"],
            &["run", "stop", "--", "x"],
            &["run", "stop", "-vv"],
            &["--tool", "write", "run", "stop"],
            &["--json", "run", "stop"],
            &["claude", "--json"],
            &["claude", "--fail-closed", "--fail-closed"],
            &["--trust", "--trust", "claude"],
            &["list"],
            &["trust", "--yes"],
        ] {
            assert_eq!(parse(&argv(words)).map(|_| ()), None, "{words:?}");
        }
        let mut args = argv(&["run", "stop", "--log"]);
        args.push(std::os::unix::ffi::OsStringExt::from_vec(vec![0xff]));
        assert!(parse(&args).is_none());
    }

    /// Pieces of command lines: flags with their values (split on spaces), and near-misses.
    const PIECES: &[&str] = &[
        "--tool write",
        "--tool=Write",
        "--tool -",
        "--tool",
        "--tool=",
        "--input {}",
        "--input -",
        "--input=@f",
        "--input -x",
        "--json",
        "--json=1",
        "--example",
        "--hook h",
        "-v",
        "--verbose",
        "-vv",
        "--trust",
        "--trust=yes",
        "--project /tmp",
        "--project=/x",
        "--project run",
        "--log l.jsonl",
        "--log=",
        "--fail-closed",
        "--fail-closed=1",
        "--",
        "--help",
        "--version",
        "-x",
        "",
        "extra",
        "stop",
        "run",
        "claude",
    ];
    const COMMANDS: &[&str] = &["run", "claude", "codex", "gemini", "list"];
    const EVENTS: &[&str] = &["stop", "pre_tool_use", "PreToolUse", "turn_end", "bogus"];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]
        /// Global pieces, a command, an event, more pieces: mostly lines agents run and their
        /// near-misses, which is where the two readers could drift apart.
        #[test]
        fn the_fast_reader_never_disagrees_with_clap(
            before in proptest::collection::vec(0..PIECES.len(), 0..3),
            command in 0..COMMANDS.len(),
            event in proptest::option::of(0..EVENTS.len()),
            after in proptest::collection::vec(0..PIECES.len(), 0..5),
        ) {
            let pieces = before
                .iter()
                .map(|&i| PIECES[i])
                .chain(std::iter::once(COMMANDS[command]))
                .chain(event.map(|i| EVENTS[i]))
                .chain(after.iter().map(|&i| PIECES[i]));
            let mut words: Vec<&str> = Vec::new();
            for piece in pieces {
                match piece {
                    "" => words.push(""),
                    piece => words.extend(piece.split(' ')),
                }
            }
            if let Err(e) = agrees(&words) {
                return Err(TestCaseError::fail(e));
            }
        }
    }
}
