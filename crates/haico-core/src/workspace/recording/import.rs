//! Import: a recording parsed and checked whole, then written as a new thread with new ids.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::*;
use crate::wire::ForkOrigin;
use crate::{workspace::error::WorkspaceError, workspace::service::Workspaces};
use haico_store::{
    Document, NewRevision, NewToolCall, PlanStep, Preference, ThreadId, journal::DocumentDelta,
    journal::ListOp, journal::apply_list, journal::apply_text, panels::Panel, panels::PanelSet,
    recording::IdTable, recording::OldMessage,
};

impl Workspaces {
    /// Imports a recording as a new thread (`id`, or a fresh one) owned by the actor; checks it
    /// whole first.
    pub async fn import(
        &self,
        text: &str,
        id: Option<ThreadId>,
    ) -> Result<haico_store::Thread, WorkspaceError> {
        let recording = Recording::parse(text)?;
        let id = id.unwrap_or_else(ThreadId::generate);
        let mut repo = self.db.begin_write().await?;
        let owner = self.actor().map(|actor| actor.id);
        let written = match recording.write(&mut repo, &id).await {
            Ok(()) if owner.is_some() => repo
                .people()
                .set_owner(&id, owner)
                .await
                .map_err(WorkspaceError::from),
            other => other,
        };
        match written {
            Ok(()) => repo.commit().await.map(|_| ())?,
            Err(err) => {
                let _ = repo.rollback().await;
                return Err(err);
            }
        }
        self.threads().get(&id).await
    }
}

/// A parsed, checked recording.
pub(super) struct Recording {
    title: String,
    created_at: DateTime<Utc>,
    forked_from: Option<ForkOrigin>,
    mcp_servers: Option<Vec<String>>,
    lines: Vec<Line>,
    /// Revision number → the line it is on, in revision order.
    revisions: BTreeMap<i64, usize>,
}

impl Recording {
    fn parse(text: &str) -> Result<Self, WorkspaceError> {
        let mut lines = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let number = i + 1;
            if raw.trim().is_empty() {
                continue;
            }
            let value: Value = serde_json::from_str(raw).map_err(|err| bad(number, err))?;
            if let Some(path) = crate::workspace::rules::find_nul(&value) {
                return Err(bad(number, crate::workspace::rules::nul_in(&path)));
            }
            let line: Line = serde_json::from_value(value).map_err(|err| bad(number, err))?;
            lines.push((number, line));
        }
        let Some((
            _,
            Line::Thread {
                format,
                title,
                created_at,
                forked_from,
                mcp_servers,
                ..
            },
        )) = lines.first().cloned()
        else {
            return Err(bad(
                1,
                format!(
                    "a recording starts with its thread line (`\"type\": \"thread\"`, `\"format\": \"{FORMAT}\"`)"
                ),
            ));
        };
        if format != FORMAT {
            return Err(bad(1, format!("format {format:?} is not {FORMAT:?}")));
        }
        if title.trim().is_empty() {
            return Err(bad(1, "the thread's title is empty"));
        }
        if let Some(names) = &mcp_servers {
            crate::workspace::threads::check_server_names(names)
                .map_err(|reason| bad(1, reason))?;
        }
        let mut turns = BTreeSet::new();
        let mut revisions: BTreeMap<i64, usize> = BTreeMap::new();
        for (index, (number, line)) in lines.iter_mut().enumerate().skip(1) {
            match line {
                Line::Thread { .. } => return Err(bad(*number, "a second thread line")),
                Line::Turn {
                    turn_index, status, ..
                } => {
                    if *turn_index < 1 || !turns.insert(*turn_index) {
                        return Err(bad(
                            *number,
                            format!("turn {turn_index} is not a new turn number"),
                        ));
                    }
                    if !["running", "completed", "failed", "cancelled"].contains(&status.as_str()) {
                        return Err(bad(*number, format!("turn status {status:?} is unknown")));
                    }
                }
                Line::Revision {
                    rev,
                    source,
                    panels,
                    changes,
                    ..
                } => {
                    if revisions.insert(*rev, index).is_some() {
                        return Err(bad(*number, format!("revision {rev} appears twice")));
                    }
                    if source != "agent" && source != "user" {
                        return Err(bad(
                            *number,
                            format!("source {source:?} is neither agent nor user"),
                        ));
                    }
                    for panel in panels {
                        if Panel::parse(panel).is_none() {
                            return Err(bad(*number, format!("panel {panel:?} is unknown")));
                        }
                    }
                    for change in changes {
                        check_change(change).map_err(|reason| bad(*number, reason))?;
                    }
                }
                Line::Message { role, .. } if role != "user" && role != "assistant" => {
                    return Err(bad(
                        *number,
                        format!("message role {role:?} is neither user nor assistant"),
                    ));
                }
                Line::Artifact {
                    artifact_type,
                    title,
                    payload,
                    ..
                } => {
                    *payload = check_artifact(artifact_type, title.as_deref(), payload)
                        .map_err(|reason| bad(*number, reason))?;
                }
                Line::Message { .. } | Line::Step { .. } => {}
            }
        }
        let last = revisions.keys().next_back().copied().unwrap_or(0);
        if revisions.len() != usize::try_from(last).unwrap_or(usize::MAX)
            || revisions.keys().next().is_some_and(|first| *first != 1)
        {
            return Err(bad(
                lines.len(),
                format!("revisions must be numbered 1 to {last} without gaps"),
            ));
        }
        for (number, line) in &lines {
            match line {
                Line::Message { turn_index, .. } | Line::Step { turn_index, .. }
                    if !turns.contains(turn_index) =>
                {
                    return Err(bad(*number, format!("turn {turn_index} has no turn line")));
                }
                Line::Artifact { rev, .. } if *rev < 1 || *rev > last => {
                    return Err(bad(
                        *number,
                        format!("revision {rev} is not in the recording"),
                    ));
                }
                _ => {}
            }
        }
        Ok(Self {
            title,
            created_at,
            forked_from,
            mcp_servers,
            lines: lines.into_iter().map(|(_, line)| line).collect(),
            revisions,
        })
    }

    /// Writes the thread, its conversation, history and artifacts, and its present workspace.
    async fn write(
        &self,
        repo: &mut haico_store::Transaction,
        id: &ThreadId,
    ) -> Result<(), WorkspaceError> {
        let thread = id;
        let turns = self
            .lines
            .iter()
            .filter_map(|line| match line {
                Line::Turn { turn_index, .. } => Some(*turn_index),
                _ => None,
            })
            .max()
            .unwrap_or(0);
        repo.recordings()
            .insert_recorded_thread(
                thread,
                &self.title,
                self.created_at,
                turns,
                self.forked_from
                    .as_ref()
                    .map(|f| (f.thread_id.as_str(), f.rev)),
            )
            .await
            .map_err(|err| match err {
                haico_store::StoreError::AlreadyExists(_) => {
                    WorkspaceError::ThreadExists(id.to_string())
                }
                other => other.into(),
            })?;
        if self.mcp_servers.is_some() {
            repo.threads()
                .set_mcp_servers(thread, self.mcp_servers.as_deref())
                .await?;
        }
        let ids = self.new_ids(repo).await?;
        for line in &self.lines {
            match line {
                Line::Turn {
                    turn_index,
                    status,
                    error,
                    started_at,
                    finished_at,
                    usage,
                } => {
                    repo.recordings()
                        .insert_recorded_turn(
                            thread,
                            *turn_index,
                            status,
                            error.as_deref(),
                            (*started_at, *finished_at),
                            usage.as_ref(),
                        )
                        .await?;
                }
                Line::Message {
                    turn_index,
                    role,
                    content,
                    at,
                    by,
                } => {
                    repo.recordings()
                        .insert_recorded_message(
                            thread,
                            OldMessage {
                                turn_index: *turn_index,
                                role,
                                content,
                                at: *at,
                                by: by.as_deref(),
                            },
                        )
                        .await?;
                }
                Line::Step {
                    turn_index,
                    step_index,
                    tool,
                    arguments,
                    action_and_reasoning,
                    result,
                    success,
                    duration_ms,
                    at,
                } => {
                    let call = NewToolCall {
                        turn_index: *turn_index,
                        call_index: *step_index,
                        tool,
                        arguments,
                        action_and_reasoning: action_and_reasoning.as_deref(),
                        result,
                        success: *success,
                        duration_ms: *duration_ms,
                    };
                    repo.recordings()
                        .insert_recorded_tool_call(thread, call, *at)
                        .await?;
                }
                Line::Artifact {
                    artifact_type,
                    title,
                    payload,
                    turn_index,
                    rev,
                    at,
                    ..
                } => {
                    repo.recordings()
                        .insert_recorded_artifact(
                            thread,
                            artifact_type,
                            title.as_deref(),
                            payload,
                            *turn_index,
                            *rev,
                            *at,
                        )
                        .await?;
                }
                Line::Thread { .. } | Line::Revision { .. } => {}
            }
        }
        let mut present = Present::default();
        for index in self.revisions.values() {
            let Some(Line::Revision {
                rev,
                at,
                source,
                by,
                turn_index,
                thread_turn,
                tool,
                action_and_reasoning,
                panels,
                summary,
                restored_from,
                reverted_turn,
                changes,
            }) = self.lines.get(*index)
            else {
                continue;
            };
            let panels: PanelSet = panels.iter().filter_map(|p| Panel::parse(p)).collect();
            let revision = NewRevision {
                source,
                by: by.as_deref(),
                turn_index: *turn_index,
                thread_turn: *thread_turn,
                tool: tool.as_deref(),
                action_and_reasoning: action_and_reasoning.as_deref(),
                panels,
                summary,
                restored_from: *restored_from,
                reverted_turn: *reverted_turn,
            };
            repo.history()
                .insert_revision(thread, *rev, *at, &revision)
                .await?;
            for change in changes {
                let data = ids.remap(change)?;
                present.apply(change.panel.as_str(), change.whole, &data)?;
                let text = data.to_string();
                if change.whole {
                    repo.history()
                        .record_panel_state(thread, &change.panel, *rev, &text)
                        .await?;
                } else {
                    repo.history()
                        .record_panel_ops(thread, &change.panel, *rev, &text)
                        .await?;
                }
            }
        }
        repo.recordings()
            .set_last_revision(thread, self.revisions.len().try_into().unwrap_or(i64::MAX))
            .await?;
        present.write(repo, thread).await
    }

    /// Fresh ids for every plan step and preference the history names.
    async fn new_ids(&self, repo: &mut haico_store::Transaction) -> Result<IdMap, WorkspaceError> {
        let mut steps = BTreeSet::new();
        let mut preferences = BTreeSet::new();
        for line in &self.lines {
            if let Line::Revision { changes, .. } = line {
                for change in changes {
                    match change.panel.as_str() {
                        "plan" => collect_ids::<PlanStep>(change, &mut steps),
                        "preferences" => collect_ids::<Preference>(change, &mut preferences),
                        _ => {}
                    }
                }
            }
        }
        let fresh_steps = repo
            .recordings()
            .reserve_ids(IdTable::Steps, steps.len())
            .await?;
        let fresh_preferences = repo
            .recordings()
            .reserve_ids(IdTable::Preferences, preferences.len())
            .await?;
        Ok(IdMap {
            steps: steps.into_iter().zip(fresh_steps).collect(),
            preferences: preferences.into_iter().zip(fresh_preferences).collect(),
        })
    }
}

/// The workspace as the recorded history leaves it, built up revision by revision.
#[derive(Default)]
pub(super) struct Present {
    objective: Option<String>,
    document: Option<Document>,
    plan: Vec<PlanStep>,
    preferences: Vec<Preference>,
    document_mode: Option<String>,
    suggestions: Vec<haico_store::Suggestion>,
}

impl Present {
    fn apply(&mut self, panel: &str, whole: bool, data: &Value) -> Result<(), WorkspaceError> {
        let parse_err = |err: serde_json::Error| WorkspaceError::Store(err.into());
        match (panel, whole) {
            ("objective", _) => {
                self.objective = serde_json::from_value(data.clone()).map_err(parse_err)?
            }
            ("document", true) => {
                self.document = serde_json::from_value(data.clone()).map_err(parse_err)?
            }
            ("document", false) => {
                let delta: DocumentDelta =
                    serde_json::from_value(data.clone()).map_err(parse_err)?;
                let doc = self
                    .document
                    .get_or_insert_with(crate::workspace::document::empty_document);
                for op in &delta.ops {
                    apply_text(&mut doc.content, op);
                }
                doc.title = delta.title;
                doc.version = delta.version;
            }
            ("plan", true) => {
                self.plan = serde_json::from_value(data.clone()).map_err(parse_err)?
            }
            ("plan", false) => {
                let ops: Vec<ListOp<PlanStep>> =
                    serde_json::from_value(data.clone()).map_err(parse_err)?;
                ops.iter().for_each(|op| apply_list(&mut self.plan, op));
            }
            ("preferences", true) => {
                self.preferences = serde_json::from_value(data.clone()).map_err(parse_err)?;
            }
            ("preferences", false) => {
                let ops: Vec<ListOp<Preference>> =
                    serde_json::from_value(data.clone()).map_err(parse_err)?;
                ops.iter()
                    .for_each(|op| apply_list(&mut self.preferences, op));
            }
            ("document_mode", _) => {
                self.document_mode = serde_json::from_value(data.clone()).map_err(parse_err)?;
            }
            ("suggestions", true) => {
                self.suggestions = serde_json::from_value(data.clone()).map_err(parse_err)?;
            }
            ("suggestions", false) => {
                let ops: Vec<ListOp<haico_store::Suggestion>> =
                    serde_json::from_value(data.clone()).map_err(parse_err)?;
                ops.iter()
                    .for_each(|op| apply_list(&mut self.suggestions, op));
            }
            _ => {}
        }
        Ok(())
    }

    /// Writes this state as the thread's present workspace (the live tables).
    async fn write(
        &self,
        repo: &mut haico_store::Transaction,
        thread: &haico_store::ThreadId,
    ) -> Result<(), WorkspaceError> {
        if let Some(objective) = &self.objective {
            repo.objectives().set_objective(thread, objective).await?;
        }
        if let Some(document) = &self.document {
            // Each change was checked on its own; what they add up to is checked here, before
            // the transaction commits.
            crate::workspace::document::check_replacement(&document.content, None, None).map_err(
                |reason| WorkspaceError::invalid(format!("the recording's document: {reason}")),
            )?;
            repo.documents()
                .write_document_exact(thread, document)
                .await?;
        }
        repo.plan().replace_plan(thread, &self.plan).await?;
        repo.preferences()
            .replace_preferences(thread, &self.preferences)
            .await?;
        let mode = haico_store::DocumentMode::from_stored(self.document_mode.as_deref());
        repo.suggestions()
            .write_suggestions_exact(thread, mode, &self.suggestions)
            .await?;
        Ok(())
    }
}
