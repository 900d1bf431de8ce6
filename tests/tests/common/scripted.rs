//! A provider that answers from a script, for the runner's tests: replies in order (one that
//! never comes, to run into a deadline), every body sent recorded.

use std::collections::VecDeque;
use std::future::Future;
use std::sync::Mutex;

use serde_json::Value;
use structured_runtime::provider::capabilities::ProviderKind;
use structured_runtime::run::{Provider, TransportError};

/// Serves scripted replies in order and records every body sent.
pub struct Scripted {
    pub kind: ProviderKind,
    pub model: &'static str,
    /// `None`: this request is never answered.
    replies: Mutex<VecDeque<Option<Result<String, TransportError>>>>,
    sent: Mutex<Vec<String>>,
}

impl Scripted {
    /// Answers with `replies`, in order; then a connection error.
    pub fn new(
        kind: ProviderKind,
        model: &'static str,
        replies: Vec<Result<String, TransportError>>,
    ) -> Self {
        Scripted {
            kind,
            model,
            replies: Mutex::new(replies.into_iter().map(Some).collect()),
            sent: Mutex::new(Vec::new()),
        }
    }

    /// Never answers its first request.
    pub fn silent(kind: ProviderKind, model: &'static str) -> Self {
        let p = Scripted::new(kind, model, Vec::new());
        p.replies.lock().unwrap().push_back(None);
        p
    }

    /// Requests sent so far.
    pub fn calls(&self) -> usize {
        self.sent.lock().unwrap().len()
    }

    /// The `i`th body sent, as JSON.
    pub fn body(&self, i: usize) -> Value {
        serde_json::from_str(&self.sent.lock().unwrap()[i]).expect("the runner sends JSON")
    }

    /// The `i`th body's length in bytes.
    pub fn body_len(&self, i: usize) -> usize {
        self.sent.lock().unwrap()[i].len()
    }
}

impl Provider for Scripted {
    fn kind(&self) -> ProviderKind {
        self.kind
    }
    fn model(&self) -> &str {
        self.model
    }
    fn send(&self, body: &str) -> impl Future<Output = Result<String, TransportError>> + Send {
        self.sent.lock().unwrap().push(body.to_owned());
        let reply = self.replies.lock().unwrap().pop_front().unwrap_or(Some(Err(
            TransportError::Connection("script ran out".into()),
        )));
        async move {
            match reply {
                Some(reply) => reply,
                None => std::future::pending().await,
            }
        }
    }
}
