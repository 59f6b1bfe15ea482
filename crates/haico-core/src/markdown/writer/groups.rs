//! Raw HTML in groups (see the parent module): the elements a trivial group may hold, the
//! separators that stand for directly written stretches in the sanitiser's document, and the
//! assembly of the final HTML from both.

use std::fmt::Write as _;

/// Elements a trivial group may hold as bare tags: kept by the sanitiser with no attribute
/// added, and parsed as ordinary elements (no raw text, no foreign content).
pub(super) const TRIVIAL: [&str; 52] = [
    "abbr",
    "b",
    "bdi",
    "blockquote",
    "br",
    "center",
    "cite",
    "code",
    "dd",
    "del",
    "details",
    "dfn",
    "div",
    "dl",
    "dt",
    "em",
    "figcaption",
    "figure",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "hr",
    "i",
    "ins",
    "kbd",
    "li",
    "mark",
    "ol",
    "p",
    "pre",
    "q",
    "s",
    "samp",
    "small",
    "span",
    "strike",
    "strong",
    "sub",
    "summary",
    "sup",
    "table",
    "tbody",
    "td",
    "th",
    "thead",
    "tr",
    "tt",
    "u",
    "ul",
];

/// Trivial elements without content.
pub(super) const TRIVIAL_VOID: [&str; 2] = ["br", "hr"];

/// What a render made: HTML written directly, and the raw HTML that needs sanitising.
pub struct Parts {
    /// The HTML written directly; `out[chunk_ends[k - 1]..chunk_ends[k]]` is stretch `k`.
    pub(super) out: String,
    pub(super) chunk_ends: Vec<usize>,
    /// The sanitiser's document: the sanitised groups, with a separator for each stretch.
    pub(super) batch: String,
    /// Where the Markdown left out (past the output budget) begins.
    pub rest_from: Option<usize>,
}

impl Parts {
    /// The final HTML, `sanitise` applied to the raw HTML's document.
    pub fn assemble(self, sanitise: impl FnOnce(&str) -> String) -> String {
        if self.chunk_ends.len() <= 1 {
            return self.out;
        }
        let clean = sanitise(&self.batch);
        let chunk = |k: usize| {
            let start = if k == 0 { 0 } else { self.chunk_ends[k - 1] };
            &self.out[start..self.chunk_ends[k]]
        };
        let mut html = String::with_capacity(clean.len() + self.out.len());
        let mut next = 0;
        let mut from = 0;
        let mut search = 0;
        while let Some(offset) = clean[search..].find(SEPARATOR) {
            let at = search + offset;
            let digits_from = at + SEPARATOR.len();
            let digits = clean[digits_from..]
                .bytes()
                .take_while(u8::is_ascii_digit)
                .count();
            let end = digits_from + digits;
            search = digits_from;
            let index = clean[digits_from..end].parse::<usize>().ok();
            if clean.as_bytes().get(end) == Some(&b'"')
                && index == Some(next)
                && next < self.chunk_ends.len()
            {
                html.push_str(&clean[from..at]);
                html.push_str(chunk(next));
                next += 1;
                from = end + 1;
                search = from;
            }
        }
        html.push_str(&clean[from..]);
        for k in next..self.chunk_ends.len() {
            html.push_str(chunk(k));
        }
        html
    }
}

/// How a separator begins: a private-use character and a quote, then the index and a quote.
pub(super) const SEPARATOR: &str = "\u{E000}\"";

pub(super) fn push_separator(batch: &mut String, index: usize) {
    batch.push_str(SEPARATOR);
    let _ = write!(batch, "{index}\"");
}

/// Raw HTML being gathered (see the module header).
pub(super) struct Group {
    pub(super) html: String,
    /// Trivial so far.
    pub(super) trivial: bool,
    /// The trivial elements it opened and has not closed.
    pub(super) open: Vec<String>,
    /// The Markdown depth where it began.
    pub(super) depth: usize,
}

/// `html` as written in a trivial group, if every `<` in it begins a bare tag of a [`TRIVIAL`]
/// element (`<b>`, `</b>`, `<br>`, `<br/>`, `<br />`), each end tag closing the element on
/// top of `open`, which it keeps up to date. The text around the tags is safe as it is (in an
/// ordinary element's content only `<` begins markup); its `>`s are escaped as the sanitiser
/// would.
pub(super) fn trivial_tags(html: &str, open: &mut Vec<String>) -> Option<String> {
    let bytes = html.as_bytes();
    let mut out = String::with_capacity(html.len() + html.len() / 8);
    let mut i = 0;
    loop {
        let text_end = bytes[i..]
            .iter()
            .position(|&b| b == b'<')
            .map_or(bytes.len(), |offset| i + offset);
        let text = &html[i..text_end];
        if text.contains(['>', '\0']) {
            out.push_str(&text.replace('>', "&gt;").replace('\0', ""));
        } else {
            out.push_str(text);
        }
        if text_end == bytes.len() {
            return Some(out);
        }
        let mut j = text_end + 1;
        let end_tag = bytes.get(j) == Some(&b'/');
        if end_tag {
            j += 1;
        }
        let name_start = j;
        while bytes.get(j).is_some_and(u8::is_ascii_alphanumeric) {
            j += 1;
        }
        let name = html[name_start..j].to_ascii_lowercase();
        if !end_tag {
            if bytes.get(j..j + 2) == Some(b" /") {
                j += 2;
            } else if bytes.get(j) == Some(&b'/') {
                j += 1;
            }
        }
        if bytes.get(j) != Some(&b'>') || !TRIVIAL.contains(&name.as_str()) {
            return None;
        }
        out.push('<');
        if end_tag {
            if open.last() != Some(&name) {
                return None;
            }
            open.pop();
            out.push('/');
        }
        out.push_str(&name);
        out.push('>');
        if !end_tag && !TRIVIAL_VOID.contains(&name.as_str()) {
            open.push(name);
        }
        i = j + 1;
    }
}
