//! The `haico` binary: configuration, database, server. Wiring only.

use std::sync::Arc;

use anyhow::Context;
use clap::Parser;
use haico::{
    ThreadId,
    agent::{AgentConfig, providers::build_model},
    cli::{Cli, Command},
    config::ServeArgs,
    events::{DEFAULT_POLL_INTERVAL, PollingBus},
    http::{self, AppState, HttpConfig},
    mcp_client::McpServers,
    replicas::{
        Doorbell,
        doorbell::{OnCancel, OnPeople},
    },
    store::Database,
    tools::tool_specs,
};
use tracing_subscriber::{EnvFilter, Layer, layer::SubscriberExt, util::SubscriberInitExt};

/// mimalloc instead of glibc's allocator: a tool call allocates and frees many small buffers
/// (HTTP, JSON, the PostgreSQL protocol) across two worker threads, and glibc's `malloc`/`free`
/// were a tenth of the server's CPU under the mixed load.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Runs the command; a failure is printed as its chain of causes alone. Returning the error
/// from `main` would print a backtrace too whenever `RUST_BACKTRACE` is set, burying the one
/// line that says what to change (which setting, which file, which entry).
fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

#[tokio::main]
async fn run() -> anyhow::Result<()> {
    let cli = Cli::parse();
    // `haico eval` prints a line per scenario and turn on stderr; the agent's info logs (one
    // per tool call) would bury them, so it logs only warnings unless RUST_LOG says otherwise.
    let default_filter = match cli.command {
        Command::Eval(_) => "warn",
        _ => "info",
    };
    // Traces leave the process only when the OpenTelemetry variables name an endpoint; a
    // value that cannot be honoured stops the start with the variable to change.
    let telemetry = match haico::telemetry::Settings::from_env()? {
        Some(settings) => Some(
            haico::telemetry::Telemetry::start(settings)
                .context("starting the OpenTelemetry exporter (OTEL_EXPORTER_OTLP_*)")?,
        ),
        None => None,
    };
    let logs = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        // Colour codes only for a terminal: `haico mcp`'s stderr usually ends up in a client's
        // log file.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default_filter)),
        );
    tracing_subscriber::registry()
        .with(logs)
        .with(telemetry.as_ref().map(|t| t.layer()))
        .init();
    if let Some(telemetry) = &telemetry {
        tracing::info!("{}", telemetry.describe());
    }
    let result = run_command(cli).await;
    if let Some(telemetry) = telemetry {
        telemetry.shutdown().await;
    }
    result
}

async fn run_command(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Serve(args) => serve(*args).await,
        // Exit codes a script can tell apart: 0 all passed, 1 a scenario failed, 2 the
        // evaluation could not run (a bad scenario file, no model, a report not written).
        Command::Eval(args) => match haico::eval::cli::run(&args).await {
            Ok(true) => Ok(()),
            Ok(false) => std::process::exit(1),
            Err(err) => {
                eprintln!("error: {err:#}");
                std::process::exit(2)
            }
        },
        Command::Chat(args) => {
            let db = Database::connect(&args.database.database_url, &args.database.pool_config())
                .await
                .context("opening the database (HAICO_DATABASE_URL)")?;
            let model =
                build_model(&args.llm.config()).context("configuring the language model")?;
            let config = args.llm.agent_config(AgentConfig {
                max_tool_calls: usize::try_from(args.max_steps).unwrap_or(25),
                ..AgentConfig::default()
            });
            let result =
                haico::terminal::run_turn(db.clone(), model, config, &args.thread, &args.message)
                    .await;
            db.close().await;
            result
        }
        Command::Mcp(args) => {
            let db = Database::connect(&args.database.database_url, &args.database.pool_config())
                .await
                .context("opening the database (HAICO_DATABASE_URL)")?;
            let thread = ThreadId::parse(&args.thread).context("--thread")?;
            // Changes the web UI or other processes make reach this client's subscriptions; on
            // PostgreSQL the doorbell makes them immediate, both ways.
            let bus = PollingBus::new(db.clone());
            let poller = bus.spawn_poller(DEFAULT_POLL_INTERVAL);
            let doorbell = match db.postgres_pool() {
                Some(pool) => {
                    let (bell, tasks) = Doorbell::start(
                        pool.clone(),
                        &haico::replicas::ReplicaId::generate(),
                        bus.clone(),
                        Arc::new(|_: &str| {}),
                        Arc::new(|| {}),
                        true,
                    )
                    .await;
                    bus.ring_with(bell);
                    Some(tasks)
                }
                None => None,
            };
            let result =
                haico::mcp::serve_stdio(db.clone(), bus, thread, args.as_name.as_deref()).await;
            if let Some(doorbell) = doorbell {
                doorbell.abort();
            }
            poller.abort();
            db.close().await;
            result
        }
        Command::Export(args) => {
            let db = Database::connect(&args.database.database_url, &args.database.pool_config())
                .await
                .context("opening the database (HAICO_DATABASE_URL)")?;
            let result = haico::archive::export(db.clone(), &args).await;
            db.close().await;
            result
        }
        Command::Import(args) => {
            let db = Database::connect(&args.database.database_url, &args.database.pool_config())
                .await
                .context("opening the database (HAICO_DATABASE_URL)")?;
            let result = haico::archive::import(db.clone(), &args).await;
            db.close().await;
            result
        }
        Command::User(args) => {
            let database = args.action.database();
            let db = Database::connect(&database.database_url, &database.pool_config())
                .await
                .context("opening the database (HAICO_DATABASE_URL)")?;
            let result = haico::accounts::run(db.clone(), &args.action).await;
            db.close().await;
            result
        }
        Command::Tools => {
            let json =
                serde_json::to_string_pretty(&tool_specs()).context("encoding the tool list")?;
            println!("{json}");
            Ok(())
        }
    }
}

async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    // Every connection is a file descriptor: raise the limit before anything opens one.
    let open_files = http::raise_open_files_limit();
    if open_files.now > open_files.before {
        tracing::info!(
            from = open_files.before,
            to = open_files.now,
            "raised the open-files limit"
        );
    }
    // A mistyped host, origin or replica id is reported before anything starts.
    let origins = args.guard.origin_policy()?;
    let replica = args.replica.replica_id()?;
    let mcp_config = args.mcp_client.config()?;
    haico::metrics::replica(replica.as_str());
    let db = Database::connect(&args.database.database_url, &args.database.pool_config())
        .await
        .context("opening the database (HAICO_DATABASE_URL)")?;
    let listener = tokio::net::TcpListener::bind(args.bind)
        .await
        .with_context(|| format!("binding {} (HAICO_BIND)", args.bind))?;
    let addr = listener.local_addr().context("reading the bound address")?;
    tracing::info!(%addr, backend = ?db.backend(), %replica, "haico is listening");
    let model = build_model(&args.llm.config()).context("configuring the language model")?;
    let agent_config = args.llm.agent_config(AgentConfig {
        max_tool_calls: usize::try_from(args.max_steps).unwrap_or(25),
        replica: replica.clone(),
        lease: args.replica.turn_lease(),
        ..AgentConfig::default()
    });
    // The poller carries changes other processes (`haico mcp`, replicas) make to this
    // server's event streams; on PostgreSQL the doorbell makes that immediate.
    let bus = PollingBus::new(db.clone());
    let poller = bus.spawn_poller(DEFAULT_POLL_INTERVAL);
    let state = AppState::with_bus(db.clone(), model, agent_config, bus.clone());
    tracing::info!(model = %state.agent().describe_model(), "agent ready");
    // Other MCP servers connect in the background: start-up never waits for them.
    let mcp_servers = McpServers::start(&mcp_config, args.mcp_client.options());
    if !mcp_servers.is_empty() {
        tracing::info!(
            servers = mcp_config.servers.len(),
            file = %mcp_config.path.display(),
            "connecting to MCP servers (HAICO_MCP_SERVERS)"
        );
    }
    state.agent().use_mcp_servers(mcp_servers.clone());
    let doorbell = match db.postgres_pool() {
        Some(pool) => {
            let agent = Arc::downgrade(state.agent());
            let on_cancel: OnCancel = Arc::new(move |thread| {
                if let (Some(agent), Ok(thread)) = (agent.upgrade(), ThreadId::parse(thread))
                    && agent.cancel(&thread)
                {
                    tracing::info!(thread = %thread, "cancelled at another replica's request");
                }
            });
            let people = state.people().clone();
            let on_people: OnPeople = Arc::new(move || people.changed_elsewhere());
            let (bell, tasks) = Doorbell::start(
                pool.clone(),
                &replica,
                bus.clone(),
                on_cancel,
                on_people,
                args.replica.listen(),
            )
            .await;
            bus.ring_with(bell.clone());
            // Who tokens are and who may do what are remembered while the bell hears the
            // other replicas' changes (`people/remembered.rs`).
            state.people().remember_with(Arc::new(bell.clone()));
            state.agent().ring_with(bell.clone());
            state.watch_doorbell(Arc::clone(bell.status()));
            Some(tasks)
        }
        None => None,
    };
    let interrupted = state.agent().recover().await;
    if interrupted > 0 {
        tracing::warn!(
            interrupted,
            "ended turns whose replica stopped (this one before its restart, or another)"
        );
    }
    let leases = state.agent().keep_leases();
    let config = HttpConfig {
        max_body_bytes: args.max_body_bytes,
        api_token: args.api_token.clone(),
        connections: args
            .connections
            .limits(open_files.now, args.database.db_max_connections),
        origins,
        rate_limits: args.guard.rate_limits(),
    };
    if let Some(max) = config.connections.max_connections
        && u64::try_from(max).unwrap_or(u64::MAX) > open_files.now
    {
        tracing::warn!(
            max_connections = max,
            open_files = open_files.now,
            "HAICO_MAX_CONNECTIONS is above the open-files limit: connections past the limit fail \
             to be accepted (and are retried); lower it or raise the limit (ulimit -n)"
        );
    }
    tracing::info!(
        required = config.api_token.is_some(),
        "bearer token (HAICO_API_TOKEN)"
    );
    if haico::http::ui::has_index() {
        tracing::info!(url = %format_args!("http://{addr}/"), "web UI");
    } else {
        tracing::warn!("this build has no web UI: ui/index.html was missing");
    }
    // On SIGTERM the running turns end cleanly (their streams hear it) before streams close.
    let agent = Arc::clone(state.agent());
    let shutdown = async move {
        http::shutdown_signal().await;
        agent.hand_over().await;
    };
    http::serve(listener, state, &config, shutdown)
        .await
        .context("serving HTTP")?;
    leases.abort();
    mcp_servers.shutdown().await;
    if let Some(doorbell) = doorbell {
        doorbell.abort();
    }
    poller.abort();
    db.close().await;
    Ok(())
}
