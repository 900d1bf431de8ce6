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

/// The HTTP client this provider is built on, for callers who build their own client
/// ([`HttpProvider::with_client`]) with the same version.
pub use reqwest;

use crate::provider::capabilities::{
    capabilities, ProviderCapabilities, ProviderKind, UnknownProvider,
};
use crate::provider::wire::shorten;
use crate::read::mode::StructuredOutputMode;
use crate::run::config::ProviderSpec;
use crate::run::{OnBytes, Provider, TransportError};

/// An HTTP endpoint for one provider and model.
///
/// What it lets through is bounded: a response body larger than [`HttpProvider::max_body_bytes`]
/// is refused while it arrives ([`TransportError::TooLarge`]), a request has a timeout, and a
/// redirect is followed only within the endpoint's origin (scheme, host and port), so the API
/// key is never sent elsewhere and no other server's answer is read as the model's. `Debug`
/// does not print the key.
#[derive(Clone)]
pub struct HttpProvider {
    client: reqwest::Client,
    kind: ProviderKind,
    base_url: String,
    api_key: Option<String>,
    model: String,
    /// What the model supports, when the caller knows better than the built-in matrix.
    capabilities: Option<ProviderCapabilities>,
    /// The mode its owner chose for it, if any.
    mode: Option<StructuredOutputMode>,
    max_body_bytes: usize,
    /// Headers the caller adds to every request (a gateway's key, an organisation id).
    headers: reqwest::header::HeaderMap,
}

impl std::fmt::Debug for HttpProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpProvider")
            .field("kind", &self.kind)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("model", &self.model)
            .field("capabilities", &self.capabilities)
            .field("max_body_bytes", &self.max_body_bytes)
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// The default cap on a response body: far above any chat answer, far below what would
/// exhaust a server's memory.
pub const DEFAULT_MAX_BODY_BYTES: usize = 32 << 20;

/// Redirects followed within one origin, at most.
const MAX_REDIRECTS: usize = 5;

/// A client builder with this crate's redirect rule (a redirect is followed only within the
/// origin it was sent to, at most five times) and a request timeout: for a caller who needs
/// more (a proxy, extra root certificates) and builds the client for
/// [`HttpProvider::with_client`] from it.
pub fn client_builder(timeout: Duration) -> reqwest::ClientBuilder {
    reqwest::Client::builder()
        .timeout(timeout)
        .redirect(same_origin_redirects())
}

/// A client that follows a redirect only to the origin it was sent to.
fn client(timeout: Duration) -> Result<reqwest::Client, HttpConfigError> {
    client_builder(timeout)
        .build()
        .map_err(|e| HttpConfigError::Client(e.to_string()))
}

fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let first = attempt.previous().first();
        let same_origin = first.is_some_and(|from| {
            from.scheme() == attempt.url().scheme()
                && from.host_str() == attempt.url().host_str()
                && from.port_or_known_default() == attempt.url().port_or_known_default()
        });
        if !same_origin {
            let to = attempt.url().origin().ascii_serialization();
            attempt.error(CrossOrigin(to))
        } else if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error(CrossOrigin("too many redirects".to_owned()))
        } else {
            attempt.follow()
        }
    })
}

/// A redirect the client refused to follow.
#[derive(Debug)]
struct CrossOrigin(String);

impl std::fmt::Display for CrossOrigin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "redirect refused: {}", self.0)
    }
}

impl std::error::Error for CrossOrigin {}

/// The environment does not say which endpoint to use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HttpConfigError {
    /// A variable that must be set is not.
    #[error("{0} is not set")]
    Missing(&'static str),
    /// `STRUCTURED_PROVIDER` names no provider this crate knows.
    #[error("STRUCTURED_PROVIDER: {0}")]
    UnknownProvider(UnknownProvider),
    /// The environment variable a config entry names for the API key is not set.
    #[error("{0} (the API key's variable) is not set")]
    MissingKey(String),
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
        Ok(HttpProvider {
            client: client(Duration::from_secs(120))?,
            kind,
            base_url: base_url.into().trim_end_matches('/').to_owned(),
            api_key,
            model: model.into(),
            capabilities: None,
            mode: None,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            headers: reqwest::header::HeaderMap::new(),
        })
    }

    /// The same endpoint with another request timeout (the whole request: connect, send,
    /// answer).
    pub fn with_timeout(mut self, timeout: Duration) -> Result<Self, HttpConfigError> {
        self.client = client(timeout)?;
        Ok(self)
    }

    /// The same endpoint with another cap on a response body ([`DEFAULT_MAX_BODY_BYTES`]
    /// unless set): a larger body is refused as it arrives, never read whole.
    pub fn with_max_body_bytes(mut self, max_body_bytes: usize) -> Self {
        self.max_body_bytes = max_body_bytes;
        self
    }

    /// The same endpoint, sending `name: value` with every request (after the provider's own
    /// headers; the API key is still sent only as the provider expects it).
    pub fn with_header(mut self, name: &str, value: &str) -> Result<Self, HttpConfigError> {
        let name = reqwest::header::HeaderName::from_bytes(name.as_bytes())
            .map_err(|e| HttpConfigError::Client(format!("header name {name:?}: {e}")))?;
        let mut value = reqwest::header::HeaderValue::from_str(value)
            .map_err(|e| HttpConfigError::Client(format!("header {name}: {e}")))?;
        value.set_sensitive(true);
        self.headers.insert(name, value);
        Ok(self)
    }

    /// The same endpoint, sending through `client` (one the caller built: shared, with a
    /// proxy, ...). Its timeouts and redirect rule are the caller's; build it from
    /// [`client_builder`] to keep this crate's. Whatever the client does, an answer that
    /// comes from another origin than the endpoint's is refused ([`TransportError::Redirect`]).
    pub fn with_client(mut self, client: reqwest::Client) -> Self {
        self.client = client;
        self
    }

    /// The cap on a response body.
    pub fn max_body_bytes(&self) -> usize {
        self.max_body_bytes
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
        let kind: ProviderKind = provider.parse().map_err(HttpConfigError::UnknownProvider)?;
        let model = var("STRUCTURED_MODEL").ok_or(HttpConfigError::Missing("STRUCTURED_MODEL"))?;
        let base_url = match var("STRUCTURED_BASE_URL") {
            Some(url) => url,
            None => kind
                .default_base_url()
                .ok_or(HttpConfigError::Missing("STRUCTURED_BASE_URL"))?
                .to_owned(),
        };
        HttpProvider::new(kind, base_url, var("STRUCTURED_API_KEY"), model)
    }

    /// The provider a config file's entry describes ([`ProviderSpec`]): its endpoint (the
    /// provider's public one when the entry names none), the key from the environment variable
    /// it names (an error when that variable is not set), its mode.
    pub fn from_spec(spec: &ProviderSpec) -> Result<Self, HttpConfigError> {
        let base_url = match &spec.base_url {
            Some(url) => url.clone(),
            None => spec
                .kind
                .default_base_url()
                .ok_or(HttpConfigError::Missing("base_url"))?
                .to_owned(),
        };
        let api_key = match &spec.api_key_env {
            Some(name) => Some(
                std::env::var(name)
                    .ok()
                    .filter(|v| !v.is_empty())
                    .ok_or_else(|| HttpConfigError::MissingKey(name.clone()))?,
            ),
            None => None,
        };
        let mut provider = HttpProvider::new(spec.kind, base_url, api_key, spec.model.clone())?;
        provider.mode = spec.mode;
        Ok(provider)
    }

    /// The same endpoint, asked in `mode` unless the run's config says otherwise.
    pub fn with_mode(mut self, mode: StructuredOutputMode) -> Self {
        self.mode = Some(mode);
        self
    }

    /// The URL a request is posted to.
    pub fn endpoint(&self) -> String {
        self.endpoint_for(false)
    }

    /// The URL a request is posted to, for a streamed response or not (only Gemini has a URL
    /// of its own for streaming; the others are asked in the body).
    pub fn endpoint_for(&self, stream: bool) -> String {
        let base = &self.base_url;
        match self.kind {
            ProviderKind::OpenAiResponses => format!("{base}/responses"),
            ProviderKind::Anthropic => format!("{base}/v1/messages"),
            ProviderKind::Gemini if stream => format!(
                "{base}/v1beta/models/{}:streamGenerateContent?alt=sse",
                self.model
            ),
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

    fn request(&self, body: &str, stream: bool) -> reqwest::RequestBuilder {
        let request = self
            .client
            .post(self.endpoint_for(stream))
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body.to_owned());
        self.authed(request)
    }

    /// `request` with this endpoint's credential and headers.
    fn authed(&self, mut request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
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
        for (name, value) in &self.headers {
            request = request.header(name, value.clone());
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

    fn mode(&self) -> Option<StructuredOutputMode> {
        self.mode
    }

    fn send(&self, body: &str) -> impl Future<Output = Result<String, TransportError>> + Send {
        self.exchange(body, None)
    }

    fn streams(&self) -> bool {
        true
    }

    fn send_stream<'a>(
        &'a self,
        body: &'a str,
        on_bytes: &'a mut OnBytes<'a>,
    ) -> impl Future<Output = Result<String, TransportError>> + Send + 'a {
        self.exchange(body, Some(on_bytes))
    }
}

impl HttpProvider {
    /// One request and its response body: read whole, or (`on_bytes`, a streamed response)
    /// handed over chunk by chunk as a 2xx body arrives, until `on_bytes` says stop. Both are
    /// bounded by the size cap and the client's timeout, and only the endpoint's origin is
    /// read.
    fn exchange<'a>(
        &self,
        body: &str,
        on_bytes: Option<&'a mut OnBytes<'a>>,
    ) -> impl Future<Output = Result<String, TransportError>> + Send + 'a {
        let stream = on_bytes.is_some();
        let request = self.request(body, stream);
        fetch(
            request,
            &self.endpoint_for(stream),
            self.max_body_bytes,
            on_bytes,
        )
    }
}

/// The origin (scheme, host, port) of `url`; empty when it is not a URL.
fn origin_of(url: &str) -> String {
    reqwest::Url::parse(url)
        .map(|u| u.origin().ascii_serialization())
        .unwrap_or_default()
}

/// `request` (to `url`) and its response body, as [`HttpProvider::exchange`] reads it: bounded
/// by `limit`, only from `url`'s origin, a 429, 5xx or other 4xx its transport error.
fn fetch<'a>(
    request: reqwest::RequestBuilder,
    url: &str,
    limit: usize,
    on_bytes: Option<&'a mut OnBytes<'a>>,
) -> impl Future<Output = Result<String, TransportError>> + Send + 'a {
    let origin = origin_of(url);
    {
        async move {
            let response = request.send().await.map_err(transport)?;
            // A client of the caller's may follow redirects anywhere: another origin's answer
            // is not the model's.
            let answered_from = response.url().origin().ascii_serialization();
            if answered_from != origin {
                return Err(TransportError::Redirect(format!(
                    "the answer came from {answered_from}, not {origin}"
                )));
            }
            let status = response.status();
            let retry_after = response
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u64>().ok())
                .map(Duration::from_secs);
            // Only a 2xx body is the model's stream; an error body is read whole.
            let on_bytes = on_bytes.filter(|_| status.is_success());
            let text = read_body(response, limit, on_bytes).await?;
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
}

/// The body, read chunk by chunk (each handed to `on_bytes` when given, which may stop the
/// reading) and refused as soon as it passes `limit` bytes (a declared `content-length` above
/// it is refused before any is read).
async fn read_body(
    mut response: reqwest::Response,
    limit: usize,
    mut on_bytes: Option<&mut OnBytes<'_>>,
) -> Result<String, TransportError> {
    let too_large = TransportError::TooLarge { limit };
    if response.content_length().is_some_and(|n| n > limit as u64) {
        return Err(too_large);
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(transport)? {
        if body.len() + chunk.len() > limit {
            return Err(too_large);
        }
        body.extend_from_slice(&chunk);
        if let Some(on_bytes) = on_bytes.as_mut() {
            if !on_bytes(&chunk) {
                // Stopped by the reader: what was read, for the ledger, may end inside a
                // character.
                return Ok(String::from_utf8_lossy(&body).into_owned());
            }
        }
    }
    String::from_utf8(body)
        .map_err(|e| TransportError::Connection(format!("the body is not UTF-8: {e}")))
}

fn transport(e: reqwest::Error) -> TransportError {
    if e.is_redirect() {
        let reason = std::error::Error::source(&e)
            .map(|s| s.to_string())
            .unwrap_or_else(|| e.to_string());
        TransportError::Redirect(reason)
    } else if e.is_timeout() {
        TransportError::Timeout
    } else {
        TransportError::Connection(e.to_string())
    }
}

/// The largest batch result file read (a batch of 50,000 answers).
#[cfg(feature = "batch")]
const MAX_RESULT_FILE_BYTES: usize = 1 << 30;

#[cfg(feature = "batch")]
mod batch_api {
    use std::future::Future;

    use super::{fetch, origin_of, HttpProvider, MAX_RESULT_FILE_BYTES};
    use crate::provider::wire::batch::{BatchInput, BatchState, BatchTag};
    use crate::provider::wire::batch_wire::BatchWire;
    use crate::provider::wire::CodecError;
    use crate::provider::wire::{anthropic_batch, gemini_batch, openai_batch};
    use crate::run::TransportError;

    /// A part ends at CRLF `--` and the boundary; a request file is JSON lines joined by LF, and
    /// JSON writes no raw CR, so no boundary can end it early: a fixed one serves.
    const BOUNDARY: &str = "structured-batch-file";

    fn unread(e: CodecError) -> TransportError {
        TransportError::Connection(e.to_string())
    }

    fn refused(message: String) -> TransportError {
        TransportError::Rejected {
            status: 400,
            body: message,
        }
    }

    /// Whether `id` (a batch or file id the provider gave) can go in a URL's path as it is:
    /// nothing that leaves the path it is put in.
    fn path_safe(id: &str) -> Result<&str, TransportError> {
        let fine = !id.is_empty()
            && !id.contains("..")
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_./".contains(&b));
        if fine {
            Ok(id)
        } else {
            Err(TransportError::Connection(format!(
                "an id this client does not put in a URL: {:?}",
                crate::provider::wire::shorten(id, 80)
            )))
        }
    }

    impl HttpProvider {
        fn wire(&self) -> Result<BatchWire, TransportError> {
            BatchWire::of(self.kind)
                .ok_or_else(|| refused(format!("{} has no batch API", self.kind.name())))
        }

        /// The body at `url` (a GET, or a POST of `body` as `content_type`), read by `read`.
        fn batch_call<T>(
            &self,
            url: String,
            post: Option<(Vec<u8>, String)>,
            extra: &[(&'static str, &'static str)],
            read: impl FnOnce(&str) -> Result<T, CodecError> + Send + 'static,
        ) -> impl Future<Output = Result<T, TransportError>> + Send + 'static
        where
            T: Send + 'static,
        {
            let mut request = match post {
                Some((body, content_type)) => self
                    .client
                    .post(&url)
                    .header(reqwest::header::CONTENT_TYPE, content_type)
                    .body(body),
                None => self.client.get(&url),
            };
            for (name, value) in extra {
                request = request.header(*name, *value);
            }
            let sent = fetch(self.authed(request), &url, self.max_body_bytes, None);
            async move { read(&sent.await?).map_err(unread) }
        }

        /// `multipart/form-data` (OpenAI) or `multipart/related` (Gemini) of a request file.
        fn multipart(&self, wire: BatchWire, jsonl: &str) -> (Vec<u8>, String) {
            let head = match wire {
                BatchWire::Gemini => format!(
                    "--{BOUNDARY}\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n\
                     {{\"file\": {{\"display_name\": \"structured batch\"}}}}\r\n\
                     --{BOUNDARY}\r\nContent-Type: application/jsonl\r\n\r\n"
                ),
                _ => format!(
                    "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nbatch\r\n\
                     --{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"batch.jsonl\"\r\n\
                     Content-Type: application/jsonl\r\n\r\n"
                ),
            };
            let mut body = Vec::with_capacity(jsonl.len() + head.len() + 64);
            body.extend_from_slice(head.as_bytes());
            body.extend_from_slice(jsonl.as_bytes());
            body.extend_from_slice(format!("\r\n--{BOUNDARY}--\r\n").as_bytes());
            let kind = match wire {
                BatchWire::Gemini => "related",
                _ => "form-data",
            };
            (body, format!("multipart/{kind}; boundary={BOUNDARY}"))
        }
    }

    /// The batch API of this endpoint's kind: OpenAI's (`{base}/files`, `{base}/batches`),
    /// Anthropic's Message Batches (`{base}/v1/messages/batches`), Gemini's batch mode
    /// (`{base}/v1beta/models/{model}:batchGenerateContent`, `{base}/v1beta/batches`, files
    /// through `{base}/upload/v1beta/files`): a job's batches
    /// ([`crate::batch::run_on_batch_api`]). A results URL another origin gives is not
    /// fetched: the key goes to the endpoint's own origin only.
    impl crate::batch::BatchApi for HttpProvider {
        fn upload(
            &self,
            jsonl: &str,
        ) -> impl Future<Output = Result<String, TransportError>> + Send {
            let base = &self.base_url;
            let sent = self.wire().and_then(|wire| {
                let (url, extra): (_, &[_]) = match wire {
                    BatchWire::OpenAi { .. } => (format!("{base}/files"), &[]),
                    BatchWire::Gemini => (
                        format!("{base}/upload/v1beta/files"),
                        &[("X-Goog-Upload-Protocol", "multipart")],
                    ),
                    BatchWire::Anthropic => {
                        return Err(refused(
                            "Anthropic's batches take their requests inline, not as a file".into(),
                        ))
                    }
                };
                // The uploaded file's id: Gemini's `files/…` name, OpenAI's file id.
                let read = move |body: &str| match wire {
                    BatchWire::Gemini => gemini_batch::read_file_name(body),
                    _ => openai_batch::read_file_id(body),
                };
                Ok(self.batch_call(url, Some(self.multipart(wire, jsonl)), extra, read))
            });
            async move { sent?.await }
        }

        fn create(
            &self,
            input: BatchInput<'_>,
            tag: &BatchTag,
        ) -> impl Future<Output = Result<BatchState, TransportError>> + Send {
            let base = &self.base_url;
            let json = |body: String| Some((body.into_bytes(), "application/json".to_owned()));
            let sent = match (self.wire(), input) {
                (Ok(BatchWire::OpenAi { endpoint }), BatchInput::File(file_id)) => Ok((
                    format!("{base}/batches"),
                    openai_batch::create_body(file_id, endpoint, tag),
                )),
                (Ok(BatchWire::Anthropic), BatchInput::Inline(lines)) => Ok((
                    format!("{base}/v1/messages/batches"),
                    anthropic_batch::create_body(lines),
                )),
                (Ok(BatchWire::Gemini), input) => match gemini_batch::create_body(input, tag) {
                    Some(body) => Ok((
                        format!("{base}/v1beta/models/{}:batchGenerateContent", self.model),
                        body,
                    )),
                    None => Err(refused("a request line that is not one".into())),
                },
                (Ok(wire), input) => Err(refused(format!(
                    "{wire:?} does not make a batch of {input:?}",
                    input = match input {
                        BatchInput::File(_) => "a file",
                        BatchInput::Inline(_) => "inline requests",
                    }
                ))),
                (Err(e), _) => Err(e),
            }
            .and_then(|(url, body)| {
                let wire = self.wire()?;
                Ok(self.batch_call(url, json(body), &[], move |b| wire.read_batch(b)))
            });
            async move { sent?.await }
        }

        fn get(
            &self,
            batch_id: &str,
        ) -> impl Future<Output = Result<BatchState, TransportError>> + Send {
            let base = &self.base_url;
            let sent = self.wire().and_then(|wire| {
                let id = path_safe(batch_id)?;
                let url = match wire {
                    BatchWire::OpenAi { .. } => format!("{base}/batches/{id}"),
                    BatchWire::Anthropic => format!("{base}/v1/messages/batches/{id}"),
                    BatchWire::Gemini => format!("{base}/v1beta/{id}"),
                };
                Ok(self.batch_call(url, None, &[], move |b| wire.read_batch(b)))
            });
            async move { sent?.await }
        }

        fn list(
            &self,
            after: Option<&str>,
        ) -> impl Future<Output = Result<(Vec<BatchState>, Option<String>), TransportError>> + Send
        {
            let base = &self.base_url;
            let sent = self.wire().and_then(|wire| {
                // Each API's list, and the parameter naming where its next page starts.
                let (url, param) = match wire {
                    BatchWire::OpenAi { .. } => (format!("{base}/batches?limit=100"), "after"),
                    BatchWire::Anthropic => {
                        (format!("{base}/v1/messages/batches?limit=100"), "after_id")
                    }
                    BatchWire::Gemini => {
                        (format!("{base}/v1beta/batches?pageSize=100"), "pageToken")
                    }
                };
                // A page token may hold any character: written as a query value.
                let url = match after {
                    Some(after) => {
                        let mut url = reqwest::Url::parse(&url)
                            .map_err(|e| TransportError::Connection(e.to_string()))?;
                        url.query_pairs_mut().append_pair(param, after);
                        url.to_string()
                    }
                    None => url,
                };
                Ok(self.batch_call(url, None, &[], move |b| wire.read_batch_list(b)))
            });
            async move { sent?.await }
        }

        fn download(
            &self,
            location: &str,
        ) -> impl Future<Output = Result<String, TransportError>> + Send {
            let base = &self.base_url;
            let url = self.wire().and_then(|wire| match wire {
                BatchWire::OpenAi { .. } => {
                    Ok(format!("{base}/files/{}/content", path_safe(location)?))
                }
                BatchWire::Gemini => Ok(format!(
                    "{base}/download/v1beta/{}:download?alt=media",
                    path_safe(location)?
                )),
                BatchWire::Anthropic => {
                    // The results URL the batch gave, fetched with the key only at the
                    // endpoint's own origin.
                    let (at, own) = (origin_of(location), origin_of(base));
                    if at != own {
                        return Err(TransportError::Redirect(format!(
                            "the results are at {at}, not at {own}"
                        )));
                    }
                    Ok(location.to_owned())
                }
            });
            let sent = url.map(|url| {
                let request = self.authed(self.client.get(&url));
                fetch(request, &url, MAX_RESULT_FILE_BYTES, None)
            });
            async move { sent?.await }
        }
    }
}
