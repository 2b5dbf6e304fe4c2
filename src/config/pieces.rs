//! A layer file cut at its top-level `[[hooks]]` headers, so that each entry is parsed alone.
//!
//! toml 0.8 builds the tree of a whole document before anything is deserialised from it. At
//! 10 000 entries that tree is several times the size of the cache: parsing 5 000 entries took
//! 11.9× the time of 500, and the same texts parsed a piece at a time (each tree freed before
//! the next is built) 10.4×. `Config::load` of 10 000 hooks went from 13.2× to 10.7× the time
//! of 1 000 (`benches/README.md`, loading).
//!
//! The cut is only the scanner's reading of the grammar; the TOML parser stays the judge, and
//! the caller parses the whole file instead whenever it disagrees. A wrong cut (one that is
//! really inside a string, an array or an inline table) leaves that value open at the cut:
//! - if a piece comes before the cut, that piece ends inside the value and does not parse;
//! - if the rest does, the value runs on into the blanked piece after the cut, where a mark
//!   ([`rest_text`]) that is harmless between tables and an error inside any value makes the
//!   rest fail to parse, even if a later part of the rest would have closed the value.
//!
//! Besides, a piece whose top level holds anything but `hooks` entries (a misread header) is
//! refused by its caller, and so is a rest that defines `hooks`; and a header of a `hooks`
//! sub-table outside a piece, or one this scanner does not read (a quoted key with an escape,
//! say), makes [`split`] answer `None`.
//!
//! So a file that loads in pieces reads exactly as the whole document reads, and one that
//! does not gets the whole-document parse and its error messages.

use std::borrow::Cow;
use std::ops::Range;

/// Where a layer file's `[[hooks]]` entries are, and everything else.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Pieces<'a> {
    /// The byte ranges of the `[[hooks]]` entries (each with its sub-tables), in order.
    pub hooks: Vec<Range<usize>>,
    /// Everything else: the file up to the end of its last other part, with the pieces in it
    /// blanked and marked ([`rest_text`]), so its offsets are the file's.
    pub rest: Cow<'a, str>,
}

/// The pieces of `text`, or `None` when it has no `[[hooks]]` header or has a header this
/// scanner will not cut at (see the module documentation).
pub(super) fn split(text: &str) -> Option<Pieces<'_>> {
    let mut cuts = Cuts::default();
    let mut scan = Scanner {
        b: text.as_bytes(),
        i: 0,
        depth: 0,
    };
    loop {
        let line = scan.i;
        scan.skip_blanks();
        if scan.depth == 0 && scan.peek() == Some(b'[') {
            let header = scan.header()?;
            cuts.header(line, header)?;
        }
        if !scan.next_line() {
            break;
        }
    }
    cuts.finish(text)
}

/// What a header line opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Header {
    /// `[[hooks]]`: a new entry.
    Entry,
    /// `[hooks.x]`, `[[hooks.x]]`, `[hooks]`: part of the entry before it, if any.
    InHooks,
    /// Any other table.
    Other,
}

#[derive(Default)]
struct Cuts {
    hooks: Vec<Range<usize>>,
    /// The start of the open entry, if the last header that was not a `hooks` sub-table opened one.
    open: Option<usize>,
    /// The end of the last part that is not a piece.
    rest_end: usize,
}

impl Cuts {
    /// A header at byte `line` (its line's start).
    fn header(&mut self, line: usize, header: Header) -> Option<()> {
        match (header, self.open) {
            // One piece per entry: a run of them in one piece would be one large tree again.
            (Header::Entry, open) => {
                if open.is_none() {
                    self.rest_end = line;
                }
                self.close(line);
                self.open = Some(line);
            }
            (Header::InHooks, Some(_)) => {}
            // A sub-table of `hooks` after another table: the whole parse decides what it is.
            (Header::InHooks, None) => return None,
            (Header::Other, _) => self.close(line),
        }
        Some(())
    }

    fn close(&mut self, end: usize) {
        if let Some(start) = self.open.take() {
            self.hooks.push(start..end);
        }
    }

    fn finish(mut self, text: &str) -> Option<Pieces<'_>> {
        match self.open {
            Some(_) => self.close(text.len()),
            None => self.rest_end = text.len(),
        }
        if self.hooks.is_empty() {
            return None;
        }
        let rest = rest_text(text, &self.hooks, self.rest_end)?;
        Some(Pieces {
            hooks: self.hooks,
            rest,
        })
    }
}

/// Written over each piece that lies inside the rest, once it is blanked. Where the piece really
/// is (between two tables), both parts are harmless: a header of an array of tables that nothing
/// reads, and a comment. Anywhere else they are an error: inside an array `[[_]]` is no value,
/// and inside a multi-line string the quotes of the second part end it (`'''` a literal one,
/// `"""` a basic one), after which `"""x` or `x` cannot follow a value. So if a cut were wrong,
/// and the piece inside a value that the rest opens before it and closes after it, the rest does
/// not parse and the whole document decides.
const MARK_HEADER: &[u8] = b"[[_]]";
const MARK_QUOTES: &[u8] = b"#'''\"\"\"x";

/// The file up to `rest_end` with every piece in it blanked (every byte but a newline a space)
/// and marked ([`MARK_HEADER`], [`MARK_QUOTES`]); offsets and lines stay the file's. `None` when
/// a piece has no room for the mark (an entry of nothing but its header).
pub(super) fn rest_text<'a>(
    text: &'a str,
    hooks: &[Range<usize>],
    rest_end: usize,
) -> Option<Cow<'a, str>> {
    let head = text.get(..rest_end)?;
    // The pieces are in file order: those inside the rest come first.
    let mut inside = hooks.iter().take_while(|p| p.start < rest_end).peekable();
    if inside.peek().is_none() {
        return Some(Cow::Borrowed(head));
    }
    let mut bytes = head.as_bytes().to_vec();
    for piece in inside {
        mark(bytes.get_mut(piece.clone())?)?;
    }
    // Whole chars were blanked (pieces start and end at line starts) and the mark is ASCII.
    String::from_utf8(bytes).ok().map(Cow::Owned)
}

/// Blank one piece and write the mark at the start of its lines: the header part on the first
/// line (the piece's own header line, at least `[[hooks]]` long), the quotes after it if they
/// fit, or else on the first later line long enough.
fn mark(piece: &mut [u8]) -> Option<()> {
    for b in piece.iter_mut() {
        if *b != b'\n' {
            *b = b' ';
        }
    }
    let mut lines = Vec::new();
    let mut start = 0;
    for line in piece.split(|&b| b == b'\n') {
        lines.push(start..start + line.len());
        start += line.len() + 1;
    }
    let first = lines.first()?.clone();
    if first.len() < MARK_HEADER.len() {
        return None;
    }
    piece[first.start..first.start + MARK_HEADER.len()].copy_from_slice(MARK_HEADER);
    let quotes = if first.len() >= MARK_HEADER.len() + MARK_QUOTES.len() {
        first.start + MARK_HEADER.len()
    } else {
        lines[1..]
            .iter()
            .find(|l| l.len() >= MARK_QUOTES.len())?
            .start
    };
    piece[quotes..quotes + MARK_QUOTES.len()].copy_from_slice(MARK_QUOTES);
    Some(())
}

/// A byte scanner that knows just enough TOML to find the lines outside any value: strings
/// (four kinds), comments, and the brackets of arrays and inline tables.
struct Scanner<'a> {
    b: &'a [u8],
    i: usize,
    /// Open `[` and `{` of values.
    depth: usize,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn at(&self, s: &[u8]) -> bool {
        self.b.get(self.i..).is_some_and(|rest| rest.starts_with(s))
    }

    fn skip_blanks(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.i += 1;
        }
    }

    /// Read on to just after the next newline outside any string, array or inline table.
    /// False at the end of the text.
    fn next_line(&mut self) -> bool {
        while let Some(b) = self.peek() {
            match b {
                b'\n' => {
                    self.i += 1;
                    if self.depth == 0 {
                        return true;
                    }
                }
                b'#' => self.skip_to(|b| b == b'\n'),
                b'"' if self.at(b"\"\"\"") => self.multi_line(b'"'),
                b'\'' if self.at(b"'''") => self.multi_line(b'\''),
                b'"' => self.single_line(b'"'),
                b'\'' => self.single_line(b'\''),
                b'[' | b'{' => {
                    self.depth += 1;
                    self.i += 1;
                }
                b']' | b'}' => {
                    self.depth = self.depth.saturating_sub(1);
                    self.i += 1;
                }
                _ => self.i += 1,
            }
        }
        false
    }

    /// Move to the first byte for which `end` holds, or to the end.
    fn skip_to(&mut self, end: impl Fn(u8) -> bool) {
        match self
            .b
            .get(self.i..)
            .and_then(|rest| rest.iter().position(|&b| end(b)))
        {
            Some(n) => self.i += n,
            None => self.i = self.b.len(),
        }
    }

    /// A one-line string from its opening quote: to its closing quote, or to the end of the
    /// line if it has none (an error the parser reports).
    fn single_line(&mut self, quote: u8) {
        self.i += 1;
        while let Some(b) = self.peek() {
            match b {
                b'\n' => return,
                b'\\' if quote == b'"' => self.i += 2,
                _ if b == quote => {
                    self.i += 1;
                    return;
                }
                _ => self.i += 1,
            }
        }
    }

    /// A multi-line string from its opening triple quote to its closing one. The closing one
    /// may follow one or two quotes that belong to the string (`"""a""""` is `a"`).
    fn multi_line(&mut self, quote: u8) {
        self.i += 3;
        let delimiter = [quote; 3];
        while self.i < self.b.len() {
            if self.b[self.i] == b'\\' && quote == b'"' {
                self.i += 2;
            } else if self.at(&delimiter) {
                self.i += 3;
                for _ in 0..2 {
                    if self.peek() == Some(quote) {
                        self.i += 1;
                    }
                }
                return;
            } else {
                self.i += 1;
            }
        }
        self.i = self.b.len();
    }

    /// A table header from its `[`: what it opens, with the scanner just after its closing
    /// bracket(s). `None` for a header this scanner does not read.
    fn header(&mut self) -> Option<Header> {
        self.i += 1;
        let array = self.peek() == Some(b'[');
        if array {
            self.i += 1;
        }
        let mut keys = 0;
        let mut first_is_hooks = false;
        loop {
            self.skip_blanks();
            let key = self.key()?;
            if keys == 0 {
                first_is_hooks = key == b"hooks";
            }
            keys += 1;
            self.skip_blanks();
            if self.peek() == Some(b'.') {
                self.i += 1;
            } else {
                break;
            }
        }
        let close: &[u8] = if array { b"]]" } else { b"]" };
        if !self.at(close) {
            return None;
        }
        self.i += close.len();
        Some(match (first_is_hooks, array && keys == 1) {
            (true, true) => Header::Entry,
            (true, false) => Header::InHooks,
            (false, _) => Header::Other,
        })
    }

    /// One key of a header: bare, or quoted without escapes.
    fn key(&mut self) -> Option<&[u8]> {
        let start = self.i;
        match self.peek()? {
            quote @ (b'"' | b'\'') => {
                self.i += 1;
                let from = self.i;
                self.skip_to(|b| b == quote || b == b'\\' || b == b'\n');
                if self.peek() != Some(quote) {
                    return None;
                }
                self.i += 1;
                Some(&self.b[from..self.i - 1])
            }
            _ => {
                self.skip_to(|b| !(b.is_ascii_alphanumeric() || b == b'_' || b == b'-'));
                (self.i > start).then(|| &self.b[start..self.i])
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(text: &str) -> Vec<&str> {
        split(text)
            .map(|p| p.hooks.into_iter().map(|r| &text[r]).collect())
            .unwrap_or_default()
    }

    #[test]
    fn cuts_at_each_entry_and_keeps_its_sub_tables() {
        let text = "[hook_settings]\ntimeout = 3\n\n[[hooks]]\nevent = \"stop\"\n[hooks.env]\nA = \"1\"\n  [[ \"hooks\" ]] # two\nevent = \"stop\"\n[other]\nx = 1\n[['hooks']]\n";
        assert_eq!(
            pieces(text),
            [
                "[[hooks]]\nevent = \"stop\"\n[hooks.env]\nA = \"1\"\n",
                "  [[ \"hooks\" ]] # two\nevent = \"stop\"\n",
                "[['hooks']]\n",
            ]
        );
        let split = split(text).expect("pieces");
        // The rest keeps every offset: `[other]` is where it is in the file.
        assert_eq!(split.rest.len(), text.find("[['hooks']]").expect("last"));
        assert_eq!(split.rest.find("[other]"), text.find("[other]"));
        assert!(!split.rest.contains("hooks"), "{:?}", split.rest);
    }

    #[test]
    fn headers_inside_values_are_not_cuts() {
        for (text, cuts) in [
            ("[[hooks]]\ncommand = \"\"\"\n[[hooks]]\n\"\"\"\n", 1),
            ("[[hooks]]\ncommand = '''\n[[hooks]]\n'''\n", 1),
            // An escaped quote does not end a multi-line string; two quotes do not either.
            ("[[hooks]]\ncommand = \"\"\"a\\\"\"\n[[hooks]]\n\"\"\"\n", 1),
            // Five quotes: two of the string's, then its end.
            ("[[hooks]]\ncommand = \"\"\"a\"\"\"\"\"\n[[hooks]]\n", 2),
            ("[[hooks]]\ncommand = '''a'''''\n[[hooks]]\n", 2),
            ("[[hooks]]\nargs = [\n[[hooks]]\n]\n", 1),
            ("[[hooks]]\nargs = [ # ]\n[[hooks]]\n]\n", 1),
            ("[[hooks]]\nx = \"[\" # [\n[[hooks]]\n", 2),
            // A backslash is no escape in a literal string.
            ("[[hooks]]\nx = 'a\\' # [\n[[hooks]]\n", 2),
            ("[[hooks]]\r\nx = 1\r\n[[hooks]]\r\n", 2),
        ] {
            assert_eq!(pieces(text).len(), cuts, "{text:?}");
        }
    }

    #[test]
    fn refuses_what_the_whole_parse_must_decide() {
        assert_eq!(split("[other]\n[hooks.env]\n[[hooks]]\n"), None);
        assert_eq!(split("[[\"ho\\u006fks\"]]\n"), None);
        assert_eq!(split("[[hooks\n"), None);
        assert_eq!(split("hooks = [{ event = \"stop\" }]\n"), None);
    }
}
