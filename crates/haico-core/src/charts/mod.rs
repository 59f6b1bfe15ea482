//! Charts: [`model`] is what a chart is (typed data, style, the payload a chart artifact
//! stores, and the check that it can be drawn); [`svg`] draws one as a standalone, inert SVG
//! image (`GET …/artifacts/{artifact_id}/chart.svg`); [`png`] rasterises that SVG for clients
//! that want a bitmap (`…/chart.png`, the image beside an MCP `chart_generator` result).

pub mod png;
pub mod svg;

/// The model is the workspace's (`workspace::charts`): a chart artifact's rules are workspace
/// rules like every other panel's, and the drawing here depends on them, not the other way.
pub use crate::workspace::charts as model;

pub use model::{ChartData, ChartPayload, ChartStyle, ChartType, Series};
