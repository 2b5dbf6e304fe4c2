//! Placeholders in `command`: `{path}`, `{paths}`, `{tool}`, `{root}`.
//!
//! `command = "rustfmt --edition 2021 {paths}"` is a whole formatter hook. Every value is
//! shell-quoted, so spaces, quotes, `$(…)`, newlines and a leading `-` in a file name stay inert
//! (a path that starts with `-` gets `./`). A placeholder is `{name}` with a lowercase name, not
//! preceded by `$` (`${HOME}` is the shell's); `{ echo; }` and Go templates such as
//! `{{.State}}` are left alone in a command that has no placeholder. In a command that has one,
//! `{{` and `}}` write a literal brace. An unknown name is a configuration error with a
//! did-you-mean.

/// The placeholders, in documentation order.
pub const NAMES: &[&str] = &["path", "paths", "tool", "root"];

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Path,
    Paths,
    Tool,
    Root,
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
                let part = match name.as_str() {
                    "path" => Part::Path,
                    "paths" => Part::Paths,
                    "tool" => Part::Tool,
                    "root" => Part::Root,
                    other => return Err(unknown(other)),
                };
                parts.push(Part::Literal(std::mem::take(&mut lit)));
                parts.push(part);
                i = end;
                continue;
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
        self.parts.contains(&Part::Path)
    }

    /// The command with every placeholder replaced by its shell-quoted value.
    pub fn render(&self, paths: &[&str], tool: Option<&str>, root: &str) -> String {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Literal(s) => out.push_str(s),
                Part::Path => out.push_str(
                    &paths
                        .first()
                        .map_or_else(|| "''".to_owned(), |p| quote_path(p)),
                ),
                Part::Paths => {
                    let quoted: Vec<String> = paths.iter().map(|p| quote_path(p)).collect();
                    out.push_str(&quoted.join(" "));
                }
                Part::Tool => out.push_str(&quote(tool.unwrap_or(""))),
                Part::Root => out.push_str(&quote(root)),
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

/// Single-quoted for `sh`: nothing inside is expanded.
fn quote(value: &str) -> String {
    format!("'{}'", value.replace('\'', r"'\''"))
}

/// A path, quoted, and made unable to read as an option.
fn quote_path(path: &str) -> String {
    if path.starts_with('-') {
        quote(&format!("./{path}"))
    } else {
        quote(path)
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
}
