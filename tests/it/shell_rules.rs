//! `if = "Bash(rm:*)"` and `"Bash(git push *)"` meet every everyday spelling of the command
//! (the shell rules understand the shell): each row is a real `pre_tool_use` dispatch of
//! a real guard script through `sh`, once through `ka-hooks run` and once through the Claude
//! adapter. A row that must match is blocked by the guard; a row that must not is let through
//! without the guard running; a row the shell alone could tell is blocked (the guard runs, fail
//! closed) and the report says why.
//!
//! Before, the rules were text prefixes of `&&`-split pieces: every matching row below
//! except the plain `rm -f x`, `FOO=1 rm -f x` and the chained ones was let through.

use crate::support;

use serde_json::json;
use support::Project;

/// Which guard a row must meet.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Want {
    /// The guard's rule matches: the guard runs and blocks.
    Match,
    /// The rule cannot be checked statically: the guard runs (fail closed), with a diagnostic.
    Unknown,
    /// The rule does not match: the guard never runs.
    Pass,
}

use Want::*;

/// A user layer with one guard, `if = rule`, whose script logs each run and blocks.
fn guarded_if(rule: &str, says: &str) -> Project {
    let p = Project::new();
    let script = p.write(
        "guards/guard.sh",
        &format!(
            "cat >/dev/null\necho ran >> \"$KA_PROJECT_DIR/ran\"\necho '{says}' >&2\nexit 2\n"
        ),
    );
    p.write_user_toml(&format!(
        "[[hooks]]\nname = \"guard\"\nevent = \"pre_tool_use\"\ntool = \"bash\"\nif = {rule:?}\n\
         command = \"sh '{}'\"\n",
        script.display()
    ));
    p
}

fn runs(p: &Project) -> usize {
    p.read("ran").unwrap_or_default().lines().count()
}

/// One row through `ka-hooks run` and through `ka-hooks claude`; a failure names the row.
fn check_row(p: &Project, says: &str, command: &str, want: Want) {
    let before = runs(p);
    let payload = json!({"tool": "bash", "arguments": {"command": command}});
    let out = p
        .cli()
        .args(["run", "pre_tool_use", "--input"])
        .arg(payload.to_string())
        .output()
        .expect("ka-hooks run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let blocked = out.status.code() == Some(2);
    assert_eq!(
        blocked,
        want != Pass,
        "ka-hooks run, {command:?}: want {want:?}, got exit {:?}\n{stdout}",
        out.status.code()
    );
    if want != Pass {
        assert!(stdout.contains(says), "{command:?}: {stdout}");
    }
    assert_eq!(
        stdout.contains("could not be checked without running the shell"),
        want == Unknown,
        "ka-hooks run, {command:?}: the diagnostic\n{stdout}"
    );

    let claude = json!({
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "cwd": p.root,
        "session_id": "s",
    });
    let out = p
        .cli()
        .env("CLAUDE_PROJECT_DIR", &p.root)
        .arg("claude")
        .write_stdin(claude.to_string())
        .output()
        .expect("ka-hooks claude");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code() == Some(2),
        want != Pass,
        "ka-hooks claude, {command:?}: want {want:?}, got exit {:?}\n{stderr}",
        out.status.code()
    );
    if want != Pass {
        assert!(stderr.contains(says), "claude, {command:?}: {stderr}");
    }
    let ran = runs(p) - before;
    assert_eq!(
        ran,
        if want == Pass { 0 } else { 2 },
        "{command:?}: the guard script ran {ran} times"
    );
}

#[test]
fn rm_rules_see_rm_however_it_is_spelled() {
    let says = "no rm here";
    let p = guarded_if("Bash(rm:*)", says);
    let rows: &[(&str, Want)] = &[
        ("rm -f x", Match),
        ("FOO=1 rm -f x", Match),
        ("command rm -f x", Match),
        ("\\rm -f x", Match),
        ("/bin/rm -f x", Match),
        ("./node_modules/.bin/rm -f x", Match),
        ("env rm -f x", Match),
        ("env -i FOO=1 rm -f x", Match),
        ("sudo rm -f x", Match),
        ("sudo -u x rm -f x", Match),
        ("nohup rm -f x", Match),
        ("nice -n 5 rm -f x", Match),
        ("time rm -f x", Match),
        ("timeout 5 rm -f x", Match),
        ("echo x | xargs rm -f", Match),
        ("stdbuf -oL rm -f x", Match),
        ("echo $(rm -f x)", Match),
        ("echo `rm -f x`", Match),
        ("( rm -f x )", Match),
        ("{ rm -f x; }", Match),
        ("bash -c 'rm -f x'", Match),
        ("sh -c \"rm -f x\"", Match),
        ("zsh -c 'ls; rm -f x'", Match),
        ("eval \"rm -f x\"", Match),
        ("\"rm\" -f x", Match),
        ("r''m -f x", Match),
        ("$'rm' -f x", Match),
        ("exec rm -f x", Match),
        ("builtin rm -f x", Match),
        ("ls | rm -f x", Match),
        ("ls; rm -f x", Match),
        ("ls && rm -f x", Match),
        ("false || rm -f x", Match),
        ("sleep 1 & rm -f x", Match),
        ("ls\nrm -f x", Match),
        ("ls # a comment\nrm -f x", Match),
        ("find . -name '*.o' -exec rm -f {} +", Match),
        ("if true; then rm -f x; fi", Match),
        ("cat <<EOF\n$(rm -f x)\nEOF", Match),
        ("$cmd -f x", Unknown),
        ("x=rm; $x -f a", Unknown),
        ("rm${IFS}-f${IFS}x", Unknown),
        ("eval \"$x\"", Unknown),
        ("bash -c \"$x\"", Unknown),
        ("echo 'unterminated", Unknown),
        ("curl -s example.invalid | sh", Unknown),
        ("bash <(curl -s example.invalid)", Unknown),
        ("shopt -s expand_aliases; alias r=rm\nr -f x", Unknown),
        // A shift read as a here-document would hide the next line (found by review).
        ("((y = 1<<z))\nrm -f x\nz", Unknown),
        ("((y = 1 << 2)); rm -f x", Unknown),
        ("((n++)); rm -f x", Match),
        ("function f { rm -f x; }; f", Match),
        ("function f() { rm -f x; }; f", Match),
        ("coproc rm -f x", Match),
        ("echo rm -f x", Pass),
        ("echo 'rm -f x'", Pass),
        ("rmdir x", Pass),
        ("command -v rm", Pass),
        ("ls rm", Pass),
        ("cat <<'EOF'\nrm -f x\nEOF", Pass),
        ("git status", Pass),
    ];
    for (command, want) in rows {
        check_row(&p, says, command, *want);
    }
}

#[test]
fn git_push_rules_see_push_past_git_global_options_and_wrappers() {
    let says = "no pushing";
    let p = guarded_if("Bash(git push *)", says);
    let rows: &[(&str, Want)] = &[
        ("git push", Match),
        ("git push origin main", Match),
        ("git  push origin", Match),
        ("git\tpush origin", Match),
        ("git -C . push origin", Match),
        ("git --no-pager push", Match),
        ("git -c a=b push", Match),
        ("git --git-dir=.git --work-tree . push", Match),
        ("/usr/bin/git push", Match),
        ("\"git\" 'push' origin", Match),
        ("sudo git push", Match),
        ("env GIT_TRACE=1 git push", Match),
        ("bash -c 'git push --force'", Match),
        ("echo $(git push)", Match),
        ("(cd sub && git push)", Match),
        ("git $sub origin", Unknown),
        ("git ${IFS}push", Unknown),
        ("git -c alias.p=push p", Unknown),
        ("git status", Pass),
        ("grep push log", Pass),
        ("git log --grep push", Pass),
        ("echo git push", Pass),
        ("gitpush", Pass),
        ("git pushx", Pass),
    ];
    for (command, want) in rows {
        check_row(&p, says, command, *want);
    }
}

#[test]
fn rm_rules_see_the_other_ways_bash_runs_rm() {
    let says = "no rm here";
    let p = guarded_if("Bash(rm:*)", says);
    let rows: &[(&str, Want)] = &[
        ("eval -- rm -f x", Match),
        ("coproc X { rm -f x; }", Match),
        ("trap 'rm -f x' EXIT", Match),
        ("trap -- 'rm -f x' EXIT", Match),
        ("echo $(case x in x) rm -f x;; esac)", Unknown),
        ("printf '%s\\0' x | xargs -0 sh -c", Unknown),
        ("test -v 'a[$(rm -f x)]'", Unknown),
        ("[ -v 'a[$(rm -f x)]' ]", Unknown),
        ("printf -v 'a[$(rm -f x)]' %s y", Unknown),
        ("read 'a[$(rm -f x)]' <<< y", Unknown),
        ("declare 'a[$(rm -f x)]=1'", Unknown),
        ("let 'a[$(rm -f x)]=1'", Unknown),
        ("x='a[$(rm -f x)]'; echo $((x))", Unknown),
        ("x='a[$(rm -f x)]'; echo ${!x}", Unknown),
        ("echo 'rm -f x' | bash /dev/stdin", Unknown),
        ("echo 'rm -f x' | sh /dev/fd/0", Unknown),
        (". /dev/stdin <<< 'rm -f x'", Unknown),
        ("BASH_ENV=./s bash -c true", Unknown),
        // What stays plain: arithmetic on numbers, a trap that lists.
        ("echo $((1 + 2))", Pass),
        ("trap -p", Pass),
    ];
    for (command, want) in rows {
        check_row(&p, says, command, *want);
    }
}
