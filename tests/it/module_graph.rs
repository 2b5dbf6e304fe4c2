//! The library's top-level modules form no cycle. Each module's
//! non-test sources are read for the paths that reach another top-level module: `crate::x`,
//! grouped imports (`crate::{x, y::z}`), the crate root's re-exports (`crate::Outcome` is
//! `outcome`'s) and `super::` chains that climb out of the module. Following those never leads
//! back to where it started.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every `.rs` file under `path` (itself, if it is one), test files left out.
fn sources(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        let mut entries: Vec<_> = std::fs::read_dir(path)
            .expect("read src")
            .flatten()
            .map(|e| e.path())
            .collect();
        entries.sort();
        for entry in entries {
            sources(&entry, out);
        }
    } else if path.extension().is_some_and(|e| e == "rs") {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if !(name == "tests.rs" || name.ends_with("_tests.rs")) {
            out.push(path.to_owned());
        }
    }
}

/// `text` without comments (a `//` inside a string literal stays) and without inline
/// `#[cfg(test)] mod … { … }` blocks.
fn code(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let mut in_string = false;
        let mut prev = ' ';
        let mut cut = line.len();
        for (at, c) in line.char_indices() {
            if c == '"' && prev != '\\' {
                in_string = !in_string;
            }
            if !in_string && c == '/' && prev == '/' {
                cut = at - 1;
                break;
            }
            prev = c;
        }
        out.push_str(&line[..cut]);
        out.push('\n');
    }
    while let Some(at) = out.find("#[cfg(test)]\nmod ") {
        let Some(open) = out[at..].find('{').map(|o| at + o) else {
            break;
        };
        let mut depth = 0usize;
        let mut end = out.len();
        for (i, c) in out[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        out.replace_range(at..end, "");
    }
    out
}

fn ident(text: &str) -> &str {
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    &text[..end]
}

/// The first segment of each item of the group that opens `text` (`{a, b::{c, d}, e as f}`
/// gives `a`, `b`, `e`).
fn group_heads(text: &str) -> Vec<&str> {
    let mut heads = Vec::new();
    let mut depth = 0usize;
    let mut item_start = 1;
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' | ',' if depth == 1 => {
                heads.push(ident(text[item_start..].trim_start()));
                item_start = i + 1;
                if c == '}' {
                    break;
                }
            }
            '}' => depth -= 1,
            _ => {}
        }
    }
    heads.retain(|h| !h.is_empty() && *h != "self");
    heads
}

/// The names `code` reaches at the crate root: after `crate::`, and after as many `super::`
/// as climb above `depth` (how deep the file's module is: 1 for `src/x.rs` and `src/x/mod.rs`).
fn root_names(code: &str, depth: usize) -> Vec<&str> {
    let mut names = Vec::new();
    let mut rest = code;
    while let Some(at) = rest
        .find("crate::")
        .into_iter()
        .chain(rest.find("super::"))
        .min()
    {
        let mut tail = &rest[at..];
        let mut at_root = tail.starts_with("crate::");
        if at_root {
            tail = &tail["crate::".len()..];
        } else {
            let mut supers = 0;
            while let Some(next) = tail.strip_prefix("super::") {
                supers += 1;
                tail = next;
            }
            at_root = supers >= depth;
        }
        if at_root {
            if tail.starts_with('{') {
                names.extend(group_heads(tail));
            } else {
                names.push(ident(tail));
            }
        }
        rest = &rest[at + 1..];
    }
    names
}

/// The crate root's `pub use module::…` re-exports: item name → module.
fn re_exports(lib: &str) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    for line in code(lib).lines() {
        let Some(path) = line.trim().strip_prefix("pub use ") else {
            continue;
        };
        let module = ident(path).to_owned();
        let items = &path[module.len()..];
        let items = items.trim_start_matches("::");
        let names: Vec<&str> = if items.starts_with('{') {
            items
                .trim_matches(|c| c == '{' || c == '}' || c == ';')
                .split(',')
                .map(|i| ident(i.trim().rsplit("::").next().unwrap_or("")))
                .collect()
        } else {
            vec![ident(items.rsplit("::").next().unwrap_or(""))]
        };
        for name in names.into_iter().filter(|n| !n.is_empty()) {
            map.insert(name.to_owned(), module.clone());
        }
    }
    map
}

/// How deep the module of `file` is below the crate root.
fn depth(src: &Path, file: &Path) -> usize {
    let relative = file.strip_prefix(src).expect("under src");
    let parts = relative.components().count();
    if file.file_name().is_some_and(|n| n == "mod.rs") {
        parts - 1
    } else {
        parts
    }
}

/// The module graph of the crate at `src`: each top-level module and the others it names.
fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let lib = std::fs::read_to_string(src.join("lib.rs")).expect("read lib.rs");
    let re_exported = re_exports(&lib);
    let mut modules = BTreeMap::new();
    for entry in std::fs::read_dir(src).expect("read src").flatten() {
        let path = entry.path();
        let name = path.file_stem().and_then(|n| n.to_str()).unwrap_or("");
        let module = path.is_dir() || path.extension().is_some_and(|e| e == "rs");
        if module && name != "lib" && name != "main" {
            modules.insert(name.to_owned(), path);
        }
    }
    let mut graph = BTreeMap::new();
    for (name, path) in &modules {
        let mut files = Vec::new();
        sources(path, &mut files);
        let mut uses = BTreeSet::new();
        for file in files {
            let text = code(&std::fs::read_to_string(&file).expect("read source"));
            for target in root_names(&text, depth(src, &file)) {
                let target = re_exported.get(target).map_or(target, String::as_str);
                if target != name && modules.contains_key(target) {
                    uses.insert(target.to_owned());
                }
            }
        }
        graph.insert(name.clone(), uses);
    }
    graph
}

/// A cycle of `graph`, if it has one (a depth-first search from every module; a module met
/// again on the current path closes a cycle).
fn cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        module: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|m| m == module) {
            let mut cycle = path[at..].to_vec();
            cycle.push(module.to_owned());
            return Some(cycle);
        }
        if done.contains(module) {
            return None;
        }
        path.push(module.to_owned());
        for next in &graph[module] {
            if let Some(cycle) = visit(next, graph, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(module.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|module| visit(module, graph, &mut Vec::new(), &mut done))
}

#[test]
fn the_library_modules_form_no_cycle() {
    let graph = graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    assert!(graph.len() > 20, "found only {graph:?}");
    // The reader sees the edges that exist (a sample of each way of naming a module).
    assert!(graph["dispatch"].contains("background"), "grouped import");
    assert!(graph["process"].contains("sandbox"), "crate:: path");
    let cycle = cycle(&graph);
    assert!(
        cycle.is_none(),
        "module cycle: {}",
        cycle.unwrap_or_default().join(" -> ")
    );
}

#[test]
fn the_reader_sees_every_way_of_naming_a_module() {
    let names = |text: &str, depth| {
        let code = code(text);
        root_names(&code, depth)
            .into_iter()
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        names("use crate::{dispatch as d, background::{a, b}, self};", 1),
        ["dispatch", "background"]
    );
    assert_eq!(names("use crate::{\n    a,\n    b::c,\n};", 1), ["a", "b"]);
    assert_eq!(names("use super::x;", 1), ["x"]);
    assert_eq!(names("use super::x;", 2), Vec::<String>::new());
    assert_eq!(names("use super::super::y;", 2), ["y"]);
    assert_eq!(names("let s = \"//\"; crate::z::f();", 1), ["z"]);
    assert_eq!(names("// crate::commented\n", 1), Vec::<String>::new());
    assert_eq!(
        names(
            "#[cfg(test)]\nmod tests {\n use crate::t;\n}\nfn f() { crate::after::g() }",
            1
        ),
        ["after"]
    );
    let exports = re_exports("pub use outcome::Outcome;\npub use event::{Event, ExitTwo};\n");
    assert_eq!(exports["Outcome"], "outcome");
    assert_eq!(exports["ExitTwo"], "event");
}
