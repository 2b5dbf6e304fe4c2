//! The agents whose hooks can run `ka.toml` hooks: a leaf, read by the tool table, the
//! adapters and the CLI.

/// An agent whose hooks can run `ka.toml` hooks through an adapter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Agent {
    Claude,
    Codex,
    Gemini,
    Copilot,
    Cursor,
    Antigravity,
}

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
    pub const fn command(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini",
            Agent::Copilot => "copilot",
            Agent::Cursor => "cursor",
            Agent::Antigravity => "antigravity",
        }
    }

    /// The agent's name, for messages.
    pub const fn display(self) -> &'static str {
        match self {
            Agent::Claude => "Claude Code",
            Agent::Codex => "Codex CLI",
            Agent::Gemini => "Gemini CLI",
            Agent::Copilot => "GitHub Copilot",
            Agent::Cursor => "Cursor",
            Agent::Antigravity => "Antigravity",
        }
    }
}
