//! Configuration errors that point at the file, line, column and key.
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
/// One error in a configuration file, located by file, line and column.
pub struct ConfigError {
    /// The file it is in.
    pub file: PathBuf,
    /// The line (1-based), when known.
    pub line: Option<usize>,
    /// The column (1-based), when known.
    pub column: Option<usize>,
    /// Key path such as `hooks[2].timeout`.
    pub key: Option<String>,
    /// What is wrong, and what was expected.
    pub message: String,
    /// How to fix it.
    pub help: Option<String>,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(col) = self.column {
                write!(f, ":{col}")?;
            }
        }
        f.write_str(": ")?;
        if let Some(key) = &self.key {
            write!(f, "`{key}`: ")?;
        }
        f.write_str(&self.message)?;
        if let Some(help) = &self.help {
            write!(f, "\n  help: {help}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ConfigError {}

impl ConfigError {
    /// An error about a whole source (a file that cannot be read, an environment variable),
    /// with no position in it.
    pub(super) fn unpositioned(
        file: impl Into<PathBuf>,
        key: Option<String>,
        message: String,
        help: Option<&str>,
    ) -> ConfigError {
        ConfigError {
            file: file.into(),
            line: None,
            column: None,
            key,
            message,
            help: help.map(str::to_owned),
        }
    }
}

/// Every error of a load, all layers at once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigErrors(pub Vec<ConfigError>);

impl fmt::Display for ConfigErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "error: {e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ConfigErrors {}

/// Bytes between two checkpoints of [`Text`]'s char index.
const CHUNK: usize = 64;

/// A file's text with a line index and a char index, to turn byte spans into line:column.
///
/// Every key of every hook asks for its position, so a lookup must not rescan its line: on a
/// single-line file (`hooks = [{...}, {...}, ...]`) that is quadratic. Both indexes are built in
/// one pass; a lookup is a binary search for the line and a count of at most [`CHUNK`] bytes.
pub(super) struct Text<'a> {
    pub path: &'a Path,
    text: &'a str,
    line_starts: Vec<usize>,
    /// `chars[i]`: the number of chars in `text[..i * CHUNK]` (UTF-8 lead bytes, so the count
    /// is right at any byte offset, char boundary or not).
    chars: Vec<usize>,
}

/// The chars that start in `bytes`: every byte that is not a UTF-8 continuation byte.
fn lead_bytes(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| (b & 0xC0) != 0x80).count()
}

impl<'a> Text<'a> {
    pub fn new(path: &'a Path, text: &'a str) -> Text<'a> {
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        let mut chars = Vec::with_capacity(text.len() / CHUNK + 1);
        chars.push(0);
        let mut seen = 0;
        for chunk in text.as_bytes().chunks(CHUNK) {
            seen += lead_bytes(chunk);
            chars.push(seen);
        }
        Text {
            path,
            text,
            line_starts,
            chars,
        }
    }

    /// The number of chars in `text[..offset]` (`offset` at most the text's length).
    fn chars_before(&self, offset: usize) -> usize {
        let i = offset / CHUNK;
        let from = i * CHUNK;
        self.chars.get(i).copied().unwrap_or_default()
            + self.text.as_bytes().get(from..offset).map_or(0, lead_bytes)
    }

    /// 1-based line and column (in chars) of a byte offset. An offset past the end is read as
    /// the end; one inside a char (never a span's start) gets column 1.
    pub fn position(&self, offset: usize) -> (usize, usize) {
        let line = self.line_starts.partition_point(|&s| s <= offset).max(1);
        let start = self.line_starts[line - 1];
        let end = offset.min(self.text.len());
        let column = if self.text.is_char_boundary(end) {
            self.chars_before(end) - self.chars_before(start) + 1
        } else {
            1
        };
        (line, column)
    }

    pub fn error(
        &self,
        span: Option<Range<usize>>,
        key: Option<String>,
        message: impl Into<String>,
        help: Option<String>,
    ) -> ConfigError {
        let (line, column) = match span {
            Some(span) => {
                let (l, c) = self.position(span.start);
                (Some(l), Some(c))
            }
            None => (None, None),
        };
        ConfigError {
            file: self.path.to_path_buf(),
            line,
            column,
            key,
            message: message.into(),
            help,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The position as the definition reads: count the chars from the line start.
    fn naive(text: &str, offset: usize) -> (usize, usize) {
        let end = offset.min(text.len());
        let before = &text.as_bytes()[..end];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        let column = text.get(start..end).map_or(1, |s| s.chars().count() + 1);
        (line, column)
    }

    #[test]
    fn columns_count_chars_not_bytes() {
        let text = "é = \"ü\"\nnom = \"日本語\" # x\n";
        let t = Text::new(Path::new("f"), text);
        assert_eq!(t.position(0), (1, 1));
        // `=` after the two-byte `é` and a space: byte 3, char column 3.
        assert_eq!(t.position(3), (1, 3));
        let hash = text.find('#').expect("#");
        assert_eq!(t.position(hash), (2, 13));
        // Inside a multi-byte char: column 1, as before the index existed.
        assert_eq!(t.position(1), (1, 1));
    }

    #[test]
    fn last_line_without_newline_and_offsets_at_or_past_the_end() {
        let text = "a = 1\nbé = 2";
        let t = Text::new(Path::new("f"), text);
        assert_eq!(t.position(text.len()), (2, 7));
        assert_eq!(t.position(text.len() + 10), (2, 7));
        let t = Text::new(Path::new("f"), "a = 1\n");
        assert_eq!(t.position(6), (2, 1));
        let t = Text::new(Path::new("f"), "");
        assert_eq!(t.position(0), (1, 1));
        assert_eq!(t.position(3), (1, 1));
    }

    #[test]
    fn every_offset_of_long_mixed_lines_matches_counting_from_the_line_start() {
        // Lines longer than several checkpoints, multi-byte chars across checkpoint borders.
        let mut text = String::new();
        for i in 0..300 {
            text.push_str(["{a=\"é\"},", "日本,", "x", "🦀🦀 ", "\n"][(i * 7 + i / 3) % 5]);
        }
        text.push_str(&"ü".repeat(100));
        let t = Text::new(Path::new("f"), &text);
        for offset in 0..=text.len() + 2 {
            assert_eq!(t.position(offset), naive(&text, offset), "offset {offset}");
        }
    }
}
