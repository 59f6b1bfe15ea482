//! [`Lent::begin_with_then`]: an agent write's `BEGIN`, its thread lock and its first
//! statement in **one round trip**.
//!
//! A tool call's first statement (toggling steps, adding preferences, setting the objective)
//! does not depend on what the lock answers, only on the lock being held when it runs. So
//! instead of waiting for the lock's answer before sending it, the statement rides along in
//! the same simple query, after the lock: the server runs them in order, so it still reads and
//! writes under the lock, and a thread that does not exist shows in the lock's empty answer.
//!
//! A simple query carries no bound parameters, so the rider is prepared under a name of
//! haico's own (once per connection, in the same round trip) and executed with its parameters
//! written as literals ([`literal`]), exactly as the change log's one-trip commit is.

use std::{
    collections::HashMap,
    sync::{LazyLock, Mutex},
};

use futures::TryStreamExt;
use sqlx::{Either, PgConnection, postgres::PgRow};

use super::{DUPLICATE_PREPARED, Known, Lent, Named, UNKNOWN_PREPARED, fetch_all_simple, simple};
use crate::{literal, query::Value};

/// A repository's statement (its SQL as written, with `$1`, `$2`, …) and its parameters, to
/// ride in [`Lent::begin_with_then`]'s round trip.
#[derive(Debug, Clone, Copy)]
pub struct Rider<'a> {
    /// The statement.
    pub sql: &'a str,
    /// Its parameters.
    pub params: &'a [Value<'a>],
}

/// What [`Lent::begin_with_then`]'s round trip answered.
#[derive(Debug)]
pub struct Ridden {
    /// The lock statement's first row; `None` when it found no row.
    pub head: Option<PgRow>,
    /// The rider's rows and how many rows it changed, or its error (the transaction is then
    /// aborted, for the caller to roll back).
    pub rider: Result<(Vec<PgRow>, u64), sqlx::Error>,
}

/// One statement's answer within a simple query: its rows and how many rows it changed.
struct Answer {
    rows: Vec<PgRow>,
    affected: u64,
}

/// Every rider ever prepared in this process, by its SQL and parameter types, numbered in the
/// order they were first seen; on a connection the rider numbered `n` is `haico_r<n>`.
static RIDERS: LazyLock<Mutex<HashMap<String, u32>>> = LazyLock::new(Mutex::default);

/// The number of the rider `sql` with parameters of `types`.
fn rider_id(sql: &str, types: &str) -> u32 {
    let key = format!("{types}{sql}");
    let mut riders = match RIDERS.lock() {
        Ok(riders) => riders,
        Err(poisoned) => poisoned.into_inner(),
    };
    let next = u32::try_from(riders.len()).unwrap_or(u32::MAX);
    *riders.entry(key).or_insert(next)
}

/// The name a rider is prepared under.
fn rider_name(id: u32) -> String {
    format!("{RIDER_PREFIX}{id}")
}

const RIDER_PREFIX: &str = "haico_r";

impl Lent {
    /// Starts a transaction with `begin`, runs `statement` with `argument` (the thread's lock,
    /// as [`begin_with`](Self::begin_with) does) and then `rider`, in **one round trip**: one
    /// simple query holding `BEGIN`, the lock's `EXECUTE` and the rider's, with whatever is not
    /// yet prepared on the connection prepared first. Returns `None`, having sent nothing,
    /// when a parameter of the rider cannot be written as a literal (text holding a NUL): the
    /// caller then begins with the lock alone and sends the rider as usual.
    ///
    /// A connection that went through the pool may already hold some of the statements (a
    /// `PREPARE` then fails before anything else runs) or may have lost them (an `EXECUTE`
    /// fails): either way it asks the server what it holds, once, and tries again.
    pub async fn begin_with_then(
        &mut self,
        begin: &str,
        statement: &Named,
        argument: &str,
        rider: Rider<'_>,
    ) -> Result<Option<Ridden>, sqlx::Error> {
        super::check_inline_argument(argument)?;
        let types = literal::types(rider.params);
        let id = rider_id(rider.sql, &types);
        let name = rider_name(id);
        let Ok(execute) = literal::execute(&name, rider.params) else {
            return Ok(None);
        };
        let tail = format!(
            "{begin}; EXECUTE {}('{argument}'); {execute}",
            statement.name
        );
        let mut learned = false;
        loop {
            let mut sql = String::new();
            let mut prepares = 0;
            if !self.known.named {
                for named in self.lender.companions.iter().copied().chain([statement]) {
                    sql.push_str(&format!(
                        "PREPARE {}{} AS {}; ",
                        named.name, named.params, named.definition
                    ));
                    prepares += 1;
                }
            }
            if !self.known.riders.contains(&id) {
                let body = rider.sql.trim().trim_end_matches(';');
                sql.push_str(&format!("PREPARE {name}{types} AS {body}; "));
                prepares += 1;
            }
            sql.push_str(&tail);
            // Counted open before it is sent, as in `begin`.
            self.open = true;
            self.lender.count_trip();
            let (answers, failure) = answers(self.conn(), sql).await;
            // Every `PREPARE` comes first: past them, all of them held.
            if answers.len() >= prepares {
                self.known.named = true;
                self.known.riders.insert(id);
            }
            let mut answers = answers.into_iter().skip(prepares);
            let began = answers.next();
            let lock = answers.next();
            let ridden = answers.next();
            let code = match &failure {
                Some(sqlx::Error::Database(err)) => err.code().map(|code| code.into_owned()),
                _ => None,
            };
            // A `PREPARE` refused (only ever before the lock), or an `EXECUTE` of something the
            // connection was believed to hold.
            let recoverable = match code.as_deref() {
                Some(DUPLICATE_PREPARED) => lock.is_none(),
                Some(UNKNOWN_PREPARED) => true,
                _ => false,
            };
            if recoverable && !learned {
                learned = true;
                if began.is_some() {
                    // `BEGIN` ran, then an `EXECUTE` found nothing to execute.
                    self.lender.count_trip();
                    let rollback = simple(self.conn(), "ROLLBACK").await;
                    self.saw(&rollback);
                    rollback?;
                }
                // A failed `PREPARE` ran nothing after it; the implicit block is over.
                self.open = false;
                self.learn(statement).await?;
                continue;
            }
            return match (failure, lock) {
                (None, Some(lock)) => {
                    let rider = ridden
                        .map(|answer| (answer.rows, answer.affected))
                        .ok_or_else(|| {
                            sqlx::Error::Protocol("the rider did not answer".to_string())
                        });
                    if rider.is_err() {
                        self.clean = false;
                    }
                    Ok(Some(Ridden {
                        head: lock.rows.into_iter().next(),
                        rider,
                    }))
                }
                (Some(err), Some(lock)) => {
                    self.clean = false;
                    Ok(Some(Ridden {
                        head: lock.rows.into_iter().next(),
                        rider: Err(err),
                    }))
                }
                (Some(err), None) => {
                    self.clean = false;
                    Err(err)
                }
                (None, None) => {
                    self.clean = false;
                    Err(sqlx::Error::Protocol(
                        "the thread's lock did not answer".to_string(),
                    ))
                }
            };
        }
    }

    /// Asks the server which of haico's named statements the connection holds: one round
    /// trip, only after a `PREPARE` or `EXECUTE` found the connection other than believed.
    async fn learn(&mut self, statement: &Named) -> Result<(), sqlx::Error> {
        self.lender.count_trip();
        let rows = fetch_all_simple(
            self.conn(),
            "SELECT name FROM pg_prepared_statements WHERE name LIKE 'haico%'".to_string(),
        )
        .await;
        self.saw(&rows);
        let names: Vec<String> = rows?
            .iter()
            .map(|row| sqlx::Row::try_get::<String, _>(row, 0))
            .collect::<Result<_, _>>()?;
        self.known = known_from(&names, self.lender.companions, statement);
        Ok(())
    }
}

/// What a connection holding prepared statements named `names` is known to hold:
/// [`Known::named`] when every companion and `statement` (the lock) are among them.
fn known_from(names: &[String], companions: &[&Named], statement: &Named) -> Known {
    let named = companions
        .iter()
        .copied()
        .chain([statement])
        .all(|named| names.iter().any(|name| name == named.name));
    let riders = names
        .iter()
        .filter_map(|name| name.strip_prefix(RIDER_PREFIX))
        .filter_map(|id| id.parse::<u32>().ok())
        .collect();
    Known { named, riders }
}

/// Sends `sql` as one simple query and splits what came back by statement, up to the first
/// failure, which is returned alongside.
async fn answers(conn: &mut PgConnection, sql: String) -> (Vec<Answer>, Option<sqlx::Error>) {
    let mut answers = Vec::new();
    let mut rows = Vec::new();
    let failure = {
        let mut stream = sqlx::Executor::fetch_many(conn, sql.as_str());
        loop {
            match stream.try_next().await {
                Ok(Some(Either::Left(done))) => answers.push(Answer {
                    rows: std::mem::take(&mut rows),
                    affected: done.rows_affected(),
                }),
                Ok(Some(Either::Right(row))) => rows.push(row),
                Ok(None) => break None,
                Err(err) => break Some(err),
            }
        }
    };
    (answers, failure)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_rider_keeps_its_number_and_types_tell_riders_apart() {
        let a = rider_id("SELECT $1", "(int8)");
        assert_eq!(rider_id("SELECT $1", "(int8)"), a);
        assert_ne!(rider_id("SELECT $1", "(text)"), a);
        assert_ne!(rider_id("SELECT $1 + 1", "(int8)"), a);
    }

    #[test]
    fn what_a_connection_holds_is_read_from_its_statement_names() {
        const LOG: Named = Named {
            name: "haico_log_change",
            params: "",
            definition: "",
        };
        const LOCK: Named = Named {
            name: "haico_lock_thread",
            params: "",
            definition: "",
        };
        let names: Vec<String> = [
            "haico_lock_thread",
            "haico_log_change",
            "haico_r3",
            "haico_r12",
        ]
        .map(String::from)
        .to_vec();
        let known = known_from(&names, &[&LOG], &LOCK);
        assert!(known.named);
        assert_eq!(known.riders, [3, 12].into_iter().collect());
        let known = known_from(&names[1..], &[&LOG], &LOCK);
        assert!(!known.named, "the lock is missing");
        let known = known_from(&names[..1], &[&LOG], &LOCK);
        assert!(!known.named, "a companion is missing");
        assert!(known.riders.is_empty());
    }
}
