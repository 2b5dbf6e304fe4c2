//! Terminal styling of the human output: colour only on a terminal, never with `NO_COLOR`;
//! warnings and errors wrapped to the terminal's width.

use std::io::IsTerminal;

/// Terminal styling: colour only on a terminal, never with `NO_COLOR`.
pub struct Output {
    pub color: bool,
}

impl Output {
    pub fn new() -> Output {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Output {
            color: !no_color && std::io::stderr().is_terminal(),
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

    /// `label message` on stderr, wrapped to its width, the label painted.
    fn say(&self, code: &str, label: &str, message: &str) {
        let text = crate::layout::wrap(
            &format!("{label} {message}"),
            crate::layout::width(crate::layout::Stream::Stderr),
        );
        let rest = text.strip_prefix(label).unwrap_or(&text);
        eprintln!("{}{rest}", self.paint(code, label));
    }
}
