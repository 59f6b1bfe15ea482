//! A subscriber's view of a thread: the events after the one it last saw, then live ones, in
//! sequence order, without gaps or repeats.

use std::{collections::VecDeque, sync::Arc};

use futures::Stream;
use tokio::sync::broadcast::{self, error::RecvError};

use super::{LiveEvent, SharedBus};
use haico_store::ThreadId;
use haico_store::{Database, StoreError};

/// How many events one catch-up read fetches.
const CATCH_UP_BATCH: i64 = 500;

/// A subscription could not keep up with the log because the database failed.
#[derive(Debug, thiserror::Error)]
#[error("reading the thread's events: {0}")]
pub struct SubscribeError(#[from] pub StoreError);

/// The thread's latest event number (0 before its first event): where a subscription that
/// wants only what happens from now on starts.
pub async fn last_seq(db: &Database, thread_id: &ThreadId) -> Result<i64, StoreError> {
    let mut repo = db.begin_read().await?;
    let last = repo.events().last_event_seq(thread_id).await;
    let _ = repo.rollback().await;
    last
}

struct Cursor {
    db: Database,
    thread_id: ThreadId,
    rx: broadcast::Receiver<Arc<LiveEvent>>,
    last: i64,
    pending: VecDeque<Arc<LiveEvent>>,
    failed: bool,
}

impl Cursor {
    /// Reads every logged event after `last` into `pending`.
    async fn catch_up(&mut self) -> Result<(), StoreError> {
        loop {
            let mut repo = self.db.begin_read().await?;
            let batch = repo
                .events()
                .events_after(&self.thread_id, self.last, CATCH_UP_BATCH)
                .await?;
            repo.rollback().await?;
            let full = i64::try_from(batch.len()).unwrap_or(0) == CATCH_UP_BATCH;
            for event in batch {
                self.last = event.seq;
                self.pending.push_back(Arc::new(LiveEvent::from(event)));
            }
            if !full {
                return Ok(());
            }
        }
    }

    async fn next(&mut self) -> Option<Result<Arc<LiveEvent>, SubscribeError>> {
        if self.failed {
            return None;
        }
        loop {
            if let Some(event) = self.pending.pop_front() {
                return Some(Ok(event));
            }
            let result = match self.rx.recv().await {
                Ok(event) => match event.seq {
                    None => return Some(Ok(event)),
                    Some(seq) if seq <= self.last => continue,
                    Some(seq) if seq == self.last + 1 => {
                        self.last = seq;
                        return Some(Ok(event));
                    }
                    // A gap: an earlier commit's notification is late or was lost.
                    Some(_) => self.catch_up().await,
                },
                Err(RecvError::Lagged(_)) => self.catch_up().await,
                Err(RecvError::Closed) => return None,
            };
            if let Err(err) = result {
                self.failed = true;
                return Some(Err(SubscribeError(err)));
            }
        }
    }
}

/// Follows a thread's events. With `last_seen` (a client's `Last-Event-ID`) it first replays
/// everything logged after it; without, it starts at the present. A `last_seen` beyond the
/// log's end (the thread was deleted and made again) replays the whole log.
pub async fn subscribe(
    db: Database,
    bus: SharedBus,
    thread_id: &ThreadId,
    last_seen: Option<i64>,
) -> Result<impl Stream<Item = Result<Arc<LiveEvent>, SubscribeError>> + Send + use<>, SubscribeError>
{
    // Subscribe before reading the log, so nothing committed in between is missed.
    let rx = bus.subscribe(thread_id.as_str());
    let mut repo = db.begin_read().await?;
    let current = repo.events().last_event_seq(thread_id).await?;
    repo.rollback().await?;
    let last = match last_seen {
        Some(seen) if seen >= 0 && seen <= current => seen,
        Some(_) => 0,
        None => current,
    };
    let mut cursor = Cursor {
        db,
        thread_id: thread_id.clone(),
        rx,
        last,
        pending: VecDeque::new(),
        failed: false,
    };
    if last < current {
        cursor.catch_up().await?;
    }
    Ok(futures::stream::unfold(cursor, |mut cursor| async move {
        cursor.next().await.map(|item| (item, cursor))
    }))
}
