//! Every integration test, in one test binary (just's pattern): a change relinks one binary, not
//! one per file. Each module is one concern (the file it was before); `support` is what they
//! share. Run one with `cargo nextest run -E 'test(/^doctor::/)'` (or `cargo test --test it
//! doctor::`); an `#[ignore]`d one (the slow `readme::` and musl tests) also needs
//! `--run-ignored only`.

mod support;

mod adapter_agents;
mod adapter_antigravity;
mod adapter_claude;
mod adapter_copilot;
mod adapter_copilot_cli;
mod adapter_corpus;
mod adapter_corpus_agents;
mod adapter_cursor;
mod adapter_divergences;
mod adapter_hookfiles;
mod adapter_import;
mod adapter_import_faithful;
mod adapter_install;
mod adapter_keep_going;
mod adapter_project_root;
mod adapter_toy;
mod agent_example;
mod async_hooks;
mod audit;
mod backstop;
mod broken_guard_blocks;
mod cancel;
mod check_gate;
mod cli;
mod cli_claude_settings;
mod cli_events;
mod cli_run;
mod config;
mod demo;
mod dispatch;
mod docs;
mod doctor;
mod doctor_agents;
mod examples;
mod fail_open;
mod file_identity;
mod filters;
mod first_hour;
mod golden;
mod guards_hold;
mod hardening;
mod host_env;
mod host_reload;
mod host_tools;
mod host_trust;
mod interrupt;
mod keep_going;
mod layers_fail_closed;
mod layers_monotone;
mod library_counts;
mod main_thread;
mod matching_files;
mod messages_true;
mod module_graph;
mod next;
mod payloads;
mod permission_request;
mod pre_approval;
mod process;
mod project_settings_stay;
mod proptest_parsers;
mod readme;
mod readme_events;
mod rewrites_judged;
mod sandbox;
mod schema;
mod session;
#[cfg(feature = "tokio")]
mod session_async;
mod shell_rules;
mod shell_sandbox;
mod terminal_layout;
mod trust_coverage;
mod trust_exact;
mod trust_moves;
mod trust_reviewed_bytes;
mod values_fail_closed;
mod watchdog;
mod weakening;
