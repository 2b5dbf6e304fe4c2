//! Who runs this `ka-hooks`: a person at a terminal, or an agent's tool call (the model's shell,
//! or a hook). Commands that weaken a guard refuse the latter.
//!
//! Three signals, any one of which says "tool call":
//! - a marker variable of an agent ([`crate::paths::AGENT_MARKERS`]) that is set at all, whatever
//!   its value (`CLAUDECODE=0` and `CLAUDECODE=` count);
//! - an ancestor process that is an agent's CLI (`claude`, `codex`, `gemini`, `copilot`,
//!   `cursor-agent`, ...; the name, or a node script of the agent's npm package) or `ka-hooks`
//!   itself (a hook's command): read from `/proc/<pid>/stat` on Linux, from `ps` elsewhere;
//! - no terminal on stdin while the ancestry cannot be read: nobody could be asked, and nothing
//!   says who asks.
//!
//! The model controls its own environment and can cut its ancestry (a process reparented to
//! init), so these checks are defence in depth. The boundary is the agent's sandbox, which keeps
//! ka's files out of the model's reach (`ka-hooks install`, `ka-hooks doctor`).

use std::io::IsTerminal;

use crate::paths::{AGENT_MARKERS, AGENT_VALUE_MARKERS};

/// Executable names of the agents' CLIs (the process name, or the script's file name).
const AGENT_PROGRAMS: &[(&str, &str)] = &[
    ("claude", "Claude Code"),
    ("codex", "Codex CLI"),
    ("gemini", "Gemini CLI"),
    ("copilot", "GitHub Copilot CLI"),
    ("cursor-agent", "Cursor"),
    ("agy", "Antigravity"),
    ("opencode", "OpenCode"),
];

/// npm packages of the agents whose CLI may run as `node <package>/...` (process name `node`).
const AGENT_PACKAGES: &[(&str, &str)] = &[
    ("/@anthropic-ai/claude-code/", "Claude Code"),
    ("/@openai/codex/", "Codex CLI"),
    ("/@google/gemini-cli/", "Gemini CLI"),
    ("/@github/copilot/", "GitHub Copilot CLI"),
];

/// How deep the ancestry is walked.
const MAX_DEPTH: usize = 64;

/// Why this process is taken for an agent's tool call; `None` when no signal says so.
pub fn tool_call() -> Option<String> {
    if let Some(var) = marker() {
        let agent = agent_of_marker(&var);
        return Some(format!("{var} is set: {agent}'s tool call"));
    }
    match ancestry() {
        Ancestry::Found { pid, name, agent } => Some(format!(
            "its ancestor process {pid} `{}` is {agent}",
            crate::terminal::escape(&name)
        )),
        Ancestry::Clean => None,
        Ancestry::Unknown(why) if !std::io::stdin().is_terminal() => Some(format!(
            "there is no terminal and the process ancestry cannot be read ({why})"
        )),
        Ancestry::Unknown(_) => None,
    }
}

/// The first agent marker variable present in the environment, whatever its value.
pub fn marker() -> Option<String> {
    AGENT_MARKERS
        .iter()
        .map(|(var, _)| *var)
        .find(|var| std::env::var_os(var).is_some())
        .or_else(|| {
            AGENT_VALUE_MARKERS
                .iter()
                .find(|(var, value, _)| std::env::var_os(var).is_some_and(|v| v == *value))
                .map(|(var, _, _)| *var)
        })
        .map(str::to_owned)
}

fn agent_of_marker(var: &str) -> &'static str {
    AGENT_MARKERS
        .iter()
        .find(|(v, _)| *v == var)
        .map(|(_, agent)| *agent)
        .or_else(|| {
            AGENT_VALUE_MARKERS
                .iter()
                .find(|(v, _, _)| *v == var)
                .map(|(_, _, agent)| *agent)
        })
        .unwrap_or("an agent")
}

/// What the walk up the process tree found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ancestry {
    /// An ancestor is an agent's CLI or a `ka-hooks` (this process runs inside a hook).
    Found {
        /// The ancestor's process id.
        pid: u32,
        /// Its name, or the command-line word that named the agent.
        name: String,
        /// The agent it is.
        agent: &'static str,
    },
    /// The walk reached the top and found neither.
    Clean,
    /// The ancestry could not be read.
    Unknown(String),
}

/// Walk this process's ancestors (not itself) and name the first agent or `ka-hooks` among them.
pub fn ancestry() -> Ancestry {
    let mut pid = match parent_of(std::process::id()) {
        Ok(Some(pid)) => pid,
        Ok(None) => return Ancestry::Clean,
        Err(why) => return Ancestry::Unknown(why),
    };
    for _ in 0..MAX_DEPTH {
        if pid <= 1 {
            return Ancestry::Clean;
        }
        let names = match names_of(pid) {
            Ok(names) => names,
            Err(why) => return Ancestry::Unknown(why),
        };
        if let Some((name, agent)) = names.iter().find_map(|n| agent_named(n).map(|a| (n, a))) {
            return Ancestry::Found {
                pid,
                name: name.clone(),
                agent,
            };
        }
        pid = match parent_of(pid) {
            Ok(Some(parent)) => parent,
            Ok(None) => return Ancestry::Clean,
            Err(why) => return Ancestry::Unknown(why),
        };
    }
    Ancestry::Unknown(format!("more than {MAX_DEPTH} ancestors"))
}

/// Whether the nearest agent among this process's ancestors is the CLI named `program` (as in
/// `AGENT_PROGRAMS`, e.g. `copilot`). An unreadable ancestry is not.
#[cfg(feature = "cli")]
pub fn run_by(program: &str) -> bool {
    let Ancestry::Found { agent, .. } = ancestry() else {
        return false;
    };
    AGENT_PROGRAMS
        .iter()
        .any(|(name, of)| *name == program && *of == agent)
}

/// The agent a process name or command-line word stands for (`ka-hooks`: a hook of ka's).
fn agent_named(name: &str) -> Option<&'static str> {
    let base = name.rsplit('/').next().unwrap_or(name);
    if base == "ka-hooks" {
        return Some("ka-hooks (a hook's command)");
    }
    AGENT_PROGRAMS
        .iter()
        .find(|(program, _)| *program == base)
        .map(|(_, agent)| *agent)
        .or_else(|| {
            AGENT_PACKAGES
                .iter()
                .find(|(package, _)| name.contains(package))
                .map(|(_, agent)| *agent)
        })
}

#[cfg(target_os = "linux")]
fn parent_of(pid: u32) -> Result<Option<u32>, String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map_err(|e| format!("/proc/{pid}/stat: {e}"))?;
    // `pid (comm) state ppid ...`: comm may hold spaces and parentheses, so split at the last `)`.
    let rest = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest)
        .ok_or_else(|| format!("/proc/{pid}/stat: no `)`"))?;
    let ppid = rest
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse::<u32>().ok())
        .ok_or_else(|| format!("/proc/{pid}/stat: no parent pid"))?;
    Ok((ppid > 0).then_some(ppid))
}

/// The process name and its first two command-line words (a script run by an interpreter).
#[cfg(target_os = "linux")]
fn names_of(pid: u32) -> Result<Vec<String>, String> {
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .map_err(|e| format!("/proc/{pid}/comm: {e}"))?;
    let mut names = vec![comm.trim_end_matches('\n').to_owned()];
    // The command line of a process of another user may be unreadable: the name still counts.
    if let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) {
        names.extend(
            cmdline
                .split(|b| *b == 0)
                .take(2)
                .map(|w| String::from_utf8_lossy(w).into_owned()),
        );
    }
    Ok(names)
}

#[cfg(not(target_os = "linux"))]
fn ps(pid: u32, field: &str) -> Result<String, String> {
    let out = std::process::Command::new("ps")
        .args(["-o", field, "-p", &pid.to_string()])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("ps: {e}"))?;
    if !out.status.success() {
        return Err(format!("ps -p {pid} failed"));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

#[cfg(not(target_os = "linux"))]
fn parent_of(pid: u32) -> Result<Option<u32>, String> {
    let ppid = ps(pid, "ppid=")?
        .parse::<u32>()
        .map_err(|e| format!("ps -o ppid= -p {pid}: {e}"))?;
    Ok((ppid > 0).then_some(ppid))
}

#[cfg(not(target_os = "linux"))]
fn names_of(pid: u32) -> Result<Vec<String>, String> {
    let comm = ps(pid, "comm=")?;
    let args = ps(pid, "args=").unwrap_or_default();
    let mut names = vec![comm];
    names.extend(args.split_whitespace().take(2).map(str::to_owned));
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_names_and_packages_are_recognised() {
        assert_eq!(agent_named("claude"), Some("Claude Code"));
        assert_eq!(agent_named("/usr/local/bin/codex"), Some("Codex CLI"));
        assert_eq!(
            agent_named("/usr/lib/node_modules/@google/gemini-cli/dist/index.js"),
            Some("Gemini CLI")
        );
        assert!(agent_named("/opt/bin/ka-hooks").is_some());
        assert_eq!(agent_named("bash"), None);
        assert_eq!(agent_named("claude-notes"), None);
    }

    #[test]
    fn the_test_runner_has_a_readable_ancestry() {
        assert!(!matches!(ancestry(), Ancestry::Unknown(_)));
    }
}
