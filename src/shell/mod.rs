//! Reading a shell command line the way `sh` and `bash` read it, without running it.
//!
//! `Bash(rm:*)` must see `rm` in `command rm`, `\rm`, `/bin/rm`, `sudo -u x rm`, `$(rm …)`,
//! `bash -c 'rm …'` and `git -C . push` as in `git push`: matching the text as written misses
//! almost every everyday spelling. So a command line is first lexed by the shell's own
//! token rules ([`lexer`]: quotes, escapes, `$'…'`, here-documents, substitutions nested at any
//! depth), then cut into simple commands with wrappers peeled off ([`commands`]). Everything that
//! splits commands in ka-hooks (the `if` rules, the trust coverage of scripts) reads them here.
//!
//! What cannot be known without running the shell is said, not guessed: a word holding `$x`,
//! `$(…)` or a glob is `dynamic`, and [`CommandLine::unknown`] gives the reasons a part could
//! not be read (an unterminated quote, `eval "$x"`, a shell reading standard input). Callers
//! fail closed on them (a guard's `if` then matches).
//!
//! Why not a parser crate: `brush-parser` (well kept) pulls a PEG generator, `bon`, `cached`,
//! `tracing` and `insta` into every build of a binary whose start-up is measured in page faults;
//! `yash-syntax` is async; `conch-parser` has not been released since 2017. None of them peels
//! wrappers or reads `sh -c` strings, which is most of the work here.

pub mod commands;
pub mod lexer;

pub use commands::{simple_commands, simple_commands_of, CommandLine};
pub use lexer::{tokens, Token, Word};
#[cfg(feature = "cli")] // the property tests' (tests/it)
pub use {commands::SimpleCommand, lexer::LexError};

#[cfg(test)]
mod tests;
