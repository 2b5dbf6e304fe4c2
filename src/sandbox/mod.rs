//! Confining hooks: what a hook may write and whether it may reach the network. A declared
//! profile ([`Declared`]) becomes a [`Plan`] at load and a Landlock ruleset at each run, applied
//! in the child before `sh`; ka itself is never restricted. What it stops: `docs/sandbox.md`.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

#[cfg(target_os = "linux")]
mod landlock;
mod probe;

pub use probe::{probe, Probe};

/// Profiles a `sandbox` key can name.
pub const PROFILES: [&str; 3] = ["project", "read-only", "off"];

/// Placeholder of the hook's project root in `sandbox.write`.
const ROOT: &str = "{root}";
/// Placeholder of the temp dir (`$TMPDIR`, else `/tmp`) in `sandbox.write`.
const TMP: &str = "{tmp}";

/// What a confined hook may do besides reading and executing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rules {
    /// The profile the rules came from (`project`, `read-only`), or `None` for a table.
    pub profile: Option<String>,
    /// Directories (and files) it may write under, as written: absolute, `~/…`, `{root}…`,
    /// `{tmp}…`.
    pub write: Vec<String>,
    /// TCP connect and bind allowed.
    pub network: bool,
}

impl Rules {
    /// The rules of a profile other than `off`.
    pub fn profile(name: &str) -> Option<Rules> {
        let write = match name {
            "project" => vec![ROOT.to_owned(), TMP.to_owned()],
            "read-only" => Vec::new(),
            _ => return None,
        };
        Some(Rules {
            profile: Some(name.to_owned()),
            write,
            network: false,
        })
    }

    /// `project (write {root}, {tmp}; no network)`.
    pub fn describe(&self) -> String {
        let write = if self.write.is_empty() {
            "write nothing".to_owned()
        } else {
            format!("write {}", self.write.join(", "))
        };
        let network = if self.network {
            "network allowed"
        } else {
            "no network"
        };
        let body = format!("{write}; {network}");
        let body = crate::terminal::escape(&body);
        match &self.profile {
            Some(name) => format!("{name} ({body})"),
            None => body.into_owned(),
        }
    }

    /// Whether these rules allow something `other` does not (a write place it lacks, or the
    /// network): looser, as far as a merge across layers goes.
    pub fn looser_than(&self, other: &Rules) -> bool {
        (self.network && !other.network) || self.write.iter().any(|w| !other.write.contains(w))
    }

    /// The write places as paths: `{root}` is `root`, `{tmp}` the temp dir, `~` the home
    /// directory. A place whose placeholder cannot be resolved (no home directory) is left out:
    /// the hook may write less, never more.
    pub fn resolve(&self, root: &Path) -> Resolved {
        let mut write: Vec<PathBuf> = self
            .write
            .iter()
            .filter_map(|w| resolve_place(w, root))
            .collect();
        write.sort();
        write.dedup();
        Resolved {
            write,
            network: self.network,
        }
    }
}

fn resolve_place(place: &str, root: &Path) -> Option<PathBuf> {
    let join = |base: PathBuf, rest: &str| {
        let rest = rest.trim_start_matches('/');
        if rest.is_empty() {
            base
        } else {
            base.join(rest)
        }
    };
    if let Some(rest) = place.strip_prefix(ROOT) {
        Some(join(root.to_path_buf(), rest))
    } else if let Some(rest) = place.strip_prefix(TMP) {
        Some(join(std::env::temp_dir(), rest))
    } else if place == "~" || place.starts_with("~/") {
        Some(join(crate::paths::home_dir()?, &place[1..]))
    } else {
        Some(PathBuf::from(place))
    }
}

/// The rules of one run, paths resolved: what the ruleset is built from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resolved {
    /// The directories the hook may write (absolute; those that exist).
    pub write: Vec<PathBuf>,
    /// TCP connect and bind allowed.
    pub network: bool,
}

/// A `sandbox` key as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Declared {
    /// `sandbox = "off"`: run unconfined.
    Off,
    /// A profile or a table: confine by these rules.
    Rules(Rules),
}

impl Declared {
    /// Read a `sandbox` value: a profile name or a table `{ write = [...], network = bool }`.
    /// The error says what was expected.
    pub(crate) fn from_toml(value: &toml::Value) -> Result<Declared, String> {
        match value {
            toml::Value::String(name) if name == "off" => Ok(Declared::Off),
            toml::Value::String(name) => {
                Rules::profile(name).map(Declared::Rules).ok_or_else(|| {
                    format!(
                        "unknown sandbox profile `{}`; profiles: {}",
                        crate::terminal::escape(name),
                        PROFILES.join(", ")
                    )
                })
            }
            toml::Value::Table(table) => {
                let mut rules = Rules {
                    profile: None,
                    write: Vec::new(),
                    network: false,
                };
                for (key, value) in table {
                    match key.as_str() {
                        "write" => rules.write = write_places(value)?,
                        "network" => {
                            rules.network = value.as_bool().ok_or_else(|| {
                                "`sandbox.network` must be `true` or `false`".to_owned()
                            })?
                        }
                        other => {
                            return Err(format!(
                                "unknown key `sandbox.{}`; keys: write, network",
                                crate::terminal::escape(other)
                            ))
                        }
                    }
                }
                Ok(Declared::Rules(rules))
            }
            _ => Err(
                "expected a profile name (`project`, `read-only`, `off`) or a table \
                 `{ write = [...], network = false }`"
                    .to_owned(),
            ),
        }
    }

    /// How it reads in the trust review, `doctor` and `run -v`.
    pub fn describe(&self) -> String {
        match self {
            Declared::Off => "off".to_owned(),
            Declared::Rules(rules) => rules.describe(),
        }
    }
}

fn write_places(value: &toml::Value) -> Result<Vec<String>, String> {
    let places = value
        .as_array()
        .and_then(|a| {
            a.iter()
                .map(|v| v.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
        })
        .ok_or_else(|| "`sandbox.write` must be an array of paths".to_owned())?;
    for place in &places {
        let anchored = place.starts_with('/')
            || place == "~"
            || place.starts_with("~/")
            || place.starts_with(ROOT)
            || place.starts_with(TMP);
        if !anchored || place.contains('\0') {
            return Err(format!(
                "`{}` in `sandbox.write` is not an absolute path; write it under `{{root}}/`, \
                 `{{tmp}}/`, `~/` or `/`",
                crate::terminal::escape(place)
            ));
        }
    }
    Ok(places.iter().map(|p| normalize_place(p)).collect())
}

/// A write place with `.`, `..` and repeated `/` resolved, so it reads as what it grants:
/// `{tmp}/../../..` is `/`, `{root}/./build/..` is `{root}`. A `..` that climbs out of `{tmp}` or
/// `~` resolves the placeholder first (to the temp dir, the home directory) and goes on from
/// there; one that climbs out of `{root}` stays relative to it (`{root}/../shared`), since the
/// root is known only per project, and it is outside the project all the same.
fn normalize_place(place: &str) -> String {
    let (base, rest) = if let Some(rest) = place.strip_prefix(ROOT) {
        (ROOT, rest)
    } else if let Some(rest) = place.strip_prefix(TMP) {
        (TMP, rest)
    } else if let Some(rest) = place
        .strip_prefix('~')
        .filter(|r| r.is_empty() || r.starts_with('/'))
    {
        ("~", rest)
    } else {
        ("", place)
    };
    let mut parts: Vec<&str> = Vec::new();
    let mut above = 0usize;
    for part in rest.split('/') {
        match part {
            "" | "." => {}
            ".." if parts.pop().is_none() => above += 1,
            ".." => {}
            other => parts.push(other),
        }
    }
    if above == 0 || base.is_empty() {
        // An absolute path cannot climb above `/`.
        let joined = parts.join("/");
        return match (base, joined.is_empty()) {
            ("", true) => "/".to_owned(),
            ("", false) => format!("/{joined}"),
            (base, true) => base.to_owned(),
            (base, false) => format!("{base}/{joined}"),
        };
    }
    let resolved = match base {
        TMP => Some(std::env::temp_dir()),
        "~" => crate::paths::home_dir(),
        _ => None,
    };
    let Some(dir) = resolved else {
        let up = vec![".."; above].join("/");
        let tail = if parts.is_empty() {
            String::new()
        } else {
            format!("/{}", parts.join("/"))
        };
        return format!("{base}/{up}{tail}");
    };
    let mut path = dir.to_string_lossy().into_owned();
    for _ in 0..above {
        path.push_str("/..");
    }
    for part in &parts {
        path.push('/');
        path.push_str(part);
    }
    normalize_place(&path)
}

impl Rules {
    /// The write places outside the hook's project root and the temp dir: what makes a
    /// confined project hook one that can write the user's files.
    pub fn outside_project(&self) -> Vec<&str> {
        self.write
            .iter()
            .map(String::as_str)
            .filter(|w| {
                let inside = |base: &str| {
                    w.strip_prefix(base)
                        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
                        && !w.contains("/..")
                };
                !(inside(ROOT) || inside(TMP))
            })
            .collect()
    }
}

/// What happens to one hook's runs, decided at load from its layer, its `sandbox` key and the
/// user's settings.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Plan {
    /// Runs as before the sandbox existed: a user or managed hook that declares nothing.
    #[default]
    Unconfined,
    /// A hook that would be confined runs unconfined, for this reason (the user's
    /// `sandbox_project_hooks = "off"`, or its own `sandbox = "off"`).
    Off(String),
    /// Confined by these rules; `required`: when they cannot be applied the hook fails instead
    /// of running unconfined (`require_sandbox`).
    Confine {
        /// The rules, as declared.
        rules: Rules,
        /// `require_sandbox`: fail rather than run unconfined.
        required: bool,
    },
    /// Never runs: `require_sandbox` is set and the hook declares `sandbox = "off"`.
    Refused(String),
}

/// The user's (or the managed file's) word on the sandbox: `sandbox_project_hooks` and
/// `require_sandbox`. A project file cannot set either.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Policy {
    /// The default of project and local hooks; `None` is the `project` profile.
    pub project_hooks: Option<Declared>,
    /// Where `project_hooks` was set (for messages).
    pub project_hooks_from: Option<String>,
    /// `require_sandbox = true`: a hook that cannot be confined fails instead of running.
    pub require: bool,
}

impl Serialize for Declared {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.describe())
    }
}

impl Plan {
    /// The plan of a hook of `layer` that declares `declared` (its entry's `sandbox`, else its
    /// file's `[hook_settings] sandbox`), under the user's `policy`.
    pub fn of(gated: bool, declared: Option<&Declared>, policy: &Policy) -> Plan {
        let required = policy.require;
        if gated {
            if policy.project_hooks == Some(Declared::Off) {
                return Plan::Off(format!(
                    "`sandbox_project_hooks = \"off\"` in {}",
                    policy
                        .project_hooks_from
                        .as_deref()
                        .unwrap_or("your user file")
                ));
            }
            match declared {
                Some(Declared::Off) if required => Plan::Refused(
                    "it declares `sandbox = \"off\"` and `require_sandbox = true` is set".into(),
                ),
                Some(Declared::Off) => Plan::Off("it declares `sandbox = \"off\"`".into()),
                Some(Declared::Rules(rules)) => Plan::Confine {
                    rules: rules.clone(),
                    required,
                },
                None => Plan::Confine {
                    rules: match &policy.project_hooks {
                        Some(Declared::Rules(rules)) => rules.clone(),
                        _ => Rules::profile("project").unwrap_or_else(read_only),
                    },
                    required,
                },
            }
        } else {
            match declared {
                Some(Declared::Rules(rules)) => Plan::Confine {
                    rules: rules.clone(),
                    required,
                },
                _ => Plan::Unconfined,
            }
        }
    }

    /// Whether `self` lets the hook do something `before` did not (for the monotone merge).
    pub fn looser_than(&self, before: &Plan) -> bool {
        match (before, self) {
            (Plan::Confine { rules: b, .. }, Plan::Confine { rules: a, .. }) => a.looser_than(b),
            (Plan::Confine { .. }, Plan::Unconfined | Plan::Off(_)) => true,
            _ => false,
        }
    }

    /// The plan as a key's value, whatever the system: `project (write …)`, `off`,
    /// `unconfined`.
    pub fn summary(&self) -> String {
        match self {
            Plan::Unconfined => "unconfined".to_owned(),
            Plan::Off(_) => "off".to_owned(),
            Plan::Refused(_) => "refused".to_owned(),
            Plan::Confine { rules, .. } => rules.describe(),
        }
    }

    /// What the hook's runs are, on this system: `confined: project (write …)`, `unconfined:
    /// …`; `None` for a hook that was never meant to be confined. Only a hook meant to be
    /// confined asks the kernel ([`probe`]): every hook's report says this.
    pub fn describe(&self) -> Option<String> {
        match self {
            Plan::Unconfined => None,
            Plan::Off(why) => Some(format!("unconfined: {why}")),
            Plan::Refused(why) => Some(format!("not run: {why}")),
            Plan::Confine { rules, required } => Some(match probe().cannot_confine(rules) {
                None => format!("confined: {}", rules.describe()),
                Some(why) if *required => {
                    format!("not run: cannot be confined ({why}) and `require_sandbox` is set")
                }
                Some(why) => format!("unconfined: {why} (would be {})", rules.describe()),
            }),
        }
    }
}

fn read_only() -> Rules {
    Rules {
        profile: Some("read-only".to_owned()),
        write: Vec::new(),
        network: false,
    }
}

/// A ruleset built in ka for one run, applied in the child (`Confiner::confine`, from [`Prepared::confiner`]).
pub struct Prepared {
    #[cfg(target_os = "linux")]
    ruleset: std::os::fd::OwnedFd,
}

impl fmt::Debug for Prepared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Prepared")
    }
}

impl Prepared {
    /// What the child needs to confine itself: the ruleset's descriptor number, which it
    /// inherits (a copy, `'static`, for a `pre_exec` closure).
    pub fn confiner(&self) -> Confiner {
        Confiner {
            #[cfg(target_os = "linux")]
            fd: std::os::fd::AsRawFd::as_raw_fd(&self.ruleset),
        }
    }
}

/// Applies a [`Prepared`] ruleset in the hook's child process, between fork and exec.
#[derive(Debug, Clone, Copy)]
pub struct Confiner {
    #[cfg(target_os = "linux")]
    fd: std::os::fd::RawFd,
}

impl Confiner {
    /// A confiner that applies the ruleset of this descriptor (tests: one that is no ruleset).
    #[cfg(all(test, target_os = "linux"))]
    pub(crate) fn of_fd(fd: std::os::fd::RawFd) -> Confiner {
        Confiner { fd }
    }

    /// Restrict the calling process, and every process it starts from now on, with the ruleset
    /// (`prctl(PR_SET_NO_NEW_PRIVS)`, then `landlock_restrict_self`), and mark every
    /// descriptor above 2 close-on-exec. Called in the hook's child between fork and exec,
    /// once its pipes are on 0, 1 and 2 (async-signal-safe: three system calls); never in a
    /// thread of a process that goes on running anything else, which a hook could then signal
    /// or trace.
    pub fn confine(&self) -> std::io::Result<()> {
        #[cfg(target_os = "linux")]
        {
            landlock::restrict_self(self.fd)
        }
        #[cfg(not(target_os = "linux"))]
        {
            Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
        }
    }
}

/// What one run of a hook gets: the ruleset to apply, nothing (it runs unconfined), or why it
/// must not run.
#[derive(Debug)]
pub enum Run {
    /// Run as is.
    Unconfined,
    /// Apply this ruleset in the child before `sh` starts (Linux: elsewhere there is no
    /// Landlock, and no run is confined).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    Confined(Prepared),
    /// It must not run: the text is the failure its report shows, and `on_error` decides.
    Refused(String),
}

impl Run {
    /// Work out one run of a hook with `plan` whose project root is `root`. A ruleset that
    /// cannot be built where Landlock works fails the run (closed), never an unconfined run.
    pub fn prepare(plan: &Plan, root: &Path) -> Run {
        match plan {
            Plan::Unconfined | Plan::Off(_) => Run::Unconfined,
            Plan::Refused(why) => Run::Refused(format!("sandbox: not run: {why}")),
            Plan::Confine { rules, required } => {
                let probe = probe();
                match probe.cannot_confine(rules) {
                    Some(why) if *required => Run::Refused(format!(
                        "sandbox: cannot confine the hook ({why}) and `require_sandbox = true` \
                         is set; run it unconfined only by removing `require_sandbox`"
                    )),
                    Some(_) => Run::Unconfined,
                    None => build(&rules.resolve(root), probe),
                }
            }
        }
    }
}

#[cfg(target_os = "linux")]
fn build(resolved: &Resolved, probe: &Probe) -> Run {
    match landlock::ruleset(resolved, probe) {
        Ok(ruleset) => Run::Confined(Prepared { ruleset }),
        Err(e) => Run::Refused(format!("sandbox: could not build the ruleset: {e}")),
    }
}

#[cfg(not(target_os = "linux"))]
fn build(_: &Resolved, _: &Probe) -> Run {
    Run::Unconfined
}

/// What a failed confined run's report adds: the sandbox may have refused a write or a
/// connection (the hook saw a plain `EACCES`/`EPERM`), and which key would allow it.
pub fn note(plan: &Plan, exit_code: Option<i32>, stderr: &str) -> Option<String> {
    let Plan::Confine { rules, .. } = plan else {
        return None;
    };
    if exit_code == Some(0) || probe().cannot_confine(rules).is_some() {
        return None;
    }
    let denied = stderr.lines().find(|line| {
        line.contains("Permission denied") || line.contains("Operation not permitted")
    })?;
    let place = denied_place(denied);
    let write = match place {
        Some(place) => format!(
            "`sandbox.write = [\"{}\"]` would allow writing there",
            crate::terminal::escape(&place)
        ),
        None => "key `sandbox.write` would allow a write".to_owned(),
    };
    let network = if rules.network {
        String::new()
    } else {
        ", `sandbox.network = true` a connection".to_owned()
    };
    Some(format!(
        "the sandbox may have refused a write or a connection ({}); {write}{network}",
        crate::terminal::escape(denied.trim())
    ))
}

/// The absolute path a denial line names (`sh: 1: cannot create /x/y: Permission denied`), if
/// any: the directory to declare.
fn denied_place(line: &str) -> Option<String> {
    let before = ["Permission denied", "Operation not permitted"]
        .iter()
        .find_map(|phrase| line.find(phrase).map(|at| &line[..at]))?;
    let path = before
        .trim_end()
        .trim_end_matches(':')
        .rsplit(|c: char| c.is_whitespace() || c == '\'' || c == '"' || c == '`')
        .find(|w| !w.is_empty())?;
    if !path.starts_with('/') || path.len() < 2 {
        return None;
    }
    Path::new(path)
        .parent()
        .map(|dir| dir.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests;
