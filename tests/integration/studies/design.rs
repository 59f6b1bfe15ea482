//! A study's design: made as a draft, read, changed, frozen once open; every invalid field
//! answered 422 naming its path, with nothing stored.

use serde_json::{Value, json};

use super::{design, server, two_conditions};
use crate::common::TestDb;

backend_tests! {
    async fn a_draft_is_made_changed_opened_frozen_and_closed(engine) {
        let tdb = TestDb::new(engine).await;
        let server = server(&tdb).await;
        let made = server.post("/api/studies", &design(two_conditions())).await.expect(201);
        assert_eq!(made["status"], "draft");
        assert!(made.get("secret").is_none(), "the secret is never returned: {made}");
        let entry = made["entry_url"].as_str().unwrap();
        let key = entry.strip_prefix("/s/").unwrap();
        assert!(key.len() >= 20 && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'), "{entry}");
        let id = made["id"].as_str().unwrap().to_string();
        assert_eq!(made["conditions"][1]["key"], "chat");
        assert_eq!(made["counts"]["by_condition"], json!({"workspace": 0, "chat": 0}));

        let read = server.get(&format!("/api/studies/{id}")).await.expect(200);
        assert_eq!(read, made);
        let listed = server.get("/api/studies").await.expect(200);
        assert_eq!(listed.as_array().unwrap().len(), 1);

        let changed = server.patch(&format!("/api/studies/{id}"), &json!({"title": "Renamed"})).await.expect(200);
        assert_eq!(changed["title"], "Renamed");
        assert_eq!(changed["task"], made["task"], "fields not named stay");

        server.post(&format!("/api/studies/{id}/open"), &json!({})).await.expect(200);
        let frozen = server.patch(&format!("/api/studies/{id}"), &json!({"title": "Again"})).await;
        assert!(frozen.error(409).contains("frozen"));
        let recruiting = server
            .patch(&format!("/api/studies/{id}"), &json!({"recruiting": {"chat": false}, "targets": {"workspace": 5}}))
            .await
            .expect(200);
        assert_eq!(recruiting["conditions"][1]["recruiting"], false);
        assert_eq!(recruiting["conditions"][0]["target"], 5);
        assert_eq!(recruiting["title"], "Renamed");
        server.post(&format!("/api/studies/{id}/open"), &json!({})).await.error(409);
        let closed = server.post(&format!("/api/studies/{id}/close"), &json!({})).await.expect(200);
        assert_eq!(closed["status"], "closed");
        server.post(&format!("/api/studies/{id}/close"), &json!({})).await.error(409);
        server.get("/api/studies/no-such-study").await.error(404);
        server.delete(&format!("/api/studies/{id}")).await.expect(204);
        server.get(&format!("/api/studies/{id}")).await.error(404);
        server.shutdown().await;
        tdb.cleanup().await;
    }
}

/// A design with one change at `pointer` (a JSON pointer), and the path its refusal names.
fn broken(pointer: &str, value: Value) -> Value {
    let mut d = design(two_conditions());
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    let parent = if parent.is_empty() {
        &mut d
    } else {
        d.pointer_mut(parent).unwrap_or_else(|| panic!("{pointer}"))
    };
    match parent {
        Value::Object(map) => {
            map.insert(key.to_string(), value);
        }
        Value::Array(items) => items[key.parse::<usize>().unwrap()] = value,
        other => panic!("{pointer}: {other}"),
    }
    d
}

backend_tests! {
    async fn every_invalid_field_is_422_naming_its_path_and_nothing_is_stored(engine) {
        let tdb = TestDb::new(engine).await;
        let server = server(&tdb).await;
        let cases: Vec<(Value, &str)> = vec![
            (broken("/title", json!("")), "title"),
            (broken("/task/instructions", json!("  ")), "task.instructions"),
            (broken("/task/seed/plan/0/text", json!("")), "task.seed.plan[0].text"),
            (broken("/entry/keep_params", json!(["NOT_A_PARAM"])), "entry.keep_params[0]"),
            (broken("/completion/completed/code", json!("has space")), "completion.completed.code"),
            (broken("/completion/completed/redirect_url", json!("ftp://x")), "completion.completed.redirect_url"),
            (broken("/conditions", json!([])), "conditions"),
            (broken("/conditions/1/key", json!("workspace")), "conditions[1].key"),
            (broken("/conditions/1/key", json!("Bad Key")), "conditions[1].key"),
            (broken("/conditions/1/tools", json!(["foo"])), "conditions[1].tools[0]"),
            (broken("/conditions/0/panels", json!(["objective", "sidebar"])), "conditions[0].panels[1]"),
            (broken("/conditions/0/weight", json!(0)), "conditions[0].weight"),
            (broken("/conditions/0/weight", json!("heavy")), "conditions[0].weight"),
            (broken("/conditions/0/document_mode", json!("tracked")), "conditions[0].document_mode"),
            (broken("/conditions/0/temperature", json!(3)), "conditions[0].temperature"),
            (broken("/conditions/0/max_steps", json!(0)), "conditions[0].max_steps"),
            (broken("/assignment", json!({"method": "alphabetical"})), "assignment.method"),
            (broken("/limits", json!({"warn_before_s": 10})), "limits.warn_before_s"),
            (broken("/limits", json!({"time_limit_s": 2})), "limits.time_limit_s"),
        ];
        for (body, path) in &cases {
            let answer = server.post("/api/studies", body).await;
            assert_eq!(answer.status.as_u16(), 422, "{path}: {}", answer.body);
            let error = answer.body["error"].as_str().unwrap();
            assert!(error.starts_with(&format!("{path}: ")), "{path}: {error}");
            assert_eq!(answer.body["path"], json!(path));
        }
        let thirteen: Vec<Value> = (0..13).map(|i| json!({"key": format!("c{i}"), "label": "C"})).collect();
        let too_many = server.post("/api/studies", &design(Value::Array(thirteen))).await;
        assert_eq!(too_many.status.as_u16(), 422, "{}", too_many.body);
        assert_eq!(too_many.body["path"], "conditions");
        let unknown = {
            let mut d = design(two_conditions());
            d["colour"] = json!("red");
            d
        };
        assert!(server.post("/api/studies", &unknown).await.error(400).contains("colour"));
        let bad_json = server
            .client
            .post(server.url("/api/studies"))
            .header("content-type", "application/json")
            .body("{not json")
            .send()
            .await
            .unwrap();
        assert_eq!(bad_json.status().as_u16(), 400);
        assert_eq!(server.get("/api/studies").await.expect(200), json!([]), "nothing was stored");
        // A draft's bad change is refused whole too.
        let made = server.post("/api/studies", &design(two_conditions())).await.expect(201);
        let id = made["id"].as_str().unwrap();
        let bad = server
            .patch(&format!("/api/studies/{id}"), &json!({"title": "Fine", "conditions": [{"key": "a", "label": "A", "tools": ["nope"]}]}))
            .await;
        assert_eq!(bad.status.as_u16(), 422, "{}", bad.body);
        assert_eq!(server.get(&format!("/api/studies/{id}")).await.expect(200), made);
        server.shutdown().await;
        tdb.cleanup().await;
    }
}
