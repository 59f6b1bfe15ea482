//! A study's participant as the rest of the server sees one: who its changes are attributed
//! to and what it may reach. The study rules themselves (when it may write, what it sees) are
//! the adapters' `studies` module's.

use chrono::{DateTime, Utc};

use haico_store::ThreadId;

/// A participant, as a request's token says: its session and what its condition lets it reach.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Participant {
    /// The session's pseudonymous reference.
    pub session_ref: String,
    /// Its study.
    pub study_id: String,
    /// Its study's owner (the owner of its thread).
    pub owner_id: Option<i64>,
    /// Its thread, once assigned.
    pub thread: Option<ThreadId>,
    /// The session's status.
    pub status: haico_store::SessionStatus,
    /// When its time is up.
    pub deadline: Option<DateTime<Utc>>,
    /// The panels its condition shows.
    pub panels: Vec<String>,
}

impl Participant {
    /// The name its changes are attributed to.
    pub fn attribution(&self) -> String {
        format!("participant:{}", self.session_ref)
    }
}
