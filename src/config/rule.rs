//! `if = "Bash(git commit *)"`: one argument condition in Claude Code's permission-rule syntax,
//! checked in-process before a hook is spawned. Commands are read as the shell reads them
//! ([`crate::shell`]); a command that cannot be known statically is [`RuleMatch::Unknown`], and
//! a guard's `if` then passes (fail closed). The syntax: `docs/configuration.md`.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use globset::{GlobBuilder, GlobMatcher};
use serde_json::{Map, Value};

use super::filter::{FILE_READS, FILE_WRITES, SEARCHES};
use super::hard_links;
use super::touched::{literal_dir, reaches, search_dirs, touched, Resolver, Spelling};
use crate::shell::CommandLine;

#[derive(Debug, Clone)]
enum Pattern {
    /// No parentheses: every call of the tool.
    Any,
    /// A shell command: anchored regex built from the wildcard form, and the literal words it
    /// starts with (`git push *` → `git`, `push`).
    Command(regex::bytes::Regex, Vec<String>),
    /// A path glob (one per spelling of the home directory for `~/`), matched against paths
    /// relative to the root (or absolute).
    Path(Vec<PathGlob>),
    /// `domain:host`.
    Domain(String),
    /// Any other tool's argument: the pattern must equal some string argument.
    Exact(String),
}

/// A compiled `if` rule.
#[derive(Debug, Clone)]
pub struct Rule {
    /// The rule as written.
    pub source: String,
    /// The ka tools it applies to.
    tools: Vec<String>,
    pattern: Pattern,
}

impl Rule {
    /// Parse one rule; the error says what was expected.
    pub(crate) fn parse(source: &str) -> Result<Rule, String> {
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
        let family = if FILE_WRITES.contains(&ka.as_str()) {
            Some(FILE_WRITES)
        } else if FILE_READS.contains(&ka.as_str()) {
            Some(FILE_READS)
        } else {
            None
        };
        let tools: Vec<String> = match family {
            Some(family) if ka == "edit" || ka == "write" || ka == "read" => {
                family.iter().map(|t| (*t).to_owned()).collect()
            }
            _ => vec![ka.clone()],
        };
        let pattern = match inner.map(str::trim) {
            None | Some("") | Some("*") => Pattern::Any,
            Some(p) if ka == "bash" => Pattern::Command(command_regex(p)?, literal_lead(p)),
            Some(p) if family.is_some() => Pattern::Path(path_globs(p)?),
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

    /// Whether a call of `tool` with `arguments` matches, with `root` the project root; a rule
    /// that cannot be checked statically does not (see [`Rule::check`] for the third answer).
    pub fn matches(
        &self,
        tool: Option<&str>,
        arguments: Option<&Map<String, Value>>,
        root: &Path,
    ) -> bool {
        self.check(tool, arguments, root) == RuleMatch::Yes
    }

    /// Whether a call of `tool` with `arguments` matches, does not, or cannot be known to
    /// without running the shell (then why).
    pub fn check(
        &self,
        tool: Option<&str>,
        arguments: Option<&Map<String, Value>>,
        root: &Path,
    ) -> RuleMatch {
        self.check_with(tool, arguments, root, &ShellCache::default())
    }

    /// [`Rule::check`], reading the command line through `shell` (one reading for every rule
    /// of a dispatch).
    pub fn check_with(
        &self,
        tool: Option<&str>,
        arguments: Option<&Map<String, Value>>,
        root: &Path,
        shell: &ShellCache,
    ) -> RuleMatch {
        let Some(tool) = tool else {
            return RuleMatch::No;
        };
        if !self.tools.iter().any(|t| t == tool) {
            return RuleMatch::No;
        }
        let args = arguments;
        let yes = match &self.pattern {
            Pattern::Any => true,
            Pattern::Command(re, lead) => {
                return match args.and_then(|a| a.get("command")).and_then(Value::as_str) {
                    Some(cmd) => command_match(re, lead, &shell.read(cmd)),
                    None => RuleMatch::No,
                };
            }
            Pattern::Path(globs) => path_matches(globs, tool, args, root),
            Pattern::Domain(domain) => args
                .and_then(|a| a.get("url"))
                .and_then(Value::as_str)
                .and_then(host)
                .is_some_and(|h| h == *domain || h.ends_with(&format!(".{domain}"))),
            Pattern::Exact(want) => {
                args.is_some_and(|a| a.values().any(|v| v.as_str() == Some(want.as_str())))
            }
        };
        if yes {
            RuleMatch::Yes
        } else {
            RuleMatch::No
        }
    }
}

/// A call's command line as [`crate::shell`] reads it, kept for the next rule that asks about the
/// same text (a dispatch checks every hook's `if` against one call).
#[derive(Debug, Default)]
pub struct ShellCache(RefCell<Option<(String, Rc<CommandLine>)>>);

impl ShellCache {
    fn read(&self, command: &str) -> Rc<CommandLine> {
        let mut slot = self.0.borrow_mut();
        if let Some((text, line)) = &*slot {
            if text == command {
                return Rc::clone(line);
            }
        }
        let line = Rc::new(crate::shell::simple_commands(command));
        *slot = Some((command.to_owned(), Rc::clone(&line)));
        line
    }
}

/// The answer of [`Rule::check`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleMatch {
    /// The call matches.
    Yes,
    /// The call does not match.
    No,
    /// The call may match; only running the shell would tell (why).
    Unknown(String),
}

/// A command rule against every simple command of a line: any match is a match; else a
/// program or a word the pattern needs that is only known at run time, or a part of the line
/// that could not be read, leaves it unknown.
fn command_match(re: &regex::bytes::Regex, lead: &[String], line: &CommandLine) -> RuleMatch {
    let mut unknown = line.unknown.first().cloned();
    for cmd in &line.commands {
        let text = cmd.text();
        if re.is_match(text.as_bytes()) {
            return RuleMatch::Yes;
        }
        if unknown.is_some() {
            continue;
        }
        if cmd.dynamic.first() == Some(&true) {
            unknown = Some(format!(
                "the program `{}` is only known when the shell runs",
                cmd.words[0]
            ));
            continue;
        }
        // `git $sub` may be `git push`: a word the pattern spells out, known only at run time.
        let dynamic_at = (1..lead.len().min(cmd.words.len()))
            .find(|&k| cmd.dynamic[k])
            .filter(|&k| cmd.words[..k] == lead[..k]);
        if let Some(k) = dynamic_at {
            unknown = Some(format!(
                "`{}` in `{text}` is only known when the shell runs",
                cmd.words[k]
            ));
        }
    }
    match unknown {
        Some(why) => RuleMatch::Unknown(why),
        None => RuleMatch::No,
    }
}

/// The literal words a command pattern starts with, up to its first `*`.
fn literal_lead(pattern: &str) -> Vec<String> {
    let body = pattern.strip_suffix(":*").unwrap_or(pattern);
    body.split_whitespace()
        .take_while(|w| !w.contains('*'))
        .map(str::to_owned)
        .collect()
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

/// One compiled path rule: the glob, and its literal directory (the components before the
/// first wildcard), which a search must reach or lie under to read what the glob matches.
#[derive(Debug, Clone)]
pub(crate) struct PathGlob {
    glob: GlobMatcher,
    literal: PathBuf,
}

impl PathGlob {
    /// A file the call names: either form of either spelling.
    fn file(&self, s: &Spelling) -> bool {
        s.relative.as_deref().is_some_and(|r| self.glob.is_match(r))
            || self.glob.is_match(&s.absolute)
    }

    /// A tree a search reads: it holds the rule's directory, or lies inside it (the glob may
    /// match below it), or is a file the glob matches. `root` is the project root, which a
    /// relative rule is under.
    fn tree(&self, s: &Spelling, resolver: &Resolver) -> bool {
        self.file(s) || reaches(&self.literal, s, resolver)
    }
}

/// Whether a call of `tool` (a file tool of [`FILE_WRITES`] or [`FILE_READS`]) touches a path
/// one of `globs` matches, in any spelling.
fn path_matches(
    globs: &[PathGlob],
    tool: &str,
    args: Option<&Map<String, Value>>,
    root: &Path,
) -> bool {
    let resolver = Resolver::new(root);
    if !SEARCHES.contains(&tool) {
        return touched(args).iter().any(|p| {
            let spellings = resolver.spellings(p);
            spellings.iter().any(|s| globs.iter().any(|g| g.file(s)))
                || spellings
                    .first()
                    .is_some_and(|s| linked_name_matches(globs, &s.absolute, &resolver))
        });
    }
    search_dirs(tool, args).iter().any(|dir| {
        resolver
            .spellings(&dir.to_string_lossy())
            .iter()
            .any(|s| globs.iter().any(|g| g.tree(s, &resolver)))
    })
}

/// A regular file with more than one hard link is each of its names: whether another name of
/// it, found in a rule's literal directory, matches (see [`super::hard_links`]). When the search
/// gives up, it matches: the guard runs rather than lets a file it cannot rule out through.
fn linked_name_matches(globs: &[PathGlob], absolute: &Path, resolver: &Resolver) -> bool {
    let Some(id) = hard_links::linked(absolute) else {
        return false;
    };
    let mut budget = hard_links::LINK_SEARCH_LIMIT;
    globs.iter().any(|g| {
        let dir = resolver.real_root().join(&g.literal);
        match hard_links::names_under(&dir, id, &mut budget) {
            hard_links::Found::GaveUp => true,
            hard_links::Found::Names(names) => names
                .into_iter()
                .any(|name| g.file(&resolver.spelling(name))),
        }
    })
}

/// A gitignore-style path rule as globs over paths relative to the root: one, or two for `~/`
/// when the home directory is reached through a symlink (its real path is the same place).
fn path_globs(pattern: &str) -> Result<Vec<PathGlob>, String> {
    let mut sources = Vec::new();
    if let Some(rest) = pattern.strip_prefix("~/") {
        let home = crate::paths::home_dir().unwrap_or_default();
        let real = super::touched::real(&home);
        sources.push(format!("{}/{rest}", home.display()));
        if real != home {
            sources.push(format!("{}/{rest}", real.display()));
        }
    } else {
        sources.push(if let Some(abs) = pattern.strip_prefix("//") {
            format!("/{abs}")
        } else if let Some(rel) = pattern.strip_prefix('/') {
            rel.to_owned()
        } else if let Some(rel) = pattern.strip_prefix("./") {
            rel.to_owned()
        } else if !pattern.contains('/') {
            format!("**/{pattern}")
        } else {
            pattern.to_owned()
        });
    }
    sources
        .into_iter()
        .map(|glob| {
            let matcher = GlobBuilder::new(&glob)
                .literal_separator(true)
                .build()
                .map(|g| g.compile_matcher())
                .map_err(|e| format!("invalid path pattern `{pattern}`: {e}"))?;
            let literal = literal_dir(&glob);
            let literal = if literal == Path::new(".") {
                PathBuf::new()
            } else {
                literal
            };
            Ok(PathGlob {
                glob: matcher,
                literal,
            })
        })
        .collect()
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
