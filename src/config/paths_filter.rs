//! `paths = ["src/**/*.rs", "!src/generated/**"]`: which files a tool call must touch for a hook
//! to run. Checked in-process before anything is spawned, so a formatter for `*.rs` costs nothing
//! on a write of `README.md`.
//!
//! Globs are relative to the project root (`*` stays inside a directory, `**` crosses them); a
//! leading `!` excludes. A path the call touches that is absolute and under the root is made
//! relative first; a path outside the root matches only an absolute glob. A call that touches no
//! path matches no hook that has `paths`.
//!
//! Each path is tested in every spelling [`super::touched`] gives it (as written, lexically
//! normalised, and as the kernel resolves it, symlinks included), and passes when one spelling is
//! included and not excluded: a hook runs when any spelling of the file matches, so neither a
//! symlinked directory nor `..` walks a write past a guard.
//!
//! A search (Grep, Glob, LS, `read_many_files`) reads whole trees: it passes when a directory it
//! searches (the root when it names none) holds or lies inside a directory an include glob
//! names, so `paths = ["secrets/**"]` on `@file_reads` sees a Grep of the whole project.

use std::path::{Path, PathBuf};

use globset::{Candidate, GlobBuilder, GlobSet, GlobSetBuilder};
use serde_json::{Map, Value};

use super::hard_links::{self, Found};
pub use super::touched::touched;
use super::touched::{literal_dir, reaches, search_dirs, Resolver};

/// A compiled `paths` filter.
#[derive(Debug, Clone)]
pub struct PathFilter {
    /// The patterns as written, for listings.
    pub patterns: Vec<String>,
    include: GlobSet,
    exclude: GlobSet,
    /// Each include glob's directory before its first wildcard: what a search must reach.
    literals: Vec<PathBuf>,
}

fn glob(pattern: &str) -> Result<globset::Glob, globset::Error> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
}

impl PathFilter {
    /// Compile `patterns`; an invalid glob is an error naming it.
    pub(crate) fn compile(patterns: Vec<String>) -> Result<PathFilter, String> {
        let mut include = GlobSetBuilder::new();
        let mut exclude = GlobSetBuilder::new();
        let mut any_include = false;
        let mut literals = Vec::new();
        for p in &patterns {
            let (set, pat) = match p.strip_prefix('!') {
                Some(rest) => (&mut exclude, rest),
                None => {
                    any_include = true;
                    (&mut include, p.as_str())
                }
            };
            let pat = pat.strip_prefix("./").unwrap_or(pat);
            if pat.is_empty() {
                return Err("an empty glob".into());
            }
            set.add(glob(pat).map_err(|e| format!("invalid glob `{p}`: {e}"))?);
            if !p.starts_with('!') {
                let literal = literal_dir(pat);
                literals.push(if literal == Path::new(".") {
                    PathBuf::new()
                } else {
                    literal
                });
            }
        }
        if !any_include {
            return Err("every glob excludes (`!`), so nothing can match".into());
        }
        let build = |b: GlobSetBuilder| b.build().map_err(|e| e.to_string());
        Ok(PathFilter {
            patterns,
            include: build(include)?,
            exclude: build(exclude)?,
            literals,
        })
    }

    /// Whether any of `touched` (as the call wrote them) passes, with `root` the project root.
    pub fn matches(&self, touched: &[&str], root: &Path) -> bool {
        if touched.is_empty() {
            return false;
        }
        let resolver = Resolver::new(root);
        touched.iter().any(|p| self.passes(p, &resolver))
    }

    /// For a search (`grep`, `glob`, `ls`, `read_many_files`), which reads whole trees: whether
    /// a tree it searches (the root when it names none) can hold a file an include glob matches.
    /// Excludes are not applied to a tree (a search of `src/` also reads what they leave).
    pub fn reaches_search(
        &self,
        tool: &str,
        arguments: Option<&Map<String, Value>>,
        root: &Path,
    ) -> bool {
        let resolver = Resolver::new(root);
        search_dirs(tool, arguments).iter().any(|dir| {
            resolver.spellings(&dir.to_string_lossy()).iter().any(|s| {
                self.passes_candidate(&Candidate::new(s.for_globs()))
                    || self.literals.iter().any(|l| reaches(l, s, &resolver))
            })
        })
    }

    /// Include first: most calls match no include glob, and then the excludes cost nothing.
    fn passes_candidate(&self, candidate: &Candidate<'_>) -> bool {
        self.include.is_match_candidate(candidate) && !self.exclude.is_match_candidate(candidate)
    }

    /// The include globs, compiled as [`PathFilter::compile`] does.
    fn include_globs(&self) -> impl Iterator<Item = globset::Glob> + '_ {
        self.patterns
            .iter()
            .filter(|p| !p.starts_with('!'))
            .filter_map(|p| glob(p.strip_prefix("./").unwrap_or(p)).ok())
    }

    /// The paths of `touched` that pass, in the call's order: what `{paths}` stands for on a hook
    /// with this filter (a formatter for `*.rs` is never handed the call's `README.md`).
    pub fn select<'a>(&self, touched: &[&'a str], root: &Path) -> Vec<&'a str> {
        let resolver = Resolver::new(root);
        touched
            .iter()
            .copied()
            .filter(|p| self.passes(p, &resolver))
            .collect()
    }

    /// Any spelling of `written` included and not excluded; for a file with several hard
    /// links, any of its names (see [`PathFilter::passes_by_link`]).
    fn passes(&self, written: &str, resolver: &Resolver) -> bool {
        let spellings = resolver.spellings(written);
        spellings
            .iter()
            .any(|s| self.passes_candidate(&Candidate::new(s.for_globs())))
            || spellings
                .first()
                .is_some_and(|s| self.passes_by_link(&s.absolute, resolver))
    }

    /// A regular file with more than one hard link is each of its names: it passes when
    /// another name of it, found in the directories this filter's include globs name (before
    /// their first wildcard), passes. When the search gives up, it passes: a guard rather
    /// runs than lets a file it cannot rule out through.
    fn passes_by_link(&self, absolute: &Path, resolver: &Resolver) -> bool {
        let Some(id) = hard_links::linked(absolute) else {
            return false;
        };
        let mut budget = hard_links::LINK_SEARCH_LIMIT;
        self.literals.iter().any(|literal| {
            let dir = resolver.real_root().join(literal);
            match hard_links::names_under(&dir, id, &mut budget) {
                Found::GaveUp => true,
                Found::Names(names) => names.into_iter().any(|name| {
                    let spelling = resolver.spelling(name);
                    self.passes_candidate(&Candidate::new(spelling.for_globs()))
                }),
            }
        })
    }
}

/// The paths one call touches, as written and as matched against globs under the session's
/// project root (every hook but those of a nested project layer shares it). Built once per
/// dispatch, so that 50 hooks with `paths` cost one path resolution each, not 50.
pub struct CallPaths<'a> {
    pub(crate) written: Vec<&'a str>,
    /// Every spelling of every path, in the form globs match.
    normalized: Vec<PathBuf>,
    /// Whether a path is a file with more than one hard link: its other names are looked for
    /// only then (see [`PathFilter::passes_by_link`]).
    pub(crate) linked: bool,
}

impl<'a> CallPaths<'a> {
    /// The spellings of the call's paths in the form globs match (relative to the root when
    /// under it); a hook passes when one of them is included and not excluded.
    pub fn candidates(&self) -> Vec<Candidate<'_>> {
        self.normalized.iter().map(Candidate::new).collect()
    }

    /// The call's paths under `root`; none when no hook has `paths` (`any_paths`: nothing asks).
    pub fn new(arguments: Option<&'a Map<String, Value>>, root: &Path, any_paths: bool) -> Self {
        if !any_paths {
            return CallPaths {
                written: Vec::new(),
                normalized: Vec::new(),
                linked: false,
            };
        }
        let written = touched(arguments);
        let (normalized, linked) = normalize_all(&written, root);
        CallPaths {
            written,
            normalized,
            linked,
        }
    }
}

/// The include globs of every hook's `paths`, in one set: a call's paths are matched against all
/// of them in one pass, and only the hooks they hit check their excludes. So 50 hooks with
/// `paths` cost one glob query per path, not 50 (`benches/hooks.rs`, `paths_no_match`).
#[derive(Debug, Clone)]
pub struct PathsIndex {
    set: GlobSet,
    /// The hook (an index into `Config::hooks`) of each glob in `set`.
    owner: Vec<usize>,
}

impl PathsIndex {
    /// Index the hooks that have `paths`; `None` when none has.
    pub fn build<'f>(filters: impl Iterator<Item = (usize, &'f PathFilter)>) -> Option<PathsIndex> {
        let mut builder = GlobSetBuilder::new();
        let mut owner = Vec::new();
        for (hook, filter) in filters {
            for g in filter.include_globs() {
                builder.add(g);
                owner.push(hook);
            }
        }
        if owner.is_empty() {
            return None;
        }
        // Each glob compiled on its own already; a set of them builds too.
        let set = builder.build().ok()?;
        Some(PathsIndex { set, owner })
    }

    /// For each of `candidates` (a call's paths), the hooks whose include globs it matches:
    /// `(hook, path)` pairs, sorted by hook.
    pub fn hits(&self, candidates: &[Candidate<'_>]) -> Vec<(usize, usize)> {
        let mut hits = Vec::new();
        let mut matched = Vec::new();
        for (path, candidate) in candidates.iter().enumerate() {
            self.set.matches_candidate_into(candidate, &mut matched);
            hits.extend(matched.iter().map(|&g| (self.owner[g], path)));
        }
        hits.sort_unstable();
        hits.dedup();
        hits
    }
}

/// Whether `filter` (of the hook at `hook`) passes a call, given the index's `hits` for the
/// call's `candidates`: some spelling of a path it includes that it does not exclude.
pub fn passes_hits(
    filter: &PathFilter,
    hook: usize,
    hits: &[(usize, usize)],
    candidates: &[Candidate<'_>],
) -> bool {
    let start = hits.partition_point(|&(h, _)| h < hook);
    hits[start..]
        .iter()
        .take_while(|&&(h, _)| h == hook)
        .any(|&(_, path)| !filter.exclude.is_match_candidate(&candidates[path]))
}

/// Every spelling of each of `written`, in the form globs match (see [`Resolver::spellings`]),
/// and whether one of them is a file with more than one hard link.
fn normalize_all(written: &[&str], root: &Path) -> (Vec<PathBuf>, bool) {
    if written.is_empty() {
        return (Vec::new(), false);
    }
    let resolver = Resolver::new(root);
    let mut out: Vec<PathBuf> = Vec::with_capacity(written.len());
    let mut linked = false;
    for path in written {
        let spellings = resolver.spellings(path);
        linked |= spellings
            .first()
            .is_some_and(|s| hard_links::linked(&s.absolute).is_some());
        for spelling in &spellings {
            let form = spelling.for_globs();
            if !out.iter().any(|seen| seen == form) {
                out.push(form.to_path_buf());
            }
        }
    }
    (out, linked)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(p: &[&str]) -> PathFilter {
        PathFilter::compile(p.iter().map(|s| s.to_string()).collect()).expect("compiles")
    }

    #[test]
    fn relative_globs_with_excludes() {
        let f = filter(&["src/**/*.rs", "!src/generated/**"]);
        let root = Path::new("/repo");
        assert!(f.matches(&["src/a.rs"], root));
        assert!(f.matches(&["src/x/y/a.rs"], root));
        assert!(f.matches(&["/repo/src/a.rs"], root));
        assert!(f.matches(&["./src/../src/a.rs"], root));
        assert!(!f.matches(&["src/generated/a.rs"], root));
        assert!(!f.matches(&["README.md"], root));
        assert!(!f.matches(&["/elsewhere/src/a.rs"], root));
        assert!(!f.matches(&[], root));
        assert!(f.matches(&["README.md", "src/b.rs"], root));
    }

    #[test]
    fn star_stays_in_its_directory_and_absolute_globs_match_outside() {
        let f = filter(&["*.md", "/etc/**"]);
        let root = Path::new("/repo");
        assert!(f.matches(&["README.md"], root));
        assert!(!f.matches(&["docs/a.md"], root));
        assert!(f.matches(&["/etc/passwd"], root));
    }

    /// The one-set index says what each filter alone says, for every filter and path.
    #[test]
    fn the_index_agrees_with_each_filter() {
        let filters = [
            filter(&["src/**/*.rs", "!src/gen/**"]),
            filter(&["*.md", "docs/**"]),
            filter(&["/etc/**"]),
            filter(&["src/a.rs", "!src/a.rs"]),
            filter(&["**/*.{ts,tsx}", "!**/*.d.ts", "!vendor/**"]),
        ];
        let root = Path::new("/r");
        let index = PathsIndex::build(filters.iter().enumerate()).expect("index");
        let paths = [
            "src/a.rs",
            "src/gen/x.rs",
            "/r/src/b/c.rs",
            "README.md",
            "docs/x/y.txt",
            "/etc/passwd",
            "../r/src/z.rs",
            "web/app.tsx",
            "web/types.d.ts",
            "vendor/lib.ts",
            "/elsewhere/src/a.rs",
        ];
        // No path, then every run of consecutive paths.
        let calls =
            std::iter::once(&paths[..0]).chain((1..=paths.len()).flat_map(|n| paths.windows(n)));
        for written in calls {
            let (normalized, _) = normalize_all(written, root);
            let candidates: Vec<Candidate<'_>> = normalized.iter().map(Candidate::new).collect();
            let hits = index.hits(&candidates);
            for (i, f) in filters.iter().enumerate() {
                assert_eq!(
                    passes_hits(f, i, &hits, &candidates),
                    f.matches(written, root),
                    "filter {:?} on {written:?}",
                    f.patterns
                );
            }
        }
    }

    #[test]
    fn only_excludes_is_an_error() {
        assert!(PathFilter::compile(vec!["!a".into()]).is_err());
        assert!(PathFilter::compile(vec!["a[".into()]).is_err());
    }
}
