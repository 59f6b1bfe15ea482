//! Turn leases: how a turn's thread is freed again when the replica running it dies.
//!
//! The replica running a turn owns its row and renews a lease on it every third of
//! [`AgentConfig::lease`](super::AgentConfig); the renewal also brings back any cancel asked for
//! on another replica. Every replica looks for running turns whose lease ran out and ends them
//! (`error` "the server running this turn stopped", then `done`; the tool calls they made stay),
//! exactly once across replicas because the end is a conditional update of the row. A replica
//! that shuts down ends its own turns first ([`Agent::hand_over`]).

use std::{sync::Arc, sync::atomic::Ordering, time::Duration};

use tokio::task::JoinHandle;

use super::turn::{Agent, lease_ms};
use haico_store::{ThreadId, now_ms};

/// What a turn whose replica stopped says to the person.
pub const EXPIRED_REASON: &str = "the server running this turn stopped; the steps it made are \
                                  kept, send your message again to go on";

/// What a turn this replica ran before it restarted says.
pub const RESTARTED_REASON: &str = "the server running this turn restarted; the steps it made \
                                    are kept, send your message again to go on";

/// How many expired turns one look ends.
const REAP_BATCH: i64 = 100;

/// How long a shutdown waits for its turns' ends to be recorded.
const HAND_OVER_WITHIN: Duration = Duration::from_secs(10);

impl Agent {
    /// Starts renewing this replica's leases and ending other replicas' expired turns, every
    /// third of a lease, until the handle is aborted.
    pub fn keep_leases(self: &Arc<Self>) -> JoinHandle<()> {
        let agent = Arc::clone(self);
        let every = (agent.config.lease / 3).max(Duration::from_millis(100));
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(every);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                ticks.tick().await;
                agent.renew_leases().await;
                agent.end_expired_turns().await;
            }
        })
    }

    /// Renews the leases of the turns running here and acts on cancels asked elsewhere.
    async fn renew_leases(&self) {
        let local = self.running_threads();
        if local.is_empty() {
            return;
        }
        let until = now_ms().saturating_add(lease_ms(self.config.lease));
        match self
            .runtime
            .workspaces()
            .renew_leases(self.config.replica.as_str(), until)
            .await
        {
            Ok(held) => {
                for turn in held.into_iter().filter(|t| t.cancel_requested) {
                    if let Ok(thread) = ThreadId::parse(&turn.thread_id)
                        && self.cancel(&thread)
                    {
                        tracing::info!(thread = %thread, turn = turn.turn_index,
                                       "cancelled at another replica's request");
                    }
                }
            }
            Err(err) => {
                tracing::warn!(error = %err, "could not renew this replica's turn leases; \
                               other replicas end its turns if this lasts a lease");
            }
        }
    }

    /// Ends running turns whose lease ran out, except this replica's own live ones.
    pub async fn end_expired_turns(&self) -> u64 {
        let now = now_ms();
        let workspaces = self.runtime.workspaces();
        let expired = match workspaces.expired_turns(now, REAP_BATCH).await {
            Ok(expired) => expired,
            Err(err) => {
                tracing::debug!(error = %err, "could not look for expired turns");
                return 0;
            }
        };
        let mut ended = 0;
        for turn in expired {
            let Ok(thread) = ThreadId::parse(&turn.thread_id) else {
                continue;
            };
            // A turn of ours whose renewal was late is alive: renew it next round instead.
            if self.is_running(&thread) {
                continue;
            }
            match workspaces
                .expire_turn(&thread, turn.turn_index, now, EXPIRED_REASON)
                .await
            {
                Ok(Some(_)) => {
                    ended += 1;
                    crate::metrics::turn_expired();
                    crate::metrics::turn_finished("failed");
                    tracing::warn!(thread = %thread, turn = turn.turn_index,
                                   owner = turn.owner.as_deref().unwrap_or("unknown"),
                                   "ended a turn whose replica stopped renewing its lease");
                }
                Ok(None) => {}
                Err(err) => {
                    tracing::warn!(thread = %thread, error = %err,
                                   "could not end a turn whose lease ran out");
                }
            }
        }
        ended
    }

    /// At start-up: ends the turns this replica id held before it restarted (nobody runs them
    /// now) and any turn whose lease already ran out. Other replicas' live turns are left
    /// alone. Returns how many turns it ended.
    pub async fn recover(&self) -> u64 {
        let workspaces = self.runtime.workspaces();
        let mut ended = 0;
        match workspaces.turns_of(self.config.replica.as_str()).await {
            Ok(ours) => {
                for turn in ours {
                    let Ok(thread) = ThreadId::parse(&turn.thread_id) else {
                        continue;
                    };
                    if let Ok(Some(_)) = workspaces
                        .expire_turn(&thread, turn.turn_index, i64::MAX, RESTARTED_REASON)
                        .await
                    {
                        ended += 1;
                        crate::metrics::turn_finished("failed");
                    }
                }
            }
            Err(err) => tracing::warn!(error = %err, "could not read this replica's old turns"),
        }
        ended + self.end_expired_turns().await
    }

    /// Shutting down: starts no more turns, ends the running ones (`error` saying the server
    /// was shut down, then `done`) and waits, up to ten seconds, until their ends are
    /// recorded, so no lease is left to run out.
    pub async fn hand_over(&self) {
        self.stopping.store(true, Ordering::Release);
        let running = self.running_threads();
        if !running.is_empty() {
            tracing::info!(turns = running.len(), "ending this replica's running turns");
        }
        for thread in &running {
            self.cancel(thread);
        }
        self.tasks.close();
        if tokio::time::timeout(HAND_OVER_WITHIN, self.tasks.wait())
            .await
            .is_err()
        {
            tracing::warn!(
                "some turns did not record their end within 10 s; other replicas \
                            end them when their leases run out"
            );
        }
    }

    /// The threads with a turn running here.
    fn running_threads(&self) -> Vec<ThreadId> {
        self.running
            .lock()
            .map(|running| {
                running
                    .keys()
                    .filter_map(|id| ThreadId::parse(id).ok())
                    .collect()
            })
            .unwrap_or_default()
    }
}
