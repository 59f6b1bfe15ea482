//! A study's life: made as a draft (its design checked whole, nothing stored on a fault),
//! changed while a draft, opened (the design frozen; recruiting and targets stay editable),
//! closed, deleted. Its owner, its members (`members.rs`) and administrators see a study; for
//! anyone else it does not exist.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::tools::build_tools;
use crate::{
    studies::design, studies::design::Design, studies::design::DesignError,
    studies::design::KnownTools, studies::roles::StudyOp, studies::roles::StudyRole,
    studies::service::Studies, studies::service::StudyError, studies::service::design_of,
    studies::service::random_text,
};
use haico_core::people::Principal;
use haico_store::{ConditionRow, SessionRow, StudyRow, StudyStatus, ThreadId, Transaction};

/// The workspace's tools, as a design may name them.
struct WorkspaceTools(crate::tools::Toolset);

impl WorkspaceTools {
    fn new() -> Self {
        let thread = ThreadId::parse("study-design").unwrap_or_else(|_| ThreadId::generate());
        Self(build_tools(&thread))
    }
}

impl KnownTools for WorkspaceTools {
    fn knows(&self, name: &str) -> bool {
        self.0.get(name).is_some()
    }
}

/// A study as its researchers read it.
#[derive(Debug, Clone)]
pub struct StudyView {
    /// The stored row.
    pub row: StudyRow,
    /// Its design.
    pub design: Design,
    /// Its conditions with their balance counts.
    pub conditions: Vec<ConditionRow>,
    /// Sessions (previews aside) by status.
    pub by_status: BTreeMap<String, i64>,
    /// What the caller may do with it.
    pub role: StudyRole,
}

/// What a `PATCH` of a study may change.
#[derive(Debug, Clone, Default)]
pub struct StudyChange {
    /// Top-level design fields, replacing the stored ones (drafts only).
    pub design: Map<String, Value>,
    /// Conditions' recruiting flags, by key.
    pub recruiting: BTreeMap<String, bool>,
    /// Conditions' targets, by key (`None` removes the cap).
    pub targets: BTreeMap<String, Option<i64>>,
}

/// The design's conditions as the balance table stores them.
fn condition_rows(design: &Design) -> Vec<(String, f64, Option<i64>, bool)> {
    design
        .conditions
        .iter()
        .map(|c| (c.key.clone(), c.weight, c.target, c.recruiting))
        .collect()
}

/// Reads and checks a design; the refusal as the caller sees it.
fn checked(value: Value) -> Result<Design, StudyError> {
    let design = design::parse(value).map_err(|err| match err {
        Ok(fault) => StudyError::Design(fault),
        Err(unknown) => StudyError::BadRequest(unknown),
    })?;
    design.check(&WorkspaceTools::new())?;
    Ok(design)
}

/// Runs `body` in a write transaction, committed when it succeeds and rolled back otherwise.
pub(super) async fn in_write<T>(
    studies: &Studies,
    body: impl for<'a> FnOnce(
        &'a mut Transaction,
    ) -> futures::future::BoxFuture<'a, Result<T, StudyError>>,
) -> Result<T, StudyError> {
    let mut tx = studies.db.begin_write().await?;
    match body(&mut tx).await {
        Ok(value) => {
            tx.commit().await?;
            Ok(value)
        }
        Err(err) => {
            let _ = tx.rollback().await;
            Err(err)
        }
    }
}

impl Studies {
    /// Makes a draft study from `body`, owned by `principal`'s account (none in one-person
    /// mode). Nothing is stored when any field is refused.
    pub async fn create(
        &self,
        principal: &Principal,
        body: Value,
    ) -> Result<StudyView, StudyError> {
        let design = checked(body)?;
        let id = uuid::Uuid::new_v4().to_string();
        let entry_key = random_text(18)?;
        let secret = random_text(32)?;
        let json = serde_json::to_string(&design)
            .map_err(|err| StudyError::Internal(format!("a design did not serialise: {err}")))?;
        let owner = principal.user().map(|user| user.id);
        let rows = condition_rows(&design);
        let title = design.title.clone();
        let id = in_write(self, |tx| {
            Box::pin(async move {
                tx.studies()
                    .insert_study(&id, owner, &title, &entry_key, &secret, &json)
                    .await?;
                tx.studies().replace_conditions(&id, &rows).await?;
                Ok(id)
            })
        })
        .await?;
        self.view(principal, &id).await
    }

    /// The study `id` when `principal` may read it (any role); for anyone else it does not
    /// exist.
    pub async fn study(&self, principal: &Principal, id: &str) -> Result<StudyRow, StudyError> {
        Ok(self.study_as(principal, id, StudyOp::Read).await?.0)
    }

    /// The study with its design and counts.
    pub async fn view(&self, principal: &Principal, id: &str) -> Result<StudyView, StudyError> {
        let (row, role) = self.study_as(principal, id, StudyOp::Read).await?;
        self.view_of(row, role).await
    }

    async fn view_of(&self, row: StudyRow, role: StudyRole) -> Result<StudyView, StudyError> {
        let design = design_of(&row)?;
        let mut repo = self.db.begin_read().await?;
        let read = async {
            let conditions = repo.studies().conditions(&row.id, false).await?;
            let sessions = repo.studies().sessions(&row.id).await?;
            Ok::<_, StudyError>((conditions, sessions))
        }
        .await;
        let _ = repo.rollback().await;
        let (conditions, sessions) = read?;
        Ok(StudyView {
            row,
            design,
            conditions,
            by_status: count_statuses(&sessions),
            role,
        })
    }

    /// The studies `principal` may see (owns, or is a member of), newest first, each with
    /// the caller's role.
    pub async fn list(&self, principal: &Principal) -> Result<Vec<StudyView>, StudyError> {
        let user = match principal {
            _ if principal.is_admin() => None,
            Principal::User(user) => Some(user.id),
            _ => return Ok(Vec::new()),
        };
        let mut repo = self.db.begin_read().await?;
        let read = async {
            let rows = repo.studies().list_studies(user).await?;
            let roles = match user {
                Some(user) => repo.studies().member_roles(user).await?,
                None => Vec::new(),
            };
            Ok::<_, StudyError>((rows, roles))
        }
        .await;
        let _ = repo.rollback().await;
        let (rows, roles) = read?;
        let roles: std::collections::HashMap<String, String> = roles.into_iter().collect();
        let mut views = Vec::new();
        for row in rows {
            let role = match (user, roles.get(&row.id).map(String::as_str)) {
                (None, _) => StudyRole::Owner,
                (Some(user), _) if row.owner_id == Some(user) => StudyRole::Owner,
                (_, Some("editor")) => StudyRole::Editor,
                _ => StudyRole::Viewer,
            };
            views.push(self.view_of(row, role).await?);
        }
        Ok(views)
    }

    /// Applies `change`: design fields only to a draft (`409` once open), recruiting and
    /// targets at any time before it closes. Checked whole before anything is written.
    pub async fn change(
        &self,
        principal: &Principal,
        id: &str,
        change: StudyChange,
    ) -> Result<StudyView, StudyError> {
        let (row, _) = self.study_as(principal, id, StudyOp::Change).await?;
        let mut value: Value = serde_json::from_str(&row.design)
            .map_err(|err| StudyError::Internal(format!("a stored design does not read: {err}")))?;
        if !change.design.is_empty() {
            if row.status != StudyStatus::Draft {
                return Err(StudyError::Conflict(format!(
                    "the design is frozen once the study is {}: only `recruiting` and `targets` \
                     may change",
                    row.status
                )));
            }
            if let Some(object) = value.as_object_mut() {
                object.extend(change.design);
            }
        }
        let mut design = checked(value)?;
        for (i, key) in change
            .recruiting
            .keys()
            .chain(change.targets.keys())
            .enumerate()
        {
            if design.condition(key).is_none() {
                return Err(StudyError::Design(DesignError {
                    path: if i < change.recruiting.len() {
                        format!("recruiting.{key}")
                    } else {
                        format!("targets.{key}")
                    },
                    message: "no condition has this key".to_string(),
                }));
            }
        }
        for condition in &mut design.conditions {
            if let Some(recruiting) = change.recruiting.get(&condition.key) {
                condition.recruiting = *recruiting;
            }
            if let Some(target) = change.targets.get(&condition.key) {
                condition.target = *target;
            }
        }
        // The targets are checked like the rest of the design.
        design.check(&WorkspaceTools::new())?;
        if row.status == StudyStatus::Closed
            && (!change.recruiting.is_empty() || !change.targets.is_empty())
        {
            return Err(StudyError::Conflict(
                "the study is closed: nothing of it changes".to_string(),
            ));
        }
        let json = serde_json::to_string(&design)
            .map_err(|err| StudyError::Internal(format!("a design did not serialise: {err}")))?;
        let rows = condition_rows(&design);
        let draft = row.status == StudyStatus::Draft;
        let title = design.title.clone();
        let study = row.id.clone();
        in_write(self, |tx| {
            Box::pin(async move {
                if draft {
                    if !tx.studies().update_design(&study, &title, &json).await? {
                        return Err(StudyError::Conflict(
                            "the study was opened meanwhile: its design is frozen".to_string(),
                        ));
                    }
                    tx.studies().replace_conditions(&study, &rows).await?;
                } else {
                    tx.studies().set_design_json(&study, &json).await?;
                    for (key, _, target, recruiting) in &rows {
                        tx.studies()
                            .set_recruiting(&study, key, *recruiting, *target)
                            .await?;
                    }
                }
                Ok(())
            })
        })
        .await?;
        self.view(principal, id).await
    }

    /// Moves the study `from` one status `to` the next (`open`: draft → open; `close`: open →
    /// closed); `409` from any other.
    pub async fn advance(
        &self,
        principal: &Principal,
        id: &str,
        from: StudyStatus,
        to: StudyStatus,
    ) -> Result<StudyView, StudyError> {
        let (row, _) = self.study_as(principal, id, StudyOp::Change).await?;
        let study = row.id.clone();
        let moved = in_write(self, |tx| {
            Box::pin(async move { Ok(tx.studies().move_status(&study, from, to).await?) })
        })
        .await?;
        if !moved {
            return Err(StudyError::Conflict(format!(
                "the study is {}; only a study that is {from} can become {to}",
                row.status
            )));
        }
        self.view(principal, id).await
    }

    /// Deletes the study, its sessions and their threads.
    pub async fn delete(&self, principal: &Principal, id: &str) -> Result<(), StudyError> {
        let (row, _) = self.study_as(principal, id, StudyOp::Delete).await?;
        let mut repo = self.db.autocommit_read().await?;
        let sessions = repo.studies().sessions(&row.id).await;
        let _ = repo.rollback().await;
        let study = row.id.clone();
        in_write(self, |tx| {
            Box::pin(async move { Ok(tx.studies().delete_study(&study).await?) })
        })
        .await?;
        for session in sessions? {
            if let Some(thread) = session
                .thread_id
                .as_deref()
                .and_then(|t| ThreadId::parse(t).ok())
            {
                match self.workspaces.threads().delete(&thread).await {
                    Ok(()) | Err(haico_core::workspace::WorkspaceError::UnknownThread(_)) => {}
                    Err(err) => return Err(err.into()),
                }
            }
        }
        Ok(())
    }
}

/// How many sessions (previews aside) are in each status.
fn count_statuses(sessions: &[SessionRow]) -> BTreeMap<String, i64> {
    let mut counts = BTreeMap::new();
    for session in sessions.iter().filter(|s| !s.preview) {
        *counts.entry(session.status.to_string()).or_insert(0) += 1;
    }
    counts
}
