//! Asking providers: what each provider and model supports, the mode chosen from it, the schema
//! in each provider's dialect, and each wire API's request and response shapes.

pub(crate) mod cache;
pub mod capabilities;
pub mod dialect;
pub mod wire;

pub use crate::read::mode::StructuredOutputMode;
