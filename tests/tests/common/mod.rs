//! Helpers shared by more than one test file.
#![allow(dead_code)] // each test file uses some of them

pub mod gbnf;
pub mod generate;
pub mod grows;
