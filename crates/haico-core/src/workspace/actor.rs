//! [`Actor`]: the person a change is made by, so every revision, message and new thread can
//! say who (`by`, the owner).
//!
//! The domain does not decide who may act; the HTTP layer and MCP do that with
//! [`crate::people`] before they hand over a [`Workspaces`](super::Workspaces) acting as the
//! caller. In one-person mode, and for the administrator's token, there is no actor: changes
//! are recorded without a `by` and new threads without an owner, exactly as before accounts.

/// A person with an account, acting on workspaces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor {
    /// The account's id (threads record their owner by it).
    pub id: i64,
    /// The account's name (revisions and messages record it, so they read the same after the
    /// account is gone).
    pub name: String,
}
