//! The runtime around every tool call: argument checks, one workspace edit per call, panic
//! containment, the artifact and the envelope.
//!
//! Whatever happens inside a body, the caller gets a [`ToolCall`] with an [`Envelope`]; a
//! failed call (bad arguments, unknown thread, a broken rule, database error, panic) has
//! written nothing. Changes are committed and announced by the workspace's one commit path
//! ([`Edit::commit`](crate::workspace::Edit::commit)), never here.

use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use tracing::Instrument;

use super::{
    collection::{BoundTool, Toolset},
    envelope::Envelope,
    output::ToolOutput,
};
use haico_core::{
    events::SharedBus, workspace::ChangeNote, workspace::Edit, workspace::StoredArtifact,
    workspace::WorkspaceError, workspace::Workspaces,
};
use haico_store::{Database, NewToolCall, panels::PanelSet};

mod arguments;
mod failures;

pub use arguments::split_action_and_reasoning;
pub use failures::FailureKind;
use failures::{Failure, contain, declaration_mismatch, open_failure, storage_failure};

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

impl ToolCall {
    /// A call of `name` about to run: nothing known of it yet but its name and turn.
    pub fn starting(name: &str, turn_index: Option<i64>) -> Self {
        Self {
            tool: name.to_string(),
            arguments: Value::Object(Map::new()),
            action_and_reasoning: None,
            envelope: Envelope::failure(""),
            changed: PanelSet::default(),
            artifact: None,
            failure: None,
            turn_index,
            duration: Duration::ZERO,
        }
    }
}

/// Where a tool call sits in an agent turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InTurn {
    /// The turn.
    pub turn_index: i64,
    /// The call's position in the turn, from 1.
    pub call_index: i64,
}

/// Runs tool calls against the workspaces of one database.
#[derive(Debug, Clone)]
pub struct ToolRuntime {
    workspaces: Workspaces,
}

impl ToolRuntime {
    /// A runtime over `db` with a bus of its own (enough when nobody else subscribes).
    pub fn new(db: Database) -> Self {
        Self::over(Workspaces::standalone(db))
    }

    /// A runtime over `db` that publishes on `bus`, shared with the HTTP layer's subscribers.
    pub fn with_bus(db: Database, bus: SharedBus) -> Self {
        Self::over(Workspaces::new(db, bus))
    }

    /// A runtime over the given workspaces.
    pub fn over(workspaces: Workspaces) -> Self {
        Self { workspaces }
    }

    /// The workspaces calls run against.
    pub fn workspaces(&self) -> &Workspaces {
        &self.workspaces
    }

    /// The same runtime, its calls made by `actor` (recorded as `by` in their revisions).
    pub fn acting_as(&self, actor: Option<haico_core::workspace::Actor>) -> Self {
        Self::over(self.workspaces.acting_as(actor))
    }

    /// The same runtime, its calls about `focus` (a turn on a person's selection).
    pub fn about(&self, focus: Option<haico_core::workspace::Focus>) -> Self {
        Self::over(self.workspaces.about(focus))
    }

    /// The database calls run against.
    pub fn database(&self) -> &Database {
        self.workspaces.database()
    }

    /// The bus calls publish on.
    pub fn bus(&self) -> &SharedBus {
        self.workspaces.bus()
    }

    /// Calls the tool `name` of `tools` with the model's raw JSON `args`, outside any turn.
    pub async fn call(&self, tools: &Toolset, name: &str, args: Value) -> ToolCall {
        self.call_with(tools, name, args, None).await
    }

    /// Calls a tool as the `call_index`th call of an agent turn: besides the call itself, it is
    /// recorded (in the call's transaction when it succeeds, in one of its own when it fails)
    /// and announced with a `step` event before the call's `artifact` and `workspace` events.
    pub async fn call_in_turn(
        &self,
        tools: &Toolset,
        name: &str,
        args: Value,
        at: InTurn,
    ) -> ToolCall {
        self.call_with(tools, name, args, Some(at)).await
    }

    /// Records a call that was not attempted (the model's arguments were not JSON, or it
    /// repeats a call already made) as a failed call of a turn, so the model and the trace
    /// both see why.
    pub async fn reject_in_turn(
        &self,
        tools: &Toolset,
        name: &str,
        arguments: Value,
        (kind, error): (FailureKind, String),
        at: InTurn,
    ) -> ToolCall {
        let mut arguments = arguments;
        // The trace shows the agent's reason even for a call that was not run.
        let action_and_reasoning = match &mut arguments {
            Value::Object(object) => {
                match object.remove(crate::tools::spec::ACTION_AND_REASONING) {
                    Some(Value::String(reason)) => Some(reason),
                    _ => None,
                }
            }
            _ => None,
        };
        let mut call = ToolCall {
            tool: name.to_string(),
            arguments,
            action_and_reasoning,
            envelope: Envelope::failure(error),
            changed: PanelSet::default(),
            artifact: None,
            failure: Some(kind),
            turn_index: Some(at.turn_index),
            duration: Duration::ZERO,
        };
        self.record_alone(tools, &mut call, at).await;
        crate::metrics::tool_call(
            known_tool(tools, name),
            call.failure.map(FailureKind::as_str),
            call.duration,
        );
        call
    }

    async fn call_with(
        &self,
        tools: &Toolset,
        name: &str,
        args: Value,
        at: Option<InTurn>,
    ) -> ToolCall {
        // A tool execution in OpenTelemetry's generative-AI terms (`execute_tool {name}`); the
        // `tool call` line below is its event, with the model's `action_and_reasoning`.
        let span = tracing::info_span!(
            "tool_call",
            thread = %tools.thread_id(),
            tool = name,
            turn = at.map(|at| at.turn_index),
            otel.name = tracing::field::Empty,
            gen_ai.operation.name = tracing::field::Empty,
            gen_ai.tool.name = tracing::field::Empty,
            haico.tool.success = tracing::field::Empty,
            error.type = tracing::field::Empty,
            otel.status_code = tracing::field::Empty,
        );
        if crate::telemetry::enabled() {
            span.record("otel.name", format!("execute_tool {name}"));
            span.record("gen_ai.operation.name", "execute_tool");
            span.record("gen_ai.tool.name", name);
        }
        async {
            let started = Instant::now();
            let mut call = ToolCall::starting(name, None);
            let outcome = self.run(tools, name, args, &mut call, at, started).await;
            call.duration = started.elapsed();
            match outcome {
                Ok(envelope) => call.envelope = envelope,
                Err((kind, message)) => {
                    call.failure = Some(kind);
                    call.changed = PanelSet::default();
                    call.artifact = None;
                    call.envelope = Envelope::failure(message);
                    if let Some(at) = at
                        && kind != FailureKind::UnknownThread
                    {
                        self.record_alone(tools, &mut call, at).await;
                    }
                }
            }
            if crate::telemetry::enabled() {
                let span = tracing::Span::current();
                span.record("haico.tool.success", call.envelope.success);
                if let Some(kind) = call.failure {
                    span.record("error.type", kind.as_str());
                    span.record("otel.status_code", "ERROR");
                }
            }
            tracing::info!(
                action_and_reasoning = call.action_and_reasoning.as_deref().unwrap_or(""),
                success = call.envelope.success,
                duration_us = u64::try_from(call.duration.as_micros()).unwrap_or(u64::MAX),
                "tool call"
            );
            crate::metrics::tool_call(
                known_tool(tools, name),
                call.failure.map(FailureKind::as_str),
                call.duration,
            );
            call
        }
        .instrument(span)
        .await
    }

    /// Records a call in a transaction of its own (its own was rolled back, or it only read).
    /// A storage failure here is logged: the model still gets its envelope.
    async fn record_alone(&self, tools: &Toolset, call: &mut ToolCall, at: InTurn) {
        let result = call.envelope.to_value();
        let record = tool_call_record(call, &result, at);
        if let Err(err) = self
            .workspaces
            .record_tool_call(tools.thread_id(), record)
            .await
        {
            tracing::error!(error = %err, "could not record a tool call");
        }
    }

    async fn run(
        &self,
        tools: &Toolset,
        name: &str,
        args: Value,
        call: &mut ToolCall,
        at: Option<InTurn>,
        started: Instant,
    ) -> Result<Envelope, Failure> {
        // The record keeps what was asked, also when the call fails before it runs (an
        // unknown tool, a missing `action_and_reasoning`), so the call's trace shows it.
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
        if tool.read_only() {
            self.run_read(tools, tool, args, call, at, started).await
        } else {
            self.run_write(tools, tool, args, call, at, started).await
        }
    }

    /// A read-only tool: runs on a glance (no thread lock, no transaction: a read-only tool
    /// reads one panel, and one statement is its own consistent snapshot); in a turn, the call
    /// is recorded afterwards in a short write of its own. The glance checks the thread in the
    /// panel's own statement, so the body runs before the thread is known to exist: whatever
    /// it answered, a missing thread makes the call fail as unknown.
    async fn run_read(
        &self,
        tools: &Toolset,
        tool: &BoundTool,
        args: Value,
        call: &mut ToolCall,
        at: Option<InTurn>,
        started: Instant,
    ) -> Result<Envelope, Failure> {
        let mut view = self
            .workspaces
            .glance(tools.thread_id())
            .await
            .map_err(open_failure)?;
        let outcome = match tool.read(&mut view, args) {
            Some(body) => contain(tool.name(), body).await,
            None => Err(declaration_mismatch(tool.name())),
        };
        let checked = view.check().await;
        call.turn_index = checked.is_ok().then(|| view.turn_index());
        view.close().await;
        checked.map_err(open_failure)?;
        let output = outcome?;
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
        if let Some(at) = at {
            call.envelope = envelope.clone();
            call.duration = started.elapsed();
            let result = envelope.to_value();
            self.workspaces
                .record_tool_call(tools.thread_id(), tool_call_record(call, &result, at))
                .await
                .map_err(storage_failure)?;
        }
        Ok(envelope)
    }

    /// A tool that may write: runs on an edit holding the thread, which is committed (and
    /// announced) when the body succeeds and discarded otherwise.
    async fn run_write(
        &self,
        tools: &Toolset,
        tool: &BoundTool,
        args: Value,
        call: &mut ToolCall,
        at: Option<InTurn>,
        started: Instant,
    ) -> Result<Envelope, Failure> {
        // The thread's lock (and the check that it exists) rides with the body's first
        // statement, so the thread is confirmed once the body has run.
        let mut edit = self
            .workspaces
            .edit_for_call(tools.thread_id())
            .await
            .map_err(open_failure)?;
        edit.set_reason(call.action_and_reasoning.clone());
        let outcome = match tool.write(&mut edit, args) {
            Some(body) => contain(tool.name(), body).await,
            None => Err(declaration_mismatch(tool.name())),
        };
        // The body's first statement took the lock and read the thread's row. A missing thread
        // is reported as such, whatever else the body ran into.
        match (edit.turn().await, &outcome) {
            (Ok(turn_index), _) => call.turn_index = Some(turn_index),
            (Err(err @ WorkspaceError::UnknownThread(_)), _) | (Err(err), Ok(_)) => {
                edit.discard().await;
                return Err(open_failure(err));
            }
            (Err(_), Err(_)) => {}
        }
        let outcome = match outcome {
            Ok(output) => finish(&mut edit, output, call, at, started)
                .await
                .map_err(storage_failure),
            Err(failure) => Err(failure),
        };
        let (envelope, committed) = edit
            .end(outcome, |envelope| {
                ChangeNote::tool(
                    call.tool.clone(),
                    call.action_and_reasoning.clone(),
                    envelope.summary.clone().unwrap_or_default(),
                )
                .in_turn(at.map(|at| at.turn_index))
            })
            .await
            .map_err(storage_failure)??;
        call.changed = committed.changed;
        Ok(envelope)
    }
}

/// Reports the artifact the body stored and, in a turn, records the call, all inside the call's
/// edit.
async fn finish(
    edit: &mut Edit,
    output: ToolOutput,
    call: &mut ToolCall,
    at: Option<InTurn>,
    started: Instant,
) -> Result<Envelope, WorkspaceError> {
    let mut envelope = Envelope::ok(output.summary);
    if let Some(stored) = output.artifact {
        envelope.artifact = Some(json!({
            "artifact_type": stored.artifact_type,
            "title": stored.title,
            "payload": stored.payload,
        }));
        envelope.artifact_id = Some(stored.artifact_id);
        call.artifact = Some(stored);
    }
    if let Some(at) = at {
        call.envelope = envelope.clone();
        call.duration = started.elapsed();
        let result = envelope.to_value();
        edit.record_tool_call(tool_call_record(call, &result, at))
            .await?;
    }
    Ok(envelope)
}

/// The row a call of a turn is recorded as; `result` is its envelope.
fn tool_call_record<'a>(call: &'a ToolCall, result: &'a Value, at: InTurn) -> NewToolCall<'a> {
    // (What a model made up may hold NUL characters: the workspace scrubs them as it records.)
    NewToolCall {
        turn_index: at.turn_index,
        call_index: at.call_index,
        tool: &call.tool,
        arguments: &call.arguments,
        action_and_reasoning: call.action_and_reasoning.as_deref(),
        result,
        success: call.envelope.success,
        duration_ms: call.duration.as_secs_f64() * 1000.0,
    }
}

/// The name a metrics label may carry: a tool of the toolset, or `unknown` for one the model
/// made up.
fn known_tool(tools: &Toolset, name: &str) -> &'static str {
    tools.get(name).map_or("unknown", BoundTool::name)
}
