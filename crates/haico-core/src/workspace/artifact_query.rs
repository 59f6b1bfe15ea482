//! Which artifacts a list shows, for every adapter: [`ArtifactQuery`] can only be made by its
//! constructors, each with its limit.

use crate::workspace::{error::WorkspaceError, rules::check_length};

/// How many artifacts the agent's list shows when it names no limit.
pub const AGENT_LIST_DEFAULT: i64 = 20;
/// The most the agent's list shows whatever the limit (a larger one is taken as this).
pub const AGENT_LIST_MAX: i64 = 100;
/// How many artifacts the user path lists when no limit is given.
pub const LIST_DEFAULT: i64 = 50;
/// The largest limit the user path accepts, and the most a whole artifacts panel shows (MCP's
/// `artifacts` resource).
pub const LIST_MAX: i64 = 500;
/// The longest type filter of a list, in characters.
pub const MAX_ARTIFACT_TYPE_CHARS: usize = 100;
/// How many artifacts an index names one by one, newest first (MCP's `resources/list`; older
/// ones stay readable by id).
pub const INDEX_MAX: i64 = 100;

/// Which artifacts to list: optionally one type, at most `limit`, newest first. Made only by
/// the constructors below, so every adapter lists under the domain's limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArtifactQuery {
    /// Only this type; `None` for all.
    pub(super) artifact_type: Option<String>,
    /// At most this many.
    pub(super) limit: i64,
}

/// A blank type filter means no filter.
fn type_filter(artifact_type: Option<&str>) -> Result<Option<String>, WorkspaceError> {
    let filter = artifact_type
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_string);
    if let Some(filter) = &filter {
        check_length(filter, "artifact_type", MAX_ARTIFACT_TYPE_CHARS)?;
    }
    Ok(filter)
}

impl ArtifactQuery {
    /// The agent's list: [`AGENT_LIST_DEFAULT`] unless it asks, never more than
    /// [`AGENT_LIST_MAX`] (the prompt stays small); a limit below 1 is refused.
    pub fn for_agent(
        artifact_type: Option<&str>,
        limit: Option<i64>,
    ) -> Result<Self, WorkspaceError> {
        let limit = match limit {
            None => AGENT_LIST_DEFAULT,
            Some(n) if n >= 1 => n.min(AGENT_LIST_MAX),
            Some(n) => {
                return Err(WorkspaceError::invalid(format!(
                    "`limit` is {n}: give a number from 1 to {AGENT_LIST_MAX}, or leave it out"
                )));
            }
        };
        Ok(Self {
            artifact_type: type_filter(artifact_type)?,
            limit,
        })
    }

    /// The user path's list: [`LIST_DEFAULT`] unless asked, a limit from 1 to [`LIST_MAX`].
    pub fn for_user(
        artifact_type: Option<&str>,
        limit: Option<i64>,
    ) -> Result<Self, WorkspaceError> {
        let limit = match limit {
            None => LIST_DEFAULT,
            Some(n) if (1..=LIST_MAX).contains(&n) => n,
            Some(n) => {
                return Err(WorkspaceError::invalid(format!(
                    "`limit` is {n}: give a number from 1 to {LIST_MAX}, or leave it out for \
                     {LIST_DEFAULT}"
                )));
            }
        };
        Ok(Self {
            artifact_type: type_filter(artifact_type)?,
            limit,
        })
    }

    /// The newest artifacts for the agent's prompt: `count` of them, never more than the
    /// agent's own list shows ([`AGENT_LIST_MAX`]).
    pub fn for_prompt(count: usize) -> Self {
        Self {
            artifact_type: None,
            limit: i64::try_from(count).map_or(AGENT_LIST_MAX, |n| n.min(AGENT_LIST_MAX)),
        }
    }

    /// The newest artifacts an index names one by one ([`INDEX_MAX`]).
    pub fn index() -> Self {
        Self {
            artifact_type: None,
            limit: INDEX_MAX,
        }
    }

    /// The whole artifacts panel as a client reads it at once: the newest [`LIST_MAX`], the
    /// largest page the user path gives.
    pub fn panel() -> Self {
        Self {
            artifact_type: None,
            limit: LIST_MAX,
        }
    }

    /// The type asked for, if any (trimmed, never blank).
    pub fn artifact_type(&self) -> Option<&str> {
        self.artifact_type.as_deref()
    }

    /// The most artifacts the list shows.
    pub fn limit(&self) -> i64 {
        self.limit
    }
}
