//! Minimal edits of a JSON text: insert a member or an element, replace a value, and leave every
//! other byte of the file as the user wrote it (formatting, inline arrays, key order).
//!
//! [`parse`] reads valid JSON into a tree of byte spans; an [`Editor`] collects edits and applies
//! them back to front. Inserted values are pretty-printed with the file's own indent unit.

use std::ops::Range;

use serde::Serialize;
use serde_json::Value;

/// A JSON value and where it is in the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    Object {
        span: Range<usize>,
        members: Vec<(String, Node)>,
    },
    Array {
        span: Range<usize>,
        items: Vec<Node>,
    },
    Scalar {
        span: Range<usize>,
    },
}

impl Node {
    pub fn span(&self) -> Range<usize> {
        match self {
            Node::Object { span, .. } | Node::Array { span, .. } | Node::Scalar { span } => {
                span.clone()
            }
        }
    }

    /// The member `key` of an object.
    pub fn get(&self, key: &str) -> Option<&Node> {
        match self {
            Node::Object { members, .. } => members.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
}

/// Reads `text` (which must be valid JSON) into spans; `None` when it cannot.
pub fn parse(text: &str) -> Option<Node> {
    let mut p = Parser {
        bytes: text.as_bytes(),
        text,
        at: 0,
    };
    let node = p.value()?;
    p.skip_ws();
    (p.at == p.bytes.len()).then_some(node)
}

struct Parser<'a> {
    bytes: &'a [u8],
    text: &'a str,
    at: usize,
}

impl Parser<'_> {
    fn skip_ws(&mut self) {
        while self
            .bytes
            .get(self.at)
            .is_some_and(|b| b.is_ascii_whitespace())
        {
            self.at += 1;
        }
    }

    fn eat(&mut self, byte: u8) -> bool {
        self.skip_ws();
        if self.bytes.get(self.at) == Some(&byte) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn value(&mut self) -> Option<Node> {
        self.skip_ws();
        let start = self.at;
        match self.bytes.get(self.at)? {
            b'{' => {
                self.at += 1;
                let mut members = Vec::new();
                if !self.eat(b'}') {
                    loop {
                        self.skip_ws();
                        let key_span = self.string()?;
                        let key: String = serde_json::from_str(self.text.get(key_span)?).ok()?;
                        if !self.eat(b':') {
                            return None;
                        }
                        members.push((key, self.value()?));
                        if self.eat(b'}') {
                            break;
                        }
                        if !self.eat(b',') {
                            return None;
                        }
                    }
                }
                Some(Node::Object {
                    span: start..self.at,
                    members,
                })
            }
            b'[' => {
                self.at += 1;
                let mut items = Vec::new();
                if !self.eat(b']') {
                    loop {
                        items.push(self.value()?);
                        if self.eat(b']') {
                            break;
                        }
                        if !self.eat(b',') {
                            return None;
                        }
                    }
                }
                Some(Node::Array {
                    span: start..self.at,
                    items,
                })
            }
            b'"' => Some(Node::Scalar {
                span: self.string()?,
            }),
            _ => {
                while self
                    .bytes
                    .get(self.at)
                    .is_some_and(|b| !b",]} \t\r\n".contains(b))
                {
                    self.at += 1;
                }
                (self.at > start).then_some(Node::Scalar {
                    span: start..self.at,
                })
            }
        }
    }

    /// A string token's span, quotes included.
    fn string(&mut self) -> Option<Range<usize>> {
        let start = self.at;
        if self.bytes.get(self.at) != Some(&b'"') {
            return None;
        }
        self.at += 1;
        loop {
            match self.bytes.get(self.at)? {
                b'\\' => self.at += 2,
                b'"' => {
                    self.at += 1;
                    return Some(start..self.at);
                }
                _ => self.at += 1,
            }
        }
    }
}

/// Edits to one text, applied together.
#[derive(Debug)]
pub struct Editor<'a> {
    text: &'a str,
    unit: String,
    edits: Vec<(Range<usize>, String)>,
}

impl<'a> Editor<'a> {
    pub fn new(text: &'a str) -> Editor<'a> {
        Editor {
            text,
            unit: indent_unit(text),
            edits: Vec::new(),
        }
    }

    /// Appends `"key": value` to `object`.
    pub fn add_member(&mut self, object: &Node, key: &str, value: &Value) {
        let Node::Object { span, members } = object else {
            return;
        };
        let member = format!(
            "{}: {}",
            Value::from(key),
            self.render(value, span.start, 1)
        );
        let last = members.last().map(|(_, v)| v.span().end);
        self.insert_into(span, last, &member);
    }

    /// Appends `value` to `array`.
    pub fn push(&mut self, array: &Node, value: &Value) {
        let Node::Array { span, items } = array else {
            return;
        };
        let item = self.render(value, span.start, 1);
        let last = items.last().map(|v| v.span().end);
        self.insert_into(span, last, &item);
    }

    /// Replaces a value with `value`.
    pub fn replace(&mut self, node: &Node, value: &Value) {
        let span = node.span();
        let text = self.render(value, span.start, 0);
        self.edits.push((span, text));
    }

    /// The edited text.
    pub fn finish(mut self) -> String {
        self.edits.sort_by_key(|(span, _)| span.start);
        let mut out = self.text.to_owned();
        for (span, text) in self.edits.iter().rev() {
            out.replace_range(span.clone(), text);
        }
        out
    }

    fn insert_into(&mut self, container: &Range<usize>, last: Option<usize>, item: &str) {
        let outer = self.line_indent(container.start);
        let inner = format!("{outer}{}", self.unit);
        match last {
            Some(end) => self.edits.push((end..end, format!(",\n{inner}{item}"))),
            None => {
                // `{}` / `[ ]`: replace the inside.
                let inside = container.start + 1..container.end - 1;
                self.edits
                    .push((inside, format!("\n{inner}{item}\n{outer}")));
            }
        }
    }

    /// `value` pretty-printed with the file's unit, its lines after the first indented to sit
    /// `depth` units inside the line at `at`.
    fn render(&self, value: &Value, at: usize, depth: usize) -> String {
        let mut bytes = Vec::new();
        let formatter = serde_json::ser::PrettyFormatter::with_indent(self.unit.as_bytes());
        let mut serializer = serde_json::Serializer::with_formatter(&mut bytes, formatter);
        if value.serialize(&mut serializer).is_err() {
            return value.to_string();
        }
        let pretty = String::from_utf8_lossy(&bytes).into_owned();
        let prefix = format!("{}{}", self.line_indent(at), self.unit.repeat(depth));
        pretty.replace('\n', &format!("\n{prefix}"))
    }

    /// The whitespace that starts the line holding byte `at`.
    fn line_indent(&self, at: usize) -> String {
        let start = self.text[..at].rfind('\n').map_or(0, |i| i + 1);
        self.text[start..]
            .chars()
            .take_while(|c| *c == ' ' || *c == '\t')
            .collect()
    }
}

/// The file's indent unit: the leading whitespace of its first indented line ("  " if none).
pub fn indent_unit(text: &str) -> String {
    text.lines()
        .find(|l| l.starts_with([' ', '\t']) && !l.trim().is_empty())
        .map(|l| {
            l.chars()
                .take_while(|c| *c == ' ' || *c == '\t')
                .collect::<String>()
        })
        .unwrap_or_else(|| "  ".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn push_keeps_the_rest_byte_for_byte() {
        let text = "{\n    \"a\": [1, 2],\n    \"b\": [\n        {\"x\": 1}\n    ]\n}\n";
        let root = parse(text).expect("parsed");
        let mut editor = Editor::new(text);
        editor.push(root.get("b").expect("b"), &json!({"y": 2}));
        let out = editor.finish();
        assert_eq!(
            out,
            "{\n    \"a\": [1, 2],\n    \"b\": [\n        {\"x\": 1},\n        {\n            \"y\": 2\n        }\n    ]\n}\n"
        );
        let value: Value = serde_json::from_str(&out).expect("valid");
        assert_eq!(value["b"][1]["y"], 2);
    }

    #[test]
    fn members_go_into_empty_and_full_objects() {
        let text = "{\"hooks\": {}}";
        let root = parse(text).expect("parsed");
        let mut editor = Editor::new(text);
        editor.add_member(root.get("hooks").expect("hooks"), "Stop", &json!([]));
        let out = editor.finish();
        let value: Value = serde_json::from_str(&out).expect("valid");
        assert_eq!(value, json!({"hooks": {"Stop": []}}));
    }

    #[test]
    fn strings_with_escapes_and_brackets_parse() {
        let text = r#"{"k\"]": "v}\\", "n": -1.5e3, "t": true, "z": null}"#;
        let root = parse(text).expect("parsed");
        assert!(root.get("k\"]").is_some());
        assert!(parse("{\"a\": }").is_none());
        assert!(parse("[1, 2").is_none());
    }
}
