//! A study's data: its sessions with their measures, the summary per condition, the
//! `haico-study/1` export and the sessions as CSV, and one session's timeline for replay.
//!
//! **Pseudonyms.** Exports carry no participant id: it is replaced by its keyed hash
//! ([`super::pseudonym`]), and so is every parameter the design does not list in
//! `keep_params`. Threads attribute a participant's changes to `participant:<ref>`, whose
//! reference was drawn at random, so the recordings carry no id either. Free text (messages,
//! the document) is kept as written. Only the study's owner may ask for the raw export.

use chrono::Utc;
use futures::{StreamExt, TryStreamExt};
use serde_json::{Map, Value, json};

use crate::tools::build_tools;
use crate::{
    studies::design::Design, studies::measures, studies::measures::Measures,
    studies::pseudonym::pseudonym, studies::service::Studies, studies::service::StudyError,
    studies::service::design_of,
};
use haico_core::{people::Principal, workspace::recording::Line};
use haico_store::{SessionRow, StudyRow, ThreadId};

/// The format named on an export's first line.
pub const FORMAT: &str = "haico-study/1";

/// How many sessions are read at once for the data.
const PARALLEL_READS: usize = 4;

/// One session with what its thread recorded and its measures.
#[derive(Debug, Clone)]
pub struct SessionData {
    /// The session.
    pub session: SessionRow,
    /// Its thread's recording (empty without a thread).
    pub lines: Vec<Line>,
    /// Its measures.
    pub measures: Measures,
}

/// How participant ids and parameters appear.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Identities {
    /// Replaced by pseudonyms (kept parameters aside).
    Pseudonymised,
    /// As given (the owner's raw export).
    Raw,
}

impl Studies {
    /// The study and every session of it that is not a preview, each with its recording and
    /// measures.
    pub async fn data(
        &self,
        principal: &Principal,
        study_id: &str,
    ) -> Result<(StudyRow, Design, Vec<SessionData>), StudyError> {
        let study = self.study(principal, study_id).await?;
        let design = design_of(&study)?;
        let mut repo = self.db.autocommit_read().await?;
        let sessions = repo.studies().sessions(&study.id).await;
        let _ = repo.rollback().await;
        let now = Utc::now();
        // Sessions are read a few at a time: each is a handful of round trips on PostgreSQL,
        // which overlap on the pool's connections instead of adding up.
        let reads = sessions?
            .into_iter()
            .filter(|s| !s.preview)
            .map(|session| self.session_data(session, now));
        let data: Vec<SessionData> = futures::stream::iter(reads)
            .buffered(PARALLEL_READS)
            .try_collect()
            .await?;
        Ok((study, design, data))
    }

    /// One session's recording and measures.
    async fn session_data(
        &self,
        session: SessionRow,
        now: chrono::DateTime<Utc>,
    ) -> Result<SessionData, StudyError> {
        let lines = match session
            .thread_id
            .as_deref()
            .and_then(|t| ThreadId::parse(t).ok())
        {
            Some(thread) => match self.workspaces.export(&thread).await {
                Ok(lines) => lines,
                Err(haico_core::workspace::WorkspaceError::UnknownThread(_)) => Vec::new(),
                Err(err) => return Err(err.into()),
            },
            None => Vec::new(),
        };
        let measures = measures::measure(&self.workspaces, &session, &lines, now).await?;
        Ok(SessionData {
            session,
            lines,
            measures,
        })
    }

    /// Whether `principal` may have the raw export: the study's owner only (`403` for anyone
    /// else who may see the study; in one-person mode, its one person).
    pub async fn check_raw_export(
        &self,
        principal: &Principal,
        study_id: &str,
    ) -> Result<(), StudyError> {
        let study = self.study(principal, study_id).await?;
        let owner = match principal {
            Principal::Local => study.owner_id.is_none(),
            Principal::User(user) => study.owner_id == Some(user.id),
            _ => false,
        };
        if owner {
            Ok(())
        } else {
            Err(StudyError::Forbidden(
                "only the study's owner may export participant ids as given".to_string(),
            ))
        }
    }

    /// A session's timeline: every message, step and revision of its thread in time order,
    /// with seconds since Start, the actor and the turn (each revision once).
    pub async fn timeline(
        &self,
        principal: &Principal,
        study_id: &str,
        session_ref: &str,
    ) -> Result<Value, StudyError> {
        let study = self.study(principal, study_id).await?;
        let mut repo = self.db.autocommit_read().await?;
        let session = repo.studies().session(session_ref).await;
        let _ = repo.rollback().await;
        let session = session?.filter(|s| s.study_id == study.id).ok_or_else(|| {
            StudyError::NotFound(format!("session `{session_ref}` does not exist"))
        })?;
        let lines = match session
            .thread_id
            .as_deref()
            .and_then(|t| ThreadId::parse(t).ok())
        {
            Some(thread) => self.workspaces.export(&thread).await?,
            None => Vec::new(),
        };
        let origin = session.started_at.unwrap_or(session.entered_at);
        let since = |at: chrono::DateTime<Utc>| {
            #[allow(clippy::cast_precision_loss)]
            let ms = (at - origin).num_milliseconds() as f64;
            ms / 1000.0
        };
        let mut events = Vec::new();
        for line in &lines {
            let (at, item) = match line {
                Line::Message {
                    turn_index,
                    role,
                    content,
                    at,
                    ..
                } => (
                    *at,
                    json!({"kind": "message", "actor": if role == "user" { "participant" } else { "agent" },
                           "turn": turn_index, "role": role, "content": content}),
                ),
                Line::Step {
                    turn_index,
                    step_index,
                    tool,
                    arguments,
                    action_and_reasoning,
                    success,
                    at,
                    ..
                } => (
                    *at,
                    json!({"kind": "step", "actor": "agent", "turn": turn_index, "step": step_index,
                           "tool": tool, "arguments": arguments,
                           "action_and_reasoning": action_and_reasoning, "success": success}),
                ),
                Line::Revision {
                    rev,
                    at,
                    source,
                    by,
                    turn_index,
                    panels,
                    summary,
                    ..
                } => {
                    let actor = if source == "agent" {
                        "agent"
                    } else if by.as_deref().is_some_and(|b| b.starts_with("participant:")) {
                        "participant"
                    } else {
                        "seed"
                    };
                    (
                        *at,
                        json!({"kind": if summary.contains("suggestion") { "decision" } else { "revision" },
                               "actor": actor, "turn": turn_index, "rev": rev,
                               "panels": panels, "summary": summary}),
                    )
                }
                _ => continue,
            };
            events.push((at, item));
        }
        events.sort_by_key(|(at, _)| *at);
        let events: Vec<Value> = events
            .into_iter()
            .map(|(at, mut item)| {
                if let Some(object) = item.as_object_mut() {
                    object.insert("t_s".to_string(), json!(since(at)));
                    object.insert("at".to_string(), json!(at));
                }
                item
            })
            .collect();
        let design = design_of(&study)?;
        let panels = session
            .condition_key
            .as_deref()
            .and_then(|k| design.condition(k))
            .map(|c| c.panels.clone())
            .unwrap_or_default();
        Ok(json!({
            "session": session.session_ref,
            "condition": session.condition_key,
            "status": session.status,
            "thread_id": session.thread_id,
            "panels": panels,
            "started_at": session.started_at,
            "events": events,
        }))
    }
}

/// The session's participant and parameters as an export shows them.
fn identities(
    study: &StudyRow,
    design: &Design,
    session: &SessionRow,
    how: Identities,
) -> (Value, Value) {
    let entry = &design.entry;
    let params: Map<String, Value> = serde_json::from_str(&session.params).unwrap_or_default();
    match how {
        Identities::Raw => (json!(session.participant_id), Value::Object(params)),
        Identities::Pseudonymised => {
            let participant = session
                .participant_id
                .as_deref()
                .map(|id| pseudonym(&study.secret, &entry.participant_param, id));
            let shown = params
                .into_iter()
                .map(|(name, value)| {
                    let value = if entry.keep_params.contains(&name) {
                        value
                    } else {
                        let text = value.as_str().unwrap_or_default();
                        json!(pseudonym(&study.secret, &name, text))
                    };
                    (name, value)
                })
                .collect();
            (json!(participant), Value::Object(shown))
        }
    }
}

/// A session line of the export (and a row of the sessions list).
pub fn session_json(
    study: &StudyRow,
    design: &Design,
    data: &SessionData,
    how: Identities,
) -> Value {
    let s = &data.session;
    let (participant, params) = identities(study, design, s, how);
    json!({
        "type": "session",
        "session": s.session_ref,
        "participant": participant,
        "params": params,
        "condition": s.condition_key,
        "status": s.status,
        "thread_id": s.thread_id,
        "entered_at": s.entered_at,
        "consented_at": s.consented_at,
        "started_at": s.started_at,
        "deadline": s.deadline,
        "ended_at": s.ended_at,
        "measures": data.measures,
    })
}

/// The export: a `study` line (the design as it ran: each condition's tools resolved, its
/// system prompt as sent, the model), then per session its line and its thread's recording.
pub fn export_jsonl(
    study: &StudyRow,
    design: &Design,
    data: &[SessionData],
    how: Identities,
    model: &str,
    default_prompt: &str,
) -> Result<String, StudyError> {
    let every_tool: Vec<String> = build_tools(&ThreadId::generate())
        .iter()
        .map(|tool| tool.name().to_string())
        .collect();
    let mut design_json = serde_json::to_value(design)
        .map_err(|err| StudyError::Internal(format!("a design did not serialise: {err}")))?;
    if let Some(conditions) = design_json
        .get_mut("conditions")
        .and_then(Value::as_array_mut)
    {
        for (condition, spec) in conditions.iter_mut().zip(&design.conditions) {
            condition["tools"] = json!(spec.tool_names().unwrap_or_else(|| every_tool.clone()));
            condition["system_prompt"] = json!(
                spec.system_prompt
                    .clone()
                    .unwrap_or_else(|| default_prompt.to_string())
            );
            condition["snapshot"] = json!(!spec.is_plain_chat());
        }
    }
    let mut out = String::new();
    let mut push = |value: &Value| {
        out.push_str(&value.to_string());
        out.push('\n');
    };
    push(&json!({
        "type": "study",
        "format": FORMAT,
        "id": study.id,
        "title": study.title,
        "status": study.status,
        "created_at": study.created_at,
        "exported_at": Utc::now(),
        "pseudonymised": how == Identities::Pseudonymised,
        "model": model,
        "design": design_json,
    }));
    for session in data {
        push(&session_json(study, design, session, how));
        for line in &session.lines {
            let line = serde_json::to_value(line)
                .map_err(|err| StudyError::Internal(format!("a line did not serialise: {err}")))?;
            push(
                &json!({"type": "recording", "session": session.session.session_ref, "line": line}),
            );
        }
    }
    Ok(out)
}

/// The sessions as CSV: one row each, pseudonymised, with the measures.
pub fn sessions_csv(study: &StudyRow, design: &Design, data: &[SessionData]) -> String {
    let mut header = vec![
        "session",
        "participant",
        "condition",
        "status",
        "entered_at",
        "started_at",
        "ended_at",
    ];
    header.extend(measures::NUMERIC);
    let mut out = header.join(",");
    out.push('\n');
    for session in data {
        let s = &session.session;
        let (participant, _) = identities(study, design, s, Identities::Pseudonymised);
        let time = |t: Option<chrono::DateTime<Utc>>| t.map(|t| t.to_rfc3339()).unwrap_or_default();
        let mut row = vec![
            s.session_ref.clone(),
            participant.as_str().unwrap_or_default().to_string(),
            s.condition_key.clone().unwrap_or_default(),
            s.status.to_string(),
            s.entered_at.to_rfc3339(),
            time(s.started_at),
            time(s.ended_at),
        ];
        row.extend(measures::NUMERIC.iter().map(|name| {
            session
                .measures
                .value(name)
                .map(|v| v.to_string())
                .unwrap_or_default()
        }));
        let escaped: Vec<String> = row.iter().map(|cell| csv_cell(cell)).collect();
        out.push_str(&escaped.join(","));
        out.push('\n');
    }
    out
}

/// A CSV cell, quoted when it must be (and never read as a formula by a spreadsheet).
fn csv_cell(text: &str) -> String {
    let text = if text.starts_with(['=', '+', '-', '@']) && text.parse::<f64>().is_err() {
        format!("'{text}")
    } else {
        text.to_string()
    };
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text
    }
}

/// The summary: per condition its flow and its measures' statistics; the declined (who have
/// no condition) counted apart.
pub fn summary(design: &Design, data: &[SessionData]) -> Value {
    let mut conditions = Map::new();
    for condition in &design.conditions {
        let sessions: Vec<(&SessionRow, &Measures)> = data
            .iter()
            .filter(|d| d.session.condition_key.as_deref() == Some(condition.key.as_str()))
            .map(|d| (&d.session, &d.measures))
            .collect();
        conditions.insert(condition.key.clone(), measures::summarise(&sessions));
    }
    let unassigned = data
        .iter()
        .filter(|d| d.session.condition_key.is_none())
        .fold(Map::new(), |mut flow, d| {
            let n = flow
                .get(d.session.status.as_str())
                .and_then(Value::as_i64)
                .unwrap_or(0);
            flow.insert(d.session.status.to_string(), json!(n + 1));
            flow
        });
    json!({"sessions": data.len(), "unassigned": unassigned, "conditions": conditions})
}
