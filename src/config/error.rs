//! Configuration errors that point at the file, line, column and key.
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConfigError {
    pub file: PathBuf,
    pub line: Option<usize>,
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

/// A file's text with a line index, to turn byte spans into line:column.
pub(super) struct Text<'a> {
    pub path: &'a Path,
    text: &'a str,
    line_starts: Vec<usize>,
}

impl<'a> Text<'a> {
    pub fn new(path: &'a Path, text: &'a str) -> Text<'a> {
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Text {
            path,
            text,
            line_starts,
        }
    }

    /// 1-based line and column (in chars) of a byte offset.
    pub fn position(&self, offset: usize) -> (usize, usize) {
        let line = self.line_starts.partition_point(|&s| s <= offset).max(1);
        let start = self.line_starts[line - 1];
        let end = offset.min(self.text.len());
        let column = self
            .text
            .get(start..end)
            .map_or(1, |s| s.chars().count() + 1);
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
