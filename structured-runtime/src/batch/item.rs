//! One item of a batch job as the caller gives it (a line of JSONL), and the request it becomes.

use serde::{Deserialize, Serialize};

use crate::provider::wire::{ChatMessage, ChatRequest, Role};

/// One item of a job: an id and its input (put into the job's prompt), or a conversation of its
/// own. As a line of JSONL: `{"id": "a1", "input": "…"}`, or
/// `{"id": "a2", "system": "…", "messages": [{"role": "user", "text": "…"}]}`.
///
/// ```
/// use structured_runtime::batch::JobItem;
///
/// let item: JobItem = serde_json::from_str(r#"{"id": "inv-7", "input": "Total due: 41.50 EUR"}"#)?;
/// assert_eq!(item.id.as_deref(), Some("inv-7"));
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobItem {
    /// The item's id, unique in the job: its results are found by it. Its line number (from 1)
    /// when not given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The input, put into the job's prompt where it says `{input}` (after it, on a new line,
    /// when the prompt does not say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    /// System instructions of the item's own conversation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    /// The item's own conversation, ending with the user's question (instead of `input`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<ItemMessage>,
}

/// A message of an item's own conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ItemMessage {
    /// `user` or `assistant`.
    pub role: ItemRole,
    /// Its text.
    pub text: String,
}

/// Who wrote a message of an item's conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ItemRole {
    /// The caller.
    User,
    /// The model, earlier in the conversation.
    Assistant,
}

impl JobItem {
    /// What is wrong with the item, if anything: it has an input or a conversation, not both,
    /// and a conversation ends with the user.
    pub fn problem(&self) -> Option<&'static str> {
        match (&self.input, self.messages.last()) {
            (None, None) => Some("an item needs `input` or `messages`"),
            (Some(_), Some(_)) => Some("an item has `input` or `messages`, not both"),
            (Some(_), None) if self.system.is_some() => {
                Some("`system` goes with `messages` (the job's prompt is the input's)")
            }
            (None, Some(last)) if last.role != ItemRole::User => {
                Some("an item's `messages` end with the user's")
            }
            _ => None,
        }
    }

    /// The request the item becomes, given the job's `prompt` and answer token limit.
    pub fn request(&self, prompt: &str, max_tokens: Option<u32>) -> ChatRequest {
        let mut request = match &self.input {
            Some(input) => ChatRequest::user(fill(prompt, input)),
            None => {
                let mut request = ChatRequest::user("");
                request.messages = self
                    .messages
                    .iter()
                    .map(|m| {
                        let mut message = ChatMessage::user(m.text.clone());
                        message.role = match m.role {
                            ItemRole::User => Role::User,
                            ItemRole::Assistant => Role::Assistant,
                        };
                        message
                    })
                    .collect();
                request.system = self.system.clone();
                request
            }
        };
        request.max_tokens = max_tokens;
        request
    }
}

/// `prompt` with `input` where it says `{input}`, or after it on a new line.
fn fill(prompt: &str, input: &str) -> String {
    if prompt.contains("{input}") {
        prompt.replace("{input}", input)
    } else if prompt.is_empty() {
        input.to_owned()
    } else {
        format!("{prompt}\n{input}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_input_goes_into_the_prompt() {
        let item = JobItem {
            input: Some("41.50 EUR".into()),
            ..JobItem::default()
        };
        let request = item.request("Read the total: {input}", Some(64));
        assert_eq!(request.messages[0].text, "Read the total: 41.50 EUR");
        assert_eq!(request.max_tokens, Some(64));
        assert_eq!(
            item.request("Read it.", None).messages[0].text,
            "Read it.\n41.50 EUR"
        );
    }

    #[test]
    fn a_conversation_is_sent_as_written() {
        let item: JobItem = serde_json::from_str(
            r#"{"system": "Be brief.", "messages": [{"role": "user", "text": "a"}, {"role": "assistant", "text": "b"}, {"role": "user", "text": "c"}]}"#,
        )
        .unwrap();
        assert_eq!(item.problem(), None);
        let request = item.request("ignored {input}", None);
        assert_eq!(request.system.as_deref(), Some("Be brief."));
        let roles: Vec<Role> = request.messages.iter().map(|m| m.role).collect();
        assert_eq!(roles, [Role::User, Role::Assistant, Role::User]);
    }

    #[test]
    fn an_item_without_a_question_is_refused() {
        assert!(JobItem::default().problem().is_some());
        let both: JobItem =
            serde_json::from_str(r#"{"input": "x", "messages": [{"role": "user", "text": "y"}]}"#)
                .unwrap();
        assert!(both.problem().is_some());
        let ends: JobItem =
            serde_json::from_str(r#"{"messages": [{"role": "assistant", "text": "y"}]}"#).unwrap();
        assert!(ends.problem().is_some());
        assert!(serde_json::from_str::<JobItem>(r#"{"input": "x", "extra": 1}"#).is_err());
    }
}
