//! Helpers shared by more than one test file.

pub mod generate;
