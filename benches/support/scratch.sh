# The scratch set-up that benches/compare.sh times, sourced by it: one `pre_tool_use` hook `true`
# for tool `write` in a user layer (KA_CONFIG_DIR, which needs no trust), an empty git project,
# a ~1 KB tool payload for `ka-hooks run --input`, and Claude Code's PreToolUse payload for a
# Write of the same content, for `ka-hooks claude`.
#
#   scratch_setup DIR   exports KA_CONFIG_DIR and KA_DATA_DIR under DIR, creates DIR/project
#                       (the caller cds there), sets $input and writes DIR/claude.json.
# Returns non-zero when a step fails; the caller reports it.
scratch_setup() {
  local dir="$1"
  export KA_CONFIG_DIR="$dir/ka-config" KA_DATA_DIR="$dir/ka-data"
  unset KA_HOOKS_DISABLE KA_HOOKS_TIMEOUT KA_HOOKS_LOG 2>/dev/null || true
  mkdir -p "$KA_CONFIG_DIR" "$KA_DATA_DIR" "$dir/project" || return 1
  cat >"$KA_CONFIG_DIR/ka.toml" <<'TOML' || return 1
[[hooks]]
name = "trivial"
event = "pre_tool_use"
tool = "write"
command = "true"
TOML
  git init -q "$dir/project" || return 1
  # Without single quotes: callers may single-quote it in a command line.
  input="$(python3 -c '
import json
content = ("fn main() { println!(\"hello\"); }\n" * 40)[:1024]
print(json.dumps({"arguments": {"path": "src/lib.rs", "content": content}}, separators=(",", ":")))
')" || return 1
  case "$input" in *"'"*) return 1 ;; esac
  python3 - "$dir/claude.json" "$dir/project" <<'PY'
import json, sys
content = ("fn main() { println!(\"hello\"); }\n" * 40)[:1024]
path, cwd = sys.argv[1:3]
payload = {
    "session_id": "compare-sh",
    "transcript_path": cwd + "/transcript.jsonl",
    "cwd": cwd,
    "permission_mode": "default",
    "hook_event_name": "PreToolUse",
    "tool_name": "Write",
    "tool_input": {"file_path": cwd + "/src/lib.rs", "content": content},
    "tool_use_id": "toolu_compare",
}
json.dump(payload, open(path, "w"), separators=(",", ":"))
PY
}
