//! The seed's `[inference.structured_outputs]` section: defaults, every key, and errors that
//! name the key.

use structured_examples::HeartbeatDecision;
use structured_runtime::run::config::{ConfigError, StructuredOutputsConfig};
use structured_runtime::StructuredOutput;

#[test]
fn the_seeds_section_reads_as_written() {
    let seed = r#"
# bardo.toml -- structured output configuration

[inference.structured_outputs]
enabled = true
prefer_schema_enforcement = true
validation = true
retry_on_validation_failure = true
max_retries = 1
"#;
    assert_eq!(
        StructuredOutputsConfig::from_toml(seed).unwrap(),
        StructuredOutputsConfig::default()
    );
}

#[test]
fn every_key_is_read_and_missing_keys_take_the_seeds_defaults() {
    let config = StructuredOutputsConfig::from_toml(
        "[inference.structured_outputs]\nenabled = false\nprefer_schema_enforcement = false\nvalidation = false\nretry_on_validation_failure = false\nmax_retries = 0\non_exhausted = \"defaults\"\n",
    )
    .unwrap();
    assert_eq!(
        config,
        StructuredOutputsConfig {
            enabled: false,
            prefer_schema_enforcement: false,
            validation: false,
            retry_on_validation_failure: false,
            max_retries: 0,
            on_exhausted: structured_runtime::run::OnExhausted::DefaultsWithWarning,
        }
    );
    let err = StructuredOutputsConfig::from_toml(
        "[inference.structured_outputs]\non_exhausted = \"retry\"",
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "inference.structured_outputs.on_exhausted: expected \"fail\" or \"defaults\", found the string \"retry\""
    );
    let partial =
        StructuredOutputsConfig::from_toml("[inference.structured_outputs]\nmax_retries = 3")
            .unwrap();
    assert_eq!(partial.max_retries, 3);
    assert!(partial.enabled && partial.validation);
    // No section (or no file content): the defaults.
    assert_eq!(
        StructuredOutputsConfig::from_toml("[inference]\ntemperature = 0.2").unwrap(),
        StructuredOutputsConfig::default()
    );
    assert_eq!(
        StructuredOutputsConfig::from_toml("").unwrap(),
        StructuredOutputsConfig::default()
    );
}

#[test]
fn bad_values_are_errors_naming_the_key() {
    let cases = [
        ("enabled = \"yes\"", "inference.structured_outputs.enabled: expected a boolean, found the string \"yes\""),
        ("validation = 1", "inference.structured_outputs.validation: expected a boolean, found the integer 1"),
        ("max_retries = -1", "inference.structured_outputs.max_retries: expected an integer from 0 to 10, found the integer -1"),
        ("max_retries = 1000", "inference.structured_outputs.max_retries: expected an integer from 0 to 10, found the integer 1000"),
        ("max_retries = 1.5", "inference.structured_outputs.max_retries: expected an integer from 0 to 10, found the float 1.5"),
        ("max_retry = 2", "inference.structured_outputs.max_retry: unknown key (the section takes enabled, prefer_schema_enforcement, validation, retry_on_validation_failure, max_retries, on_exhausted)"),
    ];
    for (line, message) in cases {
        let err = StructuredOutputsConfig::from_toml(&format!(
            "[inference.structured_outputs]\n{line}\n"
        ))
        .unwrap_err();
        assert_eq!(err.to_string(), message, "{line}");
    }
    assert!(matches!(
        StructuredOutputsConfig::from_toml("inference = 3"),
        Err(ConfigError::Value { key, .. }) if key == "inference"
    ));
    assert!(matches!(
        StructuredOutputsConfig::from_toml("[inference.structured_outputs\nenabled = true"),
        Err(ConfigError::Syntax(_))
    ));
}

#[test]
fn disabled_structured_outputs_ask_for_free_text() {
    let schema = HeartbeatDecision::schema();
    let off = StructuredOutputsConfig {
        enabled: false,
        ..StructuredOutputsConfig::default()
    };
    assert!(off.profile(schema).response_schema.is_none());
    let on = StructuredOutputsConfig::default().profile(schema);
    assert_eq!(on.response_schema.as_ref(), Some(schema));
    assert!(on.prefer_schema_enforcement);
}

/// The section inside a program's own configuration, in TOML or JSON.
#[test]
fn the_section_embeds_in_an_application_config_in_any_format() {
    #[derive(serde::Deserialize)]
    struct App {
        llm: Llm,
    }
    #[derive(serde::Deserialize)]
    struct Llm {
        outputs: StructuredOutputsConfig,
    }
    let app: App =
        serde_json::from_str(r#"{"llm": {"outputs": {"prefer_schema_enforcement": false}}}"#)
            .unwrap();
    assert!(!app.llm.outputs.prefer_schema_enforcement);
    assert_eq!(
        app.llm.outputs.max_retries,
        StructuredOutputsConfig::default().max_retries
    );
    let err = serde_json::from_str::<App>(r#"{"llm": {"outputs": {"max_retries": 99}}}"#)
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("max_retries: expected an integer from 0 to 10, found the integer 99"),
        "{err}"
    );
    let err = serde_json::from_str::<App>(r#"{"llm": {"outputs": {"enabled": "yes"}}}"#)
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("enabled: expected a boolean"), "{err}");
}

#[test]
fn modes_targets_and_schemas_round_trip_through_serde() {
    use structured_runtime::provider::dialect::SchemaTarget;
    use structured_runtime::schema::Markdown;
    use structured_runtime::{ResponseSchema, StructuredOutputMode};
    for mode in [
        StructuredOutputMode::None,
        StructuredOutputMode::SchemaEnforced,
        StructuredOutputMode::ToolUseWorkaround,
        StructuredOutputMode::PromptGuided,
    ] {
        let text = serde_json::to_string(&mode).unwrap();
        assert_eq!(
            serde_json::from_str::<StructuredOutputMode>(&text).unwrap(),
            mode
        );
    }
    assert_eq!(
        serde_json::to_string(&StructuredOutputMode::SchemaEnforced).unwrap(),
        "\"schema_enforced\""
    );
    let target: SchemaTarget = serde_json::from_str("\"open_ai_strict\"").unwrap();
    assert_eq!(target, SchemaTarget::OpenAiStrict);
    // Every derived schema, and a markdown wrapper, as data and back.
    let derived = HeartbeatDecision::schema().clone();
    let back: ResponseSchema =
        serde_json::from_str(&serde_json::to_string(&derived).unwrap()).unwrap();
    assert_eq!(back.schema(), derived.schema());
    assert_eq!(back.name(), derived.name());
    let wrapper = ResponseSchema::new(
        "commit",
        serde_json::json!({"type": "object",
            "properties": {"title": {"type": "string"}, "body": {"type": "string"}},
            "required": ["title", "body"], "additionalProperties": false}),
    )
    .unwrap()
    .with_markdown(Markdown::content("body").with_title("title"))
    .unwrap()
    .with_strict(false);
    let text = serde_json::to_string(&wrapper).unwrap();
    let back: ResponseSchema = serde_json::from_str(&text).unwrap();
    assert_eq!(back.markdown(), wrapper.markdown());
    assert!(!back.strict());
    // Read back through the same checks: an unknown keyword is refused.
    let bad = r#"{"name": "x", "schema": {"type": "object", "frobnicate": 1}}"#;
    assert!(serde_json::from_str::<ResponseSchema>(bad).is_err());
}

#[test]
fn the_section_also_sets_the_run_and_each_key_takes_effect() {
    use std::time::Duration;
    use structured_runtime::run::RunConfig;
    let config = RunConfig::from_toml(
        "[inference.structured_outputs]\nmax_retries = 3\ntransport_retries = 1\nmax_wait_seconds = 5\ndeadline_seconds = 0\nmax_tokens = 800\nmax_echo_bytes = 1024\nparse = \"lenient\"\n",
    )
    .unwrap();
    assert_eq!(config.outputs.max_retries, 3);
    assert_eq!(config.transport_retries, 1);
    assert_eq!(config.max_wait, Duration::from_secs(5));
    assert_eq!(config.deadline, None, "0 turns the deadline off");
    assert_eq!(config.max_tokens, Some(800));
    assert_eq!(config.max_echo_bytes, 1024);
    assert_eq!(config.parse, structured_runtime::ParseOptions::lenient());
    // Wrong values name the key.
    let err =
        RunConfig::from_toml("[inference.structured_outputs]\nparse = \"loose\"").unwrap_err();
    assert!(
        err.to_string()
            .starts_with("inference.structured_outputs.parse: expected"),
        "{err}"
    );
    let err =
        RunConfig::from_toml("[inference.structured_outputs]\ntransport_retries = -1").unwrap_err();
    assert!(err.to_string().contains("transport_retries"), "{err}");
    // The outputs-only reader points a run key to the reader that takes it.
    let err =
        StructuredOutputsConfig::from_toml("[inference.structured_outputs]\nparse = \"strict\"")
            .unwrap_err();
    assert!(err.to_string().contains("RunConfig::from_toml"), "{err}");
    // Embedded in a program's config.
    #[derive(serde::Deserialize)]
    struct App {
        run: RunConfig,
    }
    let app: App =
        serde_json::from_str(r#"{"run": {"max_retries": 0, "deadline_seconds": 20}}"#).unwrap();
    assert_eq!(app.run.outputs.max_retries, 0);
    assert_eq!(app.run.deadline, Some(Duration::from_secs(20)));
}

/// Embedded anywhere, an error names the whole key path when the program reads its config
/// through `serde_path_to_error` (the recipe the docs give): the outer path from it, the key
/// inside the section from us.
#[test]
fn an_embedded_sections_error_names_its_full_key_path() {
    use structured_runtime::run::RunConfig;
    #[derive(Debug, serde::Deserialize)]
    struct App {
        #[allow(dead_code)]
        llm: Llm,
    }
    #[derive(Debug, serde::Deserialize)]
    struct Llm {
        #[allow(dead_code)]
        structured: RunConfig,
    }
    let text = "[llm.structured]\nmax_retries = 99\n";
    let de = toml::Deserializer::parse(text).unwrap();
    let err = serde_path_to_error::deserialize::<_, App>(de).unwrap_err();
    let full = format!("{}.{}", err.path(), err.inner().message());
    assert!(
        full.starts_with("llm.structured.max_retries: expected an integer from 0 to 10"),
        "{full}"
    );
}

#[test]
fn the_llama_cpp_form_and_the_grammar_budget_are_settings() {
    use structured_runtime::provider::dialect::GrammarBudget;
    use structured_runtime::provider::wire::LlamaCppRequest;
    use structured_runtime::run::RunConfig;
    let config = RunConfig::from_toml(
        "[inference.structured_outputs]\nllama_cpp_request = \"json_schema\"\nstring_budget = 40\nitems_budget = 3",
    )
    .unwrap();
    assert_eq!(config.llama_cpp_request, LlamaCppRequest::JsonSchema);
    assert_eq!(
        config.grammar_budget,
        Some(GrammarBudget {
            string_chars: 40,
            items: 3,
            fit_tokens: None
        })
    );
    assert_eq!(config.constraint(Some(512)).budget.string_chars, 40);
    let defaults = RunConfig::from_toml("").unwrap();
    assert_eq!(defaults.llama_cpp_request, LlamaCppRequest::Grammar);
    // Without a setting, the budget follows the answer's token limit.
    assert_eq!(
        defaults.constraint(Some(512)).budget,
        GrammarBudget::for_max_tokens(512)
    );
    let err = RunConfig::from_toml("[inference.structured_outputs]\nllama_cpp_request = \"gbnf\"")
        .unwrap_err();
    assert!(err.to_string().contains("llama_cpp_request"), "{err}");
}

/// An application's providers, their order the fallback chain, in its own TOML: kinds, prices
/// and modes read without glue.
#[test]
fn providers_prices_and_modes_come_from_the_config_file() {
    use structured_runtime::http::HttpProvider;
    use structured_runtime::provider::capabilities::ProviderKind;
    use structured_runtime::run::config::{ConfigError, ProviderSpec};
    use structured_runtime::run::{Provider, RunConfig};
    use structured_runtime::StructuredOutputMode;

    for kind in ProviderKind::ALL {
        assert_eq!(kind.to_string().parse::<ProviderKind>(), Ok(kind));
        let json = serde_json::to_string(&kind).unwrap();
        assert_eq!(serde_json::from_str::<ProviderKind>(&json).unwrap(), kind);
    }
    assert_eq!("llama.cpp".parse(), Ok(ProviderKind::LlamaCpp));
    assert_eq!("Anthropic".parse(), Ok(ProviderKind::Anthropic));

    std::env::set_var("STRUCTURED_TEST_KEY_PROVIDERS", "sk-test");
    let text = r#"
        [inference.structured_outputs]
        max_retries = 2
        mode = "tool_use_workaround"

        [[inference.providers]]
        kind = "openai"
        model = "gpt-4o"
        api_key_env = "STRUCTURED_TEST_KEY_PROVIDERS"
        prices = { input = 2.5, output = 10.0, cached_input = 1.25 }

        [[inference.providers]]
        kind = "llamacpp"
        model = "smollm2"
        base_url = "http://127.0.0.1:8080"
        mode = "prompt_guided"
    "#;
    let config = RunConfig::from_toml(text).unwrap();
    assert_eq!(config.mode, Some(StructuredOutputMode::ToolUseWorkaround));
    let specs = ProviderSpec::list_from_toml(text).unwrap();
    let chain: Vec<HttpProvider> = specs
        .iter()
        .map(|s| HttpProvider::from_spec(s).unwrap())
        .collect();
    assert_eq!(
        chain[0].endpoint(),
        "https://api.openai.com/v1/chat/completions"
    );
    assert_eq!(chain[1].mode(), Some(StructuredOutputMode::PromptGuided));
    assert_eq!(chain[0].mode(), None);
    let prices = ProviderSpec::prices_of(&specs);
    assert_eq!(prices.get("gpt-4o").unwrap().cached_input, Some(1.25));
    assert!(prices.get("smollm2").is_none());

    // A typo is named with the entry it is in; a key variable that is not set is an error.
    let bad = "[[inference.providers]]\nkind = \"openia\"\nmodel = \"m\"";
    match ProviderSpec::list_from_toml(bad) {
        Err(ConfigError::Entry { key, message }) => {
            assert_eq!(key, "inference.providers[0]");
            assert!(message.contains("openia"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    let unset = ProviderSpec {
        api_key_env: Some("STRUCTURED_TEST_KEY_NOT_SET".into()),
        ..specs[0].clone()
    };
    assert!(HttpProvider::from_spec(&unset).is_err());
    assert!(
        RunConfig::from_toml("[inference.structured_outputs]\nmode = \"guess\"")
            .unwrap_err()
            .to_string()
            .contains("mode")
    );
}
