use super::*;

struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    data: PathBuf,
    covered: Vec<Covered>,
}

/// A project with `files` (path, content, executable), each covered with its hash now.
fn fixture(files: &[(&str, &str, bool)]) -> Fixture {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().expect("tempdir");
    let base = dir.path().canonicalize().expect("canonical");
    let (root, data) = (base.join("p"), base.join("d"));
    std::fs::create_dir_all(&data).expect("mkdir");
    let mut covered = Vec::new();
    for (rel, content, exec) in files {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, content).expect("write");
        let mode = if *exec { 0o755 } else { 0o644 };
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).expect("chmod");
        covered.push(Covered {
            root: root.clone(),
            rel: (*rel).to_owned(),
            sha256: Some(crate::trust::content_hash(content.as_bytes())),
        });
    }
    Fixture {
        _dir: dir,
        root,
        data,
        covered,
    }
}

impl Fixture {
    fn pin(&self, command: &str) -> Option<String> {
        let files: Vec<&Covered> = self.covered.iter().collect();
        let mut copies = Copies {
            data_dir: &self.data,
            made: HashMap::new(),
        };
        let is_template = Template::parse(command).ok().flatten().is_some();
        pinned(command, is_template, &self.root, &files, &mut copies).map(|p| p.command)
    }

    fn copy(&self, content: &str) -> String {
        self.data
            .join("reviewed")
            .join(crate::trust::content_hash(content.as_bytes()))
            .to_string_lossy()
            .into_owned()
    }
}

const G: &str = "#!/bin/sh\nexit 2\n";

#[test]
fn a_shell_script_runs_from_its_copy_under_its_own_name() {
    let f = fixture(&[(".ka/g.sh", G, true), ("lib.sh", "x=1\n", false)]);
    let copy = f.copy(G);
    assert_eq!(
        f.pin("sh .ka/g.sh a").as_deref(),
        Some(format!("sh -c '. {copy}' .ka/g.sh a").as_str())
    );
    assert_eq!(
        f.pin("bash -e -o pipefail .ka/g.sh").as_deref(),
        Some(format!("bash -e -o pipefail -c '. {copy}' .ka/g.sh").as_str())
    );
    assert_eq!(
        f.pin("cd .ka && ./g.sh \"$1\"").as_deref(),
        Some(format!("cd .ka && /bin/sh -c '. {copy}' ./g.sh \"$1\"").as_str())
    );
    assert_eq!(
        f.pin("timeout 5 \"$KA_PROJECT_DIR\"/.ka/g.sh").as_deref(),
        Some(format!("timeout 5 /bin/sh -c '. {copy}' \"$KA_PROJECT_DIR\"/.ka/g.sh").as_str())
    );
    let lib = f.copy("x=1\n");
    assert_eq!(
        f.pin(". ./lib.sh; echo $x").as_deref(),
        Some(format!(". {lib}; echo $x").as_str())
    );
}

#[test]
fn placeholders_stay_and_the_copy_is_made_when_missing() {
    let f = fixture(&[(".ka/g.sh", G, false)]);
    let copy = f.copy(G);
    assert!(!Path::new(&copy).exists());
    assert_eq!(
        f.pin("sh {root}/.ka/g.sh {paths}").as_deref(),
        Some(format!("sh -c '. {copy}' {{root}}/.ka/g.sh {{paths}}").as_str())
    );
    assert_eq!(std::fs::read_to_string(&copy).ok().as_deref(), Some(G));
}

#[test]
fn python_runs_its_copy_as_main_under_the_script_name() {
    let py = "import sys\nsys.exit(2)\n";
    let f = fixture(&[("t.py", py, true)]);
    let pinned = f.pin("python3 -u t.py a").expect("pinned");
    assert!(pinned.starts_with("python3 -u -c '"), "{pinned}");
    assert!(pinned.ends_with("' t.py a"), "{pinned}");
    assert!(pinned.contains("_s.argv = _s.argv[1:]"), "{pinned}");
    let f = fixture(&[("t.py", &format!("#!/usr/bin/env python3\n{py}"), true)]);
    let pinned = f.pin("./t.py").expect("pinned");
    assert!(pinned.starts_with("/usr/bin/env python3 -c '"), "{pinned}");
}

#[test]
fn what_cannot_be_placed_for_certain_runs_by_name() {
    let f = fixture(&[
        (".ka/g.sh", G, true),
        ("g.sh", G, true),
        ("n.js", "1\n", true),
    ]);
    for command in [
        "bash -c 'sh .ka/g.sh'",
        "echo $(sh .ka/g.sh)",
        "node n.js",
        "sh \"$X\"/.ka/g.sh",
        // After a `cd` that may not have happened, `g.sh` is one of two covered files.
        "false && cd .ka; sh g.sh",
        "sh -- .ka/g.sh",
        "eval sh .ka/g.sh",
        "cat .ka/g.sh",
    ] {
        assert_eq!(f.pin(command), None, "{command}");
    }
    // Not executable: it would not have run, and still does not.
    let f = fixture(&[(".ka/g.sh", G, false)]);
    assert_eq!(f.pin("./.ka/g.sh"), None);
    // A here-document holding the same words is never rewritten.
    let f = fixture(&[(".ka/g.sh", G, true)]);
    let command = "cat <<EOF\nsh .ka/g.sh\nEOF\nsh .ka/g.sh";
    if let Some(pinned) = f.pin(command) {
        assert!(
            pinned.starts_with("cat <<EOF\nsh .ka/g.sh\nEOF\nsh -c"),
            "{pinned}"
        );
    }
}

#[test]
fn a_changed_file_without_its_copy_is_never_copied() {
    let f = fixture(&[(".ka/g.sh", G, true)]);
    std::fs::write(f.root.join(".ka/g.sh"), "exit 0\n").expect("write");
    assert_eq!(f.pin("sh .ka/g.sh"), None);
    assert!(!Path::new(&f.copy("exit 0\n")).exists());
}
