//! Choosing and building the model from `HAICO_LLM_*` settings: defaults, key fallbacks,
//! unknown providers, and the "not configured" stand-in that keeps the server running.

use std::path::PathBuf;

use clap::Parser;
use haico::agent::{
    SnapshotRole, TextToolCalls,
    model::{ModelRequest, ProviderError},
    providers::{LlmArgs, ProviderConfig, ProviderKind, build_model},
};

/// Flags only; the fields are set directly so that the test machine's environment (which may
/// hold real keys) does not leak in.
fn args() -> LlmArgs {
    LlmArgs {
        llm_provider: None,
        llm_base_url: None,
        llm_model: None,
        llm_api_key: None,
        openai_api_key: None,
        anthropic_api_key: None,
        llm_timeout_secs: 120,
        llm_max_retries: 3,
        llm_replay_file: None,
        llm_snapshot_role: SnapshotRole::System,
        llm_text_tool_calls: TextToolCalls::Auto,
        llm_max_tokens: haico::agent::providers::config::DEFAULT_MAX_ANSWER_TOKENS,
        llm_temperature: None,
        llm_seed: None,
        llm_parallel_tool_calls: haico::agent::providers::config::Switch(None),
        llm_extra_body: None,
        llm_aids: haico::agent::Aids::default(),
    }
}

async fn not_configured_reason(config: &ProviderConfig) -> String {
    let model = build_model(config).unwrap();
    match model.stream(&ModelRequest::default()).await {
        Err(error @ ProviderError::NotConfigured(_)) => error.to_string(),
        Err(other) => panic!("expected NotConfigured, got {other:?}"),
        Ok(_) => panic!("expected NotConfigured, got a stream"),
    }
}

#[tokio::test]
async fn nothing_set_means_not_configured_with_instructions() {
    let config = args().config();
    assert_eq!(config.kind, None);
    let text = not_configured_reason(&config).await;
    for var in [
        "HAICO_LLM_PROVIDER",
        "HAICO_LLM_BASE_URL",
        "HAICO_LLM_MODEL",
        "HAICO_LLM_API_KEY",
    ] {
        assert!(text.contains(var), "{text}");
    }
}

#[test]
fn the_provider_is_inferred_from_what_is_set() {
    let mut with_url = args();
    with_url.llm_base_url = Some("http://localhost:11434/v1".into());
    assert_eq!(with_url.config().kind, Some(ProviderKind::Openai));

    let mut with_openai_key = args();
    with_openai_key.openai_api_key = Some("sk-1".into());
    let config = with_openai_key.config();
    assert_eq!(config.kind, Some(ProviderKind::Openai));
    assert_eq!(config.api_key.as_deref(), Some("sk-1"));

    let mut with_anthropic_key = args();
    with_anthropic_key.anthropic_api_key = Some("sk-ant".into());
    let config = with_anthropic_key.config();
    assert_eq!(config.kind, Some(ProviderKind::Anthropic));
    assert_eq!(config.api_key.as_deref(), Some("sk-ant"));

    let mut with_script = args();
    with_script.llm_replay_file = Some(PathBuf::from("demo.json"));
    assert_eq!(with_script.config().kind, Some(ProviderKind::Replay));

    let mut blank = args();
    blank.llm_api_key = Some("  ".into());
    assert_eq!(
        blank.config().kind,
        None,
        "an empty variable counts as unset"
    );
}

#[test]
fn the_key_falls_back_by_provider() {
    let mut both = args();
    both.llm_provider = Some(ProviderKind::Anthropic);
    both.openai_api_key = Some("sk-openai".into());
    both.anthropic_api_key = Some("sk-ant".into());
    assert_eq!(both.config().api_key.as_deref(), Some("sk-ant"));
    both.llm_api_key = Some("sk-own".into());
    assert_eq!(both.config().api_key.as_deref(), Some("sk-own"));
    both.llm_provider = Some(ProviderKind::Openai);
    both.llm_api_key = None;
    assert_eq!(both.config().api_key.as_deref(), Some("sk-openai"));
}

#[test]
fn an_unknown_provider_is_rejected() {
    let error = "gemini".parse::<ProviderKind>().unwrap_err();
    assert_eq!(error, ProviderError::UnknownProvider("gemini".into()));
    assert!(error.to_string().contains("openai, anthropic or replay"));
    assert_eq!(
        "Anthropic".parse::<ProviderKind>().unwrap(),
        ProviderKind::Anthropic
    );

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        llm: LlmArgs,
    }
    let error = Cli::try_parse_from(["haico", "--llm-provider", "gemini"]).unwrap_err();
    assert!(
        error.to_string().contains("unknown LLM provider `gemini`"),
        "{error}"
    );
    let parsed = Cli::try_parse_from([
        "haico",
        "--llm-provider",
        "replay",
        "--llm-replay-file",
        "s.json",
        "--llm-timeout-secs",
        "7",
        "--llm-max-retries",
        "0",
    ])
    .unwrap();
    let config = parsed.llm.config();
    assert_eq!(config.kind, Some(ProviderKind::Replay));
    assert_eq!(config.timeout, std::time::Duration::from_secs(7));
    assert_eq!(config.max_retries, 0);
    assert!(Cli::try_parse_from(["haico", "--llm-timeout-secs", "0"]).is_err());

    // The prompt settings: the defaults, the other values, and bad ones refused with the
    // accepted values named.
    assert_eq!(parsed.llm.llm_snapshot_role, SnapshotRole::System);
    assert_eq!(parsed.llm.llm_text_tool_calls, TextToolCalls::Auto);
    let other = Cli::try_parse_from([
        "haico",
        "--llm-snapshot-role",
        "USER",
        "--llm-text-tool-calls",
        "off",
        "--llm-max-tokens",
        "512",
    ])
    .unwrap();
    let agent = other.llm.agent_config(haico::agent::AgentConfig::default());
    assert_eq!(agent.snapshot_role, SnapshotRole::User);
    assert_eq!(agent.text_tool_calls, TextToolCalls::Off);
    assert_eq!(agent.max_tokens, Some(512));
    // Every answer is bounded even when nobody set a bound.
    let bounded = parsed
        .llm
        .agent_config(haico::agent::AgentConfig::default());
    assert_eq!(
        bounded.max_tokens,
        Some(haico::agent::providers::config::DEFAULT_MAX_ANSWER_TOKENS)
    );
    assert!(Cli::try_parse_from(["haico", "--llm-max-tokens", "0"]).is_err());
    let error = Cli::try_parse_from(["haico", "--llm-snapshot-role", "assistant"]).unwrap_err();
    assert!(error.to_string().contains("use system or user"), "{error}");
    let error = Cli::try_parse_from(["haico", "--llm-text-tool-calls", "maybe"]).unwrap_err();
    assert!(error.to_string().contains("use auto or off"), "{error}");

    // Sampling and the small-model aids: unset by default (the server's own defaults, and a
    // hosted provider's requests as before), set when asked, bad values named.
    let plain = parsed
        .llm
        .agent_config(haico::agent::AgentConfig::default());
    assert_eq!(plain.sampling, haico::agent::Sampling::default());
    assert_eq!(plain.aids, haico::agent::Aids::default());
    let tuned = Cli::try_parse_from([
        "haico",
        "--llm-temperature",
        "0",
        "--llm-seed",
        "42",
        "--llm-parallel-tool-calls",
        "off",
        "--llm-extra-body",
        r#"{"repeat_penalty": 1.1}"#,
        "--llm-aids",
        "all,-examples",
    ])
    .unwrap()
    .llm
    .agent_config(haico::agent::AgentConfig::default());
    assert_eq!(tuned.sampling.temperature, Some(0.0));
    assert_eq!(tuned.sampling.seed, Some(42));
    assert_eq!(tuned.sampling.parallel_tool_calls, Some(false));
    assert_eq!(tuned.sampling.extra["repeat_penalty"], 1.1);
    assert!(tuned.aids.turn_notes && !tuned.aids.examples);
    let error = Cli::try_parse_from(["haico", "--llm-temperature", "3"]).unwrap_err();
    assert!(error.to_string().contains("from 0 to 2"), "{error}");
    let error =
        Cli::try_parse_from(["haico", "--llm-extra-body", r#"{"temperature": 0}"#]).unwrap_err();
    assert!(
        error.to_string().contains("HAICO_LLM_TEMPERATURE"),
        "{error}"
    );
    let error = Cli::try_parse_from(["haico", "--llm-extra-body", "[1]"]).unwrap_err();
    assert!(error.to_string().contains("one JSON object"), "{error}");
    let error = Cli::try_parse_from(["haico", "--llm-aids", "everything"]).unwrap_err();
    assert!(error.to_string().contains("not an aid"), "{error}");
}

#[tokio::test]
async fn hosted_apis_without_a_key_are_not_configured() {
    let openai = ProviderConfig {
        kind: Some(ProviderKind::Openai),
        ..ProviderConfig::default()
    };
    let text = not_configured_reason(&openai).await;
    assert!(text.contains("OPENAI_API_KEY"), "{text}");
    let anthropic = ProviderConfig {
        kind: Some(ProviderKind::Anthropic),
        ..ProviderConfig::default()
    };
    let text = not_configured_reason(&anthropic).await;
    assert!(text.contains("ANTHROPIC_API_KEY"), "{text}");
}

#[tokio::test]
async fn a_self_hosted_server_needs_a_model_name() {
    let config = ProviderConfig {
        kind: Some(ProviderKind::Openai),
        base_url: Some("http://localhost:11434/v1".into()),
        ..ProviderConfig::default()
    };
    let text = not_configured_reason(&config).await;
    assert!(text.contains("HAICO_LLM_MODEL"), "{text}");
    let with_model = ProviderConfig {
        model: Some("llama3.1".into()),
        ..config
    };
    let model = build_model(&with_model).unwrap();
    assert!(model.describe().contains("llama3.1"));
}

#[test]
fn a_base_url_that_is_not_http_is_an_error() {
    let error = build_model(&ProviderConfig {
        kind: Some(ProviderKind::Openai),
        base_url: Some("localhost:11434".into()),
        model: Some("m".into()),
        ..ProviderConfig::default()
    })
    .err()
    .unwrap();
    assert!(
        matches!(error, ProviderError::InvalidConfig(_)),
        "{error:?}"
    );
}
