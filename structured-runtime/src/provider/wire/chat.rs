//! The caller's request, provider-neutral: messages, the token limit, extra fields, and the turns
//! a re-ask appends.

use serde_json::{Map, Value};

use crate::read::Answer;

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The caller.
    User,
    /// The model (a prior answer given as context).
    Assistant,
}

/// One message of the caller's prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatMessage {
    /// Who wrote it.
    pub role: Role,
    /// Its text.
    pub text: String,
}

/// The caller's request, provider-neutral.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    /// System instructions, if any.
    pub system: Option<String>,
    /// The conversation so far, ending with the user's question.
    pub messages: Vec<ChatMessage>,
    /// The answer's token limit (Anthropic requires one: 1024 when not given).
    pub max_tokens: Option<u32>,
    /// Provider-specific fields merged into the body last (`temperature`, `thinking`, ...).
    pub extra: Value,
}

impl ChatRequest {
    /// A single user message.
    pub fn user(text: impl Into<String>) -> Self {
        ChatRequest {
            system: None,
            messages: vec![ChatMessage {
                role: Role::User,
                text: text.into(),
            }],
            max_tokens: None,
            extra: Value::Object(Map::new()),
        }
    }
}

/// A turn a re-ask appends after the caller's messages.
#[derive(Debug, Clone, PartialEq)]
pub enum Turn {
    /// The model's previous answer, as text.
    AssistantText(String),
    /// The model's previous tool call.
    AssistantToolCall {
        /// The provider's call id, if it gave one.
        id: Option<String>,
        /// The tool called.
        name: String,
        /// The input, as the model wrote it.
        input: Answer,
    },
    /// A correction from the caller, as a user message.
    UserText(String),
    /// A correction answering a tool call, as an error tool result.
    ToolError {
        /// The call answered.
        id: Option<String>,
        /// The tool called.
        name: String,
        /// What was wrong.
        text: String,
    },
}
