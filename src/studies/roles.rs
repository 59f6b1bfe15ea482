//! Who may do what with a study: the roles ([`StudyRole`]) and the operations
//! ([`StudyOp`]), whose [`StudyOp::needs`] is the study's whole access rule.

use crate::studies::service::StudyError;

/// What a caller may do with a study, from least to most.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum StudyRole {
    /// Reads the study and its pseudonymised data.
    Viewer,
    /// Also changes and runs it.
    Editor,
    /// Also manages its members and deletes it.
    Owner,
}

/// What a caller asks to do with a study: the study's whole access rule is [`StudyOp::needs`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StudyOp {
    /// Read the study, its counts and its pseudonymised data.
    Read,
    /// Change its design, open and close it, recruit per condition, preview a condition.
    Change,
    /// See and change whom it is shared with.
    Share,
    /// Delete it with its sessions and their threads.
    Delete,
}

impl StudyOp {
    /// The least role that may do it.
    pub fn needs(self) -> StudyRole {
        match self {
            StudyOp::Read => StudyRole::Viewer,
            StudyOp::Change => StudyRole::Editor,
            StudyOp::Share | StudyOp::Delete => StudyRole::Owner,
        }
    }
}

impl StudyRole {
    /// Whether this role may do `op`.
    pub fn may(self, op: StudyOp) -> bool {
        self >= op.needs()
    }

    /// The role's name as the API spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            StudyRole::Viewer => "viewer",
            StudyRole::Editor => "editor",
            StudyRole::Owner => "owner",
        }
    }

    /// Why someone with this role may not do what needs `need` (which is more).
    pub(super) fn refusal(self, need: StudyRole) -> StudyError {
        StudyError::Forbidden(match need {
            StudyRole::Owner => "only the study's owner (or an administrator) may do this".into(),
            _ => "you may read this study but not change it: ask its owner to add you as an \
                  editor"
                .into(),
        })
    }
}
