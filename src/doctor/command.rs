//! Command resolution: the first simple command of a hook's `command`, split into words and
//! expanded the way `sh` would, and where its program is found.

use super::*;

// ---------------------------------------------------------------------------------------------
// Static checks of the command
// ---------------------------------------------------------------------------------------------

/// How a static check that could not be made begins; a passing `--exec` run settles it.
pub(crate) const NOT_CHECKED: &str = "not checked:";

/// Builtins of dash and bash (POSIX special and regular built-ins, and common extensions).
pub(crate) const BUILTINS: &[&str] = &[
    ":", ".", "[", "alias", "bg", "break", "cd", "command", "continue", "echo", "eval", "exec",
    "exit", "export", "false", "fc", "fg", "getopts", "hash", "jobs", "kill", "local", "printf",
    "pwd", "read", "readonly", "return", "set", "shift", "source", "test", "times", "trap", "true",
    "type", "ulimit", "umask", "unalias", "unset", "wait",
];

/// Shell reserved words that open a compound command: not resolvable word by word.
pub(crate) const KEYWORDS: &[&str] = &[
    "if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac", "{",
    "}", "[[", "function", "select", "((",
];

/// Words that run the command after them.
pub(crate) const WRAPPERS: &[&str] = &["exec", "command", "nohup", "env", "time"];

/// Programs that run a script named by their first non-option argument.
pub(crate) const INTERPRETERS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "python", "python2", "python3",
    "node", "nodejs", "ruby", "perl", "php", "lua", "luajit", "tclsh", "Rscript", "pwsh", "tsx",
    "ts-node",
];

/// Interpreter options whose code follows inline (`sh -c`, `python3 -m`, `node -e`): no script.
pub(crate) const INLINE_FLAGS: &[&str] = &[
    "-c",
    "-m",
    "-e",
    "-E",
    "-p",
    "-r",
    "--eval",
    "--print",
    "--command",
    "-",
];

/// Interpreter options that take the next word as their value (`python3 -W ignore x.py`,
/// `node --require m x.js`, `bash -o pipefail x.sh`).
pub(crate) const VALUE_OPTIONS: &[&str] = &[
    "-W",
    "-X",
    "-I",
    "-M",
    "-o",
    "-O",
    "+o",
    "+O",
    "-d",
    "--require",
    "--import",
    "--loader",
    "--experimental-loader",
    "--env-file",
];

/// One shell word of the first simple command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Word {
    pub(crate) text: String,
    /// It holds an expansion that cannot be known without running the shell.
    pub(crate) dynamic: bool,
}

/// Words being collected by [`first_command`].
#[derive(Default)]
pub(crate) struct Words {
    words: Vec<Word>,
    word: String,
    in_word: bool,
    dynamic: bool,
    /// The next word is a redirection target, not an argument.
    skip_next: bool,
}

impl Words {
    fn end(&mut self) {
        if self.in_word {
            let text = std::mem::take(&mut self.word);
            // `[` alone is the test builtin, not a glob.
            let dynamic = self.dynamic && text != "[" && text != "[[";
            let word = Word { text, dynamic };
            if !std::mem::take(&mut self.skip_next) {
                self.words.push(word);
            }
        }
        self.in_word = false;
        self.dynamic = false;
    }
}

/// Split the first simple command of `command` into words, expanding `~` and the variables
/// `lookup` knows. Stops at the first `;`, `&`, `|`, newline or comment; skips redirections.
pub(crate) fn first_command(
    command: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<Word>, String> {
    let chars: Vec<char> = command.chars().collect();
    let mut acc = Words::default();
    let mut i = 0;

    while i < chars.len() {
        let c = chars[i];
        match c {
            ' ' | '\t' => acc.end(),
            '\n' | ';' | '&' | '|' => break,
            '(' | ')' if !acc.in_word => {
                if acc.words.is_empty() {
                    return Err("a subshell `( ... )`".into());
                }
                break;
            }
            '<' | '>' => i = redirection(&chars, i, &mut acc),
            '#' if !acc.in_word => break,
            '\'' => {
                acc.in_word = true;
                let end = chars[i + 1..]
                    .iter()
                    .position(|&c| c == '\'')
                    .ok_or("an unterminated single quote")?;
                acc.word.extend(&chars[i + 1..i + 1 + end]);
                i += end + 1;
            }
            '"' => {
                acc.in_word = true;
                i = double_quoted(&chars, i + 1, lookup, &mut acc)?;
            }
            '\\' => {
                match chars.get(i + 1) {
                    Some('\n') => {}
                    Some(&next) => {
                        acc.in_word = true;
                        acc.word.push(next);
                    }
                    None => {}
                }
                i += 1;
            }
            '$' => {
                acc.in_word = true;
                i = expand(&chars, i, lookup, &mut acc.word, &mut acc.dynamic)?;
                continue;
            }
            '`' => {
                acc.in_word = true;
                acc.dynamic = true;
                i = skip_backticks(&chars, i)?;
            }
            '~' if !acc.in_word && matches!(chars.get(i + 1), None | Some('/' | ' ' | '\t')) => {
                acc.in_word = true;
                match lookup("HOME") {
                    Some(home) => acc.word.push_str(&home),
                    None => acc.dynamic = true,
                }
            }
            '*' | '?' | '[' => {
                acc.in_word = true;
                acc.dynamic = true;
                acc.word.push(c);
            }
            c => {
                acc.in_word = true;
                acc.word.push(c);
            }
        }
        i += 1;
    }
    acc.end();
    Ok(acc.words)
}

/// The inside of a double-quoted string starting at `chars[i]`, added to the word: `\` escapes
/// only `$`, `` ` ``, `"`, `\` and a newline, `$` expands. Returns the index of the closing quote.
fn double_quoted(
    chars: &[char],
    mut i: usize,
    lookup: &dyn Fn(&str) -> Option<String>,
    acc: &mut Words,
) -> Result<usize, String> {
    loop {
        let Some(&c) = chars.get(i) else {
            return Err("an unterminated double quote".into());
        };
        match c {
            '"' => return Ok(i),
            '\\' if matches!(chars.get(i + 1), Some('$' | '`' | '"' | '\\')) => {
                acc.word.push(chars[i + 1]);
                i += 1;
            }
            '\\' if chars.get(i + 1) == Some(&'\n') => i += 1,
            '$' => {
                i = expand(chars, i, lookup, &mut acc.word, &mut acc.dynamic)?;
                continue;
            }
            '`' => {
                acc.dynamic = true;
                i = skip_backticks(chars, i)?;
            }
            c => acc.word.push(c),
        }
        i += 1;
    }
}

/// A redirection operator at `chars[i]`: ends the word (dropping a descriptor's digits, as in
/// `2>`) and marks the next word, its target, to be skipped. Returns the operator's last index.
fn redirection(chars: &[char], mut i: usize, acc: &mut Words) -> usize {
    // `2>`: the digits are the descriptor, not a word.
    if acc.in_word && acc.word.chars().all(|c| c.is_ascii_digit()) && !acc.dynamic {
        acc.word.clear();
        acc.in_word = false;
    } else {
        acc.end();
    }
    while i + 1 < chars.len() && matches!(chars[i + 1], '>' | '<' | '&' | '|') {
        i += 1;
    }
    acc.skip_next = true;
    i
}

/// Expand the `$...` at `chars[i]` into `word`; returns the index after it.
pub(crate) fn expand(
    chars: &[char],
    i: usize,
    lookup: &dyn Fn(&str) -> Option<String>,
    word: &mut String,
    dynamic: &mut bool,
) -> Result<usize, String> {
    let name_char = |c: char| c.is_ascii_alphanumeric() || c == '_';
    match chars.get(i + 1) {
        Some('(') => {
            *dynamic = true;
            let mut depth = 0usize;
            for (j, &c) in chars.iter().enumerate().skip(i + 1) {
                match c {
                    '(' => depth += 1,
                    ')' => {
                        depth -= 1;
                        if depth == 0 {
                            return Ok(j + 1);
                        }
                    }
                    _ => {}
                }
            }
            Err("an unterminated `$(`".into())
        }
        Some('{') => {
            let end = chars[i + 2..]
                .iter()
                .position(|&c| c == '}')
                .ok_or("an unterminated `${`")?;
            let inner: String = chars[i + 2..i + 2 + end].iter().collect();
            match lookup(&inner).filter(|_| inner.chars().all(name_char)) {
                Some(value) => word.push_str(&value),
                None => *dynamic = true,
            }
            Ok(i + 3 + end)
        }
        Some(&c) if c.is_ascii_alphabetic() || c == '_' => {
            let len = chars[i + 1..].iter().take_while(|&&c| name_char(c)).count();
            let name: String = chars[i + 1..i + 1 + len].iter().collect();
            match lookup(&name) {
                Some(value) => word.push_str(&value),
                None => *dynamic = true,
            }
            Ok(i + 1 + len)
        }
        Some(&c) if c.is_ascii_digit() || "@*#?$!-".contains(c) => {
            *dynamic = true;
            Ok(i + 2)
        }
        _ => {
            word.push('$');
            Ok(i + 1)
        }
    }
}

/// The index of the backtick closing the one at `chars[i]`.
pub(crate) fn skip_backticks(chars: &[char], i: usize) -> Result<usize, String> {
    let mut j = i + 1;
    while j < chars.len() {
        match chars[j] {
            '\\' => j += 1,
            '`' => return Ok(j),
            _ => {}
        }
        j += 1;
    }
    Err("an unterminated backtick".into())
}

pub(crate) fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            let mut chars = name.chars();
            chars
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        }
        None => false,
    }
}

/// `dir/rel` without `.` components (`./x.sh` reads `/repo/x.sh`).
pub(crate) fn join(dir: &Path, rel: &str) -> PathBuf {
    dir.join(rel)
        .components()
        .filter(|c| *c != std::path::Component::CurDir)
        .collect()
}

pub(crate) fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// `name` on `path_var` (`PATH`), relative entries against `dir`.
pub(crate) fn find_on_path(name: &str, path_var: &str, dir: &Path) -> Option<PathBuf> {
    let listed = name.to_ascii_lowercase();
    path_var
        .split(':')
        .map(|d| dir.join(if d.is_empty() { "." } else { d }))
        .filter(|d| name.contains('/') || listing(d).is_none_or(|names| names.contains(&listed)))
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

/// The names in `dir` (lower-cased: a case-insensitive folder, such as a Windows drive under WSL,
/// finds `Tool` where it lists `tool`, so a listed name only decides which folders get a `stat`),
/// listed once per process; `None` where it cannot be listed (then each name is looked up on its
/// own). `check` and `doctor` ask [`find_on_path`] once per hook, and 40 000 hooks may name
/// 40 000 programs: a `statx` per `PATH` entry each (0.6 s of system time) where a listing of each
/// entry is a few `getdents`. Linux only (where most folders are case-sensitive).
fn listing(dir: &Path) -> Option<std::sync::Arc<std::collections::HashSet<String>>> {
    use std::collections::{HashMap, HashSet};
    use std::sync::{Arc, Mutex};
    type Listings = HashMap<PathBuf, Option<Arc<HashSet<String>>>>;
    static LISTINGS: Mutex<Option<Listings>> = Mutex::new(None);
    if !cfg!(target_os = "linux") {
        return None;
    }
    let mut listings = LISTINGS.lock().ok()?;
    let listings = listings.get_or_insert_with(HashMap::new);
    if let Some(known) = listings.get(dir) {
        return known.clone();
    }
    let names = std::fs::read_dir(dir).ok().and_then(|entries| {
        entries
            .map(|entry| entry.map(|e| e.file_name().to_string_lossy().to_ascii_lowercase()))
            .collect::<std::io::Result<HashSet<_>>>()
            .ok()
            .map(Arc::new)
    });
    listings.insert(dir.to_path_buf(), names.clone());
    names
}

pub(crate) fn quote(path: &Path) -> String {
    let s = path.to_string_lossy();
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:@%,".contains(c))
    {
        s.into_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}
