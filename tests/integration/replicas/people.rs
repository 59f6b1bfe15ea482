//! Replicas remember who a token is and what its person may do with a thread between requests
//! (`people/remembered.rs`); a change made on another replica, or by `haico user` from the
//! command line, reaches every replica's next request through the doorbell, well within the
//! five seconds an answer may be kept at most.

use crate::common;

use std::time::{Duration, Instant};

use common::cluster::*;
use serde_json::{Value, json};

const ADMIN: &str = "replicas-admin-token-0123456789";

/// Long enough for a ring on a busy machine, far below the 5 s an answer is kept without one.
const RING: Duration = Duration::from_millis(2_500);

async fn call(
    server: &common::child::ChildServer,
    token: &str,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    common::send_as(&server.http, method, server.url(path), token, body).await
}

/// Repeats `ask` until it answers `want`, and says how long that took (`None`: not within
/// [`RING`]).
async fn answers_within<F: AsyncFn() -> u16>(want: u16, ask: &F) -> Option<Duration> {
    let start = Instant::now();
    while start.elapsed() < RING {
        if ask().await == want {
            return Some(start.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    None
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sharing_and_accounts_changed_anywhere_hold_on_every_replica_at_once() {
    needs!(postgres);
    let cluster = Cluster::start(2, vec![], &[("HAICO_API_TOKEN", ADMIN)]).await;
    let [r0, r1] = &cluster.replicas[..] else {
        unreachable!("two replicas")
    };
    let (status, ed) = call(
        r0,
        ADMIN,
        reqwest::Method::POST,
        "/api/users",
        Some(json!({"name": "ed"})),
    )
    .await;
    assert_eq!(status, 201, "{ed}");
    let ed = ed["token"].as_str().expect("a personal token").to_string();
    let (status, _) = call(
        r0,
        ADMIN,
        reqwest::Method::POST,
        "/api/threads",
        Some(json!({"id": "shared"})),
    )
    .await;
    assert_eq!(status, 201);
    let share = async |role: &str| {
        let (status, body) = call(
            r0,
            ADMIN,
            reqwest::Method::PUT,
            "/api/threads/shared/members/ed",
            Some(json!({"role": role})),
        )
        .await;
        assert_eq!(status, 200, "{body}");
    };
    let add_step = async || {
        call(
            r1,
            &ed,
            reqwest::Method::POST,
            "/api/threads/shared/todos",
            Some(json!({"text": "a step"})),
        )
        .await
        .0
    };

    // Shared as an editor on one replica: the other lets ed write, and remembers it.
    share("editor").await;
    assert_eq!(add_step().await, 201);
    assert_eq!(add_step().await, 201);

    // Made a viewer on r0: r1's next writes are refused once the ring has arrived.
    share("viewer").await;
    let took = answers_within(403, &add_step).await;
    assert!(took.is_some(), "r1 still let a viewer write after {RING:?}");
    assert_eq!(add_step().await, 403);
    let read = async || {
        call(
            r1,
            &ed,
            reqwest::Method::GET,
            "/api/threads/shared/todos",
            None,
        )
        .await
        .0
    };
    assert_eq!(read().await, 200);

    // Removed from the command line, by a process with no doorbell of its own: r1 stops
    // knowing the token.
    let removed = std::process::Command::new(env!("CARGO_BIN_EXE_haico"))
        .args(["user", "remove", "ed"])
        .env("HAICO_DATABASE_URL", &cluster.db.url)
        .output()
        .unwrap();
    assert!(
        removed.status.success(),
        "{}",
        String::from_utf8_lossy(&removed.stderr)
    );
    let took = answers_within(401, &read).await;
    assert!(
        took.is_some(),
        "r1 still knew a removed account's token after {RING:?}"
    );
    assert_eq!(read().await, 401);
    cluster.cleanup().await;
}
