//! A [`Provider`] over HTTP (feature `http`): OpenAI-compatible endpoints (OpenAI, Venice,
//! OpenRouter, vLLM, llama.cpp, Ollama's `/v1`), OpenAI Responses, Anthropic, Gemini and
//! Ollama's native API, over `reqwest` with rustls. It needs a tokio runtime, as reqwest does.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use structured_runtime::http::HttpProvider;
//! use structured_runtime::provider::wire::ChatRequest;
//! use structured_runtime::run::{run_structured, RunConfig};
//!
//! #[derive(structured_runtime::StructuredOutput, serde::Deserialize, Debug)]
//! struct Answer { ok: bool }
//!
//! let provider = HttpProvider::from_env()?; // STRUCTURED_PROVIDER, _BASE_URL, _API_KEY, _MODEL
//! let out = run_structured::<Answer, _>(&provider, &ChatRequest::user("Is it on?"), &RunConfig::default()).await?;
//! println!("{:?} after {} attempt(s)", out.value, out.attempts);
//! # Ok(()) }
//! ```

use std::future::Future;
use std::time::Duration;

use crate::provider::capabilities::{capabilities, ProviderCapabilities, ProviderKind};
use crate::provider::wire::shorten;
use crate::run::{Provider, TransportError};

/// An HTTP endpoint for one provider and model.
#[derive(Debug, Clone)]
pub struct HttpProvider {
    client: reqwest::Client,
    kind: ProviderKind,
    base_url: String,
    api_key: Option<String>,
    model: String,
    /// What the model supports, when the caller knows better than the built-in matrix.
    capabilities: Option<ProviderCapabilities>,
}

/// The environment does not say which endpoint to use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HttpConfigError {
    /// A variable that must be set is not.
    #[error("{0} is not set")]
    Missing(&'static str),
    /// `STRUCTURED_PROVIDER` names no provider this crate knows.
    #[error("STRUCTURED_PROVIDER={0:?}: expected one of openai, openai-responses, anthropic, gemini, venice, openrouter, ollama, vllm, llamacpp, passthrough")]
    UnknownProvider(String),
    /// The HTTP client could not be built.
    #[error("HTTP client: {0}")]
    Client(String),
}

impl HttpProvider {
    /// An endpoint at `base_url` (`https://api.openai.com/v1`, `https://api.anthropic.com`,
    /// `https://generativelanguage.googleapis.com`, `http://localhost:11434`, ...), with a
    /// 120-second request timeout.
    pub fn new(
        kind: ProviderKind,
        base_url: impl Into<String>,
        api_key: Option<String>,
        model: impl Into<String>,
    ) -> Result<Self, HttpConfigError> {
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(120))
            .build()
            .map_err(|e| HttpConfigError::Client(e.to_string()))?;
        Ok(HttpProvider {
            client,
            kind,
            base_url: base_url.into().trim_end_matches('/').to_owned(),
            api_key,
            model: model.into(),
            capabilities: None,
        })
    }

    /// The same endpoint with another request timeout (the whole request: connect, send,
    /// answer).
    pub fn with_timeout(mut self, timeout: Duration) -> Result<Self, HttpConfigError> {
        self.client = reqwest::Client::builder()
            .timeout(timeout)
            .build()
            .map_err(|e| HttpConfigError::Client(e.to_string()))?;
        Ok(self)
    }

    /// The same endpoint, taken to support what `capabilities` says (from the provider's own
    /// model listing, or experience) instead of what the built-in matrix says for its model:
    /// the runner picks its mode from them.
    pub fn with_capabilities(mut self, capabilities: ProviderCapabilities) -> Self {
        self.capabilities = Some(capabilities);
        self
    }

    /// From `STRUCTURED_PROVIDER` (required), `STRUCTURED_MODEL` (required),
    /// `STRUCTURED_BASE_URL` (the provider's public endpoint when unset) and
    /// `STRUCTURED_API_KEY` (optional, for local servers).
    pub fn from_env() -> Result<Self, HttpConfigError> {
        let var = |name: &'static str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let provider =
            var("STRUCTURED_PROVIDER").ok_or(HttpConfigError::Missing("STRUCTURED_PROVIDER"))?;
        let kind = parse_kind(&provider).ok_or(HttpConfigError::UnknownProvider(provider))?;
        let model = var("STRUCTURED_MODEL").ok_or(HttpConfigError::Missing("STRUCTURED_MODEL"))?;
        let base_url = match var("STRUCTURED_BASE_URL") {
            Some(url) => url,
            None => default_base_url(kind)
                .ok_or(HttpConfigError::Missing("STRUCTURED_BASE_URL"))?
                .to_owned(),
        };
        HttpProvider::new(kind, base_url, var("STRUCTURED_API_KEY"), model)
    }

    /// The URL a request is posted to.
    pub fn endpoint(&self) -> String {
        let base = &self.base_url;
        match self.kind {
            ProviderKind::OpenAiResponses => format!("{base}/responses"),
            ProviderKind::Anthropic => format!("{base}/v1/messages"),
            ProviderKind::Gemini => format!("{base}/v1beta/models/{}:generateContent", self.model),
            ProviderKind::Ollama => format!("{base}/api/chat"),
            ProviderKind::OpenAiChat
            | ProviderKind::Venice
            | ProviderKind::OpenRouter
            | ProviderKind::Vllm
            | ProviderKind::LlamaCpp
            | ProviderKind::Passthrough => format!("{base}/chat/completions"),
        }
    }

    fn request(&self, body: &str) -> reqwest::RequestBuilder {
        let mut request = self
            .client
            .post(self.endpoint())
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body.to_owned());
        if let Some(key) = &self.api_key {
            request = match self.kind {
                ProviderKind::Anthropic => request.header("x-api-key", key),
                ProviderKind::Gemini => request.header("x-goog-api-key", key),
                _ => request.bearer_auth(key),
            };
        }
        if self.kind == ProviderKind::Anthropic {
            request = request.header("anthropic-version", "2023-06-01");
        }
        request
    }
}

impl Provider for HttpProvider {
    fn kind(&self) -> ProviderKind {
        self.kind
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn capabilities(&self) -> ProviderCapabilities {
        self.capabilities
            .unwrap_or_else(|| capabilities(self.kind, &self.model))
    }

    fn send(&self, body: &str) -> impl Future<Output = Result<String, TransportError>> + Send {
        let request = self.request(body);
        async move {
            let response = request.send().await.map_err(transport)?;
            let status = response.status();
            let retry_after = response
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u64>().ok())
                .map(Duration::from_secs);
            let text = response.text().await.map_err(transport)?;
            match status.as_u16() {
                200..=299 => Ok(text),
                429 => Err(TransportError::RateLimited { retry_after }),
                500..=599 => Err(TransportError::Server {
                    status: status.as_u16(),
                    body: shorten(&text, 300),
                }),
                other => Err(TransportError::Rejected {
                    status: other,
                    body: shorten(&text, 300),
                }),
            }
        }
    }

    async fn wait(&self, delay: Duration) {
        tokio::time::sleep(delay).await;
    }
}

fn transport(e: reqwest::Error) -> TransportError {
    if e.is_timeout() {
        TransportError::Timeout
    } else {
        TransportError::Connection(e.to_string())
    }
}

fn parse_kind(name: &str) -> Option<ProviderKind> {
    Some(match name.to_ascii_lowercase().as_str() {
        "openai" => ProviderKind::OpenAiChat,
        "openai-responses" => ProviderKind::OpenAiResponses,
        "anthropic" => ProviderKind::Anthropic,
        "gemini" => ProviderKind::Gemini,
        "venice" => ProviderKind::Venice,
        "openrouter" => ProviderKind::OpenRouter,
        "ollama" => ProviderKind::Ollama,
        "vllm" => ProviderKind::Vllm,
        "llamacpp" | "llama.cpp" => ProviderKind::LlamaCpp,
        "passthrough" => ProviderKind::Passthrough,
        _ => return None,
    })
}

fn default_base_url(kind: ProviderKind) -> Option<&'static str> {
    Some(match kind {
        ProviderKind::OpenAiChat | ProviderKind::OpenAiResponses => "https://api.openai.com/v1",
        ProviderKind::Anthropic => "https://api.anthropic.com",
        ProviderKind::Gemini => "https://generativelanguage.googleapis.com",
        ProviderKind::Venice => "https://api.venice.ai/api/v1",
        ProviderKind::OpenRouter => "https://openrouter.ai/api/v1",
        ProviderKind::Ollama => "http://localhost:11434",
        ProviderKind::Vllm | ProviderKind::LlamaCpp | ProviderKind::Passthrough => return None,
    })
}
