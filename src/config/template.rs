//! Placeholders in `command`: `{path}`, `{paths}`, `{tool}`, `{root}`.
//!
//! `command = "rustfmt --edition 2021 {paths}"` is a whole formatter hook. Every value is
//! shell-quoted, so spaces, quotes, `$(…)`, newlines and a leading `-` in a file name stay inert
//! (a path that starts with `-` gets `./`). The quoting fits where the placeholder stands: bare,
//! inside `"…"`, inside `'…'` or inside `$'…'` (the command is read as `sh` reads it, `$(…)` and
//! backticks opening a new level), so `printf '%s' "{path}"` and `'{path}'` are as inert as
//! `{path}`, and `"{paths}"` is one word per path. A placeholder is `{name}` with a lowercase name, not
//! preceded by `$` (`${HOME}` is the shell's); `{ echo; }` and Go templates such as
//! `{{.State}}` are left alone in a command that has no placeholder. In a command that has one,
//! `{{` and `}}` write a literal brace. An unknown name is a configuration error with a
//! did-you-mean.

/// The placeholders, in documentation order.
pub const NAMES: &[&str] = &["path", "paths", "tool", "root"];

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    /// A value, its quoting, and the backticks around it (each unescapes `\\`, `` \` ``, `\$`).
    Value(Value, Quoting, u32),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Value {
    Path,
    Paths,
    Tool,
    Root,
}

/// The shell quoting a placeholder stands in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Quoting {
    #[default]
    Bare,
    /// Inside `"…"`: `$`, `` ` ``, `"` and `\` are special.
    Double,
    /// Inside `'…'`: nothing is special but `'`.
    Single,
    /// Inside `$'…'`: `\` and `'` are special.
    Ansi,
    /// In a `# …` comment, which only a line break ends.
    Comment,
}

/// Where `sh` is in the command text: a stack of quotings, `$(…)` and backticks pushing a new
/// bare level (a quote inside `"$(…)"` opens its own quoting).
#[derive(Debug, Default)]
struct Lexer {
    stack: Vec<Level>,
    escaped: bool,
    /// A `<<` was read: the here-document starts at the next newline.
    heredoc: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Level {
    Double,
    Single,
    Ansi,
    /// `$(`: ends at the matching `)`; counts the parentheses opened inside.
    Subst(u32),
    Backtick,
    /// `# …` to the end of the line.
    Comment,
    /// A here-document's body, until the line that is its delimiter.
    Heredoc(String),
}

impl Lexer {
    /// The quoting at this point; `None` where no quoting can make a value inert (a
    /// here-document's body, which even a newline in a file name could end).
    fn quoting(&self) -> Option<Quoting> {
        Some(match self.stack.last() {
            Some(Level::Heredoc(_)) => return None,
            Some(Level::Comment) => Quoting::Comment,
            Some(Level::Double) => Quoting::Double,
            Some(Level::Single) => Quoting::Single,
            Some(Level::Ansi) => Quoting::Ansi,
            _ => Quoting::Bare,
        })
    }

    /// How many backticks the text is inside: each reads `\\` and `` \` `` once more.
    fn backticks(&self) -> u32 {
        self.stack.iter().filter(|l| **l == Level::Backtick).count() as u32
    }

    /// Reads `c`; `line` is the text of the current line before it.
    fn read(&mut self, c: char, prev: Option<char>, line: &str) {
        if self.escaped {
            self.escaped = false;
            return;
        }
        match self.stack.last() {
            Some(Level::Comment) => {
                if c == '\n' {
                    self.stack.pop();
                    self.start_heredoc();
                }
                return;
            }
            Some(Level::Heredoc(delimiter)) => {
                let tabs = line.trim_start_matches('\t');
                if c == '\n' && (line == delimiter || tabs == delimiter) {
                    self.stack.pop();
                }
                return;
            }
            _ => {}
        }
        match (self.stack.last().cloned(), c) {
            (Some(Level::Single), '\'') => {
                self.stack.pop();
            }
            (Some(Level::Single), _) => {}
            (Some(Level::Ansi), '\\') => self.escaped = true,
            (Some(Level::Ansi), '\'') => {
                self.stack.pop();
            }
            (Some(Level::Ansi), _) => {}
            (Some(Level::Double), '"') => {
                self.stack.pop();
            }
            (Some(Level::Double), '\\') => self.escaped = true,
            (Some(Level::Double), '`') => self.stack.push(Level::Backtick),
            (Some(Level::Double), '(') if prev == Some('$') => self.stack.push(Level::Subst(0)),
            (Some(Level::Double), _) => {}
            (top, _) => self.read_bare(top, c, prev, line),
        }
    }

    /// At a newline outside quotes: a pending here-document begins.
    fn start_heredoc(&mut self) {
        if let Some(delimiter) = self.heredoc.take() {
            self.stack
                .push(Level::Heredoc(delimiter.trim_end_matches('\0').to_owned()));
        }
    }

    /// Bare text, at the top level or inside `$(…)` or backticks.
    fn read_bare(&mut self, top: Option<Level>, c: char, prev: Option<char>, line: &str) {
        if let Some(delimiter) = self.heredoc.as_mut().filter(|d| !d.ends_with('\0')) {
            // `<<-'EOF'`, `<< "EOF"`, `<<EOF`: the word after `<<`, without its quotes.
            match c {
                '<' if delimiter.is_empty() => {
                    // `<<<`: a here-string, not a here-document.
                    self.heredoc = None;
                    return;
                }
                '-' | ' ' | '\t' if delimiter.is_empty() => return,
                '\'' | '"' | '\\' => return,
                c if c.is_whitespace() || ";&|<>()".contains(c) => delimiter.push('\0'),
                c => {
                    delimiter.push(c);
                    return;
                }
            }
        }
        let word_start = prev.is_none_or(|p| p.is_whitespace() || ";&|()".contains(p));
        match c {
            '\n' => self.start_heredoc(),
            '#' if word_start => self.stack.push(Level::Comment),
            '<' if prev == Some('<') && !line.ends_with("<<") => {
                // The delimiter is read from the rest of the line once it is there.
                self.heredoc = Some(String::new());
            }
            '\\' => self.escaped = true,
            '\'' if prev == Some('$') => self.stack.push(Level::Ansi),
            '\'' => self.stack.push(Level::Single),
            '"' => self.stack.push(Level::Double),
            '`' if top == Some(Level::Backtick) => {
                self.stack.pop();
            }
            '`' => self.stack.push(Level::Backtick),
            '(' if prev == Some('$') => self.stack.push(Level::Subst(0)),
            '(' => {
                if let Some(Level::Subst(n)) = self.stack.last_mut() {
                    *n += 1;
                }
            }
            ')' => match self.stack.last_mut() {
                Some(Level::Subst(0)) => {
                    self.stack.pop();
                }
                Some(Level::Subst(n)) => *n -= 1,
                _ => {}
            },
            _ => {}
        }
    }
}

/// A command with placeholders, parsed once at load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    parts: Vec<Part>,
}

/// The `{name}` at `i` (a `{` not preceded by `$`), with its end.
fn placeholder_at(chars: &[char], i: usize) -> Option<(String, usize)> {
    if chars[i] != '{' || (i > 0 && chars[i - 1] == '$') {
        return None;
    }
    let mut j = i + 1;
    while j < chars.len() && (chars[j].is_ascii_lowercase() || chars[j] == '_') {
        j += 1;
    }
    (j > i + 1 && j < chars.len() && chars[j] == '}')
        .then(|| (chars[i + 1..j].iter().collect(), j + 1))
}

impl Template {
    /// `None` when `command` has no placeholder (it runs exactly as written).
    pub fn parse(command: &str) -> Result<Option<Template>, String> {
        // Most commands have no brace at all: no placeholder, nothing to collect.
        if !command.contains('{') {
            return Ok(None);
        }
        let chars: Vec<char> = command.chars().collect();
        let any = (0..chars.len())
            .any(|i| placeholder_at(&chars, i).is_some() && !(i > 0 && chars[i - 1] == '{'));
        if !any {
            return Ok(None);
        }
        let mut parts = Vec::new();
        let mut lit = String::new();
        let mut lexer = Lexer::default();
        let mut line = String::new();
        let mut i = 0;
        while i < chars.len() {
            if chars[i] == '{' && chars.get(i + 1) == Some(&'{') {
                lit.push('{');
                i += 2;
                continue;
            }
            if chars[i] == '}' && chars.get(i + 1) == Some(&'}') {
                lit.push('}');
                i += 2;
                continue;
            }
            if let Some((name, end)) = placeholder_at(&chars, i) {
                let value = match name.as_str() {
                    "path" => Value::Path,
                    "paths" => Value::Paths,
                    "tool" => Value::Tool,
                    "root" => Value::Root,
                    other => return Err(unknown(other)),
                };
                let Some(quoting) = lexer.quoting() else {
                    return Err(format!(
                        "`{{{name}}}` stands in a here-document, where no quoting keeps a file \
                         name inert (a newline in it can end the document); pass it as an \
                         argument instead (`sh -c '…' sh {{{name}}}`, or `printf '%s\\n' {{{name}}} |`)"
                    ));
                };
                parts.push(Part::Literal(std::mem::take(&mut lit)));
                parts.push(Part::Value(value, quoting, lexer.backticks()));
                line.push('\u{1}');
                i = end;
                continue;
            }
            let prev = line.chars().last();
            lexer.read(chars[i], prev, &line);
            if chars[i] == '\n' {
                line.clear();
            } else {
                line.push(chars[i]);
            }
            lit.push(chars[i]);
            i += 1;
        }
        parts.push(Part::Literal(lit));
        parts.retain(|p| *p != Part::Literal(String::new()));
        Ok(Some(Template { parts }))
    }

    /// Whether it uses `{path}` (one path: a hook that can see several is an error).
    pub fn uses_single_path(&self) -> bool {
        self.parts
            .iter()
            .any(|p| matches!(p, Part::Value(Value::Path, ..)))
    }

    /// The command with every placeholder replaced by its shell-quoted value.
    pub fn render(&self, paths: &[&str], tool: Option<&str>, root: &str) -> String {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Literal(s) => out.push_str(s),
                Part::Value(value, q, ticks) => {
                    let text = match value {
                        Value::Path => {
                            quote_in(*q, &path_arg(paths.first().copied().unwrap_or("")))
                        }
                        Value::Paths => {
                            let quoted: Vec<String> =
                                paths.iter().map(|p| quote_in(*q, &path_arg(p))).collect();
                            quoted.join(separator(*q))
                        }
                        Value::Tool => quote_in(*q, tool.unwrap_or("")),
                        Value::Root => quote_in(*q, root),
                    };
                    out.push_str(&in_backticks(text, *ticks));
                }
            }
        }
        out
    }
}

fn unknown(name: &str) -> String {
    let close = NAMES
        .iter()
        .map(|n| (crate::event::edit_distance(name, n), n))
        .min()
        .filter(|(d, _)| *d <= 2)
        .map(|(_, n)| format!("did you mean `{{{n}}}`? "))
        .unwrap_or_default();
    format!(
        "unknown placeholder `{{{name}}}`; {close}placeholders are {{path}}, {{paths}}, {{tool}}, \
         {{root}} (write `{{{{` for a literal brace)"
    )
}

/// `value` as text that `sh` reads back as exactly `value`, where the placeholder stands: nothing
/// in it expands, and it never closes the quote around it.
fn quote_in(quoting: Quoting, value: &str) -> String {
    match quoting {
        Quoting::Bare => format!("'{}'", value.replace('\'', r"'\''")),
        // `'` ends the quote, `\'` is a quote, `'` opens it again.
        Quoting::Single => value.replace('\'', r"'\''"),
        Quoting::Double => {
            let mut out = String::with_capacity(value.len());
            for c in value.chars() {
                if matches!(c, '$' | '`' | '"' | '\\') {
                    out.push('\\');
                }
                out.push(c);
            }
            out
        }
        Quoting::Ansi => value.replace('\\', r"\\").replace('\'', r"\'"),
        // Nothing in a comment is read, but a line break would end it.
        Quoting::Comment => value.replace(['\n', '\r'], " "),
    }
}

/// `text` escaped for `ticks` levels of backticks, each of which reads `\\` and `` \` `` before
/// the command inside it runs.
fn in_backticks(mut text: String, ticks: u32) -> String {
    for _ in 0..ticks {
        text = text.replace('\\', r"\\").replace('`', r"\`");
    }
    text
}

/// Between two paths of `{paths}`: a closing quote, a blank and an opening one, so that each
/// path is its own word in any quoting.
fn separator(quoting: Quoting) -> &'static str {
    match quoting {
        Quoting::Bare => " ",
        Quoting::Double => "\" \"",
        Quoting::Single => "' '",
        Quoting::Ansi => "' $'",
        Quoting::Comment => " ",
    }
}

/// A path made unable to read as an option.
fn path_arg(path: &str) -> std::borrow::Cow<'_, str> {
    if path.starts_with('-') {
        format!("./{path}").into()
    } else {
        path.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_without_placeholders_are_untouched() {
        for c in [
            "echo ${HOME}",
            "grep x && { echo y; }",
            "docker inspect -f '{{.State}}'",
            "awk '{print $1}'",
        ] {
            assert_eq!(Template::parse(c), Ok(None), "{c}");
        }
    }

    #[test]
    fn values_are_quoted_and_inert() {
        let t = Template::parse("fmt {paths} --root {root} {tool}")
            .expect("ok")
            .expect("some");
        let out = t.render(
            &["a b", "$(touch x)", "-rf", "it's", "new\nline"],
            Some("write"),
            "/r",
        );
        assert_eq!(
            out,
            "fmt 'a b' '$(touch x)' './-rf' 'it'\\''s' 'new\nline' --root '/r' 'write'"
        );
    }

    #[test]
    fn braces_and_unknown_names() {
        let t = Template::parse("echo {{x}} {path}")
            .expect("ok")
            .expect("some");
        assert_eq!(t.render(&["a"], None, "/"), "echo {x} 'a'");
        let err = Template::parse("fmt {toool}").expect_err("unknown");
        assert!(err.contains("did you mean `{tool}`"), "{err}");
    }

    /// In every quoting a placeholder can stand in, `sh` reads back exactly the value: nothing
    /// expands, nothing is split, no quote is closed.
    #[test]
    fn values_are_inert_in_any_quoting() {
        let values = [
            "src/$(touch pwned)",
            "a'b\"c`d`e\\f$HOME g",
            "it's \"$(x)\"",
            "new\nline",
            "x\ntouch pwned #",
            "-rf",
            "'",
            "\\",
        ];
        let commands = [
            "printf '%s|' {paths}",
            "printf '%s|' \"{paths}\"",
            "printf '%s|' '{paths}'",
            "printf '%s|' \"$(printf '%s|' \"{paths}\" )\" | sed 's/||$/|/'",
            "x=`printf '%s|' {paths}`; printf '%s' \"$x\"",
            "# it's a comment {paths}\nprintf '%s|' {paths}",
            "x=\"`printf '%s|' \"{paths}\"`\"; printf '%s' \"$x\"",
            "printf '%s|' \"pre {paths}\" | sed 's/^pre //'",
        ];
        let dir = tempfile::tempdir().expect("tempdir");
        for command in commands {
            let t = Template::parse(command).expect("ok").expect("some");
            for value in values {
                let rendered = t.render(&[value, "b c"], None, "/");
                let out = std::process::Command::new("sh")
                    .arg("-c")
                    .arg(&rendered)
                    .current_dir(dir.path())
                    .output()
                    .expect("sh runs");
                let want = format!(
                    "{}|b c|",
                    if value.starts_with('-') {
                        format!("./{value}")
                    } else {
                        value.to_owned()
                    }
                );
                assert_eq!(
                    String::from_utf8_lossy(&out.stdout),
                    want,
                    "{command:?} rendered {rendered:?}"
                );
                assert!(!dir.path().join("pwned").exists(), "{rendered:?} ran it");
            }
        }
    }

    #[test]
    fn a_placeholder_in_a_here_document_is_an_error() {
        let err = Template::parse("cat <<'EOF'\n{path}\nEOF").expect_err("heredoc");
        assert!(err.contains("here-document"), "{err}");
        assert!(Template::parse("cat <<EOF\nx\nEOF\necho {path}").is_ok());
        assert!(Template::parse("cat <<< {path}").is_ok());
    }
}
