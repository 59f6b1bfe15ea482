//! The chart model: the typed data every chart kind shares, its style, the payload a chart
//! artifact stores, and the check that a chart can be drawn. The chart tool makes charts from
//! it, the SVG renderer draws them from it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::rules::{check_length, require_text};

/// The most labels (x positions or slices) a chart may have.
pub const MAX_LABELS: usize = 1_000;
/// The most series a chart may have.
pub const MAX_SERIES: usize = 24;
/// The longest title, label or series name, in characters.
pub const MAX_TEXT_CHARS: usize = 300;
/// The longest description, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 2_000;
/// The longest colour, in characters (`hsla(120deg 50% 50% / 0.5)` takes 26).
pub const MAX_COLOR_CHARS: usize = 50;

/// The three chart kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ChartType {
    /// Values over an ordered axis.
    Line,
    /// Values per category.
    Bar,
    /// Shares of a whole.
    Pie,
}

impl ChartType {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            ChartType::Line => "line",
            ChartType::Bar => "bar",
            ChartType::Pie => "pie",
        }
    }

    /// The chart kind an artifact type tag stands for (`line_chart` → line, …).
    pub fn from_artifact_type(artifact_type: &str) -> Option<Self> {
        [ChartType::Line, ChartType::Bar, ChartType::Pie]
            .into_iter()
            .find(|kind| kind.artifact_type() == artifact_type)
    }

    /// The artifact type the chart is stored under (`line_chart`, …).
    pub fn artifact_type(self) -> &'static str {
        match self {
            ChartType::Line => "line_chart",
            ChartType::Bar => "bar_chart",
            ChartType::Pie => "pie_chart",
        }
    }
}

/// One named row of values, one value per label. (The `///` docs of these types are the
/// descriptions the chart tool's schema gives the model; the `schemars` bounds are this
/// module's limits.)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Series {
    /// The series' name, shown in the legend.
    #[schemars(length(min = 1, max = MAX_TEXT_CHARS))]
    pub name: String,
    /// One number per label, in label order.
    #[schemars(length(min = 1, max = MAX_LABELS))]
    pub values: Vec<f64>,
}

/// The data of every chart kind: labels along the x axis (or the slices of a pie) and one or
/// more series with a value per label.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChartData {
    /// The x-axis categories, or the pie's slices.
    #[schemars(length(min = 1, max = MAX_LABELS), inner(length(max = MAX_TEXT_CHARS)))]
    pub labels: Vec<String>,
    /// The series; a pie has exactly one.
    #[schemars(length(min = 1, max = MAX_SERIES))]
    pub series: Vec<Series>,
}

/// Optional look of the chart.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChartStyle {
    /// CSS colours in series (or slice) order, e.g. "#1f77b4" or "teal".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = MAX_LABELS), inner(length(min = 1, max = MAX_COLOR_CHARS)))]
    pub colors: Option<Vec<String>>,
    /// Bar charts only: stack the series.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stacked: Option<bool>,
    /// Line charts only: draw smooth curves.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smooth: Option<bool>,
    /// Pie charts only: draw a ring instead of a disc.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub donut: Option<bool>,
    /// Show the legend.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub show_legend: Option<bool>,
}

/// A chart as asked for, before it is checked.
#[derive(Debug, Clone, PartialEq)]
pub struct ChartDraft {
    /// Line, bar or pie.
    pub chart_type: ChartType,
    /// The chart's title.
    pub title: String,
    /// What the chart shows.
    pub description: Option<String>,
    /// Labels and series.
    pub data: ChartData,
    /// Title of the x axis.
    pub x_axis_title: Option<String>,
    /// Title of the y axis.
    pub y_axis_title: Option<String>,
    /// Styling.
    pub style: Option<ChartStyle>,
}

/// The stored payload of a chart artifact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChartPayload {
    /// Title.
    pub title: String,
    /// Description, if any.
    pub description: Option<String>,
    /// Validated data.
    pub data: ChartData,
    /// X-axis title, if any.
    pub x_axis_title: Option<String>,
    /// Y-axis title, if any.
    pub y_axis_title: Option<String>,
    /// Style options as given.
    pub style: ChartStyle,
}

impl ChartPayload {
    /// The payload as a draft of a `chart_type` chart, to be checked again (a recording brings
    /// in payloads that no check has seen in this database).
    pub fn into_draft(self, chart_type: ChartType) -> ChartDraft {
        ChartDraft {
            chart_type,
            title: self.title,
            description: self.description,
            data: self.data,
            x_axis_title: self.x_axis_title,
            y_axis_title: self.y_axis_title,
            style: Some(self.style),
        }
    }
}

/// Why a chart cannot be made; the text says what to fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ChartError(String);

impl ChartError {
    fn new(message: impl Into<String>) -> Self {
        Self(message.into())
    }
}

impl From<crate::workspace::error::WorkspaceError> for ChartError {
    fn from(err: crate::workspace::error::WorkspaceError) -> Self {
        Self(err.to_string())
    }
}

/// Checks a chart request whole and returns its payload; the error says what to fix.
pub fn validate_chart(args: ChartDraft) -> Result<ChartPayload, ChartError> {
    let chart_type = args.chart_type;
    let title = require_text(&args.title, "title", MAX_TEXT_CHARS)?.to_string();
    let description = trimmed_optional(args.description, "description", MAX_DESCRIPTION_CHARS)?;
    let x_axis_title = trimmed_optional(args.x_axis_title, "x_axis_title", MAX_TEXT_CHARS)?;
    let y_axis_title = trimmed_optional(args.y_axis_title, "y_axis_title", MAX_TEXT_CHARS)?;
    let data = args.data;
    if data.labels.is_empty() {
        return Err(ChartError::new(
            "`data.labels` is empty: give at least one label",
        ));
    }
    if data.labels.len() > MAX_LABELS {
        return Err(ChartError::new(format!(
            "`data.labels` has {} labels; a chart takes at most {MAX_LABELS}",
            data.labels.len()
        )));
    }
    for (i, label) in data.labels.iter().enumerate() {
        check_length(label, &format!("data.labels[{i}]"), MAX_TEXT_CHARS)?;
    }
    if data.series.is_empty() {
        return Err(ChartError::new(
            "`data.series` is empty: give at least one series",
        ));
    }
    if data.series.len() > MAX_SERIES {
        return Err(ChartError::new(format!(
            "`data.series` has {} series; a chart takes at most {MAX_SERIES}",
            data.series.len()
        )));
    }
    for (i, series) in data.series.iter().enumerate() {
        require_text(
            &series.name,
            &format!("data.series[{i}].name"),
            MAX_TEXT_CHARS,
        )?;
        if series.values.len() != data.labels.len() {
            return Err(ChartError::new(format!(
                "`data.series[{i}].values` has {} values but there are {} labels: give exactly one \
                 value per label",
                series.values.len(),
                data.labels.len()
            )));
        }
        if let Some(j) = series.values.iter().position(|v| !v.is_finite()) {
            return Err(ChartError::new(format!(
                "`data.series[{i}].values[{j}]` is not a finite number"
            )));
        }
    }
    if chart_type == ChartType::Pie {
        if data.series.len() != 1 {
            return Err(ChartError::new(format!(
                "a pie chart takes exactly one series, got {}",
                data.series.len()
            )));
        }
        let values = &data.series[0].values;
        if let Some(j) = values.iter().position(|v| *v < 0.0) {
            return Err(ChartError::new(format!(
                "`data.series[0].values[{j}]` is negative: pie slices must be zero or more"
            )));
        }
        if values.iter().sum::<f64>() <= 0.0 {
            return Err(ChartError::new(
                "the pie's values add up to zero: at least one slice must be positive",
            ));
        }
    }
    let style = args.style.unwrap_or_default();
    check_style(chart_type, &style)?;
    Ok(ChartPayload {
        title,
        description,
        data,
        x_axis_title,
        y_axis_title,
        style,
    })
}

fn check_style(chart_type: ChartType, style: &ChartStyle) -> Result<(), ChartError> {
    let misplaced = [
        ("stacked", style.stacked.is_some(), ChartType::Bar),
        ("smooth", style.smooth.is_some(), ChartType::Line),
        ("donut", style.donut.is_some(), ChartType::Pie),
    ];
    for (option, given, applies_to) in misplaced {
        if given && chart_type != applies_to {
            return Err(ChartError::new(format!(
                "`style.{option}` applies to {} charts only; remove it from this {} chart",
                applies_to.as_str(),
                chart_type.as_str()
            )));
        }
    }
    if let Some(colors) = &style.colors {
        if colors.len() > MAX_LABELS {
            return Err(ChartError::new("`style.colors` has too many entries"));
        }
        for (i, color) in colors.iter().enumerate() {
            check_length(color, &format!("style.colors[{i}]"), MAX_COLOR_CHARS)?;
            if !is_css_color(color) {
                return Err(ChartError::new(format!(
                    "`style.colors[{i}]` ({color:?}) is not a CSS colour: use #rgb, #rrggbb, \
                     rgb(…), hsl(…) or a colour name"
                )));
            }
        }
    }
    Ok(())
}

/// Accepts hex colours, `rgb()/rgba()/hsl()/hsla()` with plain numeric arguments, and colour
/// names. Deliberately strict: colours end up in rendered SVG.
pub fn is_css_color(color: &str) -> bool {
    let color = color.trim();
    if let Some(hex) = color.strip_prefix('#') {
        return matches!(hex.len(), 3 | 4 | 6 | 8) && hex.bytes().all(|b| b.is_ascii_hexdigit());
    }
    for function in ["rgb(", "rgba(", "hsl(", "hsla("] {
        if let Some(rest) = color.strip_prefix(function) {
            return rest.strip_suffix(')').is_some_and(|inner| {
                !inner.is_empty()
                    && inner
                        .bytes()
                        .all(|b| b.is_ascii_digit() || b" .,%/-degtur".contains(&b))
            });
        }
    }
    !color.is_empty() && color.len() <= 30 && color.bytes().all(|b| b.is_ascii_alphabetic())
}

fn trimmed_optional(
    text: Option<String>,
    field: &str,
    max: usize,
) -> Result<Option<String>, ChartError> {
    match text.map(|t| t.trim().to_string()).filter(|t| !t.is_empty()) {
        Some(t) => {
            check_length(&t, field, max)?;
            Ok(Some(t))
        }
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_colour_has_a_length_limit() {
        let chart = |color: String| ChartDraft {
            chart_type: ChartType::Bar,
            title: "Costs".into(),
            description: None,
            data: ChartData {
                labels: vec!["a".into()],
                series: vec![Series {
                    name: "s".into(),
                    values: vec![1.0],
                }],
            },
            x_axis_title: None,
            y_axis_title: None,
            style: Some(ChartStyle {
                colors: Some(vec![color]),
                ..ChartStyle::default()
            }),
        };
        let longest = format!("rgb({})", "1,".repeat(22));
        assert_eq!(longest.len(), 49);
        assert!(validate_chart(chart(longest.clone())).is_ok());
        let e = validate_chart(chart(format!("rgb({})", "1,".repeat(23))))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert_eq!(
            e,
            "`style.colors[0]` is 51 characters long; the limit is 50"
        );
    }

    #[test]
    fn css_colours() {
        for ok in [
            "#fff",
            "#1f77b4",
            "#1f77b4cc",
            "teal",
            "rgb(1, 2, 3)",
            "hsl(120deg 50% 50%)",
        ] {
            assert!(is_css_color(ok), "{ok}");
        }
        for bad in [
            "",
            "#ggg",
            "#12345",
            "red;}",
            "url(x)",
            "rgb(1,2,3",
            "<script>",
        ] {
            assert!(!is_css_color(bad), "{bad}");
        }
    }
}
