//! `if = "Bash(git commit *)"`: an argument condition in Claude Code's permission-rule syntax,
//! checked in-process before a hook is spawned.
//!
//! Claude Code (v2.1.85+) gives each hook handler an `if` holding exactly one permission rule
//! (Claude Code hooks reference, "if"; permission rules in its IAM docs):
//! - `Tool` alone matches every call of the tool.
//! - `Bash(npm run test)` matches that command exactly; `Bash(git *)` is a wildcard (a trailing
//!   ` *` also matches the bare `git`); the older `Bash(git commit:*)` is a prefix. As Claude Code
//!   does since v2.1.89, a compound command (`ls && git push`) is matched per subcommand, and
//!   leading `VAR=value` assignments are ignored, so a guard cannot be dodged by chaining.
//! - `Edit(*.ts)`, `Write(src/**)`, `Read(…)`: gitignore-style paths. A pattern without `/`
//!   matches the name in any directory; `/x` is relative to the project root, `//x` absolute,
//!   `~/x` under the home directory. `Edit` and `Write` rules apply to every tool that edits files
//!   (Claude Code: "Edit rules apply to all built-in tools that edit files").
//! - `WebFetch(domain:example.com)` matches that host and its subdomains.
//!
//! Tool names may be Claude's or ka's; they are read through the translation table.

use std::path::Path;

use globset::{GlobBuilder, GlobMatcher};
use serde_json::{Map, Value};

use super::paths_filter::touched;

/// ka's tools that edit files (what `Edit(...)` and `Write(...)` rules cover).
const EDITING: &[&str] = &[
    "write",
    "edit",
    "multi_edit",
    "notebook_edit",
    "apply_patch",
];

#[derive(Debug, Clone)]
enum Pattern {
    /// No parentheses: every call of the tool.
    Any,
    /// A shell command: anchored regex built from the wildcard form.
    Command(regex::bytes::Regex),
    /// A path glob, matched against paths relative to the root (or absolute).
    Path(GlobMatcher),
    /// `domain:host`.
    Domain(String),
    /// Any other tool's argument: the pattern must equal some string argument.
    Exact(String),
}

/// A compiled `if` rule.
#[derive(Debug, Clone)]
pub struct Rule {
    pub source: String,
    /// The ka tools it applies to.
    tools: Vec<String>,
    pattern: Pattern,
}

impl Rule {
    /// Parse one rule; the error says what was expected.
    pub fn parse(source: &str) -> Result<Rule, String> {
        let text = source.trim();
        let (name, inner) = match text.find('(') {
            Some(open) => {
                let Some(inner) = text[open + 1..].strip_suffix(')') else {
                    return Err(format!(
                        "`{text}` opens `(` but does not end with `)`; write `Tool(pattern)`"
                    ));
                };
                let mut depth = 0i32;
                for c in inner.chars() {
                    depth += match c {
                        '(' => 1,
                        ')' => -1,
                        _ => 0,
                    };
                    if depth < 0 {
                        return Err(format!(
                            "`{text}` is more than one rule; `if` holds exactly one (write one \
                             hook per rule)"
                        ));
                    }
                }
                (&text[..open], Some(inner))
            }
            None => (text, None),
        };
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!(
                "`{text}` does not start with a tool name; write `Bash(git commit *)`, \
                 `Edit(*.ts)` or `Write(src/**)` (one rule, no `|`)"
            ));
        }
        let ka = super::filter::translation(name).unwrap_or(name).to_owned();
        let tools: Vec<String> = if ka == "edit" || ka == "write" {
            EDITING.iter().map(|t| (*t).to_owned()).collect()
        } else {
            vec![ka.clone()]
        };
        let pattern = match inner.map(str::trim) {
            None | Some("") | Some("*") => Pattern::Any,
            Some(p) if ka == "bash" => Pattern::Command(command_regex(p)?),
            Some(p) if EDITING.contains(&ka.as_str()) || ka == "read" => {
                Pattern::Path(path_glob(p)?)
            }
            Some(p) if ka == "web_fetch" => match p.strip_prefix("domain:") {
                Some(host) => Pattern::Domain(host.trim().to_ascii_lowercase()),
                None => {
                    return Err(format!(
                        "`{text}`: a WebFetch rule is `WebFetch(domain:example.com)`"
                    ))
                }
            },
            Some(p) => Pattern::Exact(p.to_owned()),
        };
        Ok(Rule {
            source: source.to_owned(),
            tools,
            pattern,
        })
    }

    /// Whether every call `narrower` matches is provably matched by this rule too: the same rule,
    /// or a bare `Tool` (any argument) over every tool `narrower` applies to. Anything else is
    /// not provably as broad (see [`super::strength`]).
    pub fn covers(&self, narrower: &Rule) -> bool {
        self.source.trim() == narrower.source.trim()
            || (matches!(self.pattern, Pattern::Any)
                && narrower.tools.iter().all(|t| self.tools.contains(t)))
    }

    /// Whether a call of `tool` with `arguments` passes, with `root` the project root.
    pub fn matches(
        &self,
        tool: Option<&str>,
        arguments: Option<&Map<String, Value>>,
        root: &Path,
    ) -> bool {
        let Some(tool) = tool else {
            return false;
        };
        if !self.tools.iter().any(|t| t == tool) {
            return false;
        }
        let args = arguments;
        match &self.pattern {
            Pattern::Any => true,
            Pattern::Command(re) => args
                .and_then(|a| a.get("command"))
                .and_then(Value::as_str)
                .is_some_and(|cmd| subcommands(cmd).any(|sub| re.is_match(sub.as_bytes()))),
            Pattern::Path(glob) => touched(args).iter().any(|p| {
                let path = Path::new(p);
                let rel = if path.is_absolute() {
                    path.strip_prefix(root).unwrap_or(path)
                } else {
                    path
                };
                glob.is_match(rel) || glob.is_match(path)
            }),
            Pattern::Domain(domain) => args
                .and_then(|a| a.get("url"))
                .and_then(Value::as_str)
                .and_then(host)
                .is_some_and(|h| h == *domain || h.ends_with(&format!(".{domain}"))),
            Pattern::Exact(want) => {
                args.is_some_and(|a| a.values().any(|v| v.as_str() == Some(want.as_str())))
            }
        }
    }
}

/// `git commit:*` (prefix), `git *` (wildcard; a trailing ` *` also matches the bare word) or an
/// exact command, as an anchored regex.
///
/// ASCII and byte-wise like the matchers (see [`super::filter::regex`]): `\s` is the shell's own
/// blanks, `.` any byte, and the escaped literal text matches itself whatever its script.
fn command_regex(pattern: &str) -> Result<regex::bytes::Regex, String> {
    let source = if let Some(prefix) = pattern.strip_suffix(":*") {
        format!("^{}(\\s.*)?$", regex::escape(prefix.trim_end()))
    } else {
        let (body, optional_tail) = match pattern.strip_suffix(" *") {
            Some(body) => (body, true),
            None => (pattern, false),
        };
        let parts: Vec<String> = body.split('*').map(regex::escape).collect();
        let mut re = format!("^{}", parts.join(".*"));
        if optional_tail {
            re.push_str("(\\s.*)?");
        }
        re.push('$');
        re
    };
    regex::bytes::RegexBuilder::new(&source)
        .unicode(false)
        .dot_matches_new_line(true)
        .build()
        .map_err(|e| format!("invalid command pattern `{pattern}`: {e}"))
}

/// gitignore-style path rule as a glob over paths relative to the root.
fn path_glob(pattern: &str) -> Result<GlobMatcher, String> {
    let glob = if let Some(abs) = pattern.strip_prefix("//") {
        format!("/{abs}")
    } else if let Some(rest) = pattern.strip_prefix("~/") {
        let home = crate::paths::home_dir().unwrap_or_default();
        format!("{}/{rest}", home.display())
    } else if let Some(rel) = pattern.strip_prefix('/') {
        rel.to_owned()
    } else if let Some(rel) = pattern.strip_prefix("./") {
        rel.to_owned()
    } else if !pattern.contains('/') {
        format!("**/{pattern}")
    } else {
        pattern.to_owned()
    };
    GlobBuilder::new(&glob)
        .literal_separator(true)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| format!("invalid path pattern `{pattern}`: {e}"))
}

/// The simple commands of `command`: split at `&&`, `||`, `;`, `|` and newlines, each without
/// leading `VAR=value` assignments. An assignment ends where the shell ends a word, at a space or
/// a tab: `X=1\u{a0}y git push` is one assignment (a no-break space is no blank to bash) and then
/// `git push`.
fn subcommands(command: &str) -> impl Iterator<Item = String> + '_ {
    command
        .split(['\n', ';', '|', '&'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            let mut rest = s;
            while let Some((word, tail)) = rest.split_once([' ', '\t']) {
                let is_assignment = word.split_once('=').is_some_and(|(name, _)| {
                    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                });
                if !is_assignment {
                    break;
                }
                rest = tail.trim_start();
            }
            rest.to_owned()
        })
}

fn host(url: &str) -> Option<String> {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority.rsplit('@').next()?.split(':').next()?;
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(rule: &str, tool: &str, args: Value) -> bool {
        let rule = Rule::parse(rule).expect("parses");
        rule.matches(Some(tool), args.as_object(), Path::new("/repo"))
    }

    #[test]
    fn bash_rules_match_per_subcommand() {
        assert!(call(
            "Bash(git commit:*)",
            "bash",
            json!({"command": "git commit -m x"})
        ));
        assert!(!call(
            "Bash(git commit:*)",
            "bash",
            json!({"command": "git status"})
        ));
        assert!(call(
            "Bash(git *)",
            "bash",
            json!({"command": "ls && git push"})
        ));
        assert!(call(
            "Bash(git *)",
            "bash",
            json!({"command": "FOO=1 git push"})
        ));
        assert!(call("Bash(git *)", "bash", json!({"command": "git"})));
        assert!(!call("Bash(git *)", "bash", json!({"command": "gitk"})));
        assert!(call(
            "Bash(npm run test)",
            "bash",
            json!({"command": "npm run test"})
        ));
        assert!(!call(
            "Bash(npm run test)",
            "bash",
            json!({"command": "npm run test2"})
        ));
        assert!(!call(
            "Bash(git *)",
            "write",
            json!({"command": "git push"})
        ));
        assert!(call("Bash", "bash", json!({})));
    }

    /// bash ends words at spaces and tabs only: a no-break space inside an assignment does not
    /// hide the command after it.
    #[test]
    fn an_assignment_with_a_no_break_space_does_not_hide_the_command() {
        assert!(call(
            "Bash(git push:*)",
            "bash",
            json!({"command": "X=1\u{a0}y git push --force"})
        ));
        assert!(call(
            "Bash(git push:*)",
            "bash",
            json!({"command": "A=1\tB=2 git push"})
        ));
    }

    #[test]
    fn file_rules_are_gitignore_style_and_cover_every_editing_tool() {
        assert!(call("Edit(*.ts)", "edit", json!({"path": "src/a.ts"})));
        assert!(call("Edit(*.ts)", "write", json!({"path": "/repo/x/b.ts"})));
        assert!(call(
            "Edit(*.ts)",
            "apply_patch",
            json!({"paths": ["a.rs", "b.ts"]})
        ));
        assert!(!call("Edit(*.ts)", "edit", json!({"path": "a.rs"})));
        assert!(call(
            "Write(src/**)",
            "write",
            json!({"path": "src/x/y.rs"})
        ));
        assert!(!call(
            "Write(src/**)",
            "write",
            json!({"path": "lib/src/y.rs"})
        ));
        assert!(call(
            "Write(//etc/**)",
            "write",
            json!({"path": "/etc/passwd"})
        ));
        assert!(!call("Read(*.env)", "write", json!({"path": ".env"})));
    }

    #[test]
    fn web_fetch_domains_and_errors() {
        assert!(call(
            "WebFetch(domain:example.com)",
            "web_fetch",
            json!({"url": "https://api.example.com/x"})
        ));
        assert!(!call(
            "WebFetch(domain:example.com)",
            "web_fetch",
            json!({"url": "https://example.com.evil.org/"})
        ));
        assert!(Rule::parse("Bash(git *").is_err());
        assert!(Rule::parse("Bash(a)|Bash(b)").is_err());
        assert!(Rule::parse("(x)").is_err());
        assert!(Rule::parse("WebFetch(example.com)").is_err());
    }
}
