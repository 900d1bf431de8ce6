//! Markdown wrappers: output whose substance is free-form text (a pull request description, a
//! review, release notes), so the model writes the markdown it likes and the caller still gets a
//! typed value through the same pipeline.
//!
//! Each schema is the strict one-field object, so a provider that enforces schemas returns
//! `{"content": "..."}`. Prompt-guided, each asks for Markdown, and a plain-text answer is taken
//! whole (`Provenance::Heuristic`, with a warning saying the answer was not JSON).

use serde::{Deserialize, Serialize};
use structured_runtime::StructuredOutput;

/// A pull request description in Markdown: what changed, why, and how it was tested.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, StructuredOutput)]
pub struct MarkdownPullRequest {
    /// The description, in Markdown.
    #[markdown]
    pub content: String,
}

/// A changelog entry in Markdown, grouped by kind of change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, StructuredOutput)]
pub struct MarkdownChangelog {
    /// The changelog entry, in Markdown.
    #[markdown]
    pub content: String,
}

/// Release notes in Markdown, for the people who use the release.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, StructuredOutput)]
pub struct MarkdownReleaseNotes {
    /// The release notes, in Markdown.
    #[markdown]
    pub content: String,
}

/// A code review in Markdown: findings first, each with where it is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, StructuredOutput)]
pub struct MarkdownReview {
    /// The review, in Markdown.
    #[markdown]
    pub content: String,
}

/// A commit message: a summary line, then the body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, StructuredOutput)]
pub struct CommitMessage {
    /// One emoji for the kind of change, or null.
    pub emoji: Option<String>,
    /// The summary line, in the imperative, at most 72 characters.
    #[markdown(title)]
    #[length(max = 72)]
    pub title: String,
    /// The body: what changed and why.
    #[markdown]
    pub message: String,
}
