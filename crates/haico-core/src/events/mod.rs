//! Live events: what happens on a thread, announced to every open client.
//!
//! Durable events (workspace changes, artifacts, tool calls, messages) are first appended to
//! the thread's log in the transaction that made the change, then published on an
//! [`EventBus`] after the commit; both happen in the workspace's one commit path
//! ([`crate::workspace::Edit::commit`]), which also decides what each event says. Subscribers ([`subscribe`]) use the bus only as a
//! wake-up with the payload attached: they follow the log's sequence numbers and read any gap
//! back from the database, so a late, reordered or missed notification never loses an event.
//! Streamed answer tokens are transient: published, never stored.

mod bus;
mod poll;
mod subscribe;

pub use bus::{EventBus, InProcessBus};
pub use poll::{DEFAULT_POLL_INTERVAL, PollingBus, Ringer};
pub use subscribe::{SubscribeError, last_seq, subscribe};

use std::sync::Arc;

use haico_store::StoredEvent;

/// One event as subscribers receive it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveEvent {
    /// The per-thread sequence number; `None` for transient events (tokens).
    pub seq: Option<i64>,
    /// The SSE `event:` name.
    pub event: String,
    /// The JSON data.
    pub data: String,
}

impl LiveEvent {
    /// A transient event: delivered live, never stored, no sequence number.
    pub fn transient(event: &str, data: String) -> Self {
        Self {
            seq: None,
            event: event.to_string(),
            data,
        }
    }
}

impl From<StoredEvent> for LiveEvent {
    fn from(event: StoredEvent) -> Self {
        Self {
            seq: Some(event.seq),
            event: event.event,
            data: event.data,
        }
    }
}

/// Shared handle to the process's bus.
pub type SharedBus = Arc<dyn EventBus>;
