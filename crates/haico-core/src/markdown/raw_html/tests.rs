//! Unit tests of the raw-HTML tokenizer model: what counts as open, what is shown as text.

use super::*;

fn filter(raw: &mut RawHtml, html: &str) -> String {
    raw.filter(CowStr::from(html.to_string()), Depth::default())
        .to_string()
}

#[test]
fn ordinary_html_is_untouched() {
    let mut raw = RawHtml::default();
    let html = "<div class=\"a>b\" title='x'><b>bold</b><br><img src=x /></div><!-- <b> -->";
    assert_eq!(filter(&mut raw, html), html);
    assert!(raw.open.is_empty(), "{:?}", raw.open);
}

#[test]
fn nesting_beyond_the_limit_is_text() {
    let mut raw = RawHtml::default();
    let html = filter(&mut raw, &"<div>".repeat(MAX_OPEN + 3));
    assert_eq!(html.matches("&lt;div>").count(), 3, "{html}");
    assert_eq!(raw.open.len(), MAX_OPEN);
}

#[test]
fn unfinished_constructs_are_text() {
    for (fragment, expected) in [
        ("a <div title=\"x", "a &lt;div title=\"x"),
        ("<!-- open", "&lt;!-- open"),
        ("x <", "x &lt;"),
        ("<div title=\"<b>", "&lt;div title=\"<b>"),
    ] {
        let mut raw = RawHtml::default();
        assert_eq!(filter(&mut raw, fragment), expected);
    }
}

#[test]
fn a_quote_inside_a_name_is_no_value() {
    // `"` in an attribute name is part of the name: the `>` ends the tag.
    let mut raw = RawHtml::default();
    filter(&mut raw, "<div a\"b><i>");
    assert_eq!(raw.open.len(), 2);
}

#[test]
fn raw_text_hides_tags_until_its_end_tag() {
    let mut raw = RawHtml::default();
    filter(&mut raw, "<style><div><div>");
    filter(&mut raw, "</div></style><b>");
    let names: Vec<&str> = raw.open.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(names, ["b"]);
    // A script's double-escaped `</script>` does not end it.
    let mut raw = RawHtml::default();
    filter(&mut raw, "<script><!--<script></script><div></script><i>");
    let names: Vec<&str> = raw.open.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(names, ["i"]);
}

#[test]
fn refused_elements_are_text() {
    let mut raw = RawHtml::default();
    assert_eq!(filter(&mut raw, "<svg><p>"), "&lt;svg><p>");
}

#[test]
fn containers_close_what_was_opened_inside_them() {
    let mut raw = RawHtml::default();
    let outer = Depth {
        all: 1,
        containers: 1,
    };
    let inner = Depth {
        all: 3,
        containers: 2,
    };
    raw.filter(CowStr::from("<div>"), outer);
    raw.filter(CowStr::from("<table><b>"), inner);
    // The paragraph ends: the formatting element closes, and what sits above it.
    assert_eq!(
        raw.closing(Depth {
            all: 2,
            containers: 2
        }),
        Some("</b>".to_string())
    );
    // The inner container ends.
    assert_eq!(raw.closing(outer), Some("</table>".to_string()));
    assert_eq!(raw.closing(outer), None);
}
