//! The process's open-files limit: every client connection is a file descriptor, so the limit
//! bounds how many connections the server can hold. At start-up `haico serve` raises its soft
//! limit to the hard one (as Go's runtime does), and the default connection cap is what the
//! limit leaves after the database's connections and the server's own files; past the cap,
//! connections wait to be accepted instead of failing with "Too many open files".

/// What the soft limit is raised to at most: Linux's default ceiling for one process
/// (`fs.nr_open`); a hard limit of "unlimited" cannot be a soft one.
const RAISE_TO: u64 = 1 << 20;

/// Descriptors kept free beside client connections and the database's: standard streams, the
/// listener, the runtime's own (epoll, wake-ups), connections to the language model, and room
/// for the unexpected.
const RESERVED: u64 = 64;

/// Descriptors one database connection may hold (SQLite: the database, its WAL and its
/// shared-memory file; PostgreSQL: one socket).
const PER_DB_CONNECTION: u64 = 3;

/// The most connections a default cap allows, whatever the limit: an open event stream costs
/// about 45 KiB (docs/BENCHMARKS.md), so this many stays under 750 MB.
const DEFAULT_CAP_CEILING: u64 = 16_384;

/// The open-files limit before and after [`raise_open_files_limit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenFiles {
    /// The soft limit the process started with.
    pub before: u64,
    /// The soft limit now in force.
    pub now: u64,
    /// The hard limit (the most an unprivileged process may raise its soft limit to).
    pub hard: u64,
}

/// Raises the soft open-files limit toward the hard limit, where the system allows; returns
/// the limits (unchanged when raising failed, which is logged).
pub fn raise_open_files_limit() -> OpenFiles {
    let Ok((before, hard)) = rlimit::Resource::NOFILE.get() else {
        let now = open_files_limit();
        return OpenFiles {
            before: now,
            now,
            hard: now,
        };
    };
    let now = match rlimit::increase_nofile_limit(RAISE_TO) {
        Ok(now) => now.max(before),
        Err(err) => {
            tracing::warn!(
                error = %err,
                soft = before,
                hard,
                "could not raise the open-files limit; raise it with `ulimit -n` before starting"
            );
            before
        }
    };
    OpenFiles { before, now, hard }
}

/// The soft open-files limit now in force (1024, the usual default, when it cannot be read).
pub fn open_files_limit() -> u64 {
    rlimit::Resource::NOFILE
        .get()
        .map_or(1024, |(soft, _)| soft)
}

/// The default cap on open client connections under an open-files limit of `open_files`,
/// with a database pool of `db_connections`: what the limit leaves after the database's
/// descriptors and a reserve, but never less than half the limit nor more than 16,384.
pub fn default_max_connections(open_files: u64, db_connections: u32) -> usize {
    let reserve = RESERVED + PER_DB_CONNECTION * u64::from(db_connections);
    let cap = open_files
        .saturating_sub(reserve)
        .max(open_files / 2)
        .clamp(1, DEFAULT_CAP_CEILING);
    usize::try_from(cap).unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_cap_leaves_room_for_the_database_and_the_server() {
        // The usual limit with a pool of 16 (four cores): 1024 - 64 - 3 * 16.
        assert_eq!(default_max_connections(1024, 16), 912);
        // A tight limit keeps half for connections.
        assert_eq!(default_max_connections(256, 64), 128);
        assert_eq!(default_max_connections(1, 16), 1);
        // A generous limit is capped for memory's sake.
        assert_eq!(default_max_connections(1 << 20, 16), 16_384);
    }
}
