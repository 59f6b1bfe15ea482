//! The agent loop (ReAct): call the model with the tools, run the calls it asks for, feed the
//! envelopes back, repeat until it answers in plain text or the step limit is reached.
//!
//! Every step is persisted and announced as it happens (see `events`), so a turn is visible
//! live on the thread's events stream and complete after a reload. One turn runs per thread
//! at a time: an in-process map guards this server, a unique index on running turns guards
//! the database.

use std::{
    collections::HashMap,
    sync::{
        Arc, Mutex,
        atomic::{AtomicU64, Ordering},
    },
};

use futures::StreamExt;
use serde_json::Value;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::{
    history::load_history,
    model::{ChatMessage, ChatModel, ModelEvent, ModelRequest, ToolDefinition},
    prompt::{PromptBudget, PromptWorkspace, system_prompt},
};
use crate::{
    ThreadId,
    events::{LiveEvent, done_event, error_event, message_event, token_data, turn_event},
    store::{StoreError, TurnStatus},
    tools::{StepContext, ToolRuntime, Toolset, build_tools},
};

/// Limits of one turn.
#[derive(Debug, Clone)]
pub struct AgentConfig {
    /// Tool calls one turn may make before it stops and says so.
    pub max_steps: usize,
    /// How much of the workspace the system prompt carries.
    pub budget: PromptBudget,
    /// Characters of earlier turns' messages sent as history.
    pub history_chars: usize,
    /// Upper bound on each answer's length.
    pub max_tokens: Option<u32>,
}

impl Default for AgentConfig {
    fn default() -> Self {
        Self {
            max_steps: 25,
            budget: PromptBudget::default(),
            history_chars: 48_000,
            max_tokens: None,
        }
    }
}

/// The longest user message accepted, in characters.
pub const MAX_MESSAGE_CHARS: usize = 32_000;

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
    /// The database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
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
    runtime: ToolRuntime,
    model: Arc<dyn ChatModel>,
    config: AgentConfig,
    running: Mutex<HashMap<String, Claim>>,
    next_claim: AtomicU64,
}

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
struct Claim {
    id: u64,
    cancel: CancellationToken,
}

/// How a turn's loop ended.
enum Outcome {
    Answered(String),
    StepLimit(String),
    Failed(String),
    Cancelled,
}

impl Agent {
    /// An agent that runs tools through `runtime` and thinks with `model`.
    pub fn new(runtime: ToolRuntime, model: Arc<dyn ChatModel>, config: AgentConfig) -> Self {
        Self {
            runtime,
            model: crate::metrics::instrument_model(model),
            config,
            running: Mutex::new(HashMap::new()),
            next_claim: AtomicU64::new(1),
        }
    }

    /// The model, for logs.
    pub fn describe_model(&self) -> String {
        self.model.describe()
    }

    /// Whether a real model is configured (not the stand-in that refuses every turn).
    pub fn model_configured(&self) -> bool {
        self.model.is_configured()
    }

    /// Marks turns left `running` by a previous process as failed, so their threads accept
    /// new turns. Call once at start-up.
    pub async fn recover(&self) -> Result<u64, StoreError> {
        let mut repo = self.runtime.database().begin_write().await?;
        let n = repo
            .fail_running_turns("interrupted: the server stopped during this turn")
            .await?;
        repo.commit().await?;
        Ok(n)
    }

    /// Starts a turn: records the user's message, announces the turn and runs it in the
    /// background.
    pub async fn start(
        self: &Arc<Self>,
        thread_id: &ThreadId,
        message: &str,
    ) -> Result<StartedTurn, StartError> {
        let message = message.trim();
        if message.is_empty() {
            return Err(StartError::InvalidMessage("the message is empty".into()));
        }
        let chars = message.chars().count();
        if chars > MAX_MESSAGE_CHARS {
            return Err(StartError::InvalidMessage(format!(
                "the message is {chars} characters long; the limit is {MAX_MESSAGE_CHARS}"
            )));
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
        match self.open(thread_id, message).await {
            Ok((turn_index, first_seq)) => {
                crate::metrics::turn_started();
                let agent = Arc::clone(self);
                let thread = thread_id.clone();
                let text = message.to_string();
                let task = tokio::spawn(async move {
                    agent.run(&thread, turn_index, text, cancel, claim).await;
                    agent.release(&thread, claim);
                });
                Ok(StartedTurn {
                    turn_index,
                    first_seq,
                    task,
                })
            }
            Err(err) => {
                self.release(thread_id, claim);
                Err(err)
            }
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

    /// Opens the turn row, stores the user's message and logs the `turn` event.
    async fn open(&self, thread_id: &ThreadId, message: &str) -> Result<(i64, i64), StartError> {
        let db = self.runtime.database();
        let mut repo = db.begin_write().await?;
        let turn_index = match repo.open_turn(thread_id.as_str()).await {
            Ok(Some(turn)) => turn,
            Ok(None) => {
                repo.rollback().await?;
                return Err(StartError::UnknownThread(thread_id.to_string()));
            }
            Err(StoreError::AlreadyExists(_)) => {
                repo.rollback().await?;
                return Err(StartError::Busy);
            }
            Err(err) => return Err(err.into()),
        };
        repo.add_message(thread_id.as_str(), turn_index, "user", message)
            .await?;
        let events = repo
            .append_events(thread_id.as_str(), &[turn_event(turn_index)])
            .await?;
        repo.commit().await?;
        let first_seq = events.first().map_or(0, |e| e.seq);
        self.publish(thread_id, events);
        Ok((turn_index, first_seq))
    }

    async fn run(
        &self,
        thread_id: &ThreadId,
        turn_index: i64,
        message: String,
        cancel: CancellationToken,
        claim: u64,
    ) {
        let outcome = self.think(thread_id, turn_index, message, &cancel).await;
        self.close(thread_id, turn_index, outcome, claim).await;
    }

    /// The loop itself.
    async fn think(
        &self,
        thread_id: &ThreadId,
        turn_index: i64,
        message: String,
        cancel: &CancellationToken,
    ) -> Outcome {
        let tools = build_tools(thread_id);
        let definitions: Vec<ToolDefinition> = tools
            .specs()
            .into_iter()
            .map(|spec| ToolDefinition {
                name: spec.name.to_string(),
                description: spec.description.to_string(),
                parameters: spec.parameters.clone(),
            })
            .collect();
        let db = self.runtime.database();
        let mut messages = match load_history(
            db,
            thread_id.as_str(),
            turn_index,
            self.config.history_chars,
        )
        .await
        {
            Ok(history) => history,
            Err(err) => return Outcome::Failed(format!("could not read the conversation: {err}")),
        };
        // The unanswered message of a failed or cancelled last turn joins the new one, so the
        // model knows what "try again" refers to.
        match messages.last_mut() {
            Some(ChatMessage::User { content }) => {
                content.push_str("\n\n");
                content.push_str(&message);
            }
            _ => messages.push(ChatMessage::user(message)),
        }
        let mut steps: usize = 0;
        loop {
            if cancel.is_cancelled() {
                return Outcome::Cancelled;
            }
            let workspace = match PromptWorkspace::load(db, thread_id.as_str(), &self.config.budget)
                .await
            {
                Ok(ws) => ws,
                Err(err) => return Outcome::Failed(format!("could not read the workspace: {err}")),
            };
            let request = ModelRequest {
                system: system_prompt(&workspace),
                messages: messages.clone(),
                tools: definitions.clone(),
                max_tokens: self.config.max_tokens,
            };
            let stream = tokio::select! {
                result = self.model.stream(&request) => result,
                () = cancel.cancelled() => return Outcome::Cancelled,
            };
            let mut stream = match stream {
                Ok(stream) => stream,
                Err(err) => return Outcome::Failed(err.to_string()),
            };
            let mut text = String::new();
            let mut calls = Vec::new();
            loop {
                let item = tokio::select! {
                    item = stream.next() => item,
                    () = cancel.cancelled() => return Outcome::Cancelled,
                };
                match item {
                    None => break,
                    Some(Ok(ModelEvent::TextDelta(delta))) => {
                        if !delta.is_empty() {
                            self.publish_token(thread_id, &delta);
                            text.push_str(&delta);
                        }
                    }
                    Some(Ok(ModelEvent::ToolCall(call))) => calls.push(call),
                    Some(Ok(ModelEvent::Usage { .. } | ModelEvent::Finished { .. })) => {}
                    Some(Err(err)) => return Outcome::Failed(err.to_string()),
                }
            }
            if calls.is_empty() {
                return Outcome::Answered(text);
            }
            messages.push(ChatMessage::assistant(text.clone(), calls.clone()));
            for call in calls {
                if steps >= self.config.max_steps {
                    return Outcome::StepLimit(text);
                }
                if cancel.is_cancelled() {
                    return Outcome::Cancelled;
                }
                steps += 1;
                let step = StepContext {
                    turn_index,
                    step_index: i64::try_from(steps).unwrap_or(i64::MAX),
                };
                let record = self
                    .run_call(&tools, &call.name, &call.arguments, step)
                    .await;
                messages.push(ChatMessage::tool(
                    call.id,
                    call.name,
                    record.envelope.to_json_string(),
                ));
            }
            // At the limit the turn ends here, without asking the model once more.
            if steps >= self.config.max_steps {
                return Outcome::StepLimit(text);
            }
        }
    }

    /// Runs one requested call; arguments that are not a JSON object become a failed step.
    async fn run_call(
        &self,
        tools: &Toolset,
        name: &str,
        raw: &str,
        step: StepContext,
    ) -> crate::tools::ToolCall {
        let parsed = if raw.trim().is_empty() {
            Ok(Value::Object(serde_json::Map::new()))
        } else {
            serde_json::from_str::<Value>(raw)
        };
        match parsed {
            Ok(args) => self.runtime.call_in_turn(tools, name, args, step).await,
            Err(err) => {
                let shown: String = raw.chars().take(2_000).collect();
                self.runtime
                    .reject_in_turn(
                        tools,
                        name,
                        Value::String(shown),
                        format!(
                            "the arguments are not valid JSON ({err}); send one JSON object that \
                             matches the tool's schema"
                        ),
                        step,
                    )
                    .await
            }
        }
    }

    /// Records how the turn ended and announces it; retried a few times, because a turn left
    /// `running` would block its thread.
    async fn close(&self, thread_id: &ThreadId, turn_index: i64, outcome: Outcome, claim: u64) {
        let (status, message, error) = match outcome {
            Outcome::Answered(text) => (TurnStatus::Completed, Some(text), None),
            Outcome::StepLimit(text) => {
                let note = format!(
                    "I stopped here because this turn reached its limit of {} tool calls. Say \
                     \"continue\" and I will pick up where I left off.",
                    self.config.max_steps
                );
                let text = if text.trim().is_empty() {
                    note
                } else {
                    format!("{text}\n\n{note}")
                };
                (TurnStatus::Completed, Some(text), None)
            }
            Outcome::Failed(reason) => (TurnStatus::Failed, None, Some(reason)),
            Outcome::Cancelled => (
                TurnStatus::Cancelled,
                None,
                Some("the turn was cancelled".to_string()),
            ),
        };
        for attempt in 0..3u32 {
            match self
                .record_end(
                    thread_id,
                    turn_index,
                    status,
                    message.as_deref(),
                    error.as_deref(),
                    claim,
                )
                .await
            {
                Ok(()) => return,
                Err(err) => {
                    tracing::error!(target: "haico::agent", thread = %thread_id, turn_index, attempt, error = %err, "could not record the end of a turn");
                    tokio::time::sleep(std::time::Duration::from_millis(200 << attempt)).await;
                }
            }
        }
    }

    async fn record_end(
        &self,
        thread_id: &ThreadId,
        turn_index: i64,
        status: TurnStatus,
        message: Option<&str>,
        error: Option<&str>,
        claim: u64,
    ) -> Result<(), StoreError> {
        let thread = thread_id.as_str();
        let mut repo = self.runtime.database().begin_write().await?;
        let mut new = Vec::with_capacity(2);
        if let Some(text) = message {
            repo.add_message(thread, turn_index, "assistant", text)
                .await?;
            new.push(message_event(text, turn_index));
        }
        if let Some(reason) = error {
            new.push(error_event(reason, turn_index));
        }
        repo.close_turn(thread, turn_index, status, error).await?;
        let status_name = match status {
            TurnStatus::Running => "running",
            TurnStatus::Completed => "completed",
            TurnStatus::Failed => "failed",
            TurnStatus::Cancelled => "cancelled",
        };
        new.push(done_event(turn_index, status_name));
        let events = repo.append_events(thread, &new).await?;
        repo.commit().await?;
        crate::metrics::turn_finished(status_name);
        // Free the thread before announcing `done`, so a client that sends its next message
        // the moment it sees `done` is never told a turn is still running.
        self.release(thread_id, claim);
        self.publish(thread_id, events);
        Ok(())
    }

    fn publish(&self, thread_id: &ThreadId, events: Vec<crate::store::StoredEvent>) {
        self.runtime.bus().publish(
            thread_id.as_str(),
            events
                .into_iter()
                .map(|e| Arc::new(LiveEvent::from(e)))
                .collect(),
        );
    }

    fn publish_token(&self, thread_id: &ThreadId, text: &str) {
        self.runtime.bus().publish(
            thread_id.as_str(),
            vec![Arc::new(LiveEvent::transient("token", token_data(text)))],
        );
    }
}
