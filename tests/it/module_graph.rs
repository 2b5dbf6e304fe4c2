//! The library's top-level modules form no cycle (issue 23: "an acyclic house"): each module's
//! non-test sources name other modules as `crate::<module>`, and following those names never
//! leads back to where it started.

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

/// The modules `text` names as `crate::<name>`, before any inline `mod tests`, outside comments.
fn named(text: &str) -> BTreeSet<String> {
    let code = text.split("#[cfg(test)]\nmod tests {").next().unwrap_or("");
    let mut names = BTreeSet::new();
    for line in code.lines() {
        let line = line.split("//").next().unwrap_or("");
        for (at, _) in line.match_indices("crate::") {
            let rest = &line[at + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            names.insert(name);
        }
    }
    names
}

#[test]
fn the_library_modules_form_no_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for entry in std::fs::read_dir(&src).expect("read src").flatten() {
        let path = entry.path();
        let name = path
            .file_stem()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_owned();
        let module = path.is_dir() || path.extension().is_some_and(|e| e == "rs");
        if name == "lib" || name == "main" || !module {
            continue;
        }
        let mut files = Vec::new();
        sources(&path, &mut files);
        let uses = graph.entry(name.clone()).or_default();
        for file in files {
            let text = std::fs::read_to_string(&file).expect("read source");
            uses.extend(named(&text).into_iter().filter(|n| *n != name));
        }
    }
    assert!(graph.len() > 20, "found only {graph:?}");
    let modules: BTreeSet<String> = graph.keys().cloned().collect();
    for uses in graph.values_mut() {
        uses.retain(|n| modules.contains(n));
    }
    // A depth-first search from every module; a module met again on the current path closes a
    // cycle.
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
    for module in graph.keys() {
        let cycle = visit(module, &graph, &mut Vec::new(), &mut done);
        assert!(
            cycle.is_none(),
            "module cycle: {}",
            cycle.unwrap_or_default().join(" -> ")
        );
    }
}
