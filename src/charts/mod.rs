//! Charts: [`model`] is what a chart is (typed data, style, the payload a chart artifact
//! stores, and the check that it can be drawn); [`svg`] draws one as a standalone, inert SVG
//! image (`GET …/artifacts/{artifact_id}/chart.svg`).

pub mod model;
pub mod svg;

pub use model::{ChartData, ChartPayload, ChartStyle, ChartType, Series};
