//! SVG rendering of chart artifacts: [`render`] draws a line, bar or pie chart from its
//! [`ChartPayload`], [`render_artifact`] does the same from a stored artifact.
//!
//! The output is a standalone `image/svg+xml` document with these guarantees:
//! - **inert**: no scripts, no external references, no CSS; only shapes and text;
//! - **escaped**: every text node and attribute value goes through one escaping writer
//!   (`writer::Svg`), so titles and labels like `<script>` or `&` render as text;
//! - **validated colours**: `style.colors` entries are re-checked with [`is_css_color`] and
//!   replaced by the [`PALETTE`] colour of that position when they fail;
//! - **deterministic**: the same payload gives the same bytes (fixed number formatting, no
//!   randomness or clock);
//! - **total**: any payload that deserializes renders without panicking, even one the chart
//!   tool would refuse (missing values become gaps, a pie's negative slices count as 0).
//!
//! Layout: a fixed 800×480 canvas with the title on top; line and bar charts get a value
//! axis with round ticks (0 always inside for bars; the `line` module says when for lines),
//! grid lines, the category labels (rotated and thinned out when they would overlap), axis
//! titles and a legend on the right (shown by default when there is more than one series, and
//! for pies).

mod axes;
mod bar;
mod escape;
mod geometry;
mod legend;
mod line;
mod pie;
mod scale;
mod writer;

use serde::Deserialize;
use serde_json::Value;

use crate::{
    workspace::charts::ChartPayload, workspace::charts::ChartStyle, workspace::charts::ChartType,
    workspace::charts::is_css_color,
};
use escape::{chars_fitting, num, one_line, truncate};
use writer::Svg;

/// Canvas width in pixels.
pub const WIDTH: f64 = 800.0;
/// Canvas height in pixels.
pub const HEIGHT: f64 = 480.0;
/// The colours used when `style.colors` gives none (or an invalid one) for a position.
pub const PALETTE: [&str; 10] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac",
];

const MARGIN: f64 = 16.0;
/// Room for the title above the plot.
const TITLE_BAND: f64 = 48.0;
const TITLE_FONT: f64 = 18.0;
const TEXT_COLOR: &str = "#374151";

/// Why an artifact cannot be drawn.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RenderError {
    /// The artifact is not of a chart type.
    #[error("`{0}` is not a chart type")]
    NotAChart(String),
    /// The payload is not a chart payload.
    #[error("{0}")]
    InvalidPayload(String),
}

/// The chart kind an artifact type stands for (`line_chart` → line, …).
pub fn chart_type_of(artifact_type: &str) -> Option<ChartType> {
    ChartType::from_artifact_type(artifact_type)
}

/// Draws a stored chart artifact.
pub fn render_artifact(artifact_type: &str, payload: &Value) -> Result<String, RenderError> {
    let kind = chart_type_of(artifact_type)
        .ok_or_else(|| RenderError::NotAChart(artifact_type.to_string()))?;
    let chart = ChartPayload::deserialize(payload)
        .map_err(|err| RenderError::InvalidPayload(format!("not a chart payload: {err}")))?;
    Ok(render(kind, &chart))
}

/// Draws a chart as a standalone SVG document.
pub fn render(kind: ChartType, chart: &ChartPayload) -> String {
    let prepared = Prepared::new(kind, chart);
    let mut svg = Svg::new();
    svg.open(
        "svg",
        &[
            ("xmlns", "http://www.w3.org/2000/svg"),
            ("version", "1.1"),
            ("width", &num(WIDTH)),
            ("height", &num(HEIGHT)),
            ("viewBox", &format!("0 0 {} {}", num(WIDTH), num(HEIGHT))),
            ("role", "img"),
            ("class", &format!("haico-chart {}", kind.artifact_type())),
            ("font-family", "sans-serif"),
        ],
    );
    svg.text("title", &[], &prepared.title);
    if let Some(description) = &prepared.description {
        svg.text("desc", &[], description);
    }
    svg.empty(
        "rect",
        &[("width", "100%"), ("height", "100%"), ("fill", "#ffffff")],
    );
    let shown = truncate(
        &prepared.title,
        chars_fitting(WIDTH - 2.0 * MARGIN, TITLE_FONT),
    );
    let attrs = [
        ("class", "title"),
        ("x", &num(WIDTH / 2.0)),
        ("y", &num(MARGIN + TITLE_FONT)),
        ("font-size", &num(TITLE_FONT)),
        ("font-weight", "600"),
        ("fill", "#111827"),
        ("text-anchor", "middle"),
    ];
    if shown == prepared.title {
        svg.text("text", &attrs, &shown);
    } else {
        svg.text_with_tooltip(&attrs, &shown, &prepared.title);
    }
    let drawn = prepared.has_values()
        && match kind {
            ChartType::Line => {
                line::draw(&mut svg, &prepared);
                true
            }
            ChartType::Bar => {
                bar::draw(&mut svg, &prepared);
                true
            }
            ChartType::Pie => pie::draw(&mut svg, &prepared),
        };
    if !drawn {
        svg.text(
            "text",
            &[
                ("class", "no-data"),
                ("x", &num(WIDTH / 2.0)),
                ("y", &num(HEIGHT / 2.0)),
                ("font-size", "14"),
                ("fill", TEXT_COLOR),
                ("text-anchor", "middle"),
            ],
            "No data to draw",
        );
    }
    svg.close("svg");
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    out.push_str(&svg.finish());
    out
}

/// One series, cleaned up for drawing: exactly one slot per label, `None` for a missing or
/// non-finite value.
#[derive(Debug, Clone, PartialEq)]
struct SeriesView {
    name: String,
    color: String,
    values: Vec<Option<f64>>,
}

/// A chart payload cleaned up for drawing: one-line texts, validated colours, resolved options.
#[derive(Debug, Clone, PartialEq)]
struct Prepared {
    title: String,
    description: Option<String>,
    labels: Vec<String>,
    series: Vec<SeriesView>,
    x_title: Option<String>,
    y_title: Option<String>,
    show_legend: bool,
    stacked: bool,
    smooth: bool,
    donut: bool,
    style: ChartStyle,
}

impl Prepared {
    fn new(kind: ChartType, chart: &ChartPayload) -> Self {
        let labels: Vec<String> = chart.data.labels.iter().map(|l| one_line(l)).collect();
        let style = chart.style.clone();
        let series: Vec<SeriesView> = chart
            .data
            .series
            .iter()
            .enumerate()
            .map(|(i, s)| SeriesView {
                name: one_line(&s.name),
                color: color_at(&style, i),
                values: (0..labels.len())
                    .map(|j| s.values.get(j).copied().filter(|v| v.is_finite()))
                    .collect(),
            })
            .collect();
        let optional =
            |text: &Option<String>| text.as_deref().map(one_line).filter(|t| !t.is_empty());
        Self {
            title: one_line(&chart.title),
            description: chart.description.as_deref().map(one_line),
            x_title: optional(&chart.x_axis_title),
            y_title: optional(&chart.y_axis_title),
            show_legend: style.show_legend.unwrap_or(match kind {
                ChartType::Pie => true,
                ChartType::Line | ChartType::Bar => series.len() > 1,
            }),
            stacked: style.stacked.unwrap_or(false),
            smooth: style.smooth.unwrap_or(false),
            donut: style.donut.unwrap_or(false),
            labels,
            series,
            style,
        }
    }

    /// Whether there is at least one value to draw.
    fn has_values(&self) -> bool {
        !self.labels.is_empty()
            && self
                .series
                .iter()
                .any(|s| s.values.iter().any(Option::is_some))
    }

    /// The colour of position `i` (a series, or a pie slice).
    fn color(&self, i: usize) -> String {
        color_at(&self.style, i)
    }

    /// Every finite value of every series.
    fn values(&self) -> impl Iterator<Item = f64> + '_ {
        self.series
            .iter()
            .flat_map(|s| s.values.iter().flatten().copied())
    }
}

/// `style.colors[i]` when it is a valid CSS colour, else the palette colour of position `i`.
fn color_at(style: &ChartStyle, i: usize) -> String {
    style
        .colors
        .as_ref()
        .and_then(|colors| colors.get(i))
        .map(|c| c.trim())
        .filter(|c| is_css_color(c))
        .map(str::to_string)
        .unwrap_or_else(|| PALETTE[i % PALETTE.len()].to_string())
}

/// A value as a tooltip shows it: shortest exact form, without `.0` on whole numbers.
fn value_text(value: f64) -> String {
    format!("{value}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{workspace::charts::ChartData, workspace::charts::Series};

    fn chart(labels: &[&str], series: &[(&str, &[f64])], style: ChartStyle) -> ChartPayload {
        ChartPayload {
            title: "T".to_string(),
            description: None,
            data: ChartData {
                labels: labels.iter().map(|l| l.to_string()).collect(),
                series: series
                    .iter()
                    .map(|(name, values)| Series {
                        name: name.to_string(),
                        values: values.to_vec(),
                    })
                    .collect(),
            },
            x_axis_title: None,
            y_axis_title: None,
            style,
        }
    }

    #[test]
    fn colours_are_revalidated_with_palette_fallback() {
        let style = ChartStyle {
            colors: Some(vec![
                "teal".to_string(),
                "red;}<script>".to_string(),
                " #123456 ".to_string(),
            ]),
            ..ChartStyle::default()
        };
        assert_eq!(color_at(&style, 0), "teal");
        assert_eq!(color_at(&style, 1), PALETTE[1]);
        assert_eq!(color_at(&style, 2), "#123456");
        assert_eq!(color_at(&style, 3), PALETTE[3]);
        assert_eq!(color_at(&ChartStyle::default(), 12), PALETTE[2]);
    }

    #[test]
    fn legend_defaults_follow_the_kind_and_series_count() {
        let one = chart(&["a"], &[("s", &[1.0])], ChartStyle::default());
        let two = chart(
            &["a"],
            &[("s", &[1.0]), ("t", &[2.0])],
            ChartStyle::default(),
        );
        assert!(!Prepared::new(ChartType::Line, &one).show_legend);
        assert!(Prepared::new(ChartType::Bar, &two).show_legend);
        assert!(Prepared::new(ChartType::Pie, &one).show_legend);
        let hidden = chart(
            &["a"],
            &[("s", &[1.0]), ("t", &[2.0])],
            ChartStyle {
                show_legend: Some(false),
                ..ChartStyle::default()
            },
        );
        assert!(!Prepared::new(ChartType::Bar, &hidden).show_legend);
    }

    #[test]
    fn values_are_aligned_to_labels() {
        let ragged = chart(
            &["a", "b", "c"],
            &[("s", &[1.0, f64::NAN])],
            ChartStyle::default(),
        );
        let p = Prepared::new(ChartType::Line, &ragged);
        assert_eq!(p.series[0].values, vec![Some(1.0), None, None]);
    }

    #[test]
    fn output_is_deterministic_and_maps_artifact_types() {
        let c = chart(&["a", "b"], &[("s", &[1.0, -2.0])], ChartStyle::default());
        for kind in [ChartType::Line, ChartType::Bar, ChartType::Pie] {
            assert_eq!(render(kind, &c), render(kind, &c));
            assert_eq!(chart_type_of(kind.artifact_type()), Some(kind));
        }
        assert_eq!(chart_type_of("table"), None);
        assert_eq!(value_text(3.0), "3");
        assert_eq!(value_text(-2.5), "-2.5");
    }

    #[test]
    fn artifacts_that_are_not_charts_are_refused() {
        let payload = serde_json::json!({"title": "x"});
        assert_eq!(
            render_artifact("note", &payload),
            Err(RenderError::NotAChart("note".to_string()))
        );
        assert!(matches!(
            render_artifact("bar_chart", &payload),
            Err(RenderError::InvalidPayload(_))
        ));
    }
}
