//! The doorbell: PostgreSQL `LISTEN/NOTIFY` telling the other replicas that something
//! happened, never what.
//!
//! Every replica keeps one connection of its own, outside the pool, listening on the
//! schema's channel ([`CHANNEL_PREFIX`]). After a commit, the replica rings with the thread and
//! the newest sequence number (`e <thread> <seq>`); a cancel asked for a turn running elsewhere
//! rings with the thread (`c <thread>`); a change of accounts or sharing rings `u`, so that
//! every replica forgets who tokens are and who may do what (`people/remembered.rs`), `haico
//! user` included ([`announce_people_change`]). Rings are batched: whatever queued within a
//! few milliseconds of the first (and while the previous `pg_notify` was on the wire) goes out in one notification, a
//! thread's events coalesced to its newest number,
//! payloads kept far under PostgreSQL's 8000-byte limit. The ring is sent after the commit,
//! on a pool connection, so it adds nothing to the committing transaction and no lock to
//! commits (a `NOTIFY` inside the transaction would queue every commit behind the server's
//! one notification-queue lock).
//!
//! A ring is a hint. A listener hands `e` rings to the [`PollingBus`], which reads what it
//! announces from the event log; a lost ring (a replica that died between its commit and its
//! ring, a listener reconnecting) costs latency, never an event: the bus still polls, slowly
//! while the doorbell works and at full speed while it does not, and catches up at once after
//! a reconnect. A cancel is also recorded on the turn's row, which its owner reads at its next
//! lease renewal.
//!
//! Behind a transaction-mode pooler (PgBouncer and friends) `LISTEN` seems to work but hears
//! nothing, because the server connection goes back to the pooler's pool after each
//! statement. [`Doorbell::start`] therefore rings itself once and waits for the echo; without
//! it the replica says so in the log and stays with polling.

use std::{sync::Arc, time::Duration};

use sha2::Digest;
use sqlx::{
    PgPool,
    postgres::{PgListener, PgPoolOptions},
};
use tokio::{sync::mpsc, task::JoinHandle};

use crate::replicas::id::ReplicaId;
use haico_core::events::PollingBus;

mod status;
mod wire;

use status::{DOWN, LISTENING, TURNED_OFF, UNSUPPORTED};
pub use status::{DoorbellHealth, DoorbellStatus};
use wire::{Ring, parse, payloads};

/// The notification channel's prefix. Channels are per database, not per schema, so the
/// channel is named after the schema the tables live in (`haico_doorbell_public`): two
/// deployments in two schemas of one database do not hear each other.
pub const CHANNEL_PREFIX: &str = "haico_doorbell_";

/// The channel of the schema `pool` works in (PostgreSQL identifiers stop at 63 bytes; a
/// longer schema name is shortened to a digest of itself).
async fn channel_of(pool: &PgPool) -> String {
    let schema: String = sqlx::query_scalar("SELECT current_schema()")
        .fetch_one(pool)
        .await
        .unwrap_or_else(|_| "public".to_string());
    let name = format!("{CHANNEL_PREFIX}{schema}");
    if name.len() <= 63 {
        name
    } else {
        let digest = sha2::Sha256::digest(schema.as_bytes());
        let hex: String = digest.iter().take(16).map(|b| format!("{b:02x}")).collect();
        format!("{CHANNEL_PREFIX}{hex}")
    }
}

/// How long the start-up self-test waits for its own ring.
const ECHO_WITHIN: Duration = Duration::from_secs(3);

/// How long one `pg_notify` may take before the batch is dropped (the bus's poll catches up).
const RING_TIMEOUT: Duration = Duration::from_secs(5);

/// How long rings gather before they go out together: at most ~200 notifications a second per
/// replica whatever the commit rate (each one wakes every listening backend), for at most this
/// much added latency.
const RING_WINDOW: Duration = Duration::from_millis(5);

/// Pause before trying to listen again after the connection failed.
const RETRY_AFTER: Duration = Duration::from_secs(1);

/// Rings the other replicas; cheap to clone.
#[derive(Debug, Clone)]
pub struct Doorbell {
    out: mpsc::UnboundedSender<Ring>,
    status: Arc<DoorbellStatus>,
    /// Off with `HAICO_LISTEN_NOTIFY=off`: nobody listens, so nobody rings.
    ringing: bool,
}

/// Called with the thread of every cancel ring heard.
pub type OnCancel = Arc<dyn Fn(&str) + Send + Sync>;

/// Called when another process changed accounts or sharing, and after the listener
/// (re)connects, since rings may have been missed while it was down.
pub type OnPeople = Arc<dyn Fn() + Send + Sync>;

/// The doorbell's background tasks; abort them on shutdown.
#[derive(Debug)]
pub struct DoorbellTasks {
    ringer: JoinHandle<()>,
    listener: Option<JoinHandle<()>>,
}

impl DoorbellTasks {
    /// Stops ringing and listening.
    pub fn abort(&self) {
        self.ringer.abort();
        if let Some(listener) = &self.listener {
            listener.abort();
        }
    }
}

impl Doorbell {
    /// Starts ringing over `pool` and, with `listen`, listening on a connection of its own;
    /// events heard go to `bus`, cancels to `on_cancel`, changes of accounts or sharing to
    /// `on_people`. Returns once the listener is known
    /// to hear rings, or known not to (then the reason is logged and the bus keeps polling).
    /// Without `listen` (a process that runs no event streams, or `HAICO_LISTEN_NOTIFY=off`)
    /// it neither listens nor rings: the replicas poll the event log, and a cancel reaches
    /// another replica at its next lease renewal.
    pub async fn start(
        pool: PgPool,
        replica: &ReplicaId,
        bus: Arc<PollingBus>,
        on_cancel: OnCancel,
        on_people: OnPeople,
        listen: bool,
    ) -> (Self, DoorbellTasks) {
        let (out, rx) = mpsc::unbounded_channel();
        let status = Arc::new(DoorbellStatus::default());
        let channel: Arc<str> = Arc::from(channel_of(&pool).await);
        // Rings and the reads they cause go through two connections of the doorbell's own:
        // through the main pool they would wait behind every request (tens of ms under load).
        let side = side_pool(&pool);
        bus.read_rings_with(haico_store::Database::postgres(side.clone()));
        let ringer = tokio::spawn(ring_loop(side, Arc::clone(&channel), rx));
        let doorbell = Self {
            out,
            status: Arc::clone(&status),
            ringing: listen,
        };
        if !listen {
            status.set(
                TURNED_OFF,
                "LISTEN/NOTIFY is turned off (HAICO_LISTEN_NOTIFY=off): other replicas' events \
                 arrive by polling the event log every 250 ms",
            );
            return (
                doorbell,
                DoorbellTasks {
                    ringer,
                    listener: None,
                },
            );
        }
        let probe = format!("{replica}-{}", uuid::Uuid::new_v4().simple());
        let (echo_tx, echo_rx) = tokio::sync::oneshot::channel();
        let listener = tokio::spawn(listen_loop(
            Listening {
                pool,
                channel: Arc::clone(&channel),
                bus,
                on_cancel,
                on_people,
                status: Arc::clone(&status),
                probe,
                ring: doorbell.out.clone(),
            },
            echo_tx,
        ));
        // The self-test: the listener rings once it listens, and must hear itself.
        match tokio::time::timeout(ECHO_WITHIN, echo_rx).await {
            Ok(Ok(())) => {
                tracing::info!(
                    channel = %channel,
                    "listening for other replicas' events (LISTEN/NOTIFY)"
                );
            }
            _ => {
                let reason = "LISTEN hears nothing on this connection (is the database behind a \
                              transaction-mode pooler such as PgBouncer? Point \
                              HAICO_DATABASE_URL at PostgreSQL or a session-mode pool): other \
                              replicas' events arrive by polling the event log every 250 ms";
                tracing::warn!("{reason}");
                listener.abort();
                status.set(UNSUPPORTED, reason);
                return (
                    doorbell,
                    DoorbellTasks {
                        ringer,
                        listener: None,
                    },
                );
            }
        }
        (
            doorbell,
            DoorbellTasks {
                ringer,
                listener: Some(listener),
            },
        )
    }

    /// Tells the other replicas that `thread`'s log now ends at `seq`.
    pub fn ring_event(&self, thread: &str, seq: i64) {
        if !self.ringing {
            return;
        }
        let _ = self.out.send(Ring::Event {
            thread: thread.to_string(),
            seq,
        });
    }

    /// Asks whichever replica runs `thread`'s turn to stop it.
    pub fn ring_cancel(&self, thread: &str) {
        if !self.ringing {
            return;
        }
        let _ = self.out.send(Ring::Cancel {
            thread: thread.to_string(),
        });
    }

    /// How the listening side is doing.
    pub fn status(&self) -> &Arc<DoorbellStatus> {
        &self.status
    }
}

impl haico_core::people::PeopleBell for Doorbell {
    fn hears_changes(&self) -> bool {
        self.ringing && self.status.listening()
    }

    fn announce_change(&self) {
        if self.ringing {
            let _ = self.out.send(Ring::People);
        }
    }
}

/// Tells every listening replica that accounts or sharing changed, from a process that keeps
/// no doorbell (`haico user`). A failure is only logged: the replicas forget what they
/// remember within [`crate::people::ACCESS_RECHECK`] anyway.
pub async fn announce_people_change(pool: &PgPool) {
    let channel = channel_of(pool).await;
    if !matches!(notify(pool, &channel, "u").await, Ok(Ok(_))) {
        tracing::warn!(
            "could not tell the running servers that accounts changed; they notice within {} s",
            haico_core::people::ACCESS_RECHECK.as_secs()
        );
    }
}

/// Sends one notification on `channel`, within [`RING_TIMEOUT`].
async fn notify(
    pool: &PgPool,
    channel: &str,
    payload: &str,
) -> Result<Result<sqlx::postgres::PgQueryResult, sqlx::Error>, tokio::time::error::Elapsed> {
    tokio::time::timeout(
        RING_TIMEOUT,
        sqlx::query("SELECT pg_notify($1, $2)")
            .bind(channel)
            .bind(payload)
            .execute(pool),
    )
    .await
}

impl haico_core::events::Ringer for Doorbell {
    fn hears_rings(&self) -> bool {
        self.status.listening()
    }

    fn ring_event(&self, thread: &str, seq: i64) {
        Doorbell::ring_event(self, thread, seq);
    }
}

/// Sends what queued, in as few notifications as fit.
async fn ring_loop(pool: PgPool, channel: Arc<str>, mut rx: mpsc::UnboundedReceiver<Ring>) {
    let mut failing = false;
    while let Some(first) = rx.recv().await {
        tokio::time::sleep(RING_WINDOW).await;
        let mut rings = vec![first];
        while rings.len() < 10_000
            && let Ok(next) = rx.try_recv()
        {
            rings.push(next);
        }
        for payload in payloads(rings) {
            match notify(&pool, &channel, &payload).await {
                Ok(Ok(_)) if failing => {
                    failing = false;
                    tracing::info!("the doorbell rings again");
                }
                Ok(Ok(_)) => {}
                Ok(Err(err)) if !failing => {
                    failing = true;
                    tracing::warn!(error = %err, "could not ring the other replicas; they see \
                                   this replica's events when they next poll");
                }
                Err(_) if !failing => {
                    failing = true;
                    tracing::warn!(
                        "ringing the other replicas timed out; they see this \
                                    replica's events when they next poll"
                    );
                }
                _ => {}
            }
        }
    }
}

/// The doorbell's two connections for rings and the reads they cause, opened lazily with the
/// main pool's settings.
fn side_pool(pool: &PgPool) -> PgPool {
    PgPoolOptions::new()
        .max_connections(2)
        .min_connections(0)
        .acquire_timeout(Duration::from_secs(5))
        .connect_lazy_with((*pool.connect_options()).clone())
}

/// A listener on a connection of its own: a one-connection pool with the main pool's
/// settings, so the main pool's size is untouched and a reconnect needs no pool slot.
async fn listener(pool: &PgPool, channel: &str) -> Result<PgListener, sqlx::Error> {
    let own = PgPoolOptions::new()
        .max_connections(1)
        .min_connections(0)
        .max_lifetime(None)
        .idle_timeout(None)
        .acquire_timeout(Duration::from_secs(5))
        .connect_with((*pool.connect_options()).clone())
        .await?;
    let mut listener = PgListener::connect_with(&own).await?;
    listener.ignore_pool_close_event(true);
    listener.listen(channel).await?;
    Ok(listener)
}

/// Listens until aborted, reconnecting when the connection fails; after each (re)connect the
/// bus reads what it may have missed.
/// What the listening task works with.
struct Listening {
    pool: PgPool,
    channel: Arc<str>,
    bus: Arc<PollingBus>,
    on_cancel: OnCancel,
    on_people: OnPeople,
    status: Arc<DoorbellStatus>,
    /// The self-test's nonce.
    probe: String,
    /// Where the self-test's ring is sent.
    ring: mpsc::UnboundedSender<Ring>,
}

async fn listen_loop(listening: Listening, echo: tokio::sync::oneshot::Sender<()>) {
    let Listening {
        pool,
        channel,
        bus,
        on_cancel,
        on_people,
        status,
        probe,
        ring,
    } = listening;
    let mut echo = Some(echo);
    let mut reported = false;
    loop {
        let mut heard = match listener(&pool, &channel).await {
            Ok(listener) => listener,
            Err(err) => {
                let reason = format!(
                    "the LISTEN connection is down ({err}); other replicas' events arrive by \
                     polling every 250 ms until it is back"
                );
                if !reported {
                    tracing::warn!("{reason}");
                    reported = true;
                }
                status.set(DOWN, &reason);
                tokio::time::sleep(RETRY_AFTER).await;
                continue;
            }
        };
        if reported {
            tracing::info!("the LISTEN connection is back");
        }
        // Changes of accounts or sharing rung while nobody listened are in no log: what was
        // remembered is forgotten before the status says rings are heard again.
        on_people();
        // Listening counts once the self-test's echo is heard; after that, a reconnect is
        // trusted as the first connection was.
        if echo.is_none() {
            status.set(LISTENING, "");
        } else {
            let _ = ring.send(Ring::Probe {
                nonce: probe.clone(),
            });
        }
        // Whatever was rung while nobody listened is in the log.
        if let Err(err) = bus.poll_once().await {
            tracing::debug!(error = %err, "catching up after listening again");
        }
        // `None` or an error: the connection was lost, notifications may have been missed.
        while let Ok(Some(notification)) = heard.try_recv().await {
            let mut moved = Vec::new();
            for ring in parse(notification.payload()) {
                match ring {
                    Ring::Event { thread, seq } => moved.push((thread, seq)),
                    Ring::Cancel { thread } => on_cancel(&thread),
                    Ring::People => on_people(),
                    Ring::Probe { nonce } if nonce == probe => {
                        if let Some(echo) = echo.take() {
                            status.set(LISTENING, "");
                            let _ = echo.send(());
                        }
                    }
                    Ring::Probe { .. } => {}
                }
            }
            if !moved.is_empty()
                && let Err(err) = bus.announce_moved(moved).await
            {
                tracing::debug!(error = %err, "reading rung events; the poll retries");
            }
        }
        let reason = "the LISTEN connection was lost; other replicas' events arrive by polling \
                      every 250 ms until it is back";
        tracing::warn!("{reason}");
        reported = true;
        status.set(DOWN, reason);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests;
