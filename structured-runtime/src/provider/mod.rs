//! Asking providers: what each provider and model supports, the mode chosen from it, the schema
//! in each provider's dialect, and each wire API's request and response shapes.

pub mod capabilities;
pub mod dialect;
pub(crate) mod mode;
pub mod wire;

pub use mode::StructuredOutputMode;
