//! The participant cookie counts only where a participant belongs: `/api/participant…`, the
//! entry routes and its own thread's routes. Everywhere else the browser that opened a study's
//! link is whoever it was without it (the researcher trying their own link keeps their threads
//! and studies); an explicit `Authorization: Bearer hsp_…` is the participant everywhere.

use haico::http::{ApiToken, HttpConfig, RateLimits};
use reqwest::{Method, header};
use serde_json::{Value, json};

use super::{design, open_study, server};
use crate::common::{TestDb, server::TestServer};

const ADMIN_TOKEN: &str = "cookie-walk-admin-token-0123456789";

/// One condition with every panel, so the participant's document is its to change.
fn workspace_only() -> Value {
    design(json!([
        {"key": "workspace", "label": "Workspace", "panels": ["objective", "document", "plan", "preferences", "artifacts"], "tools": "*"}
    ]))
}

/// A request with `cookies` (a `Cookie` header) and, when given, `Authorization: Bearer`; a
/// change carries the server's own `Origin`, as its page's would. Event streams answer their
/// status alone.
async fn send(
    server: &TestServer,
    method: Method,
    path: &str,
    cookies: &str,
    token: Option<&str>,
    body: Option<Value>,
) -> (u16, Value) {
    let mut request = server
        .client
        .request(method.clone(), server.url(path))
        .header(header::COOKIE, cookies);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if method != Method::GET {
        request = request.header(header::ORIGIN, server.url("").trim_end_matches('/'));
    }
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    if path.ends_with("/events") {
        return (status, Value::Null);
    }
    (status, response.json().await.unwrap_or(Value::Null))
}

/// Enters the study of `key` as `pid` and consents by the cookie: the cookie (`name=value`),
/// the token and the participant's thread.
async fn participant_cookie(server: &TestServer, key: &str, pid: &str) -> (String, String, String) {
    let response = server
        .client
        .post(server.url(&format!("/api/s/{key}/sessions")))
        .json(&json!({"participant_id": pid}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 201);
    let cookie = response.headers()[header::SET_COOKIE].to_str().unwrap();
    let cookie = cookie.split(';').next().unwrap().to_string();
    assert!(cookie.starts_with("haico_participant=hsp_"), "{cookie}");
    let token: Value = response.json().await.unwrap();
    let token = token["participant_token"].as_str().unwrap().to_string();
    let (status, session) = send(
        server,
        Method::POST,
        "/api/participant/consent",
        &cookie,
        None,
        Some(json!({"agree": true})),
    )
    .await;
    assert_eq!(status, 200, "{session}");
    assert_eq!(session["status"], "assigned");
    let thread = session["thread_id"].as_str().unwrap().to_string();
    (cookie, token, thread)
}

/// What the cookie alone reaches: the participant's routes and its own thread's (a read, a
/// change once started, the events stream).
async fn the_cookie_reaches_the_participants_own(server: &TestServer, cookie: &str, thread: &str) {
    let (status, me) = send(server, Method::GET, "/api/participant", cookie, None, None).await;
    assert_eq!(status, 200, "{me}");
    assert_eq!(me["thread_id"], json!(thread));
    let (status, started) = send(
        server,
        Method::POST,
        "/api/participant/start",
        cookie,
        None,
        None,
    )
    .await;
    assert_eq!(status, 200, "{started}");
    assert_eq!(started["status"], "active");
    for path in ["", "/workspace", "/messages", "/events"] {
        let path = format!("/api/threads/{thread}{path}");
        let (status, body) = send(server, Method::GET, &path, cookie, None, None).await;
        assert_eq!(status, 200, "GET {path}: {body}");
    }
    let path = format!("/api/threads/{thread}/document");
    let (status, body) = send(
        server,
        Method::PUT,
        &path,
        cookie,
        None,
        Some(json!({"content": "Soup"})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    // Still the participant there: what is not its own (its thread's history) does not exist.
    let path = format!("/api/threads/{thread}/history");
    let (status, body) = send(server, Method::GET, &path, cookie, None, None).await;
    assert_eq!(status, 404, "{body}");
}

/// With the participant's token in `Authorization`, anything outside its thread is `404` as
/// before, whatever cookies the browser has.
async fn the_token_is_the_participant_everywhere(server: &TestServer, token: &str, cookies: &str) {
    for path in [
        "/api/threads",
        "/api/studies",
        "/api/threads/mine/workspace",
        "/api/me",
    ] {
        let (status, body) = send(server, Method::GET, path, cookies, Some(token), None).await;
        assert_eq!(status, 404, "{path}: {body}");
    }
}

backend_tests! {
    async fn with_accounts_the_cookie_leaves_the_researchers_own_sign_in_alone(engine) {
        let tdb = TestDb::new(engine).await;
        let server = TestServer::with_config(
            &tdb.db,
            HttpConfig {
                api_token: Some(ApiToken::new(ADMIN_TOKEN).unwrap()),
                rate_limits: RateLimits { study_entries: None, ..RateLimits::default() },
                ..HttpConfig::default()
            },
        )
        .await;
        let researcher = |method: Method, path: &str, body: Option<Value>, token: &str| {
            let (server, path, token) = (&server, path.to_string(), token.to_string());
            async move { send(server, method, &path, "", Some(&token), body).await }
        };
        let (status, made) = researcher(
            Method::POST,
            "/api/users",
            Some(json!({"name": "rita", "password": "rita-password", "role": "member"})),
            ADMIN_TOKEN,
        )
        .await;
        assert_eq!(status, 201, "{made}");
        let rita = made["token"].as_str().unwrap().to_string();
        let (status, _) = researcher(Method::POST, "/api/threads", Some(json!({"id": "mine"})), &rita).await;
        assert_eq!(status, 201);
        let (status, study) = researcher(Method::POST, "/api/studies", Some(workspace_only()), &rita).await;
        assert_eq!(status, 201, "{study}");
        let study_id = study["id"].as_str().unwrap().to_string();
        let key = study["entry_url"].as_str().unwrap().strip_prefix("/s/").unwrap().to_string();
        let (status, body) = researcher(Method::POST, &format!("/api/studies/{study_id}/open"), Some(json!({})), &rita).await;
        assert_eq!(status, 200, "{body}");

        // The researcher tries their own link in their browser.
        let (cookie, token, thread) = participant_cookie(&server, &key, "rita-tries").await;
        let (_, _, other_thread) = participant_cookie(&server, &key, "someone-else").await;

        // Signed in with the token in the page, the researcher is still themselves.
        let (status, threads) = send(&server, Method::GET, "/api/threads", &cookie, Some(&rita), None).await;
        assert_eq!(status, 200, "{threads}");
        assert_eq!(threads[0]["id"], "mine", "{threads}");
        let (status, studies) = send(&server, Method::GET, "/api/studies", &cookie, Some(&rita), None).await;
        assert_eq!(status, 200, "{studies}");
        assert_eq!(studies[0]["id"], json!(study_id), "{studies}");

        // Signed in with the session cookie, too.
        let signed_in = server
            .client
            .post(server.url("/api/session"))
            .json(&json!({"name": "rita", "password": "rita-password"}))
            .send()
            .await
            .unwrap();
        assert_eq!(signed_in.status().as_u16(), 200);
        let session = signed_in.headers()[header::SET_COOKIE].to_str().unwrap();
        let session = session.split(';').next().unwrap().to_string();
        let both = format!("{session}; {cookie}");
        for (path, id) in [("/api/threads", "mine"), ("/api/studies", study_id.as_str())] {
            let (status, listed) = send(&server, Method::GET, path, &both, None, None).await;
            assert_eq!(status, 200, "{path}: {listed}");
            assert_eq!(listed[0]["id"], json!(id), "{path}: {listed}");
        }
        let (status, me) = send(&server, Method::GET, "/api/me", &both, None, None).await;
        assert_eq!(status, 200, "{me}");
        assert_eq!(me["name"], "rita");
        let path = format!("/api/studies/{study_id}/sessions");
        let (status, sessions) = send(&server, Method::GET, &path, &both, None, None).await;
        assert_eq!(status, 200, "{sessions}");

        // The cookie alone is the participant where it belongs...
        the_cookie_reaches_the_participants_own(&server, &cookie, &thread).await;
        // ...and nobody anywhere else: another participant's thread, the researcher's, the
        // lists (the cookie widens nothing).
        for path in [
            format!("/api/threads/{other_thread}/workspace"),
            "/api/threads/mine/workspace".to_string(),
            "/api/threads".to_string(),
            "/api/studies".to_string(),
        ] {
            let (status, body) = send(&server, Method::GET, &path, &cookie, None, None).await;
            assert_eq!(status, 401, "{path}: {body}");
        }

        // The token in the header stays the participant everywhere.
        the_token_is_the_participant_everywhere(&server, &token, "").await;
        the_token_is_the_participant_everywhere(&server, &token, &session).await;
        server.shutdown().await;
        tdb.cleanup().await;
    }
}

backend_tests! {
    async fn in_one_person_mode_the_cookie_leaves_the_owner_alone_outside_its_thread(engine) {
        let tdb = TestDb::new(engine).await;
        let server = server(&tdb).await;
        server.create_thread("mine").await;
        let (study_id, key) = open_study(&server, &workspace_only()).await;
        let (cookie, token, thread) = participant_cookie(&server, &key, "owner-tries").await;

        // The owner's browser, cookie and all, still sees the owner's threads and studies.
        let (status, threads) = send(&server, Method::GET, "/api/threads", &cookie, None, None).await;
        assert_eq!(status, 200, "{threads}");
        let ids: Vec<&str> = threads.as_array().unwrap().iter().map(|t| t["id"].as_str().unwrap()).collect();
        assert_eq!(ids, vec!["mine"]);
        let (status, studies) = send(&server, Method::GET, "/api/studies", &cookie, None, None).await;
        assert_eq!(status, 200, "{studies}");
        assert_eq!(studies[0]["id"], json!(study_id), "{studies}");
        for path in ["/api/threads/mine/workspace".to_string(), format!("/api/studies/{study_id}/sessions")] {
            let (status, body) = send(&server, Method::GET, &path, &cookie, None, None).await;
            assert_eq!(status, 200, "{path}: {body}");
        }
        let (status, _) = send(&server, Method::POST, "/api/threads", &cookie, None, Some(json!({"id": "another"}))).await;
        assert_eq!(status, 201, "the owner's changes elsewhere are the owner's");

        // On the participant's own thread the cookie makes the browser its participant (as
        // documented): its page works as the participant's.
        the_cookie_reaches_the_participants_own(&server, &cookie, &thread).await;
        // Without the cookie the owner reads the thread as its researcher (and the page's
        // change is the participant's).
        let history = server.get(&format!("/api/threads/{thread}/history")).await.expect(200);
        let by_participant = history["revisions"].as_array().unwrap().iter().any(|revision| {
            revision["by"].as_str().is_some_and(|by| by.starts_with("participant:"))
        });
        assert!(by_participant, "{history}");
        // A participant's token is the participant everywhere, even in one-person mode.
        the_token_is_the_participant_everywhere(&server, &token, &cookie).await;
        server.shutdown().await;
        tdb.cleanup().await;
    }
}
