//! Markdown to HTML that is safe to put into the web UI's page.
//!
//! [`to_safe_html`] renders CommonMark plus the GitHub extensions people write in documents
//! (tables, strikethrough, task lists, footnotes) with `pulldown-cmark`. Markdown may hold raw
//! HTML, and both the document and the agent's answers are text a model or another user
//! wrote, so sanitising is not optional: whatever comes out has no scripts, no styles, no
//! event-handler attributes, no frames or forms, and no `javascript:`/`data:` URLs. Raw HTML
//! goes through `ammonia`, an allow-list sanitiser built on a browser-grade HTML parser; the
//! HTML Markdown itself produces (escaped text in a fixed set of elements) is written as that
//! sanitiser would leave it, with the same checks on its URLs, ids and classes, without
//! parsing it again (`writer` says how, and why it is safe).
//!
//! What is kept beyond ammonia's defaults:
//! - links to `http`, `https` and `mailto` URLs (and relative ones), with
//!   `rel="noopener noreferrer"`;
//! - images only from absolute `http`/`https` URLs;
//! - task-list checkboxes, always `disabled`;
//! - footnotes: the classes pulldown-cmark gives them and their ids, prefixed with
//!   [`ID_PREFIX`] (also in `#…` links) so a document cannot shadow the page's own ids;
//! - a `language-…` class on `<code>`, for highlighting;
//! - table column alignment, as the `align` attribute (an inline `style` would be both
//!   sanitised away and refused by the page's Content-Security-Policy).
//!
//! Rendering is bounded, so its time grows linearly with the input whatever the input is
//! (`bounds` and `raw_html` say how): nesting deeper than [`MAX_DEPTH`] Markdown or
//! [`MAX_RAW_OPEN`] raw HTML elements is shown as text; a render whose HTML outgrows
//! [`output_limit`] keeps the blocks that fit and shows the rest of the Markdown as written;
//! and [`to_safe_html_until`] stops as soon as its caller no longer wants the result.

mod bounds;
mod raw_html;
mod writer;

use std::{borrow::Cow, collections::HashSet, sync::LazyLock};

use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd, html};

pub use bounds::MAX_DEPTH;
use bounds::{Bounded, Progress};
pub use raw_html::MAX_OPEN as MAX_RAW_OPEN;

/// Prefix of every `id` in rendered HTML, and of every in-page `#…` link target.
pub const ID_PREFIX: &str = "md-";

/// URL schemes a link may use.
const LINK_SCHEMES: [&str; 3] = ["http", "https", "mailto"];

/// The Markdown extensions the renderer understands.
fn options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_FOOTNOTES
}

/// The sanitiser, configured once.
static SANITIZER: LazyLock<ammonia::Builder<'static>> = LazyLock::new(|| {
    let mut builder = ammonia::Builder::default();
    builder
        .url_schemes(HashSet::from(LINK_SCHEMES))
        .link_rel(Some("noopener noreferrer"))
        .strip_comments(true)
        .id_prefix(Some(ID_PREFIX))
        // Task lists.
        .add_tags(["input"])
        .add_tag_attributes("input", ["type", "checked", "disabled"])
        .set_tag_attribute_value("input", "type", "checkbox")
        .set_tag_attribute_value("input", "disabled", "")
        // Footnotes.
        .add_tag_attributes("div", ["id"])
        .add_allowed_classes("div", ["footnote-definition"])
        .add_allowed_classes("sup", ["footnote-reference", "footnote-definition-label"])
        // Code blocks' language, filtered below.
        .add_tag_attributes("code", ["class"])
        .attribute_filter(filter_attribute);
    builder
});

/// Per-attribute rules ammonia's allow-lists cannot express. Runs after the scheme check, so
/// URLs seen here already use an allowed scheme or are relative.
fn filter_attribute<'u>(element: &str, attribute: &str, value: &'u str) -> Option<Cow<'u, str>> {
    match (element, attribute) {
        ("img", "src") => {
            let lower = value.trim_start().to_ascii_lowercase();
            (lower.starts_with("https://") || lower.starts_with("http://"))
                .then_some(Cow::Borrowed(value))
        }
        ("a", "href") => match value.strip_prefix('#') {
            Some(target) if !target.starts_with(ID_PREFIX) => {
                Some(Cow::Owned(format!("#{ID_PREFIX}{target}")))
            }
            _ => Some(Cow::Borrowed(value)),
        },
        ("code", "class") => {
            let kept: Vec<&str> = value
                .split_ascii_whitespace()
                .filter(|class| {
                    class.strip_prefix("language-").is_some_and(|lang| {
                        !lang.is_empty()
                            && lang.len() <= 40
                            && lang
                                .bytes()
                                .all(|b| b.is_ascii_alphanumeric() || b"+#._-".contains(&b))
                    })
                })
                .collect();
            (!kept.is_empty()).then(|| Cow::Owned(kept.join(" ")))
        }
        _ => Some(Cow::Borrowed(value)),
    }
}

/// Renders `markdown` to HTML and sanitises it: the result can be assigned to `innerHTML`.
pub fn to_safe_html(markdown: &str) -> String {
    to_safe_html_until(markdown, &|| false).unwrap_or_default()
}

/// A render given up because its caller said stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the Markdown rendering was cancelled")]
pub struct Cancelled;

/// The most HTML (before sanitising) a render of `markdown_len` bytes may produce: ordinary
/// Markdown makes about 1.5 bytes of HTML per byte, so only inputs built to blow up (a table
/// header of thousands of columns over many one-cell rows, say) reach it.
pub fn output_limit(markdown_len: usize) -> usize {
    markdown_len.saturating_mul(4).saturating_add(256 * 1024)
}

/// [`to_safe_html`] that asks `stop` before every parser event and gives up with
/// [`Cancelled`] as soon as it answers `true` (a request whose client went away).
pub fn to_safe_html_until(markdown: &str, stop: &dyn Fn() -> bool) -> Result<String, Cancelled> {
    let progress = Progress::default();
    let parser = Parser::new_ext(markdown, options()).into_offset_iter();
    let parts = writer::render(
        Bounded::new(markdown, parser, stop, &progress),
        markdown.len() + markdown.len() / 2,
        output_limit(markdown.len()),
    );
    if progress.stopped.get() || stop() {
        return Err(Cancelled);
    }
    let rest = parts.rest_from.and_then(|from| markdown.get(from..));
    let mut safe = parts.assemble(|raw| SANITIZER.clean(&align_table_cells(raw)).to_string());
    if let Some(rest) = rest {
        push_as_written(&mut safe, rest);
    }
    Ok(safe)
}

/// Appends `markdown` as preformatted text, after a line that says why.
fn push_as_written(html: &mut String, markdown: &str) {
    html.push_str(
        "<p><em>The rest is shown as written: rendered, it would be too large.</em></p>\n",
    );
    let events = [
        Event::Start(Tag::CodeBlock(CodeBlockKind::Indented)),
        Event::Text(markdown.into()),
        Event::End(TagEnd::CodeBlock),
    ];
    html::push_html(html, events.into_iter());
}

/// Raw HTML that aligns table cells as pulldown-cmark does, with `style="text-align: …"`,
/// keeps its alignment as `align` (the sanitiser drops style attributes). The renderer writes
/// `align` itself for Markdown tables.
fn align_table_cells(html: &str) -> Cow<'_, str> {
    const STYLE: &str = " style=\"text-align: ";
    if !html.contains(STYLE) {
        return Cow::Borrowed(html);
    }
    Cow::Owned(
        html.replace(" style=\"text-align: left\"", " align=\"left\"")
            .replace(" style=\"text-align: center\"", " align=\"center\"")
            .replace(" style=\"text-align: right\"", " align=\"right\""),
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests;
