//! `haico eval`: how well the agent co-constructs, measured on scripted tasks.
//!
//! A scenario ([`scenario`]) is what a person brings: a starting workspace, a few messages,
//! and checks ([`checks`]) of what a good partner leaves behind (an objective that names the
//! goal, a plan without repeats, the document holding what was asked, locked preferences left
//! alone, no failed or repeated calls, turns that end with an answer).

pub mod checks;
pub mod scenario;

pub use checks::{Check, CheckOutcome};
pub use scenario::{Scenario, ScenarioError, load, load_all, select};
