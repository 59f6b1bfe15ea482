//! A real OTLP/HTTP receiver: `POST /v1/traces` bodies decoded with the official OpenTelemetry
//! protobuf definitions, kept as plain spans the tests can query. It can also play a
//! collector that never answers, for the tests of an endpoint that is down.

use std::{
    collections::BTreeMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use axum::{Router, body::Bytes, extract::State, http::StatusCode, routing::post};
use opentelemetry_proto::tonic::{
    collector::trace::v1::{
        ExportTraceServiceRequest, ExportTraceServiceResponse,
        trace_service_server::{TraceService, TraceServiceServer},
    },
    common::v1::{AnyValue, KeyValue, any_value::Value as Any},
};
use prost::Message;
use serde_json::Value;

/// One span as the receiver got it.
#[derive(Debug, Clone)]
pub struct Received {
    pub trace: String,
    pub id: String,
    /// Empty for a root span.
    pub parent: String,
    pub name: String,
    /// OTLP's `SpanKind`: 1 internal, 2 server, 3 client.
    pub kind: i32,
    pub attributes: BTreeMap<String, Value>,
    pub events: Vec<(String, BTreeMap<String, Value>)>,
    /// OTLP's status code: 0 unset, 1 ok, 2 error.
    pub status: i32,
    /// The resource's attributes (`service.name`…).
    pub resource: BTreeMap<String, Value>,
}

impl Received {
    pub fn attr(&self, key: &str) -> Option<&Value> {
        self.attributes.get(key)
    }

    pub fn attr_str(&self, key: &str) -> &str {
        self.attr(key).and_then(Value::as_str).unwrap_or("")
    }

    pub fn attr_i64(&self, key: &str) -> Option<i64> {
        self.attr(key).and_then(Value::as_i64)
    }
}

#[derive(Clone, Default)]
struct Store {
    spans: Arc<Mutex<Vec<Received>>>,
    /// Each export request's headers, as `name: value` lines.
    headers: Arc<Mutex<Vec<Vec<String>>>>,
}

/// A receiver listening on a free local port.
pub struct Receiver {
    /// What to set the exporter's endpoint to (`…/v1/traces`).
    pub url: String,
    store: Store,
    task: tokio::task::JoinHandle<()>,
}

impl Receiver {
    pub async fn start() -> Self {
        let store = Store::default();
        let app = Router::new()
            .route("/v1/traces", post(take))
            .with_state(store.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/v1/traces", listener.local_addr().unwrap());
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Self { url, store, task }
    }

    /// A receiver of OTLP over gRPC; `url` is the address to give the exporter.
    pub async fn start_grpc() -> Self {
        let store = Store::default();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let incoming = tokio_stream_of(listener);
        let service = TraceServiceServer::new(store.clone());
        let task = tokio::spawn(async move {
            tonic::transport::Server::builder()
                .add_service(service)
                .serve_with_incoming(incoming)
                .await
                .unwrap();
        });
        Self { url, store, task }
    }

    /// The headers of every export request so far.
    pub fn headers(&self) -> Vec<Vec<String>> {
        self.store.headers.lock().unwrap().clone()
    }

    /// Every span received so far.
    pub fn spans(&self) -> Vec<Received> {
        self.store.spans.lock().unwrap().clone()
    }

    /// Waits (up to 10 s) until a span named `name` has arrived, asking `flush` to send what
    /// is queued each time round.
    pub async fn wait_for<F, Fut>(&self, name: &str, flush: F) -> Vec<Received>
    where
        F: Fn() -> Fut,
        Fut: Future<Output = ()>,
    {
        for _ in 0..100 {
            flush().await;
            let spans = self.spans();
            if spans.iter().any(|s| s.name == name) {
                return spans;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let names: Vec<String> = self.spans().into_iter().map(|s| s.name).collect();
        panic!("no span named {name:?} arrived; got {names:?}");
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn take(
    State(store): State<Store>,
    headers: axum::http::HeaderMap,
    body: Bytes,
) -> (StatusCode, Vec<u8>) {
    let Ok(request) = ExportTraceServiceRequest::decode(body) else {
        return (StatusCode::BAD_REQUEST, Vec::new());
    };
    store.record(
        headers
            .iter()
            .map(|(name, value)| format!("{name}: {}", value.to_str().unwrap_or("")))
            .collect(),
        request,
    );
    (
        StatusCode::OK,
        ExportTraceServiceResponse::default().encode_to_vec(),
    )
}

impl Store {
    fn record(&self, headers: Vec<String>, request: ExportTraceServiceRequest) {
        self.headers.lock().unwrap().push(headers);
        let mut spans = self.spans.lock().unwrap();
        for resource_spans in request.resource_spans {
            let resource = resource_spans
                .resource
                .map(|r| attributes(&r.attributes))
                .unwrap_or_default();
            for scope in resource_spans.scope_spans {
                for span in scope.spans {
                    spans.push(Received {
                        trace: hex(&span.trace_id),
                        id: hex(&span.span_id),
                        parent: hex(&span.parent_span_id),
                        name: span.name,
                        kind: span.kind,
                        attributes: attributes(&span.attributes),
                        events: span
                            .events
                            .iter()
                            .map(|e| (e.name.clone(), attributes(&e.attributes)))
                            .collect(),
                        status: span.status.map_or(0, |s| s.code),
                        resource: resource.clone(),
                    });
                }
            }
        }
    }
}

#[tonic::async_trait]
impl TraceService for Store {
    async fn export(
        &self,
        request: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        let headers = request
            .metadata()
            .iter()
            .filter_map(|entry| match entry {
                tonic::metadata::KeyAndValueRef::Ascii(name, value) => {
                    Some(format!("{name}: {}", value.to_str().unwrap_or("")))
                }
                tonic::metadata::KeyAndValueRef::Binary(..) => None,
            })
            .collect();
        self.record(headers, request.into_inner());
        Ok(tonic::Response::new(ExportTraceServiceResponse::default()))
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn attributes(list: &[KeyValue]) -> BTreeMap<String, Value> {
    list.iter()
        .map(|kv| (kv.key.clone(), kv.value.as_ref().map_or(Value::Null, any)))
        .collect()
}

fn any(value: &AnyValue) -> Value {
    match &value.value {
        Some(Any::StringValue(s)) => Value::from(s.clone()),
        Some(Any::BoolValue(b)) => Value::from(*b),
        Some(Any::IntValue(i)) => Value::from(*i),
        Some(Any::DoubleValue(d)) => Value::from(*d),
        Some(Any::ArrayValue(a)) => Value::Array(a.values.iter().map(any).collect()),
        _ => Value::Null,
    }
}

/// A collector that takes connections and never answers: an export to it waits for its
/// timeout, the worst a collector can do to a process that exports in line.
pub struct Silent {
    pub url: String,
    task: tokio::task::JoinHandle<()>,
}

impl Silent {
    pub async fn start() -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/v1/traces", listener.local_addr().unwrap());
        let task = tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((socket, _)) = listener.accept().await {
                held.push(socket);
            }
        });
        Self { url, task }
    }
}

impl Drop for Silent {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The listener's connections as the stream tonic's server takes.
fn tokio_stream_of(
    listener: tokio::net::TcpListener,
) -> impl futures::Stream<Item = std::io::Result<tokio::net::TcpStream>> {
    futures::stream::unfold(listener, |listener| async move {
        let accepted = listener.accept().await.map(|(socket, _)| socket);
        Some((accepted, listener))
    })
}
