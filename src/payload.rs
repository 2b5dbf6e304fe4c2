//! Reading a hook payload the way the agents wrote it: lone UTF-16 surrogate escapes and deep
//! nesting are valid JSON from a JavaScript agent, and refusing them would switch the guards
//! off. One linear scan bounds the depth at [`MAX_DEPTH`] and replaces unpaired surrogates, then
//! `serde_json` parses; a deeper payload is [`Unreadable`]. Why: `docs/design.md`, "Payloads".

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde_json::{Map, Value};

/// The deepest nesting of arrays and objects read (the payload object itself is level 1).
pub const MAX_DEPTH: usize = 1024;

/// A payload object, and what was lost reading it.
#[derive(Debug, Clone, PartialEq)]
pub struct Payload {
    pub object: Map<String, Value>,
    /// What was replaced (lone surrogates, invalid UTF-8), for the user; empty when nothing was.
    pub notes: Vec<String>,
}

/// Why a payload cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unreadable {
    /// Not JSON (or cut short): `serde_json`'s message.
    NotJson(String),
    /// JSON, but not an object.
    NotAnObject,
    /// Nested deeper than [`MAX_DEPTH`].
    TooDeep,
}

impl fmt::Display for Unreadable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unreadable::NotJson(e) => write!(f, "the hook payload is not valid JSON ({e})"),
            Unreadable::NotAnObject => f.write_str("the hook payload is not a JSON object"),
            Unreadable::TooDeep => write!(
                f,
                "the hook payload is nested more than {MAX_DEPTH} levels deep, past what \
                 ka-hooks reads"
            ),
        }
    }
}

/// Reads `bytes` as one JSON object, lossily where an agent's JSON has no Rust form.
pub fn parse(bytes: &[u8]) -> Result<Payload, Unreadable> {
    let mut notes = Vec::new();
    let text = String::from_utf8_lossy(bytes);
    if let Cow::Owned(_) = text {
        notes.push(
            "the hook payload held bytes that are not UTF-8; the hooks see U+FFFD in their place"
                .to_owned(),
        );
    }
    let scanned = scan(&text)?;
    if scanned.surrogates > 0 {
        notes.push(format!(
            "the hook payload held {} unpaired UTF-16 surrogate escape(s) (such as \"\\udc80\"); \
             the hooks see U+FFFD in their place",
            scanned.surrogates
        ));
    }
    let text = scanned.text.as_deref().unwrap_or(&text);
    let mut de = serde_json::Deserializer::from_str(text.trim());
    de.disable_recursion_limit();
    let value = Value::deserialize(&mut de).map_err(|e| Unreadable::NotJson(e.to_string()))?;
    de.end().map_err(|e| Unreadable::NotJson(e.to_string()))?;
    match value {
        Value::Object(object) => Ok(Payload { object, notes }),
        _ => Err(Unreadable::NotAnObject),
    }
}

/// What the scan found: the text with lone surrogates replaced (`None`: unchanged).
struct Scanned {
    text: Option<String>,
    surrogates: usize,
}

/// One pass over `text`: bounds the nesting at [`MAX_DEPTH`] and replaces the `\uXXXX` escape
/// of every unpaired surrogate with `\ufffd`. Malformed JSON is left for `serde_json` to name.
fn scan(text: &str) -> Result<Scanned, Unreadable> {
    let bytes = text.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0; // bytes of `text` already in `out`
    let mut surrogates = 0;
    let mut depth = 0usize;
    let mut in_string = false;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if !in_string {
            match b {
                b'"' => in_string = true,
                b'[' | b'{' => {
                    depth += 1;
                    if depth > MAX_DEPTH {
                        return Err(Unreadable::TooDeep);
                    }
                }
                b']' | b'}' => depth = depth.saturating_sub(1),
                _ => {}
            }
            i += 1;
            continue;
        }
        match b {
            b'"' => {
                in_string = false;
                i += 1;
            }
            b'\\' if bytes.get(i + 1) == Some(&b'u') => {
                let unit = hex4(bytes, i + 2);
                match unit {
                    Some(0xD800..=0xDBFF)
                        if bytes.get(i + 6) == Some(&b'\\')
                            && bytes.get(i + 7) == Some(&b'u')
                            && matches!(hex4(bytes, i + 8), Some(0xDC00..=0xDFFF)) =>
                    {
                        i += 12; // a pair: kept as written
                    }
                    Some(0xD800..=0xDFFF) => {
                        let out = out.get_or_insert_with(|| String::with_capacity(text.len()));
                        out.push_str(&text[copied..i]);
                        out.push_str("\\ufffd");
                        surrogates += 1;
                        i += 6;
                        copied = i;
                    }
                    _ => i += 2,
                }
            }
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
    if let Some(out) = &mut out {
        out.push_str(&text[copied.min(text.len())..]);
    }
    Ok(Scanned {
        text: out,
        surrogates,
    })
}

/// The four hex digits at `at`, as a number.
fn hex4(bytes: &[u8], at: usize) -> Option<u32> {
    let digits = bytes.get(at..at + 4)?;
    let text = std::str::from_utf8(digits).ok()?;
    u32::from_str_radix(text, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(depth: usize) -> String {
        // `{"a":` + `[` * (depth - 1) + `]` * (depth - 1) + `}`
        format!(
            "{{\"a\":{}{}}}",
            "[".repeat(depth - 1),
            "]".repeat(depth - 1)
        )
    }

    #[test]
    fn lone_surrogates_become_replacement_characters_and_pairs_stay() -> Result<(), Unreadable> {
        let read = parse(br#"{"a":"x\udc80y","b":"\ud83d\ude00","c":"\ud83d","d":"\\udc80"}"#)?;
        assert_eq!(read.object["a"], "x\u{fffd}y");
        assert_eq!(read.object["b"], "\u{1f600}");
        assert_eq!(read.object["c"], "\u{fffd}");
        assert_eq!(
            read.object["d"], "\\udc80",
            "an escaped backslash is no escape"
        );
        assert_eq!(read.notes.len(), 1);
        assert!(read.notes[0].contains("2 unpaired"), "{:?}", read.notes);
        Ok(())
    }

    #[test]
    fn clean_payloads_carry_no_notes() -> Result<(), Unreadable> {
        let read = parse(br#"{"a":"\u00e9[{"}"#)?;
        assert!(read.notes.is_empty());
        assert_eq!(read.object["a"], "\u{e9}[{");
        Ok(())
    }

    #[test]
    fn invalid_utf8_is_replaced_and_said() -> Result<(), Unreadable> {
        let read = parse(b"{\"a\":\"x\xffy\"}")?;
        assert_eq!(read.object["a"], "x\u{fffd}y");
        assert_eq!(read.notes.len(), 1);
        Ok(())
    }

    #[test]
    fn depth_is_bounded_without_recursion() {
        // At MAX_DEPTH itself: max_depth_fits_half_the_main_stack (a test thread has 2 MiB).
        assert!(parse(nested(200).as_bytes()).is_ok());
        assert_eq!(
            parse(nested(MAX_DEPTH + 1).as_bytes()),
            Err(Unreadable::TooDeep)
        );
        assert_eq!(
            parse(nested(1_000_000).as_bytes()),
            Err(Unreadable::TooDeep)
        );
    }

    #[test]
    fn broken_payloads_are_unreadable() {
        assert!(matches!(parse(b"{\"a\":"), Err(Unreadable::NotJson(_))));
        assert!(matches!(parse(b"not json"), Err(Unreadable::NotJson(_))));
        assert!(matches!(parse(b"{} {}"), Err(Unreadable::NotJson(_))));
        assert_eq!(parse(b"[1]"), Err(Unreadable::NotAnObject));
    }

    /// Every recursive walk of a payload at [`MAX_DEPTH`] fits half the main thread's 8 MiB, in
    /// a debug build, where frames are largest.
    #[test]
    fn max_depth_fits_half_the_main_stack() -> Result<(), String> {
        let text = nested(MAX_DEPTH);
        let worker = std::thread::Builder::new()
            .stack_size(4 << 20)
            .spawn(move || -> Result<usize, String> {
                let read = parse(text.as_bytes()).map_err(|e| e.to_string())?;
                let copy = read.object.clone();
                let bytes = serde_json::to_vec(&copy).map_err(|e| e.to_string())?;
                let eq = copy == read.object;
                drop(copy);
                drop(read);
                Ok(bytes.len() * usize::from(eq))
            })
            .map_err(|e| e.to_string())?;
        let len = worker.join().map_err(|_| "overflowed".to_owned())??;
        assert_eq!(len, nested(MAX_DEPTH).len());
        Ok(())
    }
}
