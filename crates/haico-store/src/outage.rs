//! When a PostgreSQL operation that waits for a connection counts as an outage: soon enough
//! that a request answers `503` within about `HAICO_DB_TIMEOUT_MS`, never for a server that is
//! only busy.

use std::time::Duration;

use sqlx::PgPool;

use crate::{connect, error::StoreError};

/// How long `/healthz` tries a fresh PostgreSQL connection to explain an outage; with the
/// pool's own time-out before it, the check stays under two seconds by default.
pub(crate) const HEALTH_PROBE_TIMEOUT: Duration = Duration::from_millis(500);

/// How many times `HAICO_DB_TIMEOUT_MS` an operation may wait in all while the server still
/// takes new connections: it is busy (or the machine is), not gone.
pub(crate) const ALIVE_BUT_SLOW: u32 = 10;

/// `HAICO_DB_TIMEOUT_MS`: the pool's own time-out is [`ALIVE_BUT_SLOW`] times as long.
pub(crate) fn outage_limit(pool: &PgPool) -> Duration {
    pool.options().get_acquire_timeout() / ALIVE_BUT_SLOW
}

/// Runs a PostgreSQL operation that needs a connection (acquiring one, starting a transaction,
/// a ping) so that an outage answers within about `HAICO_DB_TIMEOUT_MS`. The pool bounds only
/// the acquiring, and a link that was cut without a reset leaves the first statement waiting
/// for an answer that never comes. Slow is not down, though: past the limit, a fresh
/// connection is tried, and if the server takes it the operation gets the rest of the pool's
/// time-out, so a loaded but healthy database is never reported as unavailable.
pub(crate) async fn within_postgres_timeout<T>(
    pool: &PgPool,
    operation: impl Future<Output = Result<T, sqlx::Error>>,
) -> Result<Result<T, sqlx::Error>, StoreError> {
    let patience = pool.options().get_acquire_timeout();
    let limit = outage_limit(pool);
    let mut operation = std::pin::pin!(operation);
    if let Ok(result) = tokio::time::timeout(limit, &mut operation).await {
        return Ok(result);
    }
    let options = pool.connect_options();
    if connect::probe_postgres(&options, HEALTH_PROBE_TIMEOUT)
        .await
        .is_ok()
        && let Ok(result) =
            tokio::time::timeout(patience.saturating_sub(limit), &mut operation).await
    {
        return Ok(result);
    }
    Err(StoreError::NoAnswer {
        target: connect::postgres_target(&options),
        after: connect::seconds(limit),
    })
}
