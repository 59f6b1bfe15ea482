//! The tools: each domain, the runtime, the rules every path shares, chart rendering and the
//! tool macros' compile-time checks.

mod chart_svg;
mod charts_artifacts;
mod documents;
mod input_nul;
mod macros;
mod preferences;
mod runtime;
mod todos;
mod workspace_rules;
