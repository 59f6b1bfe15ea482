//! SQLite's migrations, run by haico itself over the table sqlx's migrator has always kept
//! (`_sqlx_migrations`), so a database made by any earlier build opens as migrated.
//!
//! The table's format is what those databases hold: one row per applied migration with its
//! number (`version`), its description (the file name's words), `success`, the SHA-384 of
//! the migration's SQL (`checksum`) and how long it took (`execution_time`, nanoseconds).
//! On opening, every applied migration must still be known to this build and unchanged (same
//! checksum), and none may be marked unfinished; each migration not yet applied runs, in
//! number order, in a transaction of its own together with its row, so it is applied whole
//! or not at all. The migrations themselves are the files of `migrations/sqlite`, embedded
//! by `build.rs`.

use std::{collections::HashMap, time::Instant};

use rusqlite::{Connection, OptionalExtension};
use sha2::{Digest, Sha384};

use super::run;

/// The files of `migrations/sqlite`: number, description, SQL (written by `build.rs`).
const EMBEDDED: &[(i64, &str, &str)] = include!(concat!(env!("OUT_DIR"), "/sqlite_migrations.rs"));

/// The table of applied migrations, as databases made by earlier builds hold it.
const TABLE: &str = "CREATE TABLE IF NOT EXISTS _sqlx_migrations (
    version BIGINT PRIMARY KEY,
    description TEXT NOT NULL,
    installed_on TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    success BOOLEAN NOT NULL,
    checksum BLOB NOT NULL,
    execution_time BIGINT NOT NULL
)";

/// One migration: a numbered SQL script.
#[derive(Debug, Clone)]
pub(crate) struct Migration {
    pub(crate) version: i64,
    pub(crate) description: &'static str,
    pub(crate) sql: &'static str,
}

impl Migration {
    /// What the table keeps to recognise the script: the SHA-384 of its text.
    pub(crate) fn checksum(&self) -> Vec<u8> {
        Sha384::digest(self.sql.as_bytes()).to_vec()
    }
}

/// This build's SQLite migrations, in number order.
pub(crate) fn sqlite_migrations() -> Vec<Migration> {
    EMBEDDED
        .iter()
        .map(|&(version, description, sql)| Migration {
            version,
            description,
            sql,
        })
        .collect()
}

/// Why the database could not be brought up to date; nothing of a failed migration stays.
#[derive(Debug, thiserror::Error)]
pub enum MigrationError {
    /// A migration's own SQL failed.
    #[error("migration {version} ({description}) failed: {source}")]
    Failed {
        /// Its number.
        version: i64,
        /// Its file name's words.
        description: &'static str,
        /// SQLite's error.
        #[source]
        source: rusqlite::Error,
    },
    /// The database records a migration as applied whose text differs from this build's.
    #[error(
        "migration {0} was applied to this database but has been changed since (its checksum \
         differs); restore the migration's original text"
    )]
    Changed(i64),
    /// The database records a migration this build does not have: a newer build made it.
    #[error(
        "migration {0} was applied to this database but this build does not know it; the \
         database was made by a newer haico"
    )]
    Unknown(i64),
    /// The database records a migration as started but not finished.
    #[error(
        "migration {0} is recorded as partially applied; repair the database and remove its \
         row from `_sqlx_migrations`"
    )]
    Unfinished(i64),
    /// Reading or writing the table of applied migrations failed.
    #[error("keeping the table of applied migrations: {0}")]
    Table(#[from] rusqlite::Error),
}

/// Brings the database on `conn` up to date with `migrations` (see the module docs).
/// Blocking: run it off the runtime's threads.
pub(crate) fn migrate(conn: &Connection, migrations: &[Migration]) -> Result<(), MigrationError> {
    conn.execute_batch(TABLE)?;
    let unfinished: Option<i64> = conn
        .query_row(
            "SELECT version FROM _sqlx_migrations WHERE success = FALSE ORDER BY version LIMIT 1",
            [],
            |row| row.get(0),
        )
        .optional()?;
    if let Some(version) = unfinished {
        return Err(MigrationError::Unfinished(version));
    }
    let applied = applied(conn)?;
    if let Some(version) = applied
        .keys()
        .copied()
        .filter(|version| !migrations.iter().any(|m| m.version == *version))
        .min()
    {
        return Err(MigrationError::Unknown(version));
    }
    for migration in migrations {
        match applied.get(&migration.version) {
            Some(checksum) if *checksum == migration.checksum() => {}
            Some(_) => return Err(MigrationError::Changed(migration.version)),
            None => apply(conn, migration)?,
        }
    }
    Ok(())
}

/// The applied migrations' checksums by number.
fn applied(conn: &Connection) -> rusqlite::Result<HashMap<i64, Vec<u8>>> {
    let mut statement = conn.prepare("SELECT version, checksum FROM _sqlx_migrations")?;
    let rows = statement.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?;
    rows.collect()
}

/// Runs one migration and records it, in one transaction. The write lock is taken first, so
/// another process starting on the same file at the same moment waits, then finds the
/// migration applied and leaves it.
fn apply(conn: &Connection, migration: &Migration) -> Result<(), MigrationError> {
    let started = Instant::now();
    run(conn, "BEGIN IMMEDIATE")?;
    let applied = apply_in_transaction(conn, migration);
    let ended = match &applied {
        Ok(()) => run(conn, "COMMIT"),
        Err(_) => run(conn, "ROLLBACK"),
    };
    if ended.is_err() && !conn.is_autocommit() {
        // A failed COMMIT leaves the transaction open: end it, so nothing of it stays.
        let _ = run(conn, "ROLLBACK");
    }
    applied?;
    ended?;
    // How long it took is kept for the record only, as before: after the commit, and not
    // worth failing for.
    let nanos = i64::try_from(started.elapsed().as_nanos()).unwrap_or(i64::MAX);
    if let Err(err) = conn.execute(
        "UPDATE _sqlx_migrations SET execution_time = ?1 WHERE version = ?2",
        (nanos, migration.version),
    ) {
        tracing::debug!(error = %err, "recording a migration's duration failed");
    }
    Ok(())
}

fn apply_in_transaction(conn: &Connection, migration: &Migration) -> Result<(), MigrationError> {
    let recorded: Option<Vec<u8>> = conn
        .query_row(
            "SELECT checksum FROM _sqlx_migrations WHERE version = ?1",
            [migration.version],
            |row| row.get(0),
        )
        .optional()?;
    match recorded {
        Some(checksum) if checksum == migration.checksum() => return Ok(()),
        Some(_) => return Err(MigrationError::Changed(migration.version)),
        None => {}
    }
    conn.execute_batch(migration.sql)
        .map_err(|source| MigrationError::Failed {
            version: migration.version,
            description: migration.description,
            source,
        })?;
    conn.execute(
        "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
         VALUES (?1, ?2, TRUE, ?3, -1)",
        (
            migration.version,
            migration.description,
            migration.checksum(),
        ),
    )?;
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    fn two() -> Vec<Migration> {
        vec![
            Migration {
                version: 1,
                description: "first",
                sql: "CREATE TABLE a (v INTEGER);",
            },
            Migration {
                version: 2,
                description: "second",
                sql: "CREATE TABLE b (v INTEGER); INSERT INTO b VALUES (1);",
            },
        ]
    }

    #[test]
    fn the_embedded_list_is_every_file_in_number_order() {
        let files = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/migrations/sqlite"))
            .unwrap()
            .filter(|entry| {
                entry
                    .as_ref()
                    .unwrap()
                    .path()
                    .extension()
                    .is_some_and(|ext| ext == "sql")
            })
            .count();
        let all = sqlite_migrations();
        assert_eq!(all.len(), files);
        assert!(all.windows(2).all(|pair| pair[0].version < pair[1].version));
        assert_eq!(all[0].version, 1);
        assert_eq!(all[0].description, "threads");
    }

    #[test]
    fn each_migration_runs_once_and_is_recorded_as_sqlx_recorded_it() {
        let conn = Connection::open_in_memory().unwrap();
        migrate(&conn, &two()[..1]).unwrap();
        migrate(&conn, &two()).unwrap();
        migrate(&conn, &two()).unwrap();
        let rows: Vec<(i64, String, bool, Vec<u8>, i64)> = conn
            .prepare(
                "SELECT version, description, success, checksum, execution_time \
                 FROM _sqlx_migrations ORDER BY version",
            )
            .unwrap()
            .query_map([], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
            })
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1].1, "second");
        assert!(rows[1].2);
        assert_eq!(rows[1].3.len(), 48, "SHA-384");
        assert_eq!(rows[1].3, two()[1].checksum());
        assert!(rows[1].4 > 0);
        let b: i64 = conn
            .query_row("SELECT COUNT(*) FROM b", [], |r| r.get(0))
            .unwrap();
        assert_eq!(b, 1, "the second migration ran once");
    }

    #[test]
    fn a_changed_unknown_or_unfinished_migration_is_refused() {
        let conn = Connection::open_in_memory().unwrap();
        migrate(&conn, &two()).unwrap();
        let mut changed = two();
        changed[1].sql = "CREATE TABLE b (v TEXT);";
        let err = migrate(&conn, &changed).unwrap_err();
        assert!(matches!(err, MigrationError::Changed(2)), "{err}");
        assert!(err.to_string().contains("changed"), "{err}");
        let err = migrate(&conn, &two()[..1]).unwrap_err();
        assert!(matches!(err, MigrationError::Unknown(2)), "{err}");
        conn.execute(
            "UPDATE _sqlx_migrations SET success = FALSE WHERE version = 2",
            [],
        )
        .unwrap();
        let err = migrate(&conn, &two()).unwrap_err();
        assert!(matches!(err, MigrationError::Unfinished(2)), "{err}");
    }

    #[test]
    fn a_failing_migration_leaves_nothing_behind() {
        let conn = Connection::open_in_memory().unwrap();
        let mut broken = two();
        broken[1].sql = "CREATE TABLE b (v INTEGER); INSERT INTO nowhere VALUES (1);";
        let err = migrate(&conn, &broken).unwrap_err();
        assert!(
            matches!(err, MigrationError::Failed { version: 2, .. }),
            "{err}"
        );
        assert!(conn.is_autocommit());
        let tables: i64 = conn
            .query_row(
                "SELECT COUNT(*) FROM sqlite_master WHERE name = 'b'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(tables, 0);
        let recorded: i64 = conn
            .query_row("SELECT COUNT(*) FROM _sqlx_migrations", [], |r| r.get(0))
            .unwrap();
        assert_eq!(recorded, 1);
        migrate(&conn, &two()).unwrap();
    }
}
