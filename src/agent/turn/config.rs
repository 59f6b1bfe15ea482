//! What limits and shapes one turn: its step limit, prompt budget, lease, and how the
//! prompt is laid out for the model's server.

use std::time::Duration;

use crate::{
    agent::{
        aids::Aids,
        model::{Sampling, SnapshotRole},
        prompt::PromptBudget,
        text_calls::TextToolCalls,
    },
    replicas::ReplicaId,
};

/// Limits of one turn.
#[derive(Debug, Clone)]
pub struct AgentConfig {
    /// Tool calls one turn may make before it stops and says so (`HAICO_MAX_STEPS`).
    pub max_tool_calls: usize,
    /// How much of the workspace the system prompt carries.
    pub budget: PromptBudget,
    /// Characters of earlier turns' messages sent as history.
    pub history_chars: usize,
    /// Upper bound on each answer's length.
    pub max_tokens: Option<u32>,
    /// Who this process is among the replicas: the owner recorded on its turns.
    pub replica: ReplicaId,
    /// How long a turn's lease lasts unless renewed (`HAICO_TURN_LEASE_SECS`); renewed every
    /// third of it, so another replica ends a dead replica's turn within about 1⅓ leases.
    pub lease: Duration,
    /// Which role carries the workspace snapshot (`HAICO_LLM_SNAPSHOT_ROLE`).
    pub snapshot_role: SnapshotRole,
    /// Whether answers that are only tool calls written as text are taken as calls
    /// (`HAICO_LLM_TEXT_TOOL_CALLS`).
    pub text_tool_calls: TextToolCalls,
    /// How the model samples (`HAICO_LLM_TEMPERATURE`, `HAICO_LLM_SEED`, …), sent with every
    /// request.
    pub sampling: Sampling,
    /// Help for small models (`HAICO_LLM_AIDS`).
    pub aids: Aids,
}

/// The default lease: short enough that a dead replica's thread is free again within 30 s,
/// long enough that a busy database does not make a live replica lose its turns.
pub const DEFAULT_TURN_LEASE: Duration = Duration::from_secs(15);

impl Default for AgentConfig {
    fn default() -> Self {
        Self {
            max_tool_calls: 25,
            budget: PromptBudget::default(),
            history_chars: 48_000,
            max_tokens: None,
            replica: ReplicaId::generate(),
            lease: DEFAULT_TURN_LEASE,
            snapshot_role: SnapshotRole::default(),
            text_tool_calls: TextToolCalls::default(),
            sampling: Sampling::default(),
            aids: Aids::default(),
        }
    }
}
