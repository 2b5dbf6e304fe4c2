//! Where the files are. The only module that reads `HOME`/XDG and the `KA_*` environment
//! variables, so tests can point everything at temp dirs.
//!
//! On Linux the user's directories are worked out here (the XDG rules of the `directories` crate,
//! which other systems still use) so that no lookup goes through NSS: the release binary may be
//! linked statically (static-pie, `benches/README.md`), and static glibc serves `getpwuid` by
//! loading NSS modules at run time. With `HOME` unset, the home is this user's line of
//! `/etc/passwd`; a user known only to another NSS source (LDAP, sssd, systemd-homed) then has no
//! home, hence no user layer and no trust store, unless `HOME` or `KA_CONFIG_DIR` / `KA_DATA_DIR`
//! are set.

use std::path::{Path, PathBuf};

/// File name of every layer's config, and of the project folder that marks a root.
pub const CONFIG_FILE: &str = "ka.toml";
pub const LOCAL_FILE: &str = "ka.local.toml";
pub const PROJECT_DIR: &str = ".ka";

/// The directories a load reads from, resolved once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paths {
    /// Directory of the user layer (`$KA_CONFIG_DIR`, else `~/.config/ka` on Linux).
    pub config_dir: Option<PathBuf>,
    /// Directory of the trust store (`$KA_DATA_DIR`, else `~/.local/share/ka` on Linux).
    pub data_dir: Option<PathBuf>,
    /// Directory of the managed layer (`$KA_MANAGED_DIR`, else `/etc/ka`); `None` in
    /// [`Paths::new`], so tests and embedders never read the machine's.
    pub managed_dir: Option<PathBuf>,
    /// `KA_HOOKS_DISABLE` is set to a true value.
    pub disabled_by_env: bool,
}

impl Paths {
    /// Resolve from the environment: `KA_CONFIG_DIR`, `KA_DATA_DIR`, `KA_HOOKS_DISABLE`,
    /// falling back to the OS's directories (on Linux `$XDG_CONFIG_HOME` or `~/.config`, and
    /// `$XDG_DATA_HOME` or `~/.local/share`).
    pub fn from_env() -> Paths {
        let config_dir =
            env_path("KA_CONFIG_DIR").or_else(|| os::config_dir().map(|d| d.join("ka")));
        let data_dir = env_path("KA_DATA_DIR").or_else(|| os::data_dir().map(|d| d.join("ka")));
        let disabled_by_env = std::env::var("KA_HOOKS_DISABLE")
            .map(|v| is_truthy(&v))
            .unwrap_or(false);
        let managed_dir = env_path("KA_MANAGED_DIR").or_else(|| Some(PathBuf::from("/etc/ka")));
        Paths {
            config_dir,
            data_dir,
            managed_dir,
            disabled_by_env,
        }
    }

    /// Explicit directories, for tests and embedders that manage their own.
    pub fn new(config_dir: impl Into<PathBuf>, data_dir: impl Into<PathBuf>) -> Paths {
        Paths {
            config_dir: Some(config_dir.into()),
            data_dir: Some(data_dir.into()),
            managed_dir: None,
            disabled_by_env: false,
        }
    }

    /// The managed layer's file.
    pub fn managed_file(&self) -> Option<PathBuf> {
        self.managed_dir.as_ref().map(|d| d.join(CONFIG_FILE))
    }

    /// The user layer's file.
    pub fn user_file(&self) -> Option<PathBuf> {
        self.config_dir.as_ref().map(|d| d.join(CONFIG_FILE))
    }

    /// The trust store's file.
    pub fn trust_file(&self) -> Option<PathBuf> {
        self.data_dir.as_ref().map(|d| d.join("trust.json"))
    }
}

/// `KA_HOOKS_*` environment overrides of `[hook_settings]`, for figment.
/// `KA_HOOKS_DISABLE` is handled by [`Paths::disabled_by_env`], since `1` must mean true.
pub fn settings_env() -> figment::providers::Env {
    figment::providers::Env::prefixed("KA_HOOKS_").only(&["timeout", "log"])
}

/// Claude Code's user config dir: `$CLAUDE_CONFIG_DIR` (Claude Code's own override), else
/// `~/.claude`.
pub fn claude_config_dir() -> Option<PathBuf> {
    env_path("CLAUDE_CONFIG_DIR").or_else(|| home_dir().map(|home| home.join(".claude")))
}

/// Whether any `KA_HOOKS_*` override of [`settings_env`] is set.
pub fn settings_env_is_set() -> bool {
    ["KA_HOOKS_TIMEOUT", "KA_HOOKS_LOG"]
        .iter()
        .any(|v| std::env::var_os(v).is_some())
}

fn env_path(var: &str) -> Option<PathBuf> {
    std::env::var_os(var)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

fn is_truthy(v: &str) -> bool {
    matches!(
        v.trim().to_ascii_lowercase().as_str(),
        "1" | "true" | "yes" | "on"
    )
}

/// Environment variables that say this process runs inside an agent's tool call, with the agent
/// that sets each: Claude Code sets `CLAUDECODE=1` in the shell of its Bash tool (added in
/// v0.2.47, anthropics/claude-code#531); Gemini CLI sets `GEMINI_CLI=1` in its shell tool; Codex
/// sets `CODEX_SANDBOX` / `CODEX_SANDBOX_NETWORK_DISABLED` for the commands it runs (openai/codex
/// AGENTS.md); ka's host sets `KA_AGENT_TOOL_CALL=1` for its tools, and ka-hooks sets it for every
/// hook it runs.
pub const AGENT_MARKERS: &[(&str, &str)] = &[
    ("KA_AGENT_TOOL_CALL", "ka"),
    ("CLAUDECODE", "Claude Code"),
    ("GEMINI_CLI", "Gemini CLI"),
    ("CODEX_SANDBOX", "Codex"),
    ("CODEX_SANDBOX_NETWORK_DISABLED", "Codex"),
];

/// The agent whose tool call this process runs in, with the variable that says so.
pub fn inside_agent_tool_call() -> Option<(&'static str, &'static str)> {
    AGENT_MARKERS
        .iter()
        .find(|(var, _)| std::env::var_os(var).is_some_and(|v| !v.is_empty() && v != "0"))
        .copied()
}

/// The project root: the nearest ancestor of `start` (itself included) holding a `.ka/` folder.
pub fn find_project_root(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .find(|dir| dir.join(PROJECT_DIR).is_dir())
        .map(Path::to_path_buf)
}

/// An absolute form of `path` without requiring it to exist (canonical when it does).
pub fn absolute(path: &Path) -> PathBuf {
    path.canonicalize()
        .or_else(|_| std::path::absolute(path))
        .unwrap_or_else(|_| path.to_path_buf())
}

/// The user's home directory (for `~` in `trusted_roots`).
pub fn home_dir() -> Option<PathBuf> {
    os::home_dir()
}

#[cfg(target_os = "linux")]
mod os {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    use std::path::PathBuf;

    /// `$HOME` when set and not empty (as `directories` reads it), else this user's `/etc/passwd`
    /// entry.
    pub fn home_dir() -> Option<PathBuf> {
        if let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
            return Some(PathBuf::from(home));
        }
        // SAFETY: getuid has no preconditions and cannot fail.
        let uid = unsafe { libc::getuid() };
        passwd_home(&std::fs::read("/etc/passwd").ok()?, uid)
    }

    pub fn config_dir() -> Option<PathBuf> {
        xdg("XDG_CONFIG_HOME").or_else(|| home_dir().map(|h| h.join(".config")))
    }

    pub fn data_dir() -> Option<PathBuf> {
        xdg("XDG_DATA_HOME").or_else(|| home_dir().map(|h| h.join(".local/share")))
    }

    /// An XDG base directory variable, used only when absolute (the XDG spec says to ignore a
    /// relative one).
    fn xdg(var: &str) -> Option<PathBuf> {
        std::env::var_os(var)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    }

    /// The home directory (sixth field) of the first `/etc/passwd` line whose uid (third field)
    /// is `uid`, if it is not empty.
    pub(super) fn passwd_home(passwd: &[u8], uid: libc::uid_t) -> Option<PathBuf> {
        let uid = uid.to_string();
        passwd.split(|&b| b == b'\n').find_map(|line| {
            let mut fields = line.split(|&b| b == b':');
            let uid_field = fields.nth(2)?;
            let home = fields.nth(2)?;
            (uid_field == uid.as_bytes() && !home.is_empty())
                .then(|| PathBuf::from(OsStr::from_bytes(home)))
        })
    }
}

#[cfg(not(target_os = "linux"))]
mod os {
    use std::path::PathBuf;

    pub fn home_dir() -> Option<PathBuf> {
        directories::BaseDirs::new().map(|b| b.home_dir().to_path_buf())
    }

    pub fn config_dir() -> Option<PathBuf> {
        directories::BaseDirs::new().map(|b| b.config_dir().to_path_buf())
    }

    pub fn data_dir() -> Option<PathBuf> {
        directories::BaseDirs::new().map(|b| b.data_dir().to_path_buf())
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::os::passwd_home;
    use std::path::PathBuf;

    #[test]
    fn passwd_home_is_the_sixth_field_of_the_line_with_the_uid() {
        let passwd = b"root:x:0:0:root:/root:/bin/bash\n\
            daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n\
            ann:x:1000:1000:Ann,,,:/home/ann:/bin/bash\n\
            nohome:x:1001:1001:::/bin/sh\n";
        assert_eq!(passwd_home(passwd, 0), Some(PathBuf::from("/root")));
        assert_eq!(passwd_home(passwd, 1000), Some(PathBuf::from("/home/ann")));
        // Not `10` nor `100`: the whole field is compared.
        assert_eq!(passwd_home(passwd, 10), None);
        assert_eq!(passwd_home(passwd, 1001), None);
        assert_eq!(passwd_home(b"", 0), None);
        assert_eq!(passwd_home(b"broken line\n:::\n", 0), None);
    }
}
