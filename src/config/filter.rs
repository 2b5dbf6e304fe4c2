//! Which tool calls a hook sees: `tool` (names and globs) and `matcher` (Claude Code syntax).
//!
//! Users copy filters from other agents' settings: `tool = "Write"`, `matcher = "Write|Edit"`,
//! `run_shell_command`. A name in another agent's spelling from the translation table
//! ([`crate::tools`]) matches the ka tool it translates to, and a regex or glob is tried
//! against the ka name and every agent's spelling of it, so such a filter never silently matches
//! nothing. A name that no agent knows is a warning ([`unknown_names`]).
//!
//! Tool families: one file can be written by five tools (Claude Code's Write, Edit, MultiEdit,
//! NotebookEdit; Gemini CLI's write_file and replace; Codex's apply_patch) and read by many more
//! (Read, Grep, Glob, LS, NotebookRead; read_file, read_many_files, grep_search, glob,
//! list_directory). `@file_writes` and `@file_reads` name each family in `tool` and `matcher`,
//! in any event. In a guard (`pre_tool_use`, `permission_request`), `write` and `edit` (in any
//! agent's spelling) stand for every writer and `read` for every reader, as Claude Code's own
//! `Edit(...)` and `Read(...)` permission rules do: a guard written `tool = ["write", "edit"]`
//! also sees a MultiEdit, a notebook edit and a Codex patch. Elsewhere a name is the one tool,
//! and `check` notes a list that names some writers but not all. Globs and regexes are matched
//! as written.

use std::sync::Arc;

use regex_syntax::ast::{self, Ast, ClassSetItem, Flag, FlagsItemKind, Visitor};

use crate::tools::{ToolRow, TOOLS};

/// Every tool that writes files, in ka's names: what `@file_writes`, `Edit(...)` and `Write(...)`
/// cover, and what `write` and `edit` stand for in a guard.
pub const FILE_WRITES: &[&str] = &[
    "write",
    "edit",
    "multi_edit",
    "notebook_edit",
    "apply_patch",
    "delete",
];

/// Every tool that reads or searches files, in ka's names, and the agents' names the translation
/// table does not carry (Gemini CLI's `read_many_files`, Claude Code's `NotebookRead`): what
/// `@file_reads` and `Read(...)` cover, and what `read` stands for in a guard.
pub const FILE_READS: &[&str] = &[
    "read",
    "grep",
    "glob",
    "ls",
    "read_many_files",
    "NotebookRead",
];

/// The readers whose path is a directory whose whole tree they read.
pub const SEARCHES: &[&str] = &["grep", "glob", "ls", "read_many_files"];

/// The named groups of `tool` and `matcher`.
const GROUPS: &[(&str, &[&str])] = &[("@file_writes", FILE_WRITES), ("@file_reads", FILE_READS)];

/// Which tool calls a hook of a tool event sees. Compiled once at load; a clone shares the
/// compiled filter (hooks of a file that repeat a filter's text share one: see `parse_file`).
#[derive(Debug, Clone)]
pub enum ToolFilter {
    /// No filter (or a matcher of `*` / `""`): every tool.
    All,
    /// `tool = [...]`: exact names or globs.
    Tools(Arc<Tools>),
    /// `matcher = "..."`, Claude Code semantics: an exact name list or an unanchored regex.
    Matcher(Arc<Matcher>),
}

/// A compiled `tool = [...]`.
#[derive(Debug)]
pub struct Tools {
    /// The patterns as written.
    pub patterns: Vec<String>,
    /// The patterns without glob syntax, compared as strings: the common case, and the
    /// check every tool call pays for.
    pub exact: Vec<String>,
    /// The real globs (`mcp__*`), when there are any.
    pub(crate) globs: Option<globset::GlobSet>,
    /// Whether the globs match each row of the tool table ([`TOOLS`]) in any spelling: worked
    /// out at load, so a call of a known tool costs no glob query.
    known: Box<[bool]>,
}

/// A compiled `matcher = "..."`.
#[derive(Debug)]
pub struct Matcher {
    /// The pattern as written.
    pub source: String,
    /// How it is compared.
    pub(crate) kind: MatcherKind,
    /// For a regex: whether it matches each row of the tool table ([`TOOLS`]) in any spelling,
    /// worked out at load (see [`Tools`]).
    known: Box<[bool]>,
}

#[derive(Debug)]
/// How a `matcher` compares.
pub enum MatcherKind {
    /// Plain names separated by `|`, compared as strings.
    Names(Vec<String>),
    /// A regular expression, matched against the whole field.
    Regex(regex::bytes::Regex),
}

impl ToolFilter {
    /// Whether a call of `tool` passes the filter. `None` (no tool) passes only [`ToolFilter::All`].
    pub fn matches(&self, tool: Option<&str>) -> bool {
        match (self, tool) {
            (ToolFilter::All, _) => true,
            (_, None) => false,
            (ToolFilter::Tools(tools), Some(t)) => {
                tools.exact.iter().any(|n| n == t)
                    || tools.globs.as_ref().is_some_and(|g| match row_of(t) {
                        Some(row) => tools.known[row],
                        None => g.is_match(t),
                    })
            }
            (ToolFilter::Matcher(matcher), Some(t)) => match &matcher.kind {
                MatcherKind::Names(names) => names.iter().any(|n| n == t),
                MatcherKind::Regex(re) => match row_of(t) {
                    Some(row) => matcher.known[row],
                    None => re.is_match(t.as_bytes()),
                },
            },
        }
    }

    /// The filter as written, for listings and de-duplication.
    pub fn describe(&self) -> String {
        match self {
            ToolFilter::All => "*".to_owned(),
            ToolFilter::Tools(tools) => format!("tool = {:?}", tools.patterns),
            ToolFilter::Matcher(matcher) => format!("matcher = {:?}", matcher.source),
        }
    }
}

/// For each row of the tool table, whether `test` holds for its ka name or any agent's
/// spelling of it (`write`, `Write`, `write_file`): a glob or regex filter is tried against
/// every spelling of a known tool, and a tool the table does not know is tried as it is.
fn known_rows(test: impl Fn(&str) -> bool) -> Box<[bool]> {
    TOOLS
        .iter()
        .map(|r| test(r.ka) || agent_names(r).any(&test))
        .collect()
}

/// The row of the tool table whose ka name is `tool`.
fn row_of(tool: &str) -> Option<usize> {
    static ROWS: std::sync::OnceLock<std::collections::HashMap<&'static str, usize>> =
        std::sync::OnceLock::new();
    ROWS.get_or_init(|| TOOLS.iter().enumerate().map(|(i, r)| (r.ka, i)).collect())
        .get(tool)
        .copied()
}

fn agent_names(row: &ToolRow) -> impl Iterator<Item = &'static str> {
    [row.claude, row.codex, row.gemini]
        .into_iter()
        .flatten()
        .chain(crate::tools::agents::names_of(row.ka))
}

/// The ka tool that `name` (in any agent's spelling) translates to, when it is not ka's own.
pub fn translation(name: &str) -> Option<&'static str> {
    if TOOLS.iter().any(|r| r.ka == name) {
        return None;
    }
    TOOLS
        .iter()
        .find(|r| agent_names(r).any(|n| n == name))
        .map(|r| r.ka)
}

/// How a call's tool name reads to ka's guards: `None` for ka's own names, MCP tools and the
/// readers known by an agent's name ([`FILE_READS`]); else `Some` of the ka tool it is another
/// agent's spelling of, or `Some(None)` for a name no agent has.
pub(crate) fn unknown_tool(name: &str) -> Option<Option<&'static str>> {
    if row_of(name).is_some() || FILE_READS.contains(&name) || name.starts_with("mcp__") {
        return None;
    }
    Some(translation(name))
}

/// Whether any agent (ka included) has a tool called `name`, or it names an MCP tool.
fn known(name: &str) -> bool {
    name.starts_with("mcp__")
        || GROUPS.iter().any(|(group, _)| *group == name)
        || FILE_READS.contains(&name)
        || TOOLS
            .iter()
            .any(|r| r.ka == name || agent_names(r).any(|n| n == name))
}

/// The closest known tool name to `name`, for a did-you-mean, in ka's spelling (`wirte` is
/// closest to Claude's `Write` and ka's `write`: the suggestion is `write`).
fn closest(name: &str) -> Option<&'static str> {
    TOOLS
        .iter()
        .flat_map(|r| {
            std::iter::once(r.ka)
                .chain(agent_names(r))
                .map(|n| (n, r.ka))
        })
        .map(|(known, ka)| {
            let d = crate::event::edit_distance(&name.to_lowercase(), &known.to_lowercase());
            (d > 2.max(known.len() / 3), d, ka)
        })
        .min()
        .filter(|(far, ..)| !far)
        .map(|(.., ka)| ka)
}

impl ToolFilter {
    /// The exact names of the filter as written (globs and regexes are not names).
    fn names(&self) -> Vec<String> {
        match self {
            ToolFilter::Tools(tools) => tools.patterns.clone(),
            ToolFilter::Matcher(matcher) if matches!(matcher.kind, MatcherKind::Names(_)) => {
                matcher_names(&matcher.source).collect()
            }
            _ => Vec::new(),
        }
    }

    /// For `check` and `doctor`: one note per name read in another agent's spelling, and one
    /// warning per name that matches no tool ka or any adapter knows.
    pub fn review(&self) -> (Vec<String>, Vec<String>) {
        let (mut notes, mut warnings) = (Vec::new(), Vec::new());
        let is_glob = |p: &str| p.contains(['*', '?', '[', ']', '{', '}', '\\']);
        for name in self.names().iter().filter(|n| !is_glob(n)) {
            let shown = crate::terminal::escape(name);
            if let Some(ka) = translation(name) {
                notes.push(format!(
                    "`{shown}` is another agent's name of ka's `{ka}`: it matches `{ka}` calls"
                ));
            } else if !known(name) {
                warnings.push(match closest(name) {
                    Some(close) => format!(
                        "`{shown}` matches no tool that ka or any adapter knows; did you mean `{close}`?"
                    ),
                    None => format!(
                        "`{shown}` matches no tool that ka or any adapter knows (MCP tools are `mcp__<server>__<tool>`)"
                    ),
                });
            }
        }
        (notes, warnings)
    }
}

impl ToolFilter {
    /// The exact names it compares against (translations and group members included).
    fn exact_names(&self) -> &[String] {
        match self {
            ToolFilter::Tools(tools) => &tools.exact,
            ToolFilter::Matcher(matcher) => match &matcher.kind {
                MatcherKind::Names(names) => names,
                MatcherKind::Regex(_) => &[],
            },
            ToolFilter::All => &[],
        }
    }

    /// In a guard: whether the filter names `write` or `edit` and `tool` writes files, or names
    /// `read` and `tool` reads them (see the module doc).
    pub fn covers_family_of(&self, tool: Option<&str>) -> bool {
        let Some(tool) = tool else {
            return false;
        };
        let names = self.exact_names();
        let has = |n: &str| names.iter().any(|x| x == n);
        (FILE_WRITES.contains(&tool) && (has("write") || has("edit")))
            || (FILE_READS.contains(&tool) && has("read"))
    }

    /// For `check`: a filter that names some writers but misses others (in a guard, `write` or
    /// `edit` already stands for them all).
    pub fn missing_writers(&self, guard: bool) -> Option<String> {
        let names = self.exact_names();
        let has = |n: &str| names.iter().any(|x| x == n);
        if !FILE_WRITES.iter().any(|w| has(w)) || (guard && (has("write") || has("edit"))) {
            return None;
        }
        let missing: Vec<&str> = FILE_WRITES.iter().copied().filter(|w| !has(w)).collect();
        (!missing.is_empty()).then(|| {
            format!(
                "it names some tools that write files but not {}, which write files too; write \
                 `tool = \"@file_writes\"` to cover every one",
                missing.join(", ")
            )
        })
    }
}

impl PartialEq for ToolFilter {
    fn eq(&self, other: &Self) -> bool {
        self.describe() == other.describe()
    }
}

/// `tool = [...]`: names without glob syntax are compared as strings, the rest become a GlobSet.
pub(super) fn compile_tools(patterns: Vec<String>) -> Result<ToolFilter, globset::Error> {
    let is_glob = |p: &str| p.contains(['*', '?', '[', ']', '{', '}', '\\']);
    let exact = with_translations(patterns.iter().filter(|p| !is_glob(p)).cloned());
    let mut builder = globset::GlobSetBuilder::new();
    let mut any_glob = false;
    for p in patterns.iter().filter(|p| is_glob(p)) {
        builder.add(globset::Glob::new(p)?);
        any_glob = true;
    }
    let globs = if any_glob {
        Some(builder.build()?)
    } else {
        None
    };
    let known = match &globs {
        Some(g) => known_rows(|name| g.is_match(name)),
        None => Box::default(),
    };
    Ok(ToolFilter::Tools(Arc::new(Tools {
        patterns,
        exact,
        globs,
        known,
    })))
}

/// The names of an exact-list matcher (`Edit|Write`, `Edit, Write`).
fn matcher_names(source: &str) -> impl Iterator<Item = String> + '_ {
    source
        .split(['|', ','])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// `names` plus the ka name of each one written in another agent's spelling and the members of
/// each group, compared as strings on every call (no table lookup on the hot path).
fn with_translations(names: impl Iterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for name in names {
        if let Some((_, members)) = GROUPS.iter().find(|(group, _)| *group == name) {
            for member in *members {
                if !out.iter().any(|n| n == member) {
                    out.push((*member).to_owned());
                }
            }
        }
        if let Some(ka) = translation(&name) {
            if !out.iter().any(|n| n == ka) {
                out.push(ka.to_owned());
            }
        }
        if !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// Claude Code matcher semantics: `*`, `""` → all; only name characters → exact list;
/// anything else → unanchored regex.
pub(super) fn compile_matcher(source: &str) -> Result<ToolFilter, regex::Error> {
    let trimmed = source.trim();
    if trimmed.is_empty() || trimmed == "*" {
        return Ok(ToolFilter::All);
    }
    let kind = if source
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "_- ,|@".contains(c))
    {
        MatcherKind::Names(with_translations(matcher_names(source)))
    } else {
        MatcherKind::Regex(regex(source)?)
    };
    let known = match &kind {
        MatcherKind::Regex(re) => known_rows(|name| re.is_match(name.as_bytes())),
        MatcherKind::Names(_) => Box::default(),
    };
    Ok(ToolFilter::Matcher(Arc::new(Matcher {
        source: source.to_owned(),
        kind,
        known,
    })))
}

/// A matcher's regex, matched against the bytes of a name. It is ASCII (`unicode(false)`): `\w`,
/// `\d`, `\s`, `\b` and `(?i)` mean what they mean in Claude Code's matchers, which are JavaScript
/// regexes without the `u` flag; `.` is any byte, and literal non-ASCII text still matches itself.
/// (Claude Code's hooks reference, https://code.claude.com/docs/en/hooks, "Matcher patterns": a
/// matcher with characters other than names and `|` is a JavaScript regular expression, tested
/// unanchored against the tool name.)
///
/// Why: the Unicode tables (case folding, property names) were over half of the pointers every
/// start-up relocates (see Cargo.toml and `benches/README.md`). The release build leaves them out,
/// while test builds get them back through dev-dependencies, so whatever would need them, `\p{…}`
/// and `(?u)`, is refused here with a message of its own, identically in both builds.
pub(crate) fn regex(source: &str) -> Result<regex::bytes::Regex, regex::Error> {
    if let Some(refusal) = needs_unicode(source) {
        return Err(regex::Error::Syntax(refusal));
    }
    regex::bytes::RegexBuilder::new(source)
        .unicode(false)
        .build()
}

// Why `needs_unicode` refuses a pattern.
const PROPERTY: &str = "Unicode property classes are not supported";
const U_FLAG: &str = "the `u` flag is not supported";
const HIGH_BYTE: &str = "an `\\x` escape above `\\x7F` is a raw byte here, which no UTF-8 text \
    matches; write the character itself or `\\x{…}`";
const FOLDED: &str = "`(?i)` folds ASCII letters only, so this letter would match only its own \
    case; write both cases";

/// What [`needs_unicode`] finds in a pattern: the first refusal, and whether a non-ASCII
/// letter meets `(?i)`.
#[derive(Default)]
struct Findings {
    refusal: Option<(ast::Span, &'static str)>,
    case_insensitive: bool,
    non_ascii: Option<ast::Span>,
}
impl Findings {
    fn refuse(&mut self, span: ast::Span, why: &'static str) {
        self.refusal.get_or_insert((span, why));
    }
    fn flags(&mut self, flags: &ast::Flags) {
        let mut negated = false;
        for item in &flags.items {
            match item.kind {
                FlagsItemKind::Negation => negated = true,
                FlagsItemKind::Flag(Flag::Unicode) if !negated => self.refuse(item.span, U_FLAG),
                FlagsItemKind::Flag(Flag::CaseInsensitive) if !negated => {
                    self.case_insensitive = true;
                }
                FlagsItemKind::Flag(_) => {}
            }
        }
    }
    fn literal(&mut self, literal: &ast::Literal) {
        if literal.byte().is_some_and(|byte| byte > 0x7f) {
            self.refuse(literal.span, HIGH_BYTE);
        } else if !literal.c.is_ascii() {
            self.non_ascii.get_or_insert(literal.span);
        }
    }
}
impl Visitor for Findings {
    type Output = Option<(ast::Span, &'static str)>;
    type Err = ();
    fn finish(self) -> Result<Self::Output, ()> {
        let folded = self.non_ascii.filter(|_| self.case_insensitive);
        Ok(self.refusal.or(folded.map(|span| (span, FOLDED))))
    }
    fn visit_pre(&mut self, node: &Ast) -> Result<(), ()> {
        match node {
            Ast::ClassUnicode(class) => self.refuse(class.span, PROPERTY),
            Ast::Flags(set) => self.flags(&set.flags),
            Ast::Group(group) => {
                if let ast::GroupKind::NonCapturing(flags) = &group.kind {
                    self.flags(flags);
                }
            }
            Ast::Literal(literal) => self.literal(literal),
            _ => {}
        }
        Ok(())
    }
    fn visit_class_set_item_pre(&mut self, item: &ClassSetItem) -> Result<(), ()> {
        match item {
            ClassSetItem::Unicode(class) => self.refuse(class.span, PROPERTY),
            ClassSetItem::Literal(literal) => self.literal(literal),
            ClassSetItem::Range(range) => {
                self.literal(&range.start);
                self.literal(&range.end);
            }
            _ => {}
        }
        Ok(())
    }
}

/// Why `source` cannot be an ASCII byte regex that means what it says, if it cannot: it needs the
/// Unicode tables (a `\p{…}` class, the `(?u)` flag), or it would quietly match something else
/// (`\xHH` above 0x7F is a raw byte, never a whole UTF-8 character; `(?i)` folds ASCII only, so a
/// non-ASCII letter under it would keep its case).
fn needs_unicode(source: &str) -> Option<String> {
    // A pattern the parser refuses is left to the regex builder, which words the error.
    let parsed = ast::parse::Parser::new().parse(source).ok()?;
    let (span, why) = ast::visit(&parsed, Findings::default()).ok()??;
    let text = source.get(span.start.offset..span.end.offset).unwrap_or("");
    Some(format!(
        "`{text}` (column {}): {why}; ka's matchers are ASCII regexes, as Claude Code's \
         JavaScript matchers are (list the characters: `[A-Za-z]`, `\\w`)",
        span.start.column
    ))
}
