//! A minimal SVG writer. Every attribute value and every text node goes through [`escape`], so
//! no caller can emit unescaped markup.

use super::escape::escape;

/// An SVG document being written.
#[derive(Debug, Default)]
pub struct Svg {
    out: String,
}

impl Svg {
    /// An empty document.
    pub fn new() -> Self {
        Self {
            out: String::with_capacity(16 * 1024),
        }
    }

    fn start_tag(&mut self, tag: &str, attrs: &[(&str, &str)]) {
        self.out.push('<');
        self.out.push_str(tag);
        for (name, value) in attrs {
            self.out.push(' ');
            self.out.push_str(name);
            self.out.push_str("=\"");
            self.out.push_str(&escape(value));
            self.out.push('"');
        }
    }

    /// `<tag attrs…>`.
    pub fn open(&mut self, tag: &str, attrs: &[(&str, &str)]) {
        self.start_tag(tag, attrs);
        self.out.push_str(">\n");
    }

    /// `</tag>`.
    pub fn close(&mut self, tag: &str) {
        self.out.push_str("</");
        self.out.push_str(tag);
        self.out.push_str(">\n");
    }

    /// `<tag attrs…/>`.
    pub fn empty(&mut self, tag: &str, attrs: &[(&str, &str)]) {
        self.start_tag(tag, attrs);
        self.out.push_str("/>\n");
    }

    /// `<tag attrs…>text</tag>`.
    pub fn text(&mut self, tag: &str, attrs: &[(&str, &str)], text: &str) {
        self.start_tag(tag, attrs);
        self.out.push('>');
        self.out.push_str(&escape(text));
        self.out.push_str("</");
        self.out.push_str(tag);
        self.out.push_str(">\n");
    }

    /// `<tag attrs…><title>tooltip</title></tag>`: a shape or text with a hover text.
    pub fn with_tooltip(&mut self, tag: &str, attrs: &[(&str, &str)], tooltip: &str) {
        self.start_tag(tag, attrs);
        self.out.push_str("><title>");
        self.out.push_str(&escape(tooltip));
        self.out.push_str("</title></");
        self.out.push_str(tag);
        self.out.push_str(">\n");
    }

    /// `<text attrs…>shown<title>full</title></text>`: text whose full version is a tooltip.
    pub fn text_with_tooltip(&mut self, attrs: &[(&str, &str)], shown: &str, full: &str) {
        self.start_tag("text", attrs);
        self.out.push('>');
        self.out.push_str(&escape(shown));
        self.out.push_str("<title>");
        self.out.push_str(&escape(full));
        self.out.push_str("</title></text>\n");
    }

    /// The finished document.
    pub fn finish(self) -> String {
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::Svg;

    #[test]
    fn escapes_attributes_and_text() {
        let mut svg = Svg::new();
        svg.open("g", &[("class", "a\"b")]);
        svg.text("text", &[("x", "1")], "<b>&");
        svg.with_tooltip("rect", &[("fill", "red")], "it's <x>");
        svg.close("g");
        assert_eq!(
            svg.finish(),
            "<g class=\"a&quot;b\">\n<text x=\"1\">&lt;b&gt;&amp;</text>\n\
             <rect fill=\"red\"><title>it&apos;s &lt;x&gt;</title></rect>\n</g>\n"
        );
    }
}
