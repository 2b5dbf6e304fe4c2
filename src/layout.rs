//! Text laid out for a terminal: the width to wrap at, and lines wrapped to it at spaces.
//!
//! Wrapping runs on text already escaped ([`crate::terminal::escape`]): it adds line breaks
//! between words and nothing else, so a control character a file holds stays visible.

/// The width when neither `COLUMNS` nor a terminal says one (output to a pipe or a file).
pub const DEFAULT_WIDTH: usize = 100;

/// Narrower than this, wrapping would help no one: lines are kept at least this long.
const MIN_WIDTH: usize = 40;

/// The width to wrap at: `COLUMNS` when it holds a number, else the width of the terminal `out`
/// is (standard output or error), else [`DEFAULT_WIDTH`].
pub fn width(out: impl std::os::fd::AsFd) -> usize {
    let from_env = std::env::var("COLUMNS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|n| *n > 0);
    let from_tty = || {
        rustix::termios::tcgetwinsize(out)
            .ok()
            .map(|s| usize::from(s.ws_col))
            .filter(|n| *n > 0)
    };
    from_env
        .or_else(from_tty)
        .unwrap_or(DEFAULT_WIDTH)
        .max(MIN_WIDTH)
}

/// Marks a line to keep whole (a line of a diff, which a break would turn into two lines of
/// the file): [`wrap`] keeps it as is and drops the mark, [`unmarked`] drops it alone. Escaped
/// text never holds it ([`crate::terminal::escape`] shows a NUL as `\x00`).
pub const KEEP: char = '\0';

/// `text` without the [`KEEP`] marks, unwrapped.
pub fn unmarked(text: &str) -> String {
    text.replace(KEEP, "")
}

/// `text` with every line wider than `width` columns broken at spaces. A continuation line is
/// indented two columns past its line's own indent. A `backquoted` command is kept on one line
/// unless it alone is wider than a line; a word wider than a line (a long path) stays whole, so
/// that it can still be copied.
pub fn wrap(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / width.max(1) * 4);
    for line in text.split_inclusive('\n') {
        let (body, newline) = match line.strip_suffix('\n') {
            Some(body) => (body, "\n"),
            None => (line, ""),
        };
        match body.strip_prefix(KEEP) {
            Some(kept) => out.push_str(kept),
            None => wrap_line(&mut out, body, width),
        }
        out.push_str(newline);
    }
    out
}

fn columns(text: &str) -> usize {
    text.chars().count()
}

fn wrap_line(out: &mut String, line: &str, width: usize) {
    if columns(line) <= width {
        out.push_str(line);
        return;
    }
    let body = line.trim_start_matches(' ');
    let indent = &line[..line.len() - body.len()];
    let hang = format!("{indent}  ");
    out.push_str(indent);
    let mut col = columns(indent);
    // Nothing but the indent on the current line yet.
    let mut fresh = true;
    for unit in units(body, width.saturating_sub(hang.len())) {
        if fresh && unit.is_empty() {
            continue;
        }
        let w = columns(unit);
        if !fresh && col + 1 + w > width {
            out.push('\n');
            out.push_str(&hang);
            col = hang.len();
            fresh = true;
        }
        if !fresh {
            out.push(' ');
            col += 1;
        }
        out.push_str(unit);
        col += w;
        fresh = false;
    }
}

/// The words of `body`: split at spaces, except inside backquotes when the quoted span fits in
/// `room` columns. Runs of spaces give empty words, which keep them within a line.
fn units(body: &str, room: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut quoted = false;
    for (i, c) in body.char_indices() {
        match c {
            '`' => quoted = !quoted,
            ' ' if !quoted => {
                push_unit(&mut out, &body[start..i], room);
                start = i + 1;
            }
            _ => {}
        }
    }
    push_unit(&mut out, &body[start..], room);
    out
}

/// `unit` as one word, or as its words when it is a quoted span wider than `room`.
fn push_unit<'a>(out: &mut Vec<&'a str>, unit: &'a str, room: usize) {
    if unit.contains(' ') && columns(unit) > room {
        out.extend(unit.split(' '));
    } else {
        out.push(unit);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_lines_are_unchanged() {
        assert_eq!(wrap("a b c\n  d\n", 10), "a b c\n  d\n");
    }

    #[test]
    fn long_lines_break_at_spaces_with_a_hanging_indent() {
        assert_eq!(
            wrap("  one two three four five", 12),
            "  one two\n    three\n    four\n    five"
        );
    }

    #[test]
    fn a_word_wider_than_the_line_stays_whole() {
        let path = "/a/very/long/path/that/does/not/fit";
        assert_eq!(
            wrap(&format!("see {path} now"), 20),
            format!("see\n  {path}\n  now")
        );
    }

    #[test]
    fn a_backquoted_command_stays_on_one_line_when_it_fits() {
        assert_eq!(
            wrap("run it with `ka-hooks trust --yes` please", 31),
            "run it with\n  `ka-hooks trust --yes` please"
        );
        // Wider than a line: broken between its words, never inside one.
        assert_eq!(
            wrap("x `a b c d e f g h i j k l m n o p q r s t u v`", 12),
            "x `a b c d e\n  f g h i j\n  k l m n o\n  p q r s t\n  u v`"
        );
    }

    #[test]
    fn a_kept_line_is_not_broken_and_loses_its_mark() {
        let diff = format!("{KEEP}    - one two three four five\n  six seven eight nine\n");
        assert_eq!(
            wrap(&diff, 14),
            "    - one two three four five\n  six seven\n    eight nine\n"
        );
        assert_eq!(unmarked(&diff), &diff[1..]);
    }

    #[test]
    fn escaped_control_characters_survive_wrapping() {
        let text = crate::terminal::escape("evil\r\x1b[2K command that is long");
        let wrapped = wrap(&text, 12);
        assert!(!wrapped.contains('\r') && !wrapped.contains('\x1b'));
        assert_eq!(wrapped.replace("\n  ", " "), text);
    }
}
