//! The agent: the ReAct loop ([`turn`]) that turns a user message into tool calls and an
//! answer, the system prompt rebuilt from the workspace before every call ([`prompt`]), the
//! history it sends ([`history`]), the provider-neutral model interface ([`model`]) and the
//! LLM providers that implement it ([`providers`]), and what copes with small models' habits:
//! repeated calls and rounds going nowhere ([`progress`]), calls written as text
//! ([`text_calls`]), asking a second time when an answer did nothing or repeated itself
//! ([`second_ask`]), and the help for small models a setting turns on ([`aids`]).

pub mod aids;
pub mod checklist;
pub mod history;
pub mod leases;
mod metered;
pub mod model;
pub mod progress;
pub mod prompt;
pub mod providers;
pub mod reply;
pub mod second_ask;
pub mod text_calls;
pub mod turn;

pub use crate::usage::{CallUsage, TurnUsage};
pub use aids::Aids;
pub use model::{Sampling, SnapshotRole};
pub use text_calls::TextToolCalls;
pub use turn::{
    Agent, AgentConfig, DEFAULT_TURN_LEASE, StartError, StartedTurn, TurnPolicies, TurnPolicy,
};
