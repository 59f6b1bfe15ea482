//! An account and a thread's member as the REST API answers them.

use chrono::{DateTime, Utc};
use serde::Serialize;

use haico_store as store;

/// An account.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct User {
    /// Its id.
    pub id: i64,
    /// The name people sign in and share with (unique).
    pub name: String,
    /// `admin` or `member`.
    pub role: String,
    /// When it was made.
    pub created_at: DateTime<Utc>,
}

impl From<store::User> for User {
    fn from(u: store::User) -> Self {
        User {
            id: u.id,
            name: u.name,
            role: u.role,
            created_at: u.created_at,
        }
    }
}

/// A thread's member.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct Member {
    /// The person's name.
    pub name: String,
    /// `owner`, `editor` or `viewer`.
    pub role: String,
}

impl From<store::Member> for Member {
    fn from(m: store::Member) -> Self {
        Member {
            name: m.name,
            role: m.role,
        }
    }
}
