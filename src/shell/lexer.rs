//! The shell's token rules (POSIX "Token Recognition", with bash's `$'…'`, `<(…)` and `&>`): a
//! command line becomes words and separators, each word with its quotes and escapes removed and
//! the command lines it substitutes (`$(…)`, backquotes, `<(…)`) lexed in turn.
//!
//! Nothing is expanded: a word that holds a parameter, a substitution, an unquoted glob or a
//! brace expansion is marked `dynamic`, because its value is only known when the shell runs.
//! What cannot be read at all (an unterminated quote, `$(` without `)`, arithmetic that hides a
//! substitution, nesting past `MAX_DEPTH`) is an error with the reason, so the caller can fail
//! closed. Never panics, whatever the input (property-tested in tests/it/proptest_parsers.rs).

/// Deepest nesting of substitutions and `sh -c` strings read; deeper is an error, not a stack
/// overflow.
pub(crate) const MAX_DEPTH: usize = 32;

/// One shell word.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Word {
    /// The word after quote removal (expansions kept as written).
    pub text: String,
    /// The word as written.
    pub raw: String,
    /// It holds an expansion whose value is only known when the shell runs.
    pub dynamic: bool,
    /// Some part of it was quoted or escaped (`"rm"`, `\rm`, `r''m`).
    pub quoted: bool,
    /// The command lines it substitutes, lexed.
    pub subs: Vec<Vec<Token>>,
}

impl Word {
    /// `NAME=value` or `NAME+=value` with the name unquoted: an assignment, not a command word.
    pub fn is_assignment(&self) -> bool {
        let name_end = self
            .raw
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(self.raw.len());
        let rest = &self.raw[name_end..];
        name_end > 0
            && !self.raw.starts_with(|c: char| c.is_ascii_digit())
            && (rest.starts_with('=') || rest.starts_with("+="))
    }
}

/// A token of a command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Token {
    /// A word.
    Word(Word),
    /// `;`, `&`, `&&`, `||`, `|`, `|&`, `;;`, newline, `(`, `)`: the end of a simple command.
    Separator,
    /// The target of a redirection: no argument, but its substitutions run.
    Target(Word),
}

/// The tokens of `line`, or why it cannot be read.
pub fn tokens(line: &str) -> Result<Vec<Token>, LexError> {
    lex(line, 0).map_err(|message| LexError { message })
}

/// Why a command line cannot be read as shell words (an unterminated quote, a substitution
/// nested too deep, ...).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct LexError {
    message: String,
}

impl LexError {
    /// What is wrong, in words.
    #[cfg(feature = "cli")]
    pub fn message(&self) -> &str {
        &self.message
    }
}

pub(crate) fn lex(line: &str, depth: usize) -> Result<Vec<Token>, String> {
    if depth > MAX_DEPTH {
        return Err(format!("it nests more than {MAX_DEPTH} levels deep"));
    }
    let mut lexer = Lexer {
        c: line.chars().collect(),
        i: 0,
        depth,
        heredocs: Vec::new(),
    };
    lexer.line(false)
}

struct Heredoc {
    delimiter: String,
    strip_tabs: bool,
    /// An unquoted delimiter: the body's `$(…)` and backquotes run.
    expands: bool,
}

struct Lexer {
    c: Vec<char>,
    i: usize,
    depth: usize,
    heredocs: Vec<Heredoc>,
}

fn is_blank(c: char) -> bool {
    c == ' ' || c == '\t'
}

fn ends_word(c: char) -> bool {
    is_blank(c) || matches!(c, '\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>')
}

impl Lexer {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.c.get(self.i + ahead).copied()
    }

    /// Tokens up to the end, or (in `$(…)` / `<(…)`) up to the `)` that closes it.
    fn line(&mut self, in_parens: bool) -> Result<Vec<Token>, String> {
        let mut out = Vec::new();
        let mut parens = 0usize;
        while let Some(c) = self.peek(0) {
            match c {
                ' ' | '\t' => self.i += 1,
                '\\' if self.peek(1) == Some('\n') => self.i += 2,
                '\n' => {
                    self.i += 1;
                    out.push(Token::Separator);
                    self.heredoc_bodies(&mut out)?;
                }
                '#' => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.i += 1;
                    }
                }
                '&' if self.peek(1) == Some('>') => {
                    self.i += if self.peek(2) == Some('>') { 3 } else { 2 };
                    self.target(&mut out)?;
                }
                ';' | '&' | '|' => {
                    self.i += 1;
                    if matches!(self.peek(0), Some(';' | '&' | '|')) {
                        self.i += 1;
                    }
                    out.push(Token::Separator);
                }
                '(' => {
                    // `((…))` may be arithmetic, where `<<` is a shift: read as a here-document
                    // it would hide the lines after it (`((y = 1<<z))` ⏎ `rm x` ⏎ `z`), so a
                    // `<<` in it is not read at all (the caller fails closed).
                    if self.peek(1) == Some('(') {
                        let at = self.i;
                        let text = self.balanced(2, '(', ')', "a `((` is never closed");
                        self.i = at;
                        if text.is_ok_and(|t| t.contains("<<")) {
                            return Err("`((…))` holds `<<`, a shift or a here-document".into());
                        }
                    }
                    self.i += 1;
                    parens += 1;
                    out.push(Token::Separator);
                }
                ')' => {
                    self.i += 1;
                    if in_parens && parens == 0 {
                        return Ok(out);
                    }
                    parens = parens.saturating_sub(1);
                    out.push(Token::Separator);
                }
                '<' | '>' if self.peek(1) != Some('(') => self.redirection(&mut out)?,
                _ => {
                    let word = self.word()?;
                    // `2>file`: the digits are the descriptor, not a word.
                    let descriptor = !word.quoted
                        && word.text.chars().all(|c| c.is_ascii_digit())
                        && matches!(self.peek(0), Some('<' | '>'));
                    if !descriptor {
                        out.push(Token::Word(word));
                    }
                }
            }
        }
        if in_parens {
            return Err("a `$(` or `<(` is never closed".into());
        }
        Ok(out)
    }

    /// `<`, `>`, `>>`, `<<`, `<<-`, `<<<`, `<>`, `<&`, `>&`, `>|` and the word after it.
    fn redirection(&mut self, out: &mut Vec<Token>) -> Result<(), String> {
        let first = self.peek(0);
        self.i += 1;
        let mut heredoc = None;
        if first == Some('<') && self.peek(0) == Some('<') {
            self.i += 1;
            match self.peek(0) {
                Some('<') => self.i += 1,
                Some('-') => {
                    self.i += 1;
                    heredoc = Some(true);
                }
                _ => heredoc = Some(false),
            }
        } else if matches!(self.peek(0), Some('>' | '&' | '|'))
            || (first == Some('<') && self.peek(0) == Some('>'))
        {
            self.i += 1;
        }
        match heredoc {
            Some(strip_tabs) => {
                while self.peek(0).is_some_and(is_blank) {
                    self.i += 1;
                }
                if self.peek(0).is_none_or(ends_word) {
                    return Err("a here-document without a delimiter".into());
                }
                let word = self.word()?;
                self.heredocs.push(Heredoc {
                    delimiter: word.text,
                    strip_tabs,
                    expands: !word.quoted,
                });
                Ok(())
            }
            None => self.target(out),
        }
    }

    fn target(&mut self, out: &mut Vec<Token>) -> Result<(), String> {
        while self.peek(0).is_some_and(is_blank) {
            self.i += 1;
        }
        if self
            .peek(0)
            .is_some_and(|c| !ends_word(c) || self.peek(1) == Some('('))
        {
            let word = self.word()?;
            out.push(Token::Target(word));
        }
        Ok(())
    }

    /// The bodies of the here-documents opened on the line just ended; an expanding body's
    /// substitutions run, so they are lexed as words' substitutions are.
    fn heredoc_bodies(&mut self, out: &mut Vec<Token>) -> Result<(), String> {
        for doc in std::mem::take(&mut self.heredocs) {
            let mut body = String::new();
            while self.peek(0).is_some() {
                let start = self.i;
                while self.peek(0).is_some_and(|c| c != '\n') {
                    self.i += 1;
                }
                let line: String = self.c[start..self.i].iter().collect();
                self.i = (self.i + 1).min(self.c.len());
                let cmp = if doc.strip_tabs {
                    line.trim_start_matches('\t')
                } else {
                    line.as_str()
                };
                if cmp == doc.delimiter {
                    break;
                }
                body.push_str(&line);
                body.push('\n');
            }
            if doc.expands && (body.contains('$') || body.contains('`')) {
                let mut inner = Lexer {
                    c: body.chars().collect(),
                    i: 0,
                    depth: self.depth + 1,
                    heredocs: Vec::new(),
                };
                let mut word = Word::default();
                while let Some(c) = inner.peek(0) {
                    match c {
                        '\\' => inner.i += 2,
                        '$' => inner.dollar(&mut word, true)?,
                        '`' => inner.backquote(&mut word, true)?,
                        _ => inner.i += 1,
                    }
                }
                out.push(Token::Target(word));
            }
        }
        Ok(())
    }

    /// One word, from the current character to the next unquoted blank or operator.
    fn word(&mut self) -> Result<Word, String> {
        let start = self.i;
        let mut w = Word::default();
        let mut braces = (false, false);
        while let Some(c) = self.peek(0) {
            match c {
                '<' | '>' if self.peek(1) == Some('(') => {
                    self.i += 2;
                    let inner = self.nested_line()?;
                    w.subs.push(inner);
                    w.dynamic = true;
                }
                c if ends_word(c) => break,
                '\\' => {
                    match self.peek(1) {
                        Some('\n') => {}
                        Some(next) => {
                            w.text.push(next);
                            w.quoted = true;
                        }
                        None => w.text.push('\\'),
                    }
                    self.i += 2;
                }
                '\'' => {
                    w.quoted = true;
                    self.i += 1;
                    loop {
                        match self.peek(0) {
                            None => return Err("a single quote is never closed".into()),
                            Some('\'') => break,
                            Some(c) => w.text.push(c),
                        }
                        self.i += 1;
                    }
                    self.i += 1;
                }
                '"' => {
                    w.quoted = true;
                    self.i += 1;
                    self.double_quoted(&mut w)?;
                }
                '$' => self.dollar(&mut w, false)?,
                '`' => self.backquote(&mut w, false)?,
                '*' | '?' | '[' => {
                    w.dynamic = true;
                    w.text.push(c);
                    self.i += 1;
                }
                '{' | '}' => {
                    if c == '{' {
                        braces.0 = true;
                    } else {
                        braces.1 = true;
                    }
                    w.text.push(c);
                    self.i += 1;
                }
                c => {
                    w.text.push(c);
                    self.i += 1;
                }
            }
        }
        let end = self.i.min(self.c.len());
        w.raw = self.c[start.min(end)..end].iter().collect();
        // `{rm,-rf,x}` is brace expansion: several words, known only by expanding.
        if braces == (true, true) && w.raw != "{" && w.raw != "}" {
            w.dynamic = true;
        }
        // `[` alone is the test builtin, not a glob.
        if w.raw == "[" || w.raw == "[[" {
            w.dynamic = false;
        }
        Ok(w)
    }

    /// After the opening `"`: up to and past the closing one.
    fn double_quoted(&mut self, w: &mut Word) -> Result<(), String> {
        loop {
            match self.peek(0) {
                None => return Err("a double quote is never closed".into()),
                Some('"') => {
                    self.i += 1;
                    return Ok(());
                }
                Some('\\') => {
                    match self.peek(1) {
                        Some('\n') => {}
                        Some(c @ ('$' | '`' | '"' | '\\')) => w.text.push(c),
                        Some(c) => {
                            w.text.push('\\');
                            w.text.push(c);
                        }
                        None => return Err("a double quote is never closed".into()),
                    }
                    self.i += 2;
                }
                Some('$') => self.dollar(w, true)?,
                Some('`') => self.backquote(w, true)?,
                Some(c) => {
                    w.text.push(c);
                    self.i += 1;
                }
            }
        }
    }

    /// After `$(` or `<(`: the inner line up to its `)`, lexed one level deeper.
    fn nested_line(&mut self) -> Result<Vec<Token>, String> {
        if self.depth + 1 > MAX_DEPTH {
            return Err(format!("it nests more than {MAX_DEPTH} levels deep"));
        }
        let mut inner = Lexer {
            c: std::mem::take(&mut self.c),
            i: self.i,
            depth: self.depth + 1,
            heredocs: Vec::new(),
        };
        let result = inner.line(true);
        self.c = std::mem::take(&mut inner.c);
        self.i = inner.i;
        result
    }

    /// `$name`, `${…}`, `$(…)`, `$((…))`, `$'…'`, `$"…"` or a lone `$`.
    fn dollar(&mut self, w: &mut Word, in_double_quotes: bool) -> Result<(), String> {
        let next = self.peek(1);
        match next {
            Some('\'') if !in_double_quotes => {
                w.quoted = true;
                self.i += 2;
                self.ansi_c(w)
            }
            Some('"') if !in_double_quotes => {
                w.quoted = true;
                self.i += 2;
                self.double_quoted(w)
            }
            Some('(') if self.peek(2) == Some('(') => {
                w.dynamic = true;
                let text = self.balanced(3, '(', ')', "a `$((` is never closed")?;
                if text.contains("$(") || text.contains('`') {
                    return Err("arithmetic `$((…))` holds a command substitution".into());
                }
                w.text.push_str("$((…))");
                Ok(())
            }
            Some('(') => {
                w.dynamic = true;
                self.i += 2;
                let inner = self.nested_line()?;
                w.subs.push(inner);
                w.text.push_str("$(…)");
                Ok(())
            }
            Some('{') => {
                w.dynamic = true;
                let text = self.balanced(2, '{', '}', "a `${` is never closed")?;
                if text.contains('$') || text.contains('`') {
                    // `${x:-$(rm …)}`: the default's substitutions run.
                    for token in lex(&text, self.depth + 1)? {
                        if let Token::Word(inner) | Token::Target(inner) = token {
                            w.subs.extend(inner.subs);
                        }
                    }
                }
                w.text.push_str("${");
                w.text.push_str(&text);
                w.text.push('}');
                Ok(())
            }
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                w.dynamic = true;
                w.text.push('$');
                self.i += 1;
                while let Some(c) = self
                    .peek(0)
                    .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
                {
                    w.text.push(c);
                    self.i += 1;
                }
                Ok(())
            }
            Some(c) if c.is_ascii_digit() || "@*#?$!-".contains(c) => {
                w.dynamic = true;
                w.text.push('$');
                w.text.push(c);
                self.i += 2;
                Ok(())
            }
            _ => {
                w.text.push('$');
                self.i += 1;
                Ok(())
            }
        }
    }

    /// From `skip` characters on, the text up to the matching `close` (nesting `open`); moves
    /// past it.
    fn balanced(
        &mut self,
        skip: usize,
        open: char,
        close: char,
        unclosed: &str,
    ) -> Result<String, String> {
        self.i += skip;
        let start = self.i;
        let mut depth = 0usize;
        let mut quote = None;
        while let Some(c) = self.peek(0) {
            match (quote, c) {
                (_, '\\') => self.i += 1,
                (None, '\'' | '"') => quote = Some(c),
                (Some(q), c) if c == q => quote = None,
                (None, c) if c == open => depth += 1,
                (None, c) if c == close => {
                    if depth == 0 {
                        let text = self.c[start..self.i].iter().collect();
                        self.i += 1;
                        // `$((…))` ends with two: the second closes the outer `(`.
                        if open == '(' {
                            if self.peek(0) != Some(')') {
                                return Err(unclosed.into());
                            }
                            self.i += 1;
                        }
                        return Ok(text);
                    }
                    depth -= 1;
                }
                _ => {}
            }
            self.i += 1;
        }
        Err(unclosed.into())
    }

    /// A backquoted substitution: its text with `\$`, `` \` `` and `\\` unescaped, lexed.
    fn backquote(&mut self, w: &mut Word, in_double_quotes: bool) -> Result<(), String> {
        self.i += 1;
        let mut text = String::new();
        loop {
            match self.peek(0) {
                None => return Err("a backquote is never closed".into()),
                Some('`') => break,
                Some('\\') => {
                    match self.peek(1) {
                        Some(c @ ('$' | '`' | '\\')) => text.push(c),
                        Some('"') if in_double_quotes => text.push('"'),
                        Some(c) => {
                            text.push('\\');
                            text.push(c);
                        }
                        None => return Err("a backquote is never closed".into()),
                    }
                    self.i += 2;
                    continue;
                }
                Some(c) => text.push(c),
            }
            self.i += 1;
        }
        self.i += 1;
        w.dynamic = true;
        w.subs.push(lex(&text, self.depth + 1)?);
        w.text.push_str("`…`");
        Ok(())
    }

    /// After `$'`: bash's ANSI-C quoting, decoded, up to and past the closing `'`.
    fn ansi_c(&mut self, w: &mut Word) -> Result<(), String> {
        loop {
            let Some(c) = self.peek(0) else {
                return Err("a `$'` quote is never closed".into());
            };
            self.i += 1;
            match c {
                '\'' => return Ok(()),
                '\\' => {
                    let Some(e) = self.peek(0) else {
                        return Err("a `$'` quote is never closed".into());
                    };
                    self.i += 1;
                    let simple = match e {
                        'a' => Some('\u{7}'),
                        'b' => Some('\u{8}'),
                        'e' | 'E' => Some('\u{1b}'),
                        'f' => Some('\u{c}'),
                        'n' => Some('\n'),
                        'r' => Some('\r'),
                        't' => Some('\t'),
                        'v' => Some('\u{b}'),
                        '\\' | '\'' | '"' | '?' => Some(e),
                        _ => None,
                    };
                    if let Some(s) = simple {
                        w.text.push(s);
                        continue;
                    }
                    match e {
                        '0'..='7' => {
                            let v = self.digits(8, 2, e.to_digit(8).unwrap_or(0));
                            w.text.push(char::from_u32(v & 0xff).unwrap_or('\u{fffd}'));
                        }
                        'x' => {
                            let v = self.digits(16, 2, 0);
                            w.text.push(char::from_u32(v).unwrap_or('\u{fffd}'));
                        }
                        'u' => {
                            let v = self.digits(16, 4, 0);
                            w.text.push(char::from_u32(v).unwrap_or('\u{fffd}'));
                        }
                        'U' => {
                            let v = self.digits(16, 8, 0);
                            w.text.push(char::from_u32(v).unwrap_or('\u{fffd}'));
                        }
                        'c' => {
                            if let Some(x) = self.peek(0) {
                                self.i += 1;
                                w.text.push(
                                    char::from_u32(u32::from(x) & 0x1f).unwrap_or('\u{fffd}'),
                                );
                            }
                        }
                        other => {
                            w.text.push('\\');
                            w.text.push(other);
                        }
                    }
                }
                c => w.text.push(c),
            }
        }
    }

    /// Up to `max` more digits of `radix`, added to `start`.
    fn digits(&mut self, radix: u32, max: usize, start: u32) -> u32 {
        let mut v = start;
        for _ in 0..max {
            match self.peek(0).and_then(|c| c.to_digit(radix)) {
                Some(d) => {
                    v = v.saturating_mul(radix).saturating_add(d);
                    self.i += 1;
                }
                None => break,
            }
        }
        v
    }
}
