//! Unit tests of the doctor: command splitting, resolution and the synthetic payloads.

use super::*;

fn words(command: &str) -> Vec<(String, bool)> {
    let lookup = |name: &str| match name {
        "KA_PROJECT_DIR" => Some("/repo".to_owned()),
        "HOME" => Some("/home/me".to_owned()),
        _ => None,
    };
    first_command(command, &lookup)
        .unwrap_or_else(|e| panic!("{command}: {e}"))
        .into_iter()
        .map(|w| (w.text, w.dynamic))
        .collect()
}

fn texts(command: &str) -> Vec<String> {
    words(command).into_iter().map(|w| w.0).collect()
}

#[test]
fn splits_the_first_simple_command_like_sh() {
    assert_eq!(
        texts("sh examples/hooks/x.sh"),
        ["sh", "examples/hooks/x.sh"]
    );
    assert_eq!(texts("a 'b c' \"d e\" f\\ g"), ["a", "b c", "d e", "f g"]);
    assert_eq!(texts("./x.sh && echo done"), ["./x.sh"]);
    assert_eq!(texts("x | y; z"), ["x"]);
    assert_eq!(
        texts("python3 x.py 2>/dev/null --flag"),
        ["python3", "x.py", "--flag"]
    );
    assert_eq!(texts("x # a comment"), ["x"]);
    assert_eq!(
        texts("FOO=1 BAR='a b' ./x.sh"),
        ["FOO=1", "BAR=a b", "./x.sh"]
    );
}

#[test]
fn expands_known_variables_and_marks_the_rest_dynamic() {
    assert_eq!(
        words("\"$KA_PROJECT_DIR\"/hooks/x.sh ~/bin/y"),
        [
            ("/repo/hooks/x.sh".to_owned(), false),
            ("/home/me/bin/y".to_owned(), false)
        ]
    );
    assert_eq!(
        words("${KA_PROJECT_DIR}/x")[0],
        ("/repo/x".to_owned(), false)
    );
    assert!(words("$UNKNOWN/x")[0].1);
    assert!(words("$(pwd)/x.sh")[0].1);
    assert!(words("`pwd`/x.sh")[0].1);
    assert!(words("x*.sh")[0].1);
}

#[test]
fn reports_what_it_cannot_split() {
    let none = |_: &str| None;
    assert!(first_command("( cd x && y )", &none).is_err());
    assert!(first_command("echo 'unterminated", &none).is_err());
}

#[test]
fn synthetic_payloads_point_only_into_the_scratch_dir() {
    let scratch = Path::new("/tmp/scratch-x");
    for event in Event::ALL {
        let payload = synthetic_payload(event, Some("write"), scratch);
        let text = Value::Object(payload.clone()).to_string();
        assert_eq!(payload["event"], event.as_str());
        assert_eq!(payload["cwd"], "/tmp/scratch-x");
        for (i, _) in text.match_indices('/') {
            // Every absolute path starts with the scratch dir.
            let before = &text[..i];
            if before.ends_with('"') || before.ends_with(' ') {
                assert!(text[i..].starts_with("/tmp/scratch-x"), "{text}");
            }
        }
    }
}
