//! ka-hooks: the hooks system of the ka coding agent.
pub mod action;
pub mod audit;
pub mod cli;
pub mod config;
pub mod dispatch;
pub mod event;
pub mod outcome;
pub mod paths;
pub mod process;
pub mod trust;

pub use config::{Config, ConfigError, Hook, Layer, LoadOptions};
pub use dispatch::Request;
pub use event::{Event, UnknownEvent};
pub use outcome::Outcome;
