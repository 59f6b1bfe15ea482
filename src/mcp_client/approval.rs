//! Calls waiting for the person's approval (SPEC §13): a server marked `"approval": "always"`
//! has every call of its tools held here until an editor decides, the turn is cancelled, or
//! the approval timeout passes.
//!
//! The database keeps the requests and the decisions (`Workspaces::record_approval` and
//! friends), so a decision made on any replica reaches the turn; this is the fast path inside
//! the process that runs the turn: a decision made here wakes the turn at once, while a turn
//! whose decision was made elsewhere reads it from the database. Nothing here holds a lock
//! across an await: the turn waits on a oneshot channel, and the map is only touched to add,
//! list or take an entry.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

use tokio::sync::oneshot;

pub use crate::workspace::ApprovalRequest;

/// Default wait for a person's decision (`HAICO_APPROVAL_TIMEOUT_SECS`): five minutes, long
/// enough to read a request and its arguments after a notification, short enough that a
/// forgotten request does not keep the thread's turn (and its other callers) waiting.
pub const DEFAULT_APPROVAL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(300);

/// How a request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// An editor approved it: the call is made.
    Approved,
    /// An editor declined it.
    Declined,
    /// No one decided within the approval timeout: declined.
    TimedOut,
    /// The turn was cancelled while it waited.
    Cancelled,
}

impl Decision {
    /// The word the `approval` event's `status` carries.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Approved => "approved",
            Decision::Declined => "declined",
            Decision::TimedOut => "timed_out",
            Decision::Cancelled => "cancelled",
        }
    }
}

type Key = (String, String);

struct Waiting {
    request: ApprovalRequest,
    answer: oneshot::Sender<bool>,
}

/// The calls waiting in this process, by thread and call id.
#[derive(Default)]
pub struct Approvals {
    waiting: Arc<Mutex<HashMap<Key, Waiting>>>,
}

impl std::fmt::Debug for Approvals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Approvals").finish_non_exhaustive()
    }
}

/// A request held for a turn: its answer, and its place in the map, taken back when it is
/// dropped (decided, timed out or cancelled alike), so nothing outlives the wait.
pub struct Pending {
    key: Key,
    answer: oneshot::Receiver<bool>,
    waiting: Arc<Mutex<HashMap<Key, Waiting>>>,
}

impl Pending {
    /// Waits for an editor's answer: `true` to approve. A request whose entry went away
    /// without an answer counts as declined.
    pub async fn answer(&mut self) -> bool {
        (&mut self.answer).await.unwrap_or(false)
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if let Ok(mut waiting) = self.waiting.lock() {
            waiting.remove(&self.key);
        }
    }
}

impl Approvals {
    /// Holds `request` on `thread` until it is answered or the returned [`Pending`] dropped.
    pub fn ask(&self, thread: &str, request: ApprovalRequest) -> Pending {
        let key = (thread.to_string(), request.call_id.clone());
        let (tx, rx) = oneshot::channel();
        if let Ok(mut waiting) = self.waiting.lock() {
            waiting.insert(
                key.clone(),
                Waiting {
                    request,
                    answer: tx,
                },
            );
        }
        Pending {
            key,
            answer: rx,
            waiting: Arc::clone(&self.waiting),
        }
    }

    /// The calls waiting on `thread`, oldest turn and call first.
    pub fn waiting(&self, thread: &str) -> Vec<ApprovalRequest> {
        let mut list: Vec<ApprovalRequest> = match self.waiting.lock() {
            Ok(waiting) => waiting
                .iter()
                .filter(|((t, _), _)| t == thread)
                .map(|(_, w)| w.request.clone())
                .collect(),
            Err(_) => Vec::new(),
        };
        list.sort_by(|a, b| {
            (a.turn_index, a.call_id.len(), &a.call_id).cmp(&(
                b.turn_index,
                b.call_id.len(),
                &b.call_id,
            ))
        });
        list
    }

    /// Answers the call `call_id` on `thread`; `false` when no such call is waiting (unknown,
    /// already decided, or its turn gave up).
    pub fn decide(&self, thread: &str, call_id: &str, approve: bool) -> bool {
        let taken = match self.waiting.lock() {
            Ok(mut waiting) => waiting.remove(&(thread.to_string(), call_id.to_string())),
            Err(_) => None,
        };
        match taken {
            Some(waiting) => waiting.answer.send(approve).is_ok(),
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(call_id: &str) -> ApprovalRequest {
        ApprovalRequest {
            call_id: call_id.into(),
            tool: "s__t".into(),
            arguments: serde_json::json!({}),
            action_and_reasoning: "why".into(),
            turn_index: 1,
        }
    }

    #[tokio::test]
    async fn a_request_is_listed_until_decided_once() {
        let approvals = Approvals::default();
        let mut pending = approvals.ask("t", request("1-2"));
        assert_eq!(approvals.waiting("t"), vec![request("1-2")]);
        assert!(approvals.waiting("u").is_empty());
        assert!(!approvals.decide("u", "1-2", true), "another thread's call");
        assert!(approvals.decide("t", "1-2", true));
        assert!(!approvals.decide("t", "1-2", false), "already decided");
        assert!(pending.answer().await);
        assert!(approvals.waiting("t").is_empty());
    }

    #[test]
    fn a_dropped_request_is_no_longer_waiting() {
        let approvals = Approvals::default();
        drop(approvals.ask("t", request("1-1")));
        assert!(approvals.waiting("t").is_empty());
        assert!(!approvals.decide("t", "1-1", true));
    }
}
