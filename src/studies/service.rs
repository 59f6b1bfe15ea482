//! [`Studies`], the studies of one database, and what every part of a study shares: its
//! errors ([`StudyError`]), the participant's token and cookie names, and when a participant
//! may write.

use std::{
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant},
};

use base64::Engine as _;
use chrono::Utc;

use haico_store::{Database, SessionStatus, StoreError, StudyRow, ThreadId};

use haico_core::{workspace::WorkspaceError, workspace::Workspaces};

use crate::studies::design::{Design, DesignError};
use haico_core::people::Participant;

/// What every participant token starts with, so one is recognised (and never mistaken for a
/// personal token) before any lookup.
pub const PARTICIPANT_TOKEN_PREFIX: &str = "hsp_";
/// The participant page's cookie.
pub const PARTICIPANT_COOKIE: &str = "haico_participant";

/// What a participant's session records, in the words a consent form can show: the
/// participant page gets it with the consent text (`GET /api/participant`), and
/// `docs/STUDIES.md` repeats it. Each item names where it is kept, so a change of what is
/// recorded is a change of this list in the same module.
pub const RECORDED: &[&str] = &[
    "the study parameters your link carried that the study names (your platform id is replaced by a pseudonym in every export)",
    "when you entered, consented, started and finished, and which version of the task you had",
    "every message you send and every answer of the assistant",
    "every action of the assistant on the workspace, with its stated reason",
    "every change to the workspace, who made it and when",
    "how many words the language model read and wrote",
];

/// Why a study operation was refused.
#[derive(Debug, thiserror::Error)]
pub enum StudyError {
    /// A design field is invalid (HTTP `422`, naming its path).
    #[error(transparent)]
    Design(#[from] DesignError),
    /// The request is malformed: an unknown field, bad JSON (HTTP `400`).
    #[error("{0}")]
    BadRequest(String),
    /// A value breaks a rule (HTTP `422`).
    #[error("{0}")]
    Invalid(String),
    /// No such study or session, for this caller (HTTP `404`).
    #[error("{0}")]
    NotFound(String),
    /// The study is closed (HTTP `410`).
    #[error("this study is closed and takes no more participants")]
    Closed,
    /// The request conflicts with the study's or the session's state (HTTP `409`).
    #[error("{0}")]
    Conflict(String),
    /// No condition can take anyone (HTTP `409` with `status: "full"`).
    #[error("the study is full: no condition takes more participants")]
    Full,
    /// The session's time is up (HTTP `409`).
    #[error("time is up")]
    TimeIsUp,
    /// Finish before enough turns (HTTP `409` with `needs`).
    #[error("finish after {turns} more turn(s) with the assistant")]
    NeedsTurns {
        /// Turns still to make.
        turns: i64,
    },
    /// The caller may see the study but not do this (HTTP `403`).
    #[error("{0}")]
    Forbidden(String),
    /// The workspace refused a change.
    #[error(transparent)]
    Workspace(#[from] WorkspaceError),
    /// The database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Something inside failed (no randomness, a stored design that no longer reads).
    #[error("{0}")]
    Internal(String),
}

/// Why `participant` may not change its thread now, if it may not: before Start, after the end, or
/// past the deadline (which the clock may not have recorded yet).
pub fn write_refusal(participant: &Participant) -> Option<StudyError> {
    match participant.status {
        SessionStatus::Active if participant.deadline.is_some_and(|d| d <= Utc::now()) => {
            Some(StudyError::TimeIsUp)
        }
        SessionStatus::Active => None,
        SessionStatus::Assigned => Some(StudyError::Conflict(
            "press Start first: the task has not started".to_string(),
        )),
        SessionStatus::TimedOut => Some(StudyError::TimeIsUp),
        _ => Some(StudyError::Conflict(
            "this session has ended; nothing can be changed".to_string(),
        )),
    }
}

/// The studies of one database. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Studies {
    pub(super) db: Database,
    pub(super) workspaces: Workspaces,
    /// Whether sessions are known to exist (then a write to a thread asks whether it is a
    /// participant's); once they do, they do.
    pub(super) sessions: Arc<AtomicBool>,
    /// When the database was last asked, while none did.
    pub(super) last_check: Arc<Mutex<Option<Instant>>>,
}

/// How long a server without sessions trusts its last look (another replica may make one).
pub(super) const RECHECK: Duration = Duration::from_secs(1);

impl Studies {
    /// The studies over `workspaces`' database.
    pub fn new(workspaces: Workspaces) -> Self {
        Self {
            db: workspaces.database().clone(),
            workspaces,
            sessions: Arc::default(),
            last_check: Arc::default(),
        }
    }

    /// Whether `thread` is a participant's (researchers may read it, never change it). Costs
    /// nothing on a database that never had a session.
    pub async fn is_participant_thread(&self, thread: &ThreadId) -> Result<bool, StudyError> {
        if !self.sessions_exist().await? {
            return Ok(false);
        }
        let mut repo = self.db.autocommit_read().await?;
        let found = repo.studies().session_of_thread(thread.as_str()).await;
        let _ = repo.rollback().await;
        Ok(found?.is_some())
    }

    pub(super) async fn sessions_exist(&self) -> Result<bool, StudyError> {
        if self.sessions.load(Ordering::Relaxed) {
            return Ok(true);
        }
        {
            let Ok(mut last) = self.last_check.lock() else {
                return Ok(true);
            };
            if last.is_some_and(|at| at.elapsed() < RECHECK) {
                return Ok(false);
            }
            *last = Some(Instant::now());
        }
        let mut repo = self.db.autocommit_read().await?;
        let any = repo.studies().any_session().await;
        let _ = repo.rollback().await;
        let any = any?;
        if any {
            self.sessions.store(true, Ordering::Relaxed);
        }
        Ok(any)
    }

    /// Remembers that sessions exist now (this process made one).
    pub(super) fn sessions_made(&self) {
        self.sessions.store(true, Ordering::Relaxed);
    }

    /// The workspaces the sessions' threads live in.
    pub fn workspaces(&self) -> &Workspaces {
        &self.workspaces
    }
}

/// The design a stored study holds.
pub(super) fn design_of(row: &StudyRow) -> Result<Design, StudyError> {
    serde_json::from_str(&row.design)
        .map_err(|err| StudyError::Internal(format!("a stored design does not read: {err}")))
}

/// `n` random URL-safe characters.
pub(super) fn random_text(bytes: usize) -> Result<String, StudyError> {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf)
        .map_err(|err| StudyError::Internal(format!("no randomness from the system: {err}")))?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(buf))
}

/// A session reference: 8 lowercase letters and digits.
pub(super) fn new_session_ref() -> Result<String, StudyError> {
    const ALPHABET: &[u8] = b"abcdefghijkmnpqrstuvwxyz23456789";
    let mut buf = [0u8; 8];
    getrandom::fill(&mut buf)
        .map_err(|err| StudyError::Internal(format!("no randomness from the system: {err}")))?;
    Ok(buf
        .iter()
        .map(|b| char::from(ALPHABET[usize::from(*b) % ALPHABET.len()]))
        .collect())
}
