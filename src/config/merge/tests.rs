//! Unit tests of [`super`]: validation on top of the files below, and the monotone rule in
//! overrides and de-duplication across roots.

use std::path::Path;

use super::*;
use crate::config::parse::parse_file;

fn parsed(layer: Layer, path: &str, text: &str) -> ParsedFile {
    let mut errors = Vec::new();
    let file = parse_file(layer, Path::new(path), text, &mut errors);
    assert!(errors.is_empty(), "{errors:?}");
    file
}

#[test]
fn own_errors_are_the_errors_of_merging_on_top_of_the_files_below() {
    let below = parsed(
        Layer::User,
        "user.toml",
        "[[hooks]]\nname = \"u\"\nevent = \"stop\"\ncommand = \"u\"\n",
    );
    let file = parsed(
        Layer::Project,
        "project.toml",
        "[[hooks]]\nname = \"a\"\nevent = \"stop\"\n\
         [[hooks]]\nname = \"b\"\nevent = \"stop\"\ntool = \"write\"\ncommand = \"b\"\n\
         [[hooks]]\nname = \"a\"\ncommand = \"a\"\n\
         [[hooks]]\nname = \"u\"\ntool = \"write\"\n\
         [[hooks]]\nname = \"c\"\ntimeout = 3\n\
         [[hooks]]\nevent = \"stop\"\n\
         [[hooks]]\nname = \"c\"\nevent = \"pre_tool_use\"\n",
    );
    let names: HashMap<String, Vec<(usize, usize)>> = [("u".to_owned(), vec![(0, 0)])].into();
    let files = [below];
    let own = own_errors(
        &file,
        &Below {
            names: &names,
            files: &files,
        },
    );
    let [below] = files;
    let mut all = Vec::new();
    let _ = merge_hooks(
        vec![below, file],
        &Settings::default(),
        &mut all,
        &mut Vec::new(),
    );
    // Merging files the override's error under the user file (where `u` was defined);
    // `own_errors` files it under the project file, at the overriding entry.
    let (user, project): (Vec<ConfigError>, Vec<ConfigError>) = all
        .into_iter()
        .partition(|e| e.file == Path::new("user.toml"));
    assert_eq!(user.len(), 1, "{user:?}");
    let (overrides, rest): (Vec<ConfigError>, Vec<ConfigError>) = own
        .into_iter()
        .partition(|e| e.message.contains("overrides `u`"));
    assert_eq!(rest, project);
    assert_eq!(overrides.len(), 1, "{overrides:?}");
    assert_eq!(overrides[0].file, Path::new("project.toml"));
    assert_eq!(overrides[0].key.as_deref(), Some("hooks[3]"));
    assert!(
        overrides[0].message.contains(&user[0].message),
        "{:?}",
        overrides[0]
    );
    let keys: Vec<_> = rest.iter().filter_map(|e| e.key.as_deref()).collect();
    // `a` merges its two entries (no error); `c` merges too.
    assert_eq!(
        keys,
        ["hooks[1].tool", "hooks[4].command", "hooks[5].command"]
    );
}

fn in_root(layer: Layer, root: &str, text: &str) -> ParsedFile {
    let mut file = parsed(layer, &format!("{root}/.ka/ka.toml"), text);
    file.root = Some(root.into());
    file
}

const GUARD: &str = "[[hooks]]\nname = \"g\"\nevent = \"pre_tool_use\"\ncommand = \"g\"\n";
const WEAK_COPY: &str = "[[hooks]]\nevent = \"pre_tool_use\"\ncommand = \"g\"\nenforce = false\n";

#[test]
fn a_nested_projects_weaker_copy_or_override_never_replaces_the_outer_guard() {
    for inner in [WEAK_COPY, "[[hooks]]\nname = \"g\"\nenforce = false\n"] {
        let files = vec![
            in_root(Layer::Project, "/r", GUARD),
            in_root(Layer::Project, "/r/sub", inner),
        ];
        let mut errors = Vec::new();
        let merged = merge_hooks(files, &Settings::default(), &mut errors, &mut Vec::new());
        assert!(errors.is_empty(), "{errors:?}");
        let kept: Vec<_> = merged.hooks.iter().filter(|h| h.enabled).collect();
        assert_eq!(kept.len(), 1, "{inner}");
        assert!(kept[0].enforce, "{inner}");
        assert_eq!(kept[0].root.as_deref(), Some(Path::new("/r")));
        assert_eq!(merged.refused.len(), 1, "{inner}");
        assert_eq!(
            merged.refused[0].original.file.as_ref(),
            Path::new("/r/.ka/ka.toml")
        );
        assert_eq!(
            merged.refused[0].at.file.as_ref(),
            Path::new("/r/sub/.ka/ka.toml")
        );
    }
    // The same copy in the outer project's own local file is the user's: it replaces it.
    let files = vec![
        in_root(Layer::Project, "/r", GUARD),
        in_root(Layer::Local, "/r", WEAK_COPY),
    ];
    let merged = merge_hooks(
        files,
        &Settings::default(),
        &mut Vec::new(),
        &mut Vec::new(),
    );
    assert!(merged.refused.is_empty());
    assert_eq!(merged.hooks.len(), 1);
    assert!(!merged.hooks[0].enforce);
}

#[test]
fn a_copy_as_strong_replaces_a_managed_guard_only_while_other_layers_run() {
    let files = || {
        vec![
            parsed(Layer::Managed, "managed.toml", GUARD),
            parsed(
                Layer::User,
                "user.toml",
                "[[hooks]]\nevent = \"pre_tool_use\"\ncommand = \"g\"\ntimeout = 5\non_error = \"block\"\n",
            ),
        ]
    };
    let merged = merge_hooks(
        files(),
        &Settings::default(),
        &mut Vec::new(),
        &mut Vec::new(),
    );
    assert_eq!(merged.hooks.len(), 1);
    assert_eq!(merged.hooks[0].source.layer, Layer::User);
    let off = Settings {
        disabled: Some("disable_all".into()),
        ..Settings::default()
    };
    let merged = merge_hooks(files(), &off, &mut Vec::new(), &mut Vec::new());
    assert_eq!(merged.hooks.len(), 1);
    assert!(merged.hooks[0].is_managed());
    // Not a weakening, so nothing is refused: the copy simply does not replace it.
    assert!(merged.refused.is_empty());
}
