//! Queries written once for every connection a repository can hold: PostgreSQL through sqlx,
//! SQLite's writer and readers inline through rusqlite (`sqlite/`).
//!
//! A query is its SQL (the same `$N` placeholders on both engines), its parameters as
//! [`Value`]s and the Rust shape of its rows (a tuple of [`Column`] types). Every store query
//! goes through here, so that on SQLite it runs on the caller's thread.
//!
//! Parameters are typed even when NULL, because PostgreSQL infers a parameter's type from what
//! the driver declares for it: an untyped NULL where the column is `bigint` is an error.

use chrono::{DateTime, SecondsFormat, Utc};
use rusqlite::types::{ToSqlOutput, ValueRef};
use sqlx::{Row as _, postgres::PgRow};

use crate::thread_id::ThreadId;

/// One parameter of a query, typed even when NULL.
#[derive(Debug, Clone, Copy)]
pub enum Value<'a> {
    /// `bigint` (`int8`).
    Int(Option<i64>),
    /// `double precision` (`float8`).
    Real(Option<f64>),
    /// `boolean`.
    Bool(Option<bool>),
    /// `text`.
    Text(Option<&'a str>),
    /// `timestamptz` (on SQLite, RFC 3339 text).
    Time(Option<DateTime<Utc>>),
}

macro_rules! value_from {
    ($($ty:ty => $variant:ident),* $(,)?) => {$(
        impl<'a> From<$ty> for Value<'a> {
            fn from(value: $ty) -> Self {
                Value::$variant(Some(value.into()))
            }
        }
        impl<'a> From<Option<$ty>> for Value<'a> {
            fn from(value: Option<$ty>) -> Self {
                Value::$variant(value.map(Into::into))
            }
        }
    )*};
}

value_from!(i64 => Int, i32 => Int, f64 => Real, bool => Bool, &'a str => Text,
    DateTime<Utc> => Time);

impl<'a> From<&'a String> for Value<'a> {
    fn from(value: &'a String) -> Self {
        Value::Text(Some(value))
    }
}

impl<'a> From<Option<&'a String>> for Value<'a> {
    fn from(value: Option<&'a String>) -> Self {
        Value::Text(value.map(String::as_str))
    }
}

/// A thread id is stored as its text.
impl<'a> From<&'a ThreadId> for Value<'a> {
    fn from(value: &'a ThreadId) -> Self {
        Value::Text(Some(value.as_str()))
    }
}

/// A query's parameters, in `$1`, `$2`, … order.
macro_rules! params {
    ($($value:expr),* $(,)?) => {
        [$($crate::query::Value::from($value)),*]
    };
}
pub(crate) use params;

/// How a time is written into SQLite: the form sqlx wrote, so rows of databases written by
/// earlier builds and rows written now read back alike and sort as text the same way.
fn sqlite_time(time: &DateTime<Utc>) -> String {
    time.to_rfc3339_opts(SecondsFormat::AutoSi, false)
}

/// Reads a time SQLite holds as text, in every form earlier builds (through sqlx) wrote.
fn parse_sqlite_time(text: &str) -> Option<DateTime<Utc>> {
    if let Ok(time) = DateTime::parse_from_rfc3339(text) {
        return Some(time.with_timezone(&Utc));
    }
    for format in ["%F %T%.f%:z", "%F %T%.f%#z", "%FT%T%.f%#z"] {
        if let Ok(time) = DateTime::parse_from_str(text, format) {
            return Some(time.with_timezone(&Utc));
        }
    }
    for format in ["%F %T%.f", "%FT%T%.f"] {
        if let Ok(time) = chrono::NaiveDateTime::parse_from_str(text, format) {
            return Some(time.and_utc());
        }
    }
    None
}

impl rusqlite::ToSql for Value<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match *self {
            Value::Int(Some(v)) => ToSqlOutput::from(v),
            Value::Real(Some(v)) => ToSqlOutput::from(v),
            Value::Bool(Some(v)) => ToSqlOutput::from(v),
            Value::Text(Some(v)) => ToSqlOutput::Borrowed(ValueRef::Text(v.as_bytes())),
            Value::Time(Some(v)) => ToSqlOutput::from(sqlite_time(&v)),
            Value::Int(None)
            | Value::Real(None)
            | Value::Bool(None)
            | Value::Text(None)
            | Value::Time(None) => ToSqlOutput::from(rusqlite::types::Null),
        })
    }
}

/// A column type a query can return, read the same from either driver, by position (in a
/// tuple) or by name (in a [`row_shape!`] struct).
pub(crate) trait Column: Sized {
    fn from_postgres<I: sqlx::ColumnIndex<PgRow>>(row: &PgRow, at: I) -> Result<Self, sqlx::Error>;
    fn from_inline<I: rusqlite::RowIndex>(row: &rusqlite::Row<'_>, at: I)
    -> rusqlite::Result<Self>;
}

macro_rules! column_via_drivers {
    ($($ty:ty),* $(,)?) => {$(
        impl Column for $ty {
            fn from_postgres<I: sqlx::ColumnIndex<PgRow>>(
                row: &PgRow,
                at: I,
            ) -> Result<Self, sqlx::Error> {
                row.try_get(at)
            }
            fn from_inline<I: rusqlite::RowIndex>(
                row: &rusqlite::Row<'_>,
                at: I,
            ) -> rusqlite::Result<Self> {
                row.get(at)
            }
        }
    )*};
}

column_via_drivers!(
    i64,
    Option<i64>,
    f64,
    Option<f64>,
    bool,
    Option<bool>,
    String,
    Option<String>,
    Vec<u8>,
    Option<Vec<u8>>
);

/// A time from SQLite's text, as [`parse_sqlite_time`] reads it.
fn inline_time(text: &str) -> rusqlite::Result<DateTime<Utc>> {
    parse_sqlite_time(text).ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(
            0,
            rusqlite::types::Type::Text,
            format!("not a time: {text:?}").into(),
        )
    })
}

impl Column for DateTime<Utc> {
    fn from_postgres<I: sqlx::ColumnIndex<PgRow>>(row: &PgRow, at: I) -> Result<Self, sqlx::Error> {
        row.try_get(at)
    }

    fn from_inline<I: rusqlite::RowIndex>(
        row: &rusqlite::Row<'_>,
        at: I,
    ) -> rusqlite::Result<Self> {
        inline_time(&row.get::<_, String>(at)?)
    }
}

impl Column for Option<DateTime<Utc>> {
    fn from_postgres<I: sqlx::ColumnIndex<PgRow>>(row: &PgRow, at: I) -> Result<Self, sqlx::Error> {
        row.try_get(at)
    }

    fn from_inline<I: rusqlite::RowIndex>(
        row: &rusqlite::Row<'_>,
        at: I,
    ) -> rusqlite::Result<Self> {
        row.get::<_, Option<String>>(at)?
            .map(|text| inline_time(&text))
            .transpose()
    }
}

/// A column some queries of a record leave out: read as `T::default()` when it is missing.
pub(crate) struct OrDefault<T>(pub T);

impl<T: Column + Default> Column for OrDefault<T> {
    fn from_postgres<I: sqlx::ColumnIndex<PgRow>>(row: &PgRow, at: I) -> Result<Self, sqlx::Error> {
        match T::from_postgres(row, at) {
            Err(sqlx::Error::ColumnNotFound(_)) => Ok(OrDefault(T::default())),
            other => other.map(OrDefault),
        }
    }

    fn from_inline<I: rusqlite::RowIndex>(
        row: &rusqlite::Row<'_>,
        at: I,
    ) -> rusqlite::Result<Self> {
        match T::from_inline(row, at) {
            Err(rusqlite::Error::InvalidColumnName(_)) => Ok(OrDefault(T::default())),
            other => other.map(OrDefault),
        }
    }
}

/// A row of a panel read joined to its thread's row (`threads LEFT JOIN` the panel's rows), so
/// that one statement both checks that the thread exists and reads the panel: one round trip
/// where the check and the read were two. The query names the thread's turn index
/// `thread_turn` and says in `found` whether the row carries a panel row; a thread whose panel
/// is empty gives one row without one, a missing thread none at all.
pub(crate) struct OnThread<T> {
    turn: i64,
    row: Option<T>,
}

impl<T: RowShape> RowShape for OnThread<T> {
    fn from_postgres(row: &PgRow) -> Result<Self, sqlx::Error> {
        let turn = i64::from_postgres(row, "thread_turn")?;
        let found = bool::from_postgres(row, "found")?;
        let row = found.then(|| T::from_postgres(row)).transpose()?;
        Ok(Self { turn, row })
    }

    fn from_inline(row: &rusqlite::Row<'_>) -> rusqlite::Result<Self> {
        let turn = i64::from_inline(row, "thread_turn")?;
        let found = bool::from_inline(row, "found")?;
        let row = found.then(|| T::from_inline(row)).transpose()?;
        Ok(Self { turn, row })
    }
}

impl<T> OnThread<T> {
    /// The thread's turn index and the panel's rows, or `None` when the thread does not exist
    /// (no row came back).
    pub(crate) fn gather(rows: Vec<Self>) -> Option<(i64, Vec<T>)> {
        let turn = rows.first()?.turn;
        Some((turn, rows.into_iter().filter_map(|on| on.row).collect()))
    }
}

/// A row's Rust shape: a tuple of [`Column`]s, in the query's column order.
pub(crate) trait RowShape: Sized {
    fn from_postgres(row: &PgRow) -> Result<Self, sqlx::Error>;
    fn from_inline(row: &rusqlite::Row<'_>) -> rusqlite::Result<Self>;
}

macro_rules! row_shape_tuple {
    ($($name:ident : $index:tt),+) => {
        impl<$($name: Column),+> RowShape for ($($name,)+) {
            fn from_postgres(row: &PgRow) -> Result<Self, sqlx::Error> {
                Ok(($($name::from_postgres(row, $index)?,)+))
            }
            fn from_inline(row: &rusqlite::Row<'_>) -> rusqlite::Result<Self> {
                Ok(($($name::from_inline(row, $index)?,)+))
            }
        }
    };
}

row_shape_tuple!(A: 0);
row_shape_tuple!(A: 0, B: 1);
row_shape_tuple!(A: 0, B: 1, C: 2);
row_shape_tuple!(A: 0, B: 1, C: 2, D: 3);
row_shape_tuple!(A: 0, B: 1, C: 2, D: 3, E: 4);
row_shape_tuple!(A: 0, B: 1, C: 2, D: 3, E: 4, F: 5);
row_shape_tuple!(A: 0, B: 1, C: 2, D: 3, E: 4, F: 5, G: 6);
row_shape_tuple!(A: 0, B: 1, C: 2, D: 3, E: 4, F: 5, G: 6, H: 7);
row_shape_tuple!(A: 0, B: 1, C: 2, D: 3, E: 4, F: 5, G: 6, H: 7, I: 8);
row_shape_tuple!(A: 0, B: 1, C: 2, D: 3, E: 4, F: 5, G: 6, H: 7, I: 8, J: 9);
row_shape_tuple!(A: 0, B: 1, C: 2, D: 3, E: 4, F: 5, G: 6, H: 7, I: 8, J: 9, K: 10);
row_shape_tuple!(A: 0, B: 1, C: 2, D: 3, E: 4, F: 5, G: 6, H: 7, I: 8, J: 9, K: 10, L: 11);

/// Makes a struct a [`RowShape`], read by column name as sqlx's `FromRow` reads it:
/// `row_shape!(Type { column: ColumnType, … } => value)` reads each named column, then builds
/// `value` from those names. Order does not matter; names must be the query's column names.
/// `row_shape!(Type as COLUMNS { … } => value)` also defines `const COLUMNS: &str`, the columns
/// joined with commas, for the queries' `SELECT` and `RETURNING` lists: one list to keep.
macro_rules! row_shape {
    ($ty:ty as $columns:ident {
        $first:ident : $first_col:ty $(, $name:ident : $col:ty)* $(,)?
    } => $build:expr) => {
        const $columns: &str = concat!(stringify!($first) $(, ", ", stringify!($name))*);
        $crate::query::row_shape!($ty { $first: $first_col $(, $name: $col)* } => $build);
    };
    ($ty:ty { $($name:ident : $col:ty),+ $(,)? } => $build:expr) => {
        impl $crate::query::RowShape for $ty {
            fn from_postgres(row: &sqlx::postgres::PgRow) -> Result<Self, sqlx::Error> {
                $(let $name = <$col as $crate::query::Column>::from_postgres(
                    row, stringify!($name))?;)+
                Ok($build)
            }
            fn from_inline(row: &rusqlite::Row<'_>) -> rusqlite::Result<Self> {
                $(let $name = <$col as $crate::query::Column>::from_inline(
                    row, stringify!($name))?;)+
                Ok($build)
            }
        }
    };
}
pub(crate) use row_shape;

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn times_read_back_in_every_form_sqlite_holds() {
        let time = DateTime::parse_from_rfc3339("2026-12-01T20:03:04.123456+00:00")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(sqlite_time(&time), "2026-12-01T20:03:04.123456+00:00");
        for text in [
            "2026-12-01T20:03:04.123456+00:00",
            "2026-12-01 20:03:04.123456+00:00",
            "2026-12-01 20:03:04.123456",
            "2026-12-01T20:03:04.123456",
        ] {
            assert_eq!(parse_sqlite_time(text), Some(time), "{text}");
        }
        assert_eq!(parse_sqlite_time("yesterday"), None);
    }
}
