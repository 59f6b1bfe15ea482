//! Text and number hygiene for the SVG output: XML escaping, removal of characters XML
//! cannot carry, truncation, and deterministic number formatting.

/// Escapes `text` for XML element content and (double- or single-quoted) attribute values.
/// Characters XML 1.0 forbids (most C0 controls, U+FFFE, U+FFFF) become U+FFFD, so any input
/// yields well-formed XML.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Tabs and line breaks are legal, but attribute normalisation would change them.
            '\t' | '\n' | '\r' => out.push_str("&#32;"),
            c if is_forbidden_in_xml(c) => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

fn is_forbidden_in_xml(c: char) -> bool {
    matches!(c, '\u{0}'..='\u{8}' | '\u{B}' | '\u{C}' | '\u{E}'..='\u{1F}' | '\u{FFFE}' | '\u{FFFF}')
}

/// One line of text: runs of whitespace (line breaks included) become single spaces.
pub fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `text` cut to at most `max` characters (code points), ending in `…` when cut.
pub fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    if max == 0 {
        return String::new();
    }
    let mut out: String = text.chars().take(max - 1).collect();
    out.truncate(out.trim_end().len());
    out.push('…');
    out
}

/// Estimated width of `text` in pixels at `font_size` (an average glyph is ~0.6 em wide).
pub fn text_width(text: &str, font_size: f64) -> f64 {
    text.chars().count() as f64 * font_size * 0.6
}

/// How many characters fit in `width` pixels at `font_size`.
pub fn chars_fitting(width: f64, font_size: f64) -> usize {
    let n = (width / (font_size * 0.6)).floor();
    if n.is_finite() && n > 0.0 {
        n as usize
    } else {
        0
    }
}

/// A coordinate for an attribute: at most two decimals, no trailing zeros, no `-0`, and `0`
/// for anything not finite. The same number always prints the same way.
pub fn num(value: f64) -> String {
    if !value.is_finite() {
        return "0".to_string();
    }
    let mut text = format!("{value:.2}");
    if text.contains('.') {
        let trimmed = text.trim_end_matches('0').trim_end_matches('.').len();
        text.truncate(trimmed);
    }
    if text == "-0" {
        text = "0".to_string();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            escape(r#"<script>alert("x") & 'y'</script>"#),
            "&lt;script&gt;alert(&quot;x&quot;) &amp; &apos;y&apos;&lt;/script&gt;"
        );
        assert_eq!(escape("plain ünïcode 👋"), "plain ünïcode 👋");
        assert_eq!(escape("&amp;"), "&amp;amp;");
    }

    #[test]
    fn replaces_characters_xml_cannot_carry() {
        assert_eq!(
            escape("a\u{0}b\u{1b}c\u{FFFF}"),
            "a\u{FFFD}b\u{FFFD}c\u{FFFD}"
        );
        assert_eq!(escape("a\nb\tc"), "a&#32;b&#32;c");
    }

    #[test]
    fn truncates_by_code_points() {
        assert_eq!(truncate("short", 10), "short");
        assert_eq!(truncate("exactly10!", 10), "exactly10!");
        assert_eq!(truncate("a longer label", 8), "a longe…");
        assert_eq!(truncate("ab cd", 4), "ab…");
        assert_eq!(truncate("👋👋👋👋", 3), "👋👋…");
        assert_eq!(truncate("x", 0), "");
        assert_eq!(one_line("a\n b\t\tc "), "a b c");
    }

    #[test]
    fn formats_numbers_deterministically() {
        assert_eq!(num(1.0), "1");
        assert_eq!(num(1.5), "1.5");
        assert_eq!(num(1.234_567), "1.23");
        assert_eq!(num(-0.001), "0");
        assert_eq!(num(-2.5), "-2.5");
        assert_eq!(num(f64::NAN), "0");
        assert_eq!(num(f64::INFINITY), "0");
        assert_eq!(num(100.0), "100");
    }

    #[test]
    fn estimates_text_widths() {
        assert!((text_width("abcde", 10.0) - 30.0).abs() < 1e-9);
        assert_eq!(chars_fitting(60.0, 10.0), 10);
        assert_eq!(chars_fitting(-5.0, 10.0), 0);
    }
}
