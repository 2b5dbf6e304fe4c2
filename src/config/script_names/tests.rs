use super::*;

fn paths(command: &str) -> Vec<String> {
    named(Path::new("/repo"), command)
        .files
        .iter()
        .flat_map(|c| c.paths.iter().map(|p| p.to_string_lossy().into_owned()))
        .collect()
}

#[test]
fn scripts_behind_interpreters_operators_and_variables_are_executed_files() {
    let w = paths(
        "sh .ka/hooks/guard.sh && python3 \"$CLAUDE_PROJECT_DIR\"/tools/check.py|./fmt.sh --x=y",
    );
    assert_eq!(w, [".ka/hooks/guard.sh", "tools/check.py", "fmt.sh"]);
    let w = paths("bash -c 'sh scripts/a.sh' < in/b.sh");
    assert_eq!(w, ["scripts/a.sh"], "a redirect target is data");
    let w = paths(". lib/env.sh; source ./more.sh; node --require ./pre.js x.js; ruby -w r.rb");
    assert_eq!(w, ["lib/env.sh", "more.sh", "x.js", "pre.js", "r.rb"]);
    let w = paths("perl -I lib p.pl; php -d x=1 q.php; deno run -A d.ts; bun b.ts; sudo -u u ./s");
    assert_eq!(w, ["p.pl", "q.php", "d.ts", "b.ts", "s"]);
    let w = paths("BASH_ENV=.ka/env.sh bash -e -o pipefail .ka/g.sh arg.txt");
    assert_eq!(w, [".ka/env.sh", ".ka/g.sh"]);
}

#[test]
fn data_operands_redirects_and_strings_are_not_executed() {
    for command in [
        "grep -q 'tests pass' test-status.txt || exit 2",
        "jq -c . >> \"$CLAUDE_PROJECT_DIR\"/edited.log",
        "grep -c TODO src/notes.md",
        "black src/app.py",
        "echo 'writes go under src/ only' >&2; exit 2",
        "sed -n 's/a/b/p' notes/x.sh",
        "sh -c 'echo run.sh' ; python3 -c 'import x' y.py; node -e 1 z.js; bash -s w.sh",
        "cat .ka/hooks/guard.sh | wc -l",
    ] {
        assert_eq!(paths(command), Vec::<String>::new(), "{command}");
    }
}

#[test]
fn the_root_placeholder_and_variables_name_the_project() {
    for command in [
        "sh {root}/.ka/hooks/g.sh {paths}",
        "\"{root}/.ka/hooks/g.sh\"",
        "$KA_PROJECT_DIR/.ka/hooks/g.sh",
        "bash \"${CLAUDE_PROJECT_DIR}/.ka/hooks/g.sh\"",
    ] {
        assert_eq!(paths(command), [".ka/hooks/g.sh"], "{command}");
    }
    let n = named(Path::new("/repo"), "sh {path}");
    assert!(n.files.is_empty());
    assert!(
        n.uncovered[0].contains("known only when the shell runs"),
        "{:?}",
        n.uncovered
    );
}

#[test]
fn programs_from_path_are_named_and_builtins_are_not() {
    let n = named(
        Path::new("/repo"),
        "grep -q x f || { echo no >&2; exit 2; }; jq . | grep y",
    );
    assert_eq!(n.from_path, ["grep", "jq"]);
    assert!(n.files.is_empty() && n.uncovered.is_empty(), "{n:?}");
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
