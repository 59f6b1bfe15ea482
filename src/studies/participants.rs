//! Participants: entering by the study's link, consent and assignment, Start, Finish and
//! withdrawing.
//!
//! **Assignment** is balanced by least `count / weight` over the recruiting conditions that
//! are not full, ties at random (`random`: by weight). It runs in one write transaction that
//! first holds the study ([`crate::store::StudiesRepo::lock_study`]): on PostgreSQL the
//! study's row `FOR UPDATE`, so consents on any replica count and insert one after another;
//! on SQLite the write transaction itself. So `k·n` consents over `n` equal conditions give
//! exactly `k` each however they arrive. The count is the sessions assigned, active,
//! completed or timed out (previews, declines and withdrawals never count).
//!
//! The session's thread is made in the same transaction (owned by the study's owner, in the
//! condition's document mode), then seeded from the task through the workspace.

use chrono::{Duration, Utc};
use serde_json::{Map, Value};

use crate::{
    studies::design::Outcome, studies::design::fill_params, studies::lifecycle::in_write,
    studies::pseudonym::pseudonym, studies::service::Studies, studies::service::StudyError,
    studies::service::design_of, studies::service::new_session_ref, studies::service::random_text,
};

use haico_core::people::Participant;
use haico_core::people::Principal;
use haico_store::{
    ConditionRow, DocumentMode, NewSession, SessionRow, SessionStatus, StudyRow, StudyStatus,
    ThreadId,
};

/// A session just entered or resumed, with a fresh token for it.
#[derive(Debug, Clone)]
pub struct Entered {
    /// The session's reference.
    pub session_ref: String,
    /// The participant's token (shown once; the cookie carries it too).
    pub token: String,
    /// Its status.
    pub status: SessionStatus,
    /// Whether this entry made it (`false`: the same participant came back).
    pub new: bool,
}

/// What a participant may know of its session: never its condition's key, label, tools or
/// prompt.
#[derive(Debug, Clone)]
pub struct ParticipantView {
    /// The session's reference.
    pub session_ref: String,
    /// Its status.
    pub status: SessionStatus,
    /// The task's title.
    pub task_title: String,
    /// The task's instructions (Markdown).
    pub instructions: String,
    /// The consent text, and whether agreeing is asked.
    pub consent: (String, bool),
    /// Its thread, once assigned.
    pub thread_id: Option<String>,
    /// The panels it sees.
    pub panels: Vec<String>,
    /// When its time is up.
    pub deadline: Option<chrono::DateTime<Utc>>,
    /// Whether Finish would be accepted now.
    pub can_finish: bool,
    /// The code and the filled-in redirect URL, once it ended with one.
    pub completion: Option<(String, Option<String>)>,
}

/// The longest parameter value kept.
const MAX_PARAM_CHARS: usize = 200;

/// Whether `id` is a valid participant id (`[A-Za-z0-9_-]{1,64}`).
fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

impl Studies {
    /// A participant enters the study whose link carries `entry_key`. Unknown and draft
    /// studies do not exist (`404`); a closed one is `410`. The same participant id again
    /// resumes its session (with a new token); a participant never runs twice.
    pub async fn enter(
        &self,
        entry_key: &str,
        participant_id: Option<String>,
        params: Map<String, Value>,
    ) -> Result<Entered, StudyError> {
        let study = self.open_study(entry_key).await?;
        let design = design_of(&study)?;
        let entry = &design.entry;
        let mut kept = Map::new();
        let mut given_id = participant_id;
        for (name, value) in params {
            let Some(text) = value.as_str() else {
                return Err(StudyError::Invalid(format!(
                    "params.{name}: a parameter's value is a string"
                )));
            };
            if text.chars().count() > MAX_PARAM_CHARS {
                return Err(StudyError::Invalid(format!(
                    "params.{name}: at most {MAX_PARAM_CHARS} characters"
                )));
            }
            if name == entry.participant_param {
                given_id = given_id.or(Some(text.to_string()));
            } else if entry.params.contains(&name) {
                kept.insert(name, Value::String(text.to_string()));
            }
            // Parameters the design does not name are not kept.
        }
        let given_id = given_id.filter(|id| !id.is_empty());
        if let Some(id) = &given_id
            && !valid_id(id)
        {
            return Err(StudyError::Invalid(
                "participant_id: 1 to 64 letters, digits, `_` or `-`".to_string(),
            ));
        }
        if given_id.is_none() && entry.require_participant_id {
            return Err(StudyError::Invalid(format!(
                "participant_id: this study needs the participant's id (`{}`)",
                entry.participant_param
            )));
        }
        let key = given_id
            .as_deref()
            .map(|id| pseudonym(&study.secret, &entry.participant_param, id));
        let token = format!(
            "{}{}",
            crate::studies::service::PARTICIPANT_TOKEN_PREFIX,
            random_text(32)?
        );
        let digest = haico_core::people::digest(&token);
        let params = Value::Object(kept).to_string();
        for _ in 0..5 {
            let session_ref = new_session_ref()?;
            let (study_id, key_, id_, params_, digest_) = (
                study.id.clone(),
                key.clone(),
                given_id.clone(),
                params.clone(),
                digest.clone(),
            );
            let outcome = in_write(self, |tx| {
                Box::pin(async move {
                    if let Some(key) = &key_
                        && let Some(existing) =
                            tx.studies().session_of_participant(&study_id, key).await?
                    {
                        tx.studies()
                            .replace_token(&existing.session_ref, &digest_)
                            .await?;
                        return Ok((existing.session_ref, existing.status, false));
                    }
                    tx.studies()
                        .insert_session(NewSession {
                            session_ref: &session_ref,
                            study_id: &study_id,
                            participant_key: key_.as_deref(),
                            participant_id: id_.as_deref(),
                            params: &params_,
                            token_digest: &digest_,
                            preview: false,
                        })
                        .await?;
                    Ok((session_ref, SessionStatus::Entered, true))
                })
            })
            .await;
            match outcome {
                Ok((session_ref, status, new)) => {
                    self.sessions_made();
                    return Ok(Entered {
                        session_ref,
                        token,
                        status,
                        new,
                    });
                }
                // A reference taken already, or the same participant entering twice at once:
                // the next round finds the other's session or draws another reference.
                Err(StudyError::Store(err)) if err.is_unique_violation() => continue,
                Err(err) => return Err(err),
            }
        }
        Err(StudyError::Internal(
            "could not draw a free session reference".to_string(),
        ))
    }

    /// The open study whose link carries `entry_key`.
    async fn open_study(&self, entry_key: &str) -> Result<StudyRow, StudyError> {
        let mut repo = self.db.autocommit_read().await?;
        let found = repo.studies().study_by_entry_key(entry_key).await;
        let _ = repo.rollback().await;
        match found? {
            Some(study) if study.status == StudyStatus::Open => Ok(study),
            Some(study) if study.status == StudyStatus::Closed => Err(StudyError::Closed),
            _ => Err(StudyError::NotFound("no study has this link".to_string())),
        }
    }

    /// Whether the study whose link carries `entry_key` is open (`Err` as for entering).
    pub async fn check_entry(&self, entry_key: &str) -> Result<(), StudyError> {
        self.open_study(entry_key).await.map(|_| ())
    }

    /// The participant a token belongs to, if any.
    pub async fn participant(&self, token: &str) -> Result<Option<Participant>, StudyError> {
        if !token.starts_with(crate::studies::service::PARTICIPANT_TOKEN_PREFIX) {
            return Ok(None);
        }
        let digest = haico_core::people::digest(token);
        let mut repo = self.db.autocommit_read().await?;
        let found = async {
            let Some(session) = repo.studies().session_by_token(&digest).await? else {
                return Ok(None);
            };
            let study = repo.studies().study(&session.study_id).await?;
            Ok::<_, StudyError>(study.map(|study| (session, study)))
        }
        .await;
        let _ = repo.rollback().await;
        let Some((session, study)) = found? else {
            return Ok(None);
        };
        let design = design_of(&study)?;
        let panels = session
            .condition_key
            .as_deref()
            .and_then(|key| design.condition(key))
            .map(|c| c.panels.clone())
            .unwrap_or_default();
        Ok(Some(Participant {
            thread: session
                .thread_id
                .as_deref()
                .and_then(|t| ThreadId::parse(t).ok()),
            session_ref: session.session_ref,
            study_id: study.id,
            owner_id: study.owner_id,
            status: session.status,
            deadline: session.deadline,
            panels,
        }))
    }

    /// The session and study of `participant`, read afresh.
    async fn session_of(
        &self,
        participant: &Participant,
    ) -> Result<(SessionRow, StudyRow), StudyError> {
        let mut repo = self.db.begin_read().await?;
        let found = async {
            let session = repo.studies().session(&participant.session_ref).await?;
            let study = repo.studies().study(&participant.study_id).await?;
            Ok::<_, StudyError>(session.zip(study))
        }
        .await;
        let _ = repo.rollback().await;
        found?.ok_or_else(|| StudyError::NotFound("this session no longer exists".to_string()))
    }

    /// What the participant may know of its session now.
    pub async fn participant_view(
        &self,
        participant: &Participant,
    ) -> Result<ParticipantView, StudyError> {
        let (session, study) = self.session_of(participant).await?;
        self.view_for(&session, &study).await
    }

    async fn view_for(
        &self,
        session: &SessionRow,
        study: &StudyRow,
    ) -> Result<ParticipantView, StudyError> {
        let design = design_of(study)?;
        let condition = session
            .condition_key
            .as_deref()
            .and_then(|key| design.condition(key));
        let turns = self.turns_of(session).await?;
        let min_turns = design.limits.min_turns.unwrap_or(0);
        let completion = match session.status {
            SessionStatus::Completed => Some(&design.completion.completed),
            SessionStatus::TimedOut => design.completion.timed_out.as_ref(),
            SessionStatus::Declined => design.completion.no_consent.as_ref(),
            _ => None,
        }
        .map(|outcome| filled(outcome, session));
        Ok(ParticipantView {
            session_ref: session.session_ref.clone(),
            status: session.status,
            task_title: design.task.title.clone(),
            instructions: design.task.instructions.clone(),
            consent: (design.consent.text.clone(), design.consent.required),
            thread_id: session.thread_id.clone(),
            panels: condition.map(|c| c.panels.clone()).unwrap_or_default(),
            deadline: session.deadline,
            can_finish: session.status == SessionStatus::Active && turns >= min_turns,
            completion,
        })
    }

    /// How many agent turns the session's thread has had.
    async fn turns_of(&self, session: &SessionRow) -> Result<i64, StudyError> {
        let Some(thread) = session
            .thread_id
            .as_deref()
            .and_then(|t| ThreadId::parse(t).ok())
        else {
            return Ok(0);
        };
        match self.workspaces.threads().get(&thread).await {
            Ok(thread) => Ok(thread.turn_index),
            Err(haico_core::workspace::WorkspaceError::UnknownThread(_)) => Ok(0),
            Err(err) => Err(err.into()),
        }
    }

    /// Consent: `false` declines (no thread, the `no_consent` code); `true` assigns a
    /// condition and makes the session's thread. Asked again after deciding, it answers the
    /// session as it is.
    pub async fn consent(
        &self,
        participant: &Participant,
        agree: bool,
    ) -> Result<ParticipantView, StudyError> {
        let (session, study) = self.session_of(participant).await?;
        if session.status != SessionStatus::Entered {
            return self.view_for(&session, &study).await;
        }
        if !agree {
            let session_ref = session.session_ref.clone();
            in_write(self, |tx| {
                Box::pin(async move { Ok(tx.studies().decide_consent(&session_ref, None).await?) })
            })
            .await?;
            return self.participant_view(participant).await;
        }
        if study.status != StudyStatus::Open {
            return Err(StudyError::Closed);
        }
        self.assign(&session, &study, None).await?;
        self.participant_view(participant).await
    }

    /// Assigns `session` (to `only` when given: a preview) and makes and seeds its thread.
    async fn assign(
        &self,
        session: &SessionRow,
        study: &StudyRow,
        only: Option<&str>,
    ) -> Result<(), StudyError> {
        let design = design_of(study)?;
        let random = design.assignment.method == "random";
        let thread = ThreadId::generate();
        let (study_id, session_ref, owner) = (
            study.id.clone(),
            session.session_ref.clone(),
            study.owner_id,
        );
        let only = only.map(str::to_string);
        let title = design.task.title.clone();
        let modes: Vec<(String, DocumentMode)> = design
            .conditions
            .iter()
            .map(|c| {
                (
                    c.key.clone(),
                    DocumentMode::from_stored(Some(&c.document_mode)),
                )
            })
            .collect();
        let thread_ = thread.clone();
        let chosen = in_write(self, |tx| {
            Box::pin(async move {
                if !tx.studies().lock_study(&study_id).await? {
                    return Err(StudyError::NotFound(
                        "the study no longer exists".to_string(),
                    ));
                }
                let chosen = match only {
                    Some(key) => key,
                    None => {
                        let conditions = tx.studies().conditions(&study_id, false).await?;
                        choose(&conditions, random).ok_or(StudyError::Full)?
                    }
                };
                tx.threads().create_thread(&thread_, &title).await?;
                tx.people().set_owner(&thread_, owner).await?;
                if let Some(&(_, mode)) = modes.iter().find(|(key, _)| *key == chosen)
                    && mode != DocumentMode::Direct
                {
                    tx.suggestions().set_document_mode(&thread_, mode).await?;
                }
                let assigned = tx
                    .studies()
                    .decide_consent(&session_ref, Some((&chosen, thread_.as_str())))
                    .await?;
                if !assigned {
                    return Err(StudyError::Conflict(
                        "this session decided already".to_string(),
                    ));
                }
                Ok(chosen)
            })
        })
        .await?;
        tracing::info!(session = %session.session_ref, condition = %chosen, "participant assigned");
        crate::eval::run::seed(&self.workspaces, &thread, &design.task.seed)
            .await
            .map_err(|(at, err)| {
                StudyError::Internal(format!(
                    "the task's seed could not be written ({at}): {err}"
                ))
            })?;
        Ok(())
    }

    /// Start: the clock runs from now (`deadline` when the study has a time limit).
    pub async fn start(&self, participant: &Participant) -> Result<ParticipantView, StudyError> {
        let (session, study) = self.session_of(participant).await?;
        match session.status {
            SessionStatus::Assigned => {}
            SessionStatus::Active => return self.view_for(&session, &study).await,
            SessionStatus::Entered => {
                return Err(StudyError::Conflict(
                    "answer the consent form first".to_string(),
                ));
            }
            _ => {
                return Err(StudyError::Conflict(
                    "this session has ended and cannot start again".to_string(),
                ));
            }
        }
        let design = design_of(&study)?;
        let deadline = design
            .limits
            .time_limit_s
            .map(|s| Utc::now() + Duration::seconds(s));
        let session_ref = session.session_ref.clone();
        in_write(self, |tx| {
            Box::pin(async move { Ok(tx.studies().start(&session_ref, deadline).await?) })
        })
        .await?;
        self.participant_view(participant).await
    }

    /// Finish: refused (`needs`) until the study's `min_turns`; then `completed` with the
    /// code. Asked again, the same answer.
    pub async fn finish(&self, participant: &Participant) -> Result<ParticipantView, StudyError> {
        let (session, study) = self.session_of(participant).await?;
        match session.status {
            SessionStatus::Completed => return self.view_for(&session, &study).await,
            SessionStatus::Active => {}
            SessionStatus::TimedOut => return Err(StudyError::TimeIsUp),
            _ => {
                return Err(StudyError::Conflict(
                    "only a started session can finish".to_string(),
                ));
            }
        }
        if session.deadline.is_some_and(|d| d <= Utc::now()) {
            return Err(StudyError::TimeIsUp);
        }
        let design = design_of(&study)?;
        let turns = self.turns_of(&session).await?;
        let needed = design.limits.min_turns.unwrap_or(0);
        if turns < needed {
            return Err(StudyError::NeedsTurns {
                turns: needed - turns,
            });
        }
        let session_ref = session.session_ref.clone();
        let ended = in_write(self, |tx| {
            Box::pin(async move {
                Ok(tx
                    .studies()
                    .end(
                        &session_ref,
                        &[SessionStatus::Active],
                        SessionStatus::Completed,
                    )
                    .await?)
            })
        })
        .await?;
        if !ended {
            // The clock ended it meanwhile: the participant is told as it stands.
            return self.participant_view(participant).await;
        }
        self.participant_view(participant).await
    }

    /// Withdraw: the session ends `withdrawn` and never counts.
    pub async fn withdraw(&self, participant: &Participant) -> Result<ParticipantView, StudyError> {
        let session_ref = participant.session_ref.clone();
        in_write(self, |tx| {
            Box::pin(async move {
                Ok(tx
                    .studies()
                    .end(
                        &session_ref,
                        &[
                            SessionStatus::Entered,
                            SessionStatus::Assigned,
                            SessionStatus::Active,
                        ],
                        SessionStatus::Withdrawn,
                    )
                    .await?)
            })
        })
        .await?;
        if let Some(thread) = &participant.thread {
            let _ = self
                .workspaces
                .announce_study(
                    thread,
                    &serde_json::json!({"kind": "ended", "status": "withdrawn"}),
                )
                .await;
        }
        self.participant_view(participant).await
    }

    /// A researcher's preview of `condition`: a session marked preview, assigned to it at once,
    /// which counts nowhere.
    pub async fn preview(
        &self,
        principal: &Principal,
        study_id: &str,
        condition: &str,
    ) -> Result<Entered, StudyError> {
        let (study, _) = self
            .study_as(principal, study_id, crate::studies::roles::StudyOp::Change)
            .await?;
        let design = design_of(&study)?;
        if design.condition(condition).is_none() {
            return Err(StudyError::Invalid(format!(
                "condition: no condition has the key {condition:?}"
            )));
        }
        let token = format!(
            "{}{}",
            crate::studies::service::PARTICIPANT_TOKEN_PREFIX,
            random_text(32)?
        );
        let digest = haico_core::people::digest(&token);
        let session_ref = new_session_ref()?;
        let (study_id_, ref_) = (study.id.clone(), session_ref.clone());
        in_write(self, |tx| {
            Box::pin(async move {
                tx.studies()
                    .insert_session(NewSession {
                        session_ref: &ref_,
                        study_id: &study_id_,
                        participant_key: None,
                        participant_id: None,
                        params: "{}",
                        token_digest: &digest,
                        preview: true,
                    })
                    .await?;
                Ok(())
            })
        })
        .await?;
        self.sessions_made();
        let mut repo = self.db.autocommit_read().await?;
        let session = repo.studies().session(&session_ref).await;
        let _ = repo.rollback().await;
        let session =
            session?.ok_or_else(|| StudyError::Internal("a preview vanished".to_string()))?;
        self.assign(&session, &study, Some(condition)).await?;
        Ok(Entered {
            session_ref,
            token,
            status: SessionStatus::Assigned,
            new: true,
        })
    }
}

/// The condition the next participant goes to: among the recruiting conditions below their
/// target, the least `count / weight` (ties at random); with `random`, drawn by weight.
fn choose(conditions: &[ConditionRow], random: bool) -> Option<String> {
    let open: Vec<&ConditionRow> = conditions
        .iter()
        .filter(|c| c.recruiting && c.target.is_none_or(|t| c.counted < t))
        .collect();
    if open.is_empty() {
        return None;
    }
    if random {
        let total: f64 = open.iter().map(|c| c.weight).sum();
        let mut draw = fastrand::f64() * total;
        for c in &open {
            if draw < c.weight {
                return Some(c.condition_key.clone());
            }
            draw -= c.weight;
        }
        return open.last().map(|c| c.condition_key.clone());
    }
    // Compared as count × other weight, so equal ratios tie exactly (no float division).
    let least = open
        .iter()
        .copied()
        .fold(None::<&ConditionRow>, |best, c| match best {
            Some(b) if (b.counted as f64) * c.weight <= (c.counted as f64) * b.weight => Some(b),
            _ => Some(c),
        })?;
    let tied: Vec<&&ConditionRow> = open
        .iter()
        .filter(|c| (c.counted as f64) * least.weight == (least.counted as f64) * c.weight)
        .collect();
    let pick = tied.get(fastrand::usize(..tied.len()))?;
    Some(pick.condition_key.clone())
}

/// An outcome's code and its redirect URL with the placeholders filled in.
fn filled(outcome: &Outcome, session: &SessionRow) -> (String, Option<String>) {
    let params: Map<String, Value> = serde_json::from_str(&session.params).unwrap_or_default();
    let encode =
        |text: &str| url::form_urlencoded::byte_serialize(text.as_bytes()).collect::<String>();
    let url = outcome.redirect_url.as_ref().map(|url| {
        let url = url
            .replace("{code}", &encode(&outcome.code))
            .replace("{session}", &session.session_ref);
        fill_params(&url, |name| {
            params.get(name).and_then(Value::as_str).map(&encode)
        })
    });
    (outcome.code.clone(), url)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn row(key: &str, weight: f64, counted: i64) -> ConditionRow {
        ConditionRow {
            condition_key: key.to_string(),
            ordinal: 0,
            weight,
            target: None,
            recruiting: true,
            counted,
        }
    }

    #[test]
    fn the_least_count_per_weight_is_chosen() {
        assert_eq!(
            choose(&[row("a", 1.0, 3), row("b", 1.0, 2)], false).as_deref(),
            Some("b")
        );
        // 2:1 weights: a with 2 and b with 1 are level; a with 3 is ahead.
        assert_eq!(
            choose(&[row("a", 2.0, 3), row("b", 1.0, 1)], false).as_deref(),
            Some("b")
        );
        let mut full = row("a", 1.0, 0);
        full.target = Some(0);
        full.recruiting = true;
        assert_eq!(choose(&[full], false), None);
        let mut closed = row("a", 1.0, 0);
        closed.recruiting = false;
        assert_eq!(
            choose(&[closed, row("b", 1.0, 9)], false).as_deref(),
            Some("b")
        );
    }
}
