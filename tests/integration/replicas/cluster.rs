//! Three real `haico serve` processes on one PostgreSQL database, as a load balancer without
//! stickiness would use them: events from each replica reach the event streams of the others
//! exactly once and in order (`Last-Event-ID` resumes anywhere); one turn per thread holds
//! everywhere; a cancel reaches the turn from any replica; a replica killed with `kill -9`
//! mid-turn has its turn ended by the others within 30 s and the thread takes a new turn; a
//! replica that starts while others run turns disturbs none; a replica that shuts down ends its
//! turns cleanly.

use crate::common;

use std::time::{Duration, Instant};

use common::{
    cluster::*,
    mock_llm::{Script, call},
    sse::SseReader,
};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_from_each_replica_reach_the_others_once_in_order_and_resume_anywhere() {
    needs!(postgres);
    let cluster = Cluster::start(3, vec![], &[]).await;
    let r = &cluster.replicas;
    assert_eq!(
        post(&r[0], "/api/threads", json!({"id": "shared"})).await.0,
        201
    );
    let mut streams = Vec::new();
    for replica in r {
        streams.push(events(replica, "shared", None).await);
    }
    // Writes land round-robin; each answered write is one logged event.
    const WRITES: usize = 30;
    let mut lags = Vec::new();
    let mut ids: Vec<Vec<i64>> = vec![Vec::new(); 3];
    for n in 0..WRITES {
        let (status, _) = post(
            &r[n % 3],
            "/api/threads/shared/todos",
            json!({"text": format!("step {n}")}),
        )
        .await;
        assert_eq!(status, 201);
        // Every other replica's stream shows it: how long after the answer.
        let answered = Instant::now();
        for (i, stream) in streams.iter_mut().enumerate() {
            let frame = stream.next(WAIT).await;
            assert_eq!(frame.event, "workspace", "replica {i}: {frame:?}");
            ids[i].push(frame.id.expect("a durable event has an id"));
            if i != n % 3 {
                lags.push(answered.elapsed());
            }
        }
    }
    // The same events, in the same strictly rising order, on every replica.
    assert!(ids[0].windows(2).all(|w| w[0] < w[1]), "{ids:?}");
    assert_eq!(ids[0], ids[1]);
    assert_eq!(ids[0], ids[2]);
    let last = get(&r[1], "/api/threads/shared/todos").await;
    assert_eq!(last.as_array().map(Vec::len), Some(WRITES));
    // Nothing more (no duplicates) on any stream.
    for stream in &mut streams {
        assert!(stream.try_next(Duration::from_millis(600)).await.is_none());
    }
    lags.sort();
    let p99 = lags[lags.len() * 99 / 100 - 1];
    assert!(
        p99 < Duration::from_millis(500),
        "cross-replica lag p99 {p99:?}"
    );

    // Resume on another replica from the middle: exactly the rest, in order.
    let mut resumed = events(&r[2], "shared", Some(ids[0][9])).await;
    let rest = durable_until(&mut resumed, *ids[0].last().unwrap()).await;
    assert_eq!(rest, ids[0][10..].to_vec());
    cluster.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_turn_per_thread_everywhere_and_cancel_from_another_replica() {
    needs!(postgres);
    let cluster = Cluster::start(
        3,
        vec![
            Script::tool_calls(vec![call(
                "set_objective",
                json!({"objective": "Ship it", "action_and_reasoning": "Setting the goal."}),
            )]),
            Script::text("a long answer that never ends").stall_after(3),
            Script::text("Back again."),
        ],
        &[],
    )
    .await;
    let r = &cluster.replicas;
    assert_eq!(
        post(&r[0], "/api/threads", json!({"id": "busy"})).await.0,
        201
    );
    // Nothing runs yet: a cancel anywhere is a 409.
    assert_eq!(
        post(&r[2], "/api/threads/busy/cancel", json!({})).await.0,
        409
    );
    let mut watcher = events(&r[1], "busy", None).await;
    let mut chat = SseReader::post(
        &stream_client(),
        &chat_url(&r[0], "busy"),
        &json!({"message": "Go"}),
    )
    .await;
    until(&mut chat, "token").await;
    for replica in r {
        let (status, body) = post(
            replica,
            "/api/threads/busy/chat",
            json!({"message": "Again"}),
        )
        .await;
        assert_eq!(status, 409, "{body}");
    }
    // The watcher on another replica sees the turn as it runs.
    let seen = until(&mut watcher, "workspace").await;
    assert_eq!(
        seen.iter().map(|f| f.event.as_str()).collect::<Vec<_>>(),
        ["turn", "step", "workspace"]
    );
    assert_eq!(seen[0].event, "turn");

    let (status, body) = post(&r[2], "/api/threads/busy/cancel", json!({})).await;
    assert_eq!((status, body), (202, json!({"cancelled": true})));
    let asked = Instant::now();
    let end = until(&mut chat, "done").await;
    assert!(
        asked.elapsed() < Duration::from_secs(3),
        "{:?}",
        asked.elapsed()
    );
    let error = end
        .iter()
        .find(|f| f.event == "error")
        .expect("an error event");
    assert!(
        error.data["message"]
            .as_str()
            .unwrap()
            .contains("cancelled"),
        "{error:?}"
    );
    assert_eq!(end.last().unwrap().data["status"], "cancelled");
    let watched = until(&mut watcher, "done").await;
    assert_eq!(watched.last().unwrap().data["status"], "cancelled");

    let turn = turn_status(&r[1], "busy", 1).await;
    assert_eq!(turn["status"], "cancelled");
    assert_eq!(turn["steps"].as_array().map(Vec::len), Some(1));
    // The thread is free everywhere: the next turn runs on yet another replica.
    let mut next = SseReader::post(
        &stream_client(),
        &chat_url(&r[1], "busy"),
        &json!({"message": "Again"}),
    )
    .await;
    let frames = until(&mut next, "done").await;
    assert_eq!(frames.last().unwrap().data["status"], "completed");
    cluster.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_replicas_turn_ends_within_30_s_and_the_thread_takes_a_new_turn() {
    needs!(postgres);
    // The default lease: the promise is about what operators get.
    let mut cluster = Cluster::start(
        3,
        vec![
            Script::tool_calls(vec![call(
                "add_todos",
                json!({"steps": [{"text": "Draft"}], "action_and_reasoning": "Planning the work."}),
            )]),
            Script::text("thinking very hard about it").stall_after(3),
            Script::text("Here I am."),
        ],
        &[],
    )
    .await;
    assert_eq!(
        post(
            &cluster.replicas[0],
            "/api/threads",
            json!({"id": "orphan"})
        )
        .await
        .0,
        201
    );
    let mut watcher = events(&cluster.replicas[1], "orphan", None).await;
    let mut chat = SseReader::post(
        &stream_client(),
        &chat_url(&cluster.replicas[0], "orphan"),
        &json!({"message": "Plan it"}),
    )
    .await;
    until(&mut chat, "token").await;
    until(&mut watcher, "step").await;

    cluster.replicas[0].kill();
    let killed = Instant::now();
    let (status, _) = post(
        &cluster.replicas[2],
        "/api/threads/orphan/chat",
        json!({"message": "Hello?"}),
    )
    .await;
    assert_eq!(
        status, 409,
        "the dead replica's turn still holds the thread until its lease ends"
    );

    let end = until(&mut watcher, "done").await;
    let took = killed.elapsed();
    assert!(took < Duration::from_secs(30), "took {took:?}");
    let error = end
        .iter()
        .find(|f| f.event == "error")
        .expect("an error event");
    assert!(
        error.data["message"]
            .as_str()
            .unwrap()
            .contains("server running this turn stopped"),
        "{error:?}"
    );
    assert_eq!(
        end.last().unwrap().data,
        json!({"turn_index": 1, "status": "failed", "usage": null}),
        "a turn another replica ended has no usage to report"
    );
    let turn = turn_status(&cluster.replicas[2], "orphan", 1).await;
    assert_eq!(turn["status"], "failed");
    assert_eq!(
        turn["steps"][0]["tool"], "add_todos",
        "the step it made is kept: {turn}"
    );

    let mut next = SseReader::post(
        &stream_client(),
        &chat_url(&cluster.replicas[2], "orphan"),
        &json!({"message": "Hello?"}),
    )
    .await;
    let frames = until(&mut next, "done").await;
    assert_eq!(frames.last().unwrap().data["status"], "completed");
    // Exactly one replica ended the turn.
    let enders = cluster.replicas[1..]
        .iter()
        .filter(|r| r.log_text().contains("ended a turn whose replica stopped"))
        .count();
    assert_eq!(enders, 1);
    cluster.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_that_starts_disturbs_no_running_turn_and_one_that_stops_ends_its_own() {
    needs!(postgres);
    let mut cluster = Cluster::start(
        2,
        vec![
            Script::text("slowly, word by word, the answer arrives")
                .chunk_delay(Duration::from_millis(150)),
            Script::text("this one never ends").stall_after(3),
        ],
        &[("HAICO_TURN_LEASE_SECS", "3")],
    )
    .await;
    for id in ["steady", "stopping"] {
        assert_eq!(
            post(&cluster.replicas[0], "/api/threads", json!({"id": id}))
                .await
                .0,
            201
        );
    }
    let mut chat = SseReader::post(
        &stream_client(),
        &chat_url(&cluster.replicas[0], "steady"),
        &json!({"message": "Take your time"}),
    )
    .await;
    until(&mut chat, "token").await;
    // A third replica starts (and a second one restarts) while the turn runs.
    let newcomer = start_replica(
        &cluster.db,
        &cluster.mock,
        2,
        &[("HAICO_TURN_LEASE_SECS", "3")],
    )
    .await;
    cluster.replicas[1].restart().await;
    let frames = until(&mut chat, "done").await;
    assert_eq!(
        frames.last().unwrap().data["status"],
        "completed",
        "{frames:#?}"
    );
    assert!(frames.iter().all(|f| f.event != "error"), "{frames:#?}");

    // A turn on the newcomer, then the newcomer shuts down: its turn ends saying so, at once.
    let mut watcher = events(&cluster.replicas[0], "stopping", None).await;
    let mut running = SseReader::post(
        &stream_client(),
        &chat_url(&newcomer, "stopping"),
        &json!({"message": "Go on"}),
    )
    .await;
    until(&mut running, "token").await;
    let pid = newcomer.pid();
    let stopped = Instant::now();
    assert!(
        std::process::Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()
            .unwrap()
            .success()
    );
    let end = until(&mut watcher, "done").await;
    assert!(
        stopped.elapsed() < Duration::from_secs(5),
        "{:?}",
        stopped.elapsed()
    );
    let error = end
        .iter()
        .find(|f| f.event == "error")
        .expect("an error event");
    assert!(
        error.data["message"]
            .as_str()
            .unwrap()
            .contains("shut down"),
        "{error:?}"
    );
    assert_eq!(end.last().unwrap().data["status"], "failed");
    // And the thread is free at once.
    let (status, _) = post(
        &cluster.replicas[0],
        "/api/threads/stopping/cancel",
        json!({}),
    )
    .await;
    assert_eq!(status, 409);
    drop(newcomer);
    cluster.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_listen_connection_is_reported_and_replaced_without_losing_events() {
    needs!(postgres);
    let cluster = Cluster::start(2, vec![], &[]).await;
    let r = &cluster.replicas;
    assert_eq!(
        post(&r[0], "/api/threads", json!({"id": "cut"})).await.0,
        201
    );
    let mut stream = events(&r[1], "cut", None).await;
    // Cut every LISTEN connection of this schema's channel (both replicas') from the server side.
    let admin = sqlx::PgPool::connect(&common::postgres_url())
        .await
        .unwrap();
    let schema = cluster
        .db
        .url
        .rsplit("search_path%3D")
        .next()
        .unwrap()
        .to_string();
    let cut: Vec<i32> = sqlx::query_scalar(
        "SELECT pid FROM pg_stat_activity WHERE query LIKE 'LISTEN %' AND query LIKE $1",
    )
    .bind(format!("%{schema}%"))
    .fetch_all(&admin)
    .await
    .unwrap();
    assert_eq!(cut.len(), 2, "one LISTEN connection per replica");
    for pid in &cut {
        sqlx::query("SELECT pg_terminate_backend($1)")
            .bind(pid)
            .execute(&admin)
            .await
            .unwrap();
    }
    // Writes right away still reach the other replica's stream, in order (by the poll while
    // the listener reconnects, by the doorbell after).
    let mut ids = Vec::new();
    for n in 0..5 {
        assert_eq!(
            post(
                &r[0],
                "/api/threads/cut/todos",
                json!({"text": format!("s{n}")})
            )
            .await
            .0,
            201
        );
        ids.push(stream.next(WAIT).await.id.unwrap());
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(ids.windows(2).all(|w| w[1] == w[0] + 1), "{ids:?}");
    // Both replicas said so and came back.
    for replica in r {
        let deadline = Instant::now() + WAIT;
        while !replica.log_text().contains("the LISTEN connection is back") {
            assert!(Instant::now() < deadline, "{}", replica.log_tail(20));
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(
            replica
                .log_text()
                .contains("the LISTEN connection was lost")
        );
        let health = get(replica, "/healthz").await;
        assert_eq!(health["events"], json!({"mode": "listen", "ok": true}));
    }
    let reconnected: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'LISTEN %' AND query LIKE $1",
    )
    .bind(format!("%{schema}%"))
    .fetch_one(&admin)
    .await
    .unwrap();
    assert_eq!(reconnected, 2);
    admin.close().await;
    cluster.cleanup().await;
}

#[test]
fn replica_settings_with_bad_values_stop_start_up_naming_the_setting() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("bad.db").display());
    for (key, value, named) in [
        ("HAICO_REPLICA_ID", "web 1", "HAICO_REPLICA_ID"),
        ("HAICO_REPLICA_ID", "x/y", "HAICO_REPLICA_ID"),
        ("HAICO_TURN_LEASE_SECS", "1", "turn-lease-secs"),
        ("HAICO_LISTEN_NOTIFY", "sometimes", "listen-notify"),
    ] {
        let (took, output) =
            common::child::start_fails(&url, &[(key, value)], Duration::from_secs(10));
        assert!(took < Duration::from_secs(10), "{key}={value}: {took:?}");
        assert!(output.contains(named), "{key}={value}: {output}");
    }
    // Nothing was written: a refused setting stops before the database is opened.
    assert!(!dir.path().join("bad.db").exists());
}
