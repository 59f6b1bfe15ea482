//! [`PollingBus`]: live events that also carry changes made by *other processes* on the same
//! database — a separate `haico mcp`, a `haico chat`, another `haico serve` replica.
//!
//! Every durable event is in the thread's log before anyone is told about it, and subscribers
//! ([`subscribe`](super::subscribe)) read any gap back from the log. So telling a subscriber
//! "the log now ends at N" is enough for it to catch up. This bus delivers in-process events
//! exactly like [`InProcessBus`](super::InProcessBus), and a poller checks the event counters
//! (`event_seqs.last_seq`) of the threads that have live subscribers *in this process* every
//! [`DEFAULT_POLL_INTERVAL`]. When a counter moved past what this process last announced, the
//! poller reads the newest event of the thread and publishes it: a subscriber right behind
//! takes it as is, one further behind sees the gap and reads the rest from the log.
//!
//! The poll is one indexed query for all watched threads, plus one row per thread that moved;
//! nothing is read for threads nobody here follows. It works on SQLite and PostgreSQL alike;
//! changes made in this process are announced at once and never re-read by the poller.
//!
//! On PostgreSQL the replicas ring each other (a [`Ringer`], `replicas::Doorbell`): every commit published here
//! rings, and a ring heard goes to [`PollingBus::announce_moved`], which reads the same way the
//! poll does. While the doorbell is heard the poll slows to [`SAFETY_POLL_INTERVAL`], a net
//! under rings lost with a replica that died between its commit and its ring.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex, OnceLock, Weak},
    time::Duration,
};

use tokio::{sync::broadcast, task::JoinHandle};

use crate::{events::LiveEvent, events::bus::EventBus};
use haico_store::ThreadId;
use haico_store::{Database, StoreError};

/// What the bus asks of the doorbell the replicas ring each other with (`replicas::Doorbell`
/// implements it). A trait, so this layer does not depend on the replicas layer built on it.
pub trait Ringer: Send + Sync + std::fmt::Debug {
    /// Whether the other replicas' rings are heard now; the poll then slows down.
    fn hears_rings(&self) -> bool;
    /// Tells the other replicas that `thread` has events up to `seq`.
    fn ring_event(&self, thread: &str, seq: i64);
}

/// How often the poller looks for other processes' events: well inside the one second within
/// which a change must show up everywhere, and cheap (one indexed query per tick).
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_millis(250);

/// How often the poller still looks while the doorbell ([`Ringer`]) is heard: only a ring
/// lost with a replica that died right after its commit waits this long.
pub const SAFETY_POLL_INTERVAL: Duration = Duration::from_secs(2);

/// The longest one poll may take before it is given up (a healthy one takes a millisecond).
const POLL_TIMEOUT: Duration = Duration::from_secs(5);

/// How many events a slow subscriber may fall behind before it re-reads from the log.
const CHANNEL_CAPACITY: usize = 1024;

/// A thread's channel and the newest sequence number announced on it.
#[derive(Debug)]
struct Channel {
    sender: broadcast::Sender<Arc<LiveEvent>>,
    /// The newest event this process announced (or `None` before the poller first looked).
    announced: Option<i64>,
}

/// An [`EventBus`] that also announces events other processes logged. Build it with
/// [`PollingBus::new`] and start the poller with [`PollingBus::spawn_poller`].
#[derive(Debug)]
pub struct PollingBus {
    db: Database,
    channels: Mutex<HashMap<String, Channel>>,
    /// Rings the other replicas after each commit here, once wired (PostgreSQL only).
    doorbell: OnceLock<Box<dyn Ringer>>,
    /// Where rung events are read, once wired: the doorbell's own connections, so a ring is
    /// not queued behind every request waiting for the main pool.
    ring_reader: OnceLock<Database>,
}

impl PollingBus {
    /// A bus over `db`; nothing from other processes arrives until the poller runs.
    pub fn new(db: Database) -> Arc<Self> {
        Arc::new(Self {
            db,
            channels: Mutex::new(HashMap::new()),
            doorbell: OnceLock::new(),
            ring_reader: OnceLock::new(),
        })
    }

    /// Reads what rings announce through `db` instead of the main pool. Set once.
    pub fn read_rings_with(&self, db: Database) {
        let _ = self.ring_reader.set(db);
    }

    /// Rings `doorbell` after every commit published here, and polls only every
    /// [`SAFETY_POLL_INTERVAL`] while it hears the other replicas' rings. Set once.
    pub fn ring_with(&self, doorbell: impl Ringer + 'static) {
        let _ = self.doorbell.set(Box::new(doorbell));
    }

    /// Starts polling every `every`. The task ends by itself once the bus is dropped; abort the
    /// handle to stop it earlier (e.g. before closing the database).
    pub fn spawn_poller(self: &Arc<Self>, every: Duration) -> JoinHandle<()> {
        let bus: Weak<Self> = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(every);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            let mut failing = false;
            let mut last_poll = tokio::time::Instant::now();
            loop {
                ticks.tick().await;
                let Some(bus) = bus.upgrade() else {
                    return;
                };
                // While the doorbell is heard, polling is only the net under a lost ring.
                let listening = bus.doorbell.get().is_some_and(|d| d.hears_rings());
                if listening && last_poll.elapsed() < SAFETY_POLL_INTERVAL {
                    continue;
                }
                last_poll = tokio::time::Instant::now();
                // A poll stuck on a connection whose link was cut is abandoned, so the poller
                // keeps its rhythm and resumes once the database answers again.
                let poll = tokio::time::timeout(POLL_TIMEOUT, bus.poll_once())
                    .await
                    .unwrap_or_else(|_| {
                        Err(StoreError::NoAnswer {
                            target: "the database".to_string(),
                            after: format!("{} s", POLL_TIMEOUT.as_secs()),
                        })
                    });
                match poll {
                    Ok(_) if failing => {
                        failing = false;
                        tracing::info!("event poller reads the database again");
                    }
                    Ok(_) => {}
                    Err(err) if !failing => {
                        failing = true;
                        tracing::warn!(
                            error = %err,
                            "event poller cannot read the database; other processes' changes are \
                             delayed until it can"
                        );
                    }
                    Err(err) => {
                        tracing::debug!(error = %err, "event poll failed again");
                    }
                }
            }
        })
    }

    /// One round: finds the watched threads whose log moved away from what was announced here
    /// and publishes each one's newest event. Returns how many threads it announced.
    pub async fn poll_once(&self) -> Result<usize, StoreError> {
        let watched = self.watched();
        if watched.is_empty() {
            return Ok(0);
        }
        let ids: Vec<String> = watched.iter().map(|(id, _)| id.clone()).collect();
        let counters = self.db.last_event_seqs(&ids).await?;
        let moved: Vec<(String, i64)> = counters
            .into_iter()
            .filter(|(id, last)| {
                watched
                    .iter()
                    .any(|(w, announced)| w == id && *announced != Some(*last))
            })
            .collect();
        self.announce_from_log(moved, true).await
    }

    /// Announces what other replicas rang about: for each `(thread, seq)` whose thread has
    /// subscribers here and whose log moved past what was announced, the newest event is read
    /// and published (subscribers read any gap before it from the log). Returns how many
    /// threads it announced.
    pub async fn announce_moved(&self, rung: Vec<(String, i64)>) -> Result<usize, StoreError> {
        let watched = self.watched();
        let moved: Vec<(String, i64)> = rung
            .into_iter()
            .filter(|(id, seq)| {
                watched
                    .iter()
                    .any(|(w, announced)| w == id && announced.is_none_or(|a| a < *seq))
            })
            .collect();
        self.announce_from_log(moved, false).await
    }

    /// The database reads of announcements go through.
    fn reader(&self, rung: bool) -> &Database {
        match self.ring_reader.get() {
            Some(db) if rung => db,
            _ => &self.db,
        }
    }

    /// Reads the newest event of each moved thread and publishes it here. With `exact`, the
    /// sequence numbers are the logs' current ends (a poll) and are remembered as they are;
    /// else (a ring) only a number whose event was read moves what was announced forward.
    async fn announce_from_log(
        &self,
        moved: Vec<(String, i64)>,
        exact: bool,
    ) -> Result<usize, StoreError> {
        if moved.is_empty() {
            return Ok(0);
        }
        let mut repo = self.reader(!exact).begin_read().await?;
        let mut newest = Vec::with_capacity(moved.len());
        for (thread_id, last) in &moved {
            // Watched ids were thread ids when subscribed; text that is not one has no log.
            let Ok(thread) = ThreadId::parse(thread_id) else {
                continue;
            };
            if *last > 0
                && let Some(event) = repo
                    .events()
                    .events_after(&thread, last - 1, 1)
                    .await?
                    .into_iter()
                    .next()
            {
                newest.push((thread_id.clone(), event));
            }
        }
        repo.rollback().await?;
        let count = newest.len();
        let read: Vec<String> = newest.iter().map(|(id, _)| id.clone()).collect();
        for (thread_id, event) in newest {
            self.deliver(&thread_id, vec![Arc::new(LiveEvent::from(event))]);
        }
        // Remember exactly where each log stands: a log that went backwards (the thread was
        // deleted and made again) is followed from its new end. A publish that raced with this
        // read may be announced once more next round; subscribers skip what they have seen.
        if let Ok(mut channels) = self.channels.lock() {
            for (thread_id, last) in moved {
                if let Some(channel) = channels.get_mut(&thread_id) {
                    if exact {
                        channel.announced = Some(last);
                    } else if read.contains(&thread_id) {
                        channel.announced = Some(channel.announced.map_or(last, |a| a.max(last)));
                    }
                }
            }
        }
        Ok(count)
    }

    /// The threads with live subscribers and what was announced on each; drops the channels
    /// everybody left.
    fn watched(&self) -> Vec<(String, Option<i64>)> {
        let Ok(mut channels) = self.channels.lock() else {
            return Vec::new();
        };
        channels.retain(|_, channel| channel.sender.receiver_count() > 0);
        channels
            .iter()
            .map(|(id, channel)| (id.clone(), channel.announced))
            .collect()
    }
}

impl PollingBus {
    /// Hands events to this process's subscribers of the thread.
    fn deliver(&self, thread_id: &str, events: Vec<Arc<LiveEvent>>) {
        let Ok(mut channels) = self.channels.lock() else {
            return;
        };
        let Some(channel) = channels.get_mut(thread_id) else {
            return;
        };
        if channel.sender.receiver_count() == 0 {
            channels.remove(thread_id);
            return;
        }
        // Subscribers read anything before a published event back from the log, so once N is
        // announced the poller has nothing older to report.
        if let Some(newest) = events.iter().filter_map(|e| e.seq).max() {
            channel.announced = Some(channel.announced.map_or(newest, |a| a.max(newest)));
        }
        for event in events {
            // An error only means every receiver left meanwhile.
            let _ = channel.sender.send(event);
        }
    }
}

impl EventBus for PollingBus {
    fn publish(&self, thread_id: &str, events: Vec<Arc<LiveEvent>>) {
        // Committed here: the other replicas hear of it (transient events stay local).
        if let Some(doorbell) = self.doorbell.get()
            && let Some(newest) = events.iter().filter_map(|e| e.seq).max()
        {
            doorbell.ring_event(thread_id, newest);
        }
        self.deliver(thread_id, events);
    }

    fn subscribe(&self, thread_id: &str) -> broadcast::Receiver<Arc<LiveEvent>> {
        match self.channels.lock() {
            Ok(mut channels) => channels
                .entry(thread_id.to_string())
                .or_insert_with(|| Channel {
                    sender: broadcast::channel(CHANNEL_CAPACITY).0,
                    announced: None,
                })
                .sender
                .subscribe(),
            // A poisoned lock means a publisher panicked; hand out a quiet channel rather than
            // failing the request (subscribers still read the log on reconnect).
            Err(_) => broadcast::channel(1).1,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn publish_records_the_newest_announced_event() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite:{}", dir.path().join("poll.db").display());
        let db = Database::connect(&url, &Default::default()).await.unwrap();
        let bus = PollingBus::new(db);
        let mut rx = bus.subscribe("t");
        let event = |seq| {
            Arc::new(LiveEvent {
                seq: Some(seq),
                event: "workspace".into(),
                data: "{}".into(),
            })
        };
        bus.publish("t", vec![event(3), event(2)]);
        assert_eq!(bus.watched(), vec![("t".to_string(), Some(3))]);
        assert_eq!(rx.recv().await.ok().and_then(|e| e.seq), Some(3));
        drop(rx);
        assert!(bus.watched().is_empty());
    }

    #[tokio::test]
    async fn a_ring_moves_nothing_it_could_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite:{}", dir.path().join("ring.db").display());
        let db = Database::connect(&url, &Default::default()).await.unwrap();
        let bus = PollingBus::new(db);
        let _rx = bus.subscribe("t");
        // A ring about a log this database does not have (another deployment's, say): nothing
        // is read, so nothing is announced and the next poll still looks.
        assert_eq!(bus.announce_moved(vec![("t".into(), 40)]).await.unwrap(), 0);
        assert_eq!(bus.watched(), vec![("t".to_string(), None)]);
        // Threads nobody here follows are not even read.
        assert_eq!(
            bus.announce_moved(vec![("other".into(), 3)]).await.unwrap(),
            0
        );
    }
}
