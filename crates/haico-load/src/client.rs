//! A minimal keep-alive HTTP/1.1 client: one TCP connection per simulated client, requests
//! sent one after the other on it, bodies read whole. Built straight on `hyper`'s connection
//! API so the generator spends as little CPU per request as possible.

use std::net::SocketAddr;

use anyhow::{Context, Result, bail};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{
    Method, Request, StatusCode,
    client::conn::http1::SendRequest,
    header::{AUTHORIZATION, CONTENT_TYPE, HOST, HeaderValue},
};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

/// Where the server listens: a loopback address only.
#[derive(Debug, Clone)]
pub struct Target {
    /// The socket address to connect to.
    pub addr: SocketAddr,
    /// The `Host` header value.
    pub host: HeaderValue,
    /// The `Authorization` header value, when a bearer token is set.
    pub auth: Option<HeaderValue>,
}

impl Target {
    /// Parses `http://HOST:PORT` (no path) and resolves it; refuses anything not on loopback.
    pub async fn parse(url: &str, token: Option<&str>) -> Result<Self> {
        let rest = url
            .strip_prefix("http://")
            .with_context(|| format!("--url must start with http:// (got {url:?})"))?;
        let authority = rest.trim_end_matches('/');
        if authority.is_empty() || authority.contains('/') {
            bail!("--url must be http://HOST:PORT with no path (got {url:?})");
        }
        let with_port = if authority.rsplit_once(':').is_some_and(|(_, p)| {
            !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) && !authority.ends_with(']')
        }) {
            authority.to_string()
        } else {
            format!("{authority}:80")
        };
        let addrs: Vec<SocketAddr> = tokio::net::lookup_host(with_port.as_str())
            .await
            .with_context(|| format!("resolving {authority}"))?
            .collect();
        let Some(addr) = addrs.first().copied() else {
            bail!("{authority} resolves to no address");
        };
        if !addrs.iter().all(|a| a.ip().is_loopback()) {
            bail!(
                "refusing to load {authority}: haico-load only targets loopback addresses \
                 (127.0.0.0/8, ::1, localhost)"
            );
        }
        let host = HeaderValue::from_str(authority).context("invalid host in --url")?;
        let auth = match token.filter(|t| !t.is_empty()) {
            Some(token) => Some(
                HeaderValue::from_str(&format!("Bearer {token}"))
                    .context("the API token is not a valid header value")?,
            ),
            None => None,
        };
        Ok(Self { addr, host, auth })
    }
}

/// One open keep-alive connection.
pub struct Conn {
    sender: SendRequest<Full<Bytes>>,
    target: Target,
}

impl Conn {
    /// Opens a connection to `target`.
    pub async fn connect(target: &Target) -> Result<Self> {
        let stream = TcpStream::connect(target.addr)
            .await
            .with_context(|| format!("connecting to {}", target.addr))?;
        stream.set_nodelay(true).context("setting TCP_NODELAY")?;
        let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .context("HTTP/1 handshake")?;
        tokio::spawn(async move {
            // The connection ends when the sender is dropped or the server closes it; errors
            // surface on the next request through the sender.
            let _ = connection.await;
        });
        Ok(Self {
            sender,
            target: target.clone(),
        })
    }

    /// Sends one request and reads the whole response body.
    pub async fn send(
        &mut self,
        method: Method,
        path: &str,
        body: Option<Vec<u8>>,
    ) -> Result<(StatusCode, Bytes)> {
        self.sender
            .ready()
            .await
            .context("connection closed by the server")?;
        let mut builder = Request::builder()
            .method(method)
            .uri(path)
            .header(HOST, self.target.host.clone());
        if let Some(auth) = &self.target.auth {
            builder = builder.header(AUTHORIZATION, auth.clone());
        }
        let body = match body {
            Some(bytes) => {
                builder =
                    builder.header(CONTENT_TYPE, HeaderValue::from_static("application/json"));
                Full::new(Bytes::from(bytes))
            }
            None => Full::new(Bytes::new()),
        };
        let request = builder.body(body).context("building a request")?;
        let response = self
            .sender
            .send_request(request)
            .await
            .context("sending a request")?;
        let status = response.status();
        let bytes = response
            .into_body()
            .collect()
            .await
            .context("reading a response body")?
            .to_bytes();
        Ok((status, bytes))
    }

    /// `POST path` with a JSON body.
    pub async fn post_json(&mut self, path: &str, body: Vec<u8>) -> Result<(StatusCode, Bytes)> {
        self.send(Method::POST, path, Some(body)).await
    }
}
