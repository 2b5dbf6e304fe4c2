//! The agents whose hooks can run `ka.toml` hooks, by name: read by the tool table, the
//! adapters and the CLI. Everything else about an agent is its entry of the adapter table
//! ([`crate::adapter::table`]).

/// An agent whose hooks can run `ka.toml` hooks through an adapter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
// A library build reads only the hook-file agents' rows of the tool table (`tool = "create"`).
#[cfg_attr(not(feature = "cli"), allow(dead_code))]
pub enum Agent {
    Claude,
    Codex,
    Gemini,
    Copilot,
    Cursor,
    Antigravity,
}

#[cfg(feature = "cli")]
impl Agent {
    pub const ALL: [Agent; 6] = [
        Agent::Claude,
        Agent::Codex,
        Agent::Gemini,
        Agent::Copilot,
        Agent::Cursor,
        Agent::Antigravity,
    ];

    /// The `ka-hooks` subcommand of the adapter.
    pub fn command(self) -> &'static str {
        self.adapter().command()
    }

    /// The agent's name, for messages.
    pub fn display(self) -> &'static str {
        self.adapter().display()
    }
}
