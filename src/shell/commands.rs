//! The simple commands a command line runs, each as the words the program sees, with the
//! wrappers that only run another command peeled off one by one.
//!
//! Every form is kept: `sudo -u x nice rm -f a` yields `sudo -u x nice rm -f a`, `nice rm -f a`
//! and `rm -f a`, so a rule on `sudo` and a rule on `rm` both see it. The program word is reduced
//! to its basename (`/bin/rm`, `./rm`), and git's global options (`git -C . --no-pager push`)
//! are dropped after the form as written. Strings the shell runs again (`bash -c '…'`,
//! `eval …`, `env -S '…'`, `find -exec …`) are read as command lines of their own.

use super::lexer::{self, Token, Word, MAX_DEPTH};

/// One simple command, normalised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimpleCommand {
    /// The words after quote removal; the first is the program's basename.
    pub words: Vec<String>,
    /// For each word: whether its value is only known when the shell runs (`$x`, `$(…)`, a
    /// glob).
    pub dynamic: Vec<bool>,
    /// The program as written (`./bin/rm`), where `words[0]` is its basename.
    pub program: String,
}

impl SimpleCommand {
    fn new(words: &[Word]) -> SimpleCommand {
        let mut out = SimpleCommand {
            words: words.iter().map(|w| w.text.clone()).collect(),
            dynamic: words.iter().map(|w| w.dynamic).collect(),
            program: words.first().map(|w| w.text.clone()).unwrap_or_default(),
        };
        if let Some(first) = out.words.first_mut() {
            if let Some((_, base)) = first.rsplit_once('/').filter(|(_, b)| !b.is_empty()) {
                *first = base.to_owned();
            }
        }
        out
    }

    /// The words joined by single spaces: what `Bash(…)` patterns are matched against.
    pub fn text(&self) -> String {
        self.words.join(" ")
    }
}

/// What a command line runs, as far as it can be known without running it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandLine {
    /// The simple commands, in order.
    pub commands: Vec<SimpleCommand>,
    /// Why part of it cannot be known statically (an unterminated quote, `sh` reading its
    /// commands from standard input, `eval "$x"`); empty when everything was read.
    pub unknown: Vec<String>,
}

/// The simple commands of `line`, as a shell would run them.
pub fn simple_commands(line: &str) -> CommandLine {
    let mut out = CommandLine::default();
    read_line(line, 0, &mut out);
    out
}

/// The simple commands of one run of words (no separators): the command itself with its
/// wrappers peeled, and what it runs in turn.
pub fn simple_commands_of(words: &[Word]) -> CommandLine {
    let mut out = CommandLine::default();
    simple(words, 0, &mut out);
    out
}

fn read_line(line: &str, depth: usize, out: &mut CommandLine) {
    match lexer::lex(line, depth) {
        Ok(tokens) => read_tokens(&tokens, depth, out),
        Err(why) => out.unknown.push(why),
    }
}

/// Reserved words that may start a simple command's token run without being its program.
const LEADING_KEYWORDS: &[&str] = &[
    "{", "}", "!", "if", "then", "elif", "else", "fi", "do", "done", "while", "until", "esac",
    "in", "coproc",
];

/// Compound commands whose first words are no command: `for x in a b`, `case $x in`.
const NOT_COMMANDS: &[&str] = &["for", "case", "select"];

fn read_tokens(tokens: &[Token], depth: usize, out: &mut CommandLine) {
    let mut words: Vec<Word> = Vec::new();
    for token in tokens {
        match token {
            Token::Word(w) => {
                subs(w, depth, out);
                out.unknown.extend(evaluated(w));
                words.push(w.clone());
            }
            Token::Target(w) => {
                subs(w, depth, out);
                out.unknown.extend(evaluated(w));
            }
            Token::Separator => simple(&std::mem::take(&mut words), depth, out),
        }
    }
    simple(&words, depth, out);
}

fn subs(word: &Word, depth: usize, out: &mut CommandLine) {
    for sub in &word.subs {
        // `$(case x in x) rm …;; esac)`: this reader ends the substitution at the pattern's `)`.
        let case = sub
            .iter()
            .any(|t| matches!(t, Token::Word(w) if !w.quoted && w.text == "case"));
        if case {
            out.unknown.push(format!(
                "`{}` holds a `case` inside a substitution, which this reader cannot follow",
                word.raw
            ));
        }
        read_tokens(sub, depth + 1, out);
    }
}

/// What bash evaluates in `word` that can run commands only known when it runs: arithmetic
/// (`$((x))`) and indirect expansion (`${!x}`) evaluate a variable's value, and an array
/// subscript in it (`a[$(rm …)]`) runs; `BASH_ENV=file` (and `ENV`) makes a shell run the file.
fn evaluated(word: &Word) -> Option<String> {
    let raw = word.raw.as_str();
    let arithmetic = raw.match_indices("$((").any(|(at, _)| {
        raw[at + 3..]
            .chars()
            .take_while(|c| *c != ')')
            .any(|c| c.is_ascii_alphabetic() || c == '_')
    });
    if arithmetic || raw.contains("${!") {
        return Some(format!(
            "`{raw}` evaluates a variable's value as bash runs it (an array subscript in it runs \
             commands)"
        ));
    }
    let env = ["BASH_ENV=", "ENV=", "BASH_ENV+=", "ENV+="];
    (!word.quoted && env.iter().any(|e| word.text.starts_with(e)))
        .then(|| format!("`{raw}` makes a shell run the file it names before its commands"))
}

/// Builtins that evaluate an array subscript in their arguments (`test -v 'a[$(rm …)]'`,
/// `printf -v`, `read`, `declare`, `let`, `unset`): the subscript's substitutions run.
const SUBSCRIPT_BUILTINS: &[&str] = &[
    "test",
    "[",
    "[[",
    "printf",
    "read",
    "declare",
    "typeset",
    "local",
    "export",
    "readonly",
    "let",
    "unset",
    "mapfile",
    "readarray",
    "wait",
    "getopts",
    "((",
];

/// An argument of a [`SUBSCRIPT_BUILTINS`] whose subscript bash evaluates at run time.
fn subscript(program: &str, rest: &[Word]) -> Option<String> {
    if !SUBSCRIPT_BUILTINS.contains(&program) {
        return None;
    }
    let word = rest.iter().find(|w| {
        let raw = w.raw.as_str();
        let subscripted = raw.contains('[') && (raw.contains('$') || raw.contains('`'));
        let arithmetic = program == "let" && raw.chars().any(|c| c.is_ascii_alphabetic());
        subscripted || arithmetic
    })?;
    Some(format!(
        "`{program}` evaluates `{}` as arithmetic or an array subscript, which can run commands",
        word.raw
    ))
}

/// One run of words between separators.
fn simple(words: &[Word], depth: usize, out: &mut CommandLine) {
    let mut w = words;
    // `coproc NAME { rm …; }`: the name is no command.
    if let [first, _, brace, ..] = w {
        let opens = !brace.quoted && matches!(brace.text.as_str(), "{" | "(");
        if !first.quoted && first.text == "coproc" && opens {
            w = &w[2..];
        }
    }
    while let Some(first) = w.first() {
        let keyword = !first.quoted && LEADING_KEYWORDS.contains(&first.text.as_str());
        if keyword || first.is_assignment() {
            w = &w[1..];
        } else {
            break;
        }
    }
    if w.first()
        .is_some_and(|f| !f.quoted && NOT_COMMANDS.contains(&f.text.as_str()))
    {
        return;
    }
    // `function f { rm x; }`: the name is no command, but the body that follows it in the same
    // run (bash needs no separator after the name) is.
    if w.first().is_some_and(|f| !f.quoted && f.text == "function") {
        if let Some(body) = w.get(2..) {
            simple(body, depth, out);
        }
        return;
    }
    command(w, depth, out);
}

/// A command's words from its program on: record it, then what it runs.
fn command(words: &[Word], depth: usize, out: &mut CommandLine) {
    if depth > MAX_DEPTH {
        out.unknown
            .push(format!("it nests more than {MAX_DEPTH} levels deep"));
        return;
    }
    let Some(first) = words.first() else { return };
    let cmd = SimpleCommand::new(words);
    if first.dynamic {
        out.commands.push(cmd);
        return;
    }
    let program = cmd.words[0].clone();
    out.commands.push(cmd);
    let rest = &words[1..];
    out.unknown.extend(subscript(&program, rest));
    if let Some(inner) = unwrap(&program, rest, depth, out) {
        command(&inner, depth + 1, out);
        return;
    }
    match program.as_str() {
        "git" => git(words, out),
        "sh" | "bash" | "dash" | "zsh" | "ksh" | "mksh" | "ash" | "yash" | "posh" => {
            shell(&program, rest, depth, out)
        }
        "eval" => {
            if let Some(w) = rest.iter().find(|w| w.dynamic) {
                out.unknown.push(format!(
                    "`eval` runs `{}`, known only when the shell runs",
                    w.raw
                ));
            }
            // `eval -- rm x` runs `rm x`.
            let rest = match rest.first() {
                Some(w) if w.text == "--" && !w.quoted => &rest[1..],
                _ => rest,
            };
            let text: Vec<&str> = rest.iter().map(|w| w.text.as_str()).collect();
            read_line(&text.join(" "), depth + 1, out);
        }
        "trap" => trap(rest, depth, out),
        // `shopt -s expand_aliases; alias r=rm; r -f a` runs `rm`.
        "alias" if rest.iter().any(|w| w.text.contains('=')) => out.unknown.push(
            "it defines an alias, which the shell may expand in place of any later command"
                .to_owned(),
        ),
        "source" | "." => {
            if let Some(w) = rest.first().filter(|w| w.dynamic || reads_stdin(&w.text)) {
                out.unknown.push(format!(
                    "`{program}` reads `{}`, known only when the shell runs",
                    w.raw
                ));
            }
        }
        "find" => {
            let mut i = 0;
            while i < rest.len() {
                let flag = rest[i].text.as_str();
                i += 1;
                if matches!(flag, "-exec" | "-execdir" | "-ok" | "-okdir") {
                    let start = i;
                    while i < rest.len() && !matches!(rest[i].text.as_str(), ";" | "+") {
                        i += 1;
                    }
                    command(&rest[start..i], depth + 1, out);
                }
            }
        }
        _ => {}
    }
}

/// Options of a wrapper: the short letters and long names that take a value.
struct Options {
    short_values: &'static str,
    long_values: &'static [&'static str],
}

impl Options {
    /// How many words the options at the start of `w` take (GNU style: clusters, attached
    /// values, `--name=value`, `--` ends them).
    fn count(&self, w: &[Word]) -> usize {
        let mut i = 0;
        while let Some(word) = w.get(i) {
            let t = word.text.as_str();
            if word.dynamic || !t.starts_with('-') || t == "-" {
                break;
            }
            i += 1;
            if t == "--" {
                break;
            }
            if let Some(long) = t.strip_prefix("--") {
                if !long.contains('=') && self.long_values.contains(&long) {
                    i += 1;
                }
                continue;
            }
            for (at, c) in t[1..].char_indices() {
                if self.short_values.contains(c) {
                    if at + c.len_utf8() == t.len() - 1 {
                        i += 1;
                    }
                    break;
                }
            }
        }
        i.min(w.len())
    }
}

/// The command a wrapper runs, or `None` when `program` is no wrapper (or runs nothing).
fn unwrap(program: &str, rest: &[Word], depth: usize, out: &mut CommandLine) -> Option<Vec<Word>> {
    if let Some((_, options)) = SKIP_OPTIONS.iter().find(|(name, _)| *name == program) {
        return Some(rest[options.count(rest)..].to_vec());
    }
    match program {
        "command" => {
            // `command -v rm` only looks `rm` up.
            let n = NO_OPTION_VALUES.count(rest);
            let looks_up = rest[..n]
                .iter()
                .any(|w| w.text != "--" && (w.text.contains('v') || w.text.contains('V')));
            (!looks_up).then(|| rest[n..].to_vec())
        }
        "timeout" => {
            let n = TIMEOUT_OPTIONS.count(rest);
            // Then the duration.
            Some(rest.get(n + 1..).unwrap_or_default().to_vec())
        }
        "sudo" => {
            let w = &rest[SUDO_OPTIONS.count(rest)..];
            let assignments = w.iter().take_while(|w| w.is_assignment()).count();
            Some(w[assignments..].to_vec())
        }
        // Without a command, xargs runs `echo`.
        "xargs" => Some(rest[XARGS_OPTIONS.count(rest)..].to_vec()),
        "env" => env(rest, depth, out),
        "busybox" => Some(rest.to_vec()),
        _ => None,
    }
}

/// Options without values (`builtin`, `nohup`, `setsid`, `command`).
const NO_OPTION_VALUES: Options = Options {
    short_values: "",
    long_values: &[],
};

/// The wrappers whose command follows their options, and the options that take a value.
const SKIP_OPTIONS: &[(&str, Options)] = &[
    ("builtin", NO_OPTION_VALUES),
    ("nohup", NO_OPTION_VALUES),
    ("setsid", NO_OPTION_VALUES),
    (
        "exec",
        Options {
            short_values: "a",
            long_values: &[],
        },
    ),
    (
        "nice",
        Options {
            short_values: "n",
            long_values: &["adjustment"],
        },
    ),
    (
        "time",
        Options {
            short_values: "fo",
            long_values: &["format", "output"],
        },
    ),
    (
        "stdbuf",
        Options {
            short_values: "ioe",
            long_values: &["input", "output", "error"],
        },
    ),
    (
        "ionice",
        Options {
            short_values: "cnpPu",
            long_values: &["class", "classdata", "pid", "pgid", "uid"],
        },
    ),
    (
        "doas",
        Options {
            short_values: "uC",
            long_values: &[],
        },
    ),
];

const TIMEOUT_OPTIONS: Options = Options {
    short_values: "sk",
    long_values: &["signal", "kill-after"],
};

const SUDO_OPTIONS: Options = Options {
    short_values: "ugCDprtTUR",
    long_values: &[
        "user",
        "group",
        "close-from",
        "chdir",
        "prompt",
        "role",
        "type",
        "command-timeout",
        "other-user",
        "chroot",
        "host",
    ],
};

const XARGS_OPTIONS: Options = Options {
    short_values: "adEILnPs",
    long_values: &[
        "arg-file",
        "delimiter",
        "eof",
        "replace",
        "max-lines",
        "max-args",
        "max-procs",
        "max-chars",
        "process-slot-var",
    ],
};

/// `env [-i] [-u NAME] [-C dir] [-S string] [NAME=value…] command…`.
fn env(rest: &[Word], depth: usize, out: &mut CommandLine) -> Option<Vec<Word>> {
    let options = Options {
        short_values: "uCSP",
        long_values: &["unset", "chdir", "split-string"],
    };
    let n = options.count(rest);
    let mut words: Vec<Word> = Vec::new();
    // `-S 'rm -rf x'` splits its value into words that come first.
    let mut i = 0;
    while i < n {
        let t = rest[i].text.as_str();
        i += 1;
        let split = if let Some(v) = t.strip_prefix("--split-string=") {
            Some(v.to_owned())
        } else if t == "--split-string" {
            i += 1;
            rest.get(i - 1).map(|w| w.text.clone())
        } else if let Some(long) = t.strip_prefix("--") {
            i += usize::from(options.long_values.contains(&long));
            None
        } else {
            let cluster = &t[1..];
            match cluster.find(|c| "uCSP".contains(c)) {
                Some(at) if cluster[at..].starts_with('S') => {
                    let attached = &cluster[at + 1..];
                    if attached.is_empty() {
                        i += 1;
                        rest.get(i - 1).map(|w| w.text.clone())
                    } else {
                        Some(attached.to_owned())
                    }
                }
                Some(at) => {
                    i += usize::from(at + 1 == cluster.len());
                    None
                }
                None => None,
            }
        };
        if let Some(split) = split {
            match lexer::lex(&split, depth + 1) {
                Ok(tokens) => words.extend(tokens.into_iter().filter_map(|t| match t {
                    Token::Word(w) => Some(w),
                    _ => None,
                })),
                Err(why) => out.unknown.push(format!("`env -S`: {why}")),
            }
        }
    }
    // A lone `-` is `-i`.
    words.extend(
        rest[n..]
            .iter()
            .skip_while(|w| w.text == "-" && !w.quoted)
            .cloned(),
    );
    let assignments = words.iter().take_while(|w| w.is_assignment()).count();
    Some(words.split_off(assignments))
}

/// `git -C dir -c k=v --no-pager push …` is also `git push …`.
fn git(words: &[Word], out: &mut CommandLine) {
    const VALUES: &[&str] = &[
        "-C",
        "-c",
        "--git-dir",
        "--work-tree",
        "--namespace",
        "--config-env",
        "--super-prefix",
        "--exec-path",
        "--list-cmds",
        "--attr-source",
    ];
    let mut i = 1;
    while let Some(w) = words.get(i) {
        let t = w.text.as_str();
        if w.dynamic || !t.starts_with('-') {
            break;
        }
        // `git -c alias.p=push p`: the subcommand is an alias made on the spot.
        let value = words
            .get(i + 1)
            .map(|v| v.text.as_str())
            .unwrap_or_default();
        if t == "-c" && value.to_ascii_lowercase().starts_with("alias.") {
            out.unknown.push(format!(
                "`git -c {value}` defines an alias for the command it runs"
            ));
        }
        i += if VALUES.contains(&t) { 2 } else { 1 };
    }
    if i > 1 {
        let mut rest = vec![words[0].clone()];
        rest.extend(words.get(i..).unwrap_or_default().iter().cloned());
        out.commands.push(SimpleCommand::new(&rest));
    }
}

/// A script path that is the shell's standard input.
fn reads_stdin(path: &str) -> bool {
    matches!(
        path,
        "/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0" | "/proc/thread-self/fd/0"
    )
}

/// `trap 'rm …' EXIT` runs its handler later in the same shell: read it as a command line.
fn trap(rest: &[Word], depth: usize, out: &mut CommandLine) {
    let mut args = rest.iter().skip_while(|w| {
        !w.quoted && matches!(w.text.as_str(), "-p" | "-l" | "-P") || w.text == "--"
    });
    match args.next() {
        Some(w) if w.dynamic => out.unknown.push(format!(
            "`trap` runs `{}`, known only when the shell runs",
            w.raw
        )),
        Some(w) if w.text != "-" => read_line(&w.text, depth + 1, out),
        _ => {}
    }
}

/// `bash -c '…'` runs its string; `bash` with no script reads standard input.
fn shell(program: &str, rest: &[Word], depth: usize, out: &mut CommandLine) {
    let mut i = 0;
    let mut string = false;
    let mut stdin = false;
    while let Some(w) = rest.get(i) {
        let t = w.text.as_str();
        if w.dynamic {
            break;
        }
        if t == "--" || t == "-" {
            i += 1;
            break;
        }
        if let Some(cluster) = t.strip_prefix('-').or_else(|| t.strip_prefix('+')) {
            i += 1;
            if cluster.starts_with('-') {
                // `--norc`, `--rcfile file`, `--init-file file`.
                if matches!(cluster, "-rcfile" | "-init-file") {
                    i += 1;
                }
                continue;
            }
            string |= cluster.contains('c') && t.starts_with('-');
            stdin |= cluster.contains('s') && t.starts_with('-');
            // `-o pipefail`, `-O extglob`: one value for each.
            i += cluster.chars().filter(|c| matches!(c, 'o' | 'O')).count();
            continue;
        }
        break;
    }
    match rest.get(i) {
        Some(w) if string && w.dynamic => out.unknown.push(format!(
            "`{program} -c` runs `{}`, known only when the shell runs",
            w.raw
        )),
        Some(w) if string => read_line(&w.text, depth + 1, out),
        // `xargs sh -c`: the command comes from the input.
        None if string => out.unknown.push(format!(
            "`{program} -c` takes its command from words that are not on the line"
        )),
        Some(w) if reads_stdin(&w.text) && !string => out.unknown.push(format!(
            "`{program}` reads its script `{}` from standard input",
            w.raw
        )),
        Some(w) if w.dynamic && !stdin => out.unknown.push(format!(
            "`{program}` runs the script `{}`, known only when the shell runs",
            w.raw
        )),
        Some(_) if !stdin => {}
        _ => out.unknown.push(format!(
            "`{program}` reads its commands from standard input"
        )),
    }
}
