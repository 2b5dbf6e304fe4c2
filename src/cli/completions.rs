//! `ka-hooks completions`: clap's completion script, with event names (the possible values of
//! every event argument) and, for bash and fish, the hook names `--hook` takes.

use std::io::Write;

use super::{Cli, EXIT_OK};

pub fn run(shell: clap_complete::Shell) -> Result<u8, String> {
    // Generated into memory: clap_complete panics on a write error, such as a closed pipe.
    let mut script = Vec::new();
    let mut command = <Cli as clap::CommandFactory>::command();
    clap_complete::generate(shell, &mut command, "ka-hooks", &mut script);
    let mut script = String::from_utf8_lossy(&script).into_owned();
    if shell == clap_complete::Shell::Bash {
        // clap_complete spells the case arms of a hyphenated bin name differently from the state
        // its loop builds (`ka__subcmd__hooks__subcmd__run` against `ka__hooks__subcmd__run`),
        // so nothing after a subcommand completed (clap-rs/clap#6421). Spell them alike.
        script = script.replace("ka__subcmd__hooks", "ka__hooks");
    }
    script.push_str(hook_name_completion(shell));
    let _ = std::io::stdout().write_all(script.as_bytes());
    Ok(EXIT_OK)
}

/// Appended to a completion script: `--hook` completes the names of the hooks in effect, asked of
/// `ka-hooks list --names` at completion time (bash and fish; other shells complete event names
/// and flags only).
fn hook_name_completion(shell: clap_complete::Shell) -> &'static str {
    match shell {
        clap_complete::Shell::Bash => {
            r#"
_ka_hooks_with_hook_names() {
    if [[ "${COMP_WORDS[COMP_CWORD-1]}" == "--hook" ]]; then
        COMPREPLY=($(compgen -W "$(ka-hooks list --names 2>/dev/null)" -- "${COMP_WORDS[COMP_CWORD]}"))
        return 0
    fi
    _ka__hooks "$@"
}
complete -F _ka_hooks_with_hook_names -o bashdefault -o default ka-hooks
"#
        }
        clap_complete::Shell::Fish => {
            "complete -c ka-hooks -n '__fish_seen_subcommand_from run' -l hook -x -a \
             '(ka-hooks list --names 2>/dev/null)'\n"
        }
        _ => "",
    }
}
