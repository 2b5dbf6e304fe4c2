//! The README's quick start, run literally: its `sh` block, step by step, in the checkout, with a
//! scratch `HOME` (so `~/.cargo/bin` and `~/ka-quickstart` are scratch too) and `CARGO_TARGET_DIR`
//! set elsewhere. Each step must exit as the README says (2 where its comment says `exit 2`, else
//! 0) and print what follows its `# →`.
//!
//! The first step is a real `cargo install --path . --locked`: a build with the default `release`
//! profile (no LTO: that is the `dist` profile of the release binaries) into the target dir the
//! tests were built in, `<target>/release`, which is where the reader's own `cargo install --path
//! . --locked` builds with the same `CARGO_TARGET_DIR` (or none): after `scripts/test.sh`, the
//! quick start's first step finds it built. `.config/nextest.toml` runs this test alone, with a
//! longer timeout. It is `#[ignore]`d so that a plain `cargo nextest run` stays quick;
//! `scripts/test.sh` runs it explicitly afterwards (`--run-ignored only`) and says why that step
//! takes a while.

use crate::support;
use crate::support::repo;
use crate::support::target_dir;

use std::path::{Path, PathBuf};
use std::process::Command;

/// One step of the block: its text (a heredoc included), expected exit code and output.
#[derive(Debug)]
struct Step {
    text: String,
    exit: i32,
    shows: Option<String>,
}

/// The `sh` block after `## Quick start`, cut into steps.
fn quick_start() -> Vec<Step> {
    let readme = std::fs::read_to_string(repo().join("README.md")).expect("README.md");
    let section = &readme[readme
        .find("## Quick start")
        .expect("a Quick start section")..];
    let start = section.find("```sh\n").expect("an sh block") + "```sh\n".len();
    let block = &section[start..start + section[start..].find("```").expect("end of block")];
    let mut steps = Vec::new();
    let mut lines = block.lines();
    while let Some(line) = lines.next() {
        if line.trim().is_empty() {
            continue;
        }
        let comment = line.find("  # ").map(|i| &line[i + 4..]).unwrap_or("");
        let mut text = line.to_owned();
        if let Some(at) = line.find("<<'") {
            let tag = line[at + 3..]
                .split('\'')
                .next()
                .unwrap_or_default()
                .to_owned();
            for body in lines.by_ref() {
                text.push('\n');
                text.push_str(body);
                if body == tag {
                    break;
                }
            }
        }
        steps.push(Step {
            text,
            exit: if comment.contains("exit 2") { 2 } else { 0 },
            shows: comment
                .split_once("→ ")
                .map(|(_, shown)| shown.trim().to_owned()),
        });
    }
    steps
}

#[test]
#[ignore = "slow: a real `cargo install` (a release build: minutes when cold); \
            scripts/test.sh runs it with --run-ignored only"]
fn the_quick_start_runs_as_written() {
    let steps = quick_start();
    assert!(steps.len() >= 8, "{steps:#?}");
    assert!(
        steps[0].text.starts_with("cargo install --path ."),
        "{steps:#?}"
    );
    let home = tempfile::tempdir().expect("tempdir");
    let home = home.path().canonicalize().expect("canonical home");
    let mut script = String::from("exec 2>&1\n");
    for (i, step) in steps.iter().enumerate() {
        script.push_str(&format!(
            "echo '@@begin {i}'\n{}\necho \"@@end {i} $?\"\n",
            step.text
        ));
    }
    script.push_str("echo \"@@which $(command -v ka-hooks)\"\n");

    let mut cmd = Command::new("bash");
    cmd.args(["-c", &script]).current_dir(repo());
    for var in support::AMBIENT_VARS {
        cmd.env_remove(var);
    }
    for var in [
        "KA_CONFIG_DIR",
        "KA_DATA_DIR",
        "XDG_CONFIG_HOME",
        "XDG_DATA_HOME",
        "NO_COLOR",
    ] {
        cmd.env_remove(var);
    }
    // cargo and rustup keep their own homes; what `cargo install` writes goes to the scratch
    // `~/.cargo` (as it would under a rustup install there), which is first on PATH.
    let real_home = std::env::var_os("HOME").map(PathBuf::from);
    for (var, default) in [("CARGO_HOME", ".cargo"), ("RUSTUP_HOME", ".rustup")] {
        if std::env::var_os(var).is_none() {
            if let Some(real) = &real_home {
                cmd.env(var, real.join(default));
            }
        }
    }
    let path = format!(
        "{}:{}",
        home.join(".cargo/bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let output = cmd
        .env("HOME", &home)
        .env("CARGO_INSTALL_ROOT", home.join(".cargo"))
        .env("CARGO_TARGET_DIR", target_dir())
        .env("PATH", path)
        .output()
        .expect("bash");
    let text = String::from_utf8_lossy(&output.stdout).into_owned();

    for (i, step) in steps.iter().enumerate() {
        let begin = format!("@@begin {i}\n");
        let from = text
            .find(&begin)
            .unwrap_or_else(|| panic!("step {i} never ran:\n{text}"));
        let rest = &text[from + begin.len()..];
        let end = rest
            .find(&format!("@@end {i} "))
            .unwrap_or_else(|| panic!("step {i} never ended:\n{text}"));
        let out = &rest[..end];
        let code = rest[end..]
            .lines()
            .next()
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|c| c.parse::<i32>().ok());
        assert_eq!(
            code,
            Some(step.exit),
            "step `{}` exited {code:?}, not {}:\n{out}",
            step.text,
            step.exit
        );
        if let Some(shown) = &step.shows {
            assert!(
                out.contains(shown.as_str()),
                "step `{}` did not print `{shown}`:\n{out}",
                step.text
            );
        }
    }
    let which = text
        .lines()
        .find_map(|l| l.strip_prefix("@@which "))
        .unwrap_or_default();
    assert!(
        Path::new(which).starts_with(home.join(".cargo/bin")),
        "the steps ran a ka-hooks from {which}, not the one installed"
    );
    assert!(home.join("ka-quickstart/.ka/tests/example.toml").is_file());
}
