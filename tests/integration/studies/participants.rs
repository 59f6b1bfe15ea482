//! Participants: the entry link, resuming, consent and declining, a thread seeded from the
//! task, a token that reaches only its own thread within its condition, attribution, and
//! researchers who read participants' threads but never change them.

use reqwest::Method;
use serde_json::json;

use super::{as_participant, consented, design, enter, open_study, server, two_conditions};
use crate::common::TestDb;

backend_tests! {
    async fn the_entry_link_answers_by_the_studys_state_and_the_same_participant_resumes(engine) {
        let tdb = TestDb::new(engine).await;
        let server = server(&tdb).await;
        let (status, body) = enter(&server, "no-such-key-at-all-here", Some("p1")).await;
        assert_eq!(status, 404, "{body}");
        let draft = server.post("/api/studies", &design(two_conditions())).await.expect(201);
        let draft_key = draft["entry_url"].as_str().unwrap().strip_prefix("/s/").unwrap();
        assert_eq!(enter(&server, draft_key, Some("p1")).await.0, 404, "a draft does not exist for participants");

        let mut required = design(two_conditions());
        required["entry"]["require_participant_id"] = json!(true);
        let (id, key) = open_study(&server, &required).await;
        let (status, first) = enter(&server, &key, Some("5f1c-PID_1")).await;
        assert_eq!(status, 201, "{first}");
        let session = first["session"].as_str().unwrap();
        assert_eq!(session.len(), 8);
        assert_eq!(first["status"], "entered");
        assert!(first["participant_token"].as_str().unwrap().starts_with("hsp_"));
        let (status, again) = enter(&server, &key, Some("5f1c-PID_1")).await;
        assert_eq!(status, 200, "the same participant resumes: {again}");
        assert_eq!(again["session"], first["session"]);
        // The old token gave way to the new one.
        let old = first["participant_token"].as_str().unwrap();
        assert_eq!(as_participant(&server, old, Method::GET, "/api/participant", None).await.0, 404);
        let new = again["participant_token"].as_str().unwrap();
        let (status, me) = as_participant(&server, new, Method::GET, "/api/participant", None).await;
        assert_eq!(status, 200, "{me}");
        assert_eq!(me["session"], first["session"]);
        assert_eq!(me["consent"]["text"], "We record your messages and edits.");
        assert!(me["consent"]["records"].as_array().unwrap().len() >= 5, "{me}");
        assert!(me.get("condition").is_none() && !me.to_string().contains("workspace\",\"label"));

        assert_eq!(enter(&server, &key, None).await.0, 422, "the id is required");
        assert_eq!(enter(&server, &key, Some("not valid!")).await.0, 422);
        let long = "x".repeat(65);
        assert_eq!(enter(&server, &key, Some(&long)).await.0, 422);

        // The cookie set on entry acts like the token.
        let response = server
            .client
            .post(server.url(&format!("/api/s/{key}/sessions")))
            .json(&json!({"participant_id": "cookie-person"}))
            .send()
            .await
            .unwrap();
        let cookie = response.headers()["set-cookie"].to_str().unwrap().to_string();
        assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"), "{cookie}");
        let pair = cookie.split(';').next().unwrap().to_string();
        let me = server
            .client
            .get(server.url("/api/participant"))
            .header("cookie", pair)
            .send()
            .await
            .unwrap();
        assert_eq!(me.status().as_u16(), 200);

        server.post(&format!("/api/studies/{id}/close"), &json!({})).await.expect(200);
        let (status, closed) = enter(&server, &key, Some("late")).await;
        assert_eq!(status, 410, "{closed}");
        assert!(closed["error"].as_str().unwrap().contains("closed"));
        server.shutdown().await;
        tdb.cleanup().await;
    }
}

backend_tests! {
    async fn a_decliner_gets_the_no_consent_code_and_no_thread(engine) {
        let tdb = TestDb::new(engine).await;
        let server = server(&tdb).await;
        let (id, key) = open_study(&server, &design(two_conditions())).await;
        let (_, entered) = enter(&server, &key, Some("decliner")).await;
        let token = entered["participant_token"].as_str().unwrap();
        let (status, declined) = as_participant(&server, token, Method::POST, "/api/participant/consent", Some(json!({"agree": false}))).await;
        assert_eq!(status, 200, "{declined}");
        assert_eq!(declined["status"], "declined");
        assert_eq!(declined["thread_id"], json!(null));
        assert_eq!(declined["completion"]["code"], "NOCONSENT");
        // Asked again, the decision stands.
        let (_, again) = as_participant(&server, token, Method::POST, "/api/participant/consent", Some(json!({"agree": true}))).await;
        assert_eq!(again["status"], "declined");
        let (status, _) = as_participant(&server, token, Method::POST, "/api/participant/start", None).await;
        assert_eq!(status, 409);
        let study = server.get(&format!("/api/studies/{id}")).await.expect(200);
        assert_eq!(study["counts"]["by_condition"], json!({"workspace": 0, "chat": 0}));
        assert_eq!(study["counts"]["by_status"], json!({"declined": 1}));
        server.shutdown().await;
        tdb.cleanup().await;
    }
}

backend_tests! {
    async fn a_participant_reaches_only_its_own_thread_within_its_condition(engine) {
        let tdb = TestDb::new(engine).await;
        let server = server(&tdb).await;
        let conditions = json!([
            {"key": "doc-only", "label": "Document only", "panels": ["document"], "tools": ["update_document", "edit_document"]}
        ]);
        let (_, key) = open_study(&server, &design(conditions)).await;
        server.create_thread("researchers-own").await;
        let (token, session) = consented(&server, &key, "p-access").await;
        assert_eq!(session["status"], "assigned");
        assert_eq!(session["panels"], json!(["document"]));
        let thread = session["thread_id"].as_str().unwrap().to_string();
        let me = |path: &str| format!("/api/threads/{thread}{path}");

        // Seeded from the task.
        let (status, workspace) = as_participant(&server, &token, Method::GET, &me("/workspace"), None).await;
        assert_eq!(status, 200, "{workspace}");
        assert_eq!(workspace["objective"], "A dinner for four");
        assert_eq!(workspace["document"]["content"], "# Menu\n");
        assert_eq!(workspace["todos"][0]["text"], "Pick a starter");
        assert_eq!(workspace["preferences"][0]["locked"], true);

        // Everything else does not exist for it.
        for (method, path) in [
            (Method::GET, "/api/threads/researchers-own/workspace".to_string()),
            (Method::GET, "/api/threads".to_string()),
            (Method::GET, "/api/studies".to_string()),
            (Method::GET, "/api/me".to_string()),
            (Method::GET, "/api/tools".to_string()),
            (Method::GET, me("/export")),
            (Method::GET, me("/history")),
            (Method::POST, me("/fork")),
            (Method::GET, me("/members")),
        ] {
            let (status, body) = as_participant(&server, &token, method.clone(), &path, Some(json!({}))).await;
            assert_eq!(status, 404, "{method} {path}: {body}");
            assert!(body["error"].is_string(), "{method} {path}: {body}");
        }
        let (status, _) = as_participant(&server, &token, Method::POST, "/mcp/researchers-own", Some(json!({}))).await;
        assert_eq!(status, 404);

        // A hidden panel is forbidden, even to read.
        let (status, body) = as_participant(&server, &token, Method::POST, &me("/todos"), Some(json!({"text": "x"}))).await;
        assert_eq!(status, 403, "{body}");
        let (status, _) = as_participant(&server, &token, Method::GET, &me("/preferences"), None).await;
        assert_eq!(status, 403);

        // Before Start nothing changes.
        let (status, body) = as_participant(&server, &token, Method::PUT, &me("/document"), Some(json!({"content": "Soup"}))).await;
        assert_eq!(status, 409, "{body}");
        let (status, started) = as_participant(&server, &token, Method::POST, "/api/participant/start", None).await;
        assert_eq!(status, 200, "{started}");
        assert_eq!(started["status"], "active");
        let (status, body) = as_participant(&server, &token, Method::PUT, &me("/document"), Some(json!({"content": "Soup"}))).await;
        assert_eq!(status, 200, "{body}");
        let history = server.get(&me("/history")).await.expect(200);
        let session_ref = session["session"].as_str().unwrap();
        assert_eq!(history["revisions"][0]["by"], json!(format!("participant:{session_ref}")));

        // The researcher reads the participant's thread and never changes it.
        assert_eq!(server.get(&me("/workspace")).await.status.as_u16(), 200);
        let refused = server.request(Method::PUT, &me("/document"), Some(&json!({"content": "Mine"}))).await;
        assert!(refused.error(403).contains("participant"));
        server.request(Method::DELETE, &me(""), None).await.error(403);
        // Study threads stay out of the thread list.
        let threads = server.get("/api/threads").await.expect(200);
        let ids: Vec<&str> = threads.as_array().unwrap().iter().map(|t| t["id"].as_str().unwrap()).collect();
        assert_eq!(ids, vec!["researchers-own"]);
        // Nothing of the researcher's thread changed through the participant.
        assert_eq!(server.get("/api/threads/researchers-own/history").await.expect(200)["revisions"], json!([]));
        server.shutdown().await;
        tdb.cleanup().await;
    }
}

backend_tests! {
    async fn withdrawing_ends_the_session_and_it_never_counts(engine) {
        let tdb = TestDb::new(engine).await;
        let server = server(&tdb).await;
        let (id, key) = open_study(&server, &design(two_conditions())).await;
        let (token, session) = consented(&server, &key, "leaver").await;
        let thread = session["thread_id"].as_str().unwrap().to_string();
        let (status, withdrawn) = as_participant(&server, &token, Method::POST, "/api/participant/withdraw", None).await;
        assert_eq!(status, 200);
        assert_eq!(withdrawn["status"], "withdrawn");
        let (status, _) = as_participant(&server, &token, Method::POST, &format!("/api/threads/{thread}/chat"), Some(json!({"message": "x"}))).await;
        assert_eq!(status, 409);
        let study = server.get(&format!("/api/studies/{id}")).await.expect(200);
        assert_eq!(study["counts"]["by_condition"], json!({"workspace": 0, "chat": 0}));
        server.shutdown().await;
        tdb.cleanup().await;
    }
}
