//! Whether this system can confine hooks: the Landlock ABI, probed once per process.

use std::sync::OnceLock;

use serde::Serialize;

use super::Rules;

/// Set to `none`, this variable makes the probe report no Landlock, whatever the kernel has:
/// tests use it to check that `require_sandbox` fails closed. It only ever removes the sandbox,
/// never adds one, and `doctor`, `trust` and every report say the hooks run unconfined.
pub const PROBE_VAR: &str = "KA_HOOKS_SANDBOX_PROBE";

/// What the probe found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Probe {
    /// The Landlock ABI version (0: none).
    pub abi: i32,
    /// Why there is none, when there is none.
    pub missing: Option<String>,
}

/// Landlock ABI from which TCP connect and bind can be restricted.
pub const NETWORK_ABI: i32 = 4;

impl Probe {
    /// Why `rules` cannot be applied in full here, if they cannot.
    pub fn cannot_confine(&self, rules: &Rules) -> Option<String> {
        if let Some(missing) = &self.missing {
            return Some(missing.clone());
        }
        (!rules.network && self.abi < NETWORK_ABI).then(|| {
            format!(
                "Landlock ABI {} cannot restrict the network (needs ABI {NETWORK_ABI}, Linux 6.7)",
                self.abi
            )
        })
    }

    /// One line for `doctor` and `trust`.
    pub fn describe(&self) -> String {
        match &self.missing {
            Some(why) => format!("hooks run unconfined: {why}"),
            None if self.abi < NETWORK_ABI => format!(
                "Landlock ABI {}: writes confined, the network not (needs ABI {NETWORK_ABI})",
                self.abi
            ),
            None => format!("Landlock ABI {}: writes and TCP confined", self.abi),
        }
    }
}

/// The probe of this process (done on first use).
pub fn probe() -> &'static Probe {
    static PROBE: OnceLock<Probe> = OnceLock::new();
    PROBE.get_or_init(|| {
        let forced = std::env::var(PROBE_VAR).ok();
        if forced.as_deref().map(str::trim) == Some("none") {
            return Probe {
                abi: 0,
                missing: Some(format!("no Landlock ({PROBE_VAR}=none)")),
            };
        }
        probe_kernel()
    })
}

#[cfg(target_os = "linux")]
fn probe_kernel() -> Probe {
    match super::landlock::abi() {
        Ok(abi) => Probe { abi, missing: None },
        Err(why) => Probe {
            abi: 0,
            missing: Some(why),
        },
    }
}

#[cfg(not(target_os = "linux"))]
fn probe_kernel() -> Probe {
    Probe {
        abi: 0,
        missing: Some(format!(
            "no sandbox on {} yet (Landlock is Linux only; see docs/sandbox.md)",
            std::env::consts::OS
        )),
    }
}
