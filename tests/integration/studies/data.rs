//! A study's data: the pseudonymised export carries no participant id anywhere (checked byte
//! by byte), the same id gives the same pseudonym within a study and another one elsewhere,
//! only the owner gets the raw export; the measures, the summary, the CSV and a session's
//! timeline agree with what the session did.

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};

use super::{as_participant, consented, design, enter, open_study, server, two_conditions};
use crate::common::{
    Engine, TestDb,
    mock_llm::{MockLlm, Script, call},
    server::TestServer,
    sse::SseReader,
};

/// A raw participant id that cannot occur by chance.
fn raw_id(i: usize) -> String {
    format!("RAWPID{i:03}Q7")
}

async fn text(server: &TestServer, path: &str) -> (u16, String) {
    let response = server.client.get(server.url(path)).send().await.unwrap();
    (response.status().as_u16(), response.text().await.unwrap())
}

backend_tests! {
    async fn a_pseudonymised_export_of_twenty_sessions_holds_no_raw_participant_id(engine) {
        let tdb = TestDb::new(engine).await;
        let server = server(&tdb).await;
        let (id, key) = open_study(&server, &design(two_conditions())).await;
        for i in 0..20 {
            let pid = raw_id(i);
            let response = server
                .client
                .post(server.url(&format!("/api/s/{key}/sessions")))
                .json(&json!({"params": {"PROLIFIC_PID": pid, "STUDY_ID": "KEPT-STUDY", "SESSION_ID": format!("RAWSESS{i:03}Z"), "OTHER": "DROPPED-PARAM"}}))
                .send()
                .await
                .unwrap();
            assert_eq!(response.status().as_u16(), 201);
            let entered: Value = response.json().await.unwrap();
            let token = entered["participant_token"].as_str().unwrap().to_string();
            let agree = i % 5 != 0;
            let (status, session) = as_participant(&server, &token, Method::POST, "/api/participant/consent", Some(json!({"agree": agree}))).await;
            assert_eq!(status, 200, "{session}");
            if agree && i % 2 == 0 {
                as_participant(&server, &token, Method::POST, "/api/participant/start", None).await;
                let thread = session["thread_id"].as_str().unwrap();
                // May be a plain chat (no panels): then the edit is refused, which is fine here.
                as_participant(&server, &token, Method::PUT, &format!("/api/threads/{thread}/objective"), Some(json!({"objective": "My own goal"}))).await;
            }
        }
        let (status, export) = text(&server, &format!("/api/studies/{id}/export")).await;
        assert_eq!(status, 200);
        let (_, csv) = text(&server, &format!("/api/studies/{id}/sessions.csv")).await;
        let (_, sessions) = text(&server, &format!("/api/studies/{id}/sessions")).await;
        let (_, summary) = text(&server, &format!("/api/studies/{id}/summary")).await;
        for (what, body) in [("export", &export), ("csv", &csv), ("sessions", &sessions), ("summary", &summary)] {
            let bytes = body.as_bytes();
            for i in 0..20 {
                for raw in [raw_id(i), format!("RAWSESS{i:03}Z")] {
                    assert!(
                        !bytes.windows(raw.len()).any(|w| w == raw.as_bytes()),
                        "{what} holds the raw value {raw}"
                    );
                }
            }
            assert!(!body.contains("DROPPED-PARAM"), "{what} keeps a parameter the design does not name");
        }
        let lines: Vec<Value> = export.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(lines[0]["type"], "study");
        assert_eq!(lines[0]["format"], "haico-study/1");
        assert_eq!(lines[0]["pseudonymised"], true);
        assert!(lines[0]["design"]["conditions"][0]["tools"].as_array().unwrap().len() >= 16, "tools resolved");
        assert_eq!(lines[0]["design"]["conditions"][1]["tools"], json!([]));
        assert_eq!(lines[0]["design"]["conditions"][1]["snapshot"], false);
        let session_lines: Vec<&Value> = lines.iter().filter(|l| l["type"] == "session").collect();
        assert_eq!(session_lines.len(), 20);
        let pseudonyms: Vec<&str> = session_lines.iter().map(|l| l["participant"].as_str().unwrap()).collect();
        assert!(pseudonyms.iter().all(|p| p.len() == 32 && p.chars().all(|c| c.is_ascii_hexdigit())));
        let distinct: std::collections::BTreeSet<&&str> = pseudonyms.iter().collect();
        assert_eq!(distinct.len(), 20);
        assert_eq!(session_lines[1]["params"]["STUDY_ID"], "KEPT-STUDY", "kept parameters stay");
        assert_ne!(session_lines[1]["params"]["SESSION_ID"], json!(null));
        assert!(lines.iter().any(|l| l["type"] == "recording" && l["line"]["type"] == "revision"));
        // Free text is kept.
        assert!(export.contains("My own goal") || !export.contains("participant:"));
        // The same id keeps its pseudonym within the study, and gets another in a new study.
        let (_, again) = text(&server, &format!("/api/studies/{id}/export")).await;
        let again_first: Value = serde_json::from_str(again.lines().nth(1).unwrap()).unwrap();
        assert_eq!(again_first["participant"], session_lines[0]["participant"]);
        let (other, other_key) = open_study(&server, &design(two_conditions())).await;
        let (status, _) = enter(&server, &other_key, Some(&raw_id(0))).await;
        assert_eq!(status, 201);
        let (_, other_export) = text(&server, &format!("/api/studies/{other}/export")).await;
        let other_first: Value = serde_json::from_str(other_export.lines().nth(1).unwrap()).unwrap();
        assert_ne!(other_first["participant"], session_lines[0]["participant"]);
        // The owner (here the one person) may have the ids as given.
        let (status, raw) = text(&server, &format!("/api/studies/{id}/export?pseudonymise=false")).await;
        assert_eq!(status, 200);
        assert!(raw.contains(&raw_id(7)) && raw.contains("RAWSESS007Z"));
        server.shutdown().await;
        tdb.cleanup().await;
    }
}

backend_tests! {
    async fn only_the_owner_gets_the_raw_export(engine) {
        let tdb = TestDb::new(engine).await;
        let server = TestServer::with_token(&tdb.db, "admin-token-for-studies").await;
        let mut tokens = Vec::new();
        for (name, role) in [("researcher", "member"), ("boss", "admin"), ("stranger", "member")] {
            let (status, made) = crate::common::send_as(&server.client, Method::POST, server.url("/api/users"), "admin-token-for-studies", Some(json!({"name": name, "role": role}))).await;
            assert_eq!(status, 201, "{made}");
            tokens.push(made["token"].as_str().unwrap().to_string());
        }
        let (status, made) = crate::common::send_as(&server.client, Method::POST, server.url("/api/studies"), &tokens[0], Some(design(two_conditions()))).await;
        assert_eq!(status, 201);
        assert_eq!(made["owner"], "researcher");
        let id = made["id"].as_str().unwrap();
        let raw = format!("/api/studies/{id}/export?pseudonymise=false");
        let owner = server.client.get(server.url(&raw)).bearer_auth(&tokens[0]).send().await.unwrap();
        assert_eq!(owner.status().as_u16(), 200);
        let (status, body) = crate::common::send_as(&server.client, Method::GET, server.url(&raw), &tokens[1], None).await;
        assert_eq!(status, 403, "an administrator who is not the owner: {body}");
        let pseudonymised = server.client.get(server.url(&format!("/api/studies/{id}/export"))).bearer_auth(&tokens[1]).send().await.unwrap();
        assert_eq!(pseudonymised.status().as_u16(), 200);
        let (status, _) = crate::common::send_as(&server.client, Method::GET, server.url(&raw), &tokens[2], None).await;
        assert_eq!(status, 404, "for anyone else the study does not exist");
        let (status, listed) = crate::common::send_as(&server.client, Method::GET, server.url("/api/studies"), &tokens[2], None).await;
        assert_eq!((status, listed), (200, json!([])));
        server.shutdown().await;
        tdb.cleanup().await;
    }
}

/// A server whose agent talks to a mock answering `scripts`.
async fn with_agent(engine: Engine, scripts: Vec<Script>) -> (TestDb, MockLlm, TestServer) {
    let tdb = TestDb::new(engine).await;
    let mock = MockLlm::openai(scripts).await;
    let model = haico::agent::providers::build_model(&mock.config()).expect("model builds");
    let state = haico::http::AppState::with_model(
        tdb.db.clone(),
        model,
        haico::agent::AgentConfig::default(),
    );
    let server = TestServer::with_state(state).await;
    (tdb, mock, server)
}

backend_tests! {
    async fn measures_summary_csv_and_timeline_follow_what_the_session_did(engine) {
        let (tdb, _mock, server) = with_agent(
            engine,
            vec![
                Script::tool_calls(vec![call("append_to_document", json!({"text": "Soup\n", "action_and_reasoning": "Add a starter."}))]),
                Script::text("Added soup."),
            ],
        )
        .await;
        let conditions = json!([{"key": "ws", "label": "Workspace", "panels": ["objective", "document"], "tools": "*"}]);
        let (id, key) = open_study(&server, &design(conditions)).await;
        let (token, session) = consented(&server, &key, "measured").await;
        let thread = session["thread_id"].as_str().unwrap().to_string();
        let session_ref = session["session"].as_str().unwrap().to_string();
        as_participant(&server, &token, Method::POST, "/api/participant/start", None).await;
        // The seed is "# Menu\n" (7 characters); the participant writes 4 more.
        let (status, _) = as_participant(&server, &token, Method::PUT, &format!("/api/threads/{thread}/document"), Some(json!({"content": "# Menu\nFish\n"}))).await;
        assert_eq!(status, 200);
        let response = server
            .client
            .post(server.url(&format!("/api/threads/{thread}/chat")))
            .bearer_auth(&token)
            .json(&json!({"message": "Add a starter"}))
            .send()
            .await
            .unwrap();
        let mut turn = SseReader::from_response(response);
        loop {
            if turn.next(Duration::from_secs(15)).await.event == "done" {
                break;
            }
        }
        let (status, done) = as_participant(&server, &token, Method::POST, "/api/participant/finish", None).await;
        assert_eq!(status, 200, "{done}");
        let sessions = server.get(&format!("/api/studies/{id}/sessions")).await.expect(200);
        let m = &sessions[0]["measures"];
        assert_eq!(m["turns"], 1);
        assert_eq!(m["tool_calls"], 1);
        assert_eq!(m["failed_tool_calls"], 0);
        assert_eq!(m["participant_revisions"], 1);
        assert_eq!(m["agent_revisions"], 1);
        assert_eq!(m["participant_chars_inserted"], 5);
        assert_eq!(m["agent_chars_inserted"], 5);
        let share = &m["final_doc_authorship"];
        assert!((share["seed"].as_f64().unwrap() - 7.0 / 17.0).abs() < 1e-9, "{share}");
        assert!((share["participant"].as_f64().unwrap() - 5.0 / 17.0).abs() < 1e-9, "{share}");
        assert!((share["agent"].as_f64().unwrap() - 5.0 / 17.0).abs() < 1e-9, "{share}");
        assert!(m["time_on_task_s"].as_f64().unwrap() >= 0.0);

        let summary = server.get(&format!("/api/studies/{id}/summary")).await.expect(200);
        let ws = &summary["conditions"]["ws"];
        assert_eq!(ws["flow"], json!({"completed": 1}));
        assert_eq!(ws["measures"]["turns"], json!({"n": 1, "mean": 1.0, "sd": null, "median": 1.0}));

        let csv = server.client.get(server.url(&format!("/api/studies/{id}/sessions.csv"))).send().await.unwrap();
        assert!(csv.headers()["content-type"].to_str().unwrap().starts_with("text/csv"));
        let csv = csv.text().await.unwrap();
        let rows: Vec<&str> = csv.lines().collect();
        assert_eq!(rows.len(), 2);
        assert!(rows[0].starts_with("session,participant,condition,status,"));
        assert!(rows[1].starts_with(&format!("{session_ref},")));
        assert!(rows[1].contains(",ws,completed,"));

        let timeline = server.get(&format!("/api/studies/{id}/sessions/{session_ref}/timeline")).await.expect(200);
        let events = timeline["events"].as_array().unwrap();
        let kinds: Vec<(&str, &str)> = events.iter().map(|e| (e["kind"].as_str().unwrap(), e["actor"].as_str().unwrap())).collect();
        let participant_edit = kinds.iter().position(|k| *k == ("revision", "participant")).unwrap();
        let message = kinds.iter().position(|k| *k == ("message", "participant")).unwrap();
        let step = kinds.iter().position(|k| *k == ("step", "agent")).unwrap();
        assert!(participant_edit < message && message < step, "{kinds:?}");
        let times: Vec<f64> = events.iter().map(|e| e["t_s"].as_f64().unwrap()).collect();
        assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
        let revs: Vec<i64> = events.iter().filter_map(|e| e["rev"].as_i64()).collect();
        let mut unique = revs.clone();
        unique.dedup();
        assert_eq!(revs, unique, "each revision once");
        assert_eq!(timeline["panels"], json!(["objective", "document"]));
        server.get(&format!("/api/studies/{id}/sessions/zzzzzzzz/timeline")).await.error(404);
        server.shutdown().await;
        tdb.cleanup().await;
    }
}
