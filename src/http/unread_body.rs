//! Answers to requests whose body was left unread say `Connection: close`.
//!
//! A request refused before its body is read (an unknown thread, a caller without access, a
//! body past the size limit) leaves the rest of that body on the connection, so hyper closes
//! the connection after the answer. Whether the answer itself says so depends on timing: when
//! hyper notices the dropped body only after it has written the answer's head, the head
//! promises keep-alive and the client puts the connection back in its pool, and its next
//! request, written on a connection the server is closing, fails with a broken pipe. This
//! layer settles it before the head is written: if the body did not reach its end while the
//! handler ran, the answer carries `Connection: close`, and no client reuses the connection.

use std::{
    pin::Pin,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    task::{Context, Poll},
};

use axum::{
    body::{Body, Bytes},
    extract::Request,
    http::{HeaderValue, header},
    middleware::Next,
    response::Response,
};
use http_body::{Body as HttpBody, Frame, SizeHint};

/// The middleware (`axum::middleware::from_fn`).
pub async fn close_if_unread(request: Request, next: Next) -> Response {
    if request.body().is_end_stream() {
        return next.run(request).await;
    }
    let ended = Arc::new(AtomicBool::new(false));
    let (parts, body) = request.into_parts();
    let body = Body::new(Watched {
        inner: body,
        ended: Arc::clone(&ended),
    });
    let mut response = next.run(Request::from_parts(parts, body)).await;
    if !ended.load(Ordering::Acquire) {
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

/// A request body that notes when it has been read to its end.
struct Watched {
    inner: Body,
    ended: Arc<AtomicBool>,
}

impl HttpBody for Watched {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if matches!(polled, Poll::Ready(None)) || self.inner.is_end_stream() {
            self.ended.store(true, Ordering::Release);
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
