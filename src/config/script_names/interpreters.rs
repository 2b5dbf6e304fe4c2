//! What a program is handed to execute: the script operand of an interpreter (`sh x`, `. x`,
//! `python3 x.py`, `node x.js`, `ruby x`, `perl x`, `php x`), and the files a program looks up
//! to run (`make`'s makefile, the `package.json` of `npm run`, the package of `python -m`).
//! Every other program's operands are data.

/// What one simple command hands over to run.
#[derive(Debug, Default)]
pub(super) struct Runs {
    /// Script files, as written, each with whether it is only known at run time.
    pub scripts: Vec<(String, bool)>,
    /// Files a program looks for: (directory from the working directory, file names).
    pub found: Vec<(String, Vec<String>)>,
    /// `python -m module`.
    pub python_module: Option<String>,
    /// What lies beyond what is covered, for the review.
    pub notes: Vec<String>,
}

/// How an interpreter's options are read before its script operand.
struct Grammar {
    /// Short options that take a value (attached, or the next word).
    values: &'static str,
    /// Long options that take the next word as their value (without `=`).
    long_values: &'static [&'static str],
    /// Options whose presence means the program text is on the command line or stdin, not in
    /// a file (`-c`, `-e`, `-s`).
    inline: &'static str,
    /// Long spellings of the same (`--eval`).
    long_inline: &'static [&'static str],
    /// Options that also count `+x` (the shells' `+o`).
    plus: bool,
}

const SHELL: Grammar = Grammar {
    values: "oO",
    long_values: &["rcfile", "init-file"],
    inline: "cs",
    long_inline: &[],
    plus: true,
};
const NODE: Grammar = Grammar {
    values: "rC",
    long_values: &[
        "require",
        "import",
        "loader",
        "experimental-loader",
        "conditions",
        "input-type",
        "env-file",
        "title",
    ],
    inline: "ep",
    long_inline: &["eval", "print"],
    plus: false,
};
const RUBY: Grammar = Grammar {
    values: "IrCEF0x",
    long_values: &[],
    inline: "e",
    long_inline: &[],
    plus: false,
};
const PERL: Grammar = Grammar {
    values: "IMmx0",
    long_values: &[],
    inline: "eE",
    long_inline: &[],
    plus: false,
};
const PHP: Grammar = Grammar {
    values: "cdzf",
    long_values: &[],
    inline: "rBRE",
    long_inline: &[],
    plus: false,
};

/// Whether `program` (a basename) is one of the shells that read a script file.
fn is_shell(program: &str) -> bool {
    matches!(
        program,
        "sh" | "bash" | "dash" | "zsh" | "ksh" | "mksh" | "ash" | "yash" | "posh"
    )
}

/// What the simple command `words` (program basename first) hands over to run.
pub(super) fn runs(words: &[String], dynamic: &[bool]) -> Runs {
    let mut out = Runs::default();
    let Some(program) = words.first() else {
        return out;
    };
    let rest = || words.iter().zip(dynamic.iter().copied()).skip(1);
    match program.as_str() {
        p if is_shell(p) => out.scripts.extend(script(words, dynamic, &SHELL)),
        "." | "source" => out
            .scripts
            .extend(rest().find(|(w, _)| *w != "--").map(own)),
        "node" | "nodejs" => {
            out.scripts.extend(script(words, dynamic, &NODE));
            // `node -r ./x.js`, `--import ./x.mjs`: preloaded modules run too.
            out.scripts.extend(preloads(words, dynamic));
        }
        "ruby" => out.scripts.extend(script(words, dynamic, &RUBY)),
        "perl" => out.scripts.extend(script(words, dynamic, &PERL)),
        "php" => {
            let file = words.iter().position(|w| w == "-f");
            match file.and_then(|i| words.get(i + 1).map(|w| (w, dynamic[i + 1]))) {
                Some(found) => out.scripts.push(own(found)),
                None => out.scripts.extend(script(words, dynamic, &PHP)),
            }
        }
        "deno" if words.get(1).is_some_and(|w| w == "run") => {
            out.scripts
                .extend(script(&words[1..], &dynamic[1..], &NODE));
        }
        p if is_python(p) => python(words, dynamic, &mut out),
        "make" | "gmake" => {
            let dir = value_of(words, &["-C"], &["--directory"]).unwrap_or_default();
            let names = match value_of(words, &["-f"], &["--file", "--makefile"]) {
                Some(file) => vec![file],
                None => ["GNUmakefile", "makefile", "Makefile"]
                    .map(String::from)
                    .to_vec(),
            };
            out.found.push((dir, names));
            out.notes.push(
                "the makefile is covered, not the files its recipes run or include (name a \
                 script in the hook's command to cover it)"
                    .to_owned(),
            );
        }
        "bun" if bun_file(words).is_some() => {
            out.scripts.extend(bun_file(words).map(|w| (w, false)));
        }
        "npm" | "pnpm" | "yarn" | "bun" | "npx" => {
            let dir = value_of(words, &["-C"], &["--prefix", "--cwd", "--dir"]).unwrap_or_default();
            out.found.push((dir, vec!["package.json".to_owned()]));
            out.notes.push(
                "package.json is covered, not the files its scripts run or the packages it \
                 installs"
                    .to_owned(),
            );
        }
        _ => {}
    }
    out
}

fn own((w, d): (&String, bool)) -> (String, bool) {
    (w.clone(), d)
}

/// The script operand of an interpreter whose options follow `grammar`: the first word that is
/// no option or option value. None when the program text is inline or on stdin.
fn script(words: &[String], dynamic: &[bool], grammar: &Grammar) -> Option<(String, bool)> {
    script_at(words, dynamic, grammar).map(|i| (words[i].clone(), dynamic[i]))
}

/// Where [`script`] finds the script operand.
fn script_at(words: &[String], dynamic: &[bool], grammar: &Grammar) -> Option<usize> {
    let mut i = 1;
    while let Some(w) = words.get(i) {
        if dynamic.get(i).copied().unwrap_or(true) {
            return Some(i);
        }
        i += 1;
        if w == "--" {
            break;
        }
        if w == "-" {
            return None;
        }
        if let Some(long) = w.strip_prefix("--") {
            let name = long.split('=').next().unwrap_or(long);
            if grammar.long_inline.contains(&name) {
                return None;
            }
            if !long.contains('=') && grammar.long_values.contains(&long) {
                i += 1;
            }
            continue;
        }
        let cluster = match (w.strip_prefix('-'), w.strip_prefix('+')) {
            (Some(c), _) => c,
            (None, Some(c)) if grammar.plus => c,
            _ => {
                i -= 1;
                break;
            }
        };
        for (at, c) in cluster.char_indices() {
            if grammar.inline.contains(c) && w.starts_with('-') {
                return None;
            }
            if grammar.values.contains(c) {
                // The value is attached, or it is the next word (the shells' `-eo pipefail`
                // take one word per `o`, which only ever ends the cluster in practice).
                if at + c.len_utf8() == cluster.len() {
                    i += 1;
                }
                break;
            }
        }
    }
    (i < words.len()).then_some(i)
}

/// `node -r ./x.js`, `--require=./x`, `--import ./x.mjs`: modules loaded before the script,
/// when named by a path (a bare name is a package from `node_modules`).
fn preloads(words: &[String], dynamic: &[bool]) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut i = 1;
    while let Some(w) = words.get(i) {
        if !w.starts_with('-') {
            break;
        }
        let (value, step) = match w.as_str() {
            "-r" | "--require" | "--import" => {
                (words.get(i + 1).map(|v| (v.as_str(), dynamic[i + 1])), 2)
            }
            _ => (
                ["--require=", "--import="]
                    .iter()
                    .find_map(|p| w.strip_prefix(p))
                    .map(|v| (v, dynamic[i])),
                1,
            ),
        };
        if let Some((v, d)) = value {
            if v.starts_with('.') || v.starts_with('/') {
                out.push((v.to_owned(), d));
            }
        }
        i += step;
    }
    out
}

/// `bun x.ts`, `bun run ./x.js`: bun runs a file named by its path or extension.
fn bun_file(words: &[String]) -> Option<String> {
    let at = if words.get(1).is_some_and(|w| w == "run") {
        2
    } else {
        1
    };
    let w = words.get(at)?;
    let ext = [".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx", ".mts"];
    (w.contains('/') || ext.iter().any(|e| w.ends_with(e))).then(|| w.clone())
}

/// `python3 x.py` runs the file; `python3 -m pkg.mod` the module; `-c` and `-` inline text.
fn python(words: &[String], dynamic: &[bool], out: &mut Runs) {
    match python_at(words, dynamic) {
        Some(Python::Script(i)) => out.scripts.push((words[i].clone(), dynamic[i])),
        Some(Python::Module(m)) if !m.is_empty() && !m.starts_with('.') => {
            out.python_module = Some(m);
        }
        _ => {}
    }
}

enum Python {
    Script(usize),
    Module(String),
}

/// What `python …` runs: the script operand's index, or the module of `-m`.
fn python_at(words: &[String], dynamic: &[bool]) -> Option<Python> {
    let mut i = 1;
    while let Some(w) = words.get(i) {
        if dynamic.get(i).copied().unwrap_or(true) {
            return Some(Python::Script(i));
        }
        if w == "-" || w.starts_with("-c") || (w.starts_with('-') && w.ends_with('c')) {
            return None;
        }
        if w == "-m" {
            return words.get(i + 1).cloned().map(Python::Module);
        }
        if let Some(m) = w.strip_prefix("-m").filter(|m| !m.is_empty()) {
            return Some(Python::Module(m.to_owned()));
        }
        if w == "--" {
            i += 1;
            continue;
        }
        if !w.starts_with('-') {
            return Some(Python::Script(i));
        }
        i += if matches!(w.as_str(), "-W" | "-X" | "--check-hash-based-pycs") {
            2
        } else {
            1
        };
    }
    None
}

/// How a script handed to a program is read, for running it from its reviewed copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    /// `sh x`: a shell reads the file named by its first operand.
    Shell,
    /// `. x`, `source x`: the running shell reads it.
    Source,
    /// `python3 x.py`.
    Python,
}

/// The operand of the simple command `words` that names a script, and how it is read: only for
/// the programs whose script can be run from another file with `$0`, `sys.argv[0]` and
/// `__file__` unchanged.
pub(crate) fn script_operand(words: &[String], dynamic: &[bool]) -> Option<(usize, Form)> {
    let program = words.first()?;
    match program.as_str() {
        p if is_shell(p) => script_at(words, dynamic, &SHELL).map(|i| (i, Form::Shell)),
        "." | "source" => (1..words.len())
            .find(|&i| words[i] != "--")
            .map(|i| (i, Form::Source)),
        p if is_python(p) => match python_at(words, dynamic) {
            Some(Python::Script(i)) => Some((i, Form::Python)),
            _ => None,
        },
        _ => None,
    }
}

/// `python`, `python3`, `python3.12` (not `python3-config`).
pub(crate) fn is_python(program: &str) -> bool {
    program.starts_with("python") && !program.contains('-')
}

/// Whether `program` (a basename) is one of the shells that read a script file.
pub(crate) fn is_shell_program(program: &str) -> bool {
    is_shell(program)
}

/// The value of an option given as `-C dir`, `-Cdir`, `--directory dir` or `--directory=dir`.
fn value_of(words: &[String], short: &[&str], long: &[&str]) -> Option<String> {
    let mut it = words.iter().skip(1);
    while let Some(w) = it.next() {
        for s in short {
            if w == s {
                return it.next().cloned();
            }
            if let Some(v) = w.strip_prefix(s).filter(|v| !v.is_empty()) {
                return Some(v.to_owned());
            }
        }
        for l in long {
            if w == l {
                return it.next().cloned();
            }
            if let Some(v) = w.strip_prefix(&format!("{l}=")) {
                return Some(v.to_owned());
            }
        }
    }
    None
}
