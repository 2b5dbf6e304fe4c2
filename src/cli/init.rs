//! `ka-hooks init`: a commented starter `.ka/ka.toml`, a `.gitignore` and an example case.

use std::io::Write;
use std::path::Path;

use super::EXIT_OK;
use crate::config::LoadOptions;
use crate::paths;
use crate::trust::TrustStore;

const STARTER: &str = include_str!("../starter.toml");

pub fn init(opts: &LoadOptions, nested: bool) -> Result<u8, String> {
    let start = paths::absolute(&opts.start_dir);
    if let Some(outer) = start.parent().and_then(paths::find_project_root) {
        if !nested {
            return Err(format!(
                "{} already has `.ka/`: its hooks apply here too. Add hooks to {}, or pass \
                 --nested to add a second layer in this directory (both then run)",
                crate::terminal::escape_path(&outer),
                crate::terminal::escape_path(
                    &outer.join(paths::PROJECT_DIR).join(paths::CONFIG_FILE)
                )
            ));
        }
    }
    let dir = start.join(paths::PROJECT_DIR);
    let file = dir.join(paths::CONFIG_FILE);
    if file.exists() {
        return Err(format!(
            "{} already exists; not overwriting it (edit it, then `ka-hooks trust`)",
            file.display()
        ));
    }
    refuse_over_a_removed_file(opts, &start)?;
    std::fs::create_dir_all(&dir)
        .map_err(|e| format!("failed to create {}: {e}", dir.display()))?;
    write_new(&file, STARTER)?;
    let cases = start.join(crate::golden::TESTS_DIR);
    let example = cases.join("example.toml");
    if !example.exists() {
        std::fs::create_dir_all(&cases)
            .map_err(|e| format!("failed to create {}: {e}", cases.display()))?;
        write_new(&example, crate::golden::STARTER_CASES)?;
    }
    let ignore = dir.join(".gitignore");
    if !ignore.exists() {
        write_new(
            &ignore,
            "# personal overrides stay out of the repository\nka.local.toml\n",
        )?;
    }
    // The starter defines no active hook, so trusting it exposes nothing; the user's first edit
    // makes it stale, and that edit is what `ka-hooks trust` then reviews (as a diff).
    if let Some(data_dir) = &opts.paths.data_dir {
        crate::trust::keep_reviewed(data_dir, STARTER.as_bytes())
            .map_err(|e| format!("failed to write {}: {e}", data_dir.display()))?;
    }
    TrustStore::update(opts.paths.trust_file().as_deref(), |store| {
        store.allow(
            &start,
            ".ka/ka.toml",
            crate::trust::TrustRecord::new(STARTER.as_bytes(), Vec::new()),
        );
        (true, ())
    })
    .map_err(|e| e.to_string())?;
    outln!("wrote {}", file.display());
    outln!("wrote {}", example.display());
    outln!(
        "next: uncomment or add hooks, review and trust them with `ka-hooks trust`, \
         then check them with `ka-hooks test`"
    );
    Ok(EXIT_OK)
}

/// A trusted file that was removed keeps its guards failing closed until a person decides; a
/// starter written and trusted in its place would end that. Inside an agent's tool call, `init`
/// refuses where the trust store still holds a record of the file.
fn refuse_over_a_removed_file(opts: &LoadOptions, root: &Path) -> Result<(), String> {
    let store = TrustStore::load(opts.paths.trust_file().as_deref()).map_err(|e| e.to_string())?;
    if store.record(root, ".ka/ka.toml").is_none() {
        return Ok(());
    }
    match crate::review::refusal_inside_agent("replace a removed, trusted `.ka/ka.toml`") {
        Some(refusal) => Err(refusal),
        None => Ok(()),
    }
}

fn write_new(path: &Path, content: &str) -> Result<(), String> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| format!("failed to create {}: {e}", path.display()))?;
    f.write_all(content.as_bytes())
        .map_err(|e| format!("failed to write {}: {e}", path.display()))
}
