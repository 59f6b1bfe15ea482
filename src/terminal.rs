//! `haico chat`: one agent turn in the terminal, for people without a browser. It runs the
//! same agent, tools and storage as the server (so the turn shows up live in any open web UI
//! on the same database) and prints what the events stream carries: each tool call as a line
//! with its tool and `action_and_reasoning`, and the answer as it streams.

use std::{io::Write, sync::Arc};

use anyhow::{Context, bail};
use futures::StreamExt;
use serde_json::Value;

use crate::{agent::AgentConfig, agent::model::ChatModel, agent::turn::Agent, tools::ToolRuntime};

use haico_store::{Database, ThreadId};

use haico_core::{events::InProcessBus, events::subscribe};

/// Runs one turn of `message` on `thread` and prints it to stdout (steps and errors go to
/// stderr-like lines on stdout, prefixed, so a pipe keeps the whole story). Fails when the
/// turn does not complete.
pub async fn run_turn(
    db: Database,
    model: Arc<dyn ChatModel>,
    config: AgentConfig,
    thread: &str,
    message: &str,
) -> anyhow::Result<()> {
    let thread = ThreadId::parse(thread)?;
    let bus = Arc::new(InProcessBus::new());
    let runtime = ToolRuntime::with_bus(db.clone(), bus.clone());
    runtime
        .workspaces()
        .threads()
        .ensure(&thread, "Terminal chat")
        .await
        .context("creating the thread")?;
    let agent = Arc::new(Agent::new(runtime, model, config));
    // Servers on the same database end turns whose lease runs out: this one's is kept alive.
    let leases = agent.keep_leases();
    let _stop_leases = AbortOnDrop(leases);
    let mut events = Box::pin(
        subscribe(db.clone(), bus, &thread, None)
            .await
            .context("following the thread's events")?,
    );
    let started = agent
        .start(&thread, message, None)
        .await
        .context("starting the turn")?;
    let mut out = std::io::stdout();
    let mut at_line_start = true;
    let mut status = String::from("failed");
    while let Some(item) = events.next().await {
        let event = item.context("reading the turn's events")?;
        let data: Value = serde_json::from_str(&event.data).unwrap_or(Value::Null);
        let turn = data.get("turn_index").and_then(Value::as_i64);
        match event.event.as_str() {
            "token" => {
                let text = data.get("text").and_then(Value::as_str).unwrap_or("");
                write!(out, "{text}")?;
                out.flush()?;
                at_line_start = text.ends_with('\n');
            }
            "step" if turn == Some(started.turn_index) => {
                if !at_line_start {
                    writeln!(out)?;
                }
                let tool = data.get("tool").and_then(Value::as_str).unwrap_or("?");
                let why = data
                    .get("action_and_reasoning")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let result = &data["result"];
                let label = if why.is_empty() {
                    tool.to_string()
                } else {
                    format!("{tool}: {why}")
                };
                if result.get("success").and_then(Value::as_bool) == Some(true) {
                    writeln!(out, "  · {label}")?;
                } else {
                    let error = result.get("error").and_then(Value::as_str).unwrap_or("");
                    writeln!(out, "  ✗ {label} — {error}")?;
                }
                at_line_start = true;
            }
            "error" if turn == Some(started.turn_index) => {
                if !at_line_start {
                    writeln!(out)?;
                }
                let message = data.get("message").and_then(Value::as_str).unwrap_or("");
                writeln!(out, "error: {message}")?;
                at_line_start = true;
            }
            "done" if turn == Some(started.turn_index) => {
                status = data
                    .get("status")
                    .and_then(Value::as_str)
                    .unwrap_or("failed")
                    .to_string();
                break;
            }
            _ => {}
        }
    }
    if !at_line_start {
        writeln!(out)?;
    }
    started
        .task
        .await
        .context("waiting for the turn to finish")?;
    if status != "completed" {
        bail!("the turn ended as {status}");
    }
    Ok(())
}

/// Aborts the task when dropped, however the function returns.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
