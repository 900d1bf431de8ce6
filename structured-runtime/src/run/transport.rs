//! The transport a run talks through: any HTTP client implements [`Provider`] in a few lines.

use std::future::Future;
use std::time::Duration;

use crate::provider::capabilities::{capabilities, ProviderCapabilities, ProviderKind};

/// A model endpoint. The runner builds the body (JSON text) and reads the answer; the provider
/// only moves bytes and waits.
///
/// ```
/// use std::future::Future;
/// use std::time::Duration;
/// use structured_runtime::provider::capabilities::ProviderKind;
/// use structured_runtime::run::TransportError;
/// use structured_runtime::Provider;
///
/// /// Answers every request with the same body (a test double).
/// struct Canned(String);
///
/// impl Provider for Canned {
///     fn kind(&self) -> ProviderKind {
///         ProviderKind::OpenAiChat
///     }
///     fn model(&self) -> &str {
///         "gpt-4o"
///     }
///     fn send(&self, _body: &str) -> impl Future<Output = Result<String, TransportError>> + Send {
///         let reply = self.0.clone();
///         async move { Ok(reply) }
///     }
///     async fn wait(&self, _delay: Duration) {}
/// }
/// ```
pub trait Provider {
    /// Which API the endpoint speaks.
    fn kind(&self) -> ProviderKind;
    /// The model asked.
    fn model(&self) -> &str;
    /// What the model supports; the built-in matrix unless the provider knows better.
    fn capabilities(&self) -> ProviderCapabilities {
        capabilities(self.kind(), self.model())
    }
    /// Sends one request body (JSON text, for the provider's chat endpoint); the response body
    /// on a 2xx status.
    fn send(&self, body: &str) -> impl Future<Output = Result<String, TransportError>> + Send;
    /// Waits before a transport retry (the runner uses no timer of its own, so it runs on any
    /// async runtime).
    fn wait(&self, delay: Duration) -> impl Future<Output = ()> + Send;
}

/// A request that did not get a response body.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TransportError {
    /// HTTP 429.
    #[error("rate limited{}", .retry_after.map(|d| format!(" (retry after {d:?})")).unwrap_or_default())]
    RateLimited {
        /// The provider's `retry-after`, if it sent one.
        retry_after: Option<Duration>,
    },
    /// HTTP 5xx (529 "overloaded" included).
    #[error("server error {status}: {body}")]
    Server {
        /// The status.
        status: u16,
        /// The body, shortened.
        body: String,
    },
    /// No answer in time.
    #[error("timed out")]
    Timeout,
    /// The connection failed or was cut.
    #[error("connection failed: {0}")]
    Connection(String),
    /// HTTP 4xx other than 429: the request itself is wrong, and sending it again will not help.
    #[error("request rejected with {status}: {body}")]
    Rejected {
        /// The status.
        status: u16,
        /// The body, shortened.
        body: String,
    },
    /// The response body passed the transport's size cap; it was not read further.
    #[error("the response body is larger than {limit} bytes")]
    TooLarge {
        /// The cap, in bytes.
        limit: usize,
    },
    /// A redirect the transport would not follow: to another origin (where the credential
    /// must not go), or one too many.
    #[error("{0}")]
    Redirect(String),
}

impl TransportError {
    /// Worth sending again after a wait.
    pub fn is_retryable(&self) -> bool {
        !matches!(
            self,
            TransportError::Rejected { .. }
                | TransportError::TooLarge { .. }
                | TransportError::Redirect(_)
        )
    }
}
