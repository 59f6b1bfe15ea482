//! Drawing charts on the server: [`svg`] renders a chart artifact's payload as a standalone,
//! inert SVG image (`GET …/artifacts/{artifact_id}/chart.svg`).

pub mod svg;
