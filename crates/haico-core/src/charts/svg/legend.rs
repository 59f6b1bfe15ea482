//! The legend: a column of colour swatches and names at the right of the chart.

use super::{
    TEXT_COLOR,
    escape::{chars_fitting, num, text_width, truncate},
    geometry::Rect,
    writer::Svg,
};

const FONT: f64 = 12.0;
const ROW: f64 = 20.0;
const SWATCH: f64 = 12.0;
const GAP: f64 = 6.0;
const MIN_WIDTH: f64 = 60.0;
const MAX_WIDTH: f64 = 200.0;

/// One legend entry: what it names and its colour (already validated).
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub label: String,
    pub color: String,
}

/// The width a legend for these names takes (long names are truncated to fit).
pub fn width<'a>(names: impl Iterator<Item = &'a str>) -> f64 {
    let widest = names.map(|n| text_width(n, FONT)).fold(0.0, f64::max);
    (SWATCH + GAP + widest + 4.0).clamp(MIN_WIDTH, MAX_WIDTH)
}

/// Draws `items` top-down in `area`; what does not fit is summed up as "+N more".
pub fn draw(svg: &mut Svg, area: Rect, items: &[Item]) {
    let rows = ((area.h / ROW).floor() as usize).max(1);
    let shown = if items.len() > rows {
        rows - 1
    } else {
        items.len()
    };
    let fits = chars_fitting(area.w - SWATCH - GAP, FONT);
    svg.open(
        "g",
        &[
            ("class", "legend"),
            ("font-size", &num(FONT)),
            ("fill", TEXT_COLOR),
        ],
    );
    for (i, item) in items.iter().take(shown).enumerate() {
        let y = area.y + i as f64 * ROW;
        svg.empty(
            "rect",
            &[
                ("x", &num(area.x)),
                ("y", &num(y)),
                ("width", &num(SWATCH)),
                ("height", &num(SWATCH)),
                ("rx", "2"),
                ("fill", &item.color),
            ],
        );
        let attrs = [
            ("x", num(area.x + SWATCH + GAP)),
            ("y", num(y + SWATCH - 2.0)),
        ];
        let attrs: Vec<(&str, &str)> = attrs.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let shown_label = truncate(&item.label, fits);
        if shown_label == item.label {
            svg.text("text", &attrs, &item.label);
        } else {
            svg.text_with_tooltip(&attrs, &shown_label, &item.label);
        }
    }
    if shown < items.len() {
        let y = area.y + shown as f64 * ROW;
        svg.text(
            "text",
            &[("x", &num(area.x)), ("y", &num(y + SWATCH - 2.0))],
            &format!("+{} more", items.len() - shown),
        );
    }
    svg.close("g");
}
