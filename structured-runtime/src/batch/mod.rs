//! Batch jobs: many items read into one schema, each with the same modes, reader, validator,
//! re-asks and ledger as one run, their state kept in an embedded SQLite database so a job
//! stopped at any point resumes with no item lost (feature `batch`).
//!
//! - [`Store::create`] makes a job from what it asks ([`JobSpec`]: the schema, the prompt an
//!   item's input goes into, the answer's token limit) and its items ([`JobItem`], a line of
//!   JSONL each); [`Store::open`] finds it again, [`Store::status`] says where it stands.
//! - [`run_on_chat`] reads the pending items through any [`crate::run::Provider`]'s chat
//!   endpoint, a bounded number at once (a local model, a server without a batch API), storing
//!   each result as it comes; run again on the same store, it continues where it stopped.
//! - [`run_on_batch_api`] reads them through a provider's batch API ([`BatchApi`]: OpenAI's
//!   Batch API, Anthropic's Message Batches, Gemini's batch mode), at batch prices, each
//!   request recorded before it is sent so a job killed anywhere resumes with no request in
//!   two batches.
//! - [`Store::write_results`] appends the results not written yet to an output, one JSON line
//!   per item, each exactly once even across a writer killed mid-way.
//!
//! ```
//! # use std::future::Future;
//! # use structured_runtime::provider::capabilities::ProviderKind;
//! # use structured_runtime::run::TransportError;
//! use serde_json::json;
//! use structured_runtime::batch::{run_on_chat, JobItem, JobSpec, Store};
//! use structured_runtime::{Provider, ResponseSchema, RunConfig};
//! # struct Local;
//! # impl Provider for Local {
//! #     fn kind(&self) -> ProviderKind { ProviderKind::OpenAiChat }
//! #     fn model(&self) -> &str { "local" }
//! #     fn send(&self, _: &str) -> impl Future<Output = Result<String, TransportError>> + Send {
//! #         async { Ok(r#"{"choices": [{"index": 0, "finish_reason": "stop",
//! #             "message": {"role": "assistant", "content": "{\"total\": 41.5}"}}]}"#.to_owned()) }
//! #     }
//! # }
//! # fn block_on<F: Future>(f: F) -> F::Output {
//! #     let mut f = std::pin::pin!(f);
//! #     let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
//! #     loop { if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; } }
//! # }
//! let dir = std::env::temp_dir().join(format!("structured-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).unwrap();
//! let spec = JobSpec {
//!     schema: ResponseSchema::new("invoice", json!({
//!         "type": "object", "properties": {"total": {"type": "number"}},
//!         "required": ["total"], "additionalProperties": false
//!     }))?,
//!     prompt: "Read the invoice's total: {input}".into(),
//!     max_tokens: Some(64),
//!     prices: None,
//! };
//! let lines = ["{\"id\": \"a\", \"input\": \"Total 41.50\"}", "{\"id\": \"b\", \"input\": \"Sum: 41.5\"}"];
//! let items = lines.iter().map(|l| Ok(serde_json::from_str::<JobItem>(l).unwrap()));
//! let mut store = Store::create(dir.join("job.db"), &spec, items).unwrap();
//! let out = dir.join("out.jsonl");
//! let status = block_on(run_on_chat(&mut store, &Local, &RunConfig::default(), 4, Some(&out), |_| {})).unwrap();
//! assert_eq!((status.done, status.failed, status.written), (2, 0, 2));
//! let out = std::fs::read_to_string(dir.join("out.jsonl")).unwrap();
//! assert!(out.lines().next().unwrap().starts_with(r#"{"id":"a","value":{"total":41.5}"#));
//! # std::fs::remove_dir_all(&dir).unwrap();
//! # Ok::<(), structured_runtime::SchemaError>(())
//! ```

mod api;
mod chat;
mod item;
mod pool;
mod result;
mod store;
mod submit;

pub use api::BatchApi;
pub use chat::run_on_chat;
pub use item::{ItemMessage, ItemRole, JobItem};
pub use store::{BatchError, JobSpec, Status, Store};
pub use submit::{run_on_batch_api, BatchOptions};
