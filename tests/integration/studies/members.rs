//! A study's members (issue 42 item 1, "roles as for threads"): a viewer reads the study and
//! its pseudonymised data and changes nothing (`403`), an editor also changes and runs it, the
//! owner alone manages members, deletes it and has the raw export; outsiders get `404`. The
//! list shows shared studies with the caller's role; members read participants' threads and
//! never write them; removing a member removes access; bad input is a `4xx` that changes
//! nothing.

use reqwest::Method;
use serde_json::{Value, json};

use super::{as_participant, consented, design, two_conditions};
use crate::common::{self, TestDb, server::TestServer};

const ADMIN: &str = "admin-token-for-study-members";

/// A request as the holder of `token`.
async fn call(
    server: &TestServer,
    token: &str,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    common::send_as(&server.client, method, server.url(path), token, body).await
}

/// A server with accounts `owner`, `ed`, `vw`, `out`; their tokens in that order, and a draft
/// study of `owner`'s shared with `ed` as editor and `vw` as viewer.
async fn shared_study(server: &TestServer) -> (Vec<String>, String) {
    let mut tokens = Vec::new();
    for name in ["owner", "ed", "vw", "out"] {
        let (status, made) = call(
            server,
            ADMIN,
            Method::POST,
            "/api/users",
            Some(json!({"name": name})),
        )
        .await;
        assert_eq!(status, 201, "{made}");
        tokens.push(made["token"].as_str().unwrap().to_string());
    }
    let (status, made) = call(
        server,
        &tokens[0],
        Method::POST,
        "/api/studies",
        Some(design(two_conditions())),
    )
    .await;
    assert_eq!(status, 201, "{made}");
    assert_eq!(made["role"], "owner");
    let id = made["id"].as_str().unwrap().to_string();
    for (name, role) in [("ed", "editor"), ("vw", "viewer")] {
        let (status, members) = call(
            server,
            &tokens[0],
            Method::POST,
            &format!("/api/studies/{id}/members"),
            Some(json!({"name": name, "role": role})),
        )
        .await;
        assert_eq!(status, 201, "{members}");
    }
    (tokens, id)
}

/// The study's members, read by its owner.
async fn members(server: &TestServer, owner: &str, id: &str) -> Value {
    let (status, members) = call(
        server,
        owner,
        Method::GET,
        &format!("/api/studies/{id}/members"),
        None,
    )
    .await;
    assert_eq!(status, 200, "{members}");
    members
}

backend_tests! {
    async fn each_role_may_do_what_it_should_and_nothing_more(engine) {
        let tdb = TestDb::new(engine).await;
        let server = TestServer::with_token(&tdb.db, ADMIN).await;
        let (tokens, id) = shared_study(&server).await;
        let (owner, ed, vw, out) = (&tokens[0], &tokens[1], &tokens[2], &tokens[3]);
        assert_eq!(
            members(&server, owner, &id).await,
            json!([{"name": "owner", "role": "owner"}, {"name": "ed", "role": "editor"},
                   {"name": "vw", "role": "viewer"}])
        );
        // The list shows the study to its members, each with their role.
        for (token, role) in [(owner, "owner"), (ed, "editor"), (vw, "viewer")] {
            let (status, listed) = call(&server, token, Method::GET, "/api/studies", None).await;
            assert_eq!(status, 200);
            let listed = listed.as_array().unwrap();
            assert_eq!(listed.len(), 1, "{listed:?}");
            assert_eq!((listed[0]["id"].as_str(), listed[0]["role"].as_str()), (Some(id.as_str()), Some(role)));
        }
        let (_, listed) = call(&server, out, Method::GET, "/api/studies", None).await;
        assert_eq!(listed, json!([]));

        let study = format!("/api/studies/{id}");
        let (_, before) = call(&server, owner, Method::GET, &study, None).await;
        // A viewer reads everything but the raw export, and changes nothing.
        for path in ["", "/sessions", "/summary", "/export", "/sessions.csv"] {
            let response = server.client.get(server.url(&format!("{study}{path}"))).bearer_auth(vw).send().await.unwrap();
            assert_eq!(response.status().as_u16(), 200, "viewer GET {path}");
        }
        let (_, seen) = call(&server, vw, Method::GET, &study, None).await;
        assert_eq!(seen["role"], "viewer");
        for (method, path, body) in [
            (Method::PATCH, study.clone(), Some(json!({"title": "Viewer's title"}))),
            (Method::PATCH, study.clone(), Some(json!({"recruiting": {"chat": false}}))),
            (Method::POST, format!("{study}/open"), None),
            (Method::POST, format!("{study}/preview"), Some(json!({"condition": "chat"}))),
            (Method::GET, format!("{study}/members"), None),
            (Method::POST, format!("{study}/members"), Some(json!({"name": "out", "role": "viewer"}))),
            (Method::DELETE, format!("{study}/members/ed"), None),
            (Method::GET, format!("{study}/export?pseudonymise=false"), None),
            (Method::DELETE, study.clone(), None),
        ] {
            let (status, body_) = call(&server, vw, method.clone(), &path, body).await;
            assert_eq!(status, 403, "viewer {method} {path}: {body_}");
            assert!(body_["error"].as_str().is_some_and(|e| !e.is_empty()), "{body_}");
        }
        let (_, after) = call(&server, owner, Method::GET, &study, None).await;
        assert_eq!(after, before, "nothing a viewer tried changed the study");

        // An editor changes and runs the study, but neither its members, its existence nor
        // the raw export are theirs.
        let (status, changed) = call(&server, ed, Method::PATCH, &study, Some(json!({"title": "Editor's title"}))).await;
        assert_eq!((status, changed["title"].as_str()), (200, Some("Editor's title")), "{changed}");
        assert_eq!(changed["role"], "editor");
        for (method, path, body) in [
            (Method::GET, format!("{study}/members"), None),
            (Method::POST, format!("{study}/members"), Some(json!({"name": "out", "role": "viewer"}))),
            (Method::PATCH, format!("{study}/members/vw"), Some(json!({"role": "editor"}))),
            (Method::DELETE, format!("{study}/members/vw"), None),
            (Method::GET, format!("{study}/export?pseudonymise=false"), None),
            (Method::DELETE, study.clone(), None),
        ] {
            let (status, body_) = call(&server, ed, method.clone(), &path, body).await;
            assert_eq!(status, 403, "editor {method} {path}: {body_}");
        }
        let (status, opened) = call(&server, ed, Method::POST, &format!("{study}/open"), None).await;
        assert_eq!((status, opened["status"].as_str()), (200, Some("open")), "{opened}");
        let (status, _) = call(&server, ed, Method::PATCH, &study, Some(json!({"targets": {"chat": 5}}))).await;
        assert_eq!(status, 200);
        let (status, preview) = call(&server, ed, Method::POST, &format!("{study}/preview"), Some(json!({"condition": "chat"}))).await;
        assert_eq!(status, 201, "{preview}");

        // Outsiders: the study does not exist.
        for (method, path) in [(Method::GET, study.clone()), (Method::GET, format!("{study}/members")), (Method::GET, format!("{study}/summary"))] {
            let (status, _) = call(&server, out, method.clone(), &path, None).await;
            assert_eq!(status, 404, "outsider {method} {path}");
        }

        // Members read a participant's thread as the owner does, and never write it.
        let key = opened["entry_url"].as_str().unwrap().strip_prefix("/s/").unwrap().to_string();
        let (token, session) = consented(&server, &key, "P-MEMBERS-1").await;
        as_participant(&server, &token, Method::POST, "/api/participant/start", None).await;
        let thread = session["thread_id"].as_str().unwrap().to_string();
        for who in [owner, ed, vw] {
            let (status, _) = call(&server, who, Method::GET, &format!("/api/threads/{thread}/workspace"), None).await;
            assert_eq!(status, 200);
            let (status, _) = call(&server, who, Method::PUT, &format!("/api/threads/{thread}/objective"), Some(json!({"objective": "A researcher's"}))).await;
            assert_eq!(status, 403);
        }
        let (status, _) = call(&server, out, Method::GET, &format!("/api/threads/{thread}/workspace"), None).await;
        assert_eq!(status, 404);
        let session_ref = session["session"].as_str().unwrap();
        let (status, _) = call(&server, vw, Method::GET, &format!("{study}/sessions/{session_ref}/timeline"), None).await;
        assert_eq!(status, 200);

        // The owner changes a role and removes a member: access follows at once.
        let (status, now) = call(&server, owner, Method::PATCH, &format!("{study}/members/vw"), Some(json!({"role": "editor"}))).await;
        assert_eq!(status, 200, "{now}");
        let (status, _) = call(&server, vw, Method::POST, &format!("{study}/close"), None).await;
        assert_eq!(status, 200, "an editor now");
        let (status, now) = call(&server, owner, Method::DELETE, &format!("{study}/members/vw"), None).await;
        assert_eq!(status, 200);
        assert_eq!(now, json!([{"name": "owner", "role": "owner"}, {"name": "ed", "role": "editor"}]));
        for path in [study.clone(), format!("{study}/summary"), format!("/api/threads/{thread}/workspace")] {
            let (status, _) = call(&server, vw, Method::GET, &path, None).await;
            assert_eq!(status, 404, "removed member GET {path}");
        }
        let (_, listed) = call(&server, vw, Method::GET, "/api/studies", None).await;
        assert_eq!(listed, json!([]));
        // The owner deletes; the administrator owns every study too.
        let (status, _) = call(&server, ADMIN, Method::GET, &format!("{study}/members"), None).await;
        assert_eq!(status, 200);
        let (status, _) = call(&server, owner, Method::DELETE, &study, None).await;
        assert_eq!(status, 204);
        let (_, listed) = call(&server, ed, Method::GET, "/api/studies", None).await;
        assert_eq!(listed, json!([]));
        server.shutdown().await;
        tdb.cleanup().await;
    }
}

backend_tests! {
    async fn bad_member_input_is_refused_and_changes_nothing(engine) {
        let tdb = TestDb::new(engine).await;
        let server = TestServer::with_token(&tdb.db, ADMIN).await;
        let (tokens, id) = shared_study(&server).await;
        let owner = &tokens[0];
        let before = members(&server, owner, &id).await;
        let study = format!("/api/studies/{id}");
        for (method, path, body, status, says) in [
            (Method::POST, format!("{study}/members"), json!({"name": "nobody", "role": "viewer"}), 404, "no account named `nobody`"),
            (Method::POST, format!("{study}/members"), json!({"name": "out", "role": "owner"}), 400, "\"viewer\""),
            (Method::POST, format!("{study}/members"), json!({"name": "out", "role": "admin"}), 400, "\"editor\""),
            (Method::POST, format!("{study}/members"), json!({"name": "vw", "role": "editor"}), 409, "PATCH"),
            (Method::POST, format!("{study}/members"), json!({"name": "owner", "role": "editor"}), 400, "owns this study"),
            (Method::POST, format!("{study}/members"), json!({"name": "out"}), 422, "role"),
            (Method::POST, format!("{study}/members"), json!({"name": "out", "role": "viewer", "x": 1}), 422, "x"),
            (Method::PATCH, format!("{study}/members/out"), json!({"role": "editor"}), 404, "not shared with `out`"),
            (Method::PATCH, format!("{study}/members/vw"), json!({"role": "boss"}), 400, "\"viewer\""),
            (Method::PATCH, format!("{study}/members/owner"), json!({"role": "viewer"}), 400, "owns this study"),
            (Method::PATCH, format!("{study}/members/nobody"), json!({"role": "viewer"}), 404, "no account named `nobody`"),
            (Method::DELETE, format!("{study}/members/owner"), Value::Null, 400, "owns this study"),
            (Method::DELETE, format!("{study}/members/out"), Value::Null, 404, "not shared with `out`"),
            (Method::DELETE, format!("{study}/members/nobody"), Value::Null, 404, "no account named `nobody`"),
            (Method::POST, "/api/studies/no-such-study/members".to_string(), json!({"name": "out", "role": "viewer"}), 404, "does not exist"),
        ] {
            let body_ = (!body.is_null()).then_some(body);
            let (got, answer) = call(&server, owner, method.clone(), &path, body_).await;
            assert_eq!(got, status, "{method} {path}: {answer}");
            let error = answer["error"].as_str().unwrap_or_default();
            assert!(error.contains(says), "{method} {path}: {error:?} should say {says:?}");
            assert_eq!(members(&server, owner, &id).await, before, "{method} {path} changed nothing");
        }
        server.shutdown().await;
        tdb.cleanup().await;
    }
}

backend_tests! {
    async fn in_one_person_mode_the_one_person_owns_every_study(engine) {
        let tdb = TestDb::new(engine).await;
        let server = crate::studies::server(&tdb).await;
        let made = server.post("/api/studies", &design(two_conditions())).await.expect(201);
        assert_eq!(made["role"], "owner");
        let id = made["id"].as_str().unwrap();
        let listed = server.get("/api/studies").await.expect(200);
        assert_eq!(listed[0]["role"], "owner");
        // No accounts: nobody to share with, and nobody named as the owner.
        let members = server.get(&format!("/api/studies/{id}/members")).await.expect(200);
        assert_eq!(members, json!([]));
        let answer = server.post(&format!("/api/studies/{id}/members"), &json!({"name": "someone", "role": "viewer"})).await.expect(404);
        assert_eq!(answer["error"], "no account named `someone`");
        server.shutdown().await;
        tdb.cleanup().await;
    }
}
