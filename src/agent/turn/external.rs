//! Other MCP servers' tools in a turn (SPEC §13): how they are described to the model, and a
//! call of one as a step like any other (recorded, announced, timed, in the history), which
//! writes nothing to the workspace and makes no revision.
//!
//! What the server answers is untrusted text: it reaches the model inside the envelope (cut to
//! a budget by [`crate::mcp_client::result`]) and the trace as data; nothing of it is executed
//! or written to the workspace, except through a workspace tool the model then calls.

use std::time::Instant;

use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::{
    agent::model::ToolDefinition, mcp_client::McpServers, mcp_client::OfferedTool,
    mcp_client::approval::Decision, tools::ACTION_AND_REASONING, tools::Envelope,
    tools::FailureKind, tools::InTurn, tools::ToolCall, tools::ToolRuntime,
    tools::split_action_and_reasoning,
};

use haico_store::{NewToolCall, ThreadId};

use haico_core::workspace::ApprovalRequest;

/// The external tools of one turn: fixed when the turn starts, so the model's tool list does
/// not change under it.
#[derive(Debug, Default)]
pub(super) struct ExternalTools {
    servers: Option<McpServers>,
    offered: Vec<OfferedTool>,
    /// The servers the thread chose (`None`: all of them).
    chosen: Option<Vec<String>>,
}

impl ExternalTools {
    /// The tools `servers` offer now, of the servers the thread `chosen` (`None`: all). The
    /// choice only removes whole servers from a sorted list, so the list stays the same from
    /// request to request, and from turn to turn while the choice and the servers' tools stay.
    pub(super) fn now(servers: Option<&McpServers>, chosen: Option<Vec<String>>) -> Self {
        match servers {
            Some(servers) if !servers.is_empty() => {
                let mut offered = servers.offered();
                if let Some(chosen) = &chosen {
                    offered.retain(|tool| chosen.contains(&tool.server));
                }
                Self {
                    offered,
                    servers: Some(servers.clone()),
                    chosen,
                }
            }
            _ => Self::default(),
        }
    }

    /// Why `name` may not be called on this thread: it is a tool of a configured server the
    /// thread left out (a model may still name it, from an earlier turn or by guessing).
    fn excluded(&self, name: &str) -> Option<String> {
        let chosen = self.chosen.as_ref()?;
        let server = self.servers.as_ref()?.server_of(name)?;
        if chosen.iter().any(|c| c == server) {
            return None;
        }
        let offered = if chosen.is_empty() {
            "it uses none".to_string()
        } else {
            let listed: Vec<String> = chosen.iter().map(|c| format!("`{c}`")).collect();
            format!("it uses {}", listed.join(", "))
        };
        Some(format!(
            "`{name}` is a tool of MCP server `{server}`, which this thread does not use \
             ({offered}); the call was not made. Use the tools you are offered."
        ))
    }

    /// How the model sees them: the server's description and schema, with the required
    /// `action_and_reasoning` added, in name order.
    pub(super) fn definitions(&self) -> Vec<ToolDefinition> {
        self.offered
            .iter()
            .map(|offered| ToolDefinition {
                name: offered.full_name.clone(),
                description: offered.tool.description.clone(),
                parameters: with_reason(&offered.tool.input_schema),
            })
            .collect()
    }

    /// Their names.
    pub(super) fn names(&self) -> impl Iterator<Item = &str> {
        self.offered
            .iter()
            .map(|offered| offered.full_name.as_str())
    }

    /// Whether `name` is one of this turn's external tools, or names a configured server's
    /// tool (one that went away since: the call then fails saying why).
    pub(super) fn handles(&self, name: &str) -> bool {
        self.offered.iter().any(|offered| offered.full_name == name)
            || self
                .servers
                .as_ref()
                .is_some_and(|servers| servers.claims(name))
    }

    /// Whether the tool itself declares `action_and_reasoning`: then the agent's sentence is
    /// passed on instead of stripped.
    fn wants_reason(&self, name: &str) -> bool {
        self.offered.iter().any(|offered| {
            offered.full_name == name
                && offered
                    .tool
                    .input_schema
                    .get("properties")
                    .and_then(Value::as_object)
                    .is_some_and(|props| props.contains_key(ACTION_AND_REASONING))
        })
    }

    /// Runs the call `name(args)` as step `at` of a turn on `thread`: the server is asked, the
    /// outcome becomes an envelope, and the step is recorded and announced. Never fails: every
    /// problem is a failed envelope the model reads. Cancelling the turn stops the wait at once
    /// (the server may still finish the call; the step says it was abandoned).
    pub(super) async fn call(
        &self,
        runtime: &ToolRuntime,
        thread: &ThreadId,
        name: &str,
        args: Value,
        at: InTurn,
        cancel: &CancellationToken,
    ) -> ToolCall {
        let started = Instant::now();
        let mut call = ToolCall::starting(name, Some(at.turn_index));
        let excluded = self.excluded(name);
        let outcome = match split_action_and_reasoning(args) {
            Err((message, sent)) => {
                call.arguments = sent;
                Err((FailureKind::InvalidArguments, message))
            }
            Ok((reason, args)) if excluded.is_some() => {
                call.arguments = args;
                call.action_and_reasoning = Some(reason);
                Err((FailureKind::UnknownTool, excluded.unwrap_or_default()))
            }
            Ok((reason, args)) => {
                call.arguments = args.clone();
                call.action_and_reasoning = Some(reason.clone());
                let mut args = match args {
                    Value::Object(map) => map,
                    _ => Map::new(),
                };
                if self.wants_reason(name) {
                    args.insert(
                        ACTION_AND_REASONING.to_string(),
                        Value::String(reason.clone()),
                    );
                }
                let approval = match &self.servers {
                    Some(servers) if servers.needs_approval(name) => {
                        let request = ApprovalRequest {
                            call_id: format!("{}-{}", at.turn_index, at.call_index),
                            tool: name.to_string(),
                            arguments: call.arguments.clone(),
                            action_and_reasoning: reason.clone(),
                            turn_index: at.turn_index,
                        };
                        Some(ask_approval(runtime, servers, thread, request, cancel).await)
                    }
                    _ => None,
                };
                match (&self.servers, approval) {
                    (None, _) => Err((
                        FailureKind::UnknownTool,
                        format!("unknown tool `{name}`: no MCP servers are configured"),
                    )),
                    (Some(_), Some(Err(message))) => Err((FailureKind::External, message)),
                    (Some(servers), approved) => {
                        let answer = tokio::select! {
                            answer = async {
                                if approved.is_some() {
                                    servers.call_approved(name, args).await
                                } else {
                                    servers.call(name, args).await
                                }
                            } => Some(answer),
                            () = cancel.cancelled() => None,
                        };
                        match answer {
                            Some(Ok(result)) if result.is_error => {
                                Err((FailureKind::External, result.text))
                            }
                            Some(Ok(result)) => Ok(result.text),
                            Some(Err(err)) => Err((FailureKind::External, err.to_string())),
                            None => Err((
                                FailureKind::External,
                                "the turn was cancelled while waiting for this call; it was \
                                 abandoned"
                                    .to_string(),
                            )),
                        }
                    }
                }
            }
        };
        match outcome {
            Ok(text) => call.envelope = Envelope::ok(text),
            Err((kind, message)) => {
                call.failure = Some(kind);
                call.envelope = Envelope::failure(message);
            }
        }
        call.duration = started.elapsed();
        tracing::info!(
            tool = name,
            action_and_reasoning = call.action_and_reasoning.as_deref().unwrap_or(""),
            success = call.envelope.success,
            duration_us = u64::try_from(call.duration.as_micros()).unwrap_or(u64::MAX),
            "external tool call"
        );
        let result = call.envelope.to_value();
        let record = NewToolCall {
            turn_index: at.turn_index,
            call_index: at.call_index,
            tool: &call.tool,
            arguments: &call.arguments,
            action_and_reasoning: call.action_and_reasoning.as_deref(),
            result: &result,
            success: call.envelope.success,
            duration_ms: call.duration.as_secs_f64() * 1000.0,
        };
        if let Err(err) = runtime.workspaces().record_tool_call(thread, record).await {
            tracing::error!(error = %err, "could not record an external tool call");
        }
        call
    }
}

/// Announces `request` and waits for a person's decision, the turn's cancellation or the
/// approval timeout, whichever comes first, then announces how it ended. Holds no transaction
/// and no lock while it waits. `Err` carries what the model is told when the call is not made.
async fn ask_approval(
    runtime: &ToolRuntime,
    servers: &McpServers,
    thread: &ThreadId,
    request: ApprovalRequest,
    cancel: &CancellationToken,
) -> Result<(), String> {
    let workspaces = runtime.workspaces();
    let tool = request.tool.clone();
    let call_id = request.call_id.clone();
    let mut data = serde_json::to_value(&request).unwrap_or_else(|_| json!({}));
    // Recorded (for every replica) and listed before it is announced, so a client reacting to
    // the event finds it.
    if let Err(err) = workspaces.record_approval(thread, &request).await {
        tracing::error!(error = %err, "could not record a call waiting for approval");
        return Err(format!(
            "the request for the person's approval of `{tool}` could not be recorded, so the \
             call was not made; try again later"
        ));
    }
    let mut pending = servers.approvals().ask(thread.as_str(), request);
    data["status"] = json!("waiting");
    workspaces.announce_approval(thread, data.to_string());
    let timeout = servers.approval_timeout();
    tracing::info!(tool = %tool, "waiting for the person's approval of an external call");
    let decision = tokio::select! {
        approve = pending.answer() => if approve { Decision::Approved } else { Decision::Declined },
        approve = decided_elsewhere(workspaces, thread, &call_id) => {
            if approve { Decision::Approved } else { Decision::Declined }
        }
        () = tokio::time::sleep(timeout) => Decision::TimedOut,
        () = cancel.cancelled() => Decision::Cancelled,
    };
    // Taken out of the list before the decision is announced: a late decision finds nothing.
    drop(pending);
    if let Err(err) = workspaces.forget_approval(thread, &call_id).await {
        // Harmless: a row whose turn has ended is neither listed nor decidable.
        tracing::warn!(error = %err, "could not forget a call that waited for approval");
    }
    data["status"] = json!(decision.as_str());
    workspaces.announce_approval(thread, data.to_string());
    if let Some(server) = servers.server_of(&tool) {
        crate::metrics::mcp_approval(server, decision.as_str());
    }
    match decision {
        Decision::Approved => Ok(()),
        Decision::Declined => Err(format!(
            "the person declined this call of `{tool}`; it was not made. Do not retry it \
             unless they ask for it."
        )),
        Decision::TimedOut => Err(format!(
            "no one approved this call of `{tool}` within {} s, so it was declined and not made",
            timeout.as_secs().max(1)
        )),
        Decision::Cancelled => Err(
            "the turn was cancelled while this call waited for the person's approval; it was \
             not made"
                .to_string(),
        ),
    }
}

/// How often a waiting turn looks for a decision made on another replica: a person's click
/// reaches the turn within this (a decision made on the turn's own replica wakes it at once).
const DECISION_POLL: std::time::Duration = std::time::Duration::from_millis(250);

/// Resolves with the decision on `call_id` once one is recorded in the database (made on any
/// replica). A failed read is only logged: the next one may work, and the timeout still ends
/// the wait.
async fn decided_elsewhere(
    workspaces: &haico_core::workspace::Workspaces,
    thread: &ThreadId,
    call_id: &str,
) -> bool {
    loop {
        tokio::time::sleep(DECISION_POLL).await;
        match workspaces.approval_decision(thread, call_id).await {
            Ok(Some(approve)) => return approve,
            Ok(None) => {}
            Err(err) => tracing::warn!(error = %err, "could not read a decision on a call"),
        }
    }
}

/// The server's schema with the required `action_and_reasoning` added (the schema is left as
/// the server wrote it otherwise).
fn with_reason(schema: &Map<String, Value>) -> Value {
    let mut root = schema.clone();
    root.remove("$schema");
    crate::tools::require_reason(&mut root);
    Value::Object(root)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reason_is_added_once_and_the_rest_kept() {
        let schema = json!({"type": "object", "$schema": "x",
            "properties": {"path": {"type": "string"}}, "required": ["path"]});
        let schema = schema.as_object().cloned().unwrap_or_default();
        let with = with_reason(&schema);
        assert_eq!(with["required"], json!(["path", "action_and_reasoning"]));
        assert!(with.get("$schema").is_none());
        assert_eq!(with["properties"]["path"], json!({"type": "string"}));
        let again = with.as_object().cloned().unwrap_or_default();
        assert_eq!(
            with_reason(&again)["required"],
            json!(["path", "action_and_reasoning"])
        );
        assert_eq!(
            with_reason(&Map::new())["required"],
            json!(["action_and_reasoning"])
        );
    }
}
