//! How a transaction runs one statement: inline on the caller's thread for SQLite's
//! connections, through sqlx for PostgreSQL; the first statement of an agent's write is handed
//! to the thread's lock to ride with it (`thread_lock.rs`).

use std::ops::ControlFlow;

use crate::{
    error::DriverError, query::RowShape, query::Value, repository::Transaction, repository::Tx,
};

/// Binds each parameter to a sqlx query, by its type.
macro_rules! bind_all {
    ($query:expr, $params:expr) => {{
        let mut query = $query;
        for value in $params {
            query = match *value {
                Value::Int(v) => query.bind(v),
                Value::Real(v) => query.bind(v),
                Value::Bool(v) => query.bind(v),
                Value::Text(v) => query.bind(v),
                Value::Time(v) => query.bind(v),
            };
        }
        query
    }};
}

/// Runs one statement inline, feeding each row to `row` until it says it has had enough;
/// returns the number of rows changed. `$N` placeholders are matched by number, as sqlx does,
/// so a statement may use them in any order and more than once.
fn run_inline(
    conn: &rusqlite::Connection,
    sql: &str,
    params: &[Value<'_>],
    mut row: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<ControlFlow<()>>,
) -> rusqlite::Result<u64> {
    let mut statement = conn.prepare_cached(sql)?;
    for index in 1..=statement.parameter_count() {
        let number = statement
            .parameter_name(index)
            .and_then(|name| name.strip_prefix('$').or_else(|| name.strip_prefix('?')))
            .and_then(|digits| digits.parse::<usize>().ok())
            .unwrap_or(index);
        let value = params.get(number.wrapping_sub(1)).ok_or_else(|| {
            rusqlite::Error::InvalidParameterName(format!("${number} has no value"))
        })?;
        statement.raw_bind_parameter(index, value)?;
    }
    let mut rows = statement.raw_query();
    while let Some(next) = rows.next()? {
        if row(next)?.is_break() {
            break;
        }
    }
    drop(rows);
    Ok(conn.changes())
}

impl Transaction {
    /// Every row `sql` returns.
    pub(crate) async fn fetch_all<T: RowShape>(
        &mut self,
        sql: &str,
        params: &[Value<'_>],
    ) -> Result<Vec<T>, DriverError> {
        if self.thread_head_pending()
            && let Some((rows, _)) = Box::pin(self.ride(sql, params)).await?
        {
            return Ok(rows
                .iter()
                .map(T::from_postgres)
                .collect::<Result<_, _>>()?);
        }
        match &mut self.tx {
            Tx::Sqlite(conn) => {
                let mut out = Vec::new();
                run_inline(conn.inline()?, sql, params, |row| {
                    out.push(T::from_inline(row)?);
                    Ok(ControlFlow::Continue(()))
                })?;
                Ok(out)
            }
            Tx::Postgres(tx) => {
                let rows = tx.fetch_all(bind_all!(sqlx::query(sql), params)).await?;
                Ok(rows
                    .iter()
                    .map(T::from_postgres)
                    .collect::<Result<_, _>>()?)
            }
        }
    }

    /// The first row `sql` returns, if any.
    pub(crate) async fn fetch_optional<T: RowShape>(
        &mut self,
        sql: &str,
        params: &[Value<'_>],
    ) -> Result<Option<T>, DriverError> {
        if self.thread_head_pending()
            && let Some((rows, _)) = Box::pin(self.ride(sql, params)).await?
        {
            return Ok(rows.first().map(T::from_postgres).transpose()?);
        }
        match &mut self.tx {
            Tx::Sqlite(conn) => {
                let mut out = None;
                run_inline(conn.inline()?, sql, params, |row| {
                    out = Some(T::from_inline(row)?);
                    Ok(ControlFlow::Break(()))
                })?;
                Ok(out)
            }
            Tx::Postgres(tx) => {
                let row = tx
                    .fetch_optional(bind_all!(sqlx::query(sql), params))
                    .await?;
                Ok(row.as_ref().map(T::from_postgres).transpose()?)
            }
        }
    }

    /// The one row `sql` returns; no row is [`DriverError::NoRow`].
    pub(crate) async fn fetch_one<T: RowShape>(
        &mut self,
        sql: &str,
        params: &[Value<'_>],
    ) -> Result<T, DriverError> {
        self.fetch_optional(sql, params)
            .await?
            .ok_or(DriverError::NoRow)
    }

    /// Runs `sql` for its effect; returns how many rows it changed.
    pub(crate) async fn execute(
        &mut self,
        sql: &str,
        params: &[Value<'_>],
    ) -> Result<u64, DriverError> {
        if self.thread_head_pending()
            && let Some((_, affected)) = Box::pin(self.ride(sql, params)).await?
        {
            return Ok(affected);
        }
        match &mut self.tx {
            Tx::Sqlite(conn) => Ok(run_inline(conn.inline()?, sql, params, |_| {
                Ok(ControlFlow::Continue(()))
            })?),
            Tx::Postgres(tx) => {
                let done = tx.execute(bind_all!(sqlx::query(sql), params)).await?;
                Ok(done.rows_affected())
            }
        }
    }
}
