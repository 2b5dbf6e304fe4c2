//! `ka-hooks test`: golden cases in `.ka/tests/*.toml`, run through the real binary and the real
//! layers. The shipped examples come with their cases, and they pass.

use crate::support;

use std::fs;
use std::path::Path;

use predicates::prelude::*;
use serde_json::Value;
use support::{hook, Project};

const GUARD: &str =
    r#"grep -q '"path":"/etc' && { echo "no writes to /etc" >&2; exit 2; }; exit 0"#;

const CASES: &str = r#"
[[case]]
name = "a write to /etc is blocked"
event = "pre_tool_use"
tool = "write"
arguments = { path = "/etc/passwd" }
expect = { verdict = "blocked", reason_contains = "no writes to /etc" }

[[case]]
name = "a write to src is allowed"
event = "pre_tool_use"
tool = "write"
arguments = { path = "src/a.rs" }
expect = { verdict = "proceed" }
"#;

/// A failing case: the guard lets `/tmp` through, the case says it must block.
const FAILING_CASE: &str = r#"
[[case]]
name = "a write to /tmp is blocked"
event = "pre_tool_use"
tool = "write"
arguments = { path = "/tmp/x" }
expect = { verdict = "blocked" }
"#;

fn etc_guarded() -> Project {
    let p = Project::with_user_toml(&hook("etc-guard", "pre_tool_use", GUARD, &[]));
    p.write(".ka/tests/guard.toml", CASES);
    p
}

#[test]
fn passing_cases_print_one_line_each_and_a_summary() {
    let p = etc_guarded();
    p.cli()
        .arg("test")
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "ok      guard: a write to /etc is blocked",
        ))
        .stdout(predicate::str::contains(
            "ok      guard: a write to src is allowed",
        ))
        .stdout(predicate::str::contains(
            "test result: ok. 2 passed; 0 failed",
        ));
}

#[test]
fn a_failing_case_says_what_was_expected_and_exits_1() {
    let p = etc_guarded();
    p.write(".ka/tests/more.toml", FAILING_CASE);
    p.cli()
        .arg("test")
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "FAILED  more: a write to /tmp is blocked",
        ))
        .stdout(predicate::str::contains("more.toml:2)"))
        .stdout(predicate::str::contains(
            "expected verdict blocked, got proceed",
        ))
        .stdout(predicate::str::contains(
            "test result: FAILED. 2 passed; 1 failed",
        ));
}

#[test]
fn json_reports_every_case_with_its_outcome() {
    let p = etc_guarded();
    p.write(".ka/tests/more.toml", FAILING_CASE);
    let out = p.cli().args(["test", "--json"]).assert().code(1);
    let value: Value = serde_json::from_slice(&out.get_output().stdout).expect("JSON");
    assert_eq!(value["ok"], false);
    assert_eq!(value["passed"], 2);
    assert_eq!(value["failed"], 1);
    let cases = value["cases"].as_array().expect("cases");
    assert_eq!(cases.len(), 3);
    assert_eq!(cases[0]["id"], "guard: a write to /etc is blocked");
    assert_eq!(cases[0]["verdict"], "blocked");
    assert_eq!(cases[0]["outcome"]["blocked"], true);
    assert_eq!(cases[2]["passed"], false);
    assert_eq!(
        cases[2]["failures"][0],
        "expected verdict blocked, got proceed"
    );
}

#[test]
fn a_filter_runs_only_the_matching_cases() {
    let p = etc_guarded();
    p.write(".ka/tests/more.toml", FAILING_CASE);
    p.cli()
        .args(["test", "GUARD: a write to /ETC"])
        .assert()
        .success()
        .stdout(predicate::str::contains("1 passed; 0 failed"));
    p.cli()
        .args(["test", "nothing like this"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "no case matches `nothing like this`",
        ));
}

#[test]
fn an_untrusted_layer_fails_the_run_with_the_trust_command() {
    let p = Project::new();
    p.project(&hook("etc-guard", "pre_tool_use", GUARD, &[]));
    // This case would pass vacuously without the guard: nothing blocks a write to src.
    p.write(
        ".ka/tests/guard.toml",
        &CASES[CASES.find("[[case]]\nname = \"a write to src").unwrap_or(0)..],
    );
    p.cli()
        .arg("test")
        .assert()
        .code(1)
        .stderr(predicate::str::contains("was skipped (untrusted)"))
        .stderr(predicate::str::contains(format!(
            "ka-hooks --project {} trust",
            p.root.display()
        )))
        .stdout(predicate::str::contains("ok  ").not())
        .stdout(predicate::str::contains(
            "test result: FAILED. 0 passed; 0 failed; 1 error(s)",
        ));
    // Trusted for the run, the same cases pass.
    p.cli().args(["--trust", "test"]).assert().success();
}

#[test]
fn every_hook_off_fails_the_run() {
    let p = etc_guarded();
    p.cli()
        .arg("test")
        .env("KA_HOOKS_DISABLE", "1")
        .assert()
        .code(1)
        .stderr(predicate::str::contains("so the cases would test nothing"));
}

#[test]
fn a_case_file_error_names_the_file_line_and_fix() {
    let p = etc_guarded();
    p.write(
        ".ka/tests/bad.toml",
        "[[case]]\nname = \"x\"\nevent = \"stop\"\nexpect = { reason_contain = \"y\" }\n",
    );
    p.cli()
        .arg("test")
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "bad.toml:1: case `x`: unknown expectation `reason_contain`",
        ))
        .stderr(predicate::str::contains("did you mean `reason_contains`?"));
    p.write(
        ".ka/tests/bad.toml",
        "[[case]]\nname = \"x\"\nevent = \"stop\"\nexpect = {}\n",
    );
    p.cli()
        .arg("test")
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "`expect` is empty, so the case could never fail",
        ));
    p.write(
        ".ka/tests/bad.toml",
        "[[case]]\nname = \"x\"\nevent = \"pre_tool_use\"\ntool = \"write\"\nexpect = { blocked = false }\n",
    );
    p.cli()
        .arg("test")
        .assert()
        .code(1)
        .stderr(predicate::str::contains("needs `arguments = { ... }`"));
}

#[test]
fn no_case_files_is_a_failure_not_a_pass() {
    let p = Project::with_user_toml(&hook("etc-guard", "pre_tool_use", GUARD, &[]));
    p.cli()
        .arg("test")
        .assert()
        .code(1)
        .stderr(predicate::str::contains("no case files in"));
}

#[test]
fn init_writes_an_example_case_that_passes() {
    let p = Project::new();
    fs::remove_dir_all(p.root.join(".ka")).expect("remove .ka");
    p.cli().arg("init").assert().success();
    assert!(p.exists(".ka/tests/example.toml"));
    p.cli()
        .arg("test")
        .assert()
        .success()
        .stdout(predicate::str::contains("1 passed; 0 failed"));
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).expect("create dir");
    for entry in fs::read_dir(from).expect("read dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

#[test]
fn the_shipped_examples_pass_their_cases() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let p = Project::new();
    fs::copy(repo.join("ka.toml.example"), p.root.join(".ka/ka.toml")).expect("copy config");
    copy_dir(&repo.join("examples/hooks"), &p.root.join("examples/hooks"));
    copy_dir(&repo.join("examples/tests"), &p.root.join(".ka/tests"));
    let out = p.cli().args(["--trust", "test"]).assert().success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    let cases = fs::read_to_string(repo.join("examples/tests/examples.toml")).expect("cases");
    let count = cases.matches("[[case]]").count();
    assert!(count >= 5, "{count} cases");
    assert!(
        stdout.contains(&format!("test result: ok. {count} passed; 0 failed")),
        "{stdout}"
    );
}

/// Expectations read the outcome's JSON, so a field the outcome gained after `ka-hooks test`
/// was written (`report_only`) can be expected as it is.
#[test]
fn any_outcome_field_can_be_expected_including_new_ones() {
    let p = Project::with_user_toml(&hook(
        "new-guard",
        "pre_tool_use",
        "echo 'would refuse' >&2; exit 2",
        &["enforce = false"],
    ));
    p.write(
        ".ka/tests/report.toml",
        "[[case]]\nname = \"the new guard only reports\"\nevent = \"pre_tool_use\"\n\
         tool = \"bash\"\narguments = { command = \"ls\" }\n\
         expect = { verdict = \"proceed\", report_only_contains = \"would refuse\" }\n",
    );
    p.cli()
        .arg("test")
        .assert()
        .success()
        .stdout(predicate::str::contains("1 passed; 0 failed"));
}
