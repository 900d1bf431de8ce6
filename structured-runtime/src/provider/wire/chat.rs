//! The caller's request, provider-neutral: messages, the token limit, extra fields, and the turns
//! a re-ask appends.

use serde_json::{Map, Value};

use super::types::WireApi;
use crate::provider::capabilities::ProviderKind;
use crate::read::mode::StructuredOutputMode;
use crate::read::Answer;
use crate::schema::types::{SchemaGen, SchemaType};

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
    /// Images and documents sent with the text (a scanned invoice, a screenshot), written in
    /// each provider's own format after the text.
    pub attachments: Vec<Attachment>,
}

impl ChatMessage {
    /// A message from the caller.
    pub fn user(text: impl Into<String>) -> Self {
        ChatMessage {
            role: Role::User,
            text: text.into(),
            attachments: Vec::new(),
        }
    }

    /// The same message with an attachment.
    pub fn with(mut self, attachment: Attachment) -> Self {
        self.attachments.push(attachment);
        self
    }
}

/// An image or a PDF sent with a message.
///
/// ```
/// use structured_runtime::provider::wire::{Attachment, ChatMessage, ChatRequest};
///
/// let mut request = ChatRequest::user("Extract the invoice.");
/// request.messages[0] = ChatMessage::user("Extract the invoice.")
///     .with(Attachment::pdf_base64("JVBERi0xLjQK..."))
///     .with(Attachment::image_url("https://example.com/scan.png"));
/// assert_eq!(request.messages[0].attachments.len(), 2);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attachment {
    /// `image/png`, `image/jpeg`, `image/webp`, `image/gif` or `application/pdf`.
    pub media_type: String,
    /// Where the bytes are.
    pub source: AttachmentSource,
}

/// Where an attachment's bytes are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttachmentSource {
    /// The bytes, base64-encoded.
    Base64(String),
    /// A URL the provider fetches itself.
    Url(String),
}

impl Attachment {
    /// An image given as base64 (`media_type` as `image/png`).
    pub fn image_base64(media_type: impl Into<String>, data: impl Into<String>) -> Self {
        Attachment {
            media_type: media_type.into(),
            source: AttachmentSource::Base64(data.into()),
        }
    }

    /// An image at a URL (its type left to the provider; sent as `image/*`).
    pub fn image_url(url: impl Into<String>) -> Self {
        Attachment {
            media_type: "image/*".into(),
            source: AttachmentSource::Url(url.into()),
        }
    }

    /// A PDF given as base64.
    pub fn pdf_base64(data: impl Into<String>) -> Self {
        Attachment {
            media_type: "application/pdf".into(),
            source: AttachmentSource::Base64(data.into()),
        }
    }

    /// Whether this is a PDF.
    pub fn is_pdf(&self) -> bool {
        self.media_type == "application/pdf"
    }

    /// Why `kind` cannot take this attachment, if it cannot.
    pub(crate) fn refused_by(&self, kind: ProviderKind) -> Option<String> {
        let url = matches!(self.source, AttachmentSource::Url(_));
        let refused = match kind.wire_api() {
            WireApi::Anthropic => false,
            WireApi::OpenAiChat | WireApi::OpenAiResponses => self.is_pdf() && url,
            WireApi::Gemini => url,
            WireApi::OllamaChat => self.is_pdf() || url,
        };
        refused.then(|| {
            let what = if self.is_pdf() { "a PDF" } else { "an image" };
            let how = if url { "by URL" } else { "inline" };
            format!(
                "{kind:?} takes no {what} {how}: send it base64-encoded, or to another provider"
            )
        })
    }
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
    /// How this request asks for its structured answer (the schema enforced, a forced tool, the
    /// schema in the prompt), over the run's [`RunConfig::mode`](crate::run::RunConfig::mode) and
    /// the provider's own; `None` leaves it to them, else to what the provider and model take
    /// best. A mode the provider cannot take ends the run before any request.
    pub mode: Option<StructuredOutputMode>,
}

impl ChatRequest {
    /// A single user message.
    pub fn user(text: impl Into<String>) -> Self {
        ChatRequest {
            system: None,
            messages: vec![ChatMessage::user(text)],
            max_tokens: None,
            extra: Value::Object(Map::new()),
            mode: None,
        }
    }

    /// This request asking for its structured answer in `mode` ([`ChatRequest::mode`]).
    pub fn with_mode(mut self, mode: StructuredOutputMode) -> Self {
        self.mode = Some(mode);
        self
    }
}

/// One of the caller's own tools, offered beside the structured-output tool in an agent step
/// ([`crate::run::Ask::agent`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Tool {
    /// Its name.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// The JSON Schema of its arguments, sent as the caller wrote it.
    pub parameters: Value,
    /// Whether the provider holds the model to `parameters` (`strict: true` on OpenAI and
    /// Anthropic tools; Gemini and Ollama have no such setting). The schema must then be one
    /// the provider's structured outputs take, and on Anthropic it counts toward the
    /// per-request limits (20 strict tools, 24 optional and 16 union-typed properties across the
    /// output format and every strict tool), checked before any request.
    pub strict: bool,
}

impl Tool {
    /// A tool with the schema of its arguments as written, not strict.
    pub fn new(name: impl Into<String>, description: impl Into<String>, parameters: Value) -> Tool {
        Tool {
            name: name.into(),
            description: description.into(),
            parameters,
            strict: false,
        }
    }

    /// This tool with the provider holding the model to its schema ([`Tool::strict`]).
    pub fn strict(mut self, strict: bool) -> Tool {
        self.strict = strict;
        self
    }

    /// A tool whose arguments are `T`'s strict schema: a type derived with
    /// `#[derive(StructuredOutput)]`, which need not be `Deserialize` (a type the program only
    /// describes or sends derives its schema and rules alone).
    ///
    /// ```
    /// use structured_runtime::provider::wire::Tool;
    /// use structured_runtime::StructuredOutput;
    ///
    /// /// Look a ticker up.
    /// #[derive(StructuredOutput, serde::Serialize)]
    /// struct Lookup {
    ///     /// The ticker symbol.
    ///     #[length(min = 1, max = 8)]
    ///     symbol: String,
    /// }
    ///
    /// let tool = Tool::of::<Lookup>("lookup", "Look a ticker up.");
    /// assert_eq!(tool.parameters["required"], serde_json::json!(["symbol"]));
    /// assert_eq!(tool.parameters["properties"]["symbol"]["maxLength"], 8);
    /// ```
    pub fn of<T: SchemaType + ?Sized + 'static>(
        name: impl Into<String>,
        description: impl Into<String>,
    ) -> Tool {
        Tool::new(name, description, SchemaGen::root::<T>())
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
    /// The result of one of the caller's tools, answering the model's call (an agent step).
    ToolResult {
        /// The call answered.
        id: Option<String>,
        /// The tool called.
        name: String,
        /// What the tool returned.
        text: String,
    },
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
