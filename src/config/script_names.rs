//! Which files of the project a hook's command runs or reads, as the shell would resolve them:
//! for the trust fingerprint ([`super::scripts`]).
//!
//! The command is read by [`crate::shell`] (quotes, `sh -c` strings, wrappers), in order, with
//! the working directory followed through `cd dir &&` (hooks start in their project root), so
//! `cd .ka/hooks && ./guard.sh` names `.ka/hooks/guard.sh`. Programs that run files they find
//! themselves name those files too: `make` its makefile (GNU make's search order, `-C`, `-f`),
//! `npm`/`pnpm`/`yarn`/`bun` the `package.json` that defines the script, `python -m pkg.mod` the
//! package files inside the project. What stays out of reach is said per hook: the recipe's or
//! the script's own commands, the modules a program imports, paths known only at run time.

use std::path::{Path, PathBuf};

use crate::shell::{self, Token, Word};
use crate::terminal::escape;

/// What one command names.
#[derive(Debug, Default)]
pub struct Named {
    /// Candidate files, each with the other spellings it may be (a relative word after `cd`
    /// is resolved from both directories, to fail closed on a `cd` that did not happen).
    pub files: Vec<Candidate>,
    /// What trust cannot cover in this command, and why (one line each, escaped).
    pub uncovered: Vec<String>,
}

#[derive(Debug)]
pub struct Candidate {
    /// Paths relative to the root, most likely first.
    pub paths: Vec<PathBuf>,
    /// The word as written (for messages).
    pub word: String,
    /// The word looks meant to name a file (a `/` or a script extension), or a program found
    /// the file itself (a makefile, `package.json`).
    pub file_like: bool,
}

/// `path` relative to `root` without touching the file system ([`super::touched::lexical`]),
/// when it stays inside `root` and is not the root itself.
pub(crate) fn inside(root: &Path, word: &Path) -> Option<PathBuf> {
    let clean = super::touched::lexical(root, word);
    let rel = clean.strip_prefix(root).ok()?;
    (!rel.as_os_str().is_empty()).then(|| rel.to_path_buf())
}

/// Whether a word that names no file now looks like it was meant to name one.
fn looks_like_a_file(word: &str) -> bool {
    word.contains('/')
        || [
            ".sh", ".bash", ".py", ".js", ".mjs", ".ts", ".rb", ".pl", ".php",
        ]
        .iter()
        .any(|ext| word.ends_with(ext))
}

/// The files `command`, run in `root`, names.
pub fn named(root: &Path, command: &str) -> Named {
    let mut text = command.to_owned();
    // The hook's own root: read as `.` so `"$KA_PROJECT_DIR"/x.sh` names `x.sh`.
    for var in ["KA_PROJECT_DIR", "CLAUDE_PROJECT_DIR"] {
        for form in [format!("${{{var}}}"), format!("${var}")] {
            text = text.replace(&form, ".");
        }
    }
    let mut walk = Walk {
        root,
        cwd: PathBuf::new(),
        out: Named::default(),
    };
    match shell::tokens(&text) {
        Ok(tokens) => walk.tokens(&tokens),
        Err(why) => walk.out.uncovered.push(format!(
            "`{}`: the shell cannot read it ({why}); the files it names are not known",
            escape(command)
        )),
    }
    walk.out
}

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
                // `sh < guard.sh` reads the file too.
                Token::Target(w) => {
                    for sub in &w.subs {
                        self.tokens(sub);
                    }
                    self.word(&w.text, w.dynamic);
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
        // `VAR=path cmd`: the value may be a file.
        for w in &run[..first.unwrap_or(run.len())] {
            if let Some((_, value)) = w.text.split_once('=') {
                self.word(value, w.dynamic);
            }
        }
        let line = shell::simple_commands_of(run);
        for cmd in &line.commands {
            for (k, word) in cmd.words.iter().enumerate() {
                let dynamic = cmd.dynamic.get(k).copied().unwrap_or(true);
                // The program keeps its spelling (`./guard.sh`), not the basename.
                let word = if k == 0 {
                    cmd.program.as_str()
                } else {
                    word.as_str()
                };
                let value = match word.split_once('=') {
                    Some((name, value)) if !name.is_empty() && !name.contains('/') => value,
                    _ => word,
                };
                if !value.starts_with('-') {
                    self.word(value, dynamic);
                }
            }
            self.program(&cmd.words);
        }
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

    /// A word that may name a file: from the working directory, and from the root.
    fn word(&mut self, word: &str, dynamic: bool) {
        if word.is_empty() || dynamic {
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
            file_like: looks_like_a_file(word),
        });
    }

    /// A file a program finds itself, at `rel` from the working directory.
    fn found(&mut self, dir: &Path, names: &[&str]) {
        for name in names {
            let paths: Vec<PathBuf> = inside(self.root, &self.cwd.join(dir).join(name))
                .into_iter()
                .collect();
            self.out.files.push(Candidate {
                paths,
                word: dir.join(name).to_string_lossy().into_owned(),
                file_like: false,
            });
        }
    }

    /// Programs that run files named elsewhere: `make`, the package managers, `python -m`.
    fn program(&mut self, words: &[String]) {
        let Some(program) = words.first() else { return };
        let text = escape(&words.join(" ")).into_owned();
        match program.as_str() {
            "make" | "gmake" => {
                let dir = value_of(words, &["-C"], &["--directory"]).unwrap_or_default();
                match value_of(words, &["-f"], &["--file", "--makefile"]) {
                    Some(file) => self.found(Path::new(&dir), &[file.as_str()]),
                    None => self.found(Path::new(&dir), &["GNUmakefile", "makefile", "Makefile"]),
                }
                self.out.uncovered.push(format!(
                    "`{text}`: the makefile is covered, not the files its recipes run or \
                     include (name a script in the hook's command to cover it)"
                ));
            }
            "npm" | "pnpm" | "yarn" | "bun" | "npx" => {
                let dir =
                    value_of(words, &["-C"], &["--prefix", "--cwd", "--dir"]).unwrap_or_default();
                self.found(Path::new(&dir), &["package.json"]);
                self.out.uncovered.push(format!(
                    "`{text}`: package.json is covered, not the files its scripts run or the \
                     packages it installs"
                ));
            }
            p if p.starts_with("python") => self.python(words, &text),
            _ => {}
        }
    }

    /// `python3 -m pkg.mod`: the package's files, when the package is in the project.
    fn python(&mut self, words: &[String], text: &str) {
        let mut module = None;
        let mut i = 1;
        while let Some(w) = words.get(i) {
            if w == "-m" {
                module = words.get(i + 1).cloned();
                break;
            }
            if let Some(m) = w.strip_prefix("-m").filter(|m| !m.is_empty()) {
                module = Some(m.to_owned());
                break;
            }
            if !w.starts_with('-') {
                // A script: `python3 x.py -m y` passes `-m` to it.
                break;
            }
            i += if matches!(w.as_str(), "-W" | "-X") {
                2
            } else {
                1
            };
        }
        let Some(module) = module.filter(|m| !m.is_empty() && !m.starts_with('.')) else {
            return;
        };
        let parts: Vec<&str> = module.split('.').collect();
        let top = self.cwd.join(parts[0]);
        let in_project = [top.clone(), top.with_extension("py")]
            .iter()
            .any(|p| self.root.join(p).exists());
        if !in_project {
            self.out.uncovered.push(format!(
                "`{text}`: module `{}` is found on Python's path, outside the project",
                escape(&module)
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
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        self.found(Path::new(""), &names);
        self.out.uncovered.push(format!(
            "`{text}`: the module's own files are covered, not the modules it imports"
        ));
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(command: &str) -> Vec<String> {
        named(Path::new("/repo"), command)
            .files
            .iter()
            .flat_map(|c| c.paths.iter().map(|p| p.to_string_lossy().into_owned()))
            .collect()
    }

    #[test]
    fn words_find_scripts_behind_interpreters_operators_and_variables() {
        let w = paths("sh .ka/hooks/guard.sh && python3 \"$CLAUDE_PROJECT_DIR\"/tools/check.py|./fmt.sh --x=y");
        for want in [".ka/hooks/guard.sh", "tools/check.py", "fmt.sh", "y"] {
            assert!(w.contains(&want.to_owned()), "{want}: {w:?}");
        }
        let w = paths("bash -c 'sh scripts/a.sh' < in/b.sh");
        assert!(w.contains(&"scripts/a.sh".to_owned()), "{w:?}");
        assert!(w.contains(&"in/b.sh".to_owned()), "{w:?}");
    }

    #[test]
    fn cd_moves_where_relative_words_are_read() {
        let w = paths("cd .ka/hooks && ./guard.sh");
        assert_eq!(
            w.first().map(String::as_str),
            Some(".ka/hooks/guard.sh"),
            "{w:?}"
        );
        let w = paths("cd sub; cd ../other && sh x.sh");
        assert!(w.contains(&"other/x.sh".to_owned()), "{w:?}");
    }

    #[test]
    fn make_npm_and_python_m_name_the_files_that_define_what_runs() {
        let w = paths("make -s guard");
        assert!(w.contains(&"Makefile".to_owned()) && w.contains(&"GNUmakefile".to_owned()));
        let w = paths("make -C tools -f build.mk guard");
        assert!(w.contains(&"tools/build.mk".to_owned()), "{w:?}");
        let w = paths("npm run -s guard");
        assert!(w.contains(&"package.json".to_owned()), "{w:?}");
        let w = paths("cd web && npm --prefix app run lint");
        assert!(w.contains(&"web/app/package.json".to_owned()), "{w:?}");
        assert!(!named(Path::new("/repo"), "make guard").uncovered.is_empty());
    }

    #[test]
    fn paths_that_leave_the_root_are_not_inside() {
        let root = Path::new("/repo");
        let inside = |w: &str| inside(root, Path::new(w));
        assert_eq!(inside("./a/../b.sh"), Some(PathBuf::from("b.sh")));
        assert_eq!(inside("../x.sh"), None);
        assert_eq!(inside("/repo/s/x.sh"), Some(PathBuf::from("s/x.sh")));
        assert_eq!(inside("/etc/x.sh"), None);
    }
}
