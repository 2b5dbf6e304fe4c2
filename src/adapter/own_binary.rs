//! The command `install <agent>` registers: this binary's absolute path, then the agent's name.
//!
//! The agent runs it on every hook event, so it names the native executable itself, never a
//! launcher: started through npm's JavaScript shim (`npx ka-hooks`, an `npm install -g`), each
//! event would start Node first. The path is the `ka-hooks` found on `PATH` when that is this very
//! file (a package manager's stable link, `/opt/homebrew/bin/ka-hooks`, which survives an
//! upgrade), else this executable's canonical path. Quoted for the shell the agent runs it with.

use std::path::{Path, PathBuf};

use std::os::unix::fs::PermissionsExt as _;

use super::Agent;

/// `<absolute path of this binary> <agent>`, e.g. `/home/me/.local/bin/ka-hooks claude`.
pub(crate) fn adapter_command(agent: Agent) -> String {
    let path_var = std::env::var_os("PATH").unwrap_or_default();
    let binary = std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .ok()
        .map(|exe| on_path_as(&exe, &path_var).unwrap_or(exe));
    match binary {
        Some(path) => format!(
            "{} {}",
            shell_words::quote(&path.to_string_lossy()),
            agent.command()
        ),
        // The OS cannot tell where this binary is (it was deleted since it started): the name,
        // found on PATH by the agent's shell. `install claude` warns when it is not there.
        None => format!("ka-hooks {}", agent.command()),
    }
}

/// The first `ka-hooks` on `path_var` (absolute entries only), if it resolves to `exe`.
fn on_path_as(exe: &Path, path_var: &std::ffi::OsStr) -> Option<PathBuf> {
    let first = std::env::split_paths(path_var)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join("ka-hooks"))
        .find(|candidate| {
            std::fs::metadata(candidate)
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })?;
    let same = std::fs::canonicalize(&first).is_ok_and(|resolved| resolved == exe);
    same.then_some(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_on_path_to_this_binary_is_preferred_and_a_launcher_is_not() {
        let dir = tempfile::tempdir().expect("tempdir");
        let native = dir.path().join("native");
        std::fs::create_dir(&native).expect("mkdir");
        let exe = native.join("ka-hooks");
        std::fs::write(&exe, "").expect("write");
        let mode = std::os::unix::fs::PermissionsExt::from_mode(0o755);
        std::fs::set_permissions(&exe, mode).expect("chmod");
        let exe = std::fs::canonicalize(&exe).expect("canonicalize");

        let linked = dir.path().join("bin");
        std::fs::create_dir(&linked).expect("mkdir");
        std::os::unix::fs::symlink(&exe, linked.join("ka-hooks")).expect("symlink");
        let launcher = dir.path().join("npm-bin");
        std::fs::create_dir(&launcher).expect("mkdir");
        std::fs::write(launcher.join("ka-hooks"), "#!/usr/bin/env node\n").expect("write");
        std::fs::set_permissions(
            launcher.join("ka-hooks"),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .expect("chmod");

        let path = std::env::join_paths([&linked, &launcher]).expect("PATH");
        assert_eq!(on_path_as(&exe, &path), Some(linked.join("ka-hooks")));
        let path = std::env::join_paths([&launcher, &linked]).expect("PATH");
        assert_eq!(on_path_as(&exe, &path), None, "the launcher comes first");
        assert_eq!(on_path_as(&exe, std::ffi::OsStr::new("relative:")), None);
    }
}
