//! An MCP server reached over `https://`: a second haico behind a real nginx that terminates
//! TLS with certificates made for the test. The real binary, started with `SSL_CERT_FILE`
//! naming the test's certificate authority, connects to the server whose certificate that
//! authority signed and lists its tools, and reports the server with a self-signed
//! certificate as failed, saying the certificate is not trusted.

use std::{path::Path, process::Command, time::Duration};

use serde_json::json;
use tokio::time::Instant;

use crate::common::{
    Engine, TestDb,
    child::ChildServer,
    free_port,
    nginx::{self, Nginx},
    server::TestServer,
};

/// The other server's administrator token.
const TOKEN: &str = "tls-peer-token-for-the-mcp-client-test";

fn openssl(dir: &Path, args: &[&str]) {
    let output = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run openssl");
    assert!(
        output.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// In `dir`: `ca.crt` (an authority), `trusted.{crt,key}` (for localhost, signed by it) and
/// `stranger.{crt,key}` (for localhost, signed by nobody but itself).
fn make_certificates(dir: &Path) {
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    let days = ["-days", "2"];
    openssl(
        dir,
        &[
            &["req", "-x509"],
            &ec[..],
            &days[..],
            &[
                "-keyout",
                "ca.key",
                "-out",
                "ca.crt",
                "-subj",
                "/CN=haico test authority",
            ],
        ]
        .concat(),
    );
    std::fs::write(
        dir.join("leaf.ext"),
        "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n\
         keyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    openssl(
        dir,
        &[
            &["req"],
            &ec[..],
            &[
                "-keyout",
                "trusted.key",
                "-out",
                "trusted.csr",
                "-subj",
                "/CN=localhost",
            ],
        ]
        .concat(),
    );
    openssl(
        dir,
        &[
            &[
                "x509",
                "-req",
                "-in",
                "trusted.csr",
                "-CA",
                "ca.crt",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
            ],
            &days[..],
            &["-extfile", "leaf.ext", "-out", "trusted.crt"],
        ]
        .concat(),
    );
    openssl(
        dir,
        &[
            &["req", "-x509"],
            &ec[..],
            &days[..],
            &[
                "-keyout",
                "stranger.key",
                "-out",
                "stranger.crt",
                "-subj",
                "/CN=localhost",
                "-addext",
                "subjectAltName=DNS:localhost,IP:127.0.0.1",
            ],
        ]
        .concat(),
    );
}

/// nginx on `trusted_port` (the authority's certificate) and `stranger_port` (the self-signed
/// one), both passing requests to `upstream` the way a streaming MCP server needs.
async fn start_proxy(upstream: &str, trusted_port: u16, stranger_port: u16) -> Nginx {
    let dir = tempfile::tempdir().unwrap();
    make_certificates(dir.path());
    let d = dir.path().display();
    let server = |port: u16, cert: &str| {
        format!(
            "  server {{\n    listen 127.0.0.1:{port} ssl;\n    server_name localhost;\n    \
             ssl_certificate {d}/{cert}.crt;\n    ssl_certificate_key {d}/{cert}.key;\n    \
             location / {{\n      proxy_pass http://{upstream};\n      proxy_http_version 1.1;\n      \
             proxy_set_header Connection \"\";\n      proxy_buffering off;\n      \
             proxy_read_timeout 1h;\n    }}\n  }}\n"
        )
    };
    let conf = format!(
        "{}events {{}}\nhttp {{\n{}{}{}}}\n",
        nginx::main_context(dir.path()),
        nginx::http_paths(dir.path()),
        server(trusted_port, "trusted"),
        server(stranger_port, "stranger"),
    );
    nginx::start(dir, &conf, &[trusted_port, stranger_port]).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_https_server_is_used_when_its_certificate_is_trusted() {
    needs!(nginx, openssl);
    let other_db = TestDb::new(Engine::Sqlite).await;
    let other = TestServer::with_token(&other_db.db, TOKEN).await;
    let upstream = other
        .url("")
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    let (trusted_port, stranger_port) = (free_port(), free_port());
    let proxy = start_proxy(&upstream, trusted_port, stranger_port).await;

    let dir = tempfile::tempdir().unwrap();
    let auth = json!({"Authorization": format!("Bearer {TOKEN}")});
    let servers = dir.path().join("servers.json");
    std::fs::write(
        &servers,
        json!({"mcpServers": {
            "peer": {"url": format!("https://localhost:{trusted_port}/mcp/shared"), "headers": auth},
            "stranger": {"url": format!("https://localhost:{stranger_port}/mcp/shared"), "headers": auth},
        }})
        .to_string(),
    )
    .unwrap();
    let db = format!("sqlite:{}", dir.path().join("haico.db").display());
    let servers_text = servers.display().to_string();
    let authority = proxy.dir.path().join("ca.crt").display().to_string();
    let mut client = ChildServer::start(
        &db,
        &[
            ("HAICO_MCP_SERVERS", servers_text.as_str()),
            ("SSL_CERT_FILE", authority.as_str()),
        ],
    )
    .await;

    let deadline = Instant::now() + super::READY_WITHIN;
    let statuses = loop {
        let all = client.get_json("/api/mcp-servers").await;
        let settled = |i: usize| all[i]["status"] == "ready" || all[i]["status"] == "failed";
        if settled(0) && settled(1) {
            break all;
        }
        assert!(Instant::now() < deadline, "{all}\n{}", client.log_tail(30));
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let (peer, stranger) = (&statuses[0], &statuses[1]);
    assert_eq!(peer["name"], "peer");
    assert_eq!(
        peer["status"],
        "ready",
        "{statuses}\n{}",
        client.log_tail(30)
    );
    let tools = peer["tools"].as_array().unwrap();
    assert!(tools.contains(&json!("set_objective")), "{peer}");
    assert_eq!(stranger["name"], "stranger");
    assert_eq!(stranger["status"], "failed", "{statuses}");
    let error = stranger["error"].as_str().unwrap().to_lowercase();
    assert!(
        error.contains("certificate") && error.contains("ssl_cert_file"),
        "the refusal says the certificate is not trusted and what to set: {stranger}"
    );
    assert!(!statuses.to_string().contains(TOKEN), "{statuses}");
    // Both ports were really reached over TLS through nginx.
    let access = std::fs::read_to_string(proxy.dir.path().join("access.log")).unwrap_or_default();
    assert!(access.contains("/mcp/shared"), "{access}");

    client.kill();
    other.shutdown().await;
    other_db.cleanup().await;
}
