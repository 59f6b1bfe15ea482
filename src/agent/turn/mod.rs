//! The agent loop (ReAct): call the model with the tools, run the calls it asks for, feed the
//! envelopes back, repeat until it answers in plain text or the step limit is reached.
//!
//! Every tool call is persisted and announced as it happens, through the workspace's one
//! commit path, so a turn is visible live on the thread's events stream and complete after a
//! reload. One turn runs per thread at a time: an in-process map guards this process, a unique
//! index on running turns guards the database, whichever replica runs it. A running turn holds
//! a lease on its row, kept by [`leases`](super::leases).

mod config;
mod external;
mod policy;
mod spans;
mod think;

pub use config::{AgentConfig, DEFAULT_TURN_LEASE};
pub use policy::{TurnPolicies, TurnPolicy};

use std::{
    collections::HashMap,
    sync::{
        Arc, Mutex, OnceLock,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::Duration,
};

use tokio::task::JoinHandle;
use tokio_util::{sync::CancellationToken, task::TaskTracker};
use tracing::Instrument;

use super::{
    model::{ChatModel, ToolCallRequest},
    progress::FAILED_ROUNDS_LIMIT,
    prompt::PromptCache,
};
use crate::{
    mcp_client::McpServers, replicas::ReplicaId, replicas::doorbell::Doorbell, tools::ToolRuntime,
};
use haico_core::{workspace::Actor, workspace::TurnEnd, workspace::WorkspaceError};
use haico_store::{ThreadId, TurnLease, TurnStatus, now_ms, usage::TurnUsage};

/// Why a turn could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The message is empty or too long.
    #[error("{0}")]
    InvalidMessage(String),
    /// The thread does not exist.
    #[error("thread `{0}` not found")]
    UnknownThread(String),
    /// A turn is already running on the thread.
    #[error("a turn is already running on this thread; wait for it or cancel it")]
    Busy,
    /// The server is shutting down and starts no more turns.
    #[error("this server is shutting down; send the message again in a moment")]
    Stopping,
    /// The database failed.
    #[error(transparent)]
    Store(#[from] haico_store::StoreError),
}

impl From<WorkspaceError> for StartError {
    fn from(err: WorkspaceError) -> Self {
        match err {
            WorkspaceError::UnknownThread(id) => Self::UnknownThread(id),
            WorkspaceError::Busy => Self::Busy,
            WorkspaceError::Store(store) => Self::Store(store),
            other => Self::InvalidMessage(other.to_string()),
        }
    }
}

/// A turn that has started.
#[derive(Debug)]
pub struct StartedTurn {
    /// Its index in the thread.
    pub turn_index: i64,
    /// The sequence number of its `turn` event: subscribe after `first_seq - 1` to see it all.
    pub first_seq: i64,
    /// The task running it; resolves when the turn has ended and been recorded.
    pub task: JoinHandle<()>,
}

/// Runs agent turns.
pub struct Agent {
    pub(super) runtime: ToolRuntime,
    model: Arc<dyn ChatModel>,
    pub(super) config: AgentConfig,
    pub(super) running: Mutex<HashMap<String, Claim>>,
    next_claim: AtomicU64,
    /// Rings the replica running a turn when a cancel arrives here (PostgreSQL replicas).
    pub(super) doorbell: OnceLock<Doorbell>,
    /// Set when the server shuts down: no new turns, running ones end saying why.
    pub(super) stopping: AtomicBool,
    /// Every turn's task, so a shutdown can wait for their ends to be recorded.
    pub(super) tasks: TaskTracker,
    /// The last prompt read per thread, so a thread's next turn starts from it and reads only
    /// what changed since (at most [`KEPT_PROMPTS`] threads).
    prompts: Mutex<HashMap<String, PromptCache>>,
    /// Other MCP servers whose tools the agent may call (`HAICO_MCP_SERVERS`). Set once.
    mcp_servers: OnceLock<McpServers>,
    /// Per-thread policies (a study's conditions). Set once.
    policies: OnceLock<Arc<dyn TurnPolicies>>,
}

/// How many threads' prompt reads an agent keeps between turns (each a few tens of KB: the
/// document's excerpt and the first plan steps, read and rendered).
const KEPT_PROMPTS: usize = 64;

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("model", &self.model.describe())
            .field("config", &self.config)
            .finish()
    }
}

/// A turn's hold on its thread in this process; the id makes sure a finished turn can only
/// release its own hold, never the next turn's.
pub(super) struct Claim {
    id: u64,
    pub(super) cancel: CancellationToken,
}

/// How a turn's loop ended.
enum Outcome {
    Answered(String),
    CallLimit(String),
    /// Round after round of failed calls; the last error.
    NoProgress(String),
    /// The model repeated a write it had made and, asked to answer, called tools again; what
    /// the turn did, for the person.
    Repeating(String),
    Failed(String),
    Cancelled,
}

impl Outcome {
    /// How the turn ended, as its trace span says it (`haico.turn.outcome`).
    fn label(&self) -> &'static str {
        match self {
            Outcome::Answered(_) => "answered",
            Outcome::CallLimit(_) => "call_limit",
            Outcome::NoProgress(_) => "no_progress",
            Outcome::Repeating(_) => "repeating",
            Outcome::Failed(_) => "failed",
            Outcome::Cancelled => "cancelled",
        }
    }
}

/// What a turn's loop keeps beyond its own end: the prompt read (for the thread's next turn)
/// and what the model calls cost (for the turn's record).
struct Kept {
    prompt: PromptCache,
    usage: TurnUsage,
}

/// A model's answer to one call.
struct Answer {
    text: String,
    calls: Vec<ToolCallRequest>,
    /// The start of `text` not yet shown, because it began like a tool call written as text.
    held: String,
}

/// Whole milliseconds of `elapsed`.
fn millis(elapsed: Duration) -> u64 {
    u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX)
}

impl Agent {
    /// An agent that runs tools through `runtime` and thinks with `model`.
    pub fn new(runtime: ToolRuntime, model: Arc<dyn ChatModel>, config: AgentConfig) -> Self {
        Self {
            runtime,
            model: super::metered::metered(model),
            config,
            running: Mutex::new(HashMap::new()),
            next_claim: AtomicU64::new(1),
            doorbell: OnceLock::new(),
            stopping: AtomicBool::new(false),
            tasks: TaskTracker::new(),
            prompts: Mutex::new(HashMap::new()),
            mcp_servers: OnceLock::new(),
            policies: OnceLock::new(),
        }
    }

    /// Offers the tools of `servers` to this agent's turns. Set once.
    pub fn use_mcp_servers(&self, servers: McpServers) {
        let _ = self.mcp_servers.set(servers);
    }

    /// Asks `policies` for each turn's policy. Set once.
    pub fn use_policies(&self, policies: Arc<dyn TurnPolicies>) {
        let _ = self.policies.set(policies);
    }

    /// The other MCP servers the agent uses, when any are configured.
    pub fn mcp_servers(&self) -> Option<&McpServers> {
        self.mcp_servers.get()
    }

    /// This process's replica id.
    pub fn replica(&self) -> &ReplicaId {
        &self.config.replica
    }

    /// Rings `doorbell` to reach turns running on other replicas. Set once.
    pub fn ring_with(&self, doorbell: Doorbell) {
        let _ = self.doorbell.set(doorbell);
    }

    /// The instructions every request of a thread without a policy begins with (a study's
    /// export records them as the prompt its conditions ran with).
    pub fn instructions(&self) -> &'static str {
        super::prompt::instructions_for(self.config.aids)
    }

    /// The model, for logs.
    pub fn describe_model(&self) -> String {
        self.model.describe()
    }

    /// Whether a real model is configured (not the stand-in that refuses every turn).
    pub fn model_configured(&self) -> bool {
        self.model.is_configured()
    }

    /// Starts a turn: records the user's message, announces the turn and runs it in the
    /// background.
    ///
    /// The turn acts for `by` (the person who sent the message, when known): their message and
    /// every change the turn's tool calls make record them.
    pub async fn start(
        self: &Arc<Self>,
        thread_id: &ThreadId,
        message: &str,
        by: Option<Actor>,
    ) -> Result<StartedTurn, StartError> {
        self.start_about(thread_id, message, by, None).await
    }

    /// Starts a turn about `focus`, a passage of the document the person selected: the
    /// model's snapshot marks it, and in suggest mode the turn's suggestions may only change
    /// it (SPEC §12).
    pub async fn start_about(
        self: &Arc<Self>,
        thread_id: &ThreadId,
        message: &str,
        by: Option<Actor>,
        focus: Option<haico_core::workspace::Focus>,
    ) -> Result<StartedTurn, StartError> {
        let message = haico_core::workspace::checked_message(message)?;
        if self.stopping.load(Ordering::Acquire) {
            return Err(StartError::Stopping);
        }
        let cancel = CancellationToken::new();
        let claim = self.next_claim.fetch_add(1, Ordering::Relaxed);
        {
            let mut running = self.running.lock().map_err(|_| StartError::Busy)?;
            if running.contains_key(thread_id.as_str()) {
                return Err(StartError::Busy);
            }
            running.insert(
                thread_id.as_str().to_string(),
                Claim {
                    id: claim,
                    cancel: cancel.clone(),
                },
            );
        }
        let runtime = self.runtime.acting_as(by).about(focus);
        let lease = TurnLease {
            owner: self.config.replica.as_str(),
            until_ms: now_ms().saturating_add(lease_ms(self.config.lease)),
        };
        match runtime
            .workspaces()
            .open_turn(thread_id, message, lease)
            .await
        {
            Ok(opened) => {
                crate::metrics::turn_started();
                let agent = Arc::clone(self);
                let thread = thread_id.clone();
                let text = message.to_string();
                let turn_index = opened.turn_index;
                // An agent turn in OpenTelemetry's terms (`invoke_agent`): a child of the chat
                // request that started it, parent of its model and tool calls.
                let span = tracing::info_span!(
                    "turn",
                    thread = %thread,
                    turn = turn_index,
                    replica = %self.config.replica,
                    otel.name = "invoke_agent haico",
                    gen_ai.operation.name = "invoke_agent",
                    gen_ai.agent.name = "haico",
                    gen_ai.conversation.id = tracing::field::Empty,
                    haico.turn.outcome = tracing::field::Empty,
                    gen_ai.usage.input_tokens = tracing::field::Empty,
                    gen_ai.usage.output_tokens = tracing::field::Empty,
                    otel.status_code = tracing::field::Empty,
                );
                if crate::telemetry::enabled() {
                    span.record("gen_ai.conversation.id", thread.as_str());
                }
                let task = self.tasks.spawn(
                    async move {
                        agent
                            .run(&runtime, &thread, turn_index, text, cancel, claim)
                            .await;
                        agent.release(&thread, claim);
                    }
                    .instrument(span),
                );
                Ok(StartedTurn {
                    turn_index,
                    first_seq: opened.first_seq,
                    task,
                })
            }
            Err(err) => {
                self.release(thread_id, claim);
                Err(err.into())
            }
        }
    }

    /// Cancels the thread's running turn wherever it runs: here at once; on another replica
    /// by recording the request on the turn (its owner reads it at its next lease renewal)
    /// and ringing the doorbell (it hears that within milliseconds). `false` when no turn
    /// runs on the thread.
    pub async fn cancel_anywhere(&self, thread_id: &ThreadId) -> Result<bool, WorkspaceError> {
        if self.cancel(thread_id) {
            return Ok(true);
        }
        match self.runtime.workspaces().request_cancel(thread_id).await? {
            Some((turn_index, owner)) => {
                tracing::info!(thread = %thread_id, turn = turn_index, owner = ?owner,
                               "asked the replica running the turn to cancel it");
                // The turn may have started here between the two checks.
                if !self.cancel(thread_id)
                    && let Some(doorbell) = self.doorbell.get()
                {
                    doorbell.ring_cancel(thread_id.as_str());
                }
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// Cancels the thread's running turn; `false` when none runs here.
    pub fn cancel(&self, thread_id: &ThreadId) -> bool {
        match self.running.lock() {
            Ok(running) => running
                .get(thread_id.as_str())
                .map(|claim| claim.cancel.cancel())
                .is_some(),
            Err(_) => false,
        }
    }

    /// Whether a turn runs on the thread in this process.
    pub fn is_running(&self, thread_id: &ThreadId) -> bool {
        self.running
            .lock()
            .map(|r| r.contains_key(thread_id.as_str()))
            .unwrap_or(false)
    }

    /// Frees the thread for the next turn, if `claim` still holds it.
    fn release(&self, thread_id: &ThreadId, claim: u64) {
        if let Ok(mut running) = self.running.lock()
            && running
                .get(thread_id.as_str())
                .is_some_and(|c| c.id == claim)
        {
            running.remove(thread_id.as_str());
        }
    }

    async fn run(
        &self,
        runtime: &ToolRuntime,
        thread_id: &ThreadId,
        turn_index: i64,
        message: String,
        cancel: CancellationToken,
        claim: u64,
    ) {
        let mut kept = Kept {
            prompt: self.take_prompt(thread_id),
            usage: TurnUsage::default(),
        };
        let outcome = self
            .think(runtime, thread_id, turn_index, message, &cancel, &mut kept)
            .await;
        if crate::telemetry::enabled() {
            let span = tracing::Span::current();
            span.record("haico.turn.outcome", outcome.label());
            if let Some(tokens) = kept.usage.prompt_tokens {
                span.record("gen_ai.usage.input_tokens", crate::telemetry::count(tokens));
            }
            if let Some(tokens) = kept.usage.completion_tokens {
                span.record(
                    "gen_ai.usage.output_tokens",
                    crate::telemetry::count(tokens),
                );
            }
            if matches!(outcome, Outcome::Failed(_)) {
                span.record("otel.status_code", "ERROR");
            }
        }
        self.keep_prompt(thread_id, kept.prompt);
        self.close(thread_id, turn_index, outcome, &kept.usage, claim)
            .await;
    }

    /// The thread's prompt as its last turn here left it (empty when there was none).
    fn take_prompt(&self, thread_id: &ThreadId) -> PromptCache {
        self.prompts
            .lock()
            .ok()
            .and_then(|mut kept| kept.remove(thread_id.as_str()))
            .unwrap_or_default()
    }

    /// Keeps the thread's prompt for its next turn, making room by dropping another thread's.
    fn keep_prompt(&self, thread_id: &ThreadId, prompt: PromptCache) {
        if let Ok(mut kept) = self.prompts.lock() {
            if kept.len() >= KEPT_PROMPTS
                && let Some(other) = kept.keys().next().cloned()
            {
                kept.remove(&other);
            }
            kept.insert(thread_id.as_str().to_string(), prompt);
        }
    }

    /// Records how the turn ended and announces it; retried a few times, because a turn left
    /// `running` would block its thread.
    async fn close(
        &self,
        thread_id: &ThreadId,
        turn_index: i64,
        outcome: Outcome,
        usage: &TurnUsage,
        claim: u64,
    ) {
        let (status, message, error) = match outcome {
            Outcome::Answered(text) => (TurnStatus::Completed, Some(text), None),
            Outcome::CallLimit(text) => {
                let note = format!(
                    "I stopped here because this turn reached its limit of {} tool calls. Say \
                     \"continue\" and I will pick up where I left off.",
                    self.config.max_tool_calls
                );
                let text = if text.trim().is_empty() {
                    note
                } else {
                    format!("{text}\n\n{note}")
                };
                (TurnStatus::Completed, Some(text), None)
            }
            Outcome::NoProgress(last_error) => (
                TurnStatus::Completed,
                Some(format!(
                    "I stopped here: my last {FAILED_ROUNDS_LIMIT} attempts to change the \
                     workspace all failed, the last one with: {last_error}. Tell me how you \
                     would like to go on, or change what stands in the way (an unlocked \
                     preference, a step that exists), and I will try again."
                )),
                None,
            ),
            Outcome::Repeating(account) => (
                TurnStatus::Completed,
                Some(format!(
                    "{account}\n\nI stopped here because I began repeating a step I had already \
                     done. Tell me what is still missing and I will go on."
                )),
                None,
            ),
            Outcome::Failed(reason) => (TurnStatus::Failed, None, Some(reason)),
            Outcome::Cancelled if self.stopping.load(Ordering::Acquire) => (
                TurnStatus::Failed,
                None,
                Some(
                    "the server running this turn was shut down; the steps it made are kept, \
                     send your message again to go on"
                        .to_string(),
                ),
            ),
            Outcome::Cancelled => (
                TurnStatus::Cancelled,
                None,
                Some("the turn was cancelled".to_string()),
            ),
        };
        // Free the thread before the end is announced, so a client that sends its next
        // message the moment it sees `done` is never told a turn is still running (until the
        // end commits, the database's one-running-turn rule still holds).
        self.release(thread_id, claim);
        let end = TurnEnd {
            status,
            message: message.as_deref(),
            error: error.as_deref(),
            usage: Some(usage),
        };
        for attempt in 0..3u32 {
            match self
                .runtime
                .workspaces()
                .close_turn(thread_id, turn_index, end)
                .await
            {
                Ok(Some(_)) => {
                    crate::metrics::turn_finished(status.as_str());
                    return;
                }
                Ok(None) => {
                    tracing::warn!(
                        "this turn had already been ended by another replica (its lease ran out, \
                         e.g. while the database was unreachable); its end is not recorded"
                    );
                    return;
                }
                Err(err) => {
                    tracing::error!(attempt, error = %err, "could not record the end of a turn");
                    tokio::time::sleep(std::time::Duration::from_millis(200 << attempt)).await;
                }
            }
        }
    }

    /// Streams answer text to the thread's subscribers, through the workspace.
    fn publish_token(&self, thread_id: &ThreadId, text: &str) {
        self.runtime.workspaces().announce_token(thread_id, text);
    }
}

/// A lease's length in milliseconds.
pub(super) fn lease_ms(lease: Duration) -> i64 {
    i64::try_from(lease.as_millis()).unwrap_or(i64::MAX)
}
