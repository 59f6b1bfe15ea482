//! A per-thread policy for turns: which tools the agent is offered, whether it sees the
//! workspace snapshot, its temperature, step limit and instructions. A study's condition is
//! one (issue 42: a plain-chat baseline is no tools and no snapshot); a thread without a policy
//! gets the server's configuration, as before.
//!
//! The agent does not know where policies come from: whoever wires the server hands it a
//! [`TurnPolicies`] ([`Agent::use_policies`](super::Agent::use_policies)), asked once per turn.

use haico_store::ThreadId;

/// What one thread's turns use instead of the server's configuration.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TurnPolicy {
    /// The tool names offered (`server__tool` for another MCP server's); `None`: all. A call
    /// of any other tool fails as a call of an unknown tool does.
    pub tools: Option<Vec<String>>,
    /// Whether the workspace snapshot is sent before every model call.
    pub snapshot: bool,
    /// The sampling temperature.
    pub temperature: Option<f32>,
    /// Tool calls per turn.
    pub max_tool_calls: Option<usize>,
    /// Instructions replacing the server's own.
    pub system_prompt: Option<String>,
}

impl TurnPolicy {
    /// Whether the tool `name` may be offered and called.
    pub fn allows(&self, name: &str) -> bool {
        self.tools
            .as_ref()
            .is_none_or(|names| names.iter().any(|n| n == name))
    }
}

/// Where the agent finds a thread's policy.
#[async_trait::async_trait]
pub trait TurnPolicies: Send + Sync + std::fmt::Debug {
    /// The policy of `thread`'s turns; `None` for the server's configuration. An error ends
    /// the turn before the model is asked (a study's condition must never be ignored).
    async fn policy(&self, thread: &ThreadId) -> Result<Option<TurnPolicy>, String>;
}
