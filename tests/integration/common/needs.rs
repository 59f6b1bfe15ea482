//! Parts of the suite that need something outside the crate: a PostgreSQL server, Chromium
//! with chromedriver, nginx, openssl, systemd-analyze, Python's MCP SDK, the npm
//! package `@modelcontextprotocol/server-everything`. A plain `cargo test` on a machine without them still passes: each
//! test that needs a missing part returns at its start, and the first one prints a note on
//! stderr naming the part and how to provide it. With `HAICO_TEST_REQUIRE_ALL=1` (what
//! `.ci/run` sets) a missing part fails the test instead, so CI cannot go green on half a suite.

use std::{
    io::Write,
    net::{TcpStream, ToSocketAddrs},
    path::Path,
    sync::OnceLock,
    time::Duration,
};

use super::postgres_url;

/// Debian's Chromium, which the browser tests drive.
pub const CHROMIUM: &str = "/usr/bin/chromium";
/// Debian's chromedriver, through which they drive it.
pub const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// Whether PostgreSQL answers at `HAICO_TEST_POSTGRES_URL`: the test goes on when it does.
pub fn postgres() -> bool {
    static FOUND: OnceLock<Result<(), String>> = OnceLock::new();
    present(&FOUND, "the PostgreSQL cases", || {
        let url = postgres_url();
        let parsed = reqwest::Url::parse(&url).map_err(|e| format!("{url} is not a URL: {e}"))?;
        let host = parsed.host_str().unwrap_or("127.0.0.1").to_string();
        let port = parsed.port().unwrap_or(5432);
        let answers = (host.as_str(), port)
            .to_socket_addrs()
            .map(|addrs| {
                addrs
                    .into_iter()
                    .any(|a| TcpStream::connect_timeout(&a, Duration::from_secs(2)).is_ok())
            })
            .unwrap_or(false);
        if answers {
            Ok(())
        } else {
            Err(format!(
                "PostgreSQL does not answer at {host}:{port}. Start it (`bash .ci/run` does) or \
                 point HAICO_TEST_POSTGRES_URL at a server where user postgres may create schemas"
            ))
        }
    })
}

/// Whether headless Chromium and chromedriver are installed (Debian's packages).
pub fn chromium() -> bool {
    static FOUND: OnceLock<Result<(), String>> = OnceLock::new();
    present(&FOUND, "the browser tests", || {
        let missing: Vec<&str> = [CHROMIUM, CHROMEDRIVER]
            .into_iter()
            .filter(|path| !Path::new(path).exists())
            .collect();
        if missing.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "{} not installed. Install Debian's chromium and chromium-driver \
                 (`bash .ci/run` does)",
                missing.join(" and ")
            ))
        }
    })
}

/// Whether `nginx` is on the PATH.
pub fn nginx() -> bool {
    static FOUND: OnceLock<Result<(), String>> = OnceLock::new();
    present(&FOUND, "the nginx tests", || {
        on_path("nginx").then_some(()).ok_or_else(|| {
            "nginx is not on the PATH. Install Debian's nginx and add /usr/sbin to the \
             PATH (`bash .ci/run` does both)"
                .to_string()
        })
    })
}

/// Whether the `openssl` command is on the PATH, to make a test's certificates.
pub fn openssl() -> bool {
    static FOUND: OnceLock<Result<(), String>> = OnceLock::new();
    present(&FOUND, "the TLS tests", || {
        on_path("openssl").then_some(()).ok_or_else(|| {
            "openssl is not on the PATH. Install Debian's openssl (`bash .ci/run` does)".to_string()
        })
    })
}

fn on_path(command: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(command).is_file()))
}

/// Whether `systemd-analyze` (Debian's systemd package) is installed, to check the unit in
/// `deploy/`.
pub fn systemd_analyze() -> bool {
    static FOUND: OnceLock<Result<(), String>> = OnceLock::new();
    present(&FOUND, "the systemd unit check", || {
        let found = std::process::Command::new("systemd-analyze")
            .arg("--version")
            .output()
            .is_ok_and(|out| out.status.success());
        if found {
            Ok(())
        } else {
            Err(
                "systemd-analyze is not installed. Install Debian's systemd package \
                 (`bash .ci/run` does)"
                    .to_string(),
            )
        }
    })
}

/// Whether `python3` can import the official MCP Python SDK (`pip install mcp`), with which
/// the MCP client tests' stdio server is written (`tests/fixtures/mcp/tools_server.py`).
pub fn python_mcp() -> bool {
    static FOUND: OnceLock<Result<(), String>> = OnceLock::new();
    present(
        &FOUND,
        "the MCP client tests against a Python server",
        || {
            let found = std::process::Command::new("python3")
                .args(["-c", "import mcp.server.fastmcp"])
                .output()
                .is_ok_and(|out| out.status.success());
            if found {
                Ok(())
            } else {
                Err(
                    "python3 cannot import the MCP SDK. Install it with `python3 -m pip install \
                 'mcp>=1.9,<2'` (`bash .ci/run` does)"
                        .to_string(),
                )
            }
        },
    )
}

/// Where `.ci/run` installs `@modelcontextprotocol/server-everything` (npm).
pub const EVERYTHING: &str = "target/mcp-everything/node_modules/.bin/mcp-server-everything";

/// Whether the reference MCP server `@modelcontextprotocol/server-everything` is installed at
/// [`EVERYTHING`] (under the crate's folder).
pub fn everything() -> bool {
    static FOUND: OnceLock<Result<(), String>> = OnceLock::new();
    present(
        &FOUND,
        "the MCP client tests against server-everything",
        || {
            if Path::new(env!("CARGO_MANIFEST_DIR"))
                .join(EVERYTHING)
                .is_file()
            {
                Ok(())
            } else {
                Err(format!(
                    "{EVERYTHING} is missing. Install it with `npm install --prefix \
                 target/mcp-everything @modelcontextprotocol/server-everything@2026.8.31` \
                 (`bash .ci/run` does)"
                ))
            }
        },
    )
}

/// `true` when the part is there (`probe` runs once per process, its answer kept in `found`);
/// otherwise fails under `HAICO_TEST_REQUIRE_ALL=1`, or says once, on the real stderr (the
/// test harness captures `eprintln!`), that `what` is skipped.
fn present(
    found: &'static OnceLock<Result<(), String>>,
    what: &str,
    probe: impl FnOnce() -> Result<(), String>,
) -> bool {
    let Err(why) = found.get_or_init(probe) else {
        return true;
    };
    if require_all() {
        panic!("{why} (HAICO_TEST_REQUIRE_ALL=1: every part of the suite must run)");
    }
    static SAID: OnceLock<std::sync::Mutex<Vec<String>>> = OnceLock::new();
    let mut said = SAID.get_or_init(Default::default).lock().unwrap();
    if !said.iter().any(|s| s == what) {
        said.push(what.to_string());
        let _ = writeln!(
            std::io::stderr(),
            "\nnote: skipping {what} (each returns without running): {why}; \
             HAICO_TEST_REQUIRE_ALL=1 makes this a failure."
        );
    }
    false
}

fn require_all() -> bool {
    std::env::var("HAICO_TEST_REQUIRE_ALL").is_ok_and(|v| v == "1" || v == "true")
}

/// Returns from the test when a part it needs is missing: `needs!(postgres)`,
/// `needs!(chromium, postgres)`.
#[macro_export]
macro_rules! needs {
    ($($part:ident),+) => {
        if !($($crate::common::needs::$part())&&+) {
            return;
        }
    };
}
