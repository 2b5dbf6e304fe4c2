//! Trust says exactly what it covers: a guard run as `cd .ka/hooks && ./guard.sh`,
//! `make -s guard`, `npm run -s guard` or `python3 -m pkg` is covered by the file that defines
//! what runs, so editing that file after `trust` makes the guard fail closed (stale), through
//! `ka-hooks run` and the Claude adapter; and the review names, per hook, the files it covers and
//! what it cannot cover.
//!
//! Before, `./guard.sh` after `cd` was looked up at the project root ("no such file"),
//! and the Makefile, `package.json` and the package of `python3 -m` were never recorded: each
//! edit below ran the edited file unreviewed, and the call went through.

use crate::support;
use crate::support::readme_write;

use std::process::Command;

use serde_json::json;
use support::Project;

/// A project guard on writes that runs `command`; the files it needs are written by the caller.
fn project_write_guard(command: &str) -> Project {
    let p = Project::new();
    p.project(&format!(
        "[[hooks]]\nname = \"guard\"\nevent = \"pre_tool_use\"\ntool = \"write\"\n\
         command = {command:?}\n"
    ));
    p
}

/// `ka-hooks trust --yes`: its review.
fn trust_review(p: &Project) -> String {
    let out = p.cli().args(["trust", "--yes"]).output().expect("trust");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The same write through `ka-hooks claude`: whether Claude is told to deny it (exit 2, or a
/// `permissionDecision` of `deny`), and all it was told.
fn claude_write(p: &Project) -> (bool, String) {
    let payload = json!({
        "hook_event_name": "PreToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": "README.md", "content": "x"},
        "cwd": p.root,
        "session_id": "s",
    });
    let out = p
        .cli()
        .env("CLAUDE_PROJECT_DIR", &p.root)
        .arg("claude")
        .write_stdin(payload.to_string())
        .output()
        .expect("claude");
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    let denied = out.status.code() == Some(2)
        || answer["hookSpecificOutput"]["permissionDecision"] == "deny";
    let told = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (denied, told)
}

/// After `edit`, both dispatches are blocked as stale, naming `changed`.
fn stale_after(p: &Project, edit: impl FnOnce(), changed: &str) {
    edit();
    let (code, out) = readme_write(p, &p.root);
    assert_eq!(code, Some(2), "ka-hooks run let the call through:\n{out}");
    assert!(out.contains(&format!("{changed} (changed)")), "{out}");
    let (denied, told) = claude_write(p);
    assert!(denied, "ka-hooks claude let the call through:\n{told}");
    assert!(told.contains(changed), "{told}");
}

fn has(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

const BLOCKS: &str = "#!/bin/sh\ncat >/dev/null\necho 'guard: no writes' >&2\nexit 2\n";
const LETS_THROUGH: &str = "#!/bin/sh\nexit 0\n";

#[test]
fn a_script_run_after_cd_is_covered_and_editing_it_fails_closed() {
    let p = project_write_guard("cd .ka/hooks && ./guard.sh");
    let script = p.write(".ka/hooks/guard.sh", BLOCKS);
    support_chmod_x(&script);
    let review = trust_review(&p);
    assert!(
        support::review_of(&review, "guard").contains("\n    covers .ka/hooks/guard.sh: new"),
        "{review}"
    );
    assert!(!review.contains("no such file"), "{review}");
    let (code, out) = readme_write(&p, &p.root);
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("guard: no writes"), "{out}");
    stale_after(
        &p,
        || {
            p.write(".ka/hooks/guard.sh", LETS_THROUGH);
        },
        ".ka/hooks/guard.sh",
    );
}

#[test]
fn make_covers_the_makefile_and_names_what_it_cannot() {
    let p = project_write_guard("make -s guard");
    p.write("Makefile", "guard:\n\t@sh guard.sh\n");
    p.write("guard.sh", BLOCKS);
    let review = trust_review(&p);
    assert!(
        support::review_of(&review, "guard").contains("\n    covers Makefile: new"),
        "{review}"
    );
    assert!(
        support::review_of(&review, "guard")
            .contains("not covered: `make -s guard`: the makefile is covered, not the files"),
        "{review}"
    );
    if has("make") {
        let (code, out) = readme_write(&p, &p.root);
        assert_eq!(code, Some(2), "{out}");
        assert!(out.contains("guard: no writes"), "{out}");
    }
    stale_after(
        &p,
        || {
            p.write("Makefile", "guard:\n\t@true\n");
        },
        "Makefile",
    );
}

#[test]
fn a_gnumakefile_created_after_trust_fails_closed() {
    // GNU make reads GNUmakefile before Makefile: creating one changes what runs.
    let p = project_write_guard("make -s guard");
    p.write("Makefile", "guard:\n\t@sh guard.sh\n");
    p.write("guard.sh", BLOCKS);
    trust_review(&p);
    p.write("GNUmakefile", "guard:\n\t@true\n");
    let (code, out) = readme_write(&p, &p.root);
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("GNUmakefile (created)"), "{out}");
}

#[test]
fn npm_run_covers_package_json() {
    let p = project_write_guard("npm run -s guard");
    p.write(
        "package.json",
        r#"{"name": "x", "version": "1.0.0", "scripts": {"guard": "sh guard.sh"}}"#,
    );
    p.write("guard.sh", BLOCKS);
    let review = trust_review(&p);
    assert!(
        support::review_of(&review, "guard").contains("\n    covers package.json: new"),
        "{review}"
    );
    assert!(
        support::review_of(&review, "guard").contains("not covered: `npm run -s guard`"),
        "{review}"
    );
    if has("npm") {
        let (code, out) = readme_write(&p, &p.root);
        assert_eq!(code, Some(2), "{out}");
    }
    stale_after(
        &p,
        || {
            p.write(
                "package.json",
                r#"{"name": "x", "version": "1.0.0", "scripts": {"guard": "true"}}"#,
            );
        },
        "package.json",
    );
}

#[test]
fn python_m_covers_the_package_in_the_project() {
    let p = project_write_guard("python3 -m guardpkg");
    p.write("guardpkg/__init__.py", "");
    p.write(
        "guardpkg/__main__.py",
        "import sys\nsys.stdin.read()\nprint('guard: no writes', file=sys.stderr)\nsys.exit(2)\n",
    );
    let review = trust_review(&p);
    assert!(
        support::review_of(&review, "guard").contains(
            "\n    covers guardpkg/__init__.py: new (read it before trusting)\n    \
             covers guardpkg/__main__.py: new"
        ),
        "{review}"
    );
    assert!(review.contains("not the modules it imports"), "{review}");
    if has("python3") {
        let (code, out) = readme_write(&p, &p.root);
        assert_eq!(code, Some(2), "{out}");
        assert!(out.contains("guard: no writes"), "{out}");
    }
    stale_after(
        &p,
        || {
            p.write("guardpkg/__main__.py", "import sys\nsys.exit(0)\n");
        },
        "guardpkg/__main__.py",
    );
    // A module from Python's path is named as not covered.
    let q = project_write_guard("python3 -m somewhere_else");
    let review = trust_review(&q);
    assert!(
        review.contains("module `somewhere_else` is found on Python's path, outside the project"),
        "{review}"
    );
}

fn support_chmod_x(path: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}
