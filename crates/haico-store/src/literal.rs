//! Parameters written into SQL text as PostgreSQL literals, for the places a statement's
//! parameters cannot travel apart from it: `EXECUTE name(…); COMMIT` sent as one simple query
//! ([`Lent::execute_and_commit`](super::lender::Lent::execute_and_commit)), which saves the
//! round trip a separate `COMMIT` costs, and a write's first statement riding with its
//! `BEGIN` and lock ([`Lent::begin_with_then`](super::lender::Lent::begin_with_then)). sqlx
//! sends parameters only with its extended protocol, one statement per exchange.
//!
//! Every value is written so that the server reads back exactly what sqlx would have bound:
//! text in an escape-string literal (`E'…'`, backslashes and quotes doubled), which reads the
//! same whatever `standard_conforming_strings` says; times in RFC 3339 with microseconds (what
//! `timestamptz` keeps); and each parameter's type declared when the statement is prepared
//! ([`types`]), so nothing is left to the server's inference.

use chrono::SecondsFormat;

use super::query::Value;

/// A value no literal can carry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LiteralError {
    /// PostgreSQL's text cannot hold U+0000, and a query's text ends at the first one.
    #[error("parameter ${0} holds a NUL character (U+0000), which PostgreSQL text cannot store")]
    Nul(usize),
}

/// The PostgreSQL type of each parameter, as `PREPARE name(…)` declares them: the types sqlx
/// declares for the same values when it binds them. The change log's declarations are
/// written out by hand (tests hold them to this); a rider's are these
/// ([`Lent::begin_with_then`](super::lender::Lent::begin_with_then)).
pub fn types(params: &[Value<'_>]) -> String {
    let names: Vec<&str> = params.iter().map(type_of).collect();
    format!("({})", names.join(", "))
}

fn type_of(value: &Value<'_>) -> &'static str {
    match value {
        Value::Int(_) => "int8",
        Value::Real(_) => "float8",
        Value::Bool(_) => "bool",
        Value::Text(_) => "text",
        Value::Time(_) => "timestamptz",
    }
}

/// `EXECUTE name(…)` with `params` written as literals.
pub fn execute(name: &str, params: &[Value<'_>]) -> Result<String, LiteralError> {
    let size: usize = params
        .iter()
        .map(|value| match value {
            Value::Text(Some(text)) => text.len() + 4,
            _ => 32,
        })
        .sum();
    let mut sql = String::with_capacity(name.len() + size + 12);
    sql.push_str("EXECUTE ");
    sql.push_str(name);
    sql.push('(');
    for (i, value) in params.iter().enumerate() {
        if i > 0 {
            sql.push_str(", ");
        }
        write(&mut sql, value).map_err(|()| LiteralError::Nul(i + 1))?;
    }
    sql.push(')');
    Ok(sql)
}

/// Writes one value; fails only for text holding a NUL.
fn write(sql: &mut String, value: &Value<'_>) -> Result<(), ()> {
    use std::fmt::Write as _;
    match *value {
        Value::Int(None)
        | Value::Real(None)
        | Value::Bool(None)
        | Value::Text(None)
        | Value::Time(None) => sql.push_str("NULL"),
        Value::Int(Some(n)) => {
            let _ = write!(sql, "{n}");
        }
        Value::Bool(Some(b)) => sql.push_str(if b { "TRUE" } else { "FALSE" }),
        Value::Real(Some(x)) => {
            if x.is_nan() {
                sql.push_str("'NaN'");
            } else if x.is_infinite() {
                sql.push_str(if x > 0.0 { "'Infinity'" } else { "'-Infinity'" });
            } else {
                // Rust's shortest form that reads back as the same double.
                let _ = write!(sql, "'{x:?}'");
            }
        }
        Value::Time(Some(t)) => {
            sql.push('\'');
            sql.push_str(&t.to_rfc3339_opts(SecondsFormat::Micros, true));
            sql.push('\'');
        }
        Value::Text(Some(text)) => {
            if text.contains('\0') {
                return Err(());
            }
            sql.push_str("E'");
            for c in text.chars() {
                match c {
                    '\'' => sql.push_str("''"),
                    '\\' => sql.push_str("\\\\"),
                    c => sql.push(c),
                }
            }
            sql.push('\'');
        }
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use chrono::{DateTime, Utc};

    #[test]
    fn text_is_escaped_so_nothing_in_it_reads_as_sql() {
        let sql = execute(
            "s",
            &[Value::Text(Some(r#"it's a \n "test"'); DROP TABLE t; --"#))],
        )
        .unwrap();
        assert_eq!(
            sql,
            r#"EXECUTE s(E'it''s a \\n "test"''); DROP TABLE t; --')"#
        );
    }

    #[test]
    fn every_kind_of_value_has_its_literal() {
        let time = DateTime::parse_from_rfc3339("2026-12-03T12:00:01.123456789Z")
            .unwrap()
            .with_timezone(&Utc);
        let params = [
            Value::Int(Some(-7)),
            Value::Int(None),
            Value::Bool(Some(true)),
            Value::Bool(Some(false)),
            Value::Real(Some(0.1)),
            Value::Real(Some(f64::NEG_INFINITY)),
            Value::Real(Some(f64::NAN)),
            Value::Time(Some(time)),
            Value::Text(Some("ünïcödé ✓")),
            Value::Text(None),
        ];
        assert_eq!(
            execute("haico_x", &params).unwrap(),
            "EXECUTE haico_x(-7, NULL, TRUE, FALSE, '0.1', '-Infinity', 'NaN', \
             '2026-12-03T12:00:01.123456Z', E'ünïcödé ✓', NULL)"
        );
        assert_eq!(
            types(&params),
            "(int8, int8, bool, bool, float8, float8, float8, timestamptz, text, text)"
        );
    }

    #[test]
    fn a_nul_is_refused_and_named() {
        let err = execute("s", &[Value::Int(Some(1)), Value::Text(Some("a\0b"))]).unwrap_err();
        assert_eq!(err, LiteralError::Nul(2));
        assert!(err.to_string().contains("$2"));
    }
}
