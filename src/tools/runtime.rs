//! The runtime around every tool call: argument checks, one transaction per call, panic
//! containment, artifact storage and the envelope.
//!
//! Whatever happens inside a body, the caller gets a [`ToolCall`] with an [`Envelope`]; a
//! failed call (bad arguments, unknown thread, database error, panic) has written nothing.

use std::{
    panic::AssertUnwindSafe,
    time::{Duration, Instant},
};

use futures::FutureExt;
use serde::Serialize;
use serde_json::{Map, Value, json};

use super::{
    args::json_kind,
    collection::{BoundTool, Toolset},
    envelope::Envelope,
    output::{ToolError, ToolOutput},
    spec::ACTION_AND_REASONING,
};
use crate::{
    events::{
        EventSource, InProcessBus, LiveEvent, SharedBus, artifact_event, step_event,
        workspace_event,
    },
    panels::PanelSet,
    store::{Database, NewStep, StoreError, StoredEvent, WorkspaceRepository},
};

/// Why a call failed, for callers that map failures onto something else (HTTP status codes,
/// metrics labels).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// No tool has that name.
    UnknownTool,
    /// The thread does not exist.
    UnknownThread,
    /// The arguments were malformed or broke a rule.
    InvalidArguments,
    /// The call referred to something that does not exist.
    NotFound,
    /// The database failed.
    Storage,
    /// The body panicked.
    Panic,
}

/// An artifact a call stored, as announced to clients.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StoredArtifact {
    /// Its id.
    pub artifact_id: i64,
    /// Its type tag.
    pub artifact_type: String,
    /// Its title.
    pub title: Option<String>,
    /// Its content.
    pub payload: Value,
    /// The turn it belongs to.
    pub turn_index: i64,
}

/// Everything about one finished call: what was asked, what came back, what changed.
#[derive(Debug, Clone)]
pub struct ToolCall {
    /// The tool's name as called.
    pub tool: String,
    /// The arguments, without `action_and_reasoning`.
    pub arguments: Value,
    /// The agent's one-sentence account of the call, when it gave one.
    pub action_and_reasoning: Option<String>,
    /// What the model reads.
    pub envelope: Envelope,
    /// The panels the call changed (empty on failure).
    pub changed: PanelSet,
    /// The artifact the call stored, if any.
    pub artifact: Option<StoredArtifact>,
    /// Why it failed, when it did.
    pub failure: Option<FailureKind>,
    /// The thread's turn index the call ran under, when the thread exists.
    pub turn_index: Option<i64>,
    /// Wall time of the whole call.
    pub duration: Duration,
}

/// Runs tool calls against one database and announces their changes on an event bus.
#[derive(Debug, Clone)]
pub struct ToolRuntime {
    db: Database,
    bus: SharedBus,
}

impl ToolRuntime {
    /// A runtime over `db` with a bus of its own (enough when nobody else subscribes).
    pub fn new(db: Database) -> Self {
        Self::with_bus(db, std::sync::Arc::new(InProcessBus::new()))
    }

    /// A runtime over `db` that publishes on `bus`, shared with the HTTP layer's subscribers.
    pub fn with_bus(db: Database, bus: SharedBus) -> Self {
        Self { db, bus }
    }

    /// The database calls run against.
    pub fn database(&self) -> &Database {
        &self.db
    }

    /// The bus calls publish on.
    pub fn bus(&self) -> &SharedBus {
        &self.bus
    }

    /// Calls the tool `name` of `tools` with the model's raw JSON `args`, outside any turn.
    pub async fn call(&self, tools: &Toolset, name: &str, args: Value) -> ToolCall {
        self.call_with(tools, name, args, None).await
    }

    /// Calls a tool as step `step` of an agent turn: besides the call itself, the step is
    /// recorded (in the call's transaction when it succeeds, in one of its own when it fails)
    /// and announced with a `step` event before the call's `artifact` and `workspace` events.
    pub async fn call_in_turn(
        &self,
        tools: &Toolset,
        name: &str,
        args: Value,
        step: StepContext,
    ) -> ToolCall {
        self.call_with(tools, name, args, Some(step)).await
    }

    /// Records a call that could not even be attempted (the model's arguments were not JSON,
    /// say) as a failed step of a turn, so the model and the trace both see why.
    pub async fn reject_in_turn(
        &self,
        tools: &Toolset,
        name: &str,
        arguments: Value,
        error: String,
        step: StepContext,
    ) -> ToolCall {
        let mut call = ToolCall {
            tool: name.to_string(),
            arguments,
            action_and_reasoning: None,
            envelope: Envelope::failure(error),
            changed: PanelSet::default(),
            artifact: None,
            failure: Some(FailureKind::InvalidArguments),
            turn_index: Some(step.turn_index),
            duration: Duration::ZERO,
        };
        self.record_failed_step(tools, &mut call, step).await;
        crate::metrics::tool_call(tools, name, call.failure, call.duration);
        call
    }

    async fn call_with(
        &self,
        tools: &Toolset,
        name: &str,
        args: Value,
        step: Option<StepContext>,
    ) -> ToolCall {
        let started = Instant::now();
        let mut call = ToolCall {
            tool: name.to_string(),
            arguments: Value::Object(Map::new()),
            action_and_reasoning: None,
            envelope: Envelope::failure(""),
            changed: PanelSet::default(),
            artifact: None,
            failure: None,
            turn_index: None,
            duration: Duration::ZERO,
        };
        let outcome = self.run(tools, name, args, &mut call, step, started).await;
        call.duration = started.elapsed();
        match outcome {
            Ok(envelope) => call.envelope = envelope,
            Err((kind, message)) => {
                call.failure = Some(kind);
                call.changed = PanelSet::default();
                call.artifact = None;
                call.envelope = Envelope::failure(message);
                if let Some(step) = step
                    && kind != FailureKind::UnknownThread
                {
                    self.record_failed_step(tools, &mut call, step).await;
                }
            }
        }
        tracing::info!(
            target: "haico::tools",
            thread = %tools.thread_id(),
            tool = name,
            action_and_reasoning = call.action_and_reasoning.as_deref().unwrap_or(""),
            success = call.envelope.success,
            duration_us = u64::try_from(call.duration.as_micros()).unwrap_or(u64::MAX),
            "tool call"
        );
        crate::metrics::tool_call(tools, name, call.failure, call.duration);
        call
    }

    /// Writes a failed step and its event in a transaction of its own (the call's own was
    /// rolled back). A storage failure here is logged: the model still gets its envelope.
    async fn record_failed_step(&self, tools: &Toolset, call: &mut ToolCall, step: StepContext) {
        let thread_id = tools.thread_id().as_str();
        let result: Result<Vec<StoredEvent>, StoreError> = async {
            let mut repo = self.db.begin_write().await?;
            let events = record_step(&mut repo, thread_id, call, step).await?;
            repo.commit().await?;
            Ok(events)
        }
        .await;
        match result {
            Ok(events) => publish(&self.bus, thread_id, events),
            Err(err) => {
                tracing::error!(target: "haico::tools", error = %err, "could not record a failed step");
            }
        }
    }

    async fn run(
        &self,
        tools: &Toolset,
        name: &str,
        args: Value,
        call: &mut ToolCall,
        step: Option<StepContext>,
        started: Instant,
    ) -> Result<Envelope, (FailureKind, String)> {
        // The record keeps what was asked, also when the call fails before it runs (an
        // unknown tool, a missing `action_and_reasoning`), so the step's trace shows it.
        let split = match split_action_and_reasoning(args) {
            Ok((reasoning, args)) => {
                call.action_and_reasoning = Some(reasoning);
                call.arguments = args.clone();
                Ok(args)
            }
            Err((message, sent)) => {
                call.arguments = sent;
                Err(message)
            }
        };
        let tool = tools.get(name).ok_or_else(|| {
            let names: Vec<&str> = tools.iter().map(BoundTool::name).collect();
            (
                FailureKind::UnknownTool,
                format!("unknown tool `{name}`; the tools are: {}", names.join(", ")),
            )
        })?;
        let args = split.map_err(|message| (FailureKind::InvalidArguments, message))?;

        let thread_id = tools.thread_id().as_str();
        // A read-only tool runs on a read snapshot (SQLite's reader connections) and takes no
        // thread lock; any other runs in a write transaction holding the thread's row lock.
        let read_only = tool.read_only();
        let mut repo = if read_only {
            self.db.begin_read().await
        } else {
            self.db.begin_write().await
        }
        .map_err(storage_failure)?;
        let turn = if read_only {
            repo.get_thread(thread_id)
                .await
                .map(|thread| thread.map(|t| t.turn_index))
        } else {
            repo.lock_thread(thread_id).await
        };
        let turn_index = match turn {
            Ok(Some(turn)) => turn,
            Ok(None) => {
                discard(repo).await;
                return Err((
                    FailureKind::UnknownThread,
                    format!("thread `{thread_id}` does not exist"),
                ));
            }
            Err(err) => {
                discard(repo).await;
                return Err(storage_failure(err));
            }
        };
        call.turn_index = Some(turn_index);

        let outcome = AssertUnwindSafe(tool.invoke(&mut repo, args))
            .catch_unwind()
            .await;
        let output = match outcome {
            Ok(Ok(output)) => output,
            Ok(Err(err)) => {
                discard(repo).await;
                return Err(body_failure(err));
            }
            Err(panic) => {
                discard(repo).await;
                tracing::error!(
                    target: "haico::tools",
                    tool = name,
                    panic = panic_message(&*panic),
                    "tool body panicked; its transaction was rolled back"
                );
                return Err((
                    FailureKind::Panic,
                    format!(
                        "tool `{name}` failed with an internal error; nothing was changed. \
                         Try again or continue without it."
                    ),
                ));
            }
        };
        if read_only {
            discard(repo).await;
            return self
                .finish_read(thread_id, output, call, step, started)
                .await;
        }
        match self
            .finish(
                &mut repo, thread_id, turn_index, output, call, step, started,
            )
            .await
        {
            Ok((envelope, events)) => {
                let changed = repo.commit().await.map_err(storage_failure)?;
                call.changed = changed;
                publish(&self.bus, thread_id, events);
                Ok(envelope)
            }
            Err(err) => {
                discard(repo).await;
                Err(storage_failure(err))
            }
        }
    }

    /// The end of a read-only call: nothing to commit; in a turn, the step is recorded in a
    /// write transaction of its own.
    async fn finish_read(
        &self,
        thread_id: &str,
        output: ToolOutput,
        call: &mut ToolCall,
        step: Option<StepContext>,
        started: Instant,
    ) -> Result<Envelope, (FailureKind, String)> {
        if output.artifact.is_some() {
            return Err((
                FailureKind::Storage,
                format!(
                    "tool `{}` is declared read-only but made an artifact; nothing was stored",
                    call.tool
                ),
            ));
        }
        let envelope = Envelope::ok(output.summary);
        if let Some(step) = step {
            call.envelope = envelope.clone();
            call.duration = started.elapsed();
            let mut repo = self.db.begin_write().await.map_err(storage_failure)?;
            match record_step(&mut repo, thread_id, call, step).await {
                Ok(events) => {
                    repo.commit().await.map_err(storage_failure)?;
                    publish(&self.bus, thread_id, events);
                }
                Err(err) => {
                    discard(repo).await;
                    return Err(storage_failure(err));
                }
            }
        }
        Ok(envelope)
    }

    /// Stores the body's artifact, records the step (in a turn), logs the events announcing
    /// the change and marks the thread active, all still inside the call's transaction.
    /// Returns the envelope and the events to publish once committed.
    #[allow(clippy::too_many_arguments)]
    async fn finish(
        &self,
        repo: &mut WorkspaceRepository,
        thread_id: &str,
        turn_index: i64,
        output: ToolOutput,
        call: &mut ToolCall,
        step: Option<StepContext>,
        started: Instant,
    ) -> Result<(Envelope, Vec<StoredEvent>), StoreError> {
        let mut envelope = Envelope::ok(output.summary);
        if let Some(artifact) = output.artifact {
            let id = repo
                .add_artifact(
                    thread_id,
                    &artifact.artifact_type,
                    artifact.title.as_deref(),
                    &artifact.payload,
                    turn_index,
                )
                .await?;
            envelope.artifact = Some(json!({
                "artifact_type": artifact.artifact_type,
                "title": artifact.title,
                "payload": artifact.payload,
            }));
            envelope.artifact_id = Some(id);
            call.artifact = Some(StoredArtifact {
                artifact_id: id,
                artifact_type: artifact.artifact_type,
                title: artifact.title,
                payload: artifact.payload,
                turn_index,
            });
        }
        let changed = repo.changed();
        let mut events = Vec::new();
        if let Some(step) = step {
            call.envelope = envelope.clone();
            call.duration = started.elapsed();
            events.extend(record_step(repo, thread_id, call, step).await?);
        }
        if !changed.is_empty() {
            let mut new = Vec::with_capacity(2);
            if let Some(artifact) = &call.artifact {
                new.push(artifact_event(artifact));
            }
            new.push(workspace_event(changed, EventSource::Agent));
            events.extend(repo.append_events(thread_id, &new).await?);
            repo.touch_thread(thread_id).await?;
        }
        Ok((envelope, events))
    }
}

/// The position of a tool call in an agent turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepContext {
    /// The turn.
    pub turn_index: i64,
    /// The call's position in the turn, from 1.
    pub step_index: i64,
}

/// Stores a step row and appends its `step` event, in `repo`'s transaction.
async fn record_step(
    repo: &mut WorkspaceRepository,
    thread_id: &str,
    call: &ToolCall,
    step: StepContext,
) -> Result<Vec<StoredEvent>, StoreError> {
    let result = call.envelope.to_value();
    let duration_ms = call.duration.as_secs_f64() * 1000.0;
    repo.add_step(
        thread_id,
        NewStep {
            turn_index: step.turn_index,
            step_index: step.step_index,
            tool: &call.tool,
            arguments: &call.arguments,
            action_and_reasoning: call.action_and_reasoning.as_deref(),
            result: &result,
            success: call.envelope.success,
            duration_ms,
        },
    )
    .await?;
    let event = step_event(call, &result, step.turn_index, duration_ms);
    repo.append_events(thread_id, &[event]).await
}

/// Hands committed events to the bus.
pub(crate) fn publish(bus: &SharedBus, thread_id: &str, events: Vec<StoredEvent>) {
    if !events.is_empty() {
        bus.publish(
            thread_id,
            events
                .into_iter()
                .map(|e| std::sync::Arc::new(LiveEvent::from(e)))
                .collect(),
        );
    }
}

/// Takes `action_and_reasoning` out of the arguments; it must be a non-empty string. On
/// failure the error comes with the arguments as sent (an empty sentence left out), for the
/// record.
fn split_action_and_reasoning(args: Value) -> Result<(String, Value), (String, Value)> {
    let mut map = match args {
        Value::Object(map) => map,
        other => {
            let message = format!("arguments must be a JSON object, got {}", json_kind(&other));
            return Err((message, other));
        }
    };
    let message = match map.remove(ACTION_AND_REASONING) {
        Some(Value::String(text)) if !text.trim().is_empty() => {
            return Ok((text.trim().to_string(), Value::Object(map)));
        }
        Some(Value::String(_)) => format!(
            "`{ACTION_AND_REASONING}` is empty: say in one plain sentence what you are doing and why"
        ),
        Some(other) => {
            let message = format!(
                "`{ACTION_AND_REASONING}` must be a string, got {}",
                json_kind(&other)
            );
            map.insert(ACTION_AND_REASONING.to_string(), other);
            message
        }
        None => format!(
            "missing required argument `{ACTION_AND_REASONING}`: add one short, plain sentence \
             saying what you are doing and why"
        ),
    };
    Err((message, Value::Object(map)))
}

fn storage_failure(err: StoreError) -> (FailureKind, String) {
    tracing::error!(target: "haico::tools", error = %err, "tool call hit a storage error");
    (
        FailureKind::Storage,
        format!("the workspace could not be saved ({err}); nothing was changed"),
    )
}

fn body_failure(err: ToolError) -> (FailureKind, String) {
    let kind = match &err {
        ToolError::InvalidArguments(_) => FailureKind::InvalidArguments,
        ToolError::NotFound(_) => FailureKind::NotFound,
        ToolError::Store(_) => FailureKind::Storage,
    };
    if let ToolError::Store(inner) = &err {
        tracing::error!(target: "haico::tools", error = %inner, "tool body hit a storage error");
    }
    (kind, err.to_string())
}

/// Rolls back; a failed rollback is only logged, since the connection discards the
/// transaction anyway when it goes back to the pool.
async fn discard(repo: WorkspaceRepository) {
    if let Err(err) = repo.rollback().await {
        tracing::warn!(target: "haico::tools", error = %err, "rollback failed");
    }
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(text) = panic.downcast_ref::<&str>() {
        (*text).to_string()
    } else if let Some(text) = panic.downcast_ref::<String>() {
        text.clone()
    } else {
        "non-text panic".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn action_and_reasoning_is_required_and_stripped() {
        let (why, rest) =
            split_action_and_reasoning(json!({"action_and_reasoning": " Tidy up. ", "x": 1}))
                .unwrap_or_default();
        assert_eq!(why, "Tidy up.");
        assert_eq!(rest, json!({"x": 1}));
        assert!(split_action_and_reasoning(json!({"x": 1})).is_err());
        assert!(split_action_and_reasoning(json!({"action_and_reasoning": ""})).is_err());
        assert!(split_action_and_reasoning(json!({"action_and_reasoning": 3})).is_err());
        assert!(split_action_and_reasoning(json!([1])).is_err());
    }
}
