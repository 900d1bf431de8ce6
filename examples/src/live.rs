//! Asking a live endpoint (the one the environment names), for the demo and the evaluation: the
//! modes it can be asked in, and the token limit every request carries.

use structured_runtime::http::HttpProvider;
use structured_runtime::provider::capabilities::ProviderCapabilities;
use structured_runtime::{Provider, RunConfig};

/// One way to ask the endpoint: a label, the provider as the runner sees it, and the config that
/// makes the runner pick that mode.
pub struct LiveMode {
    /// "schema enforced", "forced tool" or "schema in the prompt".
    pub label: &'static str,
    /// The endpoint, with the capabilities that select the mode.
    pub provider: HttpProvider,
    /// The default configuration, with schema enforcement preferred or not.
    pub config: RunConfig,
}

/// Each way `provider` can be asked: the schema enforced and a forced tool where its
/// capabilities say so, and the schema in the prompt always.
pub fn modes(provider: &HttpProvider) -> Vec<LiveMode> {
    let caps = provider.capabilities();
    let mut modes = Vec::new();
    if caps.supports_response_schema {
        modes.push(LiveMode {
            label: "schema enforced",
            provider: provider.clone(),
            config: RunConfig::default(),
        });
    }
    if caps.supports_tool_use {
        let mut config = RunConfig::default();
        config.outputs.prefer_schema_enforcement = false;
        modes.push(LiveMode {
            label: "forced tool",
            provider: provider.clone(),
            config,
        });
    }
    modes.push(LiveMode {
        label: "schema in the prompt",
        provider: provider
            .clone()
            .with_capabilities(ProviderCapabilities::PROMPT_ONLY),
        config: RunConfig::default(),
    });
    modes
}

/// The answer's token limit: `STRUCTURED_MAX_TOKENS`, else `default`.
pub fn max_tokens(default: u32) -> u32 {
    std::env::var("STRUCTURED_MAX_TOKENS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
