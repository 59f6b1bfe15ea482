//! The notifier behind live events: a small interface with an in-process implementation.
//! A multi-replica deployment swaps in one that fans out through PostgreSQL LISTEN/NOTIFY;
//! subscribers do not change, because they treat notifications as hints and the log as truth.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

use tokio::sync::broadcast;

use super::LiveEvent;

/// How many events a slow subscriber may fall behind before it re-reads from the log.
const CHANNEL_CAPACITY: usize = 1024;

/// Publishes a thread's events to its live subscribers.
pub trait EventBus: Send + Sync + std::fmt::Debug {
    /// Delivers `events` (already committed, if durable) to the thread's subscribers.
    fn publish(&self, thread_id: &str, events: Vec<Arc<LiveEvent>>);
    /// A receiver of the thread's events from now on.
    fn subscribe(&self, thread_id: &str) -> broadcast::Receiver<Arc<LiveEvent>>;
}

/// One broadcast channel per thread with subscribers, in this process.
#[derive(Debug, Default)]
pub struct InProcessBus {
    channels: Mutex<HashMap<String, broadcast::Sender<Arc<LiveEvent>>>>,
}

impl InProcessBus {
    /// An empty bus.
    pub fn new() -> Self {
        Self::default()
    }
}

impl EventBus for InProcessBus {
    fn publish(&self, thread_id: &str, events: Vec<Arc<LiveEvent>>) {
        let Ok(mut channels) = self.channels.lock() else {
            return;
        };
        let Some(sender) = channels.get(thread_id) else {
            return;
        };
        if sender.receiver_count() == 0 {
            channels.remove(thread_id);
            return;
        }
        for event in events {
            // An error only means every receiver left meanwhile.
            let _ = sender.send(event);
        }
    }

    fn subscribe(&self, thread_id: &str) -> broadcast::Receiver<Arc<LiveEvent>> {
        match self.channels.lock() {
            Ok(mut channels) => channels
                .entry(thread_id.to_string())
                .or_insert_with(|| broadcast::channel(CHANNEL_CAPACITY).0)
                .subscribe(),
            // A poisoned lock means a publisher panicked; hand out a channel that stays quiet
            // rather than failing the request (subscribers still read the log on reconnect).
            Err(_) => broadcast::channel(1).1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn delivers_to_subscribers_of_the_thread_only() {
        let bus = InProcessBus::new();
        let mut a = bus.subscribe("a");
        let mut b = bus.subscribe("b");
        bus.publish(
            "a",
            vec![Arc::new(LiveEvent::transient("token", "{}".into()))],
        );
        let got = a.recv().await.map(|e| e.event.clone()).unwrap_or_default();
        assert_eq!(got, "token");
        assert!(b.try_recv().is_err());
    }
}
