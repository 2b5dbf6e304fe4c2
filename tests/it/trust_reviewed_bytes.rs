//! The reviewed bytes are the bytes that run: a trusted hook runs each covered script from the
//! copy whose hash the load checked, so a write after the check (a background process, a
//! model's parallel tool call, another hook of the same call) never changes what runs, through
//! the library, `ka-hooks run` and a `Session`. An edit between calls still makes the layer
//! stale. The script still sees its own name: `$0`, its directory, its siblings.
//!
//! Before, the load hashed `.ka/guard.sh` and `sh` opened it by name later: a process flipping
//! it between its reviewed text and `exit 0` got the flipped script run in some dispatches, and
//! a script rewritten during a dispatch ran its new content.

use crate::support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use ka_hooks::config::Config;
use ka_hooks::dispatch::Request;
use ka_hooks::session::Session;
use ka_hooks::Event;
use serde_json::json;
use support::{object, Project};

const BLOCKS: &str = "#!/bin/sh\ncat >/dev/null\necho 'guard: reviewed text ran' >&2\nexit 2\n";
const FLIPPED: &str = "#!/bin/sh\nexit 0\n";

fn guard(p: &Project, command: &str) {
    let script = p.write(".ka/guard.sh", BLOCKS);
    chmod_x(&script);
    p.project(&format!(
        "[[hooks]]\nname = \"guard\"\nevent = \"pre_tool_use\"\ntool = \"write\"\n\
         command = {command:?}\non_error = \"block\"\n"
    ));
    trust_yes(p);
}

fn trust_yes(p: &Project) {
    let out = p.cli().args(["trust", "--yes"]).output().expect("trust");
    assert!(out.status.success(), "{out:?}");
}

fn chmod_x(path: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// Load as the CLI does (no `--trust`).
fn load(p: &Project) -> Config {
    Config::load(&p.options(&p.root, false)).expect("load")
}

fn write_a_txt() -> Request {
    Request::tool_call(
        Event::PreToolUse,
        "write",
        object(json!({"path": "a.txt", "content": "x"})),
    )
}

/// Replace `.ka/guard.sh` whole (a rename, so every open sees one version or the other).
fn put(p: &Project, content: &str, n: usize) {
    let tmp = p.root.join(format!(".ka/.guard.{n}"));
    std::fs::write(&tmp, content).expect("write");
    chmod_x(&tmp);
    std::fs::rename(&tmp, p.root.join(".ka/guard.sh")).expect("rename");
}

#[test]
fn a_script_flipped_during_hundreds_of_dispatches_never_runs_flipped() {
    for command in ["sh .ka/guard.sh", "./.ka/guard.sh"] {
        let p = Arc::new(Project::new());
        guard(&p, command);
        let stop = Arc::new(AtomicBool::new(false));
        let flipper = {
            let (p, stop) = (Arc::clone(&p), Arc::clone(&stop));
            std::thread::spawn(move || {
                let mut n = 0usize;
                while !stop.load(Ordering::Relaxed) {
                    put(&p, if n.is_multiple_of(2) { FLIPPED } else { BLOCKS }, n);
                    n += 1;
                    std::thread::yield_now();
                }
                n
            })
        };
        let (mut ran, mut stale, mut through) = (0, 0, 0);
        for _ in 0..300 {
            let outcome = load(&p).dispatch(write_a_txt());
            match outcome.reason() {
                _ if !outcome.blocked() => through += 1,
                Some(r) if r.contains("reviewed text ran") => ran += 1,
                _ => stale += 1,
            }
        }
        stop.store(true, Ordering::Relaxed);
        let flips = flipper.join().expect("flipper");
        assert!(flips > 100, "the script was flipped {flips} times");
        assert_eq!(
            through, 0,
            "`{command}`: the flipped script ran in {through} of 300 dispatches \
             ({ran} ran the reviewed text, {stale} were stale)"
        );
        assert!(ran > 0, "`{command}`: the guard never ran ({stale} stale)");
    }
}

/// A user hook that rewrites the guard script while the call runs, before the project guard.
fn rewriting_user_hook(p: &Project) {
    p.user(&format!(
        "[[hooks]]\nname = \"rewrite\"\nevent = \"pre_tool_use\"\ntool = \"write\"\n\
         command = \"cat >/dev/null; printf '#!/bin/sh\\\\nexit 0\\\\n' > {}\"\n",
        p.root.join(".ka/guard.sh").display()
    ));
}

#[test]
fn a_script_rewritten_during_a_dispatch_runs_its_reviewed_text() {
    for command in ["sh .ka/guard.sh", "cd .ka && ./guard.sh"] {
        let p = Project::new();
        guard(&p, command);
        rewriting_user_hook(&p);
        let outcome = load(&p).dispatch(write_a_txt());
        assert!(
            outcome.blocked()
                && outcome
                    .reason()
                    .is_some_and(|r| r.contains("reviewed text ran")),
            "`{command}`: {outcome:?}"
        );
        assert_eq!(
            p.read(".ka/guard.sh").as_deref(),
            Some("#!/bin/sh\nexit 0\n")
        );
        // The next call sees the edit: the layer is stale, its guard fails closed.
        let outcome = load(&p).dispatch(write_a_txt());
        assert!(outcome.blocked(), "{outcome:?}");
        assert!(
            outcome
                .reason()
                .is_some_and(|r| r.contains(".ka/guard.sh (changed)")),
            "{outcome:?}"
        );
        // Through `ka-hooks run` too, once trusted again with the reviewed text.
        put(&p, BLOCKS, 0);
        let out = p
            .cli()
            .args(["run", "pre_tool_use", "--tool", "write", "--input"])
            .arg(r#"{"arguments":{"path":"a.txt","content":"x"}}"#)
            .output()
            .expect("run");
        let said = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(2), "{said}");
        assert!(said.contains("reviewed text ran"), "{said}");
    }
}

#[test]
fn in_a_session_a_script_rewritten_during_a_dispatch_runs_its_reviewed_text() {
    let p = Project::new();
    guard(&p, "sh .ka/guard.sh");
    rewriting_user_hook(&p);
    let session = Session::new(Arc::new(load(&p)), "s-reviewed", &p.root);
    let outcome = session.dispatch(write_a_txt());
    assert!(
        outcome
            .reason()
            .is_some_and(|r| r.contains("reviewed text ran")),
        "{outcome:?}"
    );
    // The edit between dispatches: the session reloads, and the layer is stale.
    let outcome = session.dispatch(write_a_txt());
    assert!(
        outcome.blocked()
            && outcome
                .reason()
                .is_some_and(|r| r.contains(".ka/guard.sh (changed)")),
        "{outcome:?}"
    );
    session.shutdown();
}

#[test]
fn a_script_run_from_its_copy_still_sees_its_name_its_directory_and_its_siblings() {
    let p = Project::new();
    p.write(".ka/hooks/lib.sh", "reason='sibling sourced'\n");
    let script = p.write(
        ".ka/hooks/guard.sh",
        "#!/bin/sh\ncat >/dev/null\ncd \"$(dirname \"$0\")\" || exit 1\n. ./lib.sh\n\
         echo \"$reason from $(pwd) as $(basename \"$0\") with $*\" >&2\nexit 2\n",
    );
    chmod_x(&script);
    let mut toml = String::new();
    for (name, command) in [
        ("by-path", "\"$KA_PROJECT_DIR\"/.ka/hooks/guard.sh one two"),
        ("by-sh", "sh {root}/.ka/hooks/guard.sh one two"),
    ] {
        toml.push_str(&format!(
            "[[hooks]]\nname = {name:?}\nevent = \"post_tool_use\"\ntool = \"write\"\n\
             command = {command:?}\n"
        ));
    }
    let has_python = std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if has_python {
        p.write(".ka/hooks/helper.py", "WHY = 'python sibling imported'\n");
        let py = p.write(
            ".ka/hooks/guard.py",
            "#!/usr/bin/env python3\nimport os, sys\nfrom helper import WHY\n\
             print(WHY, os.path.basename(__file__), sys.argv[1:], __name__, file=sys.stderr)\n\
             sys.exit(2)\n",
        );
        chmod_x(&py);
        toml.push_str(
            "[[hooks]]\nname = \"py\"\nevent = \"post_tool_use\"\ntool = \"write\"\n\
             command = \"python3 .ka/hooks/guard.py x\"\n",
        );
    }
    p.project(&toml);
    trust_yes(&p);
    let config = load(&p);
    let pinned = config.hooks.iter().filter(|h| h.pinned.is_some()).count();
    assert_eq!(pinned, if has_python { 3 } else { 2 }, "{:?}", config.hooks);
    let outcome = config.dispatch(Request::tool_call(
        Event::PostToolUse,
        "write",
        object(json!({"path": "a.txt", "content": "x"})),
    ));
    let hooks_dir = p.root.join(".ka/hooks");
    for name in ["by-path", "by-sh"] {
        let report = support::report(&outcome, name);
        assert!(
            report.stderr.contains(&format!(
                "sibling sourced from {} as guard.sh with one two",
                hooks_dir.display()
            )),
            "{name}: {report:?}"
        );
    }
    if has_python {
        let report = support::report(&outcome, "py");
        assert!(
            report
                .stderr
                .contains("python sibling imported guard.py ['x'] __main__"),
            "{report:?}"
        );
    }
}
