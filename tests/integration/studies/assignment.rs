//! Balanced assignment: equal weights and `k·n` consents give exactly `k` each, in parallel
//! too (and across two replicas on PostgreSQL); weights 2:1 give 2:1; targets cap a condition
//! and a study with no room answers `409 {status: "full"}`.

use futures::future::join_all;
use haico::store::{Database, PoolConfig};
use reqwest::Method;
use serde_json::{Value, json};

use super::{as_participant, design, enter, open_study, server};
use crate::common::{Engine, TestDb, server::TestServer};

/// Enters and consents `n` participants at once through `servers` (round robin); the
/// conditions they were given, by key, and the answers that were not 200.
async fn consent_in_parallel(servers: &[&TestServer], key: &str, n: usize, tag: &str) -> Vec<u16> {
    let runs = (0..n).map(|i| {
        let server = servers[i % servers.len()];
        let pid = format!("{tag}-{i}");
        async move {
            let (status, entered) = enter(server, key, Some(&pid)).await;
            assert_eq!(status, 201, "{entered}");
            let token = entered["participant_token"].as_str().unwrap().to_string();
            as_participant(
                server,
                &token,
                Method::POST,
                "/api/participant/consent",
                Some(json!({"agree": true})),
            )
            .await
            .0
        }
    });
    join_all(runs).await
}

async fn counts(server: &TestServer, id: &str) -> Value {
    server.get(&format!("/api/studies/{id}")).await.expect(200)["counts"]["by_condition"].clone()
}

fn conditions(weights: &[(&str, f64)]) -> Value {
    Value::Array(
        weights
            .iter()
            .map(|(key, weight)| json!({"key": key, "label": key, "weight": weight, "panels": ["document"], "tools": "*"}))
            .collect(),
    )
}

backend_tests! {
    async fn equal_weights_give_exactly_k_each_in_sequence_and_in_parallel(engine) {
        let tdb = TestDb::new(engine).await;
        let server = server(&tdb).await;
        let (id, key) = open_study(&server, &design(conditions(&[("a", 1.0), ("b", 1.0), ("c", 1.0)]))).await;
        for i in 0..6 {
            let statuses = consent_in_parallel(&[&server], &key, 1, &format!("seq{i}")).await;
            assert_eq!(statuses, vec![200]);
        }
        assert_eq!(counts(&server, &id).await, json!({"a": 2, "b": 2, "c": 2}));
        let statuses = consent_in_parallel(&[&server], &key, 30, "par").await;
        assert!(statuses.iter().all(|s| *s == 200), "{statuses:?}");
        assert_eq!(counts(&server, &id).await, json!({"a": 12, "b": 12, "c": 12}));
        server.shutdown().await;
        tdb.cleanup().await;
    }
}

backend_tests! {
    async fn weights_two_to_one_give_two_to_one(engine) {
        let tdb = TestDb::new(engine).await;
        let server = server(&tdb).await;
        let (id, key) = open_study(&server, &design(conditions(&[("heavy", 2.0), ("light", 1.0)]))).await;
        let statuses = consent_in_parallel(&[&server], &key, 30, "w").await;
        assert!(statuses.iter().all(|s| *s == 200), "{statuses:?}");
        assert_eq!(counts(&server, &id).await, json!({"heavy": 20, "light": 10}));
        server.shutdown().await;
        tdb.cleanup().await;
    }
}

backend_tests! {
    async fn targets_are_never_over_filled_and_a_full_study_says_so(engine) {
        let tdb = TestDb::new(engine).await;
        let server = server(&tdb).await;
        let mut capped = conditions(&[("a", 1.0), ("b", 1.0)]);
        capped[0]["target"] = json!(3);
        capped[1]["target"] = json!(2);
        let (id, key) = open_study(&server, &design(capped)).await;
        let statuses = consent_in_parallel(&[&server], &key, 8, "t").await;
        assert_eq!(statuses.iter().filter(|s| **s == 200).count(), 5, "{statuses:?}");
        assert_eq!(statuses.iter().filter(|s| **s == 409).count(), 3, "{statuses:?}");
        assert_eq!(counts(&server, &id).await, json!({"a": 3, "b": 2}));
        let (_, entered) = enter(&server, &key, Some("one-more")).await;
        let token = entered["participant_token"].as_str().unwrap();
        let (status, full) = as_participant(&server, token, Method::POST, "/api/participant/consent", Some(json!({"agree": true}))).await;
        assert_eq!(status, 409);
        assert_eq!(full["status"], "full");
        // Nothing was made for it: it may consent once a condition takes people again.
        server.patch(&format!("/api/studies/{id}"), &json!({"targets": {"b": 3}})).await.expect(200);
        let (status, assigned) = as_participant(&server, token, Method::POST, "/api/participant/consent", Some(json!({"agree": true}))).await;
        assert_eq!(status, 200, "{assigned}");
        assert_eq!(counts(&server, &id).await, json!({"a": 3, "b": 3}));
        server.shutdown().await;
        tdb.cleanup().await;
    }
}

backend_tests! {
    // Two servers, each with its own pool on the same database: consents spread over both
    // still give exactly k each (PostgreSQL; on SQLite, two processes' writers share the
    // file's lock the same way).
    async fn sixty_parallel_consents_over_two_replicas_balance_exactly(engine) {
        let tdb = TestDb::new(engine).await;
        let first = server(&tdb).await;
        let other_db = match engine {
            Engine::Postgres => Database::connect(&tdb.url, &PoolConfig::default()).await.unwrap(),
            Engine::Sqlite => Database::connect(&tdb.url, &PoolConfig::default()).await.unwrap(),
        };
        let second = TestServer::with_config(
            &other_db,
            haico::http::HttpConfig {
                rate_limits: haico::http::RateLimits { study_entries: None, ..Default::default() },
                ..Default::default()
            },
        )
        .await;
        let (id, key) = open_study(&first, &design(conditions(&[("a", 1.0), ("b", 1.0), ("c", 1.0)]))).await;
        let statuses = consent_in_parallel(&[&first, &second], &key, 60, "rep").await;
        assert!(statuses.iter().all(|s| *s == 200), "{statuses:?}");
        assert_eq!(counts(&first, &id).await, json!({"a": 20, "b": 20, "c": 20}));
        second.shutdown().await;
        other_db.close().await;
        first.shutdown().await;
        tdb.cleanup().await;
    }
}
