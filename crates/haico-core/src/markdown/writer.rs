//! The bounded events (`bounds`) as HTML: what Markdown produces is written safe as it is,
//! and only raw HTML goes through the sanitiser.
//!
//! The HTML pulldown-cmark makes of Markdown is a fixed set of elements around escaped text;
//! what the sanitiser did to it was checking its attributes. [`Writer`] writes those elements
//! itself, as the sanitiser would leave them: URLs pass the same scheme check
//! ([`urls::url_allowed`], then [`super::filter_attribute`]), ids get [`super::ID_PREFIX`], links
//! `rel="noopener noreferrer"`, code blocks only a `language-…` class, and text and attribute
//! values are escaped as html5ever's serializer escapes them. So a document without raw HTML
//! renders exactly as before, without the sanitiser's parse.
//!
//! Raw HTML is gathered into *groups*: a group begins with a raw fragment and ends after the
//! raw fragment that closes what the raw HTML opened (as [`super::raw_html::RawHtml`] counts
//! it), and it holds the Markdown HTML written in between, so that `<details>` … `</details>`
//! around Markdown blocks stays one piece. A group is then either
//! - *trivial*: only bare tags (no attributes) of elements the sanitiser keeps as they are
//!   ([`groups::TRIVIAL`]), each closed in the group by its end tag, around text and Markdown that is
//!   balanced too. Nothing in it can carry script, so it is written as it is; or
//! - sanitised: it goes into one document for the sanitiser, where each stretch of HTML
//!   written directly between groups stands as a *separator*, a text node
//!   `U+E000 "k"`. After sanitising, each separator is replaced by its stretch.
//!
//! Why that is safe: the sanitised document is safe; the stretches are safe Markdown HTML or
//! trivial groups; and a separator can only be found in the sanitised document's text, never
//! in a tag (html5ever escapes `"` in attribute values, and a quote that delimits a value is
//! preceded by `=` or followed by a space or `>`), where any well-formed safe HTML may go.
//! A separator forged in the document's own text at worst moves a stretch: the replacement
//! takes each index only once and in order, and appends the stretches it did not find.

use std::{collections::HashMap, fmt::Write as _};

use pulldown_cmark::{Alignment, CodeBlockKind, CowStr, Event, LinkType, Tag, TagEnd};

use super::{bounds::Step, filter_attribute};

mod groups;
mod urls;

pub use groups::Parts;
use groups::{Group, push_separator, trivial_tags};
use urls::{href_value, safe_href, url_allowed};

/// What the output held when the last top-level block began outside a group.
#[derive(Clone, Copy, Default)]
struct Saved {
    source: usize,
    out: usize,
    chunks: usize,
    batch: usize,
}

/// Renders `steps`, writing at most `limit` bytes of HTML: past that, the blocks from the last
/// top-level one that began outside raw HTML are left out (see [`Parts::rest_from`]).
pub fn render<'a>(steps: impl Iterator<Item = Step<'a>>, capacity: usize, limit: usize) -> Parts {
    let mut writer = Writer {
        out: String::with_capacity(capacity.min(limit)),
        chunk_ends: Vec::new(),
        batch: String::new(),
        group: None,
        written: 0,
        limit,
        over: false,
        end_newline: true,
        depth: 0,
        table_head: false,
        alignments: Vec::new(),
        cell: 0,
        numbers: HashMap::new(),
        metadata: false,
        saved: Saved::default(),
    };
    let mut steps = steps;
    while let Some(step) = steps.next() {
        if let (Some(source), None) = (step.top_level, &writer.group) {
            writer.saved = Saved {
                source,
                out: writer.out.len(),
                chunks: writer.chunk_ends.len(),
                batch: writer.batch.len(),
            };
        }
        writer.event(step, &mut steps);
        if writer.over {
            break;
        }
    }
    let rest_from = if writer.over {
        let saved = writer.saved;
        writer.group = None;
        writer.out.truncate(saved.out);
        writer.chunk_ends.truncate(saved.chunks);
        writer.batch.truncate(saved.batch);
        Some(saved.source)
    } else {
        writer.end_group(true);
        None
    };
    if !writer.chunk_ends.is_empty() {
        push_separator(&mut writer.batch, writer.chunk_ends.len());
    }
    writer.chunk_ends.push(writer.out.len());
    Parts {
        out: writer.out,
        chunk_ends: writer.chunk_ends,
        batch: writer.batch,
        rest_from,
    }
}

struct Writer<'a> {
    out: String,
    chunk_ends: Vec<usize>,
    batch: String,
    group: Option<Group>,
    /// Bytes of HTML written (directly or into groups).
    written: usize,
    limit: usize,
    /// Set when a write would have passed the limit.
    over: bool,
    /// Whether the last write ended a line.
    end_newline: bool,
    /// Open Markdown elements (those that write a tag).
    depth: usize,
    table_head: bool,
    alignments: Vec<Alignment>,
    cell: usize,
    numbers: HashMap<CowStr<'a>, usize>,
    metadata: bool,
    saved: Saved,
}

impl<'a> Writer<'a> {
    fn write(&mut self, s: &str) {
        if s.is_empty() || self.over {
            return;
        }
        if self.written + s.len() > self.limit {
            self.over = true;
            return;
        }
        self.written += s.len();
        match &mut self.group {
            Some(group) => group.html.push_str(s),
            None => self.out.push_str(s),
        }
        self.end_newline = s.ends_with('\n');
    }

    /// Writes `s` on a line of its own.
    fn line(&mut self, s: &str) {
        if !self.end_newline {
            self.write("\n");
        }
        self.write(s);
    }

    /// Writes `s` escaped as html5ever escapes text (`attribute`: attribute values).
    fn escaped(&mut self, s: &str, attribute: bool) {
        let bytes = s.as_bytes();
        let mut from = 0;
        let mut i = 0;
        while i < bytes.len() {
            let (replacement, len) = match bytes[i] {
                b'&' => ("&amp;", 1),
                b'<' => ("&lt;", 1),
                b'>' => ("&gt;", 1),
                b'"' if attribute => ("&quot;", 1),
                // As html5ever reads them: dropped from text, replaced in attribute values.
                0 if attribute => ("\u{FFFD}", 1),
                0 => ("", 1),
                0xC2 if bytes.get(i + 1) == Some(&0xA0) => ("&nbsp;", 2),
                _ => {
                    i += 1;
                    continue;
                }
            };
            self.write(&s[from..i]);
            self.write(replacement);
            i += len;
            from = i;
        }
        self.write(&s[from..]);
    }

    fn text(&mut self, s: &str) {
        self.escaped(s, false);
    }

    /// Writes ` name="value"`.
    fn attribute(&mut self, name: &str, value: &str) {
        self.write(" ");
        self.write(name);
        self.write("=\"");
        self.escaped(value, true);
        self.write("\"");
    }

    fn footnote_number(&mut self, name: CowStr<'a>) -> usize {
        let next = self.numbers.len() + 1;
        *self.numbers.entry(name).or_insert(next)
    }

    fn event(&mut self, step: Step<'a>, steps: &mut impl Iterator<Item = Step<'a>>) {
        match step.event {
            Event::Start(Tag::Image {
                dest_url, title, ..
            }) => {
                let alt = self.alt_text(steps);
                self.write("<img");
                let src = href_value(&dest_url);
                if url_allowed(&src)
                    && let Some(src) = filter_attribute("img", "src", &src)
                {
                    self.attribute("src", &src);
                }
                self.attribute("alt", &alt);
                if !title.is_empty() {
                    self.attribute("title", &title);
                }
                self.write(">");
            }
            Event::Start(tag) => {
                if counts(&tag) {
                    self.depth += 1;
                }
                self.start(tag);
            }
            Event::End(tag) => {
                if counts_end(&tag) {
                    if let Some(group) = &mut self.group
                        && self.depth <= group.depth
                    {
                        // The group closes Markdown it did not open.
                        group.trivial = false;
                    }
                    self.depth = self.depth.saturating_sub(1);
                }
                self.end(tag);
            }
            Event::Text(text) => {
                if !self.metadata {
                    self.text(&text);
                }
            }
            Event::Code(text) => {
                self.write("<code>");
                self.text(&text);
                self.write("</code>");
            }
            Event::InlineMath(text) | Event::DisplayMath(text) => {
                self.write("<span>");
                self.text(&text);
                self.write("</span>");
            }
            Event::Html(html) | Event::InlineHtml(html) => self.raw(&html, step.raw_balanced),
            Event::SoftBreak => self.write("\n"),
            Event::HardBreak => self.write("<br>\n"),
            Event::Rule => self.line("<hr>\n"),
            Event::FootnoteReference(name) => {
                self.write("<sup class=\"footnote-reference\"><a");
                if let Some(href) = safe_href(&format!("#{name}")) {
                    self.attribute("href", &href);
                }
                self.write(" rel=\"noopener noreferrer\">");
                let number = self.footnote_number(name);
                self.write(&number.to_string());
                self.write("</a></sup>");
            }
            Event::TaskListMarker(checked) => self.write(if checked {
                "<input disabled=\"\" type=\"checkbox\" checked=\"\">\n"
            } else {
                "<input disabled=\"\" type=\"checkbox\">\n"
            }),
        }
    }

    fn start(&mut self, tag: Tag<'a>) {
        match tag {
            Tag::HtmlBlock | Tag::Image { .. } => {}
            Tag::Paragraph => self.line("<p>"),
            // Heading ids, classes and attributes need an option that is not enabled.
            Tag::Heading { level, .. } => self.line(&format!("<{level}>")),
            Tag::Table(alignments) => {
                self.alignments = alignments;
                self.write("<table>");
            }
            Tag::TableHead => {
                self.table_head = true;
                self.cell = 0;
                self.write("<thead><tr>");
            }
            Tag::TableRow => {
                self.cell = 0;
                self.write("<tr>");
            }
            Tag::TableCell => {
                self.write(if self.table_head { "<th" } else { "<td" });
                // The alignment as `align`: a `style` would be refused by the page's CSP.
                self.write(match self.alignments.get(self.cell) {
                    Some(Alignment::Left) => " align=\"left\">",
                    Some(Alignment::Center) => " align=\"center\">",
                    Some(Alignment::Right) => " align=\"right\">",
                    _ => ">",
                });
            }
            // An alert's class needs an option that is not enabled (and is not kept).
            Tag::BlockQuote(_) => self.line("<blockquote>\n"),
            Tag::CodeBlock(kind) => {
                if !self.end_newline {
                    self.write("\n");
                }
                let lang = match &kind {
                    CodeBlockKind::Fenced(info) => info.split(' ').next().unwrap_or_default(),
                    CodeBlockKind::Indented => "",
                };
                let class = format!("language-{lang}");
                match filter_attribute("code", "class", &class).filter(|_| !lang.is_empty()) {
                    Some(class) => {
                        self.write("<pre><code");
                        self.attribute("class", &class);
                        self.write(">");
                    }
                    None => self.write("<pre><code>"),
                }
            }
            Tag::List(Some(1)) => self.line("<ol>\n"),
            Tag::List(Some(start)) => self.line(&format!("<ol start=\"{start}\">\n")),
            Tag::List(None) => self.line("<ul>\n"),
            Tag::Item => self.line("<li>"),
            Tag::DefinitionList => self.line("<dl>\n"),
            Tag::DefinitionListTitle => self.line("<dt>"),
            Tag::DefinitionListDefinition => self.line("<dd>"),
            Tag::Subscript => self.write("<sub>"),
            Tag::Superscript => self.write("<sup>"),
            Tag::Emphasis => self.write("<em>"),
            Tag::Strong => self.write("<strong>"),
            Tag::Strikethrough => self.write("<del>"),
            Tag::Link {
                link_type,
                dest_url,
                title,
                ..
            } => {
                let mut href = href_value(&dest_url);
                if link_type == LinkType::Email {
                    href.insert_str(0, "mailto:");
                }
                self.write("<a");
                if let Some(href) = safe_href(&href) {
                    self.attribute("href", &href);
                }
                if !title.is_empty() {
                    self.attribute("title", &title);
                }
                self.write(" rel=\"noopener noreferrer\">");
            }
            Tag::FootnoteDefinition(name) => {
                self.line("<div class=\"footnote-definition\"");
                let id = if name.starts_with(super::ID_PREFIX) {
                    name.to_string()
                } else {
                    format!("{}{name}", super::ID_PREFIX)
                };
                self.attribute("id", &id);
                self.write("><sup class=\"footnote-definition-label\">");
                let number = self.footnote_number(name);
                self.write(&number.to_string());
                self.write("</sup>");
            }
            Tag::MetadataBlock(_) => self.metadata = true,
        }
    }

    fn end(&mut self, tag: TagEnd) {
        let html = match tag {
            TagEnd::HtmlBlock | TagEnd::Image => "",
            TagEnd::Paragraph => "</p>\n",
            TagEnd::Heading(level) => {
                self.write(&format!("</{level}>\n"));
                ""
            }
            TagEnd::Table => "</tbody></table>\n",
            TagEnd::TableHead => {
                self.table_head = false;
                "</tr></thead><tbody>\n"
            }
            TagEnd::TableRow => "</tr>\n",
            TagEnd::TableCell => {
                self.cell += 1;
                if self.table_head { "</th>" } else { "</td>" }
            }
            TagEnd::BlockQuote(_) => "</blockquote>\n",
            TagEnd::CodeBlock => "</code></pre>\n",
            TagEnd::List(true) => "</ol>\n",
            TagEnd::List(false) => "</ul>\n",
            TagEnd::Item => "</li>\n",
            TagEnd::DefinitionList => "</dl>\n",
            TagEnd::DefinitionListTitle => "</dt>\n",
            TagEnd::DefinitionListDefinition => "</dd>\n",
            TagEnd::Emphasis => "</em>",
            TagEnd::Superscript => "</sup>",
            TagEnd::Subscript => "</sub>",
            TagEnd::Strong => "</strong>",
            TagEnd::Strikethrough => "</del>",
            TagEnd::Link => "</a>",
            TagEnd::FootnoteDefinition => "</div>\n",
            TagEnd::MetadataBlock(_) => {
                self.metadata = false;
                ""
            }
        };
        self.write(html);
    }

    /// An image's description, as text: its events up to the image's end.
    fn alt_text(&mut self, steps: &mut impl Iterator<Item = Step<'a>>) -> String {
        let mut alt = String::new();
        let mut nest = 0usize;
        for step in steps.by_ref() {
            match step.event {
                Event::Start(_) => nest += 1,
                Event::End(_) => {
                    if nest == 0 {
                        break;
                    }
                    nest -= 1;
                }
                Event::Html(_) => {}
                Event::InlineHtml(text) | Event::Code(text) | Event::Text(text) => {
                    alt.push_str(&text);
                }
                Event::InlineMath(text) => {
                    let _ = write!(alt, "${text}$");
                }
                Event::DisplayMath(text) => {
                    let _ = write!(alt, "$${text}$$");
                }
                Event::SoftBreak | Event::HardBreak | Event::Rule => alt.push(' '),
                Event::FootnoteReference(name) => {
                    let number = self.footnote_number(name);
                    let _ = write!(alt, "[{number}]");
                }
                Event::TaskListMarker(true) => alt.push_str("[x]"),
                Event::TaskListMarker(false) => alt.push_str("[ ]"),
            }
            if alt.len() > self.limit {
                self.over = true;
                break;
            }
        }
        alt
    }

    /// A raw HTML fragment: into the current group, or a new one.
    fn raw(&mut self, html: &str, balanced: bool) {
        let depth = self.depth;
        let group = self.group.get_or_insert_with(|| Group {
            html: String::new(),
            trivial: true,
            open: Vec::new(),
            depth,
        });
        let trivial = if group.trivial {
            trivial_tags(html, &mut group.open)
        } else {
            None
        };
        group.trivial = trivial.is_some();
        self.write(trivial.as_deref().unwrap_or(html));
        self.end_group(balanced);
    }

    /// Ends the group when it is complete: a trivial group when all it opened is closed, any
    /// group when the raw HTML is `balanced` (or at the end of the document).
    fn end_group(&mut self, balanced: bool) {
        let Some(group) = &self.group else {
            return;
        };
        let trivial = group.trivial && group.open.is_empty() && self.depth == group.depth;
        if !(trivial || balanced) {
            return;
        }
        let Some(group) = self.group.take() else {
            return;
        };
        if trivial {
            self.out.push_str(&group.html);
        } else {
            push_separator(&mut self.batch, self.chunk_ends.len());
            self.chunk_ends.push(self.out.len());
            self.batch.push_str(&group.html);
        }
    }
}

/// Whether the Markdown element `tag` opens writes a tag (and counts in [`Writer::depth`]).
fn counts(tag: &Tag) -> bool {
    !matches!(
        tag,
        Tag::HtmlBlock | Tag::MetadataBlock(_) | Tag::Image { .. }
    )
}

fn counts_end(tag: &TagEnd) -> bool {
    !matches!(
        tag,
        TagEnd::HtmlBlock | TagEnd::MetadataBlock(_) | TagEnd::Image
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests;
