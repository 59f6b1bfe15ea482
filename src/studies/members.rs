//! Who may do what with a study: its owner, and the members it is shared with, as threads are
//! (SPEC §9, §14). A `viewer` reads the study, its sessions, summary, timelines and the
//! pseudonymised downloads; an `editor` also changes a draft's design, opens and closes it,
//! sets recruiting and targets and makes previews; the owner (and administrators) also manage
//! the members and delete it, and only the owner has the raw export. For anyone else the study
//! does not exist (`404`), as a thread one may not see; too little access is `403`, as a
//! viewer's change of a thread is.
//!
//! The owner is `studies.owner_id`, never a member row, so a study always has exactly one
//! owner and cannot be left without one by removing members.

use crate::{
    studies::lifecycle::in_write, studies::roles::StudyOp, studies::roles::StudyRole,
    studies::service::Studies, studies::service::StudyError,
};
use haico_core::{people::Principal, people::checked_name};
use haico_store::{Member, StudyRow, Transaction};

/// A role a member may be given (the owner's is not given, it is the study's maker's).
fn member_role(role: &str) -> Result<&'static str, StudyError> {
    match role {
        "viewer" => Ok("viewer"),
        "editor" => Ok("editor"),
        _ => Err(StudyError::BadRequest(format!(
            "`role` is {role:?}: add as \"viewer\" (reads the study and its pseudonymised data) \
             or \"editor\" (also changes, opens and closes it)"
        ))),
    }
}

/// The name in a request, checked as account names are; the refusal as a study's.
fn account_name(name: &str) -> Result<(), StudyError> {
    checked_name(name)
        .map(|_| ())
        .map_err(|err| StudyError::BadRequest(err.to_string()))
}

fn no_account(name: &str) -> StudyError {
    StudyError::NotFound(format!("no account named `{name}`"))
}

/// The id of the account `name`, which must exist and must not be the study's owner (whose
/// place is not a membership); `owner` ends the refusal, after the name.
async fn member_account(
    tx: &mut Transaction,
    study: &StudyRow,
    name: &str,
    owner: &str,
) -> Result<i64, StudyError> {
    let user = tx
        .people()
        .user_named(name)
        .await?
        .ok_or_else(|| no_account(name))?;
    if study.owner_id == Some(user.id) {
        return Err(StudyError::BadRequest(format!("`{name}` {owner}")));
    }
    Ok(user.id)
}

fn not_a_member(name: &str) -> StudyError {
    StudyError::NotFound(format!(
        "the study is not shared with `{name}`: add them with POST …/members first"
    ))
}

impl Studies {
    /// What `principal` may do with the study `row`; `None`: nothing (it does not exist for
    /// them). Administrators and the one person of one-person mode own every study.
    pub(super) async fn role_in(
        &self,
        principal: &Principal,
        row: &StudyRow,
    ) -> Result<Option<StudyRole>, StudyError> {
        if principal.is_admin() {
            return Ok(Some(StudyRole::Owner));
        }
        let Some(user) = principal.user() else {
            return Ok(None);
        };
        if row.owner_id == Some(user.id) {
            return Ok(Some(StudyRole::Owner));
        }
        let mut repo = self.db.autocommit_read().await?;
        let role = repo.studies().member_role(&row.id, user.id).await;
        let _ = repo.rollback().await;
        Ok(match role?.as_deref() {
            Some("editor") => Some(StudyRole::Editor),
            Some("viewer") => Some(StudyRole::Viewer),
            _ => None,
        })
    }

    /// The study `id` when `principal` may do `op` with it, with their role: `404` when they
    /// may not see it at all, `403` when they may but too little.
    pub async fn study_as(
        &self,
        principal: &Principal,
        id: &str,
        op: StudyOp,
    ) -> Result<(StudyRow, StudyRole), StudyError> {
        let mut repo = self.db.autocommit_read().await?;
        let found = repo.studies().study(id).await;
        let _ = repo.rollback().await;
        let missing = || StudyError::NotFound(format!("study `{id}` does not exist"));
        let row = found?.ok_or_else(missing)?;
        match self.role_in(principal, &row).await? {
            None => Err(missing()),
            Some(role) if !role.may(op) => Err(role.refusal(op.needs())),
            Some(role) => Ok((row, role)),
        }
    }

    /// The study's owner (first, when it has one) and members, by name (its owner and
    /// administrators).
    pub async fn members(
        &self,
        principal: &Principal,
        id: &str,
    ) -> Result<Vec<Member>, StudyError> {
        let (row, _) = self.study_as(principal, id, StudyOp::Share).await?;
        self.members_of(&row.id).await
    }

    async fn members_of(&self, id: &str) -> Result<Vec<Member>, StudyError> {
        let mut repo = self.db.autocommit_read().await?;
        let members = repo.studies().members(id).await;
        let _ = repo.rollback().await;
        Ok(members?)
    }

    /// Adds the account `name` to the study as `role`. Someone who is a member already is
    /// refused (`409`) rather than silently given another role: changing a role is a
    /// `PATCH`, so a second researcher adding the same person cannot demote them unawares.
    pub async fn add_member(
        &self,
        principal: &Principal,
        id: &str,
        name: &str,
        role: &str,
    ) -> Result<Vec<Member>, StudyError> {
        let (row, _) = self.study_as(principal, id, StudyOp::Share).await?;
        account_name(name)?;
        let role = member_role(role)?;
        let (study, name_) = (row.id.clone(), name.to_string());
        in_write(self, |tx| {
            Box::pin(async move {
                let user = member_account(tx, &row, &name_, "owns this study already").await?;
                if !tx.studies().add_member(&study, user, role).await? {
                    let had = tx.studies().member_role(&study, user).await?;
                    return Err(StudyError::Conflict(format!(
                        "`{name_}` is a member of this study already (as {}): change the role \
                         with PATCH …/members/{name_}",
                        had.as_deref().unwrap_or("a member")
                    )));
                }
                Ok(())
            })
        })
        .await?;
        self.members_of(id).await
    }

    /// Gives the member `name` the role `role`.
    pub async fn change_member(
        &self,
        principal: &Principal,
        id: &str,
        name: &str,
        role: &str,
    ) -> Result<Vec<Member>, StudyError> {
        let (row, _) = self.study_as(principal, id, StudyOp::Share).await?;
        account_name(name)?;
        let role = member_role(role)?;
        let (study, name_) = (row.id.clone(), name.to_string());
        in_write(self, |tx| {
            Box::pin(async move {
                let user = member_account(
                    tx,
                    &row,
                    &name_,
                    "owns this study: the owner's role does not change",
                )
                .await?;
                match tx.studies().set_member_role(&study, user, role).await? {
                    true => Ok(()),
                    false => Err(not_a_member(&name_)),
                }
            })
        })
        .await?;
        self.members_of(id).await
    }

    /// Removes the member `name` from the study: they no longer see it, nor its participants'
    /// threads. The owner cannot be removed (deleting the study is what ends it).
    pub async fn remove_member(
        &self,
        principal: &Principal,
        id: &str,
        name: &str,
    ) -> Result<Vec<Member>, StudyError> {
        let (row, _) = self.study_as(principal, id, StudyOp::Share).await?;
        account_name(name)?;
        let (study, name_) = (row.id.clone(), name.to_string());
        in_write(self, |tx| {
            Box::pin(async move {
                let user = member_account(
                    tx,
                    &row,
                    &name_,
                    "owns this study and stays its owner: delete the study to end it",
                )
                .await?;
                match tx.studies().remove_member(&study, user).await? {
                    true => Ok(()),
                    false => Err(not_a_member(&name_)),
                }
            })
        })
        .await?;
        self.members_of(id).await
    }
}
