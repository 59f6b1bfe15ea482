//! The tools: each domain, the runtime, the rules every path shares, chart rendering and the
//! collections the tool macros accept.

mod artifact_rules;
mod chart_svg;
mod charts_artifacts;
mod document_loss;
mod documents;
mod input_nul;
mod macro_cases;
mod preferences;
mod runtime;
mod schemas;
mod todos;
mod workspace_rules;
