//! The lender's one-round-trip paths against a real PostgreSQL: what it prepares, when it
//! recovers, and that a failure leaves nothing behind.

use sqlx::Row;

use crate::{lender::Lender, lender::Lent, lender::Named, lender::ride::Rider};
use crate::{query::Value as SqlValue, test_postgres::TestSchema};

/// A statement for [`Lent::begin_with`] that needs no table.
const ECHO: Named = Named {
    name: "haico_test_echo",
    params: "",
    definition: "SELECT length($1::text)::bigint",
};

/// `Lent::begin_with` prepares its statement once per connection and recovers, with one more
/// try, when the connection already holds it (it left the lender and came back) or lost it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn begin_with_prepares_once_and_recovers() {
    let Some(test_db) = TestSchema::new().await else {
        return;
    };
    let pool = &test_db.pool;
    // A lender of its own: its shelf hands the one connection given back to the next lend.
    let lender = Lender::new(pool.clone());
    let echo = async |lent: &mut Lent| -> Result<i64, sqlx::Error> {
        let row = lent.begin_with("BEGIN", &ECHO, "abc").await?;
        row.expect("one row").try_get::<i64, _>(0)
    };

    // First use: `PREPARE`, `BEGIN` and `EXECUTE` in one round trip; later uses skip `PREPARE`.
    let mut lent = lender.lend().await.unwrap();
    let before = lender.round_trips();
    assert_eq!(echo(&mut lent).await.unwrap(), 3);
    assert_eq!(lender.round_trips() - before, 1);
    lent.rollback().await.unwrap();
    let mut lent = lender.lend().await.unwrap();
    let before = lender.round_trips();
    assert_eq!(echo(&mut lent).await.unwrap(), 3);
    assert_eq!(lender.round_trips() - before, 1);

    // Lost (deallocated behind the lender's back): `26000` inside the transaction, which is
    // rolled back, then prepared again.
    lent.commit().await.unwrap();
    let mut lent = lender.lend().await.unwrap();
    lent.execute(sqlx::query("DEALLOCATE haico_test_echo"))
        .await
        .unwrap();
    let before = lender.round_trips();
    assert_eq!(echo(&mut lent).await.unwrap(), 3);
    assert_eq!(lender.round_trips() - before, 3, "try, ROLLBACK, try again");
    lent.commit().await.unwrap();

    // Already there on a connection the lender has not seen prepare it: `42P05` before
    // anything ran, then `BEGIN; EXECUTE` alone.
    let fresh = Lender::new(pool.clone());
    let mut lent = fresh.lend().await.unwrap();
    lent.execute(sqlx::query(
        "PREPARE haico_test_echo AS SELECT length($1::text)::bigint",
    ))
    .await
    .unwrap();
    let before = fresh.round_trips();
    assert_eq!(echo(&mut lent).await.unwrap(), 3);
    assert_eq!(
        fresh.round_trips() - before,
        2,
        "PREPARE refused, then BEGIN; EXECUTE"
    );
    lent.commit().await.unwrap();

    // An argument that would need quoting is refused before anything is sent.
    let mut lent = lender.lend().await.unwrap();
    let before = lender.round_trips();
    assert!(
        lent.begin_with("BEGIN", &ECHO, "x'); DROP TABLE threads; --")
            .await
            .is_err()
    );
    assert_eq!(lender.round_trips(), before);
    drop(lent);
    drop((lender, fresh));
    test_db.drop().await;
}

/// A companion statement for [`Lent::execute_and_commit`]: it echoes its text and adds one.
const ECHO_AND_COUNT: Named = Named {
    name: "haico_test_echo_and_count",
    params: "(text, int8, timestamptz)",
    definition: "SELECT $1 || '|', $2 + 1, to_char($3 AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US')",
};

/// `Lent::execute_and_commit` runs a companion statement and commits in one round trip, its
/// parameters written as literals that read back exactly (quotes, backslashes, what looks like
/// SQL, non-ASCII); when it fails, nothing of the transaction stays and the connection is not
/// lent again, so the next transaction works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn execute_and_commit_is_one_trip_and_fails_whole() {
    let Some(test_db) = TestSchema::new().await else {
        return;
    };
    let pool = &test_db.pool;
    let lender = Lender::also_preparing(pool.clone(), &[&ECHO_AND_COUNT]);
    let time = chrono::DateTime::parse_from_rfc3339("2026-12-03T12:34:56.789012345Z")
        .unwrap()
        .with_timezone(&chrono::Utc);
    let tricky = "it's a \\n test'); DROP TABLE threads; -- ünï ✓ \\'";
    let insert = |id: &'static str| {
        sqlx::query(
            "INSERT INTO threads (id, title, turn_index, created_at, updated_at) \
             VALUES ($1, 't', 0, now(), now())",
        )
        .bind(id)
    };
    let exists = async |id: &str| -> bool {
        sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM threads WHERE id = $1")
            .bind(id)
            .fetch_one(pool)
            .await
            .unwrap()
            == 1
    };

    // Without `begin_with` first, the companion is not known to be prepared: refused, unsent.
    let mut lent = lender.begin("BEGIN").await.unwrap();
    assert!(!lent.can_execute_and_commit());
    let before = lender.round_trips();
    let params = [
        SqlValue::Text(Some(tricky)),
        SqlValue::Int(Some(41)),
        SqlValue::Time(Some(time)),
    ];
    assert!(
        lent.execute_and_commit(&ECHO_AND_COUNT, &params)
            .await
            .is_err()
    );
    assert_eq!(lender.round_trips(), before);
    lent.rollback().await.unwrap();

    // After it: one trip, the values read back, the transaction's writes committed.
    let mut lent = lender.lend().await.unwrap();
    lent.begin_with("BEGIN", &ECHO, "abc").await.unwrap();
    lent.execute(insert("committed")).await.unwrap();
    assert!(lent.can_execute_and_commit());
    let before = lender.round_trips();
    let rows = lent
        .execute_and_commit(&ECHO_AND_COUNT, &params)
        .await
        .unwrap();
    assert_eq!(lender.round_trips() - before, 1);
    let row = rows.first().expect("one row");
    assert_eq!(row.try_get::<String, _>(0).unwrap(), format!("{tricky}|"));
    assert_eq!(row.try_get::<i64, _>(1).unwrap(), 42);
    assert_eq!(
        row.try_get::<String, _>(2).unwrap(),
        "2026-12-03 12:34:56.789012"
    );
    lent.commit().await.unwrap();
    assert_eq!(lender.round_trips() - before, 1, "COMMIT was already sent");
    assert!(exists("committed").await);

    // A NUL cannot be written as a literal: refused before anything is sent.
    let mut lent = lender.lend().await.unwrap();
    lent.begin_with("BEGIN", &ECHO, "abc").await.unwrap();
    let before = lender.round_trips();
    let nul = [
        SqlValue::Text(Some("a\0b")),
        SqlValue::Int(Some(1)),
        SqlValue::Time(Some(time)),
    ];
    let err = lent
        .execute_and_commit(&ECHO_AND_COUNT, &nul)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("NUL"), "{err}");
    assert_eq!(lender.round_trips(), before);
    lent.rollback().await.unwrap();

    // The statement lost behind the lender's back: the one trip fails, the insert before it
    // is gone, and the next lending gets a connection that works.
    let mut lent = lender.lend().await.unwrap();
    lent.begin_with("BEGIN", &ECHO, "abc").await.unwrap();
    lent.execute(insert("rolled-back")).await.unwrap();
    lent.execute(sqlx::query("DEALLOCATE haico_test_echo_and_count"))
        .await
        .unwrap();
    assert!(
        lent.execute_and_commit(&ECHO_AND_COUNT, &params)
            .await
            .is_err()
    );
    lent.rollback().await.unwrap();
    assert!(!exists("rolled-back").await);
    for _ in 0..3 {
        let mut lent = lender.lend().await.unwrap();
        lent.begin_with("BEGIN", &ECHO, "abc").await.unwrap();
        let rows = lent
            .execute_and_commit(&ECHO_AND_COUNT, &params)
            .await
            .unwrap();
        assert_eq!(rows.len(), 1);
    }
    drop(lender);
    test_db.drop().await;
}

/// `Lent::begin_with_then`: `BEGIN`, a lock-like statement and a rider in one round trip,
/// the rider prepared once per connection and its parameters read back exactly as literals;
/// it recovers, with one question to the server, from a connection that holds more than the
/// lender believes (a fresh lender on the same pool) or less (statements deallocated behind
/// its back); a rider whose parameter no literal can carry is refused unsent; a failing rider
/// leaves the lock's answer readable and the transaction for the caller to end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn begin_with_then_rides_once_and_recovers() {
    let Some(test_db) = TestSchema::new().await else {
        return;
    };
    let pool = &test_db.pool;
    let lender = Lender::new(pool.clone());
    const RIDER: &str = "SELECT $1 || '|', $2 + 1";
    let tricky = "it's a \\n test'); DROP TABLE threads; -- ünï ✓";
    let params = [SqlValue::Text(Some(tricky)), SqlValue::Int(Some(41))];
    let rider = Rider {
        sql: RIDER,
        params: &params,
    };
    let ride = async |lent: &mut Lent| {
        let ridden = lent
            .begin_with_then("BEGIN", &ECHO, "abcd", rider)
            .await
            .unwrap()
            .expect("sent");
        let head: i64 = ridden.head.expect("one row").try_get(0).unwrap();
        let (rows, affected) = ridden.rider.unwrap();
        let echoed: String = rows[0].try_get(0).unwrap();
        let counted: i64 = rows[0].try_get(1).unwrap();
        (head, echoed, counted, affected)
    };
    let expected = (4, format!("{tricky}|"), 42, 1);

    // First use: every `PREPARE`, `BEGIN` and both `EXECUTE`s in one trip; then without them.
    for _ in 0..2 {
        let mut lent = lender.lend().await.unwrap();
        let before = lender.round_trips();
        assert_eq!(ride(&mut lent).await, expected);
        assert_eq!(lender.round_trips() - before, 1);
        lent.commit().await.unwrap();
    }

    // A lender that did not prepare them gets a connection that holds them (one pool of one
    // connection, handed from one lender to the next): `PREPARE` is refused before anything
    // ran, the server says what it holds, then one trip again.
    let single = sqlx::postgres::PgPoolOptions::new()
        .max_connections(1)
        .connect_with((*pool.connect_options()).clone())
        .await
        .unwrap();
    let first = Lender::new(single.clone());
    let mut lent = first.lend().await.unwrap();
    assert_eq!(ride(&mut lent).await, expected);
    lent.commit().await.unwrap();
    first.close();
    drop(first);
    let fresh = Lender::new(single.clone());
    let mut lent = fresh.lend().await.unwrap();
    let before = fresh.round_trips();
    assert_eq!(ride(&mut lent).await, expected);
    assert_eq!(fresh.round_trips() - before, 3, "refused, asked, ridden");
    lent.commit().await.unwrap();
    let mut lent = fresh.lend().await.unwrap();
    let before = fresh.round_trips();
    assert_eq!(ride(&mut lent).await, expected);
    assert_eq!(fresh.round_trips() - before, 1);

    // The rider deallocated behind the lender's back: its `EXECUTE` fails after the lock
    // answered, the transaction is rolled back, the server asked, and the ride made again.
    lent.commit().await.unwrap();
    let mut lent = fresh.lend().await.unwrap();
    let riders = lent
        .fetch_all(sqlx::query(
            "SELECT name FROM pg_prepared_statements WHERE name LIKE 'haico_r%'",
        ))
        .await
        .unwrap();
    assert!(!riders.is_empty());
    for row in riders {
        let name: String = row.try_get(0).unwrap();
        lent.execute(sqlx::query(&format!("DEALLOCATE {name}")))
            .await
            .unwrap();
    }
    let before = fresh.round_trips();
    assert_eq!(ride(&mut lent).await, expected);
    assert_eq!(
        fresh.round_trips() - before,
        4,
        "failed, rolled back, asked, ridden"
    );
    lent.commit().await.unwrap();

    // A NUL cannot be written as a literal: nothing is sent, for the caller to bind instead.
    let mut lent = fresh.lend().await.unwrap();
    let nul = [SqlValue::Text(Some("a\0b")), SqlValue::Int(Some(1))];
    let before = fresh.round_trips();
    let unsent = lent
        .begin_with_then(
            "BEGIN",
            &ECHO,
            "abcd",
            Rider {
                sql: RIDER,
                params: &nul,
            },
        )
        .await
        .unwrap();
    assert!(unsent.is_none());
    assert_eq!(fresh.round_trips(), before);

    // A rider that fails after the lock answered: the lock's row is there, the rider's error
    // too, and rolling back leaves a connection that works.
    let zero = [SqlValue::Int(Some(0))];
    let ridden = lent
        .begin_with_then(
            "BEGIN",
            &ECHO,
            "abcd",
            Rider {
                sql: "SELECT 1 / $1",
                params: &zero,
            },
        )
        .await
        .unwrap()
        .expect("sent");
    assert_eq!(ridden.head.unwrap().try_get::<i64, _>(0).unwrap(), 4);
    let err = ridden.rider.unwrap_err();
    assert!(err.to_string().contains("division by zero"), "{err}");
    lent.rollback().await.unwrap();
    let mut lent = fresh.lend().await.unwrap();
    assert_eq!(ride(&mut lent).await, expected);
    lent.commit().await.unwrap();
    fresh.close();
    drop((lender, fresh));
    single.close().await;
    test_db.drop().await;
}
