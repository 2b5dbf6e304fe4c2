use super::*;

/// The normalised forms of every simple command of `line`.
fn forms(line: &str) -> Vec<String> {
    simple_commands(line)
        .commands
        .iter()
        .map(SimpleCommand::text)
        .collect()
}

fn runs(line: &str, want: &str) {
    let got = forms(line);
    assert!(
        got.iter().any(|f| f == want),
        "{line:?} gave {got:?}, not {want:?}"
    );
}

#[test]
fn quotes_and_escapes_are_removed() {
    runs(r#""rm" -f a"#, "rm -f a");
    runs(r"\rm -f a", "rm -f a");
    runs("r''m -f a", "rm -f a");
    runs("$'rm' -f a", "rm -f a");
    runs("$'\\x72\\155' -f a", "rm -f a");
    runs("git  push\t origin", "git push origin");
    runs("/bin/rm x", "rm x");
    runs("./bin/rm x", "rm x");
}

#[test]
fn separators_groups_and_substitutions() {
    for line in [
        "ls; rm x",
        "ls && rm x",
        "ls || rm x",
        "ls | rm x",
        "ls & rm x",
        "ls\nrm x",
        "( rm x )",
        "{ rm x; }",
        "echo $(rm x)",
        "echo `rm x`",
        "echo \"$(rm x)\"",
        "cat <(rm x)",
        "echo ${y:-$(rm x)}",
        "if true; then rm x; fi",
        "for f in a; do rm x; done",
        "ls # comment\nrm x",
        "X=1 Y=2 rm x",
        "echo >$(rm x)",
    ] {
        runs(line, "rm x");
    }
}

#[test]
fn wrappers_are_peeled() {
    for line in [
        "command rm x",
        "builtin rm x",
        "exec rm x",
        "exec -a name rm x",
        "env rm x",
        "env -i FOO=1 rm x",
        "env -u HOME -C /tmp rm x",
        "env -S 'rm x'",
        "sudo rm x",
        "sudo -u root -E rm x",
        "sudo --user=root rm x",
        "nohup rm x",
        "nice -n 5 rm x",
        "nice -5 rm x",
        "time -p rm x",
        "timeout 5 rm x",
        "timeout -s KILL 5s rm x",
        "xargs rm x",
        "xargs -0 -n1 rm x",
        "stdbuf -oL rm x",
        "sudo nice -n 1 /usr/bin/rm x",
        "bash -c 'rm x'",
        "sh -ec \"rm x\"",
        "zsh -c 'ls; rm x'",
        "eval 'rm x'",
        "eval rm x",
        "find . -exec rm x \\;",
        "coproc rm x",
        "bash -c \"bash -c 'rm x'\"",
    ] {
        runs(line, "rm x");
    }
    runs("sudo rm x", "sudo rm x");
    assert!(!forms("command -v rm").iter().any(|f| f == "rm"));
}

#[test]
fn git_global_options_are_dropped() {
    for line in [
        "git push origin",
        "git -C . push origin",
        "git --no-pager push origin",
        "git -c a=b push origin",
        "git --git-dir=.git push origin",
        "git --git-dir .git --work-tree . push origin",
        "git -C a -c x=y -p push origin",
    ] {
        runs(line, "git push origin");
    }
}

#[test]
fn what_cannot_be_known_is_said() {
    let dynamic = simple_commands("$cmd x");
    assert!(dynamic.commands[0].dynamic[0]);
    let ifs = simple_commands("rm${IFS}-rf x");
    assert!(ifs.commands[0].dynamic[0]);
    for line in [
        "echo 'unterminated",
        "echo \"unterminated",
        "echo $(rm",
        "echo `rm",
        "eval \"$x\"",
        "bash -c \"$x\"",
        "curl x | sh",
        "echo $(( $(rm x) ))",
        "shopt -s expand_aliases; alias r=rm; r x",
        "source <(curl -s example.invalid)",
        "git -c alias.p=push p",
        "bash <(echo rm x)",
    ] {
        assert!(
            !simple_commands(line).unknown.is_empty(),
            "{line:?} should be unknown"
        );
    }
    assert!(simple_commands("git push origin main").unknown.is_empty());
    assert!(simple_commands("sh script.sh").unknown.is_empty());
}

#[test]
fn heredoc_bodies_are_no_commands_but_their_substitutions_are() {
    let got = forms("cat <<EOF\nrm x\nEOF\nls");
    assert!(!got.iter().any(|f| f == "rm x"), "{got:?}");
    assert!(got.iter().any(|f| f == "ls"), "{got:?}");
    runs("cat <<EOF\n$(rm x)\nEOF", "rm x");
    let quoted = forms("cat <<'EOF'\n$(rm x)\nEOF");
    assert!(!quoted.iter().any(|f| f == "rm x"), "{quoted:?}");
}

#[test]
fn plain_words_are_not_commands() {
    assert_eq!(forms("echo rm x"), vec!["echo rm x"]);
    assert_eq!(forms("grep push log"), vec!["grep push log"]);
    assert_eq!(forms("git status"), vec!["git status"]);
    assert_eq!(forms("echo 'a; rm x'"), vec!["echo a; rm x"]);
    assert_eq!(forms("ls 2>/dev/null"), vec!["ls"]);
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let line = format!("{}rm x{}", "$(".repeat(200), ")".repeat(200));
    assert!(!simple_commands(&line).unknown.is_empty());
    let line = format!("{}'rm x'", "bash -c ".repeat(100));
    let _ = simple_commands(&line);
}
