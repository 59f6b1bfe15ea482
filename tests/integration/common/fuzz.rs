//! Shared parts of the fuzz tests (`tests/fuzz_*.rs`): proptest strategies for JSON values,
//! for values shaped by a JSON Schema and for their mutations, a runner whose case count comes
//! from `PROPTEST_CASES` (and seed from `PROPTEST_SEED`), and the "a failed call changed
//! nothing" check against the real server.

use proptest::{
    prelude::*,
    strategy::ValueTree,
    test_runner::{Config, RngAlgorithm, TestRng, TestRunner},
};
use reqwest::Method;
use serde_json::{Map, Value, json};

use crate::common::server::{Reply, TestServer};

/// Cases per property: `PROPTEST_CASES` when set, else `default` (sized so that the whole
/// harness runs in a few minutes in a debug build).
pub fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(default)
}

/// A runner for `cases` cases, seeded from `PROPTEST_SEED` (64 hex digits) or at random; the
/// seed is printed, so a failure can be replayed.
pub fn runner(cases: u32) -> TestRunner {
    let seed: [u8; 32] = std::env::var("PROPTEST_SEED")
        .ok()
        .and_then(|hex| {
            let bytes: Vec<u8> = (0..hex.len())
                .step_by(2)
                .filter_map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
                .collect();
            bytes.try_into().ok()
        })
        .unwrap_or_else(|| {
            let mut seed = [0u8; 32];
            seed[..16].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
            seed[16..].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
            seed
        });
    let hex: String = seed.iter().map(|b| format!("{b:02x}")).collect();
    eprintln!("fuzz: {cases} cases, PROPTEST_SEED={hex}");
    TestRunner::new_with_rng(
        Config {
            cases,
            ..Config::default()
        },
        TestRng::from_seed(RngAlgorithm::ChaCha, &seed),
    )
}

/// One value drawn from `strategy`.
pub fn draw<S: Strategy>(runner: &mut TestRunner, strategy: &S) -> S::Value {
    strategy
        .new_tree(runner)
        .expect("the strategy makes values")
        .current()
}

/// Text as people, models and attackers write it: empty, short, unicode, control and NUL
/// characters, whitespace only, and now and then very long.
pub fn text() -> BoxedStrategy<String> {
    prop_oneof![
        6 => "[a-z ]{0,16}",
        3 => "\\PC{0,24}",
        1 => Just(String::new()),
        1 => Just("   \t\n ".to_string()),
        1 => Just("a\u{0}b".to_string()),
        1 => "[\\x00-\\x1f\\x7f]{1,6}",
        1 => Just("\u{202e}evil\u{feff}\u{fffd}😀 ∑ \u{10ffff}".to_string()),
        1 => (1_000usize..200_000).prop_map(|n| "x".repeat(n)),
        1 => Just("' OR 1=1; -- <script>alert(1)</script> %00 ../../etc/passwd".to_string()),
    ]
    .boxed()
}

/// Numbers, including the extremes and the ones JSON allows but Rust types do not fit.
fn number() -> BoxedStrategy<Value> {
    prop_oneof![
        4 => (-5i64..200).prop_map(Value::from),
        1 => any::<i64>().prop_map(Value::from),
        1 => Just(json!(u64::MAX)),
        1 => Just(json!(i64::MIN)),
        1 => Just(json!(1e300)),
        1 => Just(json!(-0.5)),
        1 => any::<f64>().prop_filter("JSON numbers are finite", |f| f.is_finite()).prop_map(Value::from),
    ]
    .boxed()
}

/// Any JSON value: scalars, and arrays and objects a few levels deep.
pub fn json_value() -> BoxedStrategy<Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        number(),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::vec((text(), inner), 0..6)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
        ]
    })
    .boxed()
}

/// A value nested `depth` arrays or objects deep (past serde_json's recursion limit).
pub fn deeply_nested() -> BoxedStrategy<Value> {
    (120usize..400, any::<bool>())
        .prop_map(|(depth, arrays)| {
            let mut value = json!(1);
            for _ in 0..depth {
                value = if arrays {
                    json!([value])
                } else {
                    json!({ "a": value })
                };
            }
            value
        })
        .boxed()
}

/// Values shaped like `schema` (a JSON Schema as schemars writes it; `root` holds its
/// `$defs`): right types and required properties, random content.
pub fn from_schema(schema: &Value, root: &Value) -> BoxedStrategy<Value> {
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        // `#/$defs/Name` (schemars) or `#/components/schemas/Name` (OpenAPI).
        let target = reference
            .strip_prefix('#')
            .and_then(|pointer| root.pointer(pointer))
            .cloned()
            .unwrap_or(json!({}));
        return from_schema(&target, root);
    }
    if let Some(options) = schema.get("enum").and_then(Value::as_array) {
        return proptest::sample::select(options.clone()).boxed();
    }
    if let Some(constant) = schema.get("const") {
        return Just(constant.clone()).boxed();
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(options) = schema.get(key).and_then(Value::as_array) {
            let strategies: Vec<_> = options.iter().map(|o| from_schema(o, root)).collect();
            return proptest::strategy::Union::new(strategies).boxed();
        }
    }
    match schema.get("type") {
        Some(Value::Array(types)) => {
            let strategies: Vec<_> = types
                .iter()
                .map(|t| {
                    let mut one = schema.clone();
                    one["type"] = t.clone();
                    from_schema(&one, root)
                })
                .collect();
            proptest::strategy::Union::new(strategies).boxed()
        }
        Some(Value::String(t)) => match t.as_str() {
            "string" => text().prop_map(Value::String).boxed(),
            "integer" => prop_oneof![
                4 => (0i64..20).prop_map(Value::from),
                1 => number(),
            ]
            .boxed(),
            "number" => number(),
            "boolean" => any::<bool>().prop_map(Value::Bool).boxed(),
            "null" => Just(Value::Null).boxed(),
            "array" => {
                let items = schema.get("items").cloned().unwrap_or(json!({}));
                proptest::collection::vec(from_schema(&items, root), 0..4)
                    .prop_map(Value::Array)
                    .boxed()
            }
            "object" => object(schema, root),
            _ => json_value(),
        },
        _ if schema.get("properties").is_some() => object(schema, root),
        _ => json_value(),
    }
}

/// An object with `schema`'s required properties and some of its optional ones.
fn object(schema: &Value, root: &Value) -> BoxedStrategy<Value> {
    let required: Vec<String> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let properties: Vec<(String, BoxedStrategy<Value>, bool)> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|props| {
            props
                .iter()
                .map(|(name, sub)| {
                    (
                        name.clone(),
                        from_schema(sub, root),
                        required.contains(name),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let mut strategy: BoxedStrategy<Map<String, Value>> = Just(Map::new()).boxed();
    for (name, value, required) in properties {
        let keep = if required {
            Just(true).boxed()
        } else {
            any::<bool>().boxed()
        };
        strategy = (strategy, value, keep)
            .prop_map(move |(mut map, value, keep)| {
                if keep {
                    map.insert(name.clone(), value);
                }
                map
            })
            .boxed();
    }
    strategy.prop_map(Value::Object).boxed()
}

/// `valid` changed in one way that usually makes it wrong: a property dropped, replaced by
/// any value or by one nested too deeply, an unknown property added, or the whole replaced.
pub fn mutated(valid: BoxedStrategy<Value>) -> BoxedStrategy<Value> {
    (
        valid,
        json_value(),
        any::<proptest::sample::Index>(),
        0u8..6,
        deeply_nested(),
    )
        .prop_map(|(mut value, junk, index, how, deep)| {
            if let Value::Object(map) = &mut value
                && !map.is_empty()
            {
                let key = map.keys().nth(index.index(map.len())).cloned().unwrap();
                match how {
                    0 => {
                        map.remove(&key);
                    }
                    1 | 2 => {
                        map.insert(key, junk);
                    }
                    3 => {
                        map.insert(key, deep);
                    }
                    4 => {
                        map.insert("unknown_field".to_string(), junk);
                    }
                    _ => value = junk,
                }
                return value;
            }
            junk
        })
        .boxed()
}

/// What must not change when a call fails: the thread's workspace, its history and the list
/// of threads.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    workspace: Value,
    history: Value,
    threads: Value,
}

/// The snapshot of `thread` now.
pub async fn snapshot(server: &TestServer, thread: &str) -> Snapshot {
    Snapshot {
        workspace: server.workspace(thread).await,
        history: server
            .get(&format!("/api/threads/{thread}/history"))
            .await
            .expect(200),
        threads: server.get("/api/threads").await.expect(200),
    }
}

/// Asserts what every answer must be: never a 5xx, and a JSON `{"error": "…"}` on a 4xx.
#[track_caller]
pub fn assert_not_server_error(reply: &Reply, what: &str) {
    assert!(
        !reply.status.is_server_error(),
        "{what} answered {}: {}",
        reply.status,
        reply.body
    );
    // A 4xx says what went wrong (a 409 may also carry the current state).
    if reply.status.is_client_error() {
        assert!(
            reply.body["error"]
                .as_str()
                .is_some_and(|e| !e.trim().is_empty()),
            "{what} answered {} without an error text: {}",
            reply.status,
            reply.body
        );
    }
}

/// Sends `body` (`None`: no body) to `method path` and checks the answer; after a 4xx the
/// snapshot of `thread` must equal `before`. Answers the snapshot to compare the next call
/// with.
pub async fn call_and_check(
    server: &TestServer,
    thread: &str,
    method: Method,
    path: &str,
    body: Option<&Value>,
    before: Snapshot,
) -> (Reply, Snapshot) {
    let reply = server.request(method.clone(), path, body).await;
    let what = format!("{method} {path} with {}", shorten(body));
    assert_not_server_error(&reply, &what);
    let after = snapshot(server, thread).await;
    if reply.status.is_client_error() {
        assert_eq!(
            before, after,
            "{what} failed ({}) but changed something",
            reply.status
        );
    }
    (reply, after)
}

/// A body for a failure message: its first 300 characters.
pub fn shorten(body: Option<&Value>) -> String {
    let text = body
        .map(Value::to_string)
        .unwrap_or_else(|| "no body".to_string());
    text.chars().take(300).collect()
}
