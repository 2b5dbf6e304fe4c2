//! A file read in pieces (`config::pieces`) reads exactly as the whole document reads: the same
//! entries, numbers, lines, settings and errors, for files built to trip the cut.

use proptest::prelude::*;

use super::*;

/// What a parse produced, compared as text (compiled filters have no `PartialEq`).
fn read(parse: fn(Layer, &Path, &str, &mut Vec<ConfigError>) -> ParsedFile, text: &str) -> String {
    let mut errors = Vec::new();
    let parsed = parse(Layer::User, Path::new("/c/ka.toml"), text, &mut errors);
    format!(
        "hooks: {:#?}\nsettings: {:?}\nerrors: {errors:#?}",
        parsed.hooks, parsed.settings
    )
}

/// [`parse_file`] without the pieces: what a file read in pieces must read as.
fn parse_file_whole(
    layer: Layer,
    path: &Path,
    text: &str,
    errors: &mut Vec<ConfigError>,
) -> ParsedFile {
    let mut parsed = ParsedFile::empty(layer, path);
    parse_whole(&Text::new(path, text), &mut parsed, errors);
    parsed
}

fn assert_same(text: &str) {
    assert_eq!(
        read(parse_file, text),
        read(parse_file_whole, text),
        "file:\n{text}"
    );
}

/// Parts of a file: entries, their sub-tables, other tables, and the values and headers a cut
/// could be fooled by.
const PARTS: &[&str] = &[
    "[[hooks]]\nevent = \"stop\"\ncommand = \"a\"\n",
    "[[hooks]]\nname = \"n\"\nevent = \"pre_tool_use\"\ntool = [\"write\"]\ncommand = \"b\"\n",
    "[hooks.env]\nA = \"1\"\n",
    "[hooks.paths]\ninclude = [\"src/**\"]\n",
    "[[hooks.x]]\ny = 1\n",
    "[hooks]\nevent = \"stop\"\n",
    "  [[ \"hooks\" ]] # quoted\nevent = \"stop\"\ncommand = \"q\"\n",
    "[['hooks']]\nevent = \"bogus\"\ncommand = \"c\"\n",
    "[[hooks]]\nevent = \"stop\"\ncommand = \"\"\"\n[[hooks]]\nevent = \"stop\"\n\"\"\"\n",
    "[[hooks]]\nevent = \"stop\"\ncommand = '''\n[other]\n'''\n",
    "[[hooks]]\nevent = \"stop\"\ncommand = \"\"\"x\"\"\"\"\"\n",
    "[[hooks]]\nevent = \"stop\"\ncommand = \"d\"\nargs = [\n[[hooks]]\n]\n",
    "[[hooks]]\nevent = \"stop\"\ncommand = \"e\" # [[hooks]]\ntimeout = \"x\"\n",
    "[[hooks]]\r\nevent = \"stop\"\r\ncommand = \"f\"\r\n",
    "[[hooks]]\nevent = \"stop\"\ncommand = \n",
    "[[hooks]]\nevent = \"stop\"\ncommand = \"unterminated\n",
    "[[hooks]]\nevent = \"stop\"\ncommand = \"\"\"never closed\n",
    "[[hooks]]\nevent = \"stop\"\nevent = \"stop\"\n",
    "[[hooks]]\nnope = 1\n",
    "[hook_settings]\ntimeout = 3\n",
    "[hook_settings]\ntimeout = \"soon\"\n",
    "[other]\nx = 1\n",
    "[other.deep]\n\"[[hooks]]\" = 1\n",
    "[[other]]\n",
    "hooks = []\n",
    "hooks.x = 1\n",
    "x = 1\n",
    "# [[hooks]]\n",
    "\n",
    "  \t\n",
    "\u{a0}\n",
    "\r\n",
    "\r",
    "[[\"ho\\u006fks\"]]\nevent = \"stop\"\ncommand = \"u\"\n",
    "[[hooks]]\nevent = \"stop\"\ncommand = \"日本\"\nenv = { \"A\" = \"é\" }\n",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn a_file_reads_the_same_in_pieces_and_whole(
        parts in proptest::collection::vec(0..PARTS.len(), 0..9)
    ) {
        let text: String = parts.iter().map(|&i| PARTS[i]).collect();
        assert_same(&text);
    }
}

#[test]
fn every_part_alone_before_and_after_an_entry_reads_the_same() {
    for part in PARTS {
        assert_same(part);
        assert_same(&format!("{part}{}", PARTS[0]));
        assert_same(&format!("{}{part}{}", PARTS[0], PARTS[1]));
    }
}

/// The equivalence above must not hold only because nothing is ever read in pieces.
#[test]
fn ordinary_files_are_read_in_pieces() {
    let text = format!(
        "[hook_settings]\ntimeout = 3\n{}{}{}",
        PARTS[0], PARTS[2], PARTS[1]
    );
    let pieces = pieces::split(&text).expect("cut");
    assert_eq!(pieces.hooks.len(), 2);
    let mut t = Text::new(Path::new("/c/ka.toml"), &text);
    let mut parsed = ParsedFile::empty(Layer::User, Path::new("/c/ka.toml"));
    let mut errors = Vec::new();
    assert!(parse_pieces(&mut t, &pieces, &mut parsed, &mut errors).is_some());
    assert!(errors.is_empty(), "{errors:?}");
    let lines: Vec<(usize, usize)> = parsed
        .hooks
        .iter()
        .map(|(s, _)| (s.index, s.line))
        .collect();
    assert_eq!(lines, [(0, 3), (1, 8)]);
    assert!(parsed.settings.is_some());
}

/// An error in a later piece names its line in the file, not in the piece.
#[test]
fn errors_in_a_piece_name_their_line_in_the_file() {
    let text = format!("{}{}{}", PARTS[0], PARTS[0], PARTS[7]);
    let mut errors = Vec::new();
    parse_file(Layer::User, Path::new("/c/ka.toml"), &text, &mut errors);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!((errors[0].line, errors[0].column), (Some(8), Some(9)));
    assert_eq!(errors[0].key.as_deref(), Some("hooks[2].event"));
}

/// A cut inside a value that the rest opens before the piece and closes after it (the scanner
/// never cuts there; the cut is built by hand): the mark in the blanked piece makes the rest
/// fail, so the whole document decides. Blanked with spaces alone, the rest would parse.
#[test]
fn a_wrong_cut_inside_a_value_of_the_rest_is_refused() {
    let entry = "[[hooks]]\nevent = \"stop\"\ncommand = \"x\"\n";
    for (open, after) in [
        ("a = '''", "[b]\n'''\n"),
        ("a = \"\"\"", "[b]\n\"\"\"\n"),
        ("a = [", "[1]\n]\n"),
    ] {
        let text = format!("{open}\n{entry}{after}");
        let piece = open.len() + 1..open.len() + 1 + entry.len();
        let spaces: String = text
            .char_indices()
            .map(|(i, c)| {
                if piece.contains(&i) && c != '\n' {
                    ' '
                } else {
                    c
                }
            })
            .collect();
        assert!(toml::from_str::<toml::Table>(&spaces).is_ok(), "{spaces:?}");
        let rest =
            pieces::rest_text(&text, std::slice::from_ref(&piece), text.len()).expect("mark");
        let pieces = pieces::Pieces {
            hooks: vec![piece],
            rest,
        };
        let mut t = Text::new(Path::new("/c/ka.toml"), &text);
        let mut parsed = ParsedFile::empty(Layer::User, Path::new("/c/ka.toml"));
        let read = parse_pieces(&mut t, &pieces, &mut parsed, &mut Vec::new());
        assert!(
            read.is_none(),
            "{text:?} read in pieces as {:?}",
            pieces.rest
        );
    }
}

/// Between two tables the mark is harmless: a file with a table after its entries reads in
/// pieces, with the entry and the settings after it.
#[test]
fn the_mark_between_tables_reads_as_nothing() {
    let text = format!("{}[hook_settings]\ntimeout = 3\n", PARTS[0]);
    let pieces = pieces::split(&text).expect("cut");
    assert!(pieces.rest.contains("[[_]]"), "{:?}", pieces.rest);
    let mut t = Text::new(Path::new("/c/ka.toml"), &text);
    let mut parsed = ParsedFile::empty(Layer::User, Path::new("/c/ka.toml"));
    let mut errors = Vec::new();
    assert!(parse_pieces(&mut t, &pieces, &mut parsed, &mut errors).is_some());
    assert!(errors.is_empty() && parsed.hooks.len() == 1 && parsed.settings.is_some());
}
