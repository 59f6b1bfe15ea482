//! Reaching the database, and saying clearly why it could not be reached: which server
//! (`host:port`), what went wrong (refused, no answer, authentication, a missing database, a
//! SQLite path that cannot be written) and what to check. Used when the database is opened
//! (so start-up fails within seconds, not after the pool's patience ran out) and by
//! `/healthz` to explain an outage.

use std::{
    path::{Path, PathBuf},
    time::Duration,
};

use sqlx::{
    Connection,
    postgres::{PgConnectOptions, PgConnection},
};

use crate::{error::StoreError, sqlite::SqliteError};

/// How long opening the database may take before start-up gives up on PostgreSQL: well inside
/// the five seconds within which an unreachable server must be reported.
pub const STARTUP_CONNECT_TIMEOUT: Duration = Duration::from_secs(4);

/// What to check when PostgreSQL cannot be reached; chosen by the cause.
const CHECK_SERVER: &str = "is PostgreSQL running and listening there? Check the host and port \
                            in HAICO_DATABASE_URL";
const CHECK_NETWORK: &str = "is the host reachable from here (network, firewall)? Check the \
                             host and port in HAICO_DATABASE_URL";
const CHECK_CREDENTIALS: &str = "check the user and password in HAICO_DATABASE_URL (and \
                                 pg_hba.conf on the server)";
const CHECK_DATABASE: &str = "create it (e.g. `createdb NAME`) or fix the database name in \
                              HAICO_DATABASE_URL";
const CHECK_URL: &str = "check HAICO_DATABASE_URL";
const CHECK_TLS: &str = "check `sslmode` and the certificates named in HAICO_DATABASE_URL";

/// "PostgreSQL at host:port (database `db`, user `u`)": which server a message is about,
/// never with a password.
pub fn postgres_target(options: &PgConnectOptions) -> String {
    let place = match options.get_socket() {
        Some(socket) => format!("the socket {}", socket.display()),
        None => format!("{}:{}", options.get_host(), options.get_port()),
    };
    let database = options
        .get_database()
        .unwrap_or_else(|| options.get_username());
    format!(
        "PostgreSQL at {place} (database `{database}`, user `{}`)",
        options.get_username()
    )
}

/// Opens one connection to PostgreSQL within `within` and closes it again: `Ok` when the
/// server accepts haico, else an error naming the server, the cause and what to check.
pub async fn probe_postgres(
    options: &PgConnectOptions,
    within: Duration,
) -> Result<(), StoreError> {
    match tokio::time::timeout(within, PgConnection::connect_with(options)).await {
        Ok(Ok(conn)) => {
            let _ = conn.close().await;
            Ok(())
        }
        Ok(Err(error)) => Err(postgres_error(options, &error)),
        Err(_) => Err(StoreError::Unreachable {
            target: postgres_target(options),
            cause: format!("no answer within {}", seconds(within)),
            check: CHECK_NETWORK,
        }),
    }
}

/// Explains a driver error met while connecting to PostgreSQL.
pub fn postgres_error(options: &PgConnectOptions, error: &sqlx::Error) -> StoreError {
    let (cause, check) = match error {
        sqlx::Error::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => {
            ("connection refused".to_string(), CHECK_SERVER)
        }
        sqlx::Error::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => {
            ("the connection timed out".to_string(), CHECK_NETWORK)
        }
        sqlx::Error::Io(io) => (io.to_string(), CHECK_NETWORK),
        sqlx::Error::PoolTimedOut => (
            "no connection could be opened in time".to_string(),
            CHECK_NETWORK,
        ),
        sqlx::Error::Tls(tls) => (format!("TLS failed: {tls}"), CHECK_TLS),
        sqlx::Error::Database(db) => match db.code().as_deref() {
            Some("28P01") | Some("28000") => (
                format!(
                    "authentication failed for user `{}` ({})",
                    options.get_username(),
                    db.message()
                ),
                CHECK_CREDENTIALS,
            ),
            Some("3D000") => (
                format!(
                    "the database `{}` does not exist",
                    options
                        .get_database()
                        .unwrap_or_else(|| options.get_username())
                ),
                CHECK_DATABASE,
            ),
            _ => (db.message().to_string(), CHECK_URL),
        },
        other => (other.to_string(), CHECK_URL),
    };
    StoreError::Unreachable {
        target: postgres_target(options),
        cause,
        check,
    }
}

/// Refuses a SQLite path whose directory is missing (or not a directory) before SQLite says
/// only "unable to open database file".
pub fn check_sqlite_directory(path: &Path) -> Result<(), StoreError> {
    let directory = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let problem = match std::fs::metadata(&directory) {
        Ok(meta) if meta.is_dir() => return Ok(()),
        Ok(_) => format!("{} is not a directory", directory.display()),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            format!("the directory {} does not exist", directory.display())
        }
        Err(err) => format!(
            "the directory {} cannot be read: {err}",
            directory.display()
        ),
    };
    Err(StoreError::SqlitePath {
        path: path.display().to_string(),
        reason: problem,
    })
}

/// Explains why SQLite could not open `path`: the operating system's own reason when the file
/// cannot be opened for writing (permissions, a read-only disk), else the driver's.
pub fn sqlite_error(path: &Path, error: &SqliteError) -> StoreError {
    let reason = match std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
    {
        Err(io) => format!("{io} ({error})"),
        Ok(_) => error.to_string(),
    };
    StoreError::SqlitePath {
        path: path.display().to_string(),
        reason,
    }
}

/// A duration as people write it: "4 s", "1.5 s", "500 ms".
pub fn seconds(duration: Duration) -> String {
    if duration < Duration::from_secs(1) {
        format!("{} ms", duration.as_millis())
    } else if duration.subsec_millis() == 0 {
        format!("{} s", duration.as_secs())
    } else {
        format!("{:.1} s", duration.as_secs_f64())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::str::FromStr;

    use super::*;

    #[test]
    fn the_target_names_host_port_database_and_user_but_no_password() {
        let options =
            PgConnectOptions::from_str("postgres://ada:secret@db.example:6543/haico").unwrap();
        let target = postgres_target(&options);
        assert_eq!(
            target,
            "PostgreSQL at db.example:6543 (database `haico`, user `ada`)"
        );
        assert!(!target.contains("secret"));
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(seconds(Duration::from_millis(500)), "500 ms");
        assert_eq!(seconds(Duration::from_secs(4)), "4 s");
        assert_eq!(seconds(Duration::from_millis(1500)), "1.5 s");
    }

    #[test]
    fn a_missing_directory_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nowhere").join("haico.db");
        let text = check_sqlite_directory(&path).unwrap_err().to_string();
        assert!(text.contains(&path.display().to_string()), "{text}");
        assert!(text.contains("does not exist"), "{text}");
        assert!(check_sqlite_directory(&dir.path().join("haico.db")).is_ok());
        assert!(check_sqlite_directory(Path::new("haico.db")).is_ok());
    }
}
