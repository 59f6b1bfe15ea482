//! Export: a thread's rows as the lines of a recording, in order of occurrence.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use super::*;
use crate::{workspace::error::WorkspaceError, workspace::service::Workspaces};
use haico_store::ThreadId;

/// An item of the timeline, for ordering lines by when they happened.
pub(super) struct Timed {
    at: DateTime<Utc>,
    rank: u8,
    order: i64,
    line: Line,
}

impl Workspaces {
    /// The thread as a recording: its lines, in order of occurrence.
    pub async fn export(&self, thread: &ThreadId) -> Result<Vec<Line>, WorkspaceError> {
        let mut view = self.view(thread).await?;
        let lines = async {
            let id = thread;
            let row = view
                .repo
                .threads()
                .get_thread(id)
                .await?
                .ok_or_else(|| WorkspaceError::UnknownThread(thread.to_string()))?;
            let mut timed: Vec<Timed> = Vec::new();
            for turn in view.repo.turns().conversation(id).await? {
                timed.push(Timed {
                    at: turn.started_at,
                    rank: 0,
                    order: turn.turn_index,
                    line: Line::Turn {
                        turn_index: turn.turn_index,
                        status: turn.status.clone(),
                        error: turn.error.clone(),
                        started_at: turn.started_at,
                        finished_at: turn.finished_at,
                        usage: turn.usage.clone(),
                    },
                });
                for message in turn.messages {
                    timed.push(Timed {
                        at: message.created_at,
                        rank: 1,
                        order: message.id,
                        line: Line::Message {
                            turn_index: turn.turn_index,
                            role: message.role,
                            content: message.content,
                            at: message.created_at,
                            by: message.by,
                        },
                    });
                }
                for call in turn.tool_calls {
                    timed.push(Timed {
                        at: call.created_at,
                        rank: 2,
                        order: turn.turn_index * 1_000_000 + call.call_index,
                        line: Line::Step {
                            turn_index: turn.turn_index,
                            step_index: call.call_index,
                            tool: call.tool,
                            arguments: call.arguments,
                            action_and_reasoning: call.action_and_reasoning,
                            result: call.result,
                            success: call.success,
                            duration_ms: call.duration_ms,
                            at: call.created_at,
                        },
                    });
                }
            }
            let mut changes: BTreeMap<i64, Vec<PanelChange>> = BTreeMap::new();
            for record in view.repo.recordings().all_panel_records(id).await? {
                changes.entry(record.rev).or_default().push(PanelChange {
                    panel: record.panel,
                    whole: record.whole,
                    data: serde_json::from_str(&record.data)
                        .map_err(|err| WorkspaceError::Store(err.into()))?,
                });
            }
            for revision in view.repo.history().revisions(id, None, i64::MAX).await? {
                timed.push(Timed {
                    at: revision.at,
                    rank: 4,
                    order: revision.rev,
                    line: Line::Revision {
                        rev: revision.rev,
                        at: revision.at,
                        source: revision.source,
                        by: revision.by,
                        turn_index: revision.turn_index,
                        thread_turn: revision.thread_turn,
                        tool: revision.tool,
                        action_and_reasoning: revision.action_and_reasoning,
                        panels: revision
                            .panels
                            .iter()
                            .map(|p| p.as_str().to_string())
                            .collect(),
                        summary: revision.summary,
                        restored_from: revision.restored_from,
                        reverted_turn: revision.reverted_turn,
                        changes: changes.remove(&revision.rev).unwrap_or_default(),
                    },
                });
            }
            for artifact in view.repo.recordings().all_artifacts(id).await? {
                timed.push(Timed {
                    at: artifact.created_at,
                    rank: 3,
                    order: artifact.id,
                    line: Line::Artifact {
                        id: artifact.id,
                        artifact_type: artifact.artifact_type,
                        title: artifact.title,
                        payload: serde_json::from_str(&artifact.payload)
                            .map_err(|err| WorkspaceError::Store(err.into()))?,
                        turn_index: artifact.turn_index,
                        rev: artifact.rev.unwrap_or(0),
                        at: artifact.created_at,
                    },
                });
            }
            timed.sort_by_key(|t| (t.at, t.rank, t.order));
            let mut lines = vec![Line::Thread {
                format: FORMAT.to_string(),
                id: row.id,
                title: row.title,
                created_at: row.created_at,
                forked_from: row.forked_from.map(Into::into),
                mcp_servers: row.mcp_servers,
            }];
            lines.extend(timed.into_iter().map(|t| t.line));
            Ok(lines)
        }
        .await;
        view.settle(lines).await
    }
}
