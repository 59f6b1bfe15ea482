//! People: accounts, sign-in, who may see and change which thread.
//!
//! haico is one person's tool until accounts exist or `HAICO_API_TOKEN` is set: then every
//! request acts as a [`Principal`] — the administrator (the token, or an admin account), a
//! person signed in (a personal token or a session cookie), or nobody. A thread belongs to the
//! person who made it and may be shared with others as `viewer` (reads everything) or `editor`
//! (also chats, calls tools and edits); owners and administrators manage who it is shared
//! with. For anyone else a thread does not exist. The rule itself is one function, [`may`]
//! (in `may.rs`); the HTTP layer asks it through the extractor each handler names
//! (`Authorized<Editor>`…, `http/guards`), MCP per tool call, and open streams through
//! [`People::access_lost`].
//!
//! A signed-in person's every request reads who they are and, on a thread, what they may do
//! with it before its own work starts. Each of those reads is one statement, so it runs
//! outside a transaction ([`Database::autocommit_read`]): on PostgreSQL a snapshot's `BEGIN`
//! and `ROLLBACK` would be two more round trips per read.

mod accounts;
mod may;
mod participant;
mod remembered;
mod secrets;
mod service;
mod sessions;
mod sharing;
mod throttle;

pub use accounts::checked_name;
pub use may::{Need, Op, Refusal, ToolUse, may, permits};
pub use participant::Participant;
pub use remembered::{ACCESS_RECHECK, PeopleBell};
pub use secrets::{TOKEN_PREFIX, digest};
pub use service::{
    Access, MAX_PASSWORD_CHARS, MIN_PASSWORD_CHARS, People, PeopleError, Principal, SESSION_DAYS,
};
pub use throttle::{AttemptKeys, FREE_ATTEMPTS, Throttle};
