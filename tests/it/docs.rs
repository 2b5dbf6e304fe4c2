//! The README and `docs/`: the README stays a front door (short, the agents near the top), every
//! link and anchor between them resolves, and every command block is checked: each `sh` block
//! parses (`bash -n`), each `ka-hooks …` command in it is accepted by the real command line (run
//! with `--help` appended, in a scratch `HOME`), each `bash FILE`, `cargo bench --bench NAME` and
//! `cargo run --example NAME` names something that exists, each `toml` block parses, and the
//! completion commands run as written. The quick start is run whole by `readme.rs`, the event and
//! action tables by `readme_events.rs`, the import example by `adapter_import.rs` and the
//! translation table by `adapter_agents.rs`.

use crate::support::repo;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// README.md and every `docs/*.md`, as (path relative to the repository, text).
fn documents() -> Vec<(PathBuf, String)> {
    let mut files = vec![PathBuf::from("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(repo().join("docs"))
        .expect("docs/")
        .map(|e| e.expect("docs/ entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .map(|p| Path::new("docs").join(p.file_name().expect("a file name")))
        .collect();
    docs.sort();
    files.extend(docs);
    files
        .into_iter()
        .map(|f| {
            let text = std::fs::read_to_string(repo().join(&f))
                .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            (f, text)
        })
        .collect()
}

/// A fenced block: its language, first line number (1-based, the line after the fence), its
/// text, and the HTML comment just before its fence, if any (`<!-- run: completions -->`).
struct Block {
    lang: String,
    line: usize,
    text: String,
    marker: Option<String>,
}

fn blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<Block> = None;
    let mut previous = "";
    for (i, line) in text.lines().enumerate() {
        if let Some(fence) = line.strip_prefix("```") {
            match open.take() {
                Some(block) => out.push(block),
                None => {
                    open = Some(Block {
                        lang: fence.trim().to_owned(),
                        line: i + 2,
                        text: String::new(),
                        marker: previous
                            .trim()
                            .strip_prefix("<!--")
                            .and_then(|m| m.strip_suffix("-->"))
                            .map(|m| m.trim().to_owned()),
                    })
                }
            }
        } else if let Some(block) = open.as_mut() {
            block.text.push_str(line);
            block.text.push('\n');
        }
        previous = line;
    }
    assert!(open.is_none(), "a fenced block is never closed");
    out
}

/// The GitHub anchors of a Markdown file's headings (outside fenced blocks).
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced || !line.starts_with('#') {
            continue;
        }
        let title = line.trim_start_matches('#');
        if !title.starts_with(' ') {
            continue;
        }
        let slug: String = title
            .trim()
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let mut unique = slug.clone();
        let mut n = 0;
        while seen.contains(&unique) {
            n += 1;
            unique = format!("{slug}-{n}");
        }
        seen.insert(unique);
    }
    seen
}

/// Every `[text](target)` link outside fenced blocks and inline code, with its line number.
fn links(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut fenced = false;
    for (i, line) in text.lines().enumerate() {
        if line.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        // Inline code may hold `](`; drop it first.
        let mut plain = String::new();
        for (j, part) in line.split('`').enumerate() {
            if j % 2 == 0 {
                plain.push_str(part);
            } else {
                plain.push_str("code");
            }
        }
        let mut rest = plain.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let end = after.find(')').unwrap_or(after.len());
            out.push((i + 1, after[..end].to_owned()));
            rest = &after[end..];
        }
    }
    out
}

#[test]
fn every_link_and_anchor_between_readme_and_docs_resolves() {
    let documents = documents();
    let mut broken = Vec::new();
    for (file, text) in &documents {
        let dir = file.parent().unwrap_or(Path::new(""));
        for (line, target) in links(text) {
            if target.starts_with("http://") || target.starts_with("https://") {
                continue;
            }
            let (path, anchor) = match target.split_once('#') {
                Some((path, anchor)) => (path, Some(anchor)),
                None => (target.as_str(), None),
            };
            let linked = if path.is_empty() {
                file.clone()
            } else {
                dir.join(path)
            };
            let on_disk = repo().join(&linked);
            if !on_disk.exists() {
                broken.push(format!(
                    "{}:{line}: `{target}`: no such file",
                    file.display()
                ));
                continue;
            }
            if let Some(anchor) = anchor {
                let linked_text = std::fs::read_to_string(&on_disk).unwrap_or_default();
                if !anchors(&linked_text).contains(anchor) {
                    broken.push(format!(
                        "{}:{line}: `{target}`: {} has no heading with the anchor `#{anchor}`",
                        file.display(),
                        linked.display()
                    ));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_readme_is_a_front_door() {
    let readme = std::fs::read_to_string(repo().join("README.md")).expect("README.md");
    let lines: Vec<&str> = readme.lines().collect();
    assert!(
        lines.len() <= 250,
        "README.md has {} lines; keep it at most 250 and move reference material to docs/",
        lines.len()
    );
    let agents = lines
        .iter()
        .position(|l| l.starts_with("## Use it with Claude Code"))
        .expect("a `## Use it with Claude Code, …` section");
    assert!(
        agents < 80,
        "the agents section starts at line {}, not within the first 80",
        agents + 1
    );
    for needle in [
        "cargo install --path . --locked",
        "--root",
        "CARGO_HOME",
        "scripts/release.sh",
        "bash examples/demo.sh",
        "bash scripts/test.sh",
        "## Quick start",
        "## Documentation",
    ] {
        assert!(readme.contains(needle), "README.md lacks `{needle}`");
    }
    // Every page of docs/ can be reached from the README, directly or through another page.
    let documents = documents();
    let linked: BTreeSet<PathBuf> = documents
        .iter()
        .flat_map(|(file, text)| {
            let dir = file.parent().unwrap_or(Path::new("")).to_path_buf();
            links(text).into_iter().filter_map(move |(_, target)| {
                let path = target.split('#').next().unwrap_or_default().to_owned();
                (!path.is_empty() && !path.contains("://")).then(|| normal(&dir.join(path)))
            })
        })
        .collect();
    for (file, _) in &documents {
        assert!(
            file == Path::new("README.md") || linked.contains(file),
            "{} is linked from neither README.md nor another page of docs/",
            file.display()
        );
    }
}

/// `docs/../README.md` → `README.md`.
fn normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// A line cut into its commands at unquoted `|`, `;`, `&&` and `||`, without its comment and
/// without redirections (`> file`), each as the shell text it was.
fn commands(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let (mut single, mut double) = (false, false);
    let mut chars = line.chars().peekable();
    let mut previous = ' ';
    let mut redirected = false;
    while let Some(c) = chars.next() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '#' if !single && !double && previous.is_whitespace() => break,
            '|' | ';' | '&' if !single && !double => {
                if chars.peek() == Some(&c) {
                    chars.next();
                }
                out.push(String::new());
                redirected = false;
                previous = ' ';
                continue;
            }
            '>' | '<' if !single && !double => redirected = true,
            _ => {}
        }
        if !redirected {
            out.last_mut().expect("one command").push(c);
        }
        previous = c;
    }
    out.into_iter()
        .map(|c| c.trim().to_owned())
        .filter(|c| !c.is_empty())
        .collect()
}

/// The lines of an `sh` block that are commands, here-document bodies left out.
fn command_lines(block: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut heredoc: Option<String> = None;
    for (i, line) in block.lines().enumerate() {
        if let Some(tag) = &heredoc {
            if line == tag {
                heredoc = None;
            }
            continue;
        }
        if let Some(at) = line.find("<<") {
            let tag = line[at + 2..]
                .trim_start_matches('-')
                .trim()
                .trim_matches(|c| c == '\'' || c == '"');
            heredoc = tag.split_whitespace().next().map(str::to_owned);
        }
        out.push((i, line.to_owned()));
    }
    out
}

#[test]
fn every_command_block_parses_and_its_commands_exist() {
    let bin = Path::new(env!("CARGO_BIN_EXE_ka-hooks"));
    let bin_dir = bin.parent().expect("the binary's directory");
    let scratch = tempfile::tempdir().expect("tempdir");
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut checked = 0;
    let mut failures = Vec::new();
    for (file, text) in documents() {
        for block in blocks(&text) {
            let here = |offset: usize| format!("{}:{}", file.display(), block.line + offset);
            match block.lang.as_str() {
                "toml" => {
                    if let Err(e) = toml::from_str::<toml::Value>(&block.text) {
                        failures.push(format!("{}: not TOML: {e}", here(0)));
                    }
                }
                "sh" => {
                    let parsed = Command::new("bash")
                        .args(["-n", "-c", &block.text])
                        .output()
                        .expect("bash -n");
                    if !parsed.status.success() {
                        failures.push(format!(
                            "{}: bash -n: {}",
                            here(0),
                            String::from_utf8_lossy(&parsed.stderr)
                        ));
                    }
                    for (offset, line) in command_lines(&block.text) {
                        for command in commands(&line) {
                            let words: Vec<&str> = command.split_whitespace().collect();
                            let problem = match words.as_slice() {
                                ["ka-hooks", ..] => {
                                    checked += 1;
                                    help(&command, &path, scratch.path())
                                }
                                ["bash", script, ..] => (!repo().join(script).is_file())
                                    .then(|| format!("`{script}` does not exist")),
                                ["cargo", "bench", "--bench", name, ..] => {
                                    (!repo().join(format!("benches/{name}.rs")).is_file())
                                        .then(|| format!("no bench `{name}`"))
                                }
                                ["cargo", "run", "--example", name, ..] => {
                                    (!repo().join(format!("examples/{name}.rs")).is_file())
                                        .then(|| format!("no example `{name}`"))
                                }
                                _ => None,
                            };
                            if let Some(problem) = problem {
                                failures.push(format!("{}: `{command}`: {problem}", here(offset)));
                            }
                        }
                    }
                }
                _ => {}
            }
        }
    }
    assert!(
        checked >= 30,
        "only {checked} ka-hooks commands found in the README and docs/"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `COMMAND --help` through `sh`, in a scratch home and directory: `None` when the command line
/// is accepted (exit 0 and a usage text), else what went wrong.
fn help(command: &str, path: &str, scratch: &Path) -> Option<String> {
    let line = if command.contains("--version") {
        command.to_owned()
    } else {
        format!("{command} --help")
    };
    let output = Command::new("sh")
        .args(["-c", &line])
        .current_dir(scratch)
        .env("HOME", scratch)
        .env("KA_CONFIG_DIR", scratch.join("config"))
        .env("KA_DATA_DIR", scratch.join("data"))
        .env("PATH", path)
        .output()
        .expect("sh");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let ok = output.status.success()
        && (stdout.contains("Usage: ka-hooks") || stdout.starts_with("ka-hooks "));
    (!ok).then(|| {
        format!(
            "`{line}` exited {:?}:\n{stdout}{}",
            output.status.code(),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

#[test]
fn the_completion_commands_run_as_written_in_a_fresh_home() {
    let tools = std::fs::read_to_string(repo().join("docs/tools.md")).expect("docs/tools.md");
    let block = blocks(&tools)
        .into_iter()
        .find(|b| b.marker.as_deref() == Some("run: completions"))
        .expect("docs/tools.md: a block after `<!-- run: completions -->`");
    let home = tempfile::tempdir().expect("tempdir");
    let bin = Path::new(env!("CARGO_BIN_EXE_ka-hooks"));
    let path = format!(
        "{}:{}",
        bin.parent().expect("the binary's directory").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let output = Command::new("bash")
        .args(["-e", "-c", &block.text])
        .current_dir(home.path())
        .env("HOME", home.path())
        .env("PATH", path)
        .output()
        .expect("bash");
    assert!(
        output.status.success(),
        "the completions block failed in a fresh HOME:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for file in [
        ".local/share/bash-completion/completions/ka-hooks",
        ".zfunc/_ka-hooks",
        ".config/fish/completions/ka-hooks.fish",
    ] {
        let written = std::fs::read_to_string(home.path().join(file)).unwrap_or_default();
        assert!(
            written.contains("ka-hooks"),
            "{file} was not written by the block"
        );
    }
}

#[test]
fn the_command_splitter_keeps_quotes_and_drops_comments_and_redirections() {
    assert_eq!(
        commands(r#"echo '{"a":"b|c"}' | ka-hooks run pre_tool_use   # exit 2"#),
        [r#"echo '{"a":"b|c"}'"#, "ka-hooks run pre_tool_use"]
    );
    assert_eq!(
        commands("mkdir -p ~/x && cd ~/x   # or yours"),
        ["mkdir -p ~/x", "cd ~/x"]
    );
    assert_eq!(
        commands("ka-hooks schema > .ka/ka-hooks.schema.json"),
        ["ka-hooks schema"]
    );
    assert_eq!(
        commands(r#"ka-hooks install claude --command "a # b; c""#),
        [r#"ka-hooks install claude --command "a # b; c""#]
    );
}
