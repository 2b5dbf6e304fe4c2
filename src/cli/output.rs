//! Terminal styling of the human output: colour only on a terminal, never with `NO_COLOR`;
//! warnings and errors wrapped to the terminal's width, with the paths under the project root
//! shown relative to it when that is where the reader stands.

use std::io::IsTerminal;
use std::path::Path;

/// Terminal styling: colour only on a terminal, never with `NO_COLOR`.
pub struct Output {
    pub color: bool,
    /// The width warnings are wrapped to, asked of the terminal at the first one.
    width: std::sync::OnceLock<usize>,
}

impl Output {
    pub fn new() -> Output {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Output {
            color: !no_color && std::io::stderr().is_terminal(),
            width: std::sync::OnceLock::new(),
        }
    }

    pub fn paint(&self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    pub fn error(&self, message: &str) {
        self.say("1;31", "error:", message);
    }

    pub fn warn(&self, message: &str) {
        self.say("1;33", "warning:", message);
    }

    /// `label message` on stderr, wrapped to its width, the label painted: one `write` (a
    /// `check` of 40 000 hooks may say 40 000 things).
    fn say(&self, code: &str, label: &str, message: &str) {
        use std::io::Write as _;
        let width = *self
            .width
            .get_or_init(|| crate::layout::width(std::io::stderr()));
        let text = crate::layout::wrap(&format!("{label} {message}"), width);
        let rest = text.strip_prefix(label).unwrap_or(&text);
        let line = format!("{}{rest}\n", self.paint(code, label));
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    }
}

/// `text` with each path under `root` written relative to it, when the current directory is
/// `root` (so a relative path means what it says). Elsewhere, and for paths outside the
/// project, the text is unchanged: a relative path would then point somewhere else.
pub fn relative_to_root(text: &str, root: Option<&Path>) -> String {
    let Some(root) = root.filter(|r| r.parent().is_some()) else {
        return text.to_owned();
    };
    let here = std::env::current_dir().and_then(|d| d.canonicalize());
    let root_real = root.canonicalize();
    if !matches!((&here, &root_real), (Ok(h), Ok(r)) if h == r) {
        return text.to_owned();
    }
    let prefix = format!("{}/", root.to_string_lossy());
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(&prefix) {
        // Only where a path starts: not inside a longer path that happens to contain it.
        let starts_path = at == 0
            || rest[..at]
                .chars()
                .next_back()
                .is_some_and(|c| " `('\"=".contains(c));
        let after = &rest[at + prefix.len()..];
        out.push_str(&rest[..at]);
        if !(starts_path && after.starts_with(|c: char| !c.is_whitespace())) {
            out.push_str(&prefix);
        }
        rest = after;
    }
    out.push_str(rest);
    out
}
