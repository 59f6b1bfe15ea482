//! Adversarial shapes render in linear time, deep nesting and oversized output are bounded, and
//! a stopped render stops at once.

use super::*;

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
    let html =
        to_safe_html("<details>\n<summary>More</summary>\n\nInside *it*.\n\n</details>\n\nAfter.");
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
