//! Where the files are. The only module that reads `HOME`/XDG and the `KA_*` environment
//! variables, so tests can point everything at temp dirs.
//!
//! `KA_CONFIG_DIR` and `KA_DATA_DIR` come first. Otherwise the user's directories come from the
//! `directories` crate, on every OS: on Linux `$XDG_CONFIG_HOME` (used only when
//! absolute) or `~/.config`, and `$XDG_DATA_HOME` or `~/.local/share`; on macOS both are
//! `~/Library/Application Support`. The home is `$HOME` when set and not empty; otherwise
//! `directories` asks the C library (`getpwuid_r`): glibc through NSS (so LDAP or sssd users have
//! one too), a static musl build from `/etc/passwd`. Without any home there is no user layer and
//! no trust store unless `KA_CONFIG_DIR` / `KA_DATA_DIR` are set.

use std::path::{Path, PathBuf};

/// File name of every layer's config, and of the project folder that marks a root.
pub const CONFIG_FILE: &str = "ka.toml";
/// The local layer's file name, in the project's `.ka/`.
pub const LOCAL_FILE: &str = "ka.local.toml";
/// The directory of a project's layer files.
pub const PROJECT_DIR: &str = ".ka";

/// The directories a load reads from, resolved once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paths {
    /// Directory of the user layer (`$KA_CONFIG_DIR`, else `~/.config/ka` on Linux,
    /// `~/Library/Application Support/ka` on macOS).
    pub config_dir: Option<PathBuf>,
    /// Directory of the trust store (`$KA_DATA_DIR`, else `~/.local/share/ka` on Linux,
    /// `~/Library/Application Support/ka` on macOS).
    pub data_dir: Option<PathBuf>,
    /// Directory of the managed layer (`$KA_MANAGED_DIR`, else `/etc/ka`), in [`Paths::from_env`]
    /// and [`Paths::new`] alike: the one layer meant to be impossible to switch off. `None` only
    /// in [`Paths::isolated`], which a host (or a test) calls by name to opt out.
    pub managed_dir: Option<PathBuf>,
    /// `KA_HOOKS_DISABLE` is set to a true value.
    pub disabled_by_env: bool,
}

impl Paths {
    /// Resolve from the environment: `KA_CONFIG_DIR`, `KA_DATA_DIR`, `KA_HOOKS_DISABLE`,
    /// falling back to the OS's directories (see the module doc).
    pub fn from_env() -> Paths {
        // Asked only when an override is missing, and then once.
        let base = std::cell::OnceCell::new();
        let base = || base.get_or_init(base_dirs).as_ref();
        let config_dir =
            env_path("KA_CONFIG_DIR").or_else(|| base().map(|b| b.config_dir().join("ka")));
        let data_dir = env_path("KA_DATA_DIR").or_else(|| base().map(|b| b.data_dir().join("ka")));
        let disabled_by_env = std::env::var("KA_HOOKS_DISABLE")
            .map(|v| is_truthy(&v))
            .unwrap_or(false);
        let managed_dir = managed_dir();
        Paths {
            config_dir,
            data_dir,
            managed_dir,
            disabled_by_env,
        }
    }

    /// Explicit user and data directories, for embedders that manage their own. The managed
    /// layer stays in (`$KA_MANAGED_DIR`, else `/etc/ka`): an administrator's hooks hold in every
    /// host. Opt out by name with [`Paths::isolated`].
    pub fn new(config_dir: impl Into<PathBuf>, data_dir: impl Into<PathBuf>) -> Paths {
        Paths {
            managed_dir: managed_dir(),
            ..Paths::isolated(config_dir, data_dir)
        }
    }

    /// Explicit directories and **no managed layer**: the machine's `/etc/ka` (and
    /// `$KA_MANAGED_DIR`) is not read. For tests and sandboxes that must not see the machine's
    /// configuration (the pattern of gix's `open::Options::isolated()`); a host that ships to
    /// users wants [`Paths::new`] or [`Paths::from_env`].
    pub fn isolated(config_dir: impl Into<PathBuf>, data_dir: impl Into<PathBuf>) -> Paths {
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
pub(crate) fn settings_env() -> figment::providers::Env {
    figment::providers::Env::prefixed("KA_HOOKS_").only(&["timeout", "log"])
}

/// Claude Code's user config dir: `$CLAUDE_CONFIG_DIR` (Claude Code's own override), else
/// `~/.claude`.
pub(crate) fn claude_config_dir() -> Option<PathBuf> {
    env_path("CLAUDE_CONFIG_DIR").or_else(|| home_dir().map(|home| home.join(".claude")))
}

/// The files through which the agents run ka-hooks in the project at `root` (their settings or
/// hook files): an edit there can drop the call to ka-hooks, and every guard with it, so the
/// built-in ask covers them (`protect.rs`). `.github/hooks` is Copilot's folder.
pub(crate) fn agent_hook_files(root: &Path) -> Vec<PathBuf> {
    [
        ".claude/settings.json",
        ".claude/settings.local.json",
        ".codex/hooks.json",
        // Codex reads hooks from `[hooks]` here too, and its `features.codex_hooks` switch.
        ".codex/config.toml",
        ".gemini/settings.json",
        ".github/hooks",
        // Copilot's `disableAllHooks` there switches every hook off.
        ".github/copilot/settings.json",
        ".github/copilot/settings.local.json",
        ".cursor/hooks.json",
        ".agents/hooks.json",
    ]
    .iter()
    .map(|rel| root.join(rel))
    .collect()
}

/// The user's files through which the agents run ka-hooks (see [`agent_hook_files`]).
pub(crate) fn user_agent_hook_files() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = claude_config_dir()
        .map(|dir| dir.join("settings.json"))
        .into_iter()
        .collect();
    if let Some(codex) = codex_home() {
        out.extend(["hooks.json", "config.toml"].map(|f| codex.join(f)));
    }
    if let Some(home) = home_dir() {
        let rels = [
            ".gemini/settings.json",
            ".gemini/config/hooks.json",
            ".cursor/hooks.json",
        ];
        out.extend(rels.iter().map(|rel| home.join(rel)));
    }
    if let Some(dir) = copilot_home() {
        out.extend([dir.join("hooks"), dir.join("settings.json")]);
    }
    out
}

/// Whether any `KA_HOOKS_*` override of [`settings_env`] is set.
pub(crate) fn settings_env_is_set() -> bool {
    ["KA_HOOKS_TIMEOUT", "KA_HOOKS_LOG"]
        .iter()
        .any(|v| std::env::var_os(v).is_some())
}

/// The value of one `KA_HOOKS_*` override of [`settings_env`] as set, for an error that names
/// it.
pub(crate) fn settings_env_value(var: &str) -> Option<String> {
    std::env::var_os(var).map(|v| v.to_string_lossy().into_owned())
}

/// The managed layer's directory: `$KA_MANAGED_DIR`, else `/etc/ka`.
fn managed_dir() -> Option<PathBuf> {
    env_path("KA_MANAGED_DIR").or_else(|| Some(PathBuf::from("/etc/ka")))
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
///
/// The agents of the hook-file adapters (the research note `agents-2026-12.md`, §9):
/// - Copilot CLI sets `COPILOT_CLI=1` for its subprocesses ("Git hooks can detect Copilot CLI
///   subprocesses via the COPILOT_CLI=1 environment variable", github/copilot-cli
///   `changelog.md` @ 9532bdac) and `COPILOT_AGENT_SESSION_ID` in shell commands (same file);
///   VS Code sets `COPILOT_AGENT=1` in agent terminals (microsoft/vscode PR #316267).
/// - Cursor sets `CURSOR_AGENT` in the cursor-agent CLI and its sandboxes, and
///   `CURSOR_EXTENSION_HOST_ROLE=agent-exec` for the IDE agent (secondary: cli/cli
///   `internal/agents/detect.go`, which notes there are no first-party docs). Only the value
///   `agent-exec` of the latter marks an agent (see [`AGENT_VALUE_MARKERS`]).
/// - Antigravity sets `ANTIGRAVITY_AGENT` (secondary, same source).
pub(crate) const AGENT_MARKERS: &[(&str, &str)] = &[
    ("KA_AGENT_TOOL_CALL", "ka"),
    ("CLAUDECODE", "Claude Code"),
    ("GEMINI_CLI", "Gemini CLI"),
    ("CODEX_SANDBOX", "Codex"),
    ("CODEX_SANDBOX_NETWORK_DISABLED", "Codex"),
    ("COPILOT_CLI", "GitHub Copilot CLI"),
    ("COPILOT_AGENT_SESSION_ID", "GitHub Copilot CLI"),
    ("COPILOT_AGENT", "GitHub Copilot in VS Code"),
    ("CURSOR_AGENT", "Cursor"),
    ("ANTIGRAVITY_AGENT", "Antigravity"),
];

/// Markers that say so only with one value: `(variable, value, agent)`.
pub(crate) const AGENT_VALUE_MARKERS: &[(&str, &str, &str)] =
    &[("CURSOR_EXTENSION_HOST_ROLE", "agent-exec", "Cursor")];

/// Codex's home: `$CODEX_HOME`, else `~/.codex` (its user `hooks.json` and `config.toml`).
pub(crate) fn codex_home() -> Option<PathBuf> {
    env_path("CODEX_HOME").or_else(|| home_dir().map(|home| home.join(".codex")))
}

/// Copilot's home: `$COPILOT_HOME`, else `~/.copilot` (its user hooks are in `hooks/`; Copilot
/// hooks reference, "Hooks locations").
pub(crate) fn copilot_home() -> Option<PathBuf> {
    env_path("COPILOT_HOME").or_else(|| home_dir().map(|home| home.join(".copilot")))
}

/// The project root: the nearest ancestor of `start` (itself included) holding a `.ka/` folder.
#[cfg(feature = "cli")]
pub(crate) fn find_project_root(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .find(|dir| dir.join(PROJECT_DIR).is_dir())
        .map(Path::to_path_buf)
}

/// An absolute form of `path` without requiring it to exist: canonical as far as it exists. On
/// Linux [`crate::resolve::real`], a `lstat` per component, where `realpath` takes a `readlink`
/// per component and, in musl, an allocation of its own; elsewhere `realpath`, which on macOS
/// also gives each name's case as stored (a case-insensitive file system finds `~/code/App` for
/// `~/Code/app`, and the trust store and ka's own files are keyed by the stored spelling).
pub(crate) fn absolute(path: &Path) -> PathBuf {
    if cfg!(target_os = "linux") {
        let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        return crate::resolve::real(&absolute);
    }
    path.canonicalize()
        .or_else(|_| std::path::absolute(path))
        .unwrap_or_else(|_| path.to_path_buf())
}

/// The user's home directory (for `~` in `trusted_roots`).
pub(crate) fn home_dir() -> Option<PathBuf> {
    // `$HOME` when set and not empty, as `directories` reads it, without computing every other
    // directory of the user for it (this runs several times per process).
    std::env::var_os("HOME")
        .filter(|home| !home.is_empty())
        .map(PathBuf::from)
        .or_else(|| base_dirs().map(|b| b.home_dir().to_path_buf()))
}

/// The OS's directories for this user (`None` without a home directory).
fn base_dirs() -> Option<directories::BaseDirs> {
    directories::BaseDirs::new()
}
