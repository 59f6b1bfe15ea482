//! Forking a thread at a revision into a new, independent thread.

use super::*;
use crate::{
    workspace::edit::Edit, workspace::error::WorkspaceError, workspace::revision::ChangeNote,
};

impl crate::workspace::service::Workspaces {
    /// Forks `source` at revision `at` (the latest when `None`): a new thread (`id`, or a fresh
    /// one) whose workspace equals the source's at `at` and whose conversation is the source's
    /// up to that point; it records where it came from. The two evolve independently.
    pub async fn fork(
        &self,
        source: &haico_store::ThreadId,
        at: Option<i64>,
        id: Option<haico_store::ThreadId>,
        title: Option<&str>,
    ) -> Result<haico_store::Thread, WorkspaceError> {
        if let Some(title) = title {
            crate::workspace::threads::checked_title(title)?;
        }
        let id = id.unwrap_or_else(haico_store::ThreadId::generate);
        let mut edit = self
            .edit_unchecked(&id, crate::workspace::announce::Source::User)
            .await?;
        let owner = self.actor().map(|actor| actor.id);
        let outcome = fork_into(&mut edit, source, at, &id, title, owner).await;
        edit.end(outcome, |at| ChangeNote {
            summary: format!("forked from thread `{source}` at revision {at}"),
            ..ChangeNote::default()
        })
        .await??;
        self.threads().get(&id).await
    }
}

/// Builds the fork inside `edit` (a write of the new thread); returns the revision forked.
pub(super) async fn fork_into(
    edit: &mut Edit,
    source: &haico_store::ThreadId,
    at: Option<i64>,
    id: &haico_store::ThreadId,
    title: Option<&str>,
    owner: Option<i64>,
) -> Result<i64, WorkspaceError> {
    let repo = edit.repo();
    let origin = repo
        .threads()
        .get_thread(source)
        .await?
        .ok_or_else(|| WorkspaceError::UnknownThread(source.to_string()))?;
    let latest = repo.history().last_revision(source).await?;
    let at = at.unwrap_or(latest);
    if at < 0 || at > latest {
        return Err(WorkspaceError::NotFound(format!(
            "revision {at} does not exist: the thread's latest revision is {latest}"
        )));
    }
    // The conversation "up to revision `at`" is everything recorded before the next revision
    // was committed, or everything when `at` is the latest (a turn's answer comes after its
    // last change).
    let (up_to_turn, until) = if at < latest {
        let up_to_turn = match at {
            0 => 0,
            _ => repo
                .history()
                .revisions_between(source, at, at)
                .await?
                .pop()
                .map_or(0, |r| r.thread_turn),
        };
        let next = repo
            .history()
            .revisions_between(source, at + 1, at + 1)
            .await?
            .pop()
            .map_or_else(haico_store::revision_time, |next| next.at);
        (up_to_turn, next)
    } else {
        (origin.turn_index, haico_store::revision_time())
    };
    let snapshot = workspace_at(repo, source, at).await?;
    let title = match title {
        Some(title) => title.trim().to_string(),
        None => {
            let base: String = origin.title.chars().take(190).collect();
            format!("{base} (fork)")
        }
    };
    match repo.forks().create_fork(id, &title, 0, (source, at)).await {
        Ok(_) => {}
        Err(err) if err.is_unique_violation() => {
            return Err(WorkspaceError::ThreadExists(id.to_string()));
        }
        Err(err) => return Err(err.into()),
    };
    let new = id;
    if owner.is_some() {
        repo.people().set_owner(new, owner).await?;
    }
    // The fork's agent uses the servers the source's does (a setting of the thread, not of a
    // revision: the source's current choice).
    if origin.mcp_servers.is_some() {
        repo.threads()
            .set_mcp_servers(new, origin.mcp_servers.as_deref())
            .await?;
    }
    if let Some(objective) = &snapshot.objective {
        repo.objectives().set_objective(new, objective).await?;
    }
    if let Some(document) = &snapshot.document {
        repo.forks().copy_document(new, document).await?;
    }
    repo.forks().copy_plan(new, &snapshot.plan).await?;
    repo.forks()
        .copy_preferences(new, &snapshot.preferences)
        .await?;
    let (mode, suggestions) = suggestions_at(repo, source, at).await?;
    repo.suggestions()
        .write_suggestions_exact(new, mode, &suggestions)
        .await?;
    repo.suggestions().journal_suggestions(mode, suggestions);
    for summary in snapshot.artifacts.iter().rev() {
        if let Some(artifact) = repo.artifacts().get_artifact(source, summary.id).await? {
            repo.forks().copy_artifact(new, &artifact).await?;
        }
    }
    let turns = repo
        .forks()
        .copy_conversation(source, new, up_to_turn, until)
        .await?;
    edit.set_turn_index(turns);
    Ok(at)
}
