use super::*;

fn table(text: &str) -> toml::Value {
    let doc: toml::Table = toml::from_str(&format!("sandbox = {text}")).expect("test toml");
    doc["sandbox"].clone()
}

#[test]
fn profiles_and_tables_parse() {
    assert_eq!(Declared::from_toml(&table("\"off\"")), Ok(Declared::Off));
    let Ok(Declared::Rules(project)) = Declared::from_toml(&table("\"project\"")) else {
        panic!("project profile");
    };
    assert_eq!(project.write, ["{root}", "{tmp}"]);
    assert!(!project.network);
    let Ok(Declared::Rules(custom)) = Declared::from_toml(&table(
        "{ write = [\"{root}\", \"~/.cache/x\"], network = true }",
    )) else {
        panic!("table");
    };
    assert_eq!(custom.write, ["{root}", "~/.cache/x"]);
    assert!(custom.network);
}

#[test]
fn bad_declarations_say_what_was_expected() {
    for (text, expected) in [
        ("\"loose\"", "unknown sandbox profile `loose`"),
        ("{ write = [\"relative/dir\"] }", "is not an absolute path"),
        ("{ net = true }", "unknown key `sandbox.net`"),
        ("{ network = \"yes\" }", "`sandbox.network` must be"),
        ("3", "expected a profile name"),
    ] {
        let err = Declared::from_toml(&table(text)).expect_err(text);
        assert!(err.contains(expected), "{text}: {err}");
    }
}

#[test]
fn project_hooks_are_confined_by_default_and_user_hooks_are_not() {
    let policy = Policy::default();
    assert!(matches!(
        Plan::of(true, None, &policy),
        Plan::Confine { rules, required: false } if rules.profile.as_deref() == Some("project")
    ));
    assert_eq!(Plan::of(false, None, &policy), Plan::Unconfined);
}

#[test]
fn the_user_can_turn_project_confinement_off_and_require_it() {
    let off = Policy {
        project_hooks: Some(Declared::Off),
        ..Policy::default()
    };
    let declared = Declared::Rules(Rules::profile("read-only").expect("profile"));
    assert!(matches!(
        Plan::of(true, Some(&declared), &off),
        Plan::Off(_)
    ));
    let require = Policy {
        require: true,
        ..Policy::default()
    };
    assert!(matches!(
        Plan::of(true, Some(&Declared::Off), &require),
        Plan::Refused(_)
    ));
}

#[test]
fn looser_rules_are_a_weakening() {
    let project = Plan::of(true, None, &Policy::default());
    let read_only = Plan::of(
        true,
        Some(&Declared::Rules(
            Rules::profile("read-only").expect("profile"),
        )),
        &Policy::default(),
    );
    assert!(project.looser_than(&read_only));
    assert!(!read_only.looser_than(&project));
    assert!(Plan::Off("x".into()).looser_than(&project));
}

#[test]
fn places_resolve_against_the_root() {
    let rules = Rules {
        profile: None,
        write: vec!["{root}".into(), "{root}/out".into(), "/abs".into()],
        network: false,
    };
    let resolved = rules.resolve(Path::new("/r"));
    assert_eq!(
        resolved.write,
        [
            PathBuf::from("/abs"),
            PathBuf::from("/r"),
            PathBuf::from("/r/out")
        ]
    );
}

#[test]
fn a_denied_write_names_the_directory_to_declare() {
    let plan = Plan::of(true, None, &Policy::default());
    let note = note(
        &plan,
        Some(2),
        "sh: 1: cannot create /home/u/.bashrc: Permission denied\n",
    );
    if probe()
        .cannot_confine(&Rules::profile("project").expect("p"))
        .is_none()
    {
        let note = note.expect("a note");
        assert!(note.contains("[\"/home/u\"]"), "{note}");
        assert!(note.contains("sandbox.network = true"), "{note}");
    } else {
        assert_eq!(note, None);
    }
    assert_eq!(super::note(&plan, Some(0), "Permission denied"), None);
    assert_eq!(
        super::note(&Plan::Unconfined, Some(1), "Permission denied"),
        None
    );
}

#[test]
fn write_places_are_normalised_to_what_they_grant() {
    let tmp = std::env::temp_dir();
    let up = "../".repeat(tmp.components().count() + 3);
    for (written, normal) in [
        ("{root}/./build/../target//x", "{root}/target/x".to_owned()),
        ("{root}/..", "{root}/..".to_owned()),
        (
            "{root}/../../shared/./x",
            "{root}/../../shared/x".to_owned(),
        ),
        ("{tmp}", "{tmp}".to_owned()),
        ("{tmp}/a/..", "{tmp}".to_owned()),
        ("/var/../etc/./x", "/etc/x".to_owned()),
        ("/..", "/".to_owned()),
    ] {
        assert_eq!(normalize_place(written), normal, "{written}");
    }
    assert_eq!(normalize_place(&format!("{{tmp}}/{up}")), "/");
    let rules = Rules {
        profile: None,
        write: [
            "{root}",
            "{root}/x",
            "{tmp}/y",
            "{root}/../z",
            "/",
            "~/.cache",
        ]
        .map(String::from)
        .to_vec(),
        network: false,
    };
    assert_eq!(rules.outside_project(), ["{root}/../z", "/", "~/.cache"]);
}
