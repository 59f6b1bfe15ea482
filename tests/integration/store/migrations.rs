//! SQLite's migrations run by haico itself over the table sqlx's migrator kept: a database
//! made by an earlier build opens as migrated (nothing is run again), a fresh one gets the
//! same schema, and a migration changed after it was applied is refused by name.

use crate::common;

use std::path::Path;

use haico::store::{Database, PoolConfig};

/// Every table, index and trigger with its SQL, as SQLite keeps them.
fn schema(path: &Path) -> Vec<(String, String, Option<String>)> {
    let conn = rusqlite::Connection::open(path).unwrap();
    let mut statement = conn
        .prepare("SELECT type, name, sql FROM sqlite_master ORDER BY type, name")
        .unwrap();
    statement
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// The table of applied migrations, whole.
fn applied(path: &Path) -> Vec<(i64, String, String, bool, Vec<u8>, i64)> {
    let conn = rusqlite::Connection::open(path).unwrap();
    let mut statement = conn
        .prepare(
            "SELECT version, description, installed_on, success, checksum, execution_time \
             FROM _sqlx_migrations ORDER BY version",
        )
        .unwrap();
    statement
        .query_map([], |row| {
            Ok((
                row.get(0)?,
                row.get(1)?,
                row.get(2)?,
                row.get(3)?,
                row.get(4)?,
                row.get(5)?,
            ))
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

async fn open(path: &Path) -> Result<Database, haico::store::StoreError> {
    Database::connect(
        &format!("sqlite:{}", path.display()),
        &PoolConfig::default(),
    )
    .await
}

#[tokio::test]
async fn a_database_made_by_the_sqlx_build_opens_as_migrated_with_its_rows() {
    // `tests/fixtures/sqlite-made-by-sqlx.db` was made by the last build that ran SQLite
    // through sqlx (78e0693): `HAICO_DATABASE_URL=sqlite:… haico user add ada --admin`.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sqlite-made-by-sqlx.db"),
        &path,
    )
    .unwrap();
    let before = applied(&path);
    assert_eq!(before.len(), 15, "the fixture holds migrations 1 to 15");
    let db = open(&path).await.unwrap();
    let Database::Sqlite { reader, .. } = &db else {
        panic!("a SQLite URL opens SQLite");
    };
    let conn = reader.acquire().await.unwrap();
    let user: (String, String) = conn
        .inline()
        .unwrap()
        .query_row("SELECT name, role FROM users", [], |row| {
            Ok((row.get(0)?, row.get(1)?))
        })
        .unwrap();
    assert_eq!(user, ("ada".to_string(), "admin".to_string()));
    drop(conn);
    db.close().await;
    let after = applied(&path);
    assert_eq!(
        after[..before.len()],
        before[..],
        "nothing applied before was run or recorded again"
    );
    // A migration added since (if any) was applied on top, recorded as sqlx recorded it.
    let files = common::sqlx_made::migration_files(i64::MAX);
    assert_eq!(after.len(), files.len());
    // And the schema is the one a fresh database gets.
    let fresh = dir.path().join("fresh.db");
    open(&fresh).await.unwrap().close().await;
    assert_eq!(schema(&path), schema(&fresh));
}

#[tokio::test]
async fn a_database_written_as_sqlx_wrote_it_opens_as_migrated_and_matches_a_fresh_one() {
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("old.db");
    common::sqlx_made::create(&old, i64::MAX);
    let before = applied(&old);
    open(&old).await.unwrap().close().await;
    assert_eq!(applied(&old), before, "nothing run or recorded again");
    let fresh = dir.path().join("fresh.db");
    open(&fresh).await.unwrap().close().await;
    assert_eq!(schema(&old), schema(&fresh));
    // The fresh database records each migration as sqlx did: number, description, success,
    // the SHA-384 of its SQL.
    let recorded = applied(&fresh);
    for (row, (version, description, sql)) in recorded
        .iter()
        .zip(common::sqlx_made::migration_files(i64::MAX))
    {
        assert_eq!(row.0, version);
        assert_eq!(row.1, description);
        assert!(row.3);
        use sha2::Digest;
        assert_eq!(row.4, sha2::Sha384::digest(sql.as_bytes()).to_vec());
        assert!(row.5 > 0, "its duration is recorded");
    }
}

#[tokio::test]
async fn an_older_database_gets_the_missing_migrations_on_top() {
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("old.db");
    common::sqlx_made::create(&old, 9);
    let before = applied(&old);
    open(&old).await.unwrap().close().await;
    let after = applied(&old);
    assert_eq!(after[..before.len()], before[..]);
    assert_eq!(
        after.len(),
        common::sqlx_made::migration_files(i64::MAX).len()
    );
    let fresh = dir.path().join("fresh.db");
    open(&fresh).await.unwrap().close().await;
    assert_eq!(schema(&old), schema(&fresh));
}

#[tokio::test]
async fn a_migration_changed_after_it_was_applied_is_refused_by_number() {
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("old.db");
    common::sqlx_made::create(&old, i64::MAX);
    rusqlite::Connection::open(&old)
        .unwrap()
        .execute(
            "UPDATE _sqlx_migrations SET checksum = zeroblob(48) WHERE version = 3",
            [],
        )
        .unwrap();
    let err = open(&old).await.unwrap_err().to_string();
    assert!(err.contains("migration 3"), "{err}");
    assert!(err.contains("changed"), "{err}");
}
