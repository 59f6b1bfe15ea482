//! The one access rule: [`may`]`(principal, access, op)` says whether a caller may do an
//! [`Op`], and if not, the one [`Refusal`] every adapter answers for it. REST (through the
//! `Authorized<…>` extractors of `http/guards`), MCP (per tool call) and every stream (through
//! [`People::access_lost`]) ask this function, so they cannot disagree.
//!
//! The rule, in one table ([`Op::needs`]): anyone signed in may use the server (list and make
//! threads, read the tool list); administrators manage accounts and see metrics; on a thread, a
//! viewer reads everything of it (the read-only tools included: they read what the REST routes
//! already show them), an editor also chats, calls the tools that write and edits, and the
//! owner also shares and deletes it. Administrators (and one-person mode) may do everything.
//! Someone who may not see a thread is told it does not exist.

use crate::people::{
    remembered::ACCESS_RECHECK,
    service::{Access, People, PeopleError, Principal},
};
use haico_store::ThreadId;

/// What a caller asks to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Anything anyone signed in may do: list and make threads, import, read the tool list,
    /// render Markdown, say who they are.
    UseServer,
    /// Manage accounts, read the server's metrics.
    Administer,
    /// Read a thread: its workspace, history, conversation, events, exports; fork it.
    Read,
    /// Call one tool on a thread, on the agent path (REST's tools endpoint or MCP).
    CallTool(ToolUse),
    /// Start or cancel an agent turn.
    Chat,
    /// Change the thread on the user path: panels, title, restore, undo a turn.
    Edit,
    /// Say whom the thread is shared with.
    Share,
    /// Delete the thread.
    Delete,
}

/// Whether a tool only reads the workspace or may change it (its `read_only` declaration).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolUse {
    /// The tool only reads (a `View`).
    Reads,
    /// The tool may change the workspace (an `Edit`).
    Writes,
}

impl ToolUse {
    /// The use of a tool declared `read_only` or not.
    pub fn of(read_only: bool) -> Self {
        if read_only { Self::Reads } else { Self::Writes }
    }
}

/// Whom an [`Op`] is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// Anyone who says who they are.
    SignedIn,
    /// An administrator.
    Admin,
    /// At least this access to the thread.
    Thread(Access),
}

impl Op {
    /// Whom the operation is for: the whole rule, in one place.
    pub fn needs(self) -> Need {
        match self {
            Op::UseServer => Need::SignedIn,
            Op::Administer => Need::Admin,
            Op::Read | Op::CallTool(ToolUse::Reads) => Need::Thread(Access::Viewer),
            Op::CallTool(ToolUse::Writes) | Op::Chat | Op::Edit => Need::Thread(Access::Editor),
            Op::Share | Op::Delete => Need::Thread(Access::Owner),
        }
    }

    /// Whether the operation concerns one thread (so the caller's access to it counts).
    pub fn on_thread(self) -> bool {
        matches!(self.needs(), Need::Thread(_))
    }
}

/// Why a caller may not do what it asks; each case has one text, the same on every adapter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// Nobody signed in (HTTP `401`).
    #[error(
        "sign in first, or send `Authorization: Bearer <token>` (a personal token, or the \
         server's HAICO_API_TOKEN)"
    )]
    SignIn,
    /// The thread does not exist for this caller, exactly as if it did not exist (HTTP `404`;
    /// the adapter words it as it words a thread that does not exist).
    #[error("the thread does not exist")]
    NoThread,
    /// Only an administrator may do this (HTTP `403`).
    #[error(
        "only an administrator may do this (the HAICO_API_TOKEN holder, or an account made with \
         --admin)"
    )]
    AdminOnly,
    /// A viewer asked to change the thread (HTTP `403`).
    #[error(
        "you may read this thread but not change it: ask its owner to share it with you as an \
         editor"
    )]
    ReadOnly,
    /// Someone other than the owner asked to share or delete it (HTTP `403`).
    #[error("only the thread's owner (or an administrator) may do this")]
    OwnerOnly,
}

/// Whether `principal`, whose access to the operation's thread is `access` (ignored for an
/// operation on no thread), may do `op`.
pub fn may(principal: &Principal, access: Access, op: Op) -> Result<(), Refusal> {
    if *principal == Principal::Anonymous {
        return Err(Refusal::SignIn);
    }
    // A participant's own thread is let in by the HTTP layer's participant rule
    // (`studies::access`); everywhere else (MCP, other threads, the server's routes) it is
    // nobody, told that what it asks for does not exist.
    if matches!(principal, Principal::Participant(_)) {
        return Err(Refusal::NoThread);
    }
    if principal.is_admin() {
        return Ok(());
    }
    permits(access, op)
}

/// Whether a signed-in caller with `access` to the thread may do `op`: the part of [`may`]
/// an adapter that resolved the caller's access already (MCP, per session) asks.
pub fn permits(access: Access, op: Op) -> Result<(), Refusal> {
    match op.needs() {
        Need::SignedIn => Ok(()),
        // Administrators were let through by `may`; `permits` alone knows only the thread.
        Need::Admin => Err(Refusal::AdminOnly),
        Need::Thread(_) if access == Access::None => Err(Refusal::NoThread),
        Need::Thread(need) if access >= need => Ok(()),
        Need::Thread(Access::Owner) => Err(Refusal::OwnerOnly),
        Need::Thread(_) => Err(Refusal::ReadOnly),
    }
}

impl People {
    /// Whether `principal` may do `op`, on `thread` when the operation concerns one. Only a
    /// signed-in person who is not an administrator costs a database read (one, for the
    /// thread's owner and their role); an administrator is let through to threads that do not
    /// exist, which the handler then answers for.
    pub async fn may(
        &self,
        principal: &Principal,
        thread: Option<&ThreadId>,
        op: Op,
    ) -> Result<Result<(), Refusal>, PeopleError> {
        self.decide(principal, thread, op, true).await
    }

    /// [`Self::may`], with the caller's access recalled from what this process remembers
    /// (`recall`) or read afresh (`remembered.rs`).
    async fn decide(
        &self,
        principal: &Principal,
        thread: Option<&ThreadId>,
        op: Op,
        recall: bool,
    ) -> Result<Result<(), Refusal>, PeopleError> {
        let access = match (principal, thread) {
            (Principal::User(_), Some(thread)) if op.on_thread() && !principal.is_admin() => self
                .read_access(principal, thread, recall)
                .await?
                .unwrap_or(Access::None),
            _ => Access::None,
        };
        Ok(may(principal, access, op))
    }

    /// Resolves once `principal` may no longer read `thread` (it was unshared, the account
    /// removed or its role changed), so an open stream — REST's events, a chat turn's answer,
    /// MCP notifications — does not outlive the access it was opened with. Asked again at once
    /// when this process changes sharing or accounts or hears that another did (the doorbell,
    /// on PostgreSQL), and every [`ACCESS_RECHECK`] for changes it was not told about. Never
    /// resolves for one-person mode and the administrator's token.
    pub async fn access_lost(self, principal: Principal, thread: ThreadId) {
        let Principal::User(opened_by) = principal else {
            return std::future::pending().await;
        };
        loop {
            let changed = self.sharing.notified();
            tokio::select! {
                () = tokio::time::sleep(ACCESS_RECHECK) => {}
                () = changed => {}
            }
            // The account as it is now, not as it was when the stream opened: a removed
            // account, or an administrator made a member again, must not keep what it had.
            let now = match self.user_named(&opened_by.name).await {
                Ok(Some(user)) if user.id == opened_by.id => user,
                Ok(_) => return,
                // The database is away: keep the stream, which fails by itself if it stays away.
                Err(_) => continue,
            };
            // Read afresh: a remembered answer would hide a change nobody rang for.
            if let Ok(Err(_)) = self
                .decide(&Principal::User(now), Some(&thread), Op::Read, false)
                .await
            {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use haico_store::User;

    fn person(role: &str) -> Principal {
        Principal::User(User {
            id: 7,
            name: "ann".to_string(),
            role: role.to_string(),
            created_at: chrono::Utc::now(),
        })
    }

    const OPS: [Op; 9] = [
        Op::UseServer,
        Op::Administer,
        Op::Read,
        Op::CallTool(ToolUse::Reads),
        Op::CallTool(ToolUse::Writes),
        Op::Chat,
        Op::Edit,
        Op::Share,
        Op::Delete,
    ];

    /// The expected answer for a member with `access`, per operation, in the order of `OPS`.
    fn member_row(access: Access) -> [Result<(), Refusal>; 9] {
        use Refusal::*;
        let admin = Err(AdminOnly);
        match access {
            Access::None => [
                Ok(()),
                admin,
                Err(NoThread),
                Err(NoThread),
                Err(NoThread),
                Err(NoThread),
                Err(NoThread),
                Err(NoThread),
                Err(NoThread),
            ],
            Access::Viewer => [
                Ok(()),
                admin,
                Ok(()),
                Ok(()),
                Err(ReadOnly),
                Err(ReadOnly),
                Err(ReadOnly),
                Err(OwnerOnly),
                Err(OwnerOnly),
            ],
            Access::Editor => [
                Ok(()),
                admin,
                Ok(()),
                Ok(()),
                Ok(()),
                Ok(()),
                Ok(()),
                Err(OwnerOnly),
                Err(OwnerOnly),
            ],
            Access::Owner => [
                Ok(()),
                admin,
                Ok(()),
                Ok(()),
                Ok(()),
                Ok(()),
                Ok(()),
                Ok(()),
                Ok(()),
            ],
        }
    }

    #[test]
    fn members_may_what_their_access_allows() {
        for access in [Access::None, Access::Viewer, Access::Editor, Access::Owner] {
            for (op, expected) in OPS.into_iter().zip(member_row(access)) {
                assert_eq!(
                    may(&person("member"), access, op),
                    expected,
                    "{access:?} {op:?}"
                );
            }
        }
    }

    #[test]
    fn administrators_may_everything_and_nobody_nothing() {
        for admin in [Principal::Local, Principal::AdminToken, person("admin")] {
            for op in OPS {
                assert_eq!(may(&admin, Access::None, op), Ok(()), "{admin:?} {op:?}");
            }
        }
        for access in [Access::None, Access::Owner] {
            for op in OPS {
                assert_eq!(
                    may(&Principal::Anonymous, access, op),
                    Err(Refusal::SignIn),
                    "{op:?}"
                );
            }
        }
    }

    #[test]
    fn a_refusal_has_one_text_per_case() {
        assert!(Refusal::ReadOnly.to_string().contains("editor"));
        assert!(Refusal::OwnerOnly.to_string().contains("owner"));
        assert!(Refusal::AdminOnly.to_string().contains("administrator"));
        assert!(Refusal::SignIn.to_string().contains("Bearer"));
    }

    #[test]
    fn only_thread_operations_look_at_the_thread() {
        assert!(!Op::UseServer.on_thread() && !Op::Administer.on_thread());
        assert!(OPS[2..].iter().all(|op| op.on_thread()));
    }
}
