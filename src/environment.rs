//! Where a hook runs and what it is given besides its payload: the working directory (and where
//! to go when it cannot be entered), the environment variables, the dispatcher's own payload
//! fields, and its sandbox. Read by the dispatch and by the background runner of async hooks.

use crate::config::{Config, Layer};
use crate::event::Event;
use crate::paths::Paths;
use crate::process::{self, HookProcess};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// The dispatcher's fields of the payload: `event` (the dispatcher, not the caller's payload,
/// says which event this is; KA_EVENT agrees), the event's own fields, and `cwd` when absent.
pub(crate) fn fill_payload(
    event: Event,
    payload: &mut Map<String, Value>,
    cwd: impl FnOnce() -> PathBuf,
) {
    payload.insert("event".into(), Value::String(event.as_str().to_owned()));
    fill_event_fields(event, payload);
    payload
        .entry("cwd")
        .or_insert_with(|| Value::String(cwd().to_string_lossy().into_owned()));
}

/// This process's working directory (`/` when it has none).
pub(crate) fn process_cwd() -> PathBuf {
    std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"))
}

/// Fields every hook of `event` may rely on, whatever the host sent. (`stop_hook_active` and
/// `continuations` on stop-like events come from the host, which alone knows the turn: an
/// absent `continuations` reads as 0.)
pub(crate) fn fill_event_fields(event: Event, payload: &mut Map<String, Value>) {
    if event == Event::PostToolUseFailure {
        payload.insert("is_error".into(), Value::Bool(true));
    }
}

/// Where hooks run when the directory they should run in cannot be entered (see
/// [`working_dir`]): what a dispatch knows of them without a system call.
#[derive(Debug, Clone, Default)]
pub(crate) struct Fallbacks {
    pub project_root: Option<PathBuf>,
    /// The user layer's directory; without one, the user's config dir is looked up when needed.
    pub user_dir: Option<PathBuf>,
}

impl Fallbacks {
    pub(crate) fn of(config: &Config) -> Fallbacks {
        Fallbacks {
            project_root: config.project_root.clone(),
            user_dir: config
                .layers
                .iter()
                .find(|l| l.layer == Layer::User)
                .and_then(|l| l.file.parent().map(Path::to_path_buf)),
        }
    }
}

/// The directory hooks run in: `preferred` (the project root, else the payload's `cwd`) when it
/// can be entered; otherwise the first of the project root, the session's root (the working
/// directory of this process: where the agent or `ka-hooks` was started), the user's config dir
/// and `/` that can, with a diagnostic saying which and why. A guard must never fail to start,
/// and so fail open, because the model `cd`'d into a directory it then deleted.
pub(crate) fn working_dir(
    preferred: &Path,
    fallbacks: impl FnOnce() -> Fallbacks,
) -> Result<PathBuf, (PathBuf, String)> {
    let why = match enterable(preferred) {
        Ok(()) => return Ok(preferred.to_path_buf()),
        Err(why) => why,
    };
    let Fallbacks {
        project_root,
        user_dir,
    } = fallbacks();
    let user_dir = user_dir.or_else(|| Paths::from_env().config_dir);
    let candidates = [
        (project_root, "the project root"),
        (std::env::current_dir().ok(), "the session's root"),
        (user_dir, "the user's config dir"),
    ];
    let (dir, which) = candidates
        .into_iter()
        .filter_map(|(dir, which)| Some((dir?, which)))
        .find(|(dir, _)| enterable(dir).is_ok())
        .unwrap_or_else(|| (PathBuf::from("/"), "`/`"));
    let message = format!(
        "the working directory {} cannot be entered ({why}); hooks ran in {which}, {}",
        preferred.display(),
        dir.display()
    );
    Err((dir, message))
}

/// `Ok` when `dir` is a directory this process may enter (search permission). One system call:
/// `dir/.` resolves only through a directory, and `X_OK` on it is search permission.
pub(crate) fn enterable(dir: &Path) -> Result<(), String> {
    use std::os::unix::ffi::OsStrExt;
    if dir.as_os_str().is_empty() {
        // `"" + "/."` would be `.`, this process's own directory.
        return Err("it does not exist".to_owned());
    }
    if dir.as_os_str().as_bytes().contains(&0) {
        return Err("a NUL byte in the path".to_owned());
    }
    match rustix::fs::access(dir.join("."), rustix::fs::Access::EXEC_OK) {
        Ok(()) => Ok(()),
        Err(rustix::io::Errno::NOENT) => Err("it does not exist".to_owned()),
        Err(rustix::io::Errno::NOTDIR) => Err("not a directory".to_owned()),
        Err(err) => Err(std::io::Error::from(err).to_string()),
    }
}

/// The environment a session's hooks run in ([`crate::session::Session::with_hook_env`]).
///
/// Whatever it says, every hook gets ka's own variables (`KA_EVENT`, `KA_PROJECT_DIR`,
/// `CLAUDE_PROJECT_DIR`, `KA_AGENT_TOOL_CALL`, `KA_TOOL`, `KA_HOOK_NAME`) and its entry's `env`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum HookEnv {
    /// The host's whole environment (the default), API keys included.
    #[default]
    Inherit,
    /// Only the host's variables named here, and every `KA_*` variable of the host
    /// (`KA_CONFIG_DIR`, `KA_DATA_DIR`, ...: a hook that runs `ka-hooks` finds the same
    /// configuration). Nothing else is added: [`HookEnv::allow`] adds the basics a shell
    /// script needs.
    Only(Vec<String>),
}

/// What a shell script expects to find: [`HookEnv::allow`] keeps these.
pub const BASIC_VARS: &[&str] = &["PATH", "HOME", "USER", "LOGNAME", "LANG", "TMPDIR", "TERM"];

impl HookEnv {
    /// [`HookEnv::Only`] `names` and the basics ([`BASIC_VARS`]: `PATH`, `HOME`, `USER`,
    /// `LOGNAME`, `LANG`, `TMPDIR`, `TERM`). Use `Only` to leave those out too.
    pub fn allow<S: Into<String>>(names: impl IntoIterator<Item = S>) -> HookEnv {
        let basics = BASIC_VARS.iter().map(|v| (*v).to_owned());
        HookEnv::Only(basics.chain(names.into_iter().map(Into::into)).collect())
    }

    /// The host's variables the hooks get, when not all of them (`None`: inherit).
    pub(crate) fn host_vars(&self) -> Option<Vec<(String, String)>> {
        let HookEnv::Only(names) = self else {
            return None;
        };
        let kept = std::env::vars_os().filter_map(|(name, value)| {
            let (name, value) = (name.into_string().ok()?, value.into_string().ok()?);
            (name.starts_with("KA_") || names.contains(&name)).then_some((name, value))
        });
        Some(kept.collect())
    }
}

/// [`base_env`] under `policy`: with [`HookEnv::Only`], the host's allowed variables come first
/// and `true` says the hooks inherit nothing else.
pub(crate) fn hooks_env(
    policy: &HookEnv,
    event: Event,
    run_dir: &Path,
    tool: Option<&str>,
) -> (Vec<(String, String)>, bool) {
    let own = base_env(event, run_dir, tool);
    match policy.host_vars() {
        None => (own, false),
        Some(mut host) => {
            host.extend(own);
            (host, true)
        }
    }
}

/// The environment every hook of this dispatch shares: `KA_EVENT`, `KA_PROJECT_DIR` (and
/// `CLAUDE_PROJECT_DIR`), `KA_AGENT_TOOL_CALL`, `KA_TOOL`.
pub(crate) fn base_env(event: Event, run_dir: &Path, tool: Option<&str>) -> Vec<(String, String)> {
    let dir = run_dir.to_string_lossy().into_owned();
    let mut env = vec![
        ("KA_EVENT".to_owned(), event.as_str().to_owned()),
        ("KA_PROJECT_DIR".to_owned(), dir.clone()),
        ("CLAUDE_PROJECT_DIR".to_owned(), dir),
        // A hook runs inside an agent's tool call: `ka-hooks trust` refuses there.
        ("KA_AGENT_TOOL_CALL".to_owned(), "1".to_owned()),
    ];
    if let (true, Some(tool)) = (event.is_tool_event(), tool) {
        env.push(("KA_TOOL".to_owned(), tool.to_owned()));
    }
    env
}

/// Run `hook` as its sandbox `plan` says, `{root}` being `root`: confined, unconfined, or not at
/// all (a failure its `on_error` judges: `require_sandbox` where it cannot be confined, or a
/// ruleset that could not be built).
pub(crate) fn run_sandboxed(
    hook: &HookProcess<'_>,
    plan: &crate::sandbox::Plan,
    root: &Path,
) -> process::Finished {
    match crate::sandbox::Run::prepare(plan, root) {
        crate::sandbox::Run::Unconfined => process::run(hook),
        crate::sandbox::Run::Confined(prepared) => process::run_confined(hook, Some(&prepared)),
        crate::sandbox::Run::Refused(why) => {
            process::Finished::spawn_failed(why, std::time::Instant::now())
        }
    }
}

/// The variables set for hook `name`: the dispatch's, its name, its own.
pub(crate) fn hook_env(
    base: &[(String, String)],
    name: &str,
    own: &[(String, String)],
) -> Vec<(String, String)> {
    let mut env = Vec::with_capacity(base.len() + 1 + own.len());
    env.extend_from_slice(base);
    env.push(("KA_HOOK_NAME".to_owned(), name.to_owned()));
    env.extend(own.iter().cloned());
    env
}

/// Where a hook runs: a project layer's hooks in their own `root` (an outer `.ka/` is not the
/// inner one) when it is a directory, the others in `dir`.
pub(crate) fn hook_dir<'a>(root: Option<&'a Path>, dir: &'a Path) -> &'a Path {
    root.filter(|r| r.is_dir()).unwrap_or(dir)
}
