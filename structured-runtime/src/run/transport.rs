//! The transport a run talks through: any HTTP client implements [`Provider`] in a few lines.

use std::future::Future;
use std::time::Duration;

use crate::provider::capabilities::{capabilities, ProviderCapabilities, ProviderKind};
use crate::read::mode::StructuredOutputMode;

/// A model endpoint. The runner builds the body (JSON text), reads the answer and keeps the
/// time (its deadline and retry waits are on [`RunConfig::clock`](super::RunConfig::clock));
/// the provider only moves bytes.
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
    /// The mode this endpoint is asked in, when its owner chose one (a config file's `mode`
    /// for it, [`crate::run::config::ProviderSpec`]); `None` (the default): chosen from its
    /// capabilities. [`RunConfig::mode`](super::RunConfig::mode) wins over it.
    fn mode(&self) -> Option<StructuredOutputMode> {
        None
    }
    /// Whether [`Provider::send_stream`] streams. When it does, a streaming run
    /// ([`crate::run::Ask::stream`]) asks for a streamed response and reads it as it
    /// arrives; when it does not (the default), the response is read whole, as one piece.
    fn streams(&self) -> bool {
        false
    }
    /// Sends a body that asks for a streamed response (see [`Provider::streams`]): `on_bytes`
    /// gets the response body's bytes as they arrive, and returns `false` to stop reading (the
    /// rest is not waited for). The body read, as [`Provider::send`] returns it. The default
    /// sends with [`Provider::send`] and gives the whole body in one piece.
    fn send_stream<'a>(
        &'a self,
        body: &'a str,
        on_bytes: &'a mut OnBytes<'a>,
    ) -> impl Future<Output = Result<String, TransportError>> + Send + 'a {
        let send = self.send(body);
        async move {
            let text = send.await?;
            on_bytes(text.as_bytes());
            Ok(text)
        }
    }
}

/// The object-safe face of a [`Provider`], for applications that choose their provider at run
/// time: every `Provider` that is `Sync` is one, and `Box<dyn DynProvider>` (and `&dyn`,
/// `Arc<dyn>`) is a `Provider` again, so it goes wherever a provider goes.
///
/// ```
/// # use std::future::Future;
/// # use std::time::Duration;
/// # use structured_runtime::provider::capabilities::ProviderKind;
/// # use structured_runtime::run::{DynProvider, TransportError};
/// # use structured_runtime::Provider;
/// # struct Canned;
/// # impl Provider for Canned {
/// #     fn kind(&self) -> ProviderKind { ProviderKind::OpenAiChat }
/// #     fn model(&self) -> &str { "gpt-4o" }
/// #     fn send(&self, _: &str) -> impl Future<Output = Result<String, TransportError>> + Send {
/// #         async { Err(TransportError::Timeout) }
/// #     }
/// # }
/// let providers: Vec<Box<dyn DynProvider>> = vec![Box::new(Canned), Box::new(Canned)];
/// fn takes_a_provider(p: &impl Provider) -> &str { p.model() }
/// assert_eq!(takes_a_provider(&providers[0]), "gpt-4o");
/// ```
pub trait DynProvider: Send + Sync {
    /// [`Provider::kind`].
    fn kind(&self) -> ProviderKind;
    /// [`Provider::model`].
    fn model(&self) -> &str;
    /// [`Provider::capabilities`].
    fn capabilities(&self) -> ProviderCapabilities;
    /// [`Provider::send`], boxed.
    fn send_boxed<'a>(&'a self, body: &'a str) -> BoxFuture<'a, Result<String, TransportError>>;
    /// [`Provider::mode`].
    fn mode(&self) -> Option<StructuredOutputMode>;
    /// [`Provider::streams`].
    fn streams(&self) -> bool;
    /// [`Provider::send_stream`], boxed.
    fn send_stream_boxed<'a>(
        &'a self,
        body: &'a str,
        on_bytes: &'a mut OnBytes<'a>,
    ) -> BoxFuture<'a, Result<String, TransportError>>;
}

/// What a streamed response body is handed to as it arrives (see [`Provider::send_stream`]):
/// each piece of bytes; `false` to stop reading.
pub type OnBytes<'a> = dyn FnMut(&[u8]) -> bool + Send + 'a;

/// A boxed future that can move between threads.
pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn Future<Output = T> + Send + 'a>>;

impl<P: Provider + Send + Sync> DynProvider for P {
    fn kind(&self) -> ProviderKind {
        Provider::kind(self)
    }
    fn model(&self) -> &str {
        Provider::model(self)
    }
    fn capabilities(&self) -> ProviderCapabilities {
        Provider::capabilities(self)
    }
    fn send_boxed<'a>(&'a self, body: &'a str) -> BoxFuture<'a, Result<String, TransportError>> {
        Box::pin(self.send(body))
    }
    fn mode(&self) -> Option<StructuredOutputMode> {
        Provider::mode(self)
    }
    fn streams(&self) -> bool {
        Provider::streams(self)
    }
    fn send_stream_boxed<'a>(
        &'a self,
        body: &'a str,
        on_bytes: &'a mut OnBytes<'a>,
    ) -> BoxFuture<'a, Result<String, TransportError>> {
        Box::pin(self.send_stream(body, on_bytes))
    }
}

/// Forwards every method of a pointer to a [`DynProvider`].
macro_rules! dyn_provider {
    ($($ty:ty),*) => {$(
        impl Provider for $ty {
            fn kind(&self) -> ProviderKind {
                DynProvider::kind(&**self)
            }
            fn model(&self) -> &str {
                DynProvider::model(&**self)
            }
            fn capabilities(&self) -> ProviderCapabilities {
                DynProvider::capabilities(&**self)
            }
            fn send(&self, body: &str) -> impl Future<Output = Result<String, TransportError>> + Send {
                // The body is copied so the future borrows only the provider.
                let body = body.to_owned();
                let provider: &dyn DynProvider = &**self;
                async move { provider.send_boxed(&body).await }
            }
            fn mode(&self) -> Option<StructuredOutputMode> {
                DynProvider::mode(&**self)
            }
            fn streams(&self) -> bool {
                DynProvider::streams(&**self)
            }
            fn send_stream<'a>(
                &'a self,
                body: &'a str,
                on_bytes: &'a mut OnBytes<'a>,
            ) -> impl Future<Output = Result<String, TransportError>> + Send + 'a {
                DynProvider::send_stream_boxed(&**self, body, on_bytes)
            }
        }
    )*};
}

dyn_provider!(
    Box<dyn DynProvider>,
    std::sync::Arc<dyn DynProvider>,
    &dyn DynProvider
);

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
