//! Several `haico serve` replicas on one PostgreSQL database, behind any load balancer.
//!
//! PostgreSQL itself coordinates them; there is no other broker:
//! - **events**: each commit is in the thread's log before anyone hears of it; the
//!   [`doorbell`] (`LISTEN/NOTIFY`) tells the other replicas a thread moved, and their buses
//!   read the log (`crate::events::PollingBus`);
//! - **turns**: the replica running a turn holds a lease on its row and renews it; any replica
//!   ends a turn whose lease ran out, and a cancel reaches the owner by doorbell and by a flag
//!   on the row (`crate::agent` keeps the leases);
//! - **MCP sessions**: their state is in the database, so any replica can continue one.
//!
//! Each replica has a [`ReplicaId`], shown in logs and `/metrics`.

pub mod doorbell;
mod id;

pub use doorbell::{Doorbell, DoorbellHealth, DoorbellStatus, DoorbellTasks};
pub use id::{InvalidReplicaId, MAX_REPLICA_ID_LEN, ReplicaId};
