//! Which sessions were told about the layers this configuration skipped (untrusted, stale,
//! removed): the user hears it at the first dispatch of each session, not on every call. A
//! stale guard's block still says why at each call it blocks, and a reload that finds them
//! again (a new `Config`) says it again.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

/// Shared by the configuration's clones (one load, one telling per session).
#[derive(Debug, Clone, Default)]
pub(crate) struct Told {
    sessions: Arc<Mutex<HashSet<String>>>,
}

impl Told {
    /// Whether session `id` (`""`: the dispatches without one) hears it now: true once.
    pub(crate) fn first(&self, id: &str) -> bool {
        let mut sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        sessions.insert(id.to_owned())
    }

    /// Session `id` ended: forget it.
    pub(crate) fn forget(&self, id: &str) {
        let mut sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        sessions.remove(id);
    }
}
