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
mod tests {
    use super::*;

    /// The tags of `html` (`<…>` outside quoted attribute values), lower-cased. Text between
    /// tags is escaped by the serializer, so it cannot hold markup.
    fn tags(html: &str) -> Vec<String> {
        let mut tags = Vec::new();
        let mut current: Option<String> = None;
        let mut quote: Option<char> = None;
        for c in html.chars() {
            match (&mut current, quote) {
                (None, _) if c == '<' => current = Some(String::new()),
                (None, _) => {}
                (Some(tag), Some(q)) => {
                    tag.push(c);
                    if c == q {
                        quote = None;
                    }
                }
                (Some(tag), None) => match c {
                    '>' => {
                        tags.push(tag.to_ascii_lowercase());
                        current = None;
                    }
                    '"' | '\'' => {
                        tag.push(c);
                        quote = Some(c);
                    }
                    _ => tag.push(c),
                },
            }
        }
        assert!(current.is_none(), "unterminated tag in {html:?}");
        tags
    }

    /// Asserts that nothing in `html` can run script, style the page, frame content or
    /// submit anything: only allowed elements, no event handlers, no style attributes, no
    /// script-capable URLs.
    #[track_caller]
    fn assert_inert(html: &str) {
        const FORBIDDEN_ELEMENTS: [&str; 16] = [
            "script", "style", "iframe", "frame", "frameset", "object", "embed", "svg", "math",
            "form", "link", "meta", "base", "template", "noscript", "button",
        ];
        for tag in tags(html) {
            let name: String = tag
                .trim_start_matches('/')
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == ':')
                .collect();
            assert!(
                !FORBIDDEN_ELEMENTS.contains(&name.as_str()),
                "<{name}> survived in {html:?}"
            );
            for needle in [
                "javascript:",
                "vbscript:",
                "data:",
                "style=",
                "srcdoc",
                "formaction",
                "xlink:",
            ] {
                assert!(
                    !tag.contains(needle),
                    "`{needle}` survived in <{tag}> of {html:?}"
                );
            }
            // No event-handler attribute of any name (`onerror`, `onload`…).
            for attribute in attribute_names(&tag[name.len()..]) {
                assert!(
                    !attribute.starts_with("on"),
                    "event handler `{attribute}` survived in <{tag}> of {html:?}"
                );
            }
        }
    }

    /// The attribute names of a tag's rest (after its name), skipping quoted values.
    fn attribute_names(rest: &str) -> Vec<String> {
        let mut names = Vec::new();
        let mut chars = rest.chars().peekable();
        while let Some(&c) = chars.peek() {
            if c.is_whitespace() || c == '/' {
                chars.next();
                continue;
            }
            let mut name = String::new();
            while let Some(&c) = chars.peek() {
                if c.is_whitespace() || c == '=' || c == '/' {
                    break;
                }
                name.push(c);
                chars.next();
            }
            if chars.peek() == Some(&'=') {
                chars.next();
                match chars.peek().copied() {
                    Some(q @ ('"' | '\'')) => {
                        chars.next();
                        for c in chars.by_ref() {
                            if c == q {
                                break;
                            }
                        }
                    }
                    _ => {
                        while chars.peek().is_some_and(|c| !c.is_whitespace()) {
                            chars.next();
                        }
                    }
                }
            }
            names.push(name);
        }
        names
    }

    #[test]
    fn the_checker_catches_active_content() {
        for active in [
            "<script>x</script>",
            "<img src=x onerror=alert(1)>",
            "<img title=\"a>b\" onload=x>",
            "<a href=\"javascript:x\">",
            "<p style=\"x\">",
            "<svg onload=x>",
            "<iframe src=x>",
        ] {
            let caught = std::panic::catch_unwind(|| assert_inert(active)).is_err();
            assert!(caught, "the checker missed {active}");
        }
        // Words in attribute values and text are not markup.
        assert_inert("<p title=\"one=1 onload=x\">on= javascript: &lt;script&gt;</p>");
    }

    #[test]
    fn script_tags_are_removed_with_their_content() {
        let html =
            to_safe_html("Hello <script>alert(1)</script> world\n\n<script>\nalert(2)\n</script>");
        assert_inert(&html);
        assert!(!html.contains("alert"), "{html}");
        assert!(html.contains("Hello"), "{html}");
    }

    #[test]
    fn event_handlers_are_removed() {
        for attack in [
            "<img src=x onerror=alert(1)>",
            "<img src=\"https://example.com/a.png\" onerror=\"alert(1)\">",
            "<p onclick=\"alert(1)\">click</p>",
            "<a href=\"https://example.com\" onmouseover=alert(1)>x</a>",
            "<div/onmouseover='alert(1)'>x</div>",
            "<body onload=alert(1)>",
            "<details open ontoggle=alert(1)>",
            "<input autofocus onfocus=alert(1)>",
        ] {
            let html = to_safe_html(attack);
            assert_inert(&html);
        }
        let html = to_safe_html("<img src=\"https://example.com/a.png\" onerror=\"alert(1)\">");
        assert!(html.contains("src=\"https://example.com/a.png\""), "{html}");
    }

    #[test]
    fn dangerous_link_urls_are_dropped() {
        for attack in [
            "[x](javascript:alert(1))",
            "[x](JaVaScRiPt:alert(1))",
            "[x](javascript&#58;alert(1))",
            "[x](  javascript:alert(1))",
            "[x](java\tscript:alert(1))",
            "[x](vbscript:msgbox(1))",
            "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
            "<a href=\"javascript:alert(1)\">x</a>",
            "<a href=\"&#106;avascript:alert(1)\">x</a>",
            "<a href=\"jav&#x09;ascript:alert(1)\">x</a>",
            "<javascript:alert(1)>",
            "[x]\n\n[x]: javascript:alert(1)",
        ] {
            let html = to_safe_html(attack);
            assert_inert(&html);
        }
    }

    #[test]
    fn frames_svg_math_forms_and_styles_are_removed() {
        for attack in [
            "<iframe src=\"https://evil.example\"></iframe>",
            "<iframe srcdoc=\"<script>alert(1)</script>\"></iframe>",
            "<svg onload=alert(1)><circle r=1 /></svg>",
            "<svg><script>alert(1)</script></svg>",
            "<svg><a xlink:href=\"javascript:alert(1)\"><text>x</text></a></svg>",
            "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)></style></mglyph></table></mtext></math>",
            "<style>body { display: none }</style>",
            "<p style=\"position:fixed;inset:0\">cover</p>",
            "<object data=\"x.swf\"></object><embed src=\"x.swf\">",
            "<form action=\"https://evil.example\"><button formaction=\"javascript:alert(1)\">go</button></form>",
            "<link rel=stylesheet href=\"https://evil.example/x.css\">",
            "<meta http-equiv=\"refresh\" content=\"0;url=javascript:alert(1)\">",
            "<base href=\"https://evil.example/\">",
            "<template><script>alert(1)</script></template>",
            "<noscript><p title=\"</noscript><img src=x onerror=alert(1)>\"></noscript>",
            "<!-- <img src=x onerror=alert(1)> -->",
        ] {
            let html = to_safe_html(attack);
            assert_inert(&html);
        }
    }

    #[test]
    fn images_only_from_http_and_https() {
        let html = to_safe_html("![ok](https://example.com/a.png)");
        assert!(
            html.contains("<img src=\"https://example.com/a.png\" alt=\"ok\""),
            "{html}"
        );
        let html = to_safe_html("![ok](http://example.com/a.png)");
        assert!(html.contains("src=\"http://example.com/a.png\""), "{html}");
        for blocked in [
            "![x](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+)",
            "![x](javascript:alert(1))",
            "![x](/api/threads/t/document)",
            "![x](//evil.example/a.png)",
            "![x](file:///etc/passwd)",
        ] {
            let html = to_safe_html(blocked);
            assert_inert(&html);
            assert!(!html.contains("src="), "{blocked} kept a source: {html}");
        }
    }

    #[test]
    fn links_keep_safe_urls_and_get_rel() {
        let html = to_safe_html("[site](https://example.com/x?a=1&b=2) and <mailto:a@example.com>");
        assert!(
            html.contains(
                "<a href=\"https://example.com/x?a=1&amp;b=2\" rel=\"noopener noreferrer\">site</a>"
            ),
            "{html}"
        );
        assert!(html.contains("href=\"mailto:a@example.com\""), "{html}");
        // A `rel` or `target` written by hand does not survive.
        let html =
            to_safe_html("<a href=\"https://example.com\" rel=\"opener\" target=\"x\">x</a>");
        assert!(html.contains("rel=\"noopener noreferrer\""), "{html}");
        assert_eq!(html.matches("rel=").count(), 1, "{html}");
        assert!(!html.contains("target"), "{html}");
    }

    #[test]
    fn page_ids_cannot_be_shadowed() {
        let html = to_safe_html("<div id=\"document-view\">x</div>");
        assert!(html.contains("id=\"md-document-view\""), "{html}");
        // `name` clobbers globals on some elements: never kept.
        let html = to_safe_html("<img name=\"getElementById\" src=\"https://example.com/a.png\">");
        assert!(!html.contains("name="), "{html}");
    }

    #[test]
    fn ordinary_markdown_survives() {
        let markdown = "\
# Title

## Section

Some *emphasis*, **strong**, `inline code` and ~~struck~~ text.

- one
- two
  1. nested
  2. list

> a quote

| left | centre | right |
| :--- | :----: | ----: |
| a    | b      | c     |

```rust
fn main() { println!(\"<hi>\"); }
```

- [x] done
- [ ] to do

A claim.[^note]

[^note]: The footnote.

---
";
        let html = to_safe_html(markdown);
        assert_inert(&html);
        for expected in [
            "<h1>Title</h1>",
            "<h2>Section</h2>",
            "<em>emphasis</em>",
            "<strong>strong</strong>",
            "<code>inline code</code>",
            "<del>struck</del>",
            "<ul>",
            "<ol>",
            "<li>nested</li>",
            "<blockquote>",
            "<table>",
            "<thead>",
            "<th align=\"left\">left</th>",
            "<th align=\"center\">centre</th>",
            "<td align=\"right\">c</td>",
            "<pre><code class=\"language-rust\">",
            "fn main() { println!(\"&lt;hi&gt;\"); }",
            "<input disabled=\"\" type=\"checkbox\" checked=\"\">",
            "<input disabled=\"\" type=\"checkbox\">",
            "<sup class=\"footnote-reference\"><a href=\"#md-note\" rel=\"noopener noreferrer\">1</a></sup>",
            "<div class=\"footnote-definition\" id=\"md-note\">",
            "<hr>",
        ] {
            assert!(html.contains(expected), "missing {expected:?} in {html}");
        }
    }

    #[test]
    fn task_list_inputs_are_always_disabled_checkboxes() {
        let html = to_safe_html("<input type=\"text\" value=\"x\"><input type=\"submit\">");
        assert!(!html.contains("text\""), "{html}");
        assert!(!html.contains("submit"), "{html}");
        assert!(!html.contains("value"), "{html}");
        assert_eq!(html.matches("type=\"checkbox\"").count(), 2, "{html}");
        assert_eq!(html.matches("disabled=\"\"").count(), 2, "{html}");
    }

    #[test]
    fn code_classes_are_only_languages() {
        let html =
            to_safe_html("<code class=\"language-js evil\">x</code> <code class=\"x\">y</code>");
        assert!(
            html.contains("<code class=\"language-js\">x</code>"),
            "{html}"
        );
        assert!(html.contains("<code>y</code>"), "{html}");
    }

    /// Inputs of about `bytes` bytes built to be slow to render, by name.
    fn adversarial(bytes: usize) -> Vec<(&'static str, String)> {
        let repeat = |unit: &str| unit.repeat(bytes.div_ceil(unit.len()));
        let columns = bytes / 20;
        let table = format!(
            "{}|\n{}|\n{}",
            "|a".repeat(columns),
            "|-".repeat(columns),
            repeat("|\n")
        );
        vec![
            ("quotes", repeat(">")),
            ("quote_lines", repeat("> ") + "x\n" + &repeat(">\n")),
            ("lists", repeat("- ") + "x"),
            ("ordered_lists", repeat("1. ")),
            ("stars", repeat("*")),
            ("star_words", repeat("*a ")),
            ("emphasis_words", repeat("_a_ ")),
            ("brackets", repeat("[")),
            ("link_openers", repeat("[a](")),
            ("image_openers", repeat("![")),
            ("backticks", repeat("`")),
            ("raw_divs", repeat("<div>")),
            ("raw_inline", repeat("<b title=x>a ")),
            ("raw_table_quotes", repeat("> <table>\n\n")),
            ("table_columns", table),
        ]
    }

    /// Every adversarial shape renders 200 KB in well under two seconds (unoptimised; the old
    /// renderer took minutes on several of them), with bounded output.
    #[test]
    fn adversarial_inputs_render_in_linear_time() {
        for (name, markdown) in adversarial(200_000) {
            let started = std::time::Instant::now();
            let html = to_safe_html(&markdown);
            let took = started.elapsed();
            assert!(took < std::time::Duration::from_secs(2), "{name}: {took:?}");
            assert!(
                html.len() <= 2 * output_limit(markdown.len()),
                "{name}: {} bytes of HTML",
                html.len()
            );
            assert_inert(&html);
        }
    }

    #[test]
    fn deep_quotes_are_bounded_and_keep_their_text() {
        let markdown = format!("{}the end", ">".repeat(50_000));
        let started = std::time::Instant::now();
        let html = to_safe_html(&markdown);
        assert!(
            started.elapsed() < std::time::Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(
            html.matches("<blockquote>").count(),
            MAX_DEPTH,
            "{}",
            &html[..400]
        );
        assert!(html.contains("the end"));
        // The quotes beyond the limit are shown as written.
        assert!(html.matches("&gt;").count() >= 50_000 - MAX_DEPTH - 1);
    }

    #[test]
    fn deep_lists_are_bounded_and_keep_their_text() {
        for marker in ["- ", "1. ", "* "] {
            let markdown = format!("{}item", marker.repeat(20_000));
            let html = to_safe_html(&markdown);
            assert!(html.matches("<li>").count() <= MAX_DEPTH, "{marker}");
            assert!(html.contains("item"), "{marker}");
        }
        let indented: String = (0..300)
            .map(|depth| format!("{}- level {depth}\n", "  ".repeat(depth)))
            .collect();
        let html = to_safe_html(&indented);
        assert!(html.contains("level 0") && html.contains("level 299"));
    }

    #[test]
    fn deep_inline_nesting_is_bounded() {
        let markdown = format!("{}x{}", "*a ".repeat(20_000), " a*".repeat(20_000));
        let html = to_safe_html(&markdown);
        assert!(html.matches("<em>").count() <= MAX_DEPTH, "{}", html.len());
        assert!(html.contains('x'));
        let markdown = format!(
            "{}x{}",
            "[".repeat(20_000),
            "](https://example.com)".repeat(20_000)
        );
        let html = to_safe_html(&markdown);
        assert!(html.matches("<a ").count() <= MAX_DEPTH);
    }

    #[test]
    fn deep_raw_html_is_shown_as_text_beyond_the_limit() {
        let markdown = format!("{}deep", "<div>".repeat(10_000));
        let html = to_safe_html(&markdown);
        assert!(
            html.matches("<div>").count() <= MAX_RAW_OPEN,
            "{}",
            html.matches("<div>").count()
        );
        assert_eq!(html.matches("&lt;div&gt;").count(), 10_000 - MAX_RAW_OPEN);
        assert!(html.contains("deep"));
    }

    #[test]
    fn raw_formatting_ends_with_its_paragraph() {
        let html = to_safe_html("<b title=\"x\">bold\n\nplain\n\nplain");
        assert_eq!(html.matches("<b").count(), 1, "{html}");
        // Raw blocks that span Markdown keep working.
        let html = to_safe_html(
            "<details>\n<summary>More</summary>\n\nInside *it*.\n\n</details>\n\nAfter.",
        );
        let inside = html.find("Inside").unwrap();
        let closed = html.find("</details>").unwrap();
        assert!(
            inside < closed && closed < html.find("After").unwrap(),
            "{html}"
        );
    }

    #[test]
    fn output_beyond_the_budget_is_shown_as_written() {
        let columns = 5_000;
        let markdown = format!(
            "Intro *kept*.\n\n{}|\n{}|\n{}",
            "|a".repeat(columns),
            "|-".repeat(columns),
            "a\n".repeat(20_000)
        );
        let html = to_safe_html(&markdown);
        assert!(html.len() < output_limit(markdown.len()), "{}", html.len());
        assert!(
            html.starts_with("<p>Intro <em>kept</em>.</p>"),
            "{}",
            &html[..200]
        );
        assert!(html.contains("shown as written"));
        // Nothing is lost: the table's source follows, as text.
        assert!(html.contains(&"|a".repeat(columns)));
        assert_eq!(html.matches("a\n").count(), 20_000);
    }

    #[test]
    fn a_stopped_render_stops_at_once() {
        let markdown = "Some *text* and a [link](https://example.com).\n\n".repeat(10_000);
        let asked = std::cell::Cell::new(0);
        let stop = || {
            asked.set(asked.get() + 1);
            asked.get() >= 100
        };
        assert_eq!(to_safe_html_until(&markdown, &stop), Err(Cancelled));
        // Told to stop at the hundredth question, it asked no more.
        assert_eq!(asked.get(), 100);
        // Never told to stop, it renders everything.
        let html = to_safe_html_until(&markdown, &|| false).unwrap();
        assert_eq!(html.matches("<a ").count(), 10_000);
    }

    /// The renderer before it wrote Markdown's HTML itself: pulldown-cmark's HTML of the
    /// bounded events, all of it through the sanitiser.
    fn reference(markdown: &str) -> String {
        let progress = Progress::default();
        let parser = Parser::new_ext(markdown, options()).into_offset_iter();
        let events = Bounded::new(markdown, parser, &|| false, &progress).map(|step| step.event);
        let mut html = String::new();
        html::push_html(&mut html, events);
        SANITIZER.clean(&align_table_cells(&html)).to_string()
    }

    /// Documents as people write them, without raw HTML.
    const ORDINARY: [&str; 6] = [
        "# Title\n\nSetext\n======\n\nSome *emphasis*, **strong**, `code`, ~~struck~~, a\u{a0}non-breaking \
         space, &copy; &amp; &nbsp; &#x27; \"quotes\" and 'apostrophes' < > &.\\\nHard break.  \nAnother.\n\n\
         ---\n\n***\n",
        "- one\n- two\n  1. nested\n  2. list\n\n3. three\n4. four\n\n- [x] done\n- [ ] to do\n\n\
         > a quote\n> > nested\n>\n> - list in quote\n",
        "| left | centre | right | none |\n| :--- | :----: | ----: | --- |\n| a `|` | **b** | [c](https://e.com/c) | \
         ![i](https://e.com/i.png) |\n\n| only head |\n| --- |\n",
        "```rust\nfn main() { println!(\"<hi>\"); }\n```\n\n```c++ extra\nx\n```\n\n```weird\"lang\nx\n```\n\n\
         ```\nplain\n```\n\n    indented\n    code\n\n~~~ language-x\ny\n~~~\n",
        "[inline](https://example.com/a?b=1&c=2 \"A \\\"title\\\"\"), [ref][r], [collapsed][], <https://e.com/auto>, \
         <mail@example.com>, [rel](/docs/x y), [frag](#section-2), [md](#md-x), [q](https://e.com/'q'), \
         [uni](https://e.com/é?x=ü), ![img](https://e.com/a.png \"t\"), ![*alt* `c`](http://e.com/b.png), \
         ![rel](/a.png), [mailto](mailto:a@b.c), [ftp](ftp://e.com/x)\n\n[r]: https://e.com/ref 'Ref title'\n\
         [collapsed]: <https://e.com/c d>\n",
        "A claim.[^note] Another.[^2] Again.[^note]\n\n[^note]: The footnote, with *emphasis*.\n\n\
         [^2]: Second.\n    With a paragraph.\n\n[^md-x]: prefixed\n",
    ];

    #[test]
    fn markdown_without_raw_html_renders_as_the_sanitiser_left_it() {
        let mut documents: Vec<String> = ORDINARY.iter().map(|d| d.to_string()).collect();
        documents.push(ORDINARY.concat().repeat(3));
        for document in documents {
            assert_eq!(to_safe_html(&document), reference(&document), "{document}");
        }
    }

    /// Markdown-only attacks on the attributes the renderer writes itself: the output is what
    /// the sanitiser made of pulldown-cmark's HTML, byte for byte.
    #[test]
    fn attributes_the_renderer_writes_are_checked_as_the_sanitiser_did() {
        for attack in [
            "[x](javascript:alert(1))",
            "[x](JaVaScRiPt:alert(1))",
            "[x](jav&#x61;script:alert(1))",
            "[x](&#x6A;avascript:alert(1))",
            "[x](javascript&#58;alert(1))",
            "[x](  javascript:alert(1))",
            "[x](java\tscript:alert(1))",
            "[x](<java\nscript:alert(1)>)",
            "[x](\u{0}javascript:alert(1))",
            "[x](vbscript:msgbox(1))",
            "[x](data:text/html;base64,PHNjcmlwdD4=)",
            "[x](file:///etc/passwd)",
            "<javascript:alert(1)>",
            "<JAVASCRIPT:alert(1)>",
            "<jav&#x61;script:alert(1)>",
            "<data:text/html,x>",
            "[x]\n\n[x]: javascript:alert(1)",
            "[x][r]\n\n[r]: jav&#x61;script:alert(1) \"t\"",
            "![x](javascript:alert(1))",
            "![x](jav&#x61;script:alert(1))",
            "![x](data:image/svg+xml;base64,PHN2Zz4=)",
            "![x](//evil.example/a.png)",
            "![x](/relative.png)",
            "[x](https://e.com/\"onmouseover=\"alert(1))",
            "[x](<https://e.com/\" onclick=\"alert(1)>)",
            "[x](https://e.com \"t\\\" onclick=\\\"alert(1)\")",
            "[x](https://e.com 't\" onclick=\"alert(1)')",
            "![a\" onerror=\"alert(1)](https://e.com/a.png)",
            "![a](https://e.com/a.png \"\\\" onload=\\\"alert(1)\")",
            "[x][r]\n\n[r]: https://e.com/\" onclick=x \"ti\\\"tle\"",
            "[^a\" onclick=\"x]\n\n[^a\" onclick=\"x]: note",
            "[^<b>]\n\n[^<b>]: note",
            "[a](#\" onclick=\"x)",
            "```js\" onclick=\"alert(1)\nx\n```",
            "```language-js\nx\n```",
            "```<script>\nx\n```",
            "`<script>alert(1)</script>` and **<b>** text &lt;script&gt;",
            "[x](https://e.com/\u{a0}x \"\u{a0}\")",
        ] {
            let html = to_safe_html(attack);
            assert_inert(&html);
            assert_eq!(html, reference(attack), "{attack}");
        }
    }

    /// Documents with raw HTML render as before, up to how the sanitiser writes them.
    #[test]
    fn raw_html_renders_as_before() {
        for document in [
            "Text with <br> a break, <kbd>Ctrl</kbd>, H<sub>2</sub>O and <span title=\"t\">a span</span>.",
            "<details>\n<summary>More</summary>\n\nInside *it*.\n\n</details>\n\nAfter.",
            "<div align=\"center\">\n\n![logo](https://e.com/l.png)\n\n</div>\n\n# Title",
            "<table>\n<tr><td>a</td><td title=\"x\">b</td></tr>\n</table>\n\n*after*",
            "<p onclick=\"x\">para</p>\n\n- item <img src=\"https://e.com/a.png\" onerror=\"x\"> end\n- <b>bold</b>",
            "<!-- a comment -->\n\nText <!-- inline --> more.\n\n<div>\n*not md*\n</div>",
            "> <table>\n\n> <div>\n> quoted\n\n<b title=x>a <b title=x>b\n\nplain",
        ] {
            let html = to_safe_html(document);
            assert_inert(&html);
            assert_eq!(
                SANITIZER.clean(&html).to_string(),
                reference(document),
                "{document}"
            );
        }
    }

    #[test]
    fn raw_html_split_across_markdown_blocks_stays_inert() {
        for attack in [
            "<div>\n\n*md* <img src=x onerror=alert(1)>\n\n</div>",
            "<div title=\"x\">\n\n**b** [l](javascript:alert(1))\n\n</div>\n\n<a href=\"javascript:x\">",
            "<table>\n<tr><td>\n\n*x* <script>alert(1)</script>\n\n</td></tr></table>",
            "<script>\nalert(1)\n\n# heading\n\n[x](https://e.com)\n\n</script>",
            "<style>\n\n* {}\n\n</style>\n\n<textarea>\n\n*x*\n\n</textarea>\n\n<img src=x onerror=alert(1)>",
            "<div>\n\n<div onclick=\"x\">\n\ntext\n\n</div>\n\n</div>\n\n<plaintext>\n\n*x* <b>",
            "- <div>\n- <span onmouseover=x>\n\n  <iframe src=x>\n\n> </div></span><svg onload=x>",
            "<b>\u{E000}\"0\" <i title=\"\u{E000}&quot;1&quot;\">\u{E000}\"1\"</i></b> *md* <u title=y>x</u>",
            "<a title=\"a\nb\" href=\"javascript:x\">x</a>\n\n<div\n\nonclick=x>",
            "<img src=\"https://e.com/a.png\"\n\nonerror=\"alert(1)\">",
        ] {
            let html = to_safe_html(attack);
            assert_inert(&html);
        }
        let html = to_safe_html("<script>\nalert(1)\n\n# heading\n\n</script>\n\n*after*");
        assert!(
            !html.contains("alert") && !html.contains("heading"),
            "{html}"
        );
        assert!(html.contains("<em>after</em>"), "{html}");
        // The Markdown between the raw tags is rendered, inside them.
        let html = to_safe_html("<div>\n\n*x* [l](https://e.com)\n\n</div>\n\nafter");
        assert!(
            html.starts_with("<div>\n<p><em>x</em> <a href=\"https://e.com\""),
            "{html}"
        );
        assert!(html.contains("</p>\n</div>"), "{html}");
        let html = to_safe_html("<div title=\"t\">\n\n*x*\n\n</div>\n\nafter");
        assert!(
            html.starts_with("<div title=\"t\">\n<p><em>x</em></p>\n</div>"),
            "{html}"
        );
    }

    #[test]
    fn raw_html_left_open_is_closed() {
        let html = to_safe_html("<div><span>open\n\n*md*");
        assert_eq!(
            html.matches("<div>").count(),
            html.matches("</div>").count()
        );
        assert_eq!(
            html.matches("<span>").count(),
            html.matches("</span>").count()
        );
        let html = to_safe_html("<div title=a><span>open\n\n*md*");
        assert_eq!(html.matches("<div").count(), html.matches("</div>").count());
        assert!(html.contains("<em>md</em>"), "{html}");
    }

    #[test]
    fn output_past_the_budget_after_raw_html_is_shown_as_written() {
        let columns = 5_000;
        let markdown = format!(
            "<span title=\"t\">kept</span> and <b>kept</b>.\n\n{}|\n{}|\n{}",
            "|a".repeat(columns),
            "|-".repeat(columns),
            "a\n".repeat(20_000)
        );
        let html = to_safe_html(&markdown);
        assert_inert(&html);
        assert!(
            html.starts_with("<p><span title=\"t\">kept</span> and <b>kept</b>.</p>"),
            "{}",
            &html[..200]
        );
        assert!(html.contains("shown as written"));
        assert!(html.contains(&"|a".repeat(columns)));
    }

    #[test]
    fn empty_and_plain_text() {
        assert_eq!(to_safe_html(""), "");
        assert_eq!(to_safe_html("a < b & c"), "<p>a &lt; b &amp; c</p>\n");
    }
}
