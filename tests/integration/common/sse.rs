//! A minimal Server-Sent Events reader for tests: frames with `id`, `event` and `data`.

use std::time::Duration;

use futures::StreamExt;
use serde_json::Value;

/// One SSE frame.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    pub id: Option<i64>,
    pub event: String,
    pub data: Value,
}

/// An open event stream.
pub struct SseReader {
    body: futures::stream::BoxStream<'static, reqwest::Result<axum::body::Bytes>>,
    buffer: String,
}

impl SseReader {
    /// Opens `url`, optionally resuming after `last_event_id`.
    pub async fn open(client: &reqwest::Client, url: &str, last_event_id: Option<i64>) -> Self {
        let mut request = client.get(url).header("accept", "text/event-stream");
        if let Some(id) = last_event_id {
            request = request.header("last-event-id", id.to_string());
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), 200, "events stream refused");
        assert!(
            response
                .headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .is_some_and(|c| c.starts_with("text/event-stream"))
        );
        Self {
            body: response.bytes_stream().boxed(),
            buffer: String::new(),
        }
    }

    /// Reads the event stream of a response already received (e.g. the answer to a POST);
    /// asserts it is `200 text/event-stream`.
    pub fn from_response(response: reqwest::Response) -> Self {
        assert_eq!(response.status(), 200, "not an event stream response");
        assert!(
            response
                .headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .is_some_and(|c| c.starts_with("text/event-stream")),
            "content-type is not text/event-stream: {:?}",
            response.headers().get("content-type")
        );
        Self {
            body: response.bytes_stream().boxed(),
            buffer: String::new(),
        }
    }

    /// POSTs `body` as JSON to `url` and reads the answer as an event stream.
    pub async fn post(client: &reqwest::Client, url: &str, body: &Value) -> Self {
        let response = client
            .post(url)
            .header("accept", "text/event-stream")
            .json(body)
            .send()
            .await
            .unwrap();
        Self::from_response(response)
    }

    /// The next frame with an `event` (keep-alive comments are skipped); panics after `wait`.
    pub async fn next(&mut self, wait: Duration) -> Frame {
        tokio::time::timeout(wait, self.next_frame())
            .await
            .unwrap_or_else(|_| panic!("no event within {wait:?}"))
    }

    /// Waits up to `wait` and returns `None` if no frame arrives.
    pub async fn try_next(&mut self, wait: Duration) -> Option<Frame> {
        tokio::time::timeout(wait, self.next_frame()).await.ok()
    }

    /// Waits up to `wait` for the stream to end; panics if another event arrives first or it
    /// stays open. Keep-alive comments are ignored.
    pub async fn expect_end(&mut self, wait: Duration) {
        match tokio::time::timeout(wait, self.next_frame_or_end()).await {
            Ok(None) => {}
            Ok(Some(frame)) => panic!("expected the stream to end, got {frame:?}"),
            Err(_) => panic!("the stream did not end within {wait:?}"),
        }
    }

    async fn next_frame(&mut self) -> Frame {
        self.next_frame_or_end()
            .await
            .unwrap_or_else(|| panic!("event stream ended"))
    }

    /// The next frame with a field, or `None` when the stream ends cleanly.
    async fn next_frame_or_end(&mut self) -> Option<Frame> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let raw: String = self.buffer.drain(..end + 2).collect();
                let mut frame = Frame {
                    id: None,
                    event: "message".to_string(),
                    data: Value::Null,
                };
                let mut data = String::new();
                let mut has_field = false;
                for line in raw.lines() {
                    if let Some(v) = line.strip_prefix("id:") {
                        frame.id = Some(v.trim().parse().unwrap());
                        has_field = true;
                    } else if let Some(v) = line.strip_prefix("event:") {
                        frame.event = v.trim().to_string();
                        has_field = true;
                    } else if let Some(v) = line.strip_prefix("data:") {
                        if !data.is_empty() {
                            data.push('\n');
                        }
                        data.push_str(v.strip_prefix(' ').unwrap_or(v));
                        has_field = true;
                    }
                }
                if !has_field {
                    continue;
                }
                frame.data = serde_json::from_str(&data).unwrap_or(Value::String(data));
                return Some(frame);
            }
            match self.body.next().await {
                Some(Ok(chunk)) => self.buffer.push_str(&String::from_utf8_lossy(&chunk)),
                Some(Err(err)) => panic!("event stream broke: {err}"),
                None => return None,
            }
        }
    }
}
