//! The file naming the MCP servers the agent may use (`HAICO_MCP_SERVERS`), in the format
//! desktop MCP clients share: `{"mcpServers": {"<name>": {"command", "args", "env"} | {"url",
//! "headers"}}}`, each entry optionally with `"approval": "never" | "always"`.
//!
//! The file is read once, at start-up, and checked whole: a mistake anywhere stops start-up
//! with an error naming the file and the entry, because a server silently left out would only
//! show much later as an agent that "cannot" do something. Values of `env` and `headers` are
//! usually API keys: they are kept in [`Secret`], whose `Debug` never shows them, so no log
//! line or error carries them.

use std::{
    fmt,
    path::{Path, PathBuf},
};

use serde_json::{Map, Value};

use haico_core::{workspace::MAX_SERVER_NAME_LEN, workspace::valid_server_name};

/// Why the servers file cannot be used; each names the file, and the entry when one is at fault.
#[derive(Debug, thiserror::Error)]
pub enum McpConfigError {
    /// The file could not be read.
    #[error("HAICO_MCP_SERVERS: cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The file is not JSON, or its top level is not `{"mcpServers": {…}}`.
    #[error("HAICO_MCP_SERVERS: {path}: {reason}")]
    File {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// One entry is wrong.
    #[error("HAICO_MCP_SERVERS: {path}: server `{name}`: {reason}")]
    Entry {
        /// The file.
        path: PathBuf,
        /// The entry's name, as written.
        name: String,
        /// What is wrong.
        reason: String,
    },
}

/// A value that must not reach a log: `Debug` and `Display` show `<redacted>`.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps `value`.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The value itself, for the one place that needs it (the child's environment, the
    /// request's header).
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// Whether the person must approve each call of a server's tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Approval {
    /// Calls run as the agent makes them.
    #[default]
    Never,
    /// Every call waits for the person's approval. Not supported yet: such a server's tools
    /// are not offered to the agent, and a call by name is refused (see docs/MCP.md).
    Always,
}

/// How haico reaches a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// A child process speaking MCP on its standard input and output.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables added to the child's environment (sorted by name).
        env: Vec<(String, Secret)>,
    },
    /// A streamable HTTP endpoint.
    Http {
        /// The endpoint's URL (`http://…`).
        url: String,
        /// Headers sent with every request (sorted by name), e.g. `Authorization`.
        headers: Vec<(String, Secret)>,
    },
}

impl Transport {
    /// `stdio` or `http`, as `GET /api/mcp-servers` and `/metrics` say it.
    pub fn kind(&self) -> &'static str {
        match self {
            Transport::Stdio { .. } => "stdio",
            Transport::Http { .. } => "http",
        }
    }
}

/// One server of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// Its name: `[a-z0-9_-]{1,32}`, the prefix of its tools' names.
    pub name: String,
    /// How to reach it.
    pub transport: Transport,
    /// Whether its calls need the person's approval.
    pub approval: Approval,
}

/// The whole file: its servers, sorted by name (so the agent's tool list has one order).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct McpConfig {
    /// Where it was read from (for messages).
    pub path: PathBuf,
    /// The servers.
    pub servers: Vec<ServerConfig>,
}

impl McpConfig {
    /// Reads and checks the file at `path`.
    pub fn load(path: &Path) -> Result<Self, McpConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| McpConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse(path, &text)
    }

    /// Checks `text` as the contents of the file at `path` (named in errors only).
    pub fn parse(path: &Path, text: &str) -> Result<Self, McpConfigError> {
        let file_error = |reason: String| McpConfigError::File {
            path: path.to_path_buf(),
            reason,
        };
        let root: Value = serde_json::from_str(text)
            .map_err(|err| file_error(format!("not valid JSON: {err}")))?;
        let Value::Object(mut root) = root else {
            return Err(file_error(
                "the top level must be an object `{\"mcpServers\": {…}}`".into(),
            ));
        };
        let servers = match root.remove("mcpServers") {
            Some(Value::Object(servers)) => servers,
            Some(_) => return Err(file_error("`mcpServers` must be an object".into())),
            None => return Err(file_error("no `mcpServers` object".into())),
        };
        if let Some(other) = root.keys().next() {
            return Err(file_error(format!(
                "unknown key `{other}` at the top level (only `mcpServers`)"
            )));
        }
        let mut parsed = Vec::with_capacity(servers.len());
        for (name, entry) in &servers {
            let server = parse_entry(name, entry).map_err(|reason| McpConfigError::Entry {
                path: path.to_path_buf(),
                name: name.chars().take(80).collect(),
                reason,
            })?;
            parsed.push(server);
        }
        parsed.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(Self {
            path: path.to_path_buf(),
            servers: parsed,
        })
    }
}

fn parse_entry(name: &str, entry: &Value) -> Result<ServerConfig, String> {
    if !valid_server_name(name) {
        return Err(format!(
            "the name must be 1 to {MAX_SERVER_NAME_LEN} characters from a-z, 0-9, `_` and `-`"
        ));
    }
    let Value::Object(entry) = entry else {
        return Err("the entry must be an object".into());
    };
    for key in entry.keys() {
        if ![
            "command", "args", "env", "url", "headers", "approval", "type",
        ]
        .contains(&key.as_str())
        {
            return Err(format!(
                "unknown key `{key}` (known: command, args, env, url, headers, approval, type)"
            ));
        }
    }
    let approval = match entry.get("approval") {
        None => Approval::Never,
        Some(Value::String(s)) if s == "never" => Approval::Never,
        Some(Value::String(s)) if s == "always" => Approval::Always,
        Some(_) => return Err("`approval` must be \"never\" or \"always\"".into()),
    };
    let transport = match (entry.get("command"), entry.get("url")) {
        (Some(_), Some(_)) => return Err("give either `command` or `url`, not both".into()),
        (None, None) => return Err("give `command` (a program) or `url` (an endpoint)".into()),
        (Some(command), None) => {
            check_type(entry, &["stdio"])?;
            if entry.contains_key("headers") {
                return Err("`headers` belongs to a `url` server".into());
            }
            let command = match command {
                Value::String(c) if !c.trim().is_empty() => c.clone(),
                _ => return Err("`command` must be a non-empty string".into()),
            };
            let args = match entry.get("args") {
                None => Vec::new(),
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|item| item.as_str().map(str::to_string))
                    .collect::<Option<Vec<_>>>()
                    .ok_or("`args` must be an array of strings")?,
                Some(_) => return Err("`args` must be an array of strings".into()),
            };
            let env = string_map(entry.get("env"), "env")?;
            if let Some((key, _)) = env
                .iter()
                .find(|(key, _)| key.is_empty() || key.contains(['=', '\0']))
            {
                return Err(format!("`env` has an invalid variable name `{key}`"));
            }
            Transport::Stdio { command, args, env }
        }
        (None, Some(url)) => {
            check_type(entry, &["http", "streamable-http", "streamableHttp"])?;
            if entry.contains_key("args") || entry.contains_key("env") {
                return Err("`args` and `env` belong to a `command` server".into());
            }
            let Value::String(url) = url else {
                return Err("`url` must be a string".into());
            };
            let parsed =
                reqwest::Url::parse(url).map_err(|err| format!("`url` is not a URL: {err}"))?;
            match parsed.scheme() {
                "http" | "https" => {}
                other => {
                    return Err(format!(
                        "`url` must be http://… or https://…, not {other}://"
                    ));
                }
            }
            let headers = string_map(entry.get("headers"), "headers")?;
            for (key, value) in &headers {
                if ["accept", "mcp-session-id", "last-event-id"]
                    .contains(&key.to_ascii_lowercase().as_str())
                {
                    return Err(format!(
                        "`headers.{key}` is set by the MCP client itself and cannot be given"
                    ));
                }
                reqwest::header::HeaderName::from_bytes(key.as_bytes())
                    .map_err(|_| format!("`headers` has an invalid header name `{key}`"))?;
                reqwest::header::HeaderValue::from_str(value.expose())
                    .map_err(|_| format!("`headers` has an invalid value for `{key}`"))?;
            }
            Transport::Http {
                url: url.clone(),
                headers,
            }
        }
    };
    Ok(ServerConfig {
        name: name.to_string(),
        transport,
        approval,
    })
}

/// A `type` key, where given, must agree with the transport the other keys describe.
fn check_type(entry: &Map<String, Value>, allowed: &[&str]) -> Result<(), String> {
    match entry.get("type") {
        None => Ok(()),
        Some(Value::String(kind)) if allowed.contains(&kind.as_str()) => Ok(()),
        Some(other) => Err(format!(
            "`type` {other} does not fit this entry (expected one of: {})",
            allowed.join(", ")
        )),
    }
}

/// An optional object of strings, sorted by key, its values kept secret.
fn string_map(value: Option<&Value>, what: &str) -> Result<Vec<(String, Secret)>, String> {
    match value {
        None => Ok(Vec::new()),
        Some(Value::Object(map)) => {
            let mut pairs = map
                .iter()
                .map(|(key, value)| match value {
                    Value::String(v) => Ok((key.clone(), Secret::new(v.clone()))),
                    // The value is not shown: it may be a key typed in the wrong place.
                    _ => Err(format!("`{what}.{key}` must be a string")),
                })
                .collect::<Result<Vec<_>, _>>()?;
            pairs.sort_by(|a, b| a.0.cmp(&b.0));
            Ok(pairs)
        }
        Some(_) => Err(format!("`{what}` must be an object of strings")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<McpConfig, McpConfigError> {
        McpConfig::parse(Path::new("/etc/haico/mcp.json"), text)
    }

    type TestResult = Result<(), Box<dyn std::error::Error>>;

    #[test]
    fn both_kinds_of_entry_are_read_and_sorted_by_name() -> TestResult {
        let config = parse(
            r#"{"mcpServers": {
                "weather": {"url": "https://mcp.example.org/mcp", "headers": {"Authorization": "Bearer s3cret"}},
                "files": {"command": "npx", "args": ["-y", "server-filesystem", "/tmp"],
                          "env": {"TOKEN": "hunter2"}, "approval": "always"}
            }}"#,
        )?;
        let names: Vec<&str> = config.servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["files", "weather"]);
        assert_eq!(config.servers[0].approval, Approval::Always);
        assert_eq!(config.servers[1].approval, Approval::Never);
        let Transport::Stdio { command, args, env } = &config.servers[0].transport else {
            return Err(format!("{:?}", config.servers[0]).into());
        };
        assert_eq!(command, "npx");
        assert_eq!(args.len(), 3);
        assert_eq!(env[0].1.expose(), "hunter2");
        assert_eq!(config.servers[1].transport.kind(), "http");
        Ok(())
    }

    #[test]
    fn secrets_never_show_in_debug() -> TestResult {
        let config = parse(
            r#"{"mcpServers": {
                "a": {"url": "http://127.0.0.1:1/mcp", "headers": {"Authorization": "Bearer s3cret"}},
                "b": {"command": "x", "env": {"KEY": "hunter2"}}
            }}"#,
        )?;
        let shown = format!("{config:?}");
        assert!(
            !shown.contains("s3cret") && !shown.contains("hunter2"),
            "{shown}"
        );
        assert!(shown.contains("Authorization") && shown.contains("<redacted>"));
        Ok(())
    }

    #[test]
    fn a_bad_entry_is_named_with_the_file() {
        let cases = [
            (
                r#"{"mcpServers": {"Bad Name": {"command": "x"}}}"#,
                "Bad Name",
            ),
            (r#"{"mcpServers": {"a": {}}}"#, "`command`"),
            (
                r#"{"mcpServers": {"a": {"command": "x", "url": "http://h/"}}}"#,
                "not both",
            ),
            (r#"{"mcpServers": {"a": {"command": ""}}}"#, "non-empty"),
            (
                r#"{"mcpServers": {"a": {"command": "x", "args": [1]}}}"#,
                "array of strings",
            ),
            (
                r#"{"mcpServers": {"a": {"command": "x", "env": {"K": 1}}}}"#,
                "env.K",
            ),
            (r#"{"mcpServers": {"a": {"url": "ftp://h/"}}}"#, "http://"),
            (
                r#"{"mcpServers": {"a": {"url": "http://h/", "headers": {"A B": "x"}}}}"#,
                "header name",
            ),
            (
                r#"{"mcpServers": {"a": {"url": "http://h/", "headers": {"Accept": "x"}}}}"#,
                "set by the MCP client",
            ),
            (
                r#"{"mcpServers": {"a": {"command": "x", "approval": "sometimes"}}}"#,
                "approval",
            ),
            (
                r#"{"mcpServers": {"a": {"command": "x", "cwd": "/"}}}"#,
                "unknown key `cwd`",
            ),
            (
                r#"{"mcpServers": {"a": {"command": "x", "type": "http"}}}"#,
                "`type`",
            ),
        ];
        for (text, expected) in cases {
            let err = parse(text).err().map(|e| e.to_string()).unwrap_or_default();
            assert!(err.contains("/etc/haico/mcp.json"), "{text}: {err}");
            assert!(err.contains("server `"), "{err}");
            assert!(err.contains(expected), "{text}: {err}");
        }
        let long = format!(
            r#"{{"mcpServers": {{"{}": {{"command": "x"}}}}}}"#,
            "a".repeat(33)
        );
        assert!(parse(&long).is_err());
    }

    #[test]
    fn a_bad_file_is_named() {
        for (text, expected) in [
            ("not json", "not valid JSON"),
            ("[]", "top level"),
            ("{}", "no `mcpServers`"),
            (r#"{"mcpServers": []}"#, "must be an object"),
            (r#"{"mcpServers": {}, "extra": 1}"#, "unknown key `extra`"),
        ] {
            let err = parse(text).err().map(|e| e.to_string()).unwrap_or_default();
            assert!(
                err.contains("/etc/haico/mcp.json") && err.contains(expected),
                "{err}"
            );
        }
        let missing = McpConfig::load(Path::new("/nonexistent/mcp.json"))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(missing.contains("/nonexistent/mcp.json"), "{missing}");
    }

    #[test]
    fn names_are_checked() {
        assert!(valid_server_name("files"));
        assert!(valid_server_name("my_server-2"));
        assert!(!valid_server_name(""));
        assert!(!valid_server_name("Files"));
        assert!(!valid_server_name("a.b"));
        assert!(!valid_server_name(&"x".repeat(33)));
    }
}
