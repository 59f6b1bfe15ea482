//! The cross-replica lag probe: how long after a write is answered by one replica does its
//! event reach an events stream open on another?
//!
//! One probe thread (`PREFIX-lag`) is followed on the last `--url`; every 100 ms the probe adds
//! a plan step through the first `--url` and times, from the answer, the arrival of the next
//! `workspace` event on the stream. One probe at a time, so each event belongs to one write; a
//! write whose event does not arrive within two seconds counts as missed.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper::{
    Method, Request, StatusCode,
    header::{ACCEPT, AUTHORIZATION, HOST},
};
use hyper_util::rt::TokioIo;
use serde_json::json;
use tokio::{net::TcpStream, sync::mpsc};

use crate::client::{Conn, Target};

/// How often the probe writes.
const EVERY: Duration = Duration::from_millis(100);

/// How long a probe waits for its event.
const MISSED_AFTER: Duration = Duration::from_secs(2);

/// What the probe measured.
#[derive(Debug, Default, Clone)]
pub struct Lag {
    /// The lag of each write whose event arrived.
    pub samples: Vec<Duration>,
    /// Writes whose event never arrived in time.
    pub missed: u64,
}

impl Lag {
    /// The `q` quantile (0..=1) of the samples, in milliseconds.
    pub fn quantile_ms(&self, q: f64) -> Option<f64> {
        if self.samples.is_empty() {
            return None;
        }
        let mut sorted = self.samples.clone();
        sorted.sort();
        let rank = ((sorted.len() as f64 - 1.0) * q).round() as usize;
        Some(sorted[rank.min(sorted.len() - 1)].as_secs_f64() * 1000.0)
    }
}

/// Opens the events stream of `thread` on `target`; each `workspace` frame is sent on the
/// returned channel as it arrives.
async fn follow(target: &Target, thread: &str) -> Result<mpsc::UnboundedReceiver<Instant>> {
    let stream = TcpStream::connect(target.addr)
        .await
        .with_context(|| format!("connecting to {}", target.addr))?;
    stream.set_nodelay(true).ok();
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .context("HTTP/1 handshake")?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    let mut request = Request::builder()
        .method(Method::GET)
        .uri(format!("/api/threads/{thread}/events"))
        .header(HOST, target.host.clone())
        .header(ACCEPT, "text/event-stream");
    if let Some(auth) = &target.auth {
        request = request.header(AUTHORIZATION, auth.clone());
    }
    let response = sender
        .send_request(request.body(Empty::<Bytes>::new())?)
        .await
        .context("opening the events stream")?;
    if response.status() != StatusCode::OK {
        bail!("the events stream answered {}", response.status());
    }
    let (tx, rx) = mpsc::unbounded_channel();
    let mut body = response.into_body();
    tokio::spawn(async move {
        let mut buffer = String::new();
        while let Some(Ok(frame)) = body.frame().await {
            let Ok(data) = frame.into_data() else {
                continue;
            };
            let now = Instant::now();
            buffer.push_str(&String::from_utf8_lossy(&data));
            while let Some(end) = buffer.find("\n\n") {
                let block: String = buffer.drain(..end + 2).collect();
                if block.lines().any(|l| l.trim() == "event: workspace") && tx.send(now).is_err() {
                    return;
                }
            }
        }
    });
    Ok(rx)
}

/// Probes until `until`: writes through `writer`, listens on `listener`.
pub async fn probe(
    writer: Target,
    listener: Target,
    thread: String,
    until: Instant,
) -> Result<Lag> {
    let mut conn = Conn::connect(&writer).await?;
    let create = serde_json::to_vec(&json!({"id": thread, "title": "Lag probe"}))?;
    let (status, _) = conn.post_json("/api/threads", create).await?;
    if !(status == StatusCode::CREATED || status == StatusCode::CONFLICT) {
        bail!("creating the lag probe's thread: {status}");
    }
    let mut events = follow(&listener, &thread).await?;
    let mut lag = Lag::default();
    let mut n: u64 = 0;
    while Instant::now() < until {
        tokio::time::sleep(EVERY).await;
        // Whatever arrived late belongs to an earlier, missed probe.
        while events.try_recv().is_ok() {}
        n += 1;
        let body = serde_json::to_vec(&json!({"text": format!("probe {n}")}))?;
        let (status, _) = conn
            .post_json(&format!("/api/threads/{thread}/todos"), body)
            .await?;
        let answered = Instant::now();
        if status != StatusCode::CREATED {
            bail!("the lag probe's write answered {status}");
        }
        match tokio::time::timeout(MISSED_AFTER, events.recv()).await {
            Ok(Some(arrived)) => lag
                .samples
                .push(arrived.saturating_duration_since(answered)),
            Ok(None) => bail!("the lag probe's events stream ended"),
            Err(_) => lag.missed += 1,
        }
    }
    Ok(lag)
}
