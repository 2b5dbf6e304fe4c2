//! ka-hooks: the hooks system of the ka coding agent.
pub mod action;
pub mod event;
pub mod process;

pub use event::{Event, UnknownEvent};
