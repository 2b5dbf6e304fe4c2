#!/usr/bin/env bash
# Counts the public API of the library as an agent embeds it (`default-features = false`): the
# item pages of its rustdoc (structs, enums, functions, traits, types, constants, statics,
# macros; not the redirect pages of re-exports), and their members a host can name (fields, variants, inherent methods and associated
# constants; trait implementations left out). Items hidden with `#[doc(hidden)]` have no page.
# Prints one line per module, then the totals; fails on a link that leads to no page (a
# `#[doc(hidden)]` item linked from the docs: rustdoc does not warn about it). `--no-build` counts the docs already built.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${CARGO_TARGET_DIR:-target}
if [ "${1:-}" != "--no-build" ]; then
  rm -rf "$target/doc/ka_hooks"
  RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --no-default-features --quiet
fi
python3 - "$target/doc/ka_hooks" <<'PY'
import os, re, sys
root = sys.argv[1]
kinds = ("struct", "enum", "fn", "trait", "type", "constant", "static", "macro", "union")
modules, items, members = {}, 0, 0
for dirpath, _, files in os.walk(root):
    module = "ka_hooks" + "".join("::" + p for p in os.path.relpath(dirpath, root).split(os.sep) if p != ".")
    for name in files:
        if name == "index.html":
            modules.setdefault(module, [0, 0])
            continue
        if name.split(".")[0] not in kinds:
            continue
        html = open(os.path.join(dirpath, name), encoding="utf-8").read()
        if 'http-equiv="refresh"' in html:
            continue  # a redirect left where a re-exported item is defined
        # Fields and variants, then the inherent impls: up to the first trait impls heading.
        own = len(re.findall(r'id="(?:structfield|variant)\.[^"]*"', html))
        start = html.find('id="implementations-list"')
        if start >= 0:
            end = min((i for i in (html.find(h, start) for h in (
                'id="trait-implementations"', 'id="synthetic-implementations"',
                'id="blanket-implementations"')) if i >= 0), default=len(html))
            own += len(re.findall(r'id="(?:method|associatedconstant)\.[^"]*"', html[start:end]))
        counts = modules.setdefault(module, [0, 0])  # the module's index.html is walked too
        counts[0] += 1
        counts[1] += own
        items += 1
        members += own
for module in sorted(modules):
    print(f"{module}: {modules[module][0]} items, {modules[module][1]} members")
print(f"{len(modules)} modules, {items} items, {members} members, {items + members} in all")

# rustdoc does not warn about a link to a `#[doc(hidden)]` item: it leads nowhere. Check them.
broken = []
for dirpath, _, files in os.walk(root):
    for name in files:
        if not name.endswith(".html"):
            continue
        page = os.path.join(dirpath, name)
        html = open(page, encoding="utf-8").read()
        for href in set(re.findall(r'href="([^"]+)"', html)):
            if re.match(r"[a-z]+:", href) or href.startswith("#"):
                continue
            target, _, fragment = href.partition("#")
            path = os.path.normpath(os.path.join(dirpath, target))
            if not target.endswith(".html") or not path.startswith(os.path.normpath(root) + os.sep):
                continue  # the standard library, the sources, other crates
            if not os.path.exists(path):
                broken.append(f"{os.path.relpath(page, root)}: {href}")
            elif fragment and target.endswith(".html"):
                if f'id="{fragment}"' not in open(path, encoding="utf-8").read():
                    broken.append(f"{os.path.relpath(page, root)}: {href}")
for link in sorted(broken):
    print(f"broken link: {link}")
sys.exit(1 if broken else 0)
PY
