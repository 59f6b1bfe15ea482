//! SQLite databases as builds before issue 24 made them: those ran the migrations through
//! sqlx's migrator, which keeps the table `_sqlx_migrations` (one row per migration: number,
//! description, success, the SHA-384 of its SQL, how long it took). The store now runs its own
//! migrations over that table; these databases must open with it as migrated.

use std::path::Path;

use sha2::{Digest, Sha384};

/// The table as sqlx's migrator created it, byte for byte.
const SQLX_TABLE: &str = r#"
CREATE TABLE IF NOT EXISTS _sqlx_migrations (
    version BIGINT PRIMARY KEY,
    description TEXT NOT NULL,
    installed_on TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    success BOOLEAN NOT NULL,
    checksum BLOB NOT NULL,
    execution_time BIGINT NOT NULL
);
                "#;

/// The files of `migrations/sqlite` up to number `up_to`: (number, description, SQL), the
/// description being the file name's words as sqlx read them.
pub fn migration_files(up_to: i64) -> Vec<(i64, String, String)> {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/haico-store/migrations/sqlite");
    let mut found: Vec<(i64, String, String)> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "sql"))
        .map(|path| {
            let name = path.file_stem().unwrap().to_str().unwrap().to_string();
            let (number, words) = name.split_once('_').unwrap();
            let sql = std::fs::read_to_string(&path).unwrap();
            (number.parse().unwrap(), words.replace('_', " "), sql)
        })
        .filter(|(version, _, _)| *version <= up_to)
        .collect();
    found.sort();
    found
}

/// Creates the SQLite file `path` with the migrations up to `up_to` applied as sqlx's migrator
/// applied them: on a connection with foreign keys on, each migration and its row in one
/// transaction, the duration written afterwards.
pub fn create(path: &Path, up_to: i64) {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch("PRAGMA journal_mode = WAL; PRAGMA foreign_keys = ON;")
        .unwrap();
    conn.execute_batch(SQLX_TABLE).unwrap();
    for (version, description, sql) in migration_files(up_to) {
        conn.execute_batch("BEGIN").unwrap();
        conn.execute_batch(&sql).unwrap();
        conn.execute(
            "INSERT INTO _sqlx_migrations ( version, description, success, checksum, \
             execution_time ) VALUES ( ?1, ?2, TRUE, ?3, -1 )",
            (
                version,
                description,
                Sha384::digest(sql.as_bytes()).to_vec(),
            ),
        )
        .unwrap();
        conn.execute_batch("COMMIT").unwrap();
        conn.execute(
            "UPDATE _sqlx_migrations SET execution_time = ?1 WHERE version = ?2",
            (1_000_000_i64 + version, version),
        )
        .unwrap();
    }
}
