//! The workspace never forgets: revisions for every kind of change (and none for reads,
//! failures and no-ops), the workspace at any revision (a property test over long random
//! sequences of changes on both paths), paging, document diffs, restore, undoing a turn with
//! its conflicts, and forks. Through a real server, on SQLite and PostgreSQL.

use crate::common;

use common::server::{TestServer, setup, teardown};
use reqwest::Method;
use serde_json::{Value, json};

fn why(mut args: Value) -> Value {
    args["action_and_reasoning"] = json!("Work on the plan.");
    args
}

async fn latest(server: &TestServer, thread: &str) -> i64 {
    let page = server
        .get(&format!("/api/threads/{thread}/history?limit=1"))
        .await
        .expect(200);
    page["revisions"]
        .get(0)
        .map_or(0, |r| r["rev"].as_i64().unwrap())
}

async fn at(server: &TestServer, thread: &str, rev: i64) -> Value {
    server
        .get(&format!("/api/threads/{thread}/workspace?at={rev}"))
        .await
        .expect(200)
}

async fn put(server: &TestServer, path: &str, body: Value) -> Value {
    server
        .request(Method::PUT, path, Some(&body))
        .await
        .expect(200)
}

/// One random change through either path; some of them change nothing or fail.
async fn random_change(server: &TestServer, thread: &str, rng: &mut fastrand::Rng) {
    let ws = server.workspace(thread).await;
    let steps = ws["todos"].as_array().unwrap().len() as i64;
    let prefs = ws["preferences"].as_array().unwrap().clone();
    let word = |rng: &mut fastrand::Rng| -> String {
        let words = ["alpha", "beta", "gamma", "délta", "日本", "🙂", "omega"];
        (0..rng.usize(1..4))
            .map(|_| words[rng.usize(..words.len())])
            .collect::<Vec<_>>()
            .join(" ")
    };
    let base = format!("/api/threads/{thread}");
    match rng.u8(..14) {
        0 => {
            let w = word(rng);
            server
                .tool(thread, "set_objective", why(json!({"objective": w})))
                .await;
        }
        1 => {
            put(
                server,
                &format!("{base}/objective"),
                json!({"objective": word(rng)}),
            )
            .await;
        }
        2 => {
            let text = format!("{}\n", word(rng));
            server
                .tool(thread, "append_to_document", why(json!({"text": text})))
                .await;
        }
        3 => {
            let current = ws["document"]["content"].as_str().unwrap_or("").to_string();
            let cut = current
                .char_indices()
                .map(|(i, _)| i)
                .nth(rng.usize(..=current.chars().count().max(1) - 1))
                .unwrap_or(0);
            let content = format!("{}{}{}", &current[..cut], word(rng), &current[cut..]);
            let title = if rng.bool() { Some(word(rng)) } else { None };
            put(
                server,
                &format!("{base}/document"),
                json!({"content": content, "title": title}),
            )
            .await;
        }
        4 => {
            let content = word(rng);
            server
                .tool(thread, "update_document", why(json!({"content": content})))
                .await;
        }
        5 => {
            let parent = if steps > 0 && rng.bool() {
                Some(rng.i64(1..=steps))
            } else {
                None
            };
            let outline = json!([{"text": word(rng)}, {"text": word(rng), "depth": 1}]);
            server
                .tool(
                    thread,
                    "add_todos",
                    why(json!({"steps": outline, "parent_index": parent})),
                )
                .await;
        }
        6 => {
            let indices: Vec<i64> = (0..rng.usize(1..3))
                .map(|_| rng.i64(1..=steps + 1))
                .collect();
            server
                .tool(thread, "toggle_todos", why(json!({"indices": indices})))
                .await;
        }
        7 => {
            let indices: Vec<i64> = (0..rng.usize(1..3))
                .map(|_| rng.i64(1..=steps + 1))
                .collect();
            server
                .tool(thread, "remove_todos", why(json!({"indices": indices})))
                .await;
        }
        8 => {
            if steps > 0 {
                let i = rng.i64(1..=steps);
                server
                    .tool(
                        thread,
                        "update_todos",
                        why(json!({"updates": [{"index": i, "text": word(rng)}]})),
                    )
                    .await;
            }
            // A user step, placed after an existing one or at the end.
            let after = ws["todos"]
                .as_array()
                .unwrap()
                .first()
                .map(|s| s["id"].clone());
            let body = match after {
                Some(id) if rng.bool() => json!({"text": word(rng), "after_id": id}),
                _ => json!({"text": word(rng)}),
            };
            server
                .post(&format!("{base}/todos"), &body)
                .await
                .expect(201);
        }
        9 => {
            if let Some(step) = ws["todos"].as_array().unwrap().first() {
                let id = step["id"].as_i64().unwrap();
                if rng.bool() {
                    server
                        .patch(&format!("{base}/todos/{id}"), &json!({"done": true}))
                        .await
                        .expect(200);
                } else {
                    server
                        .delete(&format!("{base}/todos/{id}"))
                        .await
                        .expect(204);
                }
            }
        }
        10 => {
            let items = json!([{"title": word(rng), "kind": if rng.bool() {"hard"} else {"soft"}}]);
            server
                .tool(thread, "add_preferences", why(json!({"items": items})))
                .await;
            server
                .post(
                    &format!("{base}/preferences"),
                    &json!({"title": word(rng), "locked": rng.bool()}),
                )
                .await
                .expect(201);
        }
        11 => {
            if !prefs.is_empty() {
                let i = rng.usize(..prefs.len());
                let id = prefs[i]["id"].as_i64().unwrap();
                match rng.u8(..4) {
                    0 => {
                        server
                            .patch(
                                &format!("{base}/preferences/{id}"),
                                &json!({"locked": !prefs[i]["locked"].as_bool().unwrap()}),
                            )
                            .await
                            .expect(200);
                    }
                    1 => {
                        server
                            .delete(&format!("{base}/preferences/{id}"))
                            .await
                            .expect(204);
                    }
                    2 => {
                        server
                            .tool(
                                thread,
                                "update_preferences",
                                why(json!({"updates": [{"index": i + 1, "subtitle": word(rng)}]})),
                            )
                            .await;
                    }
                    _ => {
                        server
                            .tool(
                                thread,
                                "remove_preferences",
                                why(json!({"indices": [i + 1]})),
                            )
                            .await;
                    }
                }
            }
        }
        12 => {
            let chart = json!({"chart_type": "bar", "title": word(rng), "data": {"labels": ["a", "b"], "series": [{"name": "s", "values": [1, 2]}]}});
            server.tool(thread, "chart_generator", why(chart)).await;
        }
        _ => {
            // A restore to a random earlier revision.
            let last = latest(server, thread).await;
            let rev = rng.i64(0..=last);
            let panels = if rng.bool() {
                Some(json!(["plan", "document"]))
            } else {
                None
            };
            server
                .post(
                    &format!("{base}/restore"),
                    &json!({"rev": rev, "panels": panels}),
                )
                .await
                .expect(200);
        }
    }
}

backend_tests! {
    async fn the_workspace_at_any_revision_is_what_it_was(engine) {
        let (tdb, server) = setup(engine).await;
        for seed in [7_u64, 2026] {
            let thread = format!("p{seed}");
            server.create_thread(&thread).await;
            let mut rng = fastrand::Rng::with_seed(seed);
            let mut seen: Vec<(i64, Value)> = vec![(0, at(&server, &thread, 0).await)];
            for _ in 0..70 {
                random_change(&server, &thread, &mut rng).await;
                let rev = latest(&server, &thread).await;
                seen.push((rev, server.workspace(&thread).await));
            }
            assert!(seen.last().unwrap().0 > 40, "too few revisions: {}", seen.last().unwrap().0);
            for (rev, snapshot) in &seen {
                assert_eq!(&at(&server, &thread, *rev).await, snapshot, "thread {thread} at revision {rev}");
            }
        }
        teardown(tdb, server).await;
    }
}
