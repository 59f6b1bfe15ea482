//! Unit tests of the writer: the href table, trivial groups, escaping, separators.

use super::*;

#[test]
fn the_href_table_is_pulldown_cmarks() {
    let all: String = (1u8..0x80).map(char::from).collect::<String>() + "é";
    let mut expected = String::new();
    pulldown_cmark::html::push_html(
        &mut expected,
        [Event::Start(Tag::Link {
            link_type: LinkType::Inline,
            dest_url: all.clone().into(),
            title: "".into(),
            id: "".into(),
        })]
        .into_iter(),
    );
    let decoded = expected.replace("&#x27;", "'").replace("&amp;", "&");
    assert_eq!(decoded, format!("<a href=\"{}\">", href_value(&all)));
}

#[test]
fn trivial_tags_are_bare_and_balanced() {
    for html in [
        "<div>",
        "</div>",
        "<b>x</b>",
        "<br><br/><br />",
        "a &amp; b > c",
        "<DIV></div>",
    ] {
        let mut open = vec!["div".to_string()];
        assert!(trivial_tags(html, &mut open).is_some(), "{html}");
    }
    for html in [
        "<div class=x>",
        "</b>",
        "<a>",
        "<img>",
        "<script>",
        "<style>",
        "<textarea>",
        "<!-- x -->",
        "a < b",
        "<div",
        "<svg>",
        "<input>",
        "</br>",
    ] {
        let mut open = vec!["div".to_string()];
        assert!(trivial_tags(html, &mut open).is_none(), "{html}");
    }
}

#[test]
fn trivial_text_is_escaped_as_the_sanitiser_would() {
    let mut open = Vec::new();
    assert_eq!(
        trivial_tags("<DIV>a > b &lt;div><BR /></div>", &mut open).unwrap(),
        "<div>a &gt; b &lt;div&gt;<br></div>"
    );
    assert!(open.is_empty());
}

#[test]
fn separators_are_replaced_once_and_in_order() {
    let parts = Parts {
        out: "AB".into(),
        chunk_ends: vec![1, 2],
        batch: String::new(),
        rest_from: None,
    };
    let html = parts.assemble(|_| "\u{E000}\"1\"x\u{E000}\"0\"y\u{E000}\"1\"z".to_string());
    // `1` before `0` is not taken; the real `1` is.
    assert_eq!(html, "\u{E000}\"1\"xAyBz");
    let parts = Parts {
        out: "AB".into(),
        chunk_ends: vec![1, 2],
        batch: String::new(),
        rest_from: None,
    };
    // Stretches whose separators were removed are kept, at the end.
    assert_eq!(parts.assemble(|_| "x".to_string()), "xAB");
}
