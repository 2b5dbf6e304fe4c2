//! Which files of the project a hook's command executes, as the shell would run it: for the trust
//! fingerprint ([`super::scripts`]).
//!
//! The command is read by [`crate::shell`] (quotes, `sh -c` strings, wrappers), with the working
//! directory followed through `cd dir &&` (hooks start in their project root). A file counts
//! only when the command executes it: a program run by its path (`./guard.sh`), the script an
//! interpreter is handed ([`interpreters`]: `sh x`, `. x`, `python3 x.py`, `node x.js`, ...),
//! and the files a program finds itself to run (`make` its makefile, `npm run` the
//! `package.json`, `python -m pkg` the package). Never a redirect target, an operand of an
//! ordinary program (`grep -q x notes.md`) or a word inside a string. What stays out of reach is
//! said per hook: programs from `PATH`, paths known only at run time, what a script runs next.

pub(crate) mod interpreters;

use std::path::{Path, PathBuf};

use crate::shell::{self, Token, Word};
use crate::terminal::escape;

/// What one command executes.
#[derive(Debug, Default)]
pub struct Named {
    /// Files it executes, each with the other spellings it may be (a relative word after `cd`
    /// is resolved from both directories, to fail closed on a `cd` that did not happen).
    pub files: Vec<Candidate>,
    /// Programs it runs from `PATH` (basenames, escaped, in order, unique).
    pub from_path: Vec<String>,
    /// What trust cannot cover in this command, and why (one line each, escaped).
    pub uncovered: Vec<String>,
}

#[derive(Debug)]
pub struct Candidate {
    /// Paths relative to the root, most likely first; empty when the file is outside the root.
    pub paths: Vec<PathBuf>,
    /// The word as written (for messages).
    pub word: String,
    /// The command names the file (`sh x.sh`), as opposed to a file a program looks for
    /// (`make`'s `GNUmakefile`, which may well not exist).
    pub written: bool,
}

/// `path` relative to `root` without touching the file system ([`super::touched::lexical`]),
/// when it stays inside `root` and is not the root itself.
pub(crate) fn inside(root: &Path, word: &Path) -> Option<PathBuf> {
    let clean = super::touched::lexical(root, word);
    let rel = clean.strip_prefix(root).ok()?;
    (!rel.as_os_str().is_empty()).then(|| rel.to_path_buf())
}

/// The command as the lexer should read it: the hook's own root (`$KA_PROJECT_DIR`,
/// `$CLAUDE_PROJECT_DIR`, the `{root}` placeholder) read as `.`, so `"{root}/x.sh"` names
/// `x.sh`; the other placeholders (`{path}`, `{paths}`, `{tool}`) are known only when the hook
/// runs, so they read as a variable.
pub(super) fn spelled_from_root(command: &str) -> String {
    let mut text = command.to_owned();
    for var in ["KA_PROJECT_DIR", "CLAUDE_PROJECT_DIR"] {
        for form in [format!("${{{var}}}"), format!("${var}")] {
            text = text.replace(&form, ".");
        }
    }
    if super::template::Template::parse(command).is_ok_and(|t| t.is_some()) {
        text = text.replace("{root}", ".");
        for name in ["{paths}", "{path}", "{tool}"] {
            text = text.replace(name, "$KA_PLACEHOLDER");
        }
    }
    text
}

/// The files `command`, run in `root`, executes.
pub fn named(root: &Path, command: &str) -> Named {
    let text = spelled_from_root(command);
    let mut walk = Walk {
        root,
        cwd: PathBuf::new(),
        out: Named::default(),
    };
    match shell::tokens(&text) {
        Ok(tokens) => walk.tokens(&tokens),
        Err(why) => walk.out.uncovered.push(format!(
            "`{}`: the shell cannot read it ({why}); what it runs is not known",
            escape(command)
        )),
    }
    walk.out
}

/// Builtins of `sh` and `bash`: what they run is no file (a `PATH` program of the same name,
/// `/bin/echo`, is not what the shell runs).
const BUILTINS: &[&str] = &[
    ".", ":", "[", "[[", "alias", "bg", "break", "builtin", "cd", "command", "continue", "declare",
    "echo", "eval", "exec", "exit", "export", "false", "fg", "getopts", "hash", "jobs", "kill",
    "let", "local", "printf", "pwd", "read", "readonly", "return", "set", "shift", "source",
    "test", "times", "trap", "true", "type", "typeset", "ulimit", "umask", "unalias", "unset",
    "wait", "{", "}", "!", "if", "then", "elif", "else", "fi", "do", "done", "while", "until",
    "case", "esac", "for", "in", "function", "select", "coproc",
];

struct Walk<'r> {
    root: &'r Path,
    /// The working directory relative to the root (`cd` moves it).
    cwd: PathBuf,
    out: Named,
}

impl Walk<'_> {
    fn tokens(&mut self, tokens: &[Token]) {
        let mut run: Vec<Word> = Vec::new();
        for token in tokens {
            match token {
                Token::Word(w) => {
                    for sub in &w.subs {
                        self.tokens(sub);
                    }
                    run.push(w.clone());
                }
                // A redirect target is data; only the commands it substitutes run.
                Token::Target(w) => {
                    for sub in &w.subs {
                        self.tokens(sub);
                    }
                }
                Token::Separator => self.run(&std::mem::take(&mut run)),
            }
        }
        self.run(&run);
    }

    /// One simple command's words.
    fn run(&mut self, run: &[Word]) {
        let first = run.iter().position(|w| !w.is_assignment());
        if let Some(i) = first.filter(|&i| run[i].text == "cd" && !run[i].dynamic) {
            self.cd(&run[i + 1..]);
            return;
        }
        // `BASH_ENV=x bash …`, `ENV=x sh -i`: the shell sources that file first.
        for w in &run[..first.unwrap_or(run.len())] {
            if let Some(("BASH_ENV" | "ENV", value)) = w.text.split_once('=') {
                self.file(value, w.dynamic, &format!("`{}`", escape(&w.raw)));
            }
        }
        let line = shell::simple_commands_of(run);
        for cmd in &line.commands {
            self.command(&cmd.program, &cmd.words, &cmd.dynamic);
        }
        for why in &line.unknown {
            self.out
                .uncovered
                .push(format!("{}; what it runs is not covered", escape(why)));
        }
    }

    /// One simple command (wrappers already peeled into commands of their own): the program,
    /// then what it hands to an interpreter.
    fn command(&mut self, program: &str, words: &[String], dynamic: &[bool]) {
        let Some(name) = words.first() else { return };
        let text = escape(&words.join(" ")).into_owned();
        if dynamic.first().copied().unwrap_or(true) {
            self.out.uncovered.push(format!(
                "`{text}`: runs a program known only when the shell runs"
            ));
            return;
        }
        if program.contains('/') {
            self.file(program, false, &format!("`{text}`"));
        } else if !BUILTINS.contains(&name.as_str()) {
            let name = escape(name).into_owned();
            if !self.out.from_path.contains(&name) {
                self.out.from_path.push(name);
            }
        }
        let run = interpreters::runs(words, dynamic);
        for (word, dynamic) in run.scripts {
            self.file(&word, dynamic, &format!("`{text}`"));
        }
        for (dir, names) in run.found {
            self.found(Path::new(&dir), &names);
        }
        if let Some(module) = run.python_module {
            self.python_module(&module, &text);
        }
        self.out
            .uncovered
            .extend(run.notes.into_iter().map(|n| format!("`{text}`: {n}")));
    }

    /// `cd dir`: later relative words are read from there too.
    fn cd(&mut self, args: &[Word]) {
        let dir = args
            .iter()
            .find(|w| !w.text.starts_with('-') || w.text == "-");
        match dir {
            Some(d) if !d.dynamic && d.text != "-" => {
                match inside(self.root, &self.cwd.join(&d.text)) {
                    Some(rel) => self.cwd = rel,
                    None if Path::new(&d.text).components().count() > 0 => {
                        self.out.uncovered.push(format!(
                            "`cd {}`: leaves the project; what runs there is not covered",
                            escape(&d.text)
                        ));
                        self.cwd = PathBuf::new();
                    }
                    None => self.cwd = PathBuf::new(),
                }
            }
            Some(d) => self.out.uncovered.push(format!(
                "`cd {}`: a directory known only when the shell runs; paths after it are \
                 resolved from the project root",
                escape(&d.raw)
            )),
            None => self.cwd = PathBuf::new(),
        }
    }

    /// A file the command executes: from the working directory, and from the root.
    fn file(&mut self, word: &str, dynamic: bool, at: &str) {
        if word.is_empty() {
            return;
        }
        if dynamic {
            self.out.uncovered.push(format!(
                "{at}: runs `{}`, a file known only when the shell runs",
                escape(word)
            ));
            return;
        }
        let path = Path::new(word);
        let mut paths = Vec::new();
        if !self.cwd.as_os_str().is_empty() && path.is_relative() {
            paths.extend(inside(self.root, &self.cwd.join(path)));
        }
        paths.extend(inside(self.root, path));
        paths.dedup();
        self.out.files.push(Candidate {
            paths,
            word: word.to_owned(),
            written: true,
        });
    }

    /// Files a program finds itself, under `dir` from the working directory.
    fn found(&mut self, dir: &Path, names: &[String]) {
        for name in names {
            let paths: Vec<PathBuf> = inside(self.root, &self.cwd.join(dir).join(name))
                .into_iter()
                .collect();
            self.out.files.push(Candidate {
                paths,
                word: dir.join(name).to_string_lossy().into_owned(),
                written: false,
            });
        }
    }

    /// `python3 -m pkg.mod`: the package's files, when the package is in the project.
    fn python_module(&mut self, module: &str, text: &str) {
        let parts: Vec<&str> = module.split('.').collect();
        let top = self.cwd.join(parts[0]);
        let in_project = [top.clone(), top.with_extension("py")]
            .iter()
            .any(|p| self.root.join(p).exists());
        if !in_project {
            self.out.uncovered.push(format!(
                "`{text}`: module `{}` is found on Python's path, outside the project",
                escape(module)
            ));
            return;
        }
        let mut names: Vec<String> = Vec::new();
        let mut dir = String::new();
        for (i, part) in parts.iter().enumerate() {
            let here = format!("{dir}{part}");
            if i + 1 < parts.len() {
                names.push(format!("{here}/__init__.py"));
            } else {
                names.extend([
                    format!("{here}.py"),
                    format!("{here}/__init__.py"),
                    format!("{here}/__main__.py"),
                ]);
            }
            dir = format!("{here}/");
        }
        self.found(Path::new(""), &names);
        self.out.uncovered.push(format!(
            "`{text}`: the module's own files are covered, not the modules it imports"
        ));
    }
}

#[cfg(test)]
mod tests;
