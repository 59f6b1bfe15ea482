//! Settings shared by the binary's commands, read from flags and `HAICO_*` variables.

use std::net::SocketAddr;

use clap::Args;

use crate::agent::providers::config::LlmArgs;

use haico_store::{DEFAULT_DATABASE_URL, PoolConfig};

/// Where the data lives.
#[derive(Debug, Clone, Args)]
pub struct DatabaseArgs {
    /// Database URL: `sqlite:PATH` (or a bare file path) or `postgres://user@host/db`.
    #[arg(long, env = "HAICO_DATABASE_URL", default_value = DEFAULT_DATABASE_URL)]
    pub database_url: String,
    /// Largest number of database connections (PostgreSQL pool, or SQLite readers); by
    /// default four per CPU core, between 8 and 32.
    #[arg(long, env = "HAICO_DB_MAX_CONNECTIONS",
          default_value_t = haico_store::default_max_connections())]
    pub db_max_connections: u32,
    /// Milliseconds a request waits for a PostgreSQL connection and the start of its
    /// transaction before it answers 503 (the database is unreachable or overloaded).
    #[arg(long, env = "HAICO_DB_TIMEOUT_MS", default_value_t = 1000,
          value_parser = clap::value_parser!(u64).range(50..=600_000))]
    pub db_timeout_ms: u64,
    /// SQLite: how many write calls may share one commit. A call waits for the shared commit
    /// only while other writes are queued behind it; 1 commits every call on its own.
    #[arg(long, env = "HAICO_SQLITE_GROUP_COMMIT",
          default_value_t = haico_store::DEFAULT_SQLITE_GROUP_COMMIT as u64,
          value_parser = clap::value_parser!(u64).range(1..=256))]
    pub sqlite_group_commit: u64,
}

impl DatabaseArgs {
    /// The pool settings these flags describe.
    pub fn pool_config(&self) -> PoolConfig {
        PoolConfig {
            max_connections: self.db_max_connections,
            postgres_timeout: std::time::Duration::from_millis(self.db_timeout_ms),
            sqlite_group_commit: usize::try_from(self.sqlite_group_commit).unwrap_or(1),
            ..PoolConfig::default()
        }
    }
}

/// How the HTTP server listens.
#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Address and port to listen on.
    #[arg(long, env = "HAICO_BIND", default_value = "127.0.0.1:8080")]
    pub bind: SocketAddr,
    /// Largest accepted request body, in bytes.
    #[arg(long, env = "HAICO_MAX_BODY_BYTES", default_value_t = crate::http::DEFAULT_MAX_BODY_BYTES)]
    pub max_body_bytes: usize,
    /// Bearer token every route but /healthz then requires (`Authorization: Bearer <token>`);
    /// unset, the API is open. Prefer the variable: a flag shows in the process list.
    #[arg(long, env = "HAICO_API_TOKEN", hide_env_values = true)]
    pub api_token: Option<crate::http::guards::auth::ApiToken>,
    /// Tool calls one agent turn may make before it stops and says so.
    #[arg(long, env = "HAICO_MAX_STEPS", default_value_t = 25,
          value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub max_steps: u64,
    /// Connection limits.
    #[command(flatten)]
    pub connections: ConnectionArgs,
    /// Where requests may come from, and how often.
    #[command(flatten)]
    pub guard: GuardArgs,
    /// How this process works beside other replicas on the same database.
    #[command(flatten)]
    pub replica: ReplicaArgs,
    /// Database settings.
    #[command(flatten)]
    pub database: DatabaseArgs,
    /// Language model settings.
    #[command(flatten)]
    pub llm: LlmArgs,
    /// Other MCP servers whose tools the agent may use.
    #[command(flatten)]
    pub mcp_client: McpClientArgs,
}

/// The other MCP servers the agent may use (see `haico::mcp_client` and docs/MCP.md).
#[derive(Debug, Clone, Args)]
pub struct McpClientArgs {
    /// A JSON file naming MCP servers whose tools the agent may use, in the format desktop MCP
    /// clients share: `{"mcpServers": {"<name>": {"command", "args", "env"} | {"url",
    /// "headers"}}}`. A mistake in it stops start-up.
    #[arg(long, env = "HAICO_MCP_SERVERS")]
    pub mcp_servers: Option<std::path::PathBuf>,
    /// Seconds one call of another MCP server's tool may take before it fails (the turn goes
    /// on, the model told so).
    #[arg(long, env = "HAICO_MCP_CALL_TIMEOUT_SECS", default_value_t = 60,
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub mcp_call_timeout_secs: u64,
    /// Seconds a call that needs the person's approval (`"approval": "always"`) waits for an
    /// editor's decision before it is declined. Five minutes by default: time to notice the
    /// request and read its arguments, without a forgotten one holding the thread's turn.
    #[arg(long, env = "HAICO_APPROVAL_TIMEOUT_SECS",
          default_value_t = crate::mcp_client::approval::DEFAULT_APPROVAL_TIMEOUT.as_secs(),
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub approval_timeout_secs: u64,
}

impl McpClientArgs {
    /// The servers file, read and checked (no servers when none is set).
    pub fn config(
        &self,
    ) -> Result<crate::mcp_client::config::McpConfig, crate::mcp_client::config::McpConfigError>
    {
        match &self.mcp_servers {
            Some(path) => crate::mcp_client::config::McpConfig::load(path),
            None => Ok(crate::mcp_client::config::McpConfig::default()),
        }
    }

    /// Connection and call timing.
    pub fn options(&self) -> crate::mcp_client::ClientOptions {
        crate::mcp_client::ClientOptions {
            call_timeout: std::time::Duration::from_secs(self.mcp_call_timeout_secs),
            approval_timeout: std::time::Duration::from_secs(self.approval_timeout_secs),
            ..crate::mcp_client::ClientOptions::default()
        }
    }
}

/// How long clients may take and how many may be connected at once.
#[derive(Debug, Clone, Args)]
pub struct ConnectionArgs {
    /// Seconds a client has to send a request's headers, from when it connects or starts its
    /// next request; slower connections are closed.
    #[arg(long, env = "HAICO_HEADER_TIMEOUT_SECS",
          default_value_t = crate::http::DEFAULT_HEADER_TIMEOUT_SECS,
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub header_timeout_secs: u64,
    /// Seconds a kept-alive connection may wait for its next request before it is closed (an
    /// answer in progress, such as an event stream, never counts as idle).
    #[arg(long, env = "HAICO_IDLE_TIMEOUT_SECS",
          default_value_t = crate::http::DEFAULT_IDLE_TIMEOUT_SECS,
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub idle_timeout_secs: u64,
    /// Most client connections open at once (event streams included); more wait until one
    /// closes. Default: what the open-files limit leaves after the database's connections,
    /// at most 16384.
    #[arg(long, env = "HAICO_MAX_CONNECTIONS",
          value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub max_connections: Option<u64>,
}

impl ConnectionArgs {
    /// The limits these flags describe, with the default cap derived from `open_files` (the
    /// soft open-files limit in force) and the database pool's size.
    pub fn limits(&self, open_files: u64, db_connections: u32) -> crate::http::ConnectionLimits {
        let max_connections = self
            .max_connections
            .and_then(|max| usize::try_from(max).ok())
            .unwrap_or_else(|| crate::http::default_max_connections(open_files, db_connections));
        crate::http::ConnectionLimits {
            header_timeout: std::time::Duration::from_secs(self.header_timeout_secs),
            idle_timeout: std::time::Duration::from_secs(self.idle_timeout_secs),
            max_connections: Some(max_connections),
        }
    }
}

/// How a replica works beside others on one PostgreSQL database (see `haico::replicas`).
#[derive(Debug, Clone, Args)]
pub struct ReplicaArgs {
    /// This replica's id in logs, `/metrics` and on the turns it runs: 1 to 64 letters,
    /// digits, `.`, `_` or `-`. Give each replica its own, stable across restarts (e.g. the
    /// pod name), so a restarted replica ends its interrupted turns at once; default: the host
    /// name and a random suffix.
    #[arg(long, env = "HAICO_REPLICA_ID")]
    pub replica_id: Option<String>,
    /// Seconds a running turn's lease lasts unless its replica renews it (every third of
    /// this); a turn whose replica died is ended by another one after at most about 1⅓ times
    /// this.
    #[arg(long, env = "HAICO_TURN_LEASE_SECS", default_value_t = 15,
          value_parser = clap::value_parser!(u64).range(3..=600))]
    pub turn_lease_secs: u64,
    /// `auto`: on PostgreSQL, hear other replicas' events by LISTEN/NOTIFY (and fall back to
    /// polling if that does not work); `off`: poll only.
    #[arg(long, env = "HAICO_LISTEN_NOTIFY", default_value = "auto",
          value_parser = ["auto", "off"])]
    pub listen_notify: String,
}

impl ReplicaArgs {
    /// The replica id: the configured one, checked, or a fresh one.
    pub fn replica_id(
        &self,
    ) -> Result<crate::replicas::ReplicaId, crate::replicas::InvalidReplicaId> {
        match self.replica_id.as_deref().map(str::trim) {
            Some(raw) if !raw.is_empty() => crate::replicas::ReplicaId::parse(raw),
            _ => Ok(crate::replicas::ReplicaId::generate()),
        }
    }

    /// The lease length.
    pub fn turn_lease(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.turn_lease_secs)
    }

    /// Whether to listen for other replicas' rings.
    pub fn listen(&self) -> bool {
        self.listen_notify != "off"
    }
}

/// The server's cross-site policy and rate limits (see `haico::http::OriginPolicy`).
#[derive(Debug, Clone, Args)]
pub struct GuardArgs {
    /// Names the server is reached by, besides IP addresses and `localhost` (comma-separated,
    /// each `host` or `host:port`): requests addressed to other names are refused, so a web
    /// page cannot reach the server by DNS rebinding.
    #[arg(long, env = "HAICO_PUBLIC_HOSTS", value_delimiter = ',')]
    pub public_hosts: Vec<String>,
    /// Other sites whose pages may use the API (comma-separated origins, e.g.
    /// `https://app.example.org`); requests from any other site's page are refused.
    #[arg(long, env = "HAICO_ALLOWED_ORIGINS", value_delimiter = ',')]
    pub allowed_origins: Vec<String>,
    /// Take the name the client used from `X-Forwarded-Host`: set it only behind a reverse
    /// proxy that sets that header (any client could write it otherwise).
    #[arg(long, env = "HAICO_TRUST_FORWARDED_HOST", default_value_t = false,
          action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub trust_forwarded_host: bool,
    /// Chat turns one person (or token, or address in one-person mode) may start per minute;
    /// 0 turns the limit off.
    #[arg(long, env = "HAICO_CHAT_TURNS_PER_MINUTE",
          default_value_t = crate::http::guards::limits::DEFAULT_CHAT_TURNS_PER_MINUTE)]
    pub chat_turns_per_minute: u32,
    /// Sign-in attempts one address may make per minute (on top of the slow-down after wrong
    /// passwords); 0 turns the limit off.
    #[arg(long, env = "HAICO_SIGN_INS_PER_MINUTE",
          default_value_t = crate::http::guards::limits::DEFAULT_SIGN_INS_PER_MINUTE)]
    pub sign_ins_per_minute: u32,
    /// Study entries an address may make in a minute (0: no limit).
    #[arg(long, env = "HAICO_STUDY_ENTRIES_PER_MINUTE",
          default_value_t = crate::http::guards::limits::DEFAULT_STUDY_ENTRIES_PER_MINUTE)]
    pub study_entries_per_minute: u32,
}

impl GuardArgs {
    /// The cross-site policy these settings describe; an entry that is not a host or an
    /// origin is an error naming the setting.
    pub fn origin_policy(
        &self,
    ) -> Result<
        crate::http::guards::origin::OriginPolicy,
        crate::http::guards::origin::InvalidOriginPolicy,
    > {
        crate::http::guards::origin::OriginPolicy::new(
            &self.public_hosts,
            &self.allowed_origins,
            self.trust_forwarded_host,
        )
    }

    /// The rate limits these settings describe.
    pub fn rate_limits(&self) -> crate::http::guards::limits::RateLimits {
        crate::http::guards::limits::RateLimits {
            chat_turns: crate::http::guards::limits::RateLimit::per_minute(
                self.chat_turns_per_minute,
            ),
            sign_ins: crate::http::guards::limits::RateLimit::per_minute(self.sign_ins_per_minute),
            study_entries: crate::http::guards::limits::RateLimit::per_minute(
                self.study_entries_per_minute,
            ),
        }
    }
}

/// One terminal turn.
#[derive(Debug, Clone, Args)]
pub struct ChatArgs {
    /// The thread to talk in; created if it does not exist.
    #[arg(long)]
    pub thread: String,
    /// What to say to the agent.
    pub message: String,
    /// Tool calls the turn may make before it stops and says so.
    #[arg(long, env = "HAICO_MAX_STEPS", default_value_t = 25,
          value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub max_steps: u64,
    /// Database settings.
    #[command(flatten)]
    pub database: DatabaseArgs,
    /// Language model settings.
    #[command(flatten)]
    pub llm: LlmArgs,
}

/// `haico mcp`: one thread for an MCP client over stdio.
#[derive(Debug, Clone, Args)]
pub struct McpArgs {
    /// The thread the client works on; created if it does not exist.
    #[arg(long, env = "HAICO_MCP_THREAD")]
    pub thread: String,
    /// The account the client acts as: its changes record this name, and a thread it creates
    /// belongs to it. Without it, the client acts as the thread's owner (a local process is
    /// trusted like the database it opens).
    #[arg(long = "as", value_name = "NAME", env = "HAICO_MCP_AS")]
    pub as_name: Option<String>,
    /// Database settings: use the server's database to share the thread with the web UI.
    #[command(flatten)]
    pub database: DatabaseArgs,
}

/// `haico export`: recordings of threads, as JSON Lines.
#[derive(Debug, Clone, Args)]
#[command(group(clap::ArgGroup::new("which").required(true).args(["thread", "all"])))]
pub struct ExportArgs {
    /// The thread to export (written to standard output, or to `--out` as a file).
    #[arg(long)]
    pub thread: Option<String>,
    /// Export every thread, one file per thread (`<id>.haico.jsonl`) in the `--out` folder.
    #[arg(long, requires = "out")]
    pub all: bool,
    /// Where to write: a file for `--thread`, a folder (created if needed) for `--all`.
    #[arg(long)]
    pub out: Option<std::path::PathBuf>,
    /// Database settings.
    #[command(flatten)]
    pub database: DatabaseArgs,
}

/// `haico import`: a recording back into the database as a new thread.
#[derive(Debug, Clone, Args)]
pub struct ImportArgs {
    /// The recording (JSON Lines, as `haico export` writes); `-` reads standard input.
    pub file: std::path::PathBuf,
    /// The new thread's id; a fresh one when left out.
    #[arg(long)]
    pub id: Option<String>,
    /// Database settings.
    #[command(flatten)]
    pub database: DatabaseArgs,
}

/// `haico user`: accounts, from the command line (the same rules as `POST /api/users`).
#[derive(Debug, Clone, Args)]
pub struct UserArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: UserAction,
}

/// The `haico user` subcommands.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum UserAction {
    /// Make an account and print its personal token (shown once). The first administrator
    /// becomes the owner of every thread made before accounts existed.
    Add {
        /// The account's name: 1 to 64 characters from A-Z, a-z, 0-9, `.`, `_` and `-`.
        name: String,
        /// Make an administrator (manages accounts, sees every thread).
        #[arg(long)]
        admin: bool,
        /// Read a password for signing in to the web UI from standard input (its first line);
        /// without it the account has only its token.
        #[arg(long)]
        password_stdin: bool,
        /// Database settings.
        #[command(flatten)]
        database: DatabaseArgs,
    },
    /// List the accounts.
    List {
        /// Database settings.
        #[command(flatten)]
        database: DatabaseArgs,
    },
    /// Remove an account: its sessions end and its token stops working; threads it owned stay,
    /// without an owner.
    Remove {
        /// The account's name.
        name: String,
        /// Database settings.
        #[command(flatten)]
        database: DatabaseArgs,
    },
    /// Give an account a new personal token (printed once); the old one stops working.
    ResetToken {
        /// The account's name.
        name: String,
        /// Database settings.
        #[command(flatten)]
        database: DatabaseArgs,
    },
}

impl UserAction {
    /// The database settings of whichever action this is.
    pub fn database(&self) -> &DatabaseArgs {
        match self {
            UserAction::Add { database, .. }
            | UserAction::List { database }
            | UserAction::Remove { database, .. }
            | UserAction::ResetToken { database, .. } => database,
        }
    }
}
