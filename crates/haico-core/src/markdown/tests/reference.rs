//! The renderer writes Markdown's own HTML exactly as the sanitiser would have left it, and raw
//! HTML renders as before.

use super::*;

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
