//! The `ka-hooks` binary: `check`, `list`, `init`, `trust`, global flags and exit codes.

use std::path::Path;

use assert_cmd::Command;
use predicates::prelude::*;

use crate::support;

use support::Project as World;

impl World {
    /// `ka-hooks` run in the project root, with the environment it reads cleared.
    fn cmd(&self) -> Command {
        self.cli()
    }

    fn cmd_in(&self, dir: &Path) -> Command {
        let mut cmd = self.cli();
        cmd.current_dir(dir);
        cmd
    }
}

const STOP_HOOK: &str = "[[hooks]]\nname = \"notify\"\nevent = \"stop\"\ncommand = \"true\"\n";

#[test]
fn check_reports_all_errors_of_all_layers_and_exits_1() {
    let w = World::new();
    w.user("[[hooks]]\nevent = \"pre_tool_usee\"\ncommand = \"a\"\n")
        .project("[[hooks]]\nevent = \"stop\"\ncommand = \"a\"\ntimeout = -1\n");
    w.cmd()
        .arg("check")
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "ka.toml:2:9: `hooks[0].event`: unknown event `pre_tool_usee`",
        ))
        .stderr(predicate::str::contains("did you mean `pre_tool_use`?"))
        .stderr(predicate::str::contains(
            ".ka/ka.toml:4:11: `hooks[0].timeout`: expected a number of seconds greater than 0, got -1",
        ))
        .stderr(predicate::str::contains("2 error(s) found"));
}

#[test]
fn check_passes_and_counts_active_hooks() {
    let w = World::new();
    w.user(&format!(
        "{STOP_HOOK}[[hooks]]\nevent = \"stop\"\ncommand = \"x\"\nenabled = false\n"
    ));
    w.cmd()
        .arg("check")
        .assert()
        .success()
        .stdout("ok: 1 active hook(s) from 1 file(s)\n");
}

#[test]
fn check_json_lists_errors_with_positions() {
    let w = World::new();
    w.user("[[hooks]]\nevent = \"stop\"\n");
    let out = w.cmd().args(["check", "--json"]).assert().code(1);
    let value: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).expect("json");
    assert_eq!(value["ok"], false);
    assert_eq!(value["errors"][0]["key"], "hooks[0].command");
    assert_eq!(value["errors"][0]["line"], 1);
}

#[test]
fn untrusted_project_hooks_never_run_and_the_fix_is_printed() {
    let w = World::new();
    let marker = w.root.join("ran");
    w.project(&format!(
        "[[hooks]]\nevent = \"stop\"\ncommand = \"touch {}\"\n",
        marker.display()
    ));
    w.cmd()
        .args(["run", "stop"])
        .assert()
        .success()
        .stderr(predicate::str::contains("skipped the project layer"))
        .stderr(predicate::str::contains("trust`"))
        .stdout(predicate::str::contains("no hook ran: 1 layer(s) skipped"));
    assert!(!marker.exists(), "an untrusted hook ran");
}

#[test]
fn trust_then_run_then_edit_untrusts_again() {
    let w = World::new();
    let marker = w.root.join("ran");
    w.project(&format!(
        "[[hooks]]\nevent = \"stop\"\ncommand = \"touch {}\"\n",
        marker.display()
    ));
    w.cmd()
        .args(["trust", "--yes"])
        .assert()
        .success()
        .stdout(predicate::str::contains("event=stop"))
        .stdout(predicate::str::contains("runs: touch"))
        .stdout(predicate::str::contains("trusted (sha256 "));
    w.cmd()
        .args(["trust", "--show"])
        .assert()
        .success()
        .stdout(predicate::str::contains(": trusted"));
    w.cmd().args(["run", "stop"]).assert().success();
    assert!(marker.exists(), "the trusted hook ran");

    std::fs::remove_file(&marker).expect("rm");
    w.project(&format!(
        "[[hooks]]\nevent = \"stop\"\ncommand = \"touch {} && true\"\n",
        marker.display()
    ));
    w.cmd()
        .args(["run", "stop"])
        .assert()
        .success()
        .stderr(predicate::str::contains("changed since it was trusted"));
    assert!(!marker.exists(), "an edited file ran without review");
    w.cmd()
        .args(["trust", "--show"])
        .assert()
        .stdout(predicate::str::contains("changed since it was trusted"));
}

#[test]
fn trust_revoke_untrusts() {
    let w = World::new();
    w.project(STOP_HOOK);
    w.cmd().args(["trust", "--yes"]).assert().success();
    w.cmd()
        .args(["trust", "--revoke"])
        .assert()
        .success()
        .stdout(predicate::str::contains("trust revoked"));
    w.cmd()
        .args(["trust", "--show"])
        .assert()
        .stdout(predicate::str::contains(": untrusted"));
}

#[test]
fn trust_refuses_a_file_with_errors() {
    let w = World::new();
    w.project("[[hooks]]\nevent = \"nope\"\ncommand = \"a\"\n");
    w.cmd()
        .args(["trust", "--yes"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("unknown event `nope`"))
        .stderr(predicate::str::contains("before trusting it"));
}

#[test]
fn trust_without_a_project_says_how_to_make_one() {
    let w = World::new();
    let elsewhere = tempfile::tempdir().expect("tempdir");
    w.cmd_in(elsewhere.path())
        .args(["trust", "--yes"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("ka-hooks init"));
}

#[test]
fn trust_flag_runs_an_untrusted_project_once() {
    let w = World::new();
    w.project("[[hooks]]\nevent = \"pre_tool_use\"\ncommand = \"echo no >&2; exit 2\"\n");
    w.cmd()
        .args(["run", "pre_tool_use", "--tool", "write", "--trust"])
        .assert()
        .code(2)
        .stdout(predicate::str::contains("reason: no"));
    w.cmd()
        .args(["run", "pre_tool_use", "--tool", "write"])
        .assert()
        .code(0);
}

#[test]
fn project_flag_finds_the_root_from_a_nested_dir() {
    let w = World::new();
    w.project(STOP_HOOK);
    let nested = w.root.join("src/deep");
    std::fs::create_dir_all(&nested).expect("mkdir");
    let elsewhere = tempfile::tempdir().expect("tempdir");
    w.cmd_in(elsewhere.path())
        .arg("--project")
        .arg(&nested)
        .args(["list", "--trust"])
        .assert()
        .success()
        .stdout(predicate::str::contains("notify"))
        .stdout(predicate::str::contains("--trust, this run only"));
}

#[test]
fn list_shows_order_origin_and_what_overrode_or_disabled() {
    let w = World::new();
    // The local file changes its own project's hooks (a project file may not weaken the user's).
    w.project(
        "[[hooks]]\nname = \"fmt\"\nevent = \"post_tool_use\"\ncommand = \"fmt\"\n\
         [[hooks]]\nname = \"lint\"\nevent = \"post_tool_use\"\ncommand = \"lint\"\n",
    )
    .local(
        "[[hooks]]\nname = \"fmt\"\nenabled = false\n[[hooks]]\nname = \"lint\"\ntimeout = 90\n",
    );
    let out = w.cmd().args(["list", "--trust"]).assert().success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    let fmt = text.find("  fmt").expect("fmt listed");
    let lint = text.find("  lint").expect("lint listed");
    assert!(fmt < lint, "run order: {text}");
    assert!(
        text.contains("fmt  tool = ") || text.contains("fmt  *  [disabled]"),
        "{text}"
    );
    assert!(text.contains("disabled by local"), "{text}");
    assert!(text.contains("set timeout by local"), "{text}");
    assert!(text.contains("(timeout 90s"), "{text}");
}

#[test]
fn list_json_filters_by_event() {
    let w = World::new();
    w.user(&format!(
        "{STOP_HOOK}[[hooks]]\nevent = \"session_start\"\ncommand = \"x\"\n"
    ));
    let out = w
        .cmd()
        .args(["list", "--event", "turn_end", "--json"])
        .assert()
        .success();
    let value: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).expect("json");
    let hooks = value["hooks"].as_array().expect("hooks");
    assert_eq!(hooks.len(), 1);
    assert_eq!(hooks[0]["name"], "notify");
    assert_eq!(hooks[0]["source"]["layer"], "user");
    assert_eq!(hooks[0]["source"]["index"], 0);
}

#[test]
fn list_with_a_bad_event_is_a_usage_error_with_a_suggestion() {
    let w = World::new();
    w.cmd()
        .args(["list", "--event", "sesion_start"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("did you mean `session_start`?"));
}

#[test]
fn init_writes_a_starter_that_checks_clean_and_refuses_to_overwrite() {
    let w = World::new();
    let fresh = tempfile::tempdir().expect("tempdir");
    w.cmd_in(fresh.path()).arg("init").assert().success();
    let file = fresh.path().join(".ka/ka.toml");
    assert!(file.is_file());
    assert!(std::fs::read_to_string(fresh.path().join(".ka/.gitignore"))
        .expect("gitignore")
        .contains("ka.local.toml"));
    w.cmd_in(fresh.path())
        .arg("check")
        .assert()
        .success()
        .stdout("ok: 0 active hook(s) from 1 file(s)\n")
        .stderr("");
    let before = std::fs::read(&file).expect("read");
    w.cmd_in(fresh.path())
        .arg("init")
        .assert()
        .code(1)
        .stderr(predicate::str::contains("already exists"));
    assert_eq!(std::fs::read(&file).expect("read"), before);
}

#[test]
fn ka_hooks_disable_turns_every_hook_off() {
    let w = World::new();
    w.user("[[hooks]]\nevent = \"pre_tool_use\"\ncommand = \"exit 2\"\n");
    w.cmd()
        .args(["run", "pre_tool_use", "--tool", "bash"])
        .env("KA_HOOKS_DISABLE", "1")
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "every hook but managed ones is off",
        ));
    w.cmd()
        .args(["run", "pre_tool_use", "--tool", "bash"])
        .assert()
        .code(2);
}

#[test]
fn usage_errors_exit_1() {
    let w = World::new();
    w.cmd().arg("frobnicate").assert().code(1);
    w.cmd().args(["run"]).assert().code(1);
    w.cmd()
        .args(["run", "pre_tool_use"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("needs a tool"));
    w.cmd().arg("--help").assert().success();
}

#[test]
fn global_flags_are_accepted_before_or_after_the_command() {
    let w = World::new();
    w.user(STOP_HOOK);
    w.cmd().args(["--trust", "list"]).assert().success();
    w.cmd().args(["list", "--trust"]).assert().success();
}

#[test]
fn env_timeout_override_applies_to_hooks_without_their_own() {
    let w = World::new();
    w.user(STOP_HOOK);
    let out = w
        .cmd()
        .args(["list", "--json"])
        .env("KA_HOOKS_TIMEOUT", "4")
        .assert()
        .success();
    let value: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).expect("json");
    assert_eq!(value["hooks"][0]["timeout"], 4.0);
}

#[test]
fn bad_env_override_is_an_error_naming_the_variable() {
    let w = World::new();
    w.user(STOP_HOOK);
    w.cmd()
        .arg("check")
        .env("KA_HOOKS_TIMEOUT", "abc")
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "KA_HOOKS_TIMEOUT: `hook_settings.timeout`: the environment variable \
             KA_HOOKS_TIMEOUT=\"abc\" does not parse: invalid type",
        ));
}

#[test]
fn a_closed_stdout_is_an_error_not_a_death_by_sigpipe() {
    use std::os::unix::process::ExitStatusExt;
    let w = World::new();
    w.user(STOP_HOOK);
    let bin = assert_cmd::cargo::cargo_bin("ka-hooks");
    let mut child = std::process::Command::new(bin)
        .args(["list", "--json"])
        .current_dir(&w.root)
        .env("KA_CONFIG_DIR", &w.config_dir)
        .env("KA_DATA_DIR", &w.data_dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    drop(child.stdout.take()); // the reader goes away before anything is written
    let status = child.wait().expect("wait");
    assert_eq!(status.signal(), None, "killed by a signal: {status:?}");
}

#[test]
fn runs_with_stdin_and_stdout_closed() {
    let w = World::new();
    w.user(
        "[[hooks]]\nevent = \"pre_tool_use\"\ncommand = \"cat >/dev/null; echo no >&2; exit 2\"\n",
    );
    let bin = assert_cmd::cargo::cargo_bin("ka-hooks");
    // stdin and stdout closed: the hook's pipes must not take fds 0 and 1.
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "'{}' run pre_tool_use --tool bash <&- >&-",
            bin.display()
        ))
        .current_dir(&w.root)
        .env("KA_CONFIG_DIR", &w.config_dir)
        .env("KA_DATA_DIR", &w.data_dir)
        .status()
        .expect("run");
    assert_eq!(status.code(), Some(2), "the hook's veto still decides");
}

#[test]
fn list_groups_hooks_by_event_in_run_order() {
    let w = World::new();
    w.user(
        "[[hooks]]\nname = \"a\"\nevent = \"pre_tool_use\"\ncommand = \"true\"\n\
         [[hooks]]\nname = \"b\"\nevent = \"stop\"\ncommand = \"true\"\n\
         [[hooks]]\nname = \"c\"\nevent = \"pre_tool_use\"\ncommand = \"true c\"\n",
    );
    let out = w.cmd().arg("list").assert().success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert_eq!(text.matches("\npre_tool_use\n").count(), 1, "{text}");
    let at = |needle: &str| {
        text.find(needle)
            .unwrap_or_else(|| panic!("{needle} in {text}"))
    };
    assert!(at("\n  a  ") < at("\n  c  "), "{text}");
    assert!(at("\n  c  ") < at("\nstop\n"), "{text}");
}

#[test]
fn list_json_uses_the_toml_keys() {
    let w = World::new();
    w.user(
        "[[hooks]]\nname = \"g\"\nevent = \"pre_tool_use\"\ntool = [\"write\"]\ncommand = \"true\"\ntimeout = 3\n\
         [[hooks]]\nname = \"m\"\nevent = \"post_tool_use\"\nmatcher = \"Bash\"\ncommand = \"true\"\n",
    );
    let out = w.cmd().args(["list", "--json"]).assert().success();
    let value: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).expect("json");
    let g = &value["hooks"][0];
    assert_eq!(g["timeout"], 3.0);
    assert!(g.get("timeout_secs").is_none(), "{g}");
    assert_eq!(g["tool"], serde_json::json!(["write"]));
    assert_eq!(value["hooks"][1]["matcher"], "Bash");
}

#[test]
fn audit_time_is_rfc_3339() {
    let w = World::new();
    w.user(STOP_HOOK);
    let log = w.base.join("audit.jsonl");
    w.cmd()
        .args(["run", "stop", "--log"])
        .arg(&log)
        .assert()
        .success();
    let text = std::fs::read_to_string(&log).expect("audit log");
    for line in text.lines() {
        let value: serde_json::Value = serde_json::from_str(line).expect("json line");
        let time = value["time"].as_str().unwrap_or_default();
        let shape = regex_like_rfc3339(time);
        assert!(shape, "time {time:?} is not RFC 3339");
    }
}

/// `YYYY-MM-DDTHH:MM:SS[.fff]Z`.
fn regex_like_rfc3339(t: &str) -> bool {
    let b = t.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| r.clone().all(|i| b.get(i).is_some_and(u8::is_ascii_digit));
    b.len() >= 20
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && b[10] == b'T'
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19)
        && t.ends_with('Z')
}

#[test]
fn check_says_when_a_layer_was_skipped() {
    let w = World::new();
    w.project(STOP_HOOK);
    // A gate: a skipped file that exists fails `check` unless accepted.
    w.cmd()
        .arg("check")
        .assert()
        .code(1)
        .stderr(predicate::str::contains("exist but are skipped"));
    w.cmd()
        .args(["check", "--allow-skipped"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "ok (--allow-skipped): 0 active hook(s) from 1 file(s); 1 layer(s) skipped, their hooks do not run until trusted",
        ));
}

/// Without `KA_CONFIG_DIR` / `KA_DATA_DIR`, the directories come from the `directories` crate:
/// on Linux `$XDG_CONFIG_HOME` when it is absolute, else `$HOME/.config`, and `$XDG_DATA_HOME` or
/// `$HOME/.local/share` for the trust store; `KA_CONFIG_DIR` still wins over both.
#[cfg(target_os = "linux")]
#[test]
fn the_default_directories_follow_home_and_the_xdg_variables() {
    let w = World::new();
    let home = w.base.join("home");
    let xdg = w.base.join("xdg");
    let user_hook = |dir: &Path, name: &str| {
        std::fs::create_dir_all(dir).expect("mkdir");
        std::fs::write(
            dir.join("ka.toml"),
            format!("[[hooks]]\nname = \"{name}\"\nevent = \"stop\"\ncommand = \"true\"\n"),
        )
        .expect("write ka.toml");
    };
    user_hook(&home.join(".config/ka"), "from-home");
    user_hook(&xdg.join("ka"), "from-xdg");
    w.project(STOP_HOOK);
    let list = |xdg_config: Option<&str>, config_dir: Option<&Path>| {
        let mut cmd = w.cmd();
        cmd.env_remove("KA_CONFIG_DIR")
            .env_remove("KA_DATA_DIR")
            .env_remove("XDG_DATA_HOME")
            .env("HOME", &home);
        match xdg_config {
            Some(value) => cmd.env("XDG_CONFIG_HOME", value),
            None => cmd.env_remove("XDG_CONFIG_HOME"),
        };
        if let Some(dir) = config_dir {
            cmd.env("KA_CONFIG_DIR", dir);
        }
        let out = cmd.arg("list").output().expect("ka-hooks list");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let from_home = list(None, None);
    assert!(from_home.contains("from-home"), "{from_home}");
    let xdg_text = xdg.to_str().expect("UTF-8 temp dir");
    let from_xdg = list(Some(xdg_text), None);
    assert!(from_xdg.contains("from-xdg"), "{from_xdg}");
    assert!(!from_xdg.contains("from-home"), "{from_xdg}");
    // The XDG spec ignores a relative value.
    let relative = list(Some("relative/dir"), None);
    assert!(relative.contains("from-home"), "{relative}");
    // KA_CONFIG_DIR wins over HOME and XDG_CONFIG_HOME.
    let overridden = list(Some(xdg_text), Some(&w.config_dir));
    assert!(
        !overridden.contains("from-home") && !overridden.contains("from-xdg"),
        "{overridden}"
    );

    // The trust store follows $HOME/.local/share: `trust` writes it there.
    let mut trust = w.cmd();
    trust
        .env_remove("KA_DATA_DIR")
        .env_remove("XDG_DATA_HOME")
        .env("HOME", &home)
        .args(["trust", "--yes"])
        .assert()
        .success();
    assert!(
        home.join(".local/share/ka/trust.json").is_file(),
        "no trust store under $HOME/.local/share/ka"
    );
}
