//! The reviewed bytes are the bytes that run: in a trusted hook's command, each script trust
//! covers is replaced by its verified copy in the data dir (`reviewed/<sha256>`), named so the
//! script sees its own `$0`, `__file__` and arguments. What is replaced: `docs/trust.md`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use super::script_names::inside;
use super::script_names::interpreters::{self, Form};
use super::template::Template;
use super::{Covered, Hook};
use crate::shell::{self, Token, Word};

/// A hook's command with its covered scripts run from their reviewed copies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pinned {
    /// The command that runs (placeholders as in the command as written).
    pub command: String,
    /// Its placeholders, when it has any.
    pub template: Option<Template>,
}

/// Run the covered scripts of every trusted project hook from their reviewed copies.
pub(super) fn pin(hooks: &mut [Hook], covered: &[Covered], data_dir: Option<&Path>) {
    let Some(data_dir) = data_dir else { return };
    if covered.is_empty() {
        return;
    }
    let mut copies = Copies {
        data_dir,
        made: HashMap::new(),
    };
    for hook in hooks.iter_mut() {
        let Some(root) = hook.root.clone() else {
            continue;
        };
        if hook.stale.is_some() || hook.command.is_empty() {
            continue;
        }
        let files: Vec<&Covered> = covered.iter().filter(|c| c.root == root).collect();
        if files.is_empty() {
            continue;
        }
        hook.pinned = pinned(
            &hook.command,
            hook.template.is_some(),
            &root,
            &files,
            &mut copies,
        )
        .map(Box::new);
    }
}

/// A verified copy: where it is, and its content.
type Copy = (PathBuf, Rc<[u8]>);

/// The reviewed copies of this load, by SHA-256 (`None`: none could be made), each read and
/// verified once however many hooks run it.
struct Copies<'a> {
    data_dir: &'a Path,
    made: HashMap<String, Option<Copy>>,
}

impl Copies<'_> {
    /// The verified copy of `file`'s reviewed content, with that content.
    fn of(&mut self, file: &Covered) -> Option<Copy> {
        let sha = file.sha256.as_deref()?;
        if let Some(made) = self.made.get(sha) {
            return made.clone();
        }
        let made = copy(self.data_dir, file, sha).map(|bytes| {
            (
                self.data_dir.join("reviewed").join(sha),
                Rc::from(bytes.into_boxed_slice()),
            )
        });
        self.made.insert(sha.to_owned(), made.clone());
        made
    }
}

/// The reviewed content of `file` (whose record says `sha`), from its copy, which `trust` kept;
/// made again from the file when it is gone, only from bytes that hash to what was reviewed.
fn copy(data_dir: &Path, file: &Covered, sha: &str) -> Option<Vec<u8>> {
    if let Some(bytes) = crate::trust::reviewed(data_dir, sha) {
        return Some(bytes);
    }
    let bytes = std::fs::read(file.path()).ok()?;
    if crate::trust::content_hash(&bytes) != sha {
        return None;
    }
    crate::trust::keep_reviewed(data_dir, &bytes).ok()?;
    crate::trust::reviewed(data_dir, sha)
}

/// One word of the command line to replace.
struct Site {
    /// Its index among the top-level tokens.
    token: usize,
    /// The text that stands before the word as written (`-c '. COPY' `), or instead of it.
    insert: String,
    replace: bool,
}

fn pinned(
    command: &str,
    is_template: bool,
    root: &Path,
    files: &[&Covered],
    copies: &mut Copies<'_>,
) -> Option<Pinned> {
    let tokens = shell::tokens(command).ok()?;
    let spelled = shell::tokens(&super::script_names::spelled_from_root(command)).ok()?;
    if !aligned(&tokens, &spelled) {
        return None;
    }
    let mut sites = Vec::new();
    let mut cwd = Some(PathBuf::new());
    let mut run: Vec<(usize, &Word)> = Vec::new();
    for (i, token) in spelled.iter().enumerate() {
        match token {
            Token::Word(w) => run.push((i, w)),
            Token::Target(_) => {}
            Token::Separator => {
                sites.extend(run_sites(&run, &mut cwd, root, files, copies));
                run.clear();
            }
        }
    }
    sites.extend(run_sites(&run, &mut cwd, root, files, copies));
    if sites.is_empty() {
        return None;
    }
    let text = splice(command, &tokens, &sites, is_template)?;
    let template = if is_template {
        Some(Template::parse(&text).ok()??)
    } else {
        None
    };
    Some(Pinned {
        command: text,
        template,
    })
}

/// Whether the command as written and as read from the root have the same shape.
fn aligned(a: &[Token], b: &[Token]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| std::mem::discriminant(x) == std::mem::discriminant(y))
}

/// The sites of one simple command's words (with their token indices), `cwd` followed through
/// `cd` (`None`: not known any more).
fn run_sites(
    run: &[(usize, &Word)],
    cwd: &mut Option<PathBuf>,
    root: &Path,
    files: &[&Covered],
    copies: &mut Copies<'_>,
) -> Vec<Site> {
    let words: Vec<Word> = run.iter().map(|(_, w)| (*w).clone()).collect();
    let first = words.iter().position(|w| !w.is_assignment());
    if let Some(i) = first.filter(|&i| words[i].text == "cd") {
        *cwd = match words.get(i + 1) {
            Some(d) if !d.dynamic && !d.text.starts_with('-') => cwd
                .as_ref()
                .and_then(|c| inside(root, &c.join(&d.text)))
                .or_else(|| (d.text == ".").then(PathBuf::new)),
            _ => None,
        };
        return Vec::new();
    }
    let texts: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
    let mut out = Vec::new();
    let mut from = 0;
    for cmd in shell::simple_commands_of(&words).commands {
        // Where this command's words stand in the run (wrappers peel off a prefix).
        let Some(j) = (from..words.len()).find(|&j| {
            texts[j] == cmd.program
                && texts
                    .get(j + 1..j + cmd.words.len())
                    .is_some_and(|rest| rest.iter().zip(&cmd.words[1..]).all(|(a, b)| a == b))
        }) else {
            continue;
        };
        from = j;
        if texts[..j].contains(&"eval") {
            break;
        }
        let at = |k: usize| run[j + k].0;
        if cmd.program.contains('/') && !words[j].dynamic {
            let file = covered_file(&cmd.program, cwd.as_deref(), root, files, true);
            if let Some(site) = file.and_then(|f| exec_site(f, copies, at(0))) {
                out.push(site);
                continue;
            }
        }
        let Some((k, form)) = interpreters::script_operand(&cmd.words, &cmd.dynamic) else {
            continue;
        };
        if words[j + k].dynamic || (k > 0 && matches!(texts[j + k - 1], "--" | "-")) {
            continue;
        }
        let file = covered_file(&cmd.words[k], cwd.as_deref(), root, files, false);
        let Some((copy, _)) = file.and_then(|f| copies.of(f)) else {
            continue;
        };
        let insert = match form {
            Form::Shell => quote_path(&copy).map(|c| format!("-c {} ", quote(&format!(". {c}")))),
            Form::Source => quote_path(&copy),
            Form::Python => python_boot(&copy).map(|boot| format!("-c {} ", quote(&boot))),
        };
        if let Some(insert) = insert {
            out.push(Site {
                token: at(k),
                insert,
                replace: form == Form::Source,
            });
        }
    }
    out
}

/// The covered file `word` names, when that is certain: resolved from the working directory
/// (when known), and not also, from the root, another covered file that exists (a `cd` that did
/// not happen would run that one). `exec`: run by its path, so a bare name is no file.
fn covered_file<'c>(
    word: &str,
    cwd: Option<&Path>,
    root: &Path,
    files: &[&'c Covered],
    exec: bool,
) -> Option<&'c Covered> {
    if exec && !word.contains('/') {
        return None;
    }
    let find = |rel: Option<PathBuf>| {
        let rel = rel?;
        files.iter().copied().find(|c| Path::new(&c.rel) == rel)
    };
    let path = Path::new(word);
    if path.is_absolute() {
        return find(inside(root, path));
    }
    let here = find(inside(root, &cwd?.join(path)))?;
    match find(inside(root, path)) {
        Some(other) if other.rel != here.rel && other.sha256.is_some() => None,
        _ => Some(here),
    }
}

/// `./x`: run through the interpreter its shebang names (`sh` without one, as the shell does),
/// when that interpreter can run the copy under the script's name; never a file that is not
/// executable (it would not have run at all).
fn exec_site(file: &Covered, copies: &mut Copies<'_>, token: usize) -> Option<Site> {
    use std::os::unix::fs::PermissionsExt as _;
    let mode = std::fs::metadata(file.path()).ok()?.permissions().mode();
    if mode & 0o111 == 0 {
        return None;
    }
    let (copy, bytes) = copies.of(file)?;
    let (mut interpreter, program) = shebang(&bytes)?;
    let run = if interpreters::is_shell_program(&program) {
        format!(". {}", quote_path(&copy)?)
    } else if interpreters::is_python(&program) {
        python_boot(&copy)?
    } else {
        return None;
    };
    interpreter.extend(["-c".to_owned(), run]);
    let words: Vec<String> = interpreter.iter().map(|w| quote(w)).collect();
    Some(Site {
        token,
        insert: format!("{} ", words.join(" ")),
        replace: false,
    })
}

/// The interpreter words of a script's `#!` line and the program's basename; `/bin/sh`
/// without one. `#!/usr/bin/env python3` is `env python3`; `env -S …` is not read, nor an
/// option of another interpreter than a shell (it would stand before `-c`).
fn shebang(bytes: &[u8]) -> Option<(Vec<String>, String)> {
    let base = |p: &str| p.rsplit('/').next().unwrap_or(p).to_owned();
    let Some(rest) = bytes.strip_prefix(b"#!") else {
        return Some((vec![crate::process::SHELL.to_owned()], "sh".to_owned()));
    };
    let line = rest.split(|b| *b == b'\n').next()?;
    let line = std::str::from_utf8(line).ok()?.trim();
    // Linux passes the rest of the line as one argument.
    let (program, arg) = match line.split_once([' ', '\t']) {
        Some((p, a)) => (p, Some(a.trim()).filter(|a| !a.is_empty())),
        None => (line, None),
    };
    match arg {
        Some(a) if program.ends_with("/env") => (!a.starts_with('-') && !a.contains([' ', '\t']))
            .then(|| (vec![program.to_owned(), a.to_owned()], base(a))),
        Some(a) => interpreters::is_shell_program(&base(program))
            .then(|| (vec![program.to_owned(), a.to_owned()], base(program))),
        None => Some((vec![program.to_owned()], base(program))),
    }
}

/// Python that runs the copy as `__main__` under the script's own name (`sys.argv[1]` of
/// `python -c BOOT x.py …`): `sys.argv`, `__file__` and `sys.path[0]` as `python x.py` sets
/// them. `None` when the copy's path is not plain ASCII (it is written as a literal).
fn python_boot(copy: &Path) -> Option<String> {
    let path = copy.to_str().filter(|p| p.is_ascii())?;
    let literal: String = path.bytes().map(|b| format!("\\x{b:02x}")).collect();
    Some(format!(
        "import sys as _s, os as _o; _f = _s.argv[1]; _s.argv = _s.argv[1:]; \
         _s.path[0] = _o.path.dirname(_o.path.realpath(_f)); \
         _s.modules[\"__main__\"].__file__ = _f; \
         _c = compile(open(\"{literal}\", \"rb\").read(), _f, \"exec\"); \
         del _s, _o, _f; exec(_c)"
    ))
}

/// `path` as one shell word.
fn quote_path(path: &Path) -> Option<String> {
    path.to_str().map(quote)
}

/// `text` as one shell word, single-quoted unless it needs no quotes.
fn quote(text: &str) -> String {
    if !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:@%,=".contains(c))
    {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// The command with each site's text put in place, or `None` when the words cannot be found
/// for certain (the result must read as the same tokens with only the sites changed). In a
/// command with placeholders, a text with a brace is not put in (it would read as one).
fn splice(command: &str, tokens: &[Token], sites: &[Site], is_template: bool) -> Option<String> {
    let mut out = String::with_capacity(command.len() + 128);
    let mut expected: Vec<Token> = Vec::with_capacity(tokens.len() + 4);
    let mut cursor = 0;
    for (i, token) in tokens.iter().enumerate() {
        let raw = match token {
            Token::Word(w) | Token::Target(w) => &w.raw,
            Token::Separator => {
                expected.push(token.clone());
                continue;
            }
        };
        let at = cursor + command.get(cursor..)?.find(raw.as_str())?;
        out.push_str(&command[cursor..at]);
        cursor = at + raw.len();
        match sites.iter().find(|s| s.token == i) {
            Some(site) => {
                if is_template && site.insert.contains(['{', '}']) {
                    return None;
                }
                out.push_str(&site.insert);
                expected.extend(shell::tokens(&site.insert).ok()?);
                if !site.replace {
                    out.push_str(raw);
                    expected.push(token.clone());
                }
            }
            None => {
                out.push_str(raw);
                expected.push(token.clone());
            }
        }
    }
    out.push_str(&command[cursor..]);
    let read = shell::tokens(&out).ok()?;
    (read == expected).then_some(out)
}

#[cfg(test)]
mod tests;
