//! Threads: the conversations each workspace belongs to. Creating, renaming and deleting a
//! thread is not a change of its workspace, so none of them is announced on its stream.

use crate::{
    workspace::announce::Source, workspace::error::WorkspaceError, workspace::rules::require_text,
};

use crate::workspace::handles::Threads;
use haico_store::DocumentMode;
use haico_store::{StoreError, Thread, ThreadId};

/// The longest thread title, in characters.
pub const MAX_THREAD_TITLE_CHARS: usize = 200;
/// The title of a thread created without one.
pub const DEFAULT_THREAD_TITLE: &str = "New thread";

/// A thread title as stored: trimmed, not blank, within the limit.
pub fn checked_title(title: &str) -> Result<&str, WorkspaceError> {
    require_text(title, "title", MAX_THREAD_TITLE_CHARS)
}

/// What a person may change on a thread itself (`PATCH /api/threads/{id}`); `None` leaves
/// that part as it is.
#[derive(Debug, Clone, Copy, Default)]
pub struct ThreadChange<'a> {
    /// A new title.
    pub title: Option<&'a str>,
    /// What the agent's document tools do from now on.
    pub document_mode: Option<DocumentMode>,
    /// Which of the configured MCP servers the agent may use from now on.
    pub mcp_servers: Option<ServerChoice<'a>>,
}

/// A thread's choice of MCP servers as a person asks for it, with the servers configured now,
/// which the names are checked against (the workspace does not know the configuration itself).
#[derive(Debug, Clone, Copy)]
pub struct ServerChoice<'a> {
    /// `None`: every configured server (the default); otherwise these, none when empty.
    pub names: Option<&'a [String]>,
    /// The names of the servers configured now (`HAICO_MCP_SERVERS`).
    pub configured: &'a [String],
}

impl<'a> ServerChoice<'a> {
    /// The names, when each is a configured server and none repeats; otherwise what to send
    /// instead ([`WorkspaceError::Mismatch`]: well-formed, but not this server's servers).
    fn checked(self) -> Result<Option<&'a [String]>, WorkspaceError> {
        let Some(names) = self.names else {
            return Ok(None);
        };
        check_server_names_repeat(names).map_err(WorkspaceError::Mismatch)?;
        let unknown: Vec<String> = names
            .iter()
            .filter(|name| !self.configured.contains(name))
            .map(|name| format!("`{name}`"))
            .collect();
        if unknown.is_empty() {
            return Ok(Some(names));
        }
        let configured = if self.configured.is_empty() {
            "no MCP servers are configured (HAICO_MCP_SERVERS), so send `null` or `[]`".to_string()
        } else {
            let listed: Vec<String> = self.configured.iter().map(|n| format!("`{n}`")).collect();
            format!("the configured ones are {}", listed.join(", "))
        };
        Err(WorkspaceError::Mismatch(format!(
            "`mcp_servers` names {} that {} not configured: {}; {configured} (GET \
             /api/mcp-servers lists them)",
            if unknown.len() == 1 {
                "a server"
            } else {
                "servers"
            },
            if unknown.len() == 1 { "is" } else { "are" },
            unknown.join(", ")
        )))
    }
}

/// Longest MCP server name: the model sees `<server>__<tool>`, and providers cap a tool name at
/// 64.
pub const MAX_SERVER_NAME_LEN: usize = 32;

/// Whether `name` may name an MCP server: 1 to [`MAX_SERVER_NAME_LEN`] of `a-z`, `0-9`, `_`
/// and `-`. A thread's recorded server list is checked with it, and so is the servers file.
pub fn valid_server_name(name: &str) -> bool {
    (1..=MAX_SERVER_NAME_LEN).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
}

/// A recorded or requested list of server names: each shaped like a server's name
/// (`[a-z0-9_-]{1,32}`), none twice. Whether they are configured is checked where the
/// configuration is known (an imported recording may come from a deployment with others).
pub fn check_server_names(names: &[String]) -> Result<(), String> {
    if let Some(bad) = names.iter().find(|name| !valid_server_name(name)) {
        return Err(format!(
            "`mcp_servers`: {bad:?} is not a server name (1 to 32 of a-z, 0-9, _ and -)"
        ));
    }
    check_server_names_repeat(names)
}

fn check_server_names_repeat(names: &[String]) -> Result<(), String> {
    match names
        .iter()
        .enumerate()
        .find(|(i, name)| names[..*i].contains(name))
    {
        Some((_, name)) => Err(format!(
            "`mcp_servers` names `{name}` twice: name each server once"
        )),
        None => Ok(()),
    }
}

impl Threads<'_> {
    /// Creates a thread with `title` (or the default one), owned by the actor; an id in use is
    /// [`WorkspaceError::ThreadExists`].
    pub async fn create(
        &self,
        id: &ThreadId,
        title: Option<&str>,
    ) -> Result<Thread, WorkspaceError> {
        let title = match title {
            Some(title) => checked_title(title)?,
            None => DEFAULT_THREAD_TITLE,
        };
        let mut repo = self.workspaces.db.begin_write().await?;
        let created = match repo.threads().create_thread(id, title).await {
            Ok(mut thread) => match self.workspaces.actor() {
                Some(actor) => repo.people().set_owner(id, Some(actor.id)).await.map(|()| {
                    thread.owner = Some(actor.name.clone());
                    thread
                }),
                None => Ok(thread),
            },
            Err(err) => Err(err),
        };
        match created {
            Ok(thread) => {
                repo.commit().await?;
                Ok(thread)
            }
            Err(err) => {
                let _ = repo.rollback().await;
                if err.is_unique_violation() {
                    Err(WorkspaceError::ThreadExists(id.to_string()))
                } else {
                    Err(err.into())
                }
            }
        }
    }

    /// Creates the thread unless it exists; whoever creates it first wins, and a concurrent
    /// creation by someone else is not an error. Returns whether this call created it.
    pub async fn ensure(&self, id: &ThreadId, title: &str) -> Result<bool, WorkspaceError> {
        match self.get(id).await {
            Ok(_) => return Ok(false),
            Err(WorkspaceError::UnknownThread(_)) => {}
            Err(err) => return Err(err),
        }
        match self.create(id, Some(title)).await {
            Ok(_) => Ok(true),
            Err(WorkspaceError::ThreadExists(_)) => Ok(false),
            Err(err) => Err(err),
        }
    }

    /// One thread.
    pub async fn get(&self, id: &ThreadId) -> Result<Thread, WorkspaceError> {
        let mut repo = self.workspaces.db.begin_read().await?;
        let thread = repo.threads().get_thread(id).await;
        let _ = repo.rollback().await;
        thread?.ok_or_else(|| WorkspaceError::UnknownThread(id.to_string()))
    }

    /// Every thread, most recently active first.
    pub async fn list(&self) -> Result<Vec<Thread>, WorkspaceError> {
        let mut repo = self.workspaces.db.begin_read().await?;
        let threads = repo.threads().list_threads().await;
        let _ = repo.rollback().await;
        Ok(threads?)
    }

    /// Applies a person's [`ThreadChange`] in one transaction, so a body naming a title, a mode
    /// and servers changes all or none. A new mode is a change of the workspace (a revision and
    /// a `workspace` event); a new title or choice of servers is not.
    pub async fn change(
        &self,
        id: &ThreadId,
        change: ThreadChange<'_>,
    ) -> Result<Thread, WorkspaceError> {
        if change.title.is_none() && change.document_mode.is_none() && change.mcp_servers.is_none()
        {
            return Err(WorkspaceError::Invalid(
                "the body names nothing to change: send `title`, `document_mode`, `mcp_servers` \
                 or several of them"
                    .to_string(),
            ));
        }
        let title = change.title.map(checked_title).transpose()?;
        let servers = change.mcp_servers.map(ServerChoice::checked).transpose()?;
        let mut edit = self.workspaces.edit(id, Source::User).await?;
        let outcome = async {
            if let Some(mode) = change.document_mode {
                edit.repo()
                    .suggestions()
                    .set_document_mode(id, mode)
                    .await?;
            }
            if let Some(servers) = servers
                && !edit.repo().threads().set_mcp_servers(id, servers).await?
            {
                return Err(WorkspaceError::UnknownThread(id.to_string()));
            }
            if let Some(title) = title
                && edit
                    .repo()
                    .threads()
                    .rename_thread(id, title)
                    .await?
                    .is_none()
            {
                return Err(WorkspaceError::UnknownThread(id.to_string()));
            }
            Ok(())
        }
        .await;
        self.workspaces
            .settle(edit, outcome, |()| match (change.document_mode, servers) {
                (Some(mode), _) => format!("switched the document to {} mode", mode.as_str()),
                (None, Some(_)) => "chose the thread's MCP servers".to_string(),
                (None, None) => "renamed the thread".to_string(),
            })
            .await?;
        self.get(id).await
    }

    /// Deletes a thread with its whole workspace, conversation and event log.
    pub async fn delete(&self, id: &ThreadId) -> Result<(), WorkspaceError> {
        let mut repo = self.workspaces.db.begin_write().await?;
        let deleted: Result<bool, StoreError> = repo.threads().delete_thread(id).await;
        match deleted {
            Ok(true) => {
                repo.commit().await?;
                Ok(())
            }
            Ok(false) => {
                let _ = repo.rollback().await;
                Err(WorkspaceError::UnknownThread(id.to_string()))
            }
            Err(err) => {
                let _ = repo.rollback().await;
                Err(err.into())
            }
        }
    }
}
