//! See the crate's tests.
