//! People, on both engines against a real server: accounts and their tokens, sign-in sessions
//! (cookie attributes, expiry, sign-out, revocation), cookie writes from another site's page,
//! wrong passwords slowed down, thread lists and sharing, attribution of every change and
//! message, MCP with a personal token confined to that person's threads, one-person mode, and
//! threads from before accounts going to the first administrator.

use crate::common;
use crate::common::agent as agent_support;

use std::time::Duration;

use agent_support::*;
use common::{
    TestDb,
    mock_llm::{Script, call},
    server::{RawAnswer as Answer, TestServer},
};
use haico::people::People;
use reqwest::{Method, header};
use serde_json::{Value, json};

const ADMIN_TOKEN: &str = "the-administrators-token";

/// A request with optional bearer token, cookie and origin.
#[derive(Default, Clone, Copy)]
struct As<'a> {
    token: Option<&'a str>,
    cookie: Option<&'a str>,
    origin: Option<&'a str>,
}

impl<'a> As<'a> {
    fn token(token: &'a str) -> Self {
        Self {
            token: Some(token),
            ..Self::default()
        }
    }
    fn cookie(cookie: &'a str, origin: Option<&'a str>) -> Self {
        Self {
            cookie: Some(cookie),
            origin,
            ..Self::default()
        }
    }
}

async fn send(
    server: &TestServer,
    method: Method,
    path: &str,
    who: As<'_>,
    body: Option<Value>,
) -> Answer {
    let mut request = server.client.request(method, server.url(path));
    if let Some(token) = who.token {
        request = request.bearer_auth(token);
    }
    if let Some(cookie) = who.cookie {
        request = request.header(header::COOKIE, cookie);
    }
    if let Some(origin) = who.origin {
        request = request.header(header::ORIGIN, origin);
    }
    if let Some(body) = body {
        request = request.json(&body);
    }
    Answer::read(request.send().await.expect("request sent")).await
}

async fn admin(server: &TestServer, method: Method, path: &str, body: Option<Value>) -> Answer {
    send(server, method, path, As::token(ADMIN_TOKEN), body).await
}

/// Makes a member with a password; returns their token.
async fn member(server: &TestServer, name: &str) -> String {
    let made = admin(
        server,
        Method::POST,
        "/api/users",
        Some(json!({"name": name, "password": format!("{name}-secret-pw")})),
    )
    .await;
    assert_eq!(made.status, 201, "{:?}", made.json());
    made.json()["token"].as_str().unwrap().to_string()
}

/// Signs in; returns the `Set-Cookie` header and the `name=value` pair to send back.
async fn sign_in(server: &TestServer, name: &str, password: &str) -> (String, String) {
    let answer = send(
        server,
        Method::POST,
        "/api/session",
        As::default(),
        Some(json!({"name": name, "password": password})),
    )
    .await;
    assert_eq!(answer.status, 200, "{:?}", answer.json());
    let set = answer.header(header::SET_COOKIE).unwrap().to_string();
    let pair = set.split(';').next().unwrap().to_string();
    (set, pair)
}

fn origin_of(server: &TestServer) -> String {
    format!("http://{}", server.addr)
}

/// Ends every session's validity now, as time passing would.
async fn expire_sessions(db: &haico::store::Database) {
    let sql = "UPDATE sessions SET expires_at = created_at";
    match db {
        haico::store::Database::Sqlite { writer, .. } => {
            let held = writer.begin().await.unwrap();
            held.inline().unwrap().execute(sql, []).unwrap();
            held.commit().await.unwrap();
        }
        haico::store::Database::Postgres { pool, .. } => {
            sqlx::query(sql).execute(pool).await.unwrap();
        }
    }
}

/// Waits until the server has noticed that accounts exist (it looks at most once a second).
async fn until_guarded(server: &TestServer) {
    for _ in 0..40 {
        let me = send(server, Method::GET, "/api/me", As::default(), None).await;
        if me.status == 401 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the server never noticed the accounts");
}

backend_tests! {
    async fn accounts_and_personal_tokens(engine) {
        let tdb = TestDb::new(engine).await;
        let server = TestServer::with_token(&tdb.db, ADMIN_TOKEN).await;

        // Made by the administrator; the token is shown once, the list never shows secrets.
        let made = admin(&server, Method::POST, "/api/users",
            Some(json!({"name": "ada", "password": "correct horse", "role": "admin"}))).await;
        assert_eq!(made.status, 201);
        let made = made.json();
        assert_eq!(common::server::keys(&made), common::server::key_set(&["id", "name", "role", "created_at", "token"]));
        assert_eq!(made["role"], json!("admin"));
        let ada = made["token"].as_str().unwrap().to_string();
        let bob = member(&server, "bob").await;
        let listed = admin(&server, Method::GET, "/api/users", None).await;
        assert_eq!(listed.status, 200);
        let text = String::from_utf8_lossy(&listed.body).to_string();
        assert!(!text.contains("argon2") && !text.contains(&bob) && !text.contains("hash") && !text.contains("token"), "{text}");
        for user in listed.json().as_array().unwrap() {
            assert_eq!(common::server::keys(user), common::server::key_set(&["id", "name", "role", "created_at"]));
        }

        // Bad input changes nothing.
        for (body, status) in [
            (json!({"name": "bob"}), 409),
            (json!({"name": "no spaces"}), 400),
            (json!({"name": ""}), 400),
            (json!({"name": "carl", "password": "short"}), 400),
            (json!({"name": "carl", "role": "owner"}), 400),
            (json!({"name": "carl", "extra": 1}), 422),
        ] {
            let answer = admin(&server, Method::POST, "/api/users", Some(body.clone())).await;
            assert_eq!(answer.status.as_u16(), status, "{body}: {:?}", answer.json());
            assert!(answer.json()["error"].as_str().is_some());
        }
        assert_eq!(admin(&server, Method::GET, "/api/users", None).await.json().as_array().unwrap().len(), 2);

        // An admin account manages accounts; a member may not.
        let me = send(&server, Method::GET, "/api/me", As::token(&ada), None).await;
        assert_eq!(me.json()["name"], json!("ada"));
        assert_eq!(me.json()["role"], json!("admin"));
        let refused = send(&server, Method::POST, "/api/users", As::token(&bob), Some(json!({"name": "eve"}))).await;
        assert_eq!(refused.status, 403);
        let made = send(&server, Method::POST, "/api/users", As::token(&ada), Some(json!({"name": "eve"}))).await;
        assert_eq!(made.status, 201);

        // Wrong tokens: 401 with a challenge naming the problem.
        for token in ["haico_not-a-real-token", "something-else", &bob[..bob.len() - 1]] {
            let answer = send(&server, Method::GET, "/api/me", As::token(token), None).await;
            assert_eq!(answer.status, 401, "{token}");
            assert!(answer.header(header::WWW_AUTHENTICATE).unwrap().contains("invalid_token"));
        }

        // A new token replaces the old one at once.
        let reset = admin(&server, Method::POST, "/api/users/bob/token", None).await;
        assert_eq!(reset.status, 200);
        let new_bob = reset.json()["token"].as_str().unwrap().to_string();
        assert_ne!(new_bob, bob);
        assert_eq!(send(&server, Method::GET, "/api/me", As::token(&bob), None).await.status, 401);
        assert_eq!(send(&server, Method::GET, "/api/me", As::token(&new_bob), None).await.status, 200);
        assert_eq!(admin(&server, Method::POST, "/api/users/nobody/token", None).await.status, 404);

        // A removed account's token stops working; removing yourself is refused.
        assert_eq!(send(&server, Method::DELETE, "/api/users/ada", As::token(&ada), None).await.status, 400);
        assert_eq!(admin(&server, Method::DELETE, "/api/users/bob", None).await.status, 204);
        assert_eq!(send(&server, Method::GET, "/api/me", As::token(&new_bob), None).await.status, 401);
        assert_eq!(admin(&server, Method::DELETE, "/api/users/bob", None).await.status, 404);

        server.shutdown().await;
        tdb.cleanup().await;
    }

    async fn sessions_cookies_and_origins(engine) {
        let tdb = TestDb::new(engine).await;
        let server = TestServer::with_token(&tdb.db, ADMIN_TOKEN).await;
        let token = member(&server, "mia").await;
        let thread = send(&server, Method::POST, "/api/threads", As::token(&token), Some(json!({"id": "mine"}))).await;
        assert_eq!(thread.status, 201);

        // The state before signing in: accounts exist, nobody is signed in.
        let state = send(&server, Method::GET, "/api/session", As::default(), None).await.json();
        assert_eq!(state, json!({"accounts": true, "user": null}));

        // Wrong password: 401, no cookie.
        let wrong = send(&server, Method::POST, "/api/session", As::default(),
            Some(json!({"name": "mia", "password": "not her password"}))).await;
        assert_eq!(wrong.status, 401);
        assert!(wrong.header(header::SET_COOKIE).is_none());

        let (set, cookie) = sign_in(&server, "mia", "mia-secret-pw").await;
        let attributes: Vec<String> = set.split(';').map(|a| a.trim().to_ascii_lowercase()).collect();
        assert!(attributes.contains(&"httponly".to_string()), "{set}");
        assert!(attributes.contains(&"samesite=strict".to_string()), "{set}");
        assert!(attributes.contains(&"path=/".to_string()), "{set}");
        assert!(attributes.iter().any(|a| a == &format!("max-age={}", 14 * 24 * 3600)), "{set}");
        assert!(!attributes.contains(&"secure".to_string()), "plain HTTP: {set}");
        assert!(!cookie.contains(&token), "the session is not the token");

        // Behind a TLS proxy the cookie is Secure.
        let tls = server.client.post(server.url("/api/session"))
            .header("x-forwarded-proto", "https")
            .json(&json!({"name": "mia", "password": "mia-secret-pw"}))
            .send().await.unwrap();
        let tls_cookie = tls.headers().get(header::SET_COOKIE).unwrap().to_str().unwrap().to_ascii_lowercase();
        assert!(tls_cookie.contains("; secure"), "{tls_cookie}");

        // The cookie reads; it writes only from this server's own page.
        let origin = origin_of(&server);
        let me = send(&server, Method::GET, "/api/me", As::cookie(&cookie, None), None).await;
        assert_eq!(me.json()["name"], json!("mia"));
        let state = send(&server, Method::GET, "/api/session", As::cookie(&cookie, None), None).await.json();
        assert_eq!(state["user"]["name"], json!("mia"));
        for bad_origin in [Some("http://evil.example"), Some("null"), None] {
            let answer = send(&server, Method::PUT, "/api/threads/mine/objective",
                As::cookie(&cookie, bad_origin), Some(json!({"objective": "Hijacked"}))).await;
            assert_eq!(answer.status, 403, "{bad_origin:?}");
            assert!(answer.json()["error"].as_str().unwrap().contains("Origin"));
        }
        let objective = send(&server, Method::GET, "/api/threads/mine/objective", As::cookie(&cookie, None), None).await;
        assert_eq!(objective.json()["objective"], json!(null), "nothing was written");
        let answer = send(&server, Method::PUT, "/api/threads/mine/objective",
            As::cookie(&cookie, Some(&origin)), Some(json!({"objective": "Mine"}))).await;
        assert_eq!(answer.status, 200);
        // A bearer token needs no Origin (it is not sent by a browser on its own).
        let answer = send(&server, Method::PUT, "/api/threads/mine/objective",
            As::token(&token), Some(json!({"objective": "Mine again"}))).await;
        assert_eq!(answer.status, 200);
        // A sign-in posted from another site is refused.
        let foreign = send(&server, Method::POST, "/api/session", As { origin: Some("http://evil.example"), ..As::default() },
            Some(json!({"name": "mia", "password": "mia-secret-pw"}))).await;
        assert_eq!(foreign.status, 403);

        // Signing out ends the session on the server: the same cookie no longer works.
        let out = send(&server, Method::DELETE, "/api/session", As::cookie(&cookie, Some(&origin)), None).await;
        assert_eq!(out.status, 204);
        assert!(out.header(header::SET_COOKIE).unwrap().to_ascii_lowercase().contains("max-age=0"));
        assert_eq!(send(&server, Method::GET, "/api/me", As::cookie(&cookie, None), None).await.status, 401);

        // An expired session does not work either.
        let (_, cookie) = sign_in(&server, "mia", "mia-secret-pw").await;
        assert_eq!(send(&server, Method::GET, "/api/me", As::cookie(&cookie, None), None).await.status, 200);
        expire_sessions(&tdb.db).await;
        assert_eq!(send(&server, Method::GET, "/api/me", As::cookie(&cookie, None), None).await.status, 401);

        // A cookie with a made-up session is nobody.
        assert_eq!(send(&server, Method::GET, "/api/me",
            As::cookie("haico_session=made-up", None), None).await.status, 401);

        server.shutdown().await;
        tdb.cleanup().await;
    }

    async fn wrong_passwords_are_slowed_down(engine) {
        let tdb = TestDb::new(engine).await;
        let server = TestServer::with_token(&tdb.db, ADMIN_TOKEN).await;
        member(&server, "sam").await;
        let attempt = |password: &'static str| {
            let server = &server;
            async move {
                send(server, Method::POST, "/api/session", As::default(),
                    Some(json!({"name": "sam", "password": password}))).await
            }
        };
        for _ in 0..haico::people::FREE_ATTEMPTS {
            assert_eq!(attempt("guess-guess").await.status, 401);
        }
        let slowed = attempt("guess-guess").await;
        assert_eq!(slowed.status, 429);
        let wait: u64 = slowed.header(header::RETRY_AFTER).unwrap().parse().unwrap();
        assert!(wait >= 1);
        // While it waits, even the right password is refused.
        assert_eq!(attempt("sam-secret-pw").await.status, 429);
        tokio::time::sleep(Duration::from_millis(wait * 1000 + 100)).await;
        let (_, _) = sign_in(&server, "sam", "sam-secret-pw").await;
        // Unknown names cost as much as known ones and are counted per address too.
        let unknown = send(&server, Method::POST, "/api/session", As::default(),
            Some(json!({"name": "nobody", "password": "whatever-pw"}))).await;
        assert_eq!(unknown.status, 401);
        server.shutdown().await;
        tdb.cleanup().await;
    }

    async fn guesses_from_one_address_and_in_parallel_are_slowed_down(engine) {
        let tdb = TestDb::new(engine).await;
        // Parallel guesses at one account: each is counted when it starts, so only the free
        // attempts get an answer about the password.
        let server = TestServer::with_token(&tdb.db, ADMIN_TOKEN).await;
        member(&server, "sam").await;
        let burst = futures::future::join_all((0..20).map(|_| send(&server, Method::POST,
            "/api/session", As::default(), Some(json!({"name": "sam", "password": "guess-guess"})))))
            .await;
        let checked = burst.iter().filter(|answer| answer.status == 401).count();
        let slowed = burst.iter().filter(|answer| answer.status == 429).count();
        assert_eq!(checked, usize::try_from(haico::people::FREE_ATTEMPTS).unwrap());
        assert_eq!(checked + slowed, 20);
        server.shutdown().await;

        // Guesses at many names from one address: the address waits, whatever name comes
        // next, and signing in to one's own account does not wipe the address's record.
        let server = TestServer::with_token(&tdb.db, ADMIN_TOKEN).await;
        member(&server, "own").await;
        for name in ["n1", "n2", "n3", "n4"] {
            let wrong = send(&server, Method::POST, "/api/session", As::default(),
                Some(json!({"name": name, "password": "guess-guess"}))).await;
            assert_eq!(wrong.status, 401);
        }
        let (_, _) = sign_in(&server, "own", "own-secret-pw").await;
        let fifth = send(&server, Method::POST, "/api/session", As::default(),
            Some(json!({"name": "n5", "password": "guess-guess"}))).await;
        assert_eq!(fifth.status, 401);
        let sixth = send(&server, Method::POST, "/api/session", As::default(),
            Some(json!({"name": "n6", "password": "guess-guess"}))).await;
        assert_eq!(sixth.status, 429);
        assert!(sixth.header(header::RETRY_AFTER).is_some());
        server.shutdown().await;
        tdb.cleanup().await;
    }

    async fn threads_are_listed_and_shared_by_role(engine) {
        let tdb = TestDb::new(engine).await;
        let server = TestServer::with_token(&tdb.db, ADMIN_TOKEN).await;
        let ann = member(&server, "ann").await;
        let ben = member(&server, "ben").await;
        for (token, id) in [(&ann, "ann-1"), (&ann, "ann-2"), (&ben, "ben-1")] {
            let made = send(&server, Method::POST, "/api/threads", As::token(token), Some(json!({"id": id}))).await;
            assert_eq!(made.status, 201);
        }
        let ids = |answer: Answer| -> Vec<String> {
            let mut ids: Vec<String> = answer.json().as_array().unwrap().iter()
                .map(|t| t["id"].as_str().unwrap().to_string()).collect();
            ids.sort();
            ids
        };
        assert_eq!(ids(send(&server, Method::GET, "/api/threads", As::token(&ann), None).await), ["ann-1", "ann-2"]);
        assert_eq!(ids(send(&server, Method::GET, "/api/threads", As::token(&ben), None).await), ["ben-1"]);
        assert_eq!(ids(admin(&server, Method::GET, "/api/threads", None).await), ["ann-1", "ann-2", "ben-1"]);

        // Shared as viewer: listed, readable, not writable; then as editor: writable.
        let shared = send(&server, Method::PUT, "/api/threads/ann-1/members/ben", As::token(&ann), Some(json!({"role": "viewer"}))).await;
        assert_eq!(shared.status, 200);
        assert_eq!(shared.json(), json!([{"name": "ann", "role": "owner"}, {"name": "ben", "role": "viewer"}]));
        assert_eq!(ids(send(&server, Method::GET, "/api/threads", As::token(&ben), None).await), ["ann-1", "ben-1"]);
        let thread = send(&server, Method::GET, "/api/threads/ann-1", As::token(&ben), None).await;
        assert_eq!(thread.json()["owner"], json!("ann"));
        let refused = send(&server, Method::PUT, "/api/threads/ann-1/objective", As::token(&ben), Some(json!({"objective": "x"}))).await;
        assert_eq!(refused.status, 403);
        assert!(refused.json()["error"].as_str().unwrap().contains("editor"));
        // Only the owner manages members.
        assert_eq!(send(&server, Method::GET, "/api/threads/ann-1/members", As::token(&ben), None).await.status, 403);
        let promoted = send(&server, Method::PUT, "/api/threads/ann-1/members/ben", As::token(&ann), Some(json!({"role": "editor"}))).await;
        assert_eq!(promoted.json(), json!([{"name": "ann", "role": "owner"}, {"name": "ben", "role": "editor"}]));
        let written = send(&server, Method::PUT, "/api/threads/ann-1/objective", As::token(&ben), Some(json!({"objective": "Together"}))).await;
        assert_eq!(written.status, 200);
        // An editor still may not delete or share.
        assert_eq!(send(&server, Method::DELETE, "/api/threads/ann-1", As::token(&ben), None).await.status, 403);

        // Bad shares change nothing.
        for (path, body, status) in [
            ("/api/threads/ann-1/members/nobody", json!({"role": "viewer"}), 404),
            ("/api/threads/ann-1/members/ben", json!({"role": "owner"}), 400),
            ("/api/threads/ann-1/members/ann", json!({"role": "viewer"}), 400),
            ("/api/threads/ann-1/members/ben", json!({}), 422),
        ] {
            let answer = send(&server, Method::PUT, path, As::token(&ann), Some(body)).await;
            assert_eq!(answer.status.as_u16(), status, "{path}");
        }
        let members = send(&server, Method::GET, "/api/threads/ann-1/members", As::token(&ann), None).await;
        assert_eq!(members.json(), json!([{"name": "ann", "role": "owner"}, {"name": "ben", "role": "editor"}]));

        // Unshared: the thread is gone for ben, everywhere.
        let unshared = send(&server, Method::DELETE, "/api/threads/ann-1/members/ben", As::token(&ann), None).await;
        assert_eq!(unshared.json(), json!([{"name": "ann", "role": "owner"}]));
        assert_eq!(send(&server, Method::DELETE, "/api/threads/ann-1/members/ben", As::token(&ann), None).await.status, 404);
        for path in ["/api/threads/ann-1", "/api/threads/ann-1/events", "/api/threads/ann-1/export", "/api/threads/ann-1/messages"] {
            let answer = send(&server, Method::GET, path, As::token(&ben), None).await;
            assert_eq!(answer.status, 404, "{path}");
            assert_eq!(answer.json(), json!({"error": "thread `ann-1` does not exist"}));
        }
        // The events stream takes a personal token in the query string, and still says 404.
        let events = server.client.get(server.url(&format!("/api/threads/ann-1/events?access_token={ben}"))).send().await.unwrap();
        assert_eq!(events.status(), 404);
        let events = server.client.get(server.url(&format!("/api/threads/ben-1/events?access_token={ben}"))).send().await.unwrap();
        assert_eq!(events.status(), 200);

        // An events stream already open when the thread is unshared ends (within the recheck).
        send(&server, Method::PUT, "/api/threads/ann-1/members/ben", As::token(&ann), Some(json!({"role": "viewer"}))).await;
        let mut open = server.client.get(server.url("/api/threads/ann-1/events")).bearer_auth(&ben).send().await.unwrap();
        assert_eq!(open.status(), 200);
        send(&server, Method::DELETE, "/api/threads/ann-1/members/ben", As::token(&ann), None).await;
        let ended = tokio::time::timeout(Duration::from_secs(12), async {
            while let Some(chunk) = open.chunk().await.unwrap_or(None) {
                let _ = chunk;
            }
        })
        .await;
        assert!(ended.is_ok(), "the open stream ended once ben lost access");

        // So does an administrator account's stream when the account is removed: its role is
        // read anew at each recheck, not kept from when the stream opened.
        let boss = admin(&server, Method::POST, "/api/users", Some(json!({"name": "boss", "role": "admin"}))).await;
        let boss = boss.json()["token"].as_str().unwrap().to_string();
        let mut open = server.client.get(server.url("/api/threads/ann-1/events")).bearer_auth(&boss).send().await.unwrap();
        assert_eq!(open.status(), 200);
        assert_eq!(admin(&server, Method::DELETE, "/api/users/boss", None).await.status, 204);
        let ended = tokio::time::timeout(Duration::from_secs(12), async {
            while let Some(chunk) = open.chunk().await.unwrap_or(None) {
                let _ = chunk;
            }
        })
        .await;
        assert!(ended.is_ok(), "the removed administrator's stream ended");

        // A fork by a viewer is theirs.
        send(&server, Method::PUT, "/api/threads/ann-1/members/ben", As::token(&ann), Some(json!({"role": "viewer"}))).await;
        let fork = send(&server, Method::POST, "/api/threads/ann-1/fork", As::token(&ben), Some(json!({"id": "bens-copy"}))).await;
        assert_eq!(fork.status, 201);
        assert_eq!(fork.json()["owner"], json!("ben"));
        let history = send(&server, Method::GET, "/api/threads/bens-copy/history", As::token(&ben), None).await.json();
        assert_eq!(history["revisions"][0]["by"], json!("ben"));
        assert_eq!(send(&server, Method::GET, "/api/threads/bens-copy", As::token(&ann), None).await.status, 404);

        server.shutdown().await;
        tdb.cleanup().await;
    }

    async fn every_change_and_message_says_who(engine) {
        let scripts = vec![
            Script::tool_calls(vec![call("set_objective", json!({
                "action_and_reasoning": "Noting the goal.", "objective": "Plan the launch"}))]),
            Script::text("Noted."),
        ];
        let mut setup = Setup::openai(engine, scripts).await;
        let people = People::new(setup.db.db.clone());
        let (_, owner_token) = people.create_user("olga", true, None).await.unwrap();
        let (_, editor_token) = people.create_user("ed", false, None).await.unwrap();
        until_guarded(&setup.server).await;
        let as_olga = As::token(&owner_token);
        let made = send(&setup.server, Method::POST, "/api/threads", as_olga, Some(json!({"id": "launch"}))).await;
        assert_eq!(made.status, 201);
        send(&setup.server, Method::PUT, "/api/threads/launch/members/ed", as_olga, Some(json!({"role": "editor"}))).await;

        // A person's edit.
        let put = send(&setup.server, Method::PUT, "/api/threads/launch/document", As::token(&editor_token),
            Some(json!({"content": "Draft"}))).await;
        assert_eq!(put.status, 200);
        // A chat turn by the editor: their message, and the agent's change made for them.
        let mut headers = header::HeaderMap::new();
        headers.insert(header::AUTHORIZATION, format!("Bearer {editor_token}").parse().unwrap());
        setup.server.client = reqwest::Client::builder().default_headers(headers).build().unwrap();
        whole_turn(setup.chat("launch", "Set the goal, please").await).await;
        // A tool call through the tools endpoint by the owner.
        let tool = send(&setup.server, Method::POST, "/api/threads/launch/tools/add_todos", as_olga,
            Some(json!({"action_and_reasoning": "Steps.", "steps": [{"text": "Invite"}]}))).await;
        assert_eq!(tool.status, 200);

        let history = send(&setup.server, Method::GET, "/api/threads/launch/history", as_olga, None).await.json();
        let by: Vec<(Value, Value)> = history["revisions"].as_array().unwrap().iter()
            .map(|r| (r["by"].clone(), r["tool"].clone())).collect();
        assert!(by.contains(&(json!("ed"), json!(null))), "the document edit: {by:?}");
        assert!(by.contains(&(json!("ed"), json!("set_objective"))), "the agent's change for ed: {by:?}");
        assert!(by.contains(&(json!("olga"), json!("add_todos"))), "the owner's tool call: {by:?}");

        let messages = send(&setup.server, Method::GET, "/api/threads/launch/messages", as_olga, None).await.json();
        let turn = &messages.as_array().unwrap()[0];
        let user = turn["messages"].as_array().unwrap().iter().find(|m| m["role"] == "user").unwrap();
        assert_eq!(user["by"], json!("ed"));
        let answer = turn["messages"].as_array().unwrap().iter().find(|m| m["role"] == "assistant").unwrap();
        assert!(answer.get("by").is_none(), "the agent's answer has no person: {answer}");

        // The recording says who, and an import keeps it (and belongs to the importer).
        let export = send(&setup.server, Method::GET, "/api/threads/launch/export", as_olga, None).await;
        let text = String::from_utf8_lossy(&export.body).to_string();
        assert!(text.lines().any(|l| l.contains("\"type\":\"message\"") && l.contains("\"by\":\"ed\"")), "{text}");
        assert!(text.lines().any(|l| l.contains("\"type\":\"revision\"") && l.contains("\"by\":\"olga\"")), "{text}");
        let imported = setup.server.client.post(setup.server.url("/api/threads/import?id=copy"))
            .bearer_auth(&editor_token)
            .header(header::CONTENT_TYPE, "application/x-ndjson")
            .body(text).send().await.unwrap();
        assert_eq!(imported.status(), 201);
        let imported: Value = imported.json().await.unwrap();
        assert_eq!(imported["owner"], json!("ed"));
        let messages = send(&setup.server, Method::GET, "/api/threads/copy/messages", As::token(&editor_token), None).await.json();
        assert_eq!(messages[0]["messages"][0]["by"], json!("ed"));
        setup.cleanup().await;
    }

    async fn one_person_mode_is_unchanged(engine) {
        let tdb = TestDb::new(engine).await;
        let server = TestServer::start(&tdb.db).await;
        let state = send(&server, Method::GET, "/api/session", As::default(), None).await.json();
        assert_eq!(state, json!({"accounts": false, "user": null}));
        let me = send(&server, Method::GET, "/api/me", As::default(), None).await.json();
        assert_eq!(me, json!({"id": null, "name": null, "role": "admin"}));
        let made = send(&server, Method::POST, "/api/threads", As::default(), Some(json!({"id": "solo"}))).await.json();
        assert!(made.get("owner").is_none(), "{made}");
        // A token sent anyway is ignored: there is nothing to check it against.
        let listed = send(&server, Method::GET, "/api/threads", As::token("whatever"), None).await;
        assert_eq!(listed.status, 200);
        server.shutdown().await;
        tdb.cleanup().await;
    }

    async fn threads_from_before_accounts_go_to_the_first_administrator(engine) {
        let tdb = TestDb::new(engine).await;
        let server = TestServer::start(&tdb.db).await;
        for id in ["old-1", "old-2"] {
            assert_eq!(send(&server, Method::POST, "/api/threads", As::default(), Some(json!({"id": id}))).await.status, 201);
        }
        let people = People::new(tdb.db.clone());
        // A member first: they get nothing; the first administrator gets the old threads.
        let (_, member_token) = people.create_user("first-member", false, None).await.unwrap();
        let (_, admin_token) = people.create_user("boss", true, None).await.unwrap();
        let (_, second_token) = people.create_user("boss2", true, None).await.unwrap();
        until_guarded(&server).await;
        assert_eq!(send(&server, Method::GET, "/api/threads", As::token(&member_token), None).await.json(), json!([]));
        let threads = send(&server, Method::GET, "/api/threads", As::token(&admin_token), None).await.json();
        for thread in threads.as_array().unwrap() {
            assert_eq!(thread["owner"], json!("boss"), "{thread}");
        }
        assert_eq!(threads.as_array().unwrap().len(), 2);
        // The open server is closed now: nobody anonymous gets in.
        assert_eq!(send(&server, Method::GET, "/api/threads", As::default(), None).await.status, 401);
        // Another administrator sees them too, without owning them.
        let seen = send(&server, Method::GET, "/api/threads/old-1", As::token(&second_token), None).await.json();
        assert_eq!(seen["owner"], json!("boss"));
        server.shutdown().await;
        tdb.cleanup().await;
    }

    async fn mcp_with_a_personal_token_is_confined_to_that_person(engine) {
        let tdb = TestDb::new(engine).await;
        let server = TestServer::with_token(&tdb.db, ADMIN_TOKEN).await;
        let una = member(&server, "una").await;
        let vic = member(&server, "vic").await;
        send(&server, Method::POST, "/api/threads", As::token(&una), Some(json!({"id": "unas"}))).await;
        // One MCP session per call: `initialize`, `notifications/initialized`, then `body`.
        // The status is the first refusal, or the last answer's; the JSON is its message.
        let rpc = |token: String, thread: &'static str, body: Value| {
            let server = &server;
            async move {
                let post = |session: Option<String>, message: Value| {
                    let mut request = server.client.post(server.url(&format!("/mcp/{thread}")))
                        .bearer_auth(&token)
                        .header(header::ACCEPT, "application/json, text/event-stream")
                        .json(&message);
                    if let Some(session) = session {
                        request = request
                            .header("mcp-session-id", session)
                            .header("mcp-protocol-version", "2025-06-18");
                    }
                    request.send()
                };
                let init = post(None, json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                    "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                               "clientInfo": {"name": "raw", "version": "0"}}})).await.unwrap();
                if init.status() != 200 {
                    return (init.status().as_u16(), Value::Null);
                }
                let session = init.headers().get("mcp-session-id").unwrap().to_str().unwrap().to_string();
                let _ = init.text().await;
                let ack = post(Some(session.clone()), json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await.unwrap();
                assert!(ack.status().is_success(), "{}", ack.status());
                let answer = post(Some(session), body).await.unwrap();
                let status = answer.status().as_u16();
                let text = answer.text().await.unwrap();
                let json = text.lines()
                    .find_map(|l| l.strip_prefix("data:").map(str::trim).filter(|d| d.starts_with('{')))
                    .map_or_else(
                    || serde_json::from_str::<Value>(&text).unwrap_or(Value::Null),
                    |d| serde_json::from_str::<Value>(d).unwrap(),
                );
                (status, json)
            }
        };
        let set_objective = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "set_objective",
            "arguments": {"action_and_reasoning": "Via MCP.", "objective": "From MCP"}}});
        let list_todos = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "list_todos", "arguments": {"action_and_reasoning": "Look."}}});

        // Someone else's thread does not exist for vic.
        let (status, _) = rpc(vic.clone(), "unas", set_objective.clone()).await;
        assert_eq!(status, 404);
        // Shared as viewer: reading tools work, changing ones are refused.
        send(&server, Method::PUT, "/api/threads/unas/members/vic", As::token(&una), Some(json!({"role": "viewer"}))).await;
        let (status, answer) = rpc(vic.clone(), "unas", list_todos).await;
        assert_eq!(status, 200, "{answer}");
        assert!(answer["result"].is_object(), "{answer}");
        let (_, answer) = rpc(vic.clone(), "unas", set_objective.clone()).await;
        assert!(answer["error"]["message"].as_str().unwrap().contains("editor"), "{answer}");
        let objective = admin(&server, Method::GET, "/api/threads/unas/objective", None).await.json();
        assert_eq!(objective["objective"], json!(null));
        // The owner's call is recorded as hers.
        let (status, answer) = rpc(una.clone(), "unas", set_objective.clone()).await;
        assert_eq!(status, 200, "{answer}");
        let history = admin(&server, Method::GET, "/api/threads/unas/history", None).await.json();
        assert_eq!(history["revisions"][0]["by"], json!("una"));
        // A new thread made through MCP belongs to its maker.
        let (status, _) = rpc(vic.clone(), "vics-new", set_objective).await;
        assert_eq!(status, 200);
        let thread = admin(&server, Method::GET, "/api/threads/vics-new", None).await.json();
        assert_eq!(thread["owner"], json!("vic"));
        let (status, _) = rpc(una.clone(), "vics-new", json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list"})).await;
        assert_eq!(status, 404);
        server.shutdown().await;
        tdb.cleanup().await;
    }
}
