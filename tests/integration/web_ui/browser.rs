//! End-to-end browser harness: a real `haico serve` child process over a fresh SQLite file or
//! PostgreSQL database, and a real headless Chromium driven through chromedriver (WebDriver,
//! via `fantoccini`).
//!
//! It reuses `common::Engine` and `common::postgres_url()` (and `benches/ui.rs` includes both
//! files). Debian's `chromium` and `chromium-driver` must be installed (`.ci/run` installs
//! them); the tests check with `needs!(chromium)` before they start one.
//!
//! Every wait has a timeout and, when it runs out, fails with what it waited for, what it saw
//! last, the page's state (URL, `data-ready`, connection state, banner, toasts, uncaught
//! JavaScript errors) and a screenshot under `target/ui/failures/`.

use std::{
    collections::HashMap,
    io::{Read, Write},
    net::TcpStream,
    os::unix::process::CommandExt,
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    sync::{
        Mutex,
        atomic::{AtomicU32, AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use fantoccini::{Client, ClientBuilder, Locator, elements::Element, wd::Capabilities};
use reqwest::Method;
use serde_json::{Value, json};

use crate::common::{Engine, postgres_url};

/// Where Debian puts the browser and its driver.
pub use crate::common::needs::{CHROMEDRIVER, CHROMIUM};

/// How long a wait for the page lasts unless a test says otherwise. Generous: CI has two cores
/// and runs two browser tests at once.
pub const WAIT: Duration = Duration::from_secs(20);

/// The WebDriver key codes the tests type.
pub const ENTER: &str = "\u{e007}";
pub const ESCAPE: &str = "\u{e00c}";
pub const CONTROL: &str = "\u{e009}";
pub const BACKSPACE: &str = "\u{e003}";
pub const TAB: char = '\u{e004}';
pub const ENTER_KEY: char = '\u{e007}';
/// Releases held modifier keys.
pub const NULL: &str = "\u{e000}";

static COUNTER: AtomicU64 = AtomicU64::new(0);

fn unique(prefix: &str) -> String {
    format!(
        "{prefix}_{}_{}_{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed),
        &uuid::Uuid::new_v4().simple().to_string()[..8]
    )
}

pub use crate::common::free_port;

/// `target/ui/…`: where screenshots go.
pub fn ui_target_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target")
        .join("ui")
}

fn test_name() -> String {
    std::thread::current()
        .name()
        .unwrap_or("test")
        .replace("::", "-")
}

// ---------------------------------------------------------------------------------------------
// The server
// ---------------------------------------------------------------------------------------------

/// How to start `haico serve`.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    pub engine: Engine,
    /// A replay script (`{"responses": [...]}`); `None` leaves the server without a model.
    pub replay: Option<Value>,
    /// `HAICO_API_TOKEN`.
    pub token: Option<String>,
    /// Accounts made in the database before the server starts (so the page meets a server
    /// with accounts from its first request).
    pub accounts: Vec<Account>,
    /// Other MCP servers (`{"mcpServers": …}`), written to a file `HAICO_MCP_SERVERS` names.
    pub mcp_servers: Option<Value>,
}

/// An account with a password (for the sign-in form).
#[derive(Debug, Clone)]
pub struct Account {
    pub name: String,
    pub password: String,
    pub admin: bool,
}

impl ServerOptions {
    pub fn new(engine: Engine) -> Self {
        Self {
            engine,
            replay: None,
            token: None,
            accounts: Vec::new(),
            mcp_servers: None,
        }
    }

    /// Gives the agent the MCP servers of `config` (`{"mcpServers": …}`).
    pub fn mcp_servers(mut self, config: Value) -> Self {
        self.mcp_servers = Some(config);
        self
    }

    /// A member's account, signing in with `password`.
    pub fn account(mut self, name: &str, password: &str) -> Self {
        self.accounts.push(Account {
            name: name.to_string(),
            password: password.to_string(),
            admin: false,
        });
        self
    }

    pub fn replay(mut self, script: Value) -> Self {
        self.replay = Some(script);
        self
    }

    pub fn token(mut self, token: &str) -> Self {
        self.token = Some(token.to_string());
        self
    }
}

/// A `haico serve` child process on `127.0.0.1:<port>`; killed on drop (and its PostgreSQL
/// database dropped).
pub struct Server {
    pub port: u16,
    pub base: String,
    pub http: reqwest::Client,
    pub options: ServerOptions,
    database_url: String,
    pg_database: Option<String>,
    child: Option<Child>,
    dir: tempfile::TempDir,
    log: PathBuf,
    starts: u32,
    /// Each account's personal token, by name.
    tokens: HashMap<String, String>,
    /// The account the REST helpers act as ([`Self::act_as`]); `None`: the server's token.
    acting: Mutex<Option<String>>,
}

impl Server {
    /// Creates the database, writes the replay script and starts the server; returns once
    /// `/healthz` answers.
    pub async fn start(options: ServerOptions) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let (database_url, pg_database) = match options.engine {
            Engine::Sqlite => (
                format!("sqlite:{}", dir.path().join("haico-ui.db").display()),
                None,
            ),
            Engine::Postgres => {
                let name = unique("haico_ui");
                let admin = sqlx::PgPool::connect(&postgres_url()).await.unwrap_or_else(|e| {
                    panic!(
                        "PostgreSQL must be running at {} for the browser tests (.ci/run starts \
                         it): {e}",
                        postgres_url()
                    )
                });
                sqlx::query(&format!("CREATE DATABASE {name}"))
                    .execute(&admin)
                    .await
                    .expect("create the test database");
                admin.close().await;
                let mut url = reqwest::Url::parse(&postgres_url()).expect("postgres_url() parses");
                url.set_path(&format!("/{name}"));
                (url.to_string(), Some(name))
            }
        };
        let port = free_port();
        let mut server = Self {
            port,
            base: format!("http://127.0.0.1:{port}"),
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(60))
                .build()
                .expect("http client"),
            options,
            database_url,
            pg_database,
            child: None,
            log: dir.path().join("server.log"),
            dir,
            starts: 0,
            tokens: HashMap::new(),
            acting: Mutex::new(None),
        };
        server.make_accounts().await;
        if let Some(script) = &server.options.replay {
            std::fs::write(
                server.dir.path().join("replay.json"),
                serde_json::to_vec_pretty(script).expect("script as JSON"),
            )
            .expect("write the replay script");
        }
        if let Some(config) = &server.options.mcp_servers {
            std::fs::write(server.dir.path().join("mcp.json"), config.to_string())
                .expect("write the MCP servers file");
        }
        server.spawn_and_wait().await;
        server
    }

    /// Makes [`ServerOptions::accounts`] in the database, through haico's own rules, before
    /// the server opens it; keeps their personal tokens.
    async fn make_accounts(&mut self) {
        if self.options.accounts.is_empty() {
            return;
        }
        let db = haico::store::Database::connect(
            &self.database_url,
            &haico::store::PoolConfig::default(),
        )
        .await
        .expect("open the test database to make accounts");
        let people = haico::people::People::new(db.clone());
        for account in &self.options.accounts {
            let (_, token) = people
                .create_user(&account.name, account.admin, Some(&account.password))
                .await
                .unwrap_or_else(|e| panic!("make the account {}: {e}", account.name));
            self.tokens.insert(account.name.clone(), token);
        }
        db.close().await;
    }

    /// The personal token of the account `name`.
    pub fn token_of(&self, name: &str) -> String {
        self.tokens
            .get(name)
            .unwrap_or_else(|| panic!("no account {name} was made"))
            .clone()
    }

    /// From now on the REST helpers act as the account `name` (with its personal token), so
    /// what they make is that person's; `None` goes back to the server's token (if any).
    pub fn act_as(&self, name: Option<&str>) {
        let token = name.map(|name| self.token_of(name));
        *self.acting.lock().expect("acting lock") = token;
    }

    /// The absolute URL of `path` (which starts with `/`).
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    fn command(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_haico"));
        for (key, _) in std::env::vars_os() {
            let key = key.to_string_lossy().to_string();
            if key.starts_with("HAICO_") || key == "OPENAI_API_KEY" || key == "ANTHROPIC_API_KEY" {
                cmd.env_remove(key);
            }
        }
        cmd.args(["serve", "--bind", &format!("127.0.0.1:{}", self.port)])
            .env("HAICO_DATABASE_URL", &self.database_url)
            .env("HAICO_DB_MAX_CONNECTIONS", "4")
            .env("RUST_LOG", "info")
            .current_dir(self.dir.path());
        if self.options.replay.is_some() {
            cmd.env("HAICO_LLM_PROVIDER", "replay")
                .env("HAICO_LLM_REPLAY_FILE", self.dir.path().join("replay.json"));
        }
        if let Some(token) = &self.options.token {
            cmd.env("HAICO_API_TOKEN", token);
        }
        if self.options.mcp_servers.is_some() {
            cmd.env("HAICO_MCP_SERVERS", self.dir.path().join("mcp.json"));
        }
        cmd
    }

    async fn spawn_and_wait(&mut self) {
        // A restart can race the old socket's release: try a few times.
        for attempt in 0..20 {
            let log = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&self.log)
                .expect("server log");
            let child = self
                .command()
                .stdin(Stdio::null())
                .stdout(log.try_clone().expect("log handle"))
                .stderr(log)
                .spawn()
                .expect("spawn haico serve");
            self.child = Some(child);
            self.starts += 1;
            match self.wait_healthy().await {
                Ok(()) => return,
                Err(exited) if exited && attempt < 19 => {
                    tokio::time::sleep(Duration::from_millis(250)).await;
                }
                Err(_) => break,
            }
        }
        panic!(
            "haico serve did not become healthy on {}\n--- server log ---\n{}",
            self.base,
            self.log_tail(60)
        );
    }

    /// `Ok` once `/healthz` answers 200; `Err(true)` if the child exited first.
    async fn wait_healthy(&mut self) -> Result<(), bool> {
        let deadline = Instant::now() + Duration::from_secs(60);
        let url = self.url("/healthz");
        while Instant::now() < deadline {
            if let Some(child) = self.child.as_mut()
                && let Ok(Some(_)) = child.try_wait()
            {
                self.child = None;
                return Err(true);
            }
            if let Ok(resp) = self
                .http
                .get(&url)
                .timeout(Duration::from_secs(2))
                .send()
                .await
                && resp.status().is_success()
            {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Err(false)
    }

    /// The last `lines` lines the server logged (all starts).
    pub fn log_tail(&self, lines: usize) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }

    /// Kills the server (SIGKILL, like a crash or a pulled plug) and waits for it to exit.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts the server again on the same port and database; returns once it is healthy.
    pub async fn restart(&mut self) {
        self.kill();
        self.spawn_and_wait().await;
    }

    // --- the REST API --------------------------------------------------------------------

    /// One request; returns the status and the body as JSON (`Null` when empty or not JSON).
    pub async fn request(&self, method: Method, path: &str, body: Option<Value>) -> (u16, Value) {
        let mut req = self.http.request(method.clone(), self.url(path));
        let acting = self.acting.lock().expect("acting lock").clone();
        if let Some(token) = acting.as_ref().or(self.options.token.as_ref()) {
            req = req.bearer_auth(token);
        }
        if let Some(body) = body {
            req = req.json(&body);
        }
        let resp = req
            .send()
            .await
            .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
        let status = resp.status().as_u16();
        let bytes = resp.bytes().await.unwrap_or_default();
        let value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        (status, value)
    }

    /// A request that must succeed (2xx); returns the body.
    pub async fn ok(&self, method: Method, path: &str, body: Option<Value>) -> Value {
        let (status, value) = self.request(method.clone(), path, body.clone()).await;
        assert!(
            (200..300).contains(&status),
            "{method} {path} {} answered {status}: {value}",
            body.map(|b| b.to_string()).unwrap_or_default()
        );
        value
    }

    pub async fn get(&self, path: &str) -> Value {
        self.ok(Method::GET, path, None).await
    }

    pub async fn post(&self, path: &str, body: Value) -> Value {
        self.ok(Method::POST, path, Some(body)).await
    }

    pub async fn put(&self, path: &str, body: Value) -> Value {
        self.ok(Method::PUT, path, Some(body)).await
    }

    pub async fn patch(&self, path: &str, body: Value) -> Value {
        self.ok(Method::PATCH, path, Some(body)).await
    }

    /// Creates a thread; returns its id.
    pub async fn create_thread(&self, id: &str, title: &str) -> String {
        let body = self
            .post("/api/threads", json!({"id": id, "title": title}))
            .await;
        body["id"].as_str().unwrap_or(id).to_string()
    }

    /// Calls a tool on the agent path (`POST /api/threads/{id}/tools/{tool}`); an
    /// `action_and_reasoning` is added when missing. Returns the envelope.
    pub async fn tool(&self, thread: &str, tool: &str, mut args: Value) -> Value {
        if args.get("action_and_reasoning").is_none() {
            args["action_and_reasoning"] = json!(format!("Test calls {tool}."));
        }
        self.post(&format!("/api/threads/{thread}/tools/{tool}"), args)
            .await
    }

    /// Calls a tool that must succeed; returns the envelope.
    pub async fn tool_ok(&self, thread: &str, tool: &str, args: Value) -> Value {
        let envelope = self.tool(thread, tool, args.clone()).await;
        assert_eq!(
            envelope["success"],
            json!(true),
            "{tool}({args}) failed: {envelope}"
        );
        envelope
    }

    pub async fn workspace(&self, thread: &str) -> Value {
        self.get(&format!("/api/threads/{thread}/workspace")).await
    }

    /// The document (`{title, content, version}`); `Null` when the thread has none.
    pub async fn document(&self, thread: &str) -> Value {
        let (status, body) = self
            .request(
                Method::GET,
                &format!("/api/threads/{thread}/document"),
                None,
            )
            .await;
        match status {
            200 => body,
            404 => Value::Null,
            _ => panic!("GET document answered {status}: {body}"),
        }
    }

    pub async fn set_document(&self, thread: &str, title: &str, content: &str) -> Value {
        self.put(
            &format!("/api/threads/{thread}/document"),
            json!({"title": title, "content": content}),
        )
        .await
    }

    pub async fn set_objective(&self, thread: &str, objective: &str) -> Value {
        self.put(
            &format!("/api/threads/{thread}/objective"),
            json!({"objective": objective}),
        )
        .await
    }

    pub async fn add_preference(&self, thread: &str, body: Value) -> Value {
        self.post(&format!("/api/threads/{thread}/preferences"), body)
            .await
    }

    pub async fn add_todo(&self, thread: &str, text: &str) -> Value {
        self.post(
            &format!("/api/threads/{thread}/todos"),
            json!({"text": text}),
        )
        .await
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
        if std::thread::panicking() {
            eprintln!(
                "--- haico serve log ({}) ---\n{}\n--- end of server log ---",
                self.base,
                self.log_tail(40)
            );
        }
        if let Some(name) = self.pg_database.take() {
            // Drop runs inside the test's runtime: do the async clean-up on a thread of its own.
            let _ = std::thread::spawn(move || {
                let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                else {
                    return;
                };
                rt.block_on(async move {
                    if let Ok(admin) = sqlx::PgPool::connect(&postgres_url()).await {
                        let _ =
                            sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                                .execute(&admin)
                                .await;
                        admin.close().await;
                    }
                });
            })
            .join();
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The browser
// ---------------------------------------------------------------------------------------------

/// Runs in every page before its own scripts: records uncaught errors, unhandled rejections
/// and `alert`/`confirm`/`prompt` calls (which are answered without opening a dialog).
const INSTRUMENT: &str = r#"
(() => {
  window.__haicoErrors = [];
  window.__haicoAlerts = [];
  window.addEventListener('error', (e) => {
    if (e instanceof ErrorEvent) {
      window.__haicoErrors.push(`${e.message} at ${e.filename}:${e.lineno}:${e.colno}`);
    }
  }, true);
  window.addEventListener('unhandledrejection', (e) => {
    const r = e.reason;
    window.__haicoErrors.push('unhandled rejection: ' + (r && (r.stack || r.message) || String(r)));
  });
  for (const name of ['alert', 'confirm', 'prompt']) {
    const original = window[name];
    window[name] = function (...args) {
      window.__haicoAlerts.push(name + ': ' + args.map(String).join(' '));
      return name === 'confirm' ? false : null;
    };
    window[name].original = original;
  }
})();
"#;

const DIAGNOSTICS: &str = r#"
const q = (s) => document.querySelector(s);
const text = (s) => { const e = q(s); return e ? e.innerText.slice(0, 400) : null; };
return {
  url: location.href,
  ready: document.body ? document.body.dataset.ready || null : null,
  connection: q('#connection-status') ? q('#connection-status').dataset.state || null : null,
  banner: text('#banner'),
  banner_kind: q('#banner') ? q('#banner').dataset.kind || null : null,
  toasts: [...document.querySelectorAll('#toasts .toast')].map((t) => t.innerText.slice(0, 300)),
  errors: window.__haicoErrors || [],
  alerts: window.__haicoAlerts || [],
};
"#;

/// A headless Chromium driven over WebDriver by a chromedriver child process.
pub struct Browser {
    pub client: Client,
    driver: Option<Child>,
    driver_port: u16,
    session_id: Option<String>,
    _profile: tempfile::TempDir,
    screenshots: AtomicU32,
}

impl Browser {
    /// Starts chromedriver on a free port and opens a headless Chromium session
    /// (1280×800 window, fresh profile).
    pub async fn start() -> Self {
        for (path, package) in [(CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")] {
            assert!(
                Path::new(path).exists(),
                "{path} is missing: the browser tests need Debian's `{package}` package. \
                 `bash .ci/run` installs it (apt-get install chromium chromium-driver)."
            );
        }
        let profile = tempfile::tempdir().expect("profile dir");
        let mut last_error = String::new();
        for _attempt in 0..3 {
            let port = free_port();
            let mut driver = Command::new(CHROMEDRIVER)
                .arg(format!("--port={port}"))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                // Its own process group, so the browser it starts goes down with it.
                .process_group(0)
                .spawn()
                .unwrap_or_else(|e| panic!("spawn {CHROMEDRIVER}: {e}"));
            if !wait_for_driver(port, &mut driver).await {
                kill_group(&mut driver);
                last_error = format!("chromedriver on port {port} did not answer /status");
                continue;
            }
            let mut caps = Capabilities::new();
            caps.insert(
                "goog:chromeOptions".to_string(),
                json!({
                    "binary": CHROMIUM,
                    "args": [
                        "--headless=new",
                        "--no-sandbox",
                        "--disable-gpu",
                        "--disable-dev-shm-usage",
                        "--window-size=1280,800",
                        "--disable-quic",
                        "--no-first-run",
                        "--disable-background-networking",
                        "--disable-component-update",
                        "--disable-sync",
                        format!("--user-data-dir={}", profile.path().display()),
                    ],
                }),
            );
            caps.insert("unhandledPromptBehavior".to_string(), json!("ignore"));
            let connector = hyper_util::client::legacy::connect::HttpConnector::new();
            match ClientBuilder::new(connector)
                .capabilities(caps)
                .connect(&format!("http://127.0.0.1:{port}"))
                .await
            {
                Ok(client) => {
                    let session_id = client.session_id().await.ok().flatten();
                    let browser = Self {
                        client,
                        driver: Some(driver),
                        driver_port: port,
                        session_id,
                        _profile: profile,
                        screenshots: AtomicU32::new(0),
                    };
                    browser.instrument().await;
                    // `--window-size` sizes the window; the page gets less (headless Chromium
                    // still reserves room for its toolbars). Tests reason about the viewport.
                    browser.set_viewport(1280, 800).await;
                    return browser;
                }
                Err(e) => {
                    last_error = format!("new WebDriver session: {e}");
                    kill_group(&mut driver);
                }
            }
        }
        panic!("could not start headless Chromium through chromedriver: {last_error}");
    }

    /// Installs [`INSTRUMENT`] in the current window for every document it loads from now on.
    async fn instrument(&self) {
        let Some(session) = &self.session_id else {
            return;
        };
        let url = format!(
            "http://127.0.0.1:{}/session/{session}/goog/cdp/execute",
            self.driver_port
        );
        let resp = reqwest::Client::new()
            .post(url)
            .json(&json!({
                "cmd": "Page.addScriptToEvaluateOnNewDocument",
                "params": {"source": INSTRUMENT},
            }))
            .send()
            .await
            .expect("chromedriver CDP command");
        assert!(
            resp.status().is_success(),
            "Page.addScriptToEvaluateOnNewDocument: {}",
            resp.text().await.unwrap_or_default()
        );
    }

    /// Runs a Chrome DevTools Protocol command in the current window's page; returns its
    /// result.
    pub async fn cdp(&self, cmd: &str, params: Value) -> Value {
        let session = self.session_id.as_deref().expect("a WebDriver session id");
        let url = format!(
            "http://127.0.0.1:{}/session/{session}/goog/cdp/execute",
            self.driver_port
        );
        let resp = reqwest::Client::new()
            .post(url)
            .json(&json!({"cmd": cmd, "params": params}))
            .send()
            .await
            .unwrap_or_else(|e| panic!("chromedriver CDP command {cmd}: {e}"));
        let ok = resp.status().is_success();
        let body: Value = resp.json().await.unwrap_or(Value::Null);
        assert!(ok, "CDP {cmd} failed: {body}");
        body["value"].clone()
    }

    /// Lets the page download files: they are saved (under their suggested names) in `dir`.
    pub async fn allow_downloads(&self, dir: &Path) {
        self.cdp(
            "Browser.setDownloadBehavior",
            json!({"behavior": "allow", "downloadPath": dir.display().to_string()}),
        )
        .await;
    }

    /// Presses and releases one key (a character or a WebDriver key code such as [`TAB`]) on
    /// whatever has the focus, like a person at the keyboard.
    pub async fn press(&self, key: char) {
        use fantoccini::actions::{InputSource, KeyAction, KeyActions};
        let actions = KeyActions::new("keyboard".to_string())
            .then(KeyAction::Down { value: key })
            .then(KeyAction::Up { value: key });
        if let Err(e) = self.client.perform_actions(actions).await {
            self.fail(&format!("press key {key:?}: {e}")).await;
        }
    }

    /// The focused element's `id` (or its tag and classes when it has none).
    pub async fn focused(&self) -> String {
        self.js(
            "const e = document.activeElement;
             return e ? (e.id || `${e.tagName.toLowerCase()}.${[...e.classList].join('.')}`) : '';",
            vec![],
        )
        .await
        .as_str()
        .unwrap_or_default()
        .to_string()
    }

    // --- navigation and windows ----------------------------------------------------------

    pub async fn goto(&self, url: &str) {
        self.client
            .goto(url)
            .await
            .unwrap_or_else(|e| panic!("open {url}: {e}"));
    }

    pub async fn refresh(&self) {
        self.client.refresh().await.expect("reload the page");
    }

    pub async fn current_url(&self) -> String {
        self.client
            .current_url()
            .await
            .expect("current URL")
            .to_string()
    }

    /// Opens a new window (not a tab: both stay visible, so neither is throttled), switches
    /// to it and returns the handle of the window that was current before.
    pub async fn open_window(&self) -> fantoccini::wd::WindowHandle {
        let previous = self.client.window().await.expect("current window");
        let created = self.client.new_window(false).await.expect("new window");
        self.client
            .switch_to_window(created.handle)
            .await
            .expect("switch to the new window");
        self.instrument().await;
        previous
    }

    pub async fn window(&self) -> fantoccini::wd::WindowHandle {
        self.client.window().await.expect("current window")
    }

    pub async fn switch_to(&self, window: &fantoccini::wd::WindowHandle) {
        self.client
            .switch_to_window(window.clone())
            .await
            .expect("switch window");
    }

    /// Sets the window so that the page's viewport is `width`×`height` CSS pixels.
    pub async fn set_viewport(&self, width: u32, height: u32) {
        self.client
            .set_window_size(width, height)
            .await
            .expect("set window size");
        for _ in 0..3 {
            let inner = self
                .js("return [window.innerWidth, window.innerHeight];", vec![])
                .await;
            let (iw, ih) = (
                inner[0].as_u64().unwrap_or(0) as i64,
                inner[1].as_u64().unwrap_or(0) as i64,
            );
            if iw == i64::from(width) && ih == i64::from(height) {
                return;
            }
            let (ow, oh) = self.client.get_window_size().await.expect("window size");
            let w = (ow as i64 + i64::from(width) - iw).max(100) as u32;
            let h = (oh as i64 + i64::from(height) - ih).max(100) as u32;
            self.client
                .set_window_size(w, h)
                .await
                .expect("set window size");
        }
    }

    /// Saves a PNG of the viewport to `path` (directories created).
    pub async fn screenshot(&self, path: &Path) {
        let png = self.client.screenshot().await.expect("screenshot");
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("screenshot dir");
        }
        std::fs::write(path, png).expect("write screenshot");
    }

    // --- scripts and elements ------------------------------------------------------------

    /// Runs `script` (a function body; `arguments[i]` are `args`) and returns its result.
    pub async fn js(&self, script: &str, args: Vec<Value>) -> Value {
        self.client
            .execute(script, args)
            .await
            .unwrap_or_else(|e| panic!("script failed: {e}\n{script}"))
    }

    /// The page's state, for failure messages.
    pub async fn diagnostics(&self) -> Value {
        self.client
            .execute(DIAGNOSTICS, vec![])
            .await
            .unwrap_or_else(|e| json!({"diagnostics": format!("unavailable: {e}")}))
    }

    /// Uncaught JavaScript errors and unhandled rejections the page has had.
    pub async fn js_errors(&self) -> Vec<String> {
        let v = self
            .client
            .execute("return window.__haicoErrors || [];", vec![])
            .await
            .unwrap_or(Value::Null);
        v.as_array()
            .map(|a| {
                a.iter()
                    .map(|e| e.as_str().unwrap_or_default().to_string())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Fails when the page has had uncaught JavaScript errors.
    pub async fn assert_no_js_errors(&self) {
        let errors = self.js_errors().await;
        assert!(
            errors.is_empty(),
            "the page had uncaught JavaScript errors: {errors:#?}"
        );
    }

    /// Fails the test with `message`, the page's state and a screenshot.
    pub async fn fail(&self, message: &str) -> ! {
        let n = self.screenshots.fetch_add(1, Ordering::Relaxed) + 1;
        let path = ui_target_dir()
            .join("failures")
            .join(format!("{}-{n}.png", test_name()));
        let shot = match self.client.screenshot().await {
            Ok(png) => {
                let _ = std::fs::create_dir_all(path.parent().unwrap_or(Path::new(".")));
                match std::fs::write(&path, png) {
                    Ok(()) => format!("screenshot: {}", path.display()),
                    Err(e) => format!("screenshot not saved: {e}"),
                }
            }
            Err(e) => format!("no screenshot: {e}"),
        };
        let diagnostics = self.diagnostics().await;
        panic!(
            "{message}\npage: {}\n{shot}",
            serde_json::to_string_pretty(&diagnostics).unwrap_or_default()
        );
    }

    /// Polls `script` until it returns something other than `null`/`false`/`undefined`;
    /// returns that. On timeout fails with `what` and the last value the script returned.
    pub async fn wait_js_for(
        &self,
        what: &str,
        script: &str,
        args: Vec<Value>,
        timeout: Duration,
    ) -> Value {
        let deadline = Instant::now() + timeout;
        loop {
            let last = match self.client.execute(script, args.clone()).await {
                Ok(Value::Null) | Ok(Value::Bool(false)) => "null/false".to_string(),
                Ok(v) => {
                    if let Some(obj) = v.as_object()
                        && obj.get("ok") == Some(&Value::Bool(false))
                    {
                        v.to_string()
                    } else {
                        return v;
                    }
                }
                Err(e) => format!("script error: {e}"),
            };
            if Instant::now() >= deadline {
                self.fail(&format!(
                    "timed out after {timeout:?} waiting for {what}\nlast seen: {last}"
                ))
                .await;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// [`Self::wait_js_for`] with the default timeout.
    pub async fn wait_js(&self, what: &str, script: &str, args: Vec<Value>) -> Value {
        self.wait_js_for(what, script, args, WAIT).await
    }

    /// Waits until `css` matches an element; returns the first.
    pub async fn wait_for(&self, css: &str) -> Element {
        self.wait_js(
            &format!("an element matching `{css}`"),
            "return document.querySelector(arguments[0]) !== null;",
            vec![json!(css)],
        )
        .await;
        self.find(css).await
    }

    /// Waits until `css` matches a displayed element (laid out, not `display:none`,
    /// `visibility:hidden` or inside a closed `<dialog>`/`[hidden]`); returns it.
    pub async fn wait_visible(&self, css: &str) -> Element {
        self.wait_js(
            &format!("a visible element matching `{css}`"),
            VISIBLE_JS,
            vec![json!(css)],
        )
        .await;
        self.find(css).await
    }

    /// Waits until no element matching `css` is visible.
    pub async fn wait_hidden(&self, css: &str) {
        self.wait_js(
            &format!("no visible element matching `{css}`"),
            &format!(
                "const visible = (() => {{ {VISIBLE_JS} }})(); return visible ? {{ok: false}} : true;"
            ),
            vec![json!(css)],
        )
        .await;
    }

    /// Whether an element matching `css` is visible right now.
    pub async fn is_visible(&self, css: &str) -> bool {
        self.js(VISIBLE_JS, vec![json!(css)]).await == Value::Bool(true)
    }

    /// Waits until some element matching `css` has text (its `innerText`, or `value` for form
    /// fields) containing `needle`.
    pub async fn wait_text(&self, css: &str, needle: &str) {
        self.wait_js(
            &format!("an element `{css}` whose text contains {needle:?}"),
            TEXT_JS,
            vec![json!(css), json!(needle)],
        )
        .await;
    }

    /// Waits until the element matching `css` has attribute `attr` equal to `value`.
    pub async fn wait_attr(&self, css: &str, attr: &str, value: &str) {
        self.wait_js(
            &format!("`{css}` to have {attr}={value:?}"),
            "const e = document.querySelector(arguments[0]);
             if (!e) return {ok: false, missing: true};
             const v = e.getAttribute(arguments[1]);
             return v === arguments[2] ? true : {ok: false, value: v};",
            vec![json!(css), json!(attr), json!(value)],
        )
        .await;
    }

    /// Waits until the page says it is ready: `body[data-ready="true"]` (thread loaded and its
    /// events stream open).
    pub async fn wait_ready(&self) {
        self.wait_for("body[data-ready=\"true\"]").await;
    }

    /// Opens `url` and waits for `body[data-ready="true"]`.
    pub async fn open(&self, url: &str) {
        self.goto(url).await;
        self.wait_ready().await;
    }

    /// The first element matching `css`, now (no waiting).
    pub async fn find(&self, css: &str) -> Element {
        match self.client.find(Locator::Css(css)).await {
            Ok(e) => e,
            Err(e) => self.fail(&format!("no element matches `{css}`: {e}")).await,
        }
    }

    /// Every element matching `css`, now.
    pub async fn find_all(&self, css: &str) -> Vec<Element> {
        self.client
            .find_all(Locator::Css(css))
            .await
            .unwrap_or_default()
    }

    /// How many elements match `css`.
    pub async fn count(&self, css: &str) -> usize {
        self.js(
            "return document.querySelectorAll(arguments[0]).length;",
            vec![json!(css)],
        )
        .await
        .as_u64()
        .unwrap_or(0) as usize
    }

    /// The `innerText` of the first element matching `css` (`None` when there is none).
    pub async fn text(&self, css: &str) -> Option<String> {
        self.js(
            "const e = document.querySelector(arguments[0]);
             return e ? (('value' in e && e.tagName !== 'LI' && e.tagName !== 'BUTTON') ? e.value : e.innerText) : null;",
            vec![json!(css)],
        )
        .await
        .as_str()
        .map(str::to_string)
    }

    /// The `textContent` (trimmed, whitespace runs collapsed) of every element matching `css`:
    /// unlike `innerText` it includes text inside a closed `<details>`.
    pub async fn texts(&self, css: &str) -> Vec<String> {
        self.js(
            "return [...document.querySelectorAll(arguments[0])].map((e) => e.textContent.replace(/\\s+/g, ' ').trim());",
            vec![json!(css)],
        )
        .await
        .as_array()
        .map(|a| {
            a.iter()
                .map(|v| v.as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
    }

    /// Waits until exactly `n` elements match `css`.
    pub async fn wait_count(&self, css: &str, n: usize) {
        self.wait_js(
            &format!("{n} elements matching `{css}`"),
            "const c = document.querySelectorAll(arguments[0]).length;
             return c === arguments[1] ? true : {ok: false, count: c};",
            vec![json!(css), json!(n)],
        )
        .await;
    }

    /// Waits until the `textContent` of some element matching `css` contains `needle` (also
    /// inside a closed `<details>`).
    pub async fn wait_text_content(&self, css: &str, needle: &str) {
        self.wait_js(
            &format!("an element `{css}` whose textContent contains {needle:?}"),
            "const t = [...document.querySelectorAll(arguments[0])].map((e) => e.textContent.replace(/\\s+/g, ' '));
             return t.some((x) => x.includes(arguments[1])) ? true : {ok: false, texts: t.map((x) => x.slice(0, 300))};",
            vec![json!(css), json!(needle)],
        )
        .await;
    }

    /// Waits for a visible `css` and clicks it.
    pub async fn click(&self, css: &str) {
        let element = self.wait_visible(css).await;
        if let Err(e) = element.click().await {
            self.fail(&format!("click `{css}`: {e}")).await;
        }
    }

    /// Waits for a visible `css`, clears it and types `text` (which may end with [`ENTER`]).
    pub async fn type_into(&self, css: &str, text: &str) {
        // Like a person: focus the field, select what is in it, type over it. (WebDriver's
        // Element Clear blurs the field, which hides fields shown only while a form has focus.)
        let has_text = self
            .js(
                "const e = document.querySelector(arguments[0]); return !!(e && e.value);",
                vec![json!(css)],
            )
            .await
            == Value::Bool(true);
        let keys = if has_text {
            format!("{CONTROL}a{NULL}{BACKSPACE}{text}")
        } else {
            text.to_string()
        };
        self.send_keys(css, &keys).await;
    }

    async fn send_keys(&self, css: &str, keys: &str) {
        let element = self.wait_visible(css).await;
        // Focus it with a click, as a person would: chromedriver's own focusing blurs the
        // active element first, which closes fields shown only while their form has focus.
        let focused = self
            .js(
                "return document.activeElement === document.querySelector(arguments[0]);",
                vec![json!(css)],
            )
            .await
            == Value::Bool(true);
        if !focused && let Err(e) = element.click().await {
            self.fail(&format!("click `{css}` to type into it: {e}"))
                .await;
        }
        if let Err(e) = element.send_keys(keys).await {
            self.fail(&format!("type into `{css}`: {e}")).await;
        }
    }

    /// Records, from now on, every element that gets class `flash` (by id) into
    /// `window.__haicoFlashes`: flashes last about two seconds, so polling alone could miss one.
    pub async fn watch_flashes(&self) {
        self.js(
            "window.__haicoFlashes = [];
             const record = (e) => { if (e.classList && e.classList.contains('flash')) window.__haicoFlashes.push(e.id || e.tagName); };
             new MutationObserver((ms) => ms.forEach((m) => record(m.target)))
               .observe(document.body, {attributes: true, attributeFilter: ['class'], subtree: true});
             return true;",
            vec![],
        )
        .await;
    }

    /// Waits until `#id` has flashed since [`Self::watch_flashes`].
    pub async fn wait_flash(&self, id: &str) {
        self.wait_js(
            &format!("#{id} to get class `flash`"),
            "const f = window.__haicoFlashes || [];
             return f.includes(arguments[0]) ? true : {ok: false, flashed: f};",
            vec![json!(id)],
        )
        .await;
    }

    /// `alert`/`confirm`/`prompt` calls the page made, plus an open native dialog if any.
    pub async fn alerts(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .js("return window.__haicoAlerts || [];", vec![])
            .await
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|v| v.as_str().unwrap_or_default().to_string())
                    .collect()
            })
            .unwrap_or_default();
        if let Ok(text) = self.client.get_alert_text().await {
            out.push(format!("open dialog: {text}"));
        }
        out
    }
}

const VISIBLE_JS: &str = "
const els = [...document.querySelectorAll(arguments[0])];
const shown = (e) => {
  if (!e.isConnected) return false;
  const d = e.closest('dialog');
  if (d && !d.open) return false;
  if (e.closest('[hidden]')) return false;
  const s = getComputedStyle(e);
  if (s.display === 'none' || s.visibility === 'hidden') return false;
  const r = e.getBoundingClientRect();
  return r.width > 0 && r.height > 0;
};
return els.some(shown);
";

const TEXT_JS: &str = "
const els = [...document.querySelectorAll(arguments[0])];
const texts = els.map((e) => (e.tagName === 'TEXTAREA' || e.tagName === 'INPUT') ? e.value : e.innerText);
return texts.some((t) => t.includes(arguments[1])) ? true : {ok: false, texts: texts.map((t) => t.slice(0, 300))};
";

async fn wait_for_driver(port: u16, driver: &mut Child) -> bool {
    let deadline = Instant::now() + Duration::from_secs(20);
    let client = reqwest::Client::new();
    while Instant::now() < deadline {
        if let Ok(Some(_)) = driver.try_wait() {
            return false;
        }
        if let Ok(resp) = client
            .get(format!("http://127.0.0.1:{port}/status"))
            .timeout(Duration::from_secs(2))
            .send()
            .await
            && let Ok(body) = resp.json::<Value>().await
            && body["value"]["ready"] == json!(true)
        {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

/// Kills `child` and its process group (chromedriver and the browser it started).
fn kill_group(child: &mut Child) {
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{}", child.id())])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    let _ = child.kill();
    let _ = child.wait();
}

/// `DELETE /session/{id}` over a plain socket (Drop cannot await): chromedriver quits the
/// browser.
fn delete_session(port: u16, session: &str) {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let _ = stream.set_write_timeout(Some(Duration::from_secs(5)));
    let request = format!(
        "DELETE /session/{session} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    );
    if stream.write_all(request.as_bytes()).is_err() {
        return;
    }
    // Read the answer (chromedriver keeps the connection open, so stop at its end).
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(n) = stream.read(&mut buf) {
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&got).to_string();
        if let Some(end) = text.find("\r\n\r\n") {
            let length = text[..end]
                .lines()
                .find_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    k.eq_ignore_ascii_case("content-length")
                        .then(|| v.trim().parse::<usize>().ok())
                        .flatten()
                })
                .unwrap_or(0);
            if got.len() >= end + 4 + length {
                break;
            }
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if let Some(session) = self.session_id.take() {
            delete_session(self.driver_port, &session);
        }
        if let Some(mut driver) = self.driver.take() {
            kill_group(&mut driver);
        }
    }
}
