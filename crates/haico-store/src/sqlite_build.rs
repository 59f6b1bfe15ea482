//! How the process's SQLite was compiled, where that decides how fast it runs.
//!
//! libsqlite3-sys compiles SQLite with `SQLITE_ENABLE_MEMORY_MANAGEMENT` (one page cache for
//! every connection, behind one global mutex) and SQLite counts memory by default (behind
//! another). haico's writer and readers work on several threads at once, so both locks were
//! contended on every page and allocation. `.cargo/config.toml` compiles SQLite without them;
//! a build started outside the project folder does not read that file, so the store checks
//! what it got and says so at start-up.

/// The compile-time settings of this SQLite that slow concurrent connections down, as
/// `PRAGMA compile_options` names them; empty when the build is as `.cargo/config.toml` asks.
pub(crate) fn slow_settings() -> Result<Vec<&'static str>, rusqlite::Error> {
    let conn = rusqlite::Connection::open_in_memory()?;
    let mut statement = conn.prepare("PRAGMA compile_options")?;
    let options = statement
        .query_map([], |row| row.get::<_, String>(0))?
        .collect::<Result<Vec<_>, _>>()?;
    let mut slow = Vec::new();
    if options.iter().any(|o| o == "ENABLE_MEMORY_MANAGEMENT") {
        slow.push("ENABLE_MEMORY_MANAGEMENT");
    }
    if !options.iter().any(|o| o == "DEFAULT_MEMSTATUS=0") {
        slow.push("DEFAULT_MEMSTATUS=1");
    }
    Ok(slow)
}

/// Warns, once per process, when this SQLite was built with settings that cost speed.
pub(crate) fn warn_if_slow() {
    static CHECKED: std::sync::Once = std::sync::Once::new();
    CHECKED.call_once(|| match slow_settings() {
        Ok(slow) if slow.is_empty() => {}
        Ok(slow) => tracing::warn!(
            settings = %slow.join(", "),
            "this SQLite was compiled with settings that make haico's concurrent connections \
             wait on global locks (about 10% of SQLite throughput); build haico from its own \
             folder, where .cargo/config.toml sets LIBSQLITE3_FLAGS, or set that variable \
             the same way"
        ),
        Err(err) => tracing::debug!(error = %err, "could not read SQLite's compile options"),
    });
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    /// The tests run on the SQLite the server runs on: the project's build settings apply.
    #[test]
    fn this_build_compiles_sqlite_without_its_global_locks() {
        assert_eq!(super::slow_settings().unwrap(), Vec::<&str>::new());
    }
}
