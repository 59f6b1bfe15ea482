//! How a SQLite connection is opened: where (a file, or an in-memory database shared by the
//! process's connections) and with which settings (WAL, `synchronous = NORMAL`, the busy
//! time-out, foreign keys, a statement cache).
//!
//! The URL forms are the ones haico has always taken: `sqlite:PATH`, `sqlite://PATH`,
//! `sqlite::memory:`, with `?mode=ro|rw|rwc|memory` and `?cache=shared|private`.

use std::{
    path::{Path, PathBuf},
    sync::atomic::{AtomicUsize, Ordering},
    time::Duration,
};

use rusqlite::{Connection, OpenFlags};

/// How many statements a connection keeps prepared (every statement of the store, with room
/// to spare: one evicted from the cache is parsed again on its next use).
const PREPARED_STATEMENTS: usize = 128;

/// The settings every connection gets, in the order SQLite needs them (the journal mode
/// first). `cache_size` is in KiB when negative: 32 MB of pages per connection.
const PRAGMAS: &str = "PRAGMA journal_mode = WAL; PRAGMA foreign_keys = ON; \
    PRAGMA synchronous = NORMAL; PRAGMA temp_store = memory; PRAGMA cache_size = -32000;";

/// Gives each in-memory database of the process its own name.
static IN_MEMORY: AtomicUsize = AtomicUsize::new(0);

/// Where and how to open a connection. The writer and the readers open theirs from one value,
/// so an in-memory database's connections all reach the same database.
#[derive(Debug, Clone)]
pub(crate) struct SqliteOptions {
    /// The file, or an in-memory database's name.
    target: PathBuf,
    in_memory: bool,
    shared_cache: bool,
    read_only: bool,
    create: bool,
    busy_timeout: Duration,
}

impl SqliteOptions {
    /// Reads a `sqlite:` URL (or a bare path); `None` when a query parameter is unknown or
    /// has a value SQLite does not take.
    pub(crate) fn parse(url: &str) -> Option<Self> {
        let rest = url
            .strip_prefix("sqlite://")
            .or_else(|| url.strip_prefix("sqlite:"))
            .unwrap_or(url);
        let (database, query) = match rest.split_once('?') {
            Some((database, query)) => (database, Some(query)),
            None => (rest, None),
        };
        let mut options = Self {
            target: PathBuf::new(),
            in_memory: false,
            shared_cache: false,
            read_only: false,
            create: false,
            busy_timeout: Duration::from_secs(5),
        };
        if database == ":memory:" {
            options.in_memory = true;
            options.shared_cache = true;
        } else {
            options.target = PathBuf::from(percent_decode(database)?);
        }
        for (key, value) in url::form_urlencoded::parse(query.unwrap_or("").as_bytes()) {
            match (&*key, &*value) {
                ("mode", "ro") => options.read_only = true,
                ("mode", "rw") => {}
                ("mode", "rwc") => options.create = true,
                ("mode", "memory") => {
                    options.in_memory = true;
                    options.shared_cache = true;
                }
                ("cache", "shared") => options.shared_cache = true,
                ("cache", "private") => options.shared_cache = false,
                _ => return None,
            }
        }
        if options.in_memory && options.target.as_os_str().is_empty() {
            let n = IN_MEMORY.fetch_add(1, Ordering::Relaxed);
            options.target = PathBuf::from(format!("file:haico-memory-{n}"));
        }
        Some(options)
    }

    /// The database file (an in-memory database's name).
    pub(crate) fn path(&self) -> &Path {
        &self.target
    }

    /// Whether the database lives in this process's memory only.
    pub(crate) fn in_memory(&self) -> bool {
        self.in_memory
    }

    /// Creates the file when it does not exist.
    pub(crate) fn create_if_missing(mut self, create: bool) -> Self {
        self.create = create;
        self
    }

    /// Opens connections that may only read.
    pub(crate) fn read_only(mut self) -> Self {
        self.read_only = true;
        self
    }

    /// How long a statement waits for another connection's lock before SQLite answers
    /// "busy".
    pub(crate) fn busy_timeout(mut self, wait: Duration) -> Self {
        self.busy_timeout = wait;
        self
    }

    /// Opens a connection with every setting applied. Blocking (it may wait for the file's
    /// lock to switch the journal to WAL): called at start-up and when a reader is added.
    pub(crate) fn open(&self) -> rusqlite::Result<Connection> {
        let mut flags = OpenFlags::SQLITE_OPEN_URI | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        flags |= if self.read_only {
            OpenFlags::SQLITE_OPEN_READ_ONLY
        } else if self.create {
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE
        } else {
            OpenFlags::SQLITE_OPEN_READ_WRITE
        };
        if self.in_memory {
            flags |= OpenFlags::SQLITE_OPEN_MEMORY;
        }
        flags |= if self.shared_cache {
            OpenFlags::SQLITE_OPEN_SHARED_CACHE
        } else {
            OpenFlags::SQLITE_OPEN_PRIVATE_CACHE
        };
        let conn = Connection::open_with_flags(&self.target, flags)?;
        conn.busy_timeout(self.busy_timeout)?;
        conn.execute_batch(PRAGMAS)?;
        conn.set_prepared_statement_cache_capacity(PREPARED_STATEMENTS);
        Ok(conn)
    }
}

/// `%XX` escapes in a path decoded (a `?` or `#` in a file name is written so); `None` when
/// the result is not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let escaped = (bytes[at] == b'%')
            .then(|| text.get(at + 1..at + 3))
            .flatten()
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match escaped {
            Some(byte) => {
                out.push(byte);
                at += 3;
            }
            None => {
                out.push(bytes[at]);
                at += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn urls_name_files_and_in_memory_databases() {
        let file = SqliteOptions::parse("sqlite:data/haico.db").unwrap();
        assert_eq!(file.path(), Path::new("data/haico.db"));
        assert!(!file.in_memory());
        let file = SqliteOptions::parse("sqlite:///tmp/a%3Fb.db?mode=rwc").unwrap();
        assert_eq!(file.path(), Path::new("/tmp/a?b.db"));
        assert!(file.create);
        assert!(SqliteOptions::parse("plain.db").is_some());
        let one = SqliteOptions::parse("sqlite::memory:").unwrap();
        let two = SqliteOptions::parse("sqlite://?mode=memory").unwrap();
        assert!(one.in_memory() && two.in_memory());
        assert_ne!(one.path(), two.path(), "each in-memory database is its own");
        assert!(SqliteOptions::parse("sqlite:a.db?mode=fast").is_none());
        assert!(SqliteOptions::parse("sqlite:a.db?journal=wal").is_none());
    }

    #[test]
    fn connections_of_one_in_memory_database_share_it_and_get_every_setting() {
        let options = SqliteOptions::parse("sqlite::memory:").unwrap();
        let writer = options.open().unwrap();
        writer.execute_batch("CREATE TABLE t (v INTEGER)").unwrap();
        let reader = options.clone().read_only().open().unwrap();
        let tables: i64 = reader
            .query_row(
                "SELECT COUNT(*) FROM sqlite_master WHERE name = 't'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(tables, 1);
        let foreign_keys: i64 = writer
            .query_row("PRAGMA foreign_keys", [], |r| r.get(0))
            .unwrap();
        assert_eq!(foreign_keys, 1);
    }

    #[test]
    fn a_file_is_opened_in_wal_mode_with_normal_sync() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite:{}", dir.path().join("o.db").display());
        let options = SqliteOptions::parse(&url).unwrap().create_if_missing(true);
        let conn = options.open().unwrap();
        let mode: String = conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
        let sync: i64 = conn
            .query_row("PRAGMA synchronous", [], |r| r.get(0))
            .unwrap();
        assert_eq!(sync, 1, "NORMAL");
        let missing = SqliteOptions::parse(&format!("{url}-missing")).unwrap();
        assert!(missing.open().is_err(), "created only when asked");
    }
}
