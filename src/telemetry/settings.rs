//! Whether and how traces leave the process, read from the standard OpenTelemetry variables
//! (the ones every collector's and vendor's setup page names), so nothing haico-specific has to
//! be learnt. A value haico cannot honour is refused at start with the variable and the values
//! it takes, instead of being ignored: a person who set a sampler expects it to sample.

use std::time::Duration;

/// How spans travel to the endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// OTLP over HTTP with protobuf bodies (`http/protobuf`, port 4318): what Langfuse, Phoenix
    /// and Jaeger take, and the default.
    HttpProtobuf,
    /// OTLP over gRPC (`grpc`, port 4317), for collectors and agents that listen on it.
    Grpc,
}

impl Protocol {
    /// The value of `OTEL_EXPORTER_OTLP_PROTOCOL` that names it.
    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::HttpProtobuf => "http/protobuf",
            Protocol::Grpc => "grpc",
        }
    }
}

/// What the exporter and the spans are told, once, at start.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub protocol: Protocol,
    /// Where spans are sent: for http/protobuf the whole URL (`…/v1/traces` is added to
    /// `OTEL_EXPORTER_OTLP_ENDPOINT`, as the specification says; the traces variable is taken
    /// as it is), for gRPC the collector's address. Headers, timeout and TLS the exporter
    /// reads from the standard variables itself.
    pub endpoint: String,
    /// Budget of one export (`OTEL_EXPORTER_OTLP_TIMEOUT`, milliseconds).
    pub export_timeout: Duration,
    /// Spans held while waiting for the next export; one more is dropped and counted.
    pub max_queue: usize,
    /// Spans sent in one export.
    pub max_batch: usize,
    /// Longest wait before a partial batch is sent.
    pub delay: Duration,
    /// Whether prompts, completions and tool arguments go into the spans: off unless
    /// `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`, since they may hold
    /// personal data.
    pub capture_content: bool,
}

/// A variable set to a value haico does not take.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{variable}={value:?}: {expected}")]
pub struct SettingsError {
    pub variable: &'static str,
    pub value: String,
    pub expected: String,
}

const ENDPOINT: &str = "OTEL_EXPORTER_OTLP_ENDPOINT";
const TRACES_ENDPOINT: &str = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT";
const PROTOCOL: &str = "OTEL_EXPORTER_OTLP_PROTOCOL";
const TRACES_PROTOCOL: &str = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL";
const TIMEOUT: &str = "OTEL_EXPORTER_OTLP_TIMEOUT";
const TRACES_TIMEOUT: &str = "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT";
const SDK_DISABLED: &str = "OTEL_SDK_DISABLED";
const TRACES_EXPORTER: &str = "OTEL_TRACES_EXPORTER";
const SAMPLER: &str = "OTEL_TRACES_SAMPLER";
const SAMPLER_ARG: &str = "OTEL_TRACES_SAMPLER_ARG";
const CAPTURE: &str = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT";
const QUEUE: &str = "OTEL_BSP_MAX_QUEUE_SIZE";
const BATCH: &str = "OTEL_BSP_MAX_EXPORT_BATCH_SIZE";
const DELAY: &str = "OTEL_BSP_SCHEDULE_DELAY";

/// The samplers the SDK knows (`OTEL_TRACES_SAMPLER`).
const SAMPLERS: [&str; 6] = [
    "always_on",
    "always_off",
    "traceidratio",
    "parentbased_always_on",
    "parentbased_always_off",
    "parentbased_traceidratio",
];

impl Settings {
    /// Reads the process's environment: `None` when no endpoint is configured (export off,
    /// and then it costs nothing), or when `OTEL_SDK_DISABLED=true` or
    /// `OTEL_TRACES_EXPORTER=none` turn it off.
    pub fn from_env() -> Result<Option<Self>, SettingsError> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// [`from_env`](Self::from_env) over any source of variables (tests pass a map).
    pub fn from_lookup(
        var: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<Self>, SettingsError> {
        let var = |name: &str| {
            var(name)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        if let Some(disabled) = var(SDK_DISABLED)
            && flag(SDK_DISABLED, &disabled)?
        {
            return Ok(None);
        }
        let exporter = var(TRACES_EXPORTER);
        match exporter.as_deref() {
            None | Some("otlp") => {}
            Some("none") => return Ok(None),
            Some(other) => {
                return Err(SettingsError {
                    variable: TRACES_EXPORTER,
                    value: other.to_string(),
                    expected: "expected otlp (haico sends traces over OTLP only) or none"
                        .to_string(),
                });
            }
        }
        let protocol = match var(TRACES_PROTOCOL)
            .map(|v| (TRACES_PROTOCOL, v))
            .or_else(|| var(PROTOCOL).map(|v| (PROTOCOL, v)))
        {
            None => Protocol::HttpProtobuf,
            Some((_, v)) if v == "http/protobuf" => Protocol::HttpProtobuf,
            Some((_, v)) if v == "grpc" => Protocol::Grpc,
            Some((variable, v)) => {
                return Err(SettingsError {
                    variable,
                    value: v,
                    expected: "expected http/protobuf (port 4318) or grpc (port 4317)".to_string(),
                });
            }
        };
        let endpoint = match (var(TRACES_ENDPOINT), var(ENDPOINT)) {
            (Some(url), _) => Some((TRACES_ENDPOINT, url, false)),
            (None, Some(url)) => Some((ENDPOINT, url, true)),
            // `OTEL_TRACES_EXPORTER=otlp` alone means the default local collector.
            (None, None) if exporter.is_some() => None,
            (None, None) => return Ok(None),
        };
        let endpoint = match endpoint {
            Some((variable, url, base)) => {
                let parsed = url::Url::parse(&url).map_err(|err| SettingsError {
                    variable,
                    value: url.clone(),
                    expected: format!(
                        "not a URL ({err}): expected e.g. http://localhost:4318 (http/protobuf) \
                         or http://localhost:4317 (grpc)"
                    ),
                })?;
                if !matches!(parsed.scheme(), "http" | "https") {
                    return Err(SettingsError {
                        variable,
                        value: url,
                        expected: "expected an http:// or https:// URL".to_string(),
                    });
                }
                if base && protocol == Protocol::HttpProtobuf {
                    format!("{}/v1/traces", url.trim_end_matches('/'))
                } else {
                    url
                }
            }
            None => match protocol {
                Protocol::HttpProtobuf => "http://localhost:4318/v1/traces".to_string(),
                Protocol::Grpc => "http://localhost:4317".to_string(),
            },
        };
        if let Some(sampler) = var(SAMPLER) {
            if !SAMPLERS.contains(&sampler.as_str()) {
                return Err(SettingsError {
                    variable: SAMPLER,
                    value: sampler,
                    expected: format!("expected one of {}", SAMPLERS.join(", ")),
                });
            }
            if sampler.ends_with("traceidratio") {
                let arg = var(SAMPLER_ARG).unwrap_or_else(|| "1.0".to_string());
                let ratio = arg.parse::<f64>().ok().filter(|r| (0.0..=1.0).contains(r));
                if ratio.is_none() {
                    return Err(SettingsError {
                        variable: SAMPLER_ARG,
                        value: arg,
                        expected: "expected the share of traces to keep, from 0.0 to 1.0"
                            .to_string(),
                    });
                }
            }
        }
        let millis = |variable: &'static str, default: u64| -> Result<Duration, SettingsError> {
            match var(variable) {
                None => Ok(Duration::from_millis(default)),
                Some(v) => v
                    .parse::<u64>()
                    .ok()
                    .filter(|ms| *ms > 0)
                    .map(Duration::from_millis)
                    .ok_or(SettingsError {
                        variable,
                        value: v,
                        expected: "expected a whole number of milliseconds above 0".to_string(),
                    }),
            }
        };
        let export_timeout = match var(TRACES_TIMEOUT) {
            Some(_) => millis(TRACES_TIMEOUT, 10_000)?,
            None => millis(TIMEOUT, 10_000)?,
        };
        let count = |variable: &'static str, default: usize| -> Result<usize, SettingsError> {
            match var(variable) {
                None => Ok(default),
                Some(v) => v
                    .parse::<usize>()
                    .ok()
                    .filter(|n| (1..=1_000_000).contains(n))
                    .ok_or(SettingsError {
                        variable,
                        value: v,
                        expected: "expected a whole number from 1 to 1000000".to_string(),
                    }),
            }
        };
        let max_queue = count(QUEUE, 2048)?;
        let max_batch = count(BATCH, 512)?.min(max_queue);
        let delay = millis(DELAY, 1_000)?;
        let capture_content = match var(CAPTURE) {
            None => false,
            Some(v) => flag(CAPTURE, &v)?,
        };
        Ok(Some(Settings {
            protocol,
            endpoint,
            export_timeout,
            max_queue,
            max_batch,
            delay,
            capture_content,
        }))
    }
}

fn flag(variable: &'static str, value: &str) -> Result<bool, SettingsError> {
    match value.to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(SettingsError {
            variable,
            value: value.to_string(),
            expected: "expected true or false".to_string(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn read(pairs: &[(&str, &str)]) -> Result<Option<Settings>, SettingsError> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Settings::from_lookup(|name| map.get(name).cloned())
    }

    #[test]
    fn off_unless_an_endpoint_or_exporter_is_named() {
        assert_eq!(read(&[]), Ok(None));
        assert_eq!(read(&[("OTEL_SERVICE_NAME", "x")]), Ok(None));
        assert_eq!(
            read(&[(ENDPOINT, "http://c:4318"), (SDK_DISABLED, "true")]),
            Ok(None)
        );
        assert_eq!(
            read(&[(ENDPOINT, "http://c:4318"), (TRACES_EXPORTER, "none")]),
            Ok(None)
        );
        let on = read(&[(TRACES_EXPORTER, "otlp"), (PROTOCOL, "grpc")])
            .ok()
            .flatten()
            .map(|s| (s.protocol, s.endpoint));
        assert_eq!(
            on,
            Some((Protocol::Grpc, "http://localhost:4317".to_string()))
        );
    }

    #[test]
    fn the_general_endpoint_is_a_base_for_http_and_an_address_for_grpc() {
        let endpoint = |pairs: &[(&str, &str)]| read(pairs).ok().flatten().map(|s| s.endpoint);
        assert_eq!(
            endpoint(&[(ENDPOINT, "http://c:4318/")]),
            Some("http://c:4318/v1/traces".to_string())
        );
        assert_eq!(
            endpoint(&[(ENDPOINT, "https://cloud.langfuse.com/api/public/otel")]),
            Some("https://cloud.langfuse.com/api/public/otel/v1/traces".to_string())
        );
        assert_eq!(
            endpoint(&[(ENDPOINT, "http://c:4317"), (PROTOCOL, "grpc")]),
            Some("http://c:4317".to_string())
        );
        assert_eq!(
            endpoint(&[(TRACES_EXPORTER, "otlp")]),
            Some("http://localhost:4318/v1/traces".to_string())
        );
    }

    #[test]
    fn the_traces_variables_win_over_the_general_ones() {
        let settings = read(&[
            (ENDPOINT, "http://general:4317"),
            (TRACES_ENDPOINT, "https://traces.example/v1/traces"),
            (PROTOCOL, "grpc"),
            (TRACES_PROTOCOL, "http/protobuf"),
            (TIMEOUT, "500"),
            (CAPTURE, "TRUE"),
        ])
        .ok()
        .flatten();
        let settings =
            settings.map(|s| (s.protocol, s.endpoint, s.export_timeout, s.capture_content));
        assert_eq!(
            settings,
            Some((
                Protocol::HttpProtobuf,
                "https://traces.example/v1/traces".to_string(),
                Duration::from_millis(500),
                true
            ))
        );
    }

    #[test]
    fn values_it_cannot_honour_are_refused_by_name() {
        let cases = [
            (
                vec![(ENDPOINT, "http://c"), (PROTOCOL, "http/json")],
                PROTOCOL,
            ),
            (vec![(ENDPOINT, "localhost:4318")], ENDPOINT),
            (vec![(ENDPOINT, "ftp://c")], ENDPOINT),
            (vec![(TRACES_EXPORTER, "zipkin")], TRACES_EXPORTER),
            (
                vec![(ENDPOINT, "http://c"), (SAMPLER, "sometimes")],
                SAMPLER,
            ),
            (
                vec![
                    (ENDPOINT, "http://c"),
                    (SAMPLER, "traceidratio"),
                    (SAMPLER_ARG, "2"),
                ],
                SAMPLER_ARG,
            ),
            (vec![(ENDPOINT, "http://c"), (TIMEOUT, "soon")], TIMEOUT),
            (vec![(ENDPOINT, "http://c"), (QUEUE, "0")], QUEUE),
            (vec![(ENDPOINT, "http://c"), (CAPTURE, "yes")], CAPTURE),
            (
                vec![(ENDPOINT, "http://c"), (SDK_DISABLED, "1")],
                SDK_DISABLED,
            ),
        ];
        for (pairs, variable) in cases {
            let err = read(&pairs).err();
            assert_eq!(
                err.as_ref().map(|e| e.variable),
                Some(variable),
                "{pairs:?}"
            );
            let text = err.map(|e| e.to_string()).unwrap_or_default();
            assert!(
                text.starts_with(variable) && text.contains("expected"),
                "{text}"
            );
        }
    }
}
