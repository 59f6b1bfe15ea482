//! Per-connection deadlines: how long a client may take to send a request's headers, and how
//! long a kept-alive connection may sit idle between requests.
//!
//! A connection is in one of three states:
//!
//! - **waiting for a request's head**: from the moment it connects, or from the first byte of
//!   the next request on a kept-alive connection; the whole head must arrive within the header
//!   timeout (a client that sends nothing, or a header byte a second, is closed: *slowloris*);
//! - **idle**: after an answer, until the first byte of the next request; closed after the
//!   idle timeout;
//! - **busy**: from a request's head to the end of its answer's body, however long that takes:
//!   an event stream or a long chat turn is never cut by either timeout.
//!
//! [`Activity`] counts the requests in flight on a connection (each one holds an [`InFlight`]
//! until hyper drops its answer's body, and the last one to end wakes the connection's task);
//! [`Watched`] wraps the socket and, whenever hyper waits on it while no request is in flight,
//! checks the deadline of the current state and fails the read or write with
//! [`io::ErrorKind::TimedOut`] once it has passed, which makes hyper close the connection. hyper's own `header_read_timeout` is not used: it starts when hyper begins
//! waiting for the next head, so it would also close kept-alive connections after the header
//! timeout, with no separate, longer idle timeout.

use std::{
    io,
    pin::Pin,
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    task::{Context, Poll},
    time::Duration,
};

use axum::body::{Body, Bytes, HttpBody};
use futures::task::AtomicWaker;
use tokio::{
    io::{AsyncRead, AsyncWrite, ReadBuf},
    net::TcpStream,
    time::{Instant, Sleep},
};

/// The two timeouts of a connection.
#[derive(Debug, Clone, Copy)]
pub(super) struct Timeouts {
    /// The longest a request's head may take to arrive.
    pub header: Duration,
    /// The longest a connection may wait for its next request.
    pub idle: Duration,
}

/// What one connection is doing, shared by its socket ([`Watched`]) and its requests.
#[derive(Debug, Default)]
pub(super) struct Activity {
    /// Requests whose answer has not been sent to its end.
    in_flight: AtomicUsize,
    /// Requests answered so far: a change means the connection became idle again.
    finished: AtomicUsize,
    /// The connection's task, woken when its last request in flight ends, so that its socket
    /// starts the idle deadline even if hyper had nothing more to read or write.
    waker: AtomicWaker,
}

impl Activity {
    /// Counts a request as in flight until the returned guard is dropped.
    pub fn begin(self: &Arc<Self>) -> InFlight {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        InFlight(Arc::clone(self))
    }
}

/// A request in flight; dropped with its answer's body.
#[derive(Debug)]
pub(super) struct InFlight(Arc<Activity>);

impl Drop for InFlight {
    fn drop(&mut self) {
        // `finished` first: whoever sees no request in flight also sees that one ended.
        self.0.finished.fetch_add(1, Ordering::AcqRel);
        if self.0.in_flight.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.waker.wake();
        }
    }
}

/// An answer's body that keeps its request [`InFlight`] until hyper has sent it whole (or the
/// connection ended) and drops it.
#[derive(Debug)]
pub(super) struct TrackedBody {
    body: Body,
    _in_flight: InFlight,
}

impl TrackedBody {
    pub fn new(body: Body, in_flight: InFlight) -> Self {
        Self {
            body,
            _in_flight: in_flight,
        }
    }
}

impl HttpBody for TrackedBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// Which deadline applies while no request is in flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Waiting {
    /// A request has begun (or the connection is new): its head must arrive in time.
    Head,
    /// An answer was sent; the next request may take up to the idle timeout to begin.
    NextRequest,
}

/// A client's socket that fails once the deadline of its current state has passed.
#[derive(Debug)]
pub(super) struct Watched {
    stream: TcpStream,
    activity: Arc<Activity>,
    timeouts: Timeouts,
    waiting: Waiting,
    /// The answers counted when the connection last became idle.
    seen_finished: usize,
    deadline: Pin<Box<Sleep>>,
}

impl Watched {
    /// A newly accepted connection: its first request's head is due within the header timeout.
    pub fn new(stream: TcpStream, activity: Arc<Activity>, timeouts: Timeouts) -> Self {
        Self {
            stream,
            activity,
            timeouts,
            waiting: Waiting::Head,
            seen_finished: 0,
            deadline: Box::pin(tokio::time::sleep(timeouts.header)),
        }
    }

    /// Whether a request is in flight; when none is and one ended since the last look, the
    /// connection became idle and the idle deadline starts now.
    fn busy(&mut self) -> bool {
        if self.activity.in_flight.load(Ordering::Acquire) > 0 {
            return true;
        }
        let finished = self.activity.finished.load(Ordering::Acquire);
        if finished != self.seen_finished {
            self.seen_finished = finished;
            self.waiting = Waiting::NextRequest;
            self.deadline
                .as_mut()
                .reset(Instant::now() + self.timeouts.idle);
        }
        false
    }

    /// Called when the socket would block while no request is in flight: an error once the
    /// deadline has passed (registering the wake-up for it otherwise).
    fn check_deadline(&mut self, cx: &mut Context<'_>) -> io::Result<()> {
        if self.deadline.as_mut().poll(cx).is_pending() {
            return Ok(());
        }
        let why = match self.waiting {
            Waiting::Head => "the request's headers did not arrive within the header timeout",
            Waiting::NextRequest => "the connection was idle for longer than the idle timeout",
        };
        Err(io::Error::new(io::ErrorKind::TimedOut, why))
    }

    /// Checks the deadline when an operation would block outside a request; inside one, asks
    /// to be woken when it ends (the deadlines start then).
    fn on_pending<T>(&mut self, busy: bool, cx: &mut Context<'_>) -> Poll<io::Result<T>> {
        if busy {
            self.activity.waker.register(cx.waker());
        } else if let Err(err) = self.check_deadline(cx) {
            return Poll::Ready(Err(err));
        }
        Poll::Pending
    }
}

impl AsyncRead for Watched {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let busy = this.busy();
        let before = buf.filled().len();
        match Pin::new(&mut this.stream).poll_read(cx, buf) {
            Poll::Pending => this.on_pending(busy, cx),
            Poll::Ready(Ok(())) => {
                if !busy && this.waiting == Waiting::NextRequest && buf.filled().len() > before {
                    // The next request began: its head is now due within the header timeout.
                    this.waiting = Waiting::Head;
                    this.deadline
                        .as_mut()
                        .reset(Instant::now() + this.timeouts.header);
                }
                Poll::Ready(Ok(()))
            }
            ready => ready,
        }
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let busy = this.busy();
        match Pin::new(&mut this.stream).poll_write(cx, data) {
            Poll::Pending => this.on_pending(busy, cx),
            ready => ready,
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let busy = this.busy();
        match Pin::new(&mut this.stream).poll_write_vectored(cx, bufs) {
            Poll::Pending => this.on_pending(busy, cx),
            ready => ready,
        }
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let busy = this.busy();
        match Pin::new(&mut this.stream).poll_flush(cx) {
            Poll::Pending => this.on_pending(busy, cx),
            ready => ready,
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}
