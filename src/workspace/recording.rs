//! Recordings: a thread as JSON Lines (`haico-recording/1`), for study and backup.
//!
//! A recording holds the thread, its turns, messages and tool calls, every revision with what
//! it changed (the same records the history keeps, so the workspace at every revision comes
//! back exactly), and the artifacts with their payloads, in order of occurrence. An import is
//! checked whole before anything is written; a recording that is not valid is refused with the
//! line number and the reason. Plan steps and preferences get new ids on import (ids are unique
//! across a database), consistently in every revision. `docs/RECORDING.md` describes the lines
//! field by field.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize, de::DeserializeOwned};
use serde_json::Value;

use super::{WorkspaceError, Workspaces};
use crate::{
    ThreadId,
    panels::{Panel, PanelSet},
    store::{
        Document, ForkOrigin, NewRevision, NewToolCall, PlanStep, Preference,
        journal::{DocumentDelta, HasId, ListOp, apply_list, apply_text},
        recording::{IdTable, OldMessage},
    },
};

/// The format named on a recording's first line.
pub const FORMAT: &str = "haico-recording/1";

/// One line of a recording.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Line {
    /// The first line: the thread.
    Thread {
        /// Always `haico-recording/1`.
        format: String,
        /// The thread's id where it was recorded.
        id: String,
        /// Its title.
        title: String,
        /// When it was made.
        created_at: DateTime<Utc>,
        /// Where it was forked from, if it was.
        forked_from: Option<ForkOrigin>,
    },
    /// An agent turn.
    Turn {
        /// Its number, from 1.
        turn_index: i64,
        /// `running`, `completed`, `failed` or `cancelled`.
        status: String,
        /// Why it did not complete.
        error: Option<String>,
        /// When it started.
        started_at: DateTime<Utc>,
        /// When it ended.
        finished_at: Option<DateTime<Utc>>,
        /// What its model calls cost (absent in recordings made before haico counted tokens).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<crate::store::TurnUsage>,
    },
    /// A message of a turn.
    Message {
        /// Its turn.
        turn_index: i64,
        /// `user` or `assistant`.
        role: String,
        /// The text.
        content: String,
        /// When it was written.
        at: DateTime<Utc>,
        /// Who wrote it, when known.
        by: Option<String>,
    },
    /// A tool call of a turn.
    Step {
        /// Its turn.
        turn_index: i64,
        /// Its position in the turn, from 1.
        step_index: i64,
        /// The tool.
        tool: String,
        /// The arguments, without `action_and_reasoning`.
        arguments: Value,
        /// The agent's sentence.
        action_and_reasoning: Option<String>,
        /// The envelope.
        result: Value,
        /// Whether it succeeded.
        success: bool,
        /// How long it took.
        duration_ms: f64,
        /// When it finished.
        at: DateTime<Utc>,
    },
    /// A revision and what it changed.
    Revision {
        /// Its number, from 1.
        rev: i64,
        /// When it was committed.
        at: DateTime<Utc>,
        /// `agent` or `user`.
        source: String,
        /// Who made it, when known.
        by: Option<String>,
        /// The agent turn it was made in.
        turn_index: Option<i64>,
        /// The thread's turn counter then.
        thread_turn: i64,
        /// The tool that made it.
        tool: Option<String>,
        /// The agent's sentence.
        action_and_reasoning: Option<String>,
        /// The panels it changed.
        panels: Vec<String>,
        /// What changed.
        summary: String,
        /// For a restore: the revision it went back to.
        restored_from: Option<i64>,
        /// For an undone turn: that turn.
        reverted_turn: Option<i64>,
        /// Per changed panel: its whole state, or the operations from the previous state.
        changes: Vec<PanelChange>,
    },
    /// An artifact, with its payload.
    Artifact {
        /// Its id where it was recorded.
        id: i64,
        /// Its type tag.
        artifact_type: String,
        /// Its title.
        title: Option<String>,
        /// Its content.
        payload: Value,
        /// The turn that made it.
        turn_index: i64,
        /// The revision that made it.
        rev: i64,
        /// When it was stored.
        at: DateTime<Utc>,
    },
}

/// What one revision did to one panel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PanelChange {
    /// `objective`, `document`, `plan` or `preferences`.
    pub panel: String,
    /// Whether `data` is the panel's whole state (else operations on the previous state).
    pub whole: bool,
    /// The state or the operations.
    pub data: Value,
}

/// Something wrong with a recording: the line (from 1) and why.
fn bad(line: usize, reason: impl std::fmt::Display) -> WorkspaceError {
    WorkspaceError::invalid(format!("line {line}: {reason}"))
}

/// An item of the timeline, for ordering lines by when they happened.
struct Timed {
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
            let id = thread.as_str();
            let row = view
                .repo
                .get_thread(id)
                .await?
                .ok_or_else(|| WorkspaceError::UnknownThread(thread.to_string()))?;
            let mut timed: Vec<Timed> = Vec::new();
            for turn in view.repo.conversation(id).await? {
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
            for record in view.repo.all_panel_records(id).await? {
                changes.entry(record.rev).or_default().push(PanelChange {
                    panel: record.panel,
                    whole: record.whole,
                    data: serde_json::from_str(&record.data)
                        .map_err(|err| WorkspaceError::Store(err.into()))?,
                });
            }
            for revision in view.repo.revisions(id, None, i64::MAX).await? {
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
                        panels: revision.panels,
                        summary: revision.summary,
                        restored_from: revision.restored_from,
                        reverted_turn: revision.reverted_turn,
                        changes: changes.remove(&revision.rev).unwrap_or_default(),
                    },
                });
            }
            for artifact in view.repo.all_artifacts(id).await? {
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
                forked_from: row.forked_from,
            }];
            lines.extend(timed.into_iter().map(|t| t.line));
            Ok(lines)
        }
        .await;
        view.settle(lines).await
    }

    /// Imports a recording as a new thread (`id`, or a fresh one) owned by the actor; checks it
    /// whole first.
    pub async fn import(
        &self,
        text: &str,
        id: Option<ThreadId>,
    ) -> Result<crate::store::Thread, WorkspaceError> {
        let recording = Recording::parse(text)?;
        let id = id.unwrap_or_else(ThreadId::generate);
        let mut repo = self.db.begin_write().await?;
        let owner = self.actor().map(|actor| actor.id);
        let written = match recording.write(&mut repo, &id).await {
            Ok(()) if owner.is_some() => repo
                .set_owner(id.as_str(), owner)
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
        self.thread(&id).await
    }
}

/// A parsed, checked recording.
struct Recording {
    title: String,
    created_at: DateTime<Utc>,
    forked_from: Option<ForkOrigin>,
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
            if let Some(path) = super::rules::find_nul(&value) {
                return Err(bad(
                    number,
                    format!("`{path}` contains a NUL character (U+0000), which cannot be stored"),
                ));
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
        let mut turns = BTreeSet::new();
        let mut revisions: BTreeMap<i64, usize> = BTreeMap::new();
        for (index, (number, line)) in lines.iter().enumerate().skip(1) {
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
                Line::Message { .. } | Line::Step { .. } | Line::Artifact { .. } => {}
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
            lines: lines.into_iter().map(|(_, line)| line).collect(),
            revisions,
        })
    }

    /// Writes the thread, its conversation, history and artifacts, and its present workspace.
    async fn write(
        &self,
        repo: &mut crate::store::WorkspaceRepository,
        id: &ThreadId,
    ) -> Result<(), WorkspaceError> {
        let thread = id.as_str();
        let turns = self
            .lines
            .iter()
            .filter_map(|line| match line {
                Line::Turn { turn_index, .. } => Some(*turn_index),
                _ => None,
            })
            .max()
            .unwrap_or(0);
        repo.insert_recorded_thread(
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
            crate::store::StoreError::AlreadyExists(_) => {
                WorkspaceError::ThreadExists(id.to_string())
            }
            other => other.into(),
        })?;
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
                    repo.insert_recorded_turn(
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
                    repo.insert_recorded_message(
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
                    repo.insert_recorded_tool_call(thread, call, *at).await?;
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
                    repo.insert_recorded_artifact(
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
            repo.insert_revision(thread, *rev, *at, &revision).await?;
            for change in changes {
                let data = ids.remap(change)?;
                present.apply(change.panel.as_str(), change.whole, &data)?;
                let text = data.to_string();
                if change.whole {
                    repo.record_panel_state(thread, &change.panel, *rev, &text)
                        .await?;
                } else {
                    repo.record_panel_ops(thread, &change.panel, *rev, &text)
                        .await?;
                }
            }
        }
        repo.set_last_revision(thread, self.revisions.len().try_into().unwrap_or(i64::MAX))
            .await?;
        present.write(repo, thread).await
    }

    /// Fresh ids for every plan step and preference the history names.
    async fn new_ids(
        &self,
        repo: &mut crate::store::WorkspaceRepository,
    ) -> Result<IdMap, WorkspaceError> {
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
        let fresh_steps = repo.reserve_ids(IdTable::Steps, steps.len()).await?;
        let fresh_preferences = repo
            .reserve_ids(IdTable::Preferences, preferences.len())
            .await?;
        Ok(IdMap {
            steps: steps.into_iter().zip(fresh_steps).collect(),
            preferences: preferences.into_iter().zip(fresh_preferences).collect(),
        })
    }
}

/// Checks that a change's data is what its panel keeps, within the limits the workspace's
/// rules set for every other path: a recording cannot bring in what no edit could make.
fn check_change(change: &PanelChange) -> Result<(), String> {
    let data = change.data.clone();
    let fits = match (change.panel.as_str(), change.whole) {
        ("objective", true) => parse::<Option<String>>(data).and_then(|objective| {
            within(
                objective.as_deref(),
                "the objective",
                super::MAX_OBJECTIVE_CHARS,
            )
        }),
        ("document", true) => parse::<Option<Document>>(data).and_then(|document| {
            document.map_or(Ok(()), |doc| {
                within(
                    Some(&doc.title),
                    "the title",
                    super::MAX_DOCUMENT_TITLE_CHARS,
                )?;
                within(
                    Some(&doc.content),
                    "the document",
                    super::MAX_DOCUMENT_CHARS,
                )
            })
        }),
        ("document", false) => parse::<DocumentDelta>(data).and_then(|delta| {
            within(
                Some(&delta.title),
                "the title",
                super::MAX_DOCUMENT_TITLE_CHARS,
            )
        }),
        ("plan", true) => parse::<Vec<PlanStep>>(data).and_then(|steps| check_steps(&steps)),
        ("plan", false) => parse::<Vec<ListOp<PlanStep>>>(data)
            .and_then(|ops| ops.iter().try_for_each(|op| check_steps(op_items(op)))),
        ("preferences", true) => {
            parse::<Vec<Preference>>(data).and_then(|items| check_preferences(&items))
        }
        ("preferences", false) => parse::<Vec<ListOp<Preference>>>(data).and_then(|ops| {
            ops.iter()
                .try_for_each(|op| check_preferences(op_items(op)))
        }),
        (panel, whole) => Err(format!(
            "a {} change of panel {panel:?} is not something history keeps",
            if whole { "whole" } else { "partial" }
        )),
    };
    fits.map_err(|reason| format!("the {} change: {reason}", change.panel))
}

/// Fails when `text` is longer than `max` characters.
fn within(text: Option<&str>, what: &str, max: usize) -> Result<(), String> {
    match text {
        Some(text) if text.len() > max && super::rules::char_count(text) > max => {
            Err(format!("{what} is longer than {max} characters"))
        }
        _ => Ok(()),
    }
}

/// The items a list operation brings in.
fn op_items<T>(op: &ListOp<T>) -> &[T] {
    match op {
        ListOp::Insert { items, .. } | ListOp::Add { items } | ListOp::Set { items } => items,
        ListOp::Update { item } => std::slice::from_ref(item),
        ListOp::Remove { .. } => &[],
    }
}

fn check_steps(steps: &[PlanStep]) -> Result<(), String> {
    steps.iter().try_for_each(|step| {
        if step.text.trim().is_empty() {
            return Err(format!("step {} has no text", step.id));
        }
        within(Some(&step.text), "a step", super::MAX_STEP_CHARS)?;
        if !(0..=super::MAX_DEPTH).contains(&step.depth) {
            return Err(format!(
                "step {} has depth {}; the plan nests at most {} levels",
                step.id,
                step.depth,
                super::MAX_DEPTH
            ));
        }
        Ok(())
    })
}

fn check_preferences(items: &[Preference]) -> Result<(), String> {
    items.iter().try_for_each(|preference| {
        within(
            Some(&preference.title),
            "a preference's title",
            super::MAX_TITLE_CHARS,
        )?;
        within(
            preference.subtitle.as_deref(),
            "a preference's subtitle",
            super::MAX_SUBTITLE_CHARS,
        )
    })
}

fn parse<T: DeserializeOwned>(data: Value) -> Result<T, String> {
    serde_json::from_value(data).map_err(|err| err.to_string())
}

/// Every id a list change names.
fn collect_ids<T: DeserializeOwned + HasId>(change: &PanelChange, into: &mut BTreeSet<i64>) {
    if change.whole {
        if let Ok(items) = serde_json::from_value::<Vec<T>>(change.data.clone()) {
            into.extend(items.iter().map(HasId::id));
        }
    } else if let Ok(ops) = serde_json::from_value::<Vec<ListOp<T>>>(change.data.clone()) {
        for op in ops {
            match op {
                ListOp::Insert { items, .. } | ListOp::Add { items } | ListOp::Set { items } => {
                    into.extend(items.iter().map(HasId::id));
                }
                ListOp::Update { item } => {
                    into.insert(item.id());
                }
                ListOp::Remove { ids } => into.extend(ids),
            }
        }
    }
}

/// Old ids to new ones.
struct IdMap {
    steps: BTreeMap<i64, i64>,
    preferences: BTreeMap<i64, i64>,
}

impl IdMap {
    /// The change's data with its ids replaced.
    fn remap(&self, change: &PanelChange) -> Result<Value, WorkspaceError> {
        let encode = |value: Result<Value, serde_json::Error>| {
            value.map_err(|err| WorkspaceError::Store(err.into()))
        };
        match change.panel.as_str() {
            "plan" => encode(remap_list::<PlanStep>(change, &self.steps, |s, id| {
                s.id = id
            })),
            "preferences" => encode(remap_list::<Preference>(
                change,
                &self.preferences,
                |p, id| p.id = id,
            )),
            _ => Ok(change.data.clone()),
        }
    }
}

fn remap_list<T: Serialize + DeserializeOwned + HasId>(
    change: &PanelChange,
    map: &BTreeMap<i64, i64>,
    set: impl Fn(&mut T, i64),
) -> Result<Value, serde_json::Error> {
    let new = |id: i64| map.get(&id).copied().unwrap_or(id);
    let fix = |item: &mut T| {
        let id = new(item.id());
        set(item, id);
    };
    if change.whole {
        let mut items: Vec<T> = serde_json::from_value(change.data.clone())?;
        items.iter_mut().for_each(fix);
        return serde_json::to_value(items);
    }
    let mut ops: Vec<ListOp<T>> = serde_json::from_value(change.data.clone())?;
    for op in &mut ops {
        match op {
            ListOp::Insert { items, .. } | ListOp::Add { items } | ListOp::Set { items } => {
                items.iter_mut().for_each(fix);
            }
            ListOp::Update { item } => fix(item),
            ListOp::Remove { ids } => ids.iter_mut().for_each(|id| *id = new(*id)),
        }
    }
    serde_json::to_value(ops)
}

/// The workspace as the recorded history leaves it, built up revision by revision.
#[derive(Default)]
struct Present {
    objective: Option<String>,
    document: Option<Document>,
    plan: Vec<PlanStep>,
    preferences: Vec<Preference>,
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
                let doc = self.document.get_or_insert_with(super::empty_document);
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
            _ => {}
        }
        Ok(())
    }

    /// Writes this state as the thread's present workspace (the live tables).
    async fn write(
        &self,
        repo: &mut crate::store::WorkspaceRepository,
        thread: &str,
    ) -> Result<(), WorkspaceError> {
        if let Some(objective) = &self.objective {
            repo.set_objective(thread, objective).await?;
        }
        if let Some(document) = &self.document {
            // Each change was checked on its own; what they add up to is checked here, before
            // the transaction commits.
            if within(Some(&document.content), "", super::MAX_DOCUMENT_CHARS).is_err() {
                return Err(WorkspaceError::invalid(format!(
                    "the recording's document grows past {} characters",
                    super::MAX_DOCUMENT_CHARS
                )));
            }
            repo.write_document_exact(thread, document).await?;
        }
        repo.replace_plan(thread, &self.plan).await?;
        repo.replace_preferences(thread, &self.preferences).await?;
        Ok(())
    }
}

/// The lines as JSON Lines text, one object per line, each line ending in `\n`.
pub fn to_jsonl(lines: &[Line]) -> Result<String, WorkspaceError> {
    let mut out = String::new();
    for line in lines {
        out.push_str(
            &serde_json::to_string(line).map_err(|err| WorkspaceError::Store(err.into()))?,
        );
        out.push('\n');
    }
    Ok(out)
}
