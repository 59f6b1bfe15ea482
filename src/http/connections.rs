//! The accept loop behind [`serve`](super::serve): every connection gets a slot (at most
//! [`ConnectionLimits::max_connections`] at once; more wait in the listen queue until one
//! closes), its deadlines ([`deadline`](super::deadline): header and idle timeouts), and the
//! peer's address as axum's `ConnectInfo<SocketAddr>`.
//!
//! A failed accept (the process ran out of file descriptors: `EMFILE`, or the system:
//! `ENFILE`, or memory) is retried after a pause that doubles from 10 ms up to one second, and
//! logged once when the failures begin and once when accepting works again, not per attempt.
//!
//! Shutdown: once the signal resolves, the loop stops accepting, cancels the server's
//! `closing` token (event streams and chat streams end on it) and asks every connection to
//! close when its request in flight is answered; it returns when all connections have ended.

use std::{convert::Infallible, io, net::SocketAddr, pin::pin, sync::Arc, time::Duration};

use axum::{Router, body::Body, extract::ConnectInfo, http::Request};
use hyper::body::Incoming;
use hyper_util::{
    rt::{TokioExecutor, TokioIo},
    server::conn::auto,
};
use tokio::{
    net::{TcpListener, TcpStream},
    sync::Semaphore,
    time::Instant,
};
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

use super::deadline::{Activity, Timeouts, TrackedBody, Watched};

/// Default seconds a client has to send a request's headers.
pub const DEFAULT_HEADER_TIMEOUT_SECS: u64 = 10;
/// Default seconds a kept-alive connection may wait for its next request.
pub const DEFAULT_IDLE_TIMEOUT_SECS: u64 = 60;

/// How many connections the server keeps open and for how long they may dawdle.
#[derive(Debug, Clone)]
pub struct ConnectionLimits {
    /// A request's head (request line and headers) must arrive within this time, counted from
    /// the connection's start or from the first byte of a later request on it.
    pub header_timeout: Duration,
    /// A connection with no request in flight is closed after this time without one.
    pub idle_timeout: Duration,
    /// Most connections open at once; `None`: derived from the process's open-files limit
    /// ([`default_max_connections`](super::default_max_connections)).
    pub max_connections: Option<usize>,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        Self {
            header_timeout: Duration::from_secs(DEFAULT_HEADER_TIMEOUT_SECS),
            idle_timeout: Duration::from_secs(DEFAULT_IDLE_TIMEOUT_SECS),
            max_connections: None,
        }
    }
}

/// Serves `router` on `listener` until `shutdown` resolves; see the module's doc.
pub(super) async fn serve(
    listener: TcpListener,
    router: Router,
    limits: &ConnectionLimits,
    closing: CancellationToken,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    let max = limits
        .max_connections
        .unwrap_or_else(|| {
            crate::http::open_files::default_max_connections(
                crate::http::open_files::open_files_limit(),
                haico_store::default_max_connections(),
            )
        })
        .clamp(1, MAX_SLOTS);
    tracing::info!(
        max_connections = max,
        header_timeout_secs = limits.header_timeout.as_secs_f64(),
        idle_timeout_secs = limits.idle_timeout.as_secs_f64(),
        "connection limits"
    );
    let timeouts = Timeouts {
        header: limits.header_timeout,
        idle: limits.idle_timeout,
    };
    // hyper's own timers stay off (no `timer` is set): the deadlines are `Watched`'s.
    let builder = Arc::new(auto::Builder::new(TokioExecutor::new()));
    let slots = Arc::new(Semaphore::new(max));
    let mut backoff = AcceptBackoff::default();
    let mut shutdown = pin!(shutdown);
    loop {
        let slot = tokio::select! {
            () = &mut shutdown => break,
            slot = Arc::clone(&slots).acquire_owned() => slot,
        };
        // The semaphore is never closed.
        let Ok(slot) = slot else { break };
        let accepted = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => accepted,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => {
                backoff.succeeded();
                accepted
            }
            Err(err) => {
                drop(slot);
                if let Some(pause) = backoff.failed(&err) {
                    tokio::select! {
                        () = &mut shutdown => break,
                        () = tokio::time::sleep(pause) => {}
                    }
                }
                continue;
            }
        };
        let connection = serve_connection(
            Arc::clone(&builder),
            stream,
            peer,
            router.clone(),
            timeouts,
            closing.clone(),
        );
        tokio::spawn(async move {
            connection.await;
            drop(slot);
        });
    }
    closing.cancel();
    drop(listener);
    // Every slot is free again once every connection has ended.
    let all = u32::try_from(max).unwrap_or(u32::MAX);
    let _ = slots.acquire_many(all).await;
    Ok(())
}

/// The largest connection cap: a semaphore's permits, taken at once on shutdown, are a `u32`.
const MAX_SLOTS: usize = 1 << 24;

/// One connection, served until it ends (or, once `closing` is cancelled, until its request in
/// flight is answered).
async fn serve_connection(
    builder: Arc<auto::Builder<TokioExecutor>>,
    stream: TcpStream,
    peer: SocketAddr,
    router: Router,
    timeouts: Timeouts,
    closing: CancellationToken,
) {
    let activity = Arc::new(Activity::default());
    let io = TokioIo::new(Watched::new(stream, Arc::clone(&activity), timeouts));
    let service = hyper::service::service_fn(move |request: Request<Incoming>| {
        let in_flight = activity.begin();
        let mut request = request.map(Body::new);
        // The peer's address counts wrong passwords per address (see `people`).
        request.extensions_mut().insert(ConnectInfo(peer));
        let answer = router.clone().oneshot(request);
        async move {
            let response = answer.await?;
            Ok::<_, Infallible>(response.map(|body| TrackedBody::new(body, in_flight)))
        }
    });
    let mut connection = pin!(builder.serve_connection(io, service));
    tokio::select! {
        // Errors here are the client's (it went away, sent garbage, or was too slow): nothing
        // to report.
        _ = connection.as_mut() => return,
        () = closing.cancelled() => {}
    }
    connection.as_mut().graceful_shutdown();
    let _ = connection.await;
}

/// The pause after the first failed accept.
const FIRST_PAUSE: Duration = Duration::from_millis(10);
/// The longest pause between attempts.
const MAX_PAUSE: Duration = Duration::from_secs(1);

/// Pauses between failed accepts, growing while they keep failing.
#[derive(Debug, Default)]
struct AcceptBackoff {
    /// Failed attempts in a row.
    failures: u32,
    /// When the current run of failures began.
    since: Option<Instant>,
}

impl AcceptBackoff {
    /// How long to wait after `err` (`None`: retry at once, as for a connection the client
    /// aborted before it was accepted). Logs the first failure of a run.
    fn failed(&mut self, err: &io::Error) -> Option<Duration> {
        if matches!(
            err.kind(),
            io::ErrorKind::ConnectionAborted
                | io::ErrorKind::ConnectionReset
                | io::ErrorKind::ConnectionRefused
        ) {
            return None;
        }
        if self.failures == 0 {
            self.since = Some(Instant::now());
            tracing::warn!(
                cause = %err,
                "cannot accept connections; retrying with growing pauses (up to 1 s) until one \
                 closes. If this repeats, raise the open-files limit (ulimit -n) or lower \
                 HAICO_MAX_CONNECTIONS"
            );
        }
        let pause = FIRST_PAUSE
            .saturating_mul(1 << self.failures.min(10))
            .min(MAX_PAUSE);
        self.failures = self.failures.saturating_add(1);
        Some(pause)
    }

    /// An accept worked: ends a run of failures (and says so, once).
    fn succeeded(&mut self) {
        if self.failures == 0 {
            return;
        }
        let for_ms = self.since.map_or(0, |since| {
            u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX)
        });
        tracing::info!(
            failed_attempts = self.failures,
            for_ms,
            "accepting connections again"
        );
        self.failures = 0;
        self.since = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pauses_double_up_to_a_second_and_reset_after_a_success() {
        let mut backoff = AcceptBackoff::default();
        let emfile = io::Error::from_raw_os_error(24);
        let pauses: Vec<_> = (0..10)
            .map(|_| backoff.failed(&emfile).unwrap_or_default().as_millis())
            .collect();
        assert_eq!(
            pauses,
            vec![10, 20, 40, 80, 160, 320, 640, 1000, 1000, 1000]
        );
        backoff.succeeded();
        assert_eq!(backoff.failed(&emfile), Some(FIRST_PAUSE));
        let aborted = io::Error::from(io::ErrorKind::ConnectionAborted);
        assert_eq!(backoff.failed(&aborted), None);
    }
}
