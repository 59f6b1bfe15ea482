//! How the doorbell is doing: one state for `/healthz`, `/metrics` and the poller's pace.

use std::sync::{
    Mutex,
    atomic::{AtomicU8, Ordering},
};

use serde::Serialize;

/// How the doorbell is doing, for `/healthz`, `/metrics` and the poller's pace.
#[derive(Debug, Default)]
pub struct DoorbellStatus {
    state: AtomicU8,
    reason: Mutex<String>,
}

/// The doorbell's state as `/healthz` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct DoorbellHealth {
    /// `listen` while other replicas' events arrive by `LISTEN/NOTIFY`, `poll` while they
    /// arrive only by polling the event log.
    pub mode: &'static str,
    /// Whether the mode is the one this replica wants (`false`: the listening connection is
    /// down, or `LISTEN` does not work here).
    pub ok: bool,
    /// Why not, and what it costs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

pub(super) const STARTING: u8 = 0;
pub(super) const LISTENING: u8 = 1;
pub(super) const DOWN: u8 = 2;
pub(super) const UNSUPPORTED: u8 = 3;
pub(super) const TURNED_OFF: u8 = 4;

impl DoorbellStatus {
    /// Whether rings are being heard right now.
    pub fn listening(&self) -> bool {
        self.state.load(Ordering::Acquire) == LISTENING
    }

    /// The state for `/healthz`.
    pub fn health(&self) -> DoorbellHealth {
        let reason = self.reason.lock().map(|r| r.clone()).unwrap_or_default();
        match self.state.load(Ordering::Acquire) {
            LISTENING => DoorbellHealth {
                mode: "listen",
                ok: true,
                error: None,
            },
            // The operator's choice: polling is what was asked for.
            TURNED_OFF => DoorbellHealth {
                mode: "poll",
                ok: true,
                error: None,
            },
            STARTING => DoorbellHealth {
                mode: "poll",
                ok: false,
                error: Some("the LISTEN connection is being set up".to_string()),
            },
            _ => DoorbellHealth {
                mode: "poll",
                ok: false,
                error: Some(reason),
            },
        }
    }

    pub(super) fn set(&self, state: u8, reason: &str) {
        if let Ok(mut current) = self.reason.lock() {
            *current = reason.to_string();
        }
        self.state.store(state, Ordering::Release);
        crate::metrics::doorbell_listening(state == LISTENING);
    }
}
