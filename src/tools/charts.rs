//! Chart tool: a typed line, bar or pie chart, handed to the workspace, which checks it whole
//! and stores it as an artifact ([`ArtifactsEdit::add_chart`]).

use schemars::JsonSchema;
use serde::Deserialize;

use crate::{tools::output::ToolOutput, tools::output::ToolResult, tools::spec::schema_bound};

use haico_core::{
    workspace::Edit, workspace::charts::ChartData, workspace::charts::ChartDraft,
    workspace::charts::ChartStyle, workspace::charts::ChartType,
    workspace::charts::MAX_DESCRIPTION_CHARS, workspace::charts::MAX_TEXT_CHARS,
    workspace::rules::plural,
};
use haico_macros::{workspace_tool, workspace_tools};

/// Makes charts.
pub struct ChartTools;

/// Arguments of `chart_generator`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChartGeneratorArgs {
    /// The kind of chart.
    pub chart_type: ChartType,
    /// The chart's title.
    #[schemars(length(min = 1, max = MAX_TEXT_CHARS))]
    pub title: String,
    /// What the chart shows, in a sentence or two.
    #[serde(default)]
    #[schemars(length(max = schema_bound(MAX_DESCRIPTION_CHARS)))]
    pub description: Option<String>,
    /// Labels, and series with one value per label.
    pub data: ChartData,
    /// Title of the x axis (line and bar charts).
    #[serde(default)]
    #[schemars(length(max = MAX_TEXT_CHARS))]
    pub x_axis_title: Option<String>,
    /// Title of the y axis (line and bar charts).
    #[serde(default)]
    #[schemars(length(max = MAX_TEXT_CHARS))]
    pub y_axis_title: Option<String>,
    /// Optional look.
    #[serde(default)]
    pub style: Option<ChartStyle>,
}

#[workspace_tools]
impl ChartTools {
    #[workspace_tool(
        name = "chart_generator",
        description = "Make a line, bar or pie chart for the user: every series has one number \
                       per label; a pie has one series of values of zero or more."
    )]
    async fn chart_generator(&self, edit: &mut Edit, args: ChartGeneratorArgs) -> ToolResult {
        let chart_type = args.chart_type;
        let added = edit
            .artifacts()
            .add_chart(ChartDraft {
                chart_type,
                title: args.title,
                description: args.description,
                data: args.data,
                x_axis_title: args.x_axis_title,
                y_axis_title: args.y_axis_title,
                style: args.style,
            })
            .await?;
        let summary = format!(
            "created {} chart \"{}\" ({} series, {})",
            chart_type.as_str(),
            added.chart.title,
            added.chart.data.series.len(),
            plural(added.chart.data.labels.len(), "label")
        );
        Ok(ToolOutput::with_artifact(summary, added.artifact))
    }
}
