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
    panels::PanelSet,
    store::{Database, StoreError, WorkspaceRepository},
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

/// Runs tool calls against one database.
#[derive(Debug, Clone)]
pub struct ToolRuntime {
    db: Database,
}

impl ToolRuntime {
    /// A runtime over `db`.
    pub fn new(db: Database) -> Self {
        Self { db }
    }

    /// The database calls run against.
    pub fn database(&self) -> &Database {
        &self.db
    }

    /// Calls the tool `name` of `tools` with the model's raw JSON `args`.
    pub async fn call(&self, tools: &Toolset, name: &str, args: Value) -> ToolCall {
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
        match self.run(tools, name, args, &mut call).await {
            Ok(envelope) => call.envelope = envelope,
            Err((kind, message)) => {
                call.failure = Some(kind);
                call.changed = PanelSet::default();
                call.artifact = None;
                call.envelope = Envelope::failure(message);
            }
        }
        call.duration = started.elapsed();
        tracing::info!(
            target: "haico::tools",
            thread = %tools.thread_id(),
            tool = name,
            action_and_reasoning = call.action_and_reasoning.as_deref().unwrap_or(""),
            success = call.envelope.success,
            duration_us = u64::try_from(call.duration.as_micros()).unwrap_or(u64::MAX),
            "tool call"
        );
        call
    }

    async fn run(
        &self,
        tools: &Toolset,
        name: &str,
        args: Value,
        call: &mut ToolCall,
    ) -> Result<Envelope, (FailureKind, String)> {
        let tool = tools.get(name).ok_or_else(|| {
            let names: Vec<&str> = tools.iter().map(BoundTool::name).collect();
            (
                FailureKind::UnknownTool,
                format!("unknown tool `{name}`; the tools are: {}", names.join(", ")),
            )
        })?;
        let (reasoning, args) = split_action_and_reasoning(args)
            .map_err(|message| (FailureKind::InvalidArguments, message))?;
        call.action_and_reasoning = Some(reasoning);
        call.arguments = args.clone();

        let thread_id = tools.thread_id().as_str();
        let mut repo = self.db.begin_write().await.map_err(storage_failure)?;
        let turn_index = match repo.lock_thread(thread_id).await {
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
        match self.finish(&mut repo, thread_id, turn_index, output).await {
            Ok((envelope, artifact)) => {
                let changed = repo.commit().await.map_err(storage_failure)?;
                call.changed = changed;
                call.artifact = artifact;
                Ok(envelope)
            }
            Err(err) => {
                discard(repo).await;
                Err(storage_failure(err))
            }
        }
    }

    /// Stores the body's artifact and marks the thread active, still inside the transaction.
    async fn finish(
        &self,
        repo: &mut WorkspaceRepository,
        thread_id: &str,
        turn_index: i64,
        output: ToolOutput,
    ) -> Result<(Envelope, Option<StoredArtifact>), StoreError> {
        let mut envelope = Envelope::ok(output.summary);
        let mut stored = None;
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
            stored = Some(StoredArtifact {
                artifact_id: id,
                artifact_type: artifact.artifact_type,
                title: artifact.title,
                payload: artifact.payload,
                turn_index,
            });
        }
        if !repo.changed().is_empty() {
            repo.touch_thread(thread_id).await?;
        }
        Ok((envelope, stored))
    }
}

/// Takes `action_and_reasoning` out of the arguments; it must be a non-empty string.
fn split_action_and_reasoning(args: Value) -> Result<(String, Value), String> {
    let mut map = match args {
        Value::Object(map) => map,
        other => {
            return Err(format!(
                "arguments must be a JSON object, got {}",
                json_kind(&other)
            ));
        }
    };
    let missing = || {
        format!(
            "missing required argument `{ACTION_AND_REASONING}`: add one short, plain sentence \
             saying what you are doing and why"
        )
    };
    match map.remove(ACTION_AND_REASONING) {
        Some(Value::String(text)) if !text.trim().is_empty() => {
            Ok((text.trim().to_string(), Value::Object(map)))
        }
        Some(Value::String(_)) => Err(format!(
            "`{ACTION_AND_REASONING}` is empty: say in one plain sentence what you are doing and why"
        )),
        Some(other) => Err(format!(
            "`{ACTION_AND_REASONING}` must be a string, got {}",
            json_kind(&other)
        )),
        None => Err(missing()),
    }
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
