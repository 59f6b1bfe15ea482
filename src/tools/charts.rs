//! Chart tool: a typed line, bar or pie chart, validated whole and stored as an artifact.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{
    NewArtifact, ToolError, ToolOutput, ToolResult,
    checks::{check_length, plural, require_text},
    workspace_tool, workspace_tools,
};
use crate::{ThreadId, store::WorkspaceRepository};

/// The most labels (x positions or slices) a chart may have.
pub const MAX_LABELS: usize = 1_000;
/// The most series a chart may have.
pub const MAX_SERIES: usize = 24;
/// The longest title, label or series name, in characters.
pub const MAX_TEXT_CHARS: usize = 300;

/// Makes charts for a thread.
pub struct ChartTools {
    #[allow(dead_code)]
    thread_id: ThreadId,
}

impl ChartTools {
    /// The chart tools of one thread.
    pub fn new(thread_id: ThreadId) -> Self {
        Self { thread_id }
    }
}

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

    /// The artifact type the chart is stored under (`line_chart`, …).
    pub fn artifact_type(self) -> &'static str {
        match self {
            ChartType::Line => "line_chart",
            ChartType::Bar => "bar_chart",
            ChartType::Pie => "pie_chart",
        }
    }
}

/// One named row of values, one value per label.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Series {
    /// The series name, shown in the legend.
    pub name: String,
    /// One number per label, in label order.
    pub values: Vec<f64>,
}

/// The data of every chart kind: labels along the x axis (or the slices of a pie) and one or
/// more series with a value per label.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChartData {
    /// The x-axis categories, or the slice names of a pie.
    pub labels: Vec<String>,
    /// The series; a pie has exactly one.
    pub series: Vec<Series>,
}

/// Optional look of the chart.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChartStyle {
    /// CSS colours for the series (or pie slices), in order, e.g. "#1f77b4" or "teal".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub colors: Option<Vec<String>>,
    /// Bar charts only: stack the series instead of placing them side by side.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stacked: Option<bool>,
    /// Line charts only: draw smooth curves instead of straight segments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smooth: Option<bool>,
    /// Pie charts only: draw a ring instead of a full disc.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub donut: Option<bool>,
    /// Whether to show the legend.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub show_legend: Option<bool>,
}

/// Arguments of `chart_generator`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChartGeneratorArgs {
    /// "line", "bar" or "pie".
    pub chart_type: ChartType,
    /// The chart's title.
    pub title: String,
    /// One or two sentences on what the chart shows.
    #[serde(default)]
    pub description: Option<String>,
    /// Labels and series; every series has exactly one value per label.
    pub data: ChartData,
    /// Title of the x axis (line and bar charts).
    #[serde(default)]
    pub x_axis_title: Option<String>,
    /// Title of the y axis (line and bar charts).
    #[serde(default)]
    pub y_axis_title: Option<String>,
    /// Optional styling.
    #[serde(default)]
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

#[workspace_tools]
impl ChartTools {
    #[workspace_tool(
        name = "chart_generator",
        description = "Make a line, bar or pie chart from typed data. The chart is shown to the \
                       user and stored as an artifact you can refer to later by its id. Data: \
                       labels plus series, each series with exactly one number per label; a pie \
                       takes exactly one series of non-negative values."
    )]
    async fn chart_generator(
        &self,
        _repo: &mut WorkspaceRepository,
        args: ChartGeneratorArgs,
    ) -> ToolResult {
        let chart_type = args.chart_type;
        let payload = validate_chart(args)?;
        let summary = format!(
            "created {} chart \"{}\" ({} series, {})",
            chart_type.as_str(),
            payload.title,
            payload.data.series.len(),
            plural(payload.data.labels.len(), "label")
        );
        let title = payload.title.clone();
        let value = serde_json::to_value(&payload)
            .map_err(|err| ToolError::invalid(format!("chart could not be encoded: {err}")))?;
        Ok(ToolOutput::with_artifact(
            summary,
            NewArtifact {
                artifact_type: chart_type.artifact_type().to_string(),
                payload: value,
                title: Some(title),
            },
        ))
    }
}

/// Checks a chart request whole and returns its payload; the error says what to fix.
pub fn validate_chart(args: ChartGeneratorArgs) -> Result<ChartPayload, ToolError> {
    let chart_type = args.chart_type;
    let title = require_text(&args.title, "title", MAX_TEXT_CHARS)?.to_string();
    let description = trimmed_optional(args.description, "description", 2_000)?;
    let x_axis_title = trimmed_optional(args.x_axis_title, "x_axis_title", MAX_TEXT_CHARS)?;
    let y_axis_title = trimmed_optional(args.y_axis_title, "y_axis_title", MAX_TEXT_CHARS)?;
    let data = args.data;
    if data.labels.is_empty() {
        return Err(ToolError::invalid(
            "`data.labels` is empty: give at least one label",
        ));
    }
    if data.labels.len() > MAX_LABELS {
        return Err(ToolError::invalid(format!(
            "`data.labels` has {} labels; a chart takes at most {MAX_LABELS}",
            data.labels.len()
        )));
    }
    for (i, label) in data.labels.iter().enumerate() {
        check_length(label, &format!("data.labels[{i}]"), MAX_TEXT_CHARS)?;
    }
    if data.series.is_empty() {
        return Err(ToolError::invalid(
            "`data.series` is empty: give at least one series",
        ));
    }
    if data.series.len() > MAX_SERIES {
        return Err(ToolError::invalid(format!(
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
            return Err(ToolError::invalid(format!(
                "`data.series[{i}].values` has {} values but there are {} labels: give exactly one \
                 value per label",
                series.values.len(),
                data.labels.len()
            )));
        }
        if let Some(j) = series.values.iter().position(|v| !v.is_finite()) {
            return Err(ToolError::invalid(format!(
                "`data.series[{i}].values[{j}]` is not a finite number"
            )));
        }
    }
    if chart_type == ChartType::Pie {
        if data.series.len() != 1 {
            return Err(ToolError::invalid(format!(
                "a pie chart takes exactly one series, got {}",
                data.series.len()
            )));
        }
        let values = &data.series[0].values;
        if let Some(j) = values.iter().position(|v| *v < 0.0) {
            return Err(ToolError::invalid(format!(
                "`data.series[0].values[{j}]` is negative: pie slices must be zero or more"
            )));
        }
        if values.iter().sum::<f64>() <= 0.0 {
            return Err(ToolError::invalid(
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

fn check_style(chart_type: ChartType, style: &ChartStyle) -> Result<(), ToolError> {
    let misplaced = [
        ("stacked", style.stacked.is_some(), ChartType::Bar),
        ("smooth", style.smooth.is_some(), ChartType::Line),
        ("donut", style.donut.is_some(), ChartType::Pie),
    ];
    for (option, given, applies_to) in misplaced {
        if given && chart_type != applies_to {
            return Err(ToolError::invalid(format!(
                "`style.{option}` applies to {} charts only; remove it from this {} chart",
                applies_to.as_str(),
                chart_type.as_str()
            )));
        }
    }
    if let Some(colors) = &style.colors {
        if colors.len() > MAX_LABELS {
            return Err(ToolError::invalid("`style.colors` has too many entries"));
        }
        for (i, color) in colors.iter().enumerate() {
            if !is_css_color(color) {
                return Err(ToolError::invalid(format!(
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
) -> Result<Option<String>, ToolError> {
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
    use super::is_css_color;

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
