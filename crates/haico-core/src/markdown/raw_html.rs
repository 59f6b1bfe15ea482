//! A model of the raw HTML inside Markdown, precise enough to bound how deeply it nests.
//!
//! The sanitiser's parser (html5ever) answers "is this element in scope?" by walking its
//! stack of open elements, so 50,000 unclosed `<div>`s cost it quadratic time, and formatting
//! elements (`<b>`, `<a>`…) left open are re-created in every later paragraph. [`RawHtml`]
//! follows the HTML tokenizer over each raw fragment pulldown-cmark passes through (tags,
//! attribute quoting, comments, raw-text elements such as `<script>`) and keeps its own stack
//! of open elements:
//! - a start tag that would open more than [`MAX_OPEN`] elements is shown as text (its `<`
//!   escaped), and so is any construct a fragment leaves unfinished, so every fragment starts
//!   and ends where the parser is between tags;
//! - `<svg>`, `<math>`, `<select>`, `<template>` and `<frameset>` are always shown as text
//!   (the sanitiser removes them anyway): they switch the parser into modes the model does
//!   not follow;
//! - [`RawHtml::closing`] closes what the raw HTML left open when the Markdown container it
//!   was written in ends, and formatting elements at the end of their paragraph.
//!
//! Where the model and the parser could differ, the model counts more open elements, never
//! fewer: it pops an element only on an end tag that certainly closes it.

use pulldown_cmark::CowStr;

/// At most this many raw elements are open at once; deeper ones are shown as text.
pub const MAX_OPEN: usize = 64;

/// How deeply the Markdown around a raw fragment nests: all open Markdown elements, and the
/// containers among them (everything but paragraphs and HTML blocks).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Depth {
    pub all: usize,
    pub containers: usize,
}

/// The raw HTML seen so far.
#[derive(Debug, Default)]
pub struct RawHtml {
    open: Vec<Open>,
    raw_text: Option<RawText>,
}

/// One element the raw HTML opened and has not closed.
#[derive(Debug)]
struct Open {
    name: String,
    formatting: bool,
    depth: Depth,
}

/// Inside an element whose content the tokenizer does not split into tags.
#[derive(Debug, Clone, Copy)]
enum RawText {
    /// Until `</name`: `<style>`, `<textarea>`, `<title>`…
    Until(&'static str),
    /// `<script>`, with its escaped states (`<!--` … `<script>` … `-->`).
    Script(ScriptState),
    /// `<plaintext>`: the rest of the document is text.
    Forever,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ScriptState {
    Data,
    Escaped,
    DoubleEscaped,
}

/// Elements without content: never pushed.
const VOID: [&str; 19] = [
    "area", "base", "basefont", "bgsound", "br", "col", "embed", "frame", "hr", "image", "img",
    "input", "keygen", "link", "meta", "param", "source", "track", "wbr",
];

/// Elements the parser re-opens in later blocks when they are left open.
const FORMATTING: [&str; 14] = [
    "a", "b", "big", "code", "em", "font", "i", "nobr", "s", "small", "strike", "strong", "tt", "u",
];

/// Start tags always shown as text (see the module header).
const REFUSED: [&str; 5] = ["svg", "math", "select", "template", "frameset"];

/// Elements whose content is text up to their end tag.
const UNTIL_END_TAG: [&str; 8] = [
    "style", "xmp", "iframe", "noembed", "noframes", "noscript", "textarea", "title",
];

/// Start tags that close an element of the same name at the top of the stack.
const SELF_CLOSING_SIBLINGS: [&str; 8] = ["p", "li", "dd", "dt", "option", "tr", "td", "th"];

/// What the tokenizer found at a `<`.
enum Construct {
    /// Not markup: the `<` is text.
    Text,
    /// Markup that ends in a later fragment (or never).
    Unfinished,
    /// A comment, doctype or bogus comment, ending before `end`.
    Skipped { end: usize },
    /// A start or end tag named `bytes[name]`, ending before `end`.
    Tag {
        end_tag: bool,
        name: std::ops::Range<usize>,
        end: usize,
    },
}

impl RawHtml {
    /// `fragment` as the sanitiser should see it: tags that would nest too deeply, refused
    /// elements and unfinished constructs get their `<` escaped, so they show as text.
    pub fn filter<'a>(&mut self, fragment: CowStr<'a>, depth: Depth) -> CowStr<'a> {
        let escaped = self.scan(fragment.as_bytes(), depth);
        if escaped.is_empty() {
            return fragment;
        }
        let mut out = String::with_capacity(fragment.len() + escaped.len() * 3);
        let mut from = 0;
        for at in escaped {
            out.push_str(&fragment[from..at]);
            out.push_str("&lt;");
            from = at + 1;
        }
        out.push_str(&fragment[from..]);
        CowStr::from(out)
    }

    /// End tags for the raw elements that must close before a Markdown element ends, which
    /// leaves the Markdown at `depth` (`None` when there are none).
    pub fn closing(&mut self, depth: Depth) -> Option<String> {
        let first = self.open.iter().position(|open| {
            open.depth.containers > depth.containers
                || (open.formatting && open.depth.all > depth.all)
        })?;
        Some(self.close_from(first))
    }

    /// End tags for every raw element still open (`None` when there are none).
    pub fn close_all(&mut self) -> Option<String> {
        (!self.open.is_empty()).then(|| self.close_from(0))
    }

    /// Whether every raw element opened so far is closed (and no raw text is going on).
    pub fn is_balanced(&self) -> bool {
        self.open.is_empty() && self.raw_text.is_none()
    }

    /// End tags for the open elements from `first` on, which are popped.
    fn close_from(&mut self, first: usize) -> String {
        let mut html = String::new();
        for open in self.open.drain(first..).rev() {
            html.push_str("</");
            html.push_str(&open.name);
            html.push('>');
        }
        // A raw-text element is the top of the stack, so it was just closed, and the end tag
        // ends its text; `<plaintext>` has no end.
        if !matches!(self.raw_text, Some(RawText::Forever)) {
            self.raw_text = None;
        }
        html
    }

    /// Runs the tokenizer over `bytes`; answers the offsets of the `<`s to escape.
    fn scan(&mut self, bytes: &[u8], depth: Depth) -> Vec<usize> {
        let mut escaped = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            if let Some(raw) = self.raw_text {
                match raw_text_end(bytes, i, raw) {
                    (Some(at), _) => {
                        self.raw_text = None;
                        i = at;
                    }
                    (None, state) => {
                        self.raw_text = state;
                        break;
                    }
                }
            }
            let Some(offset) = bytes[i..].iter().position(|&b| b == b'<') else {
                break;
            };
            i += offset;
            match construct(bytes, i) {
                Construct::Text => i += 1,
                Construct::Unfinished => {
                    escaped.push(i);
                    i += 1;
                }
                Construct::Skipped { end } => i = end,
                Construct::Tag { end_tag, name, end } => {
                    let name = String::from_utf8_lossy(&bytes[name]).to_ascii_lowercase();
                    if end_tag {
                        self.end_tag(&name);
                        i = end;
                    } else if self.start_tag(name, depth) {
                        i = end;
                    } else {
                        // Shown as text: what follows the `<` is tokenized as text is.
                        escaped.push(i);
                        i += 1;
                    }
                }
            }
        }
        escaped
    }

    /// Records a start tag; `false` when it must be shown as text instead.
    fn start_tag(&mut self, name: String, depth: Depth) -> bool {
        let name_str = name.as_str();
        if REFUSED.contains(&name_str) {
            return false;
        }
        if VOID.contains(&name_str) {
            return true;
        }
        let closes_sibling = SELF_CLOSING_SIBLINGS.contains(&name_str)
            && self.open.last().is_some_and(|top| top.name == name);
        if closes_sibling {
            self.open.pop();
        } else if self.open.len() >= MAX_OPEN {
            return false;
        }
        self.raw_text = match name_str {
            "script" => Some(RawText::Script(ScriptState::Data)),
            "plaintext" => Some(RawText::Forever),
            _ => UNTIL_END_TAG
                .iter()
                .find(|&&raw| raw == name_str)
                .map(|&raw| RawText::Until(raw)),
        };
        self.open.push(Open {
            formatting: FORMATTING.contains(&name_str),
            name,
            depth,
        });
        true
    }

    /// Records an end tag: it closes the top element when that has its name (an end tag
    /// deeper in the stack may or may not close anything, so the model keeps it open).
    fn end_tag(&mut self, name: &str) {
        if self.open.last().is_some_and(|top| top.name == name) {
            self.open.pop();
        }
    }
}

/// Whether `b` ends a tag name or attribute (HTML's whitespace, `/` and `>`).
fn is_delimiter(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | b'\x0C' | b'\r' | b' ' | b'/' | b'>')
}

fn is_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | b'\x0C' | b'\r' | b' ')
}

/// The first `needle` in `bytes` at or after `from`.
fn find(bytes: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    bytes
        .get(from..)?
        .windows(needle.len())
        .position(|window| window == needle)
        .map(|at| from + at)
}

/// Whether `bytes[at..]` starts with `</name` and a delimiter (any case).
fn is_end_tag_of(bytes: &[u8], at: usize, name: &str) -> bool {
    let end = at + 2 + name.len();
    bytes.get(at..at + 2) == Some(b"</")
        && bytes
            .get(at + 2..end)
            .is_some_and(|n| n.eq_ignore_ascii_case(name.as_bytes()))
        && bytes.get(end).is_some_and(|&b| is_delimiter(b))
}

/// Where raw text that began earlier ends in `bytes` (searching from `from`): the offset of
/// its end tag, or `None` and the state to carry into the next fragment.
fn raw_text_end(bytes: &[u8], from: usize, raw: RawText) -> (Option<usize>, Option<RawText>) {
    match raw {
        RawText::Forever => (None, Some(raw)),
        RawText::Until(name) => {
            let mut i = from;
            while let Some(at) = find(bytes, i, b"</") {
                if is_end_tag_of(bytes, at, name) {
                    return (Some(at), None);
                }
                i = at + 2;
            }
            (None, Some(raw))
        }
        RawText::Script(mut state) => {
            let mut i = from;
            while i < bytes.len() {
                let rest = &bytes[i..];
                match state {
                    ScriptState::Data | ScriptState::Escaped
                        if is_end_tag_of(bytes, i, "script") =>
                    {
                        return (Some(i), None);
                    }
                    ScriptState::Data if rest.starts_with(b"<!--") => {
                        state = ScriptState::Escaped;
                        i += 2;
                        continue;
                    }
                    ScriptState::Escaped | ScriptState::DoubleEscaped
                        if rest.starts_with(b"-->") =>
                    {
                        state = ScriptState::Data;
                    }
                    ScriptState::Escaped
                        if rest.starts_with(b"<")
                            && rest
                                .get(1..7)
                                .is_some_and(|n| n.eq_ignore_ascii_case(b"script"))
                            && rest.get(7).is_some_and(|&b| is_delimiter(b)) =>
                    {
                        state = ScriptState::DoubleEscaped;
                    }
                    ScriptState::DoubleEscaped if is_end_tag_of(bytes, i, "script") => {
                        state = ScriptState::Escaped;
                    }
                    _ => {}
                }
                i += 1;
            }
            (None, Some(RawText::Script(state)))
        }
    }
}

/// What starts at the `<` at `bytes[at]`, as HTML's tokenizer reads it.
fn construct(bytes: &[u8], at: usize) -> Construct {
    let until_gt = |from: usize| match bytes
        .get(from..)
        .and_then(|r| r.iter().position(|&b| b == b'>'))
    {
        Some(offset) => Construct::Skipped {
            end: from + offset + 1,
        },
        None => Construct::Unfinished,
    };
    match bytes.get(at + 1) {
        None => Construct::Unfinished,
        Some(b'!') => {
            if bytes.get(at + 2..at + 4) == Some(b"--") {
                let body = at + 4;
                let rest = &bytes[body.min(bytes.len())..];
                if rest.starts_with(b">") {
                    return Construct::Skipped { end: body + 1 };
                }
                if rest.starts_with(b"->") {
                    return Construct::Skipped { end: body + 2 };
                }
                let close = find(bytes, body, b"-->").map(|p| p + 3);
                let bang = find(bytes, body, b"--!>").map(|p| p + 4);
                match (close, bang) {
                    (Some(a), Some(b)) => Construct::Skipped { end: a.min(b) },
                    (Some(end), None) | (None, Some(end)) => Construct::Skipped { end },
                    (None, None) => Construct::Unfinished,
                }
            } else if bytes.len() < at + 4 {
                // `<!` or `<!-` at the end: a comment may yet begin.
                Construct::Unfinished
            } else {
                until_gt(at + 2)
            }
        }
        Some(b'?') => until_gt(at + 1),
        Some(b'/') => match bytes.get(at + 2) {
            None => Construct::Unfinished,
            Some(b'>') => Construct::Skipped { end: at + 3 },
            Some(b) if b.is_ascii_alphabetic() => tag(bytes, at + 2, true),
            Some(_) => until_gt(at + 2),
        },
        Some(b) if b.is_ascii_alphabetic() => tag(bytes, at + 1, false),
        Some(_) => Construct::Text,
    }
}

/// The tag whose name starts at `bytes[name_start]`: where its name and the tag end, following
/// the tokenizer's attribute states (a quote opens a value only after `=`).
fn tag(bytes: &[u8], name_start: usize, end_tag: bool) -> Construct {
    #[derive(Clone, Copy)]
    enum State {
        Name,
        BeforeAttribute,
        Attribute,
        AfterAttribute,
        BeforeValue,
        Quoted(u8),
        Unquoted,
    }
    let mut state = State::Name;
    let mut name_end = bytes.len();
    let mut i = name_start;
    while let Some(&b) = bytes.get(i) {
        state = match state {
            State::Name if is_delimiter(b) => {
                name_end = i;
                if b == b'>' {
                    break;
                }
                State::BeforeAttribute
            }
            State::Name => State::Name,
            State::BeforeAttribute | State::AfterAttribute if b == b'>' => break,
            State::BeforeAttribute if is_space(b) || b == b'/' => State::BeforeAttribute,
            State::BeforeAttribute => State::Attribute,
            State::Attribute if b == b'>' => break,
            State::Attribute if b == b'=' => State::BeforeValue,
            State::Attribute if b == b'/' => State::BeforeAttribute,
            State::Attribute if is_space(b) => State::AfterAttribute,
            State::Attribute => State::Attribute,
            State::AfterAttribute if b == b'=' => State::BeforeValue,
            State::AfterAttribute if is_space(b) => State::AfterAttribute,
            State::AfterAttribute if b == b'/' => State::BeforeAttribute,
            State::AfterAttribute => State::Attribute,
            State::BeforeValue if is_space(b) => State::BeforeValue,
            State::BeforeValue if b == b'>' => break,
            State::BeforeValue if b == b'"' || b == b'\'' => State::Quoted(b),
            State::BeforeValue => State::Unquoted,
            State::Quoted(q) if b == q => State::BeforeAttribute,
            State::Quoted(q) => State::Quoted(q),
            State::Unquoted if b == b'>' => break,
            State::Unquoted if is_space(b) => State::BeforeAttribute,
            State::Unquoted => State::Unquoted,
        };
        i += 1;
    }
    if i >= bytes.len() {
        return Construct::Unfinished;
    }
    Construct::Tag {
        end_tag,
        name: name_start..name_end.min(i),
        end: i + 1,
    }
}

#[cfg(test)]
mod tests;
