//! The renderer's unit tests: what the sanitiser keeps and removes. Bounds and the equivalence
//! with the old pipeline are in `tests/`.
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
        "script", "style", "iframe", "frame", "frameset", "object", "embed", "svg", "math", "form",
        "link", "meta", "base", "template", "noscript", "button",
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
    let html = to_safe_html("<a href=\"https://example.com\" rel=\"opener\" target=\"x\">x</a>");
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
    let html = to_safe_html("<code class=\"language-js evil\">x</code> <code class=\"x\">y</code>");
    assert!(
        html.contains("<code class=\"language-js\">x</code>"),
        "{html}"
    );
    assert!(html.contains("<code>y</code>"), "{html}");
}

mod bounds;
mod reference;
