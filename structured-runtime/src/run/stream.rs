//! What a streamed run shows while an answer arrives: the events its caller sees, and the
//! reading of one attempt's answer as it comes.

use serde_json::Value;

use crate::read::reshape::ReadBackStream;
use crate::read::stream::StreamReader;
use crate::read::stream_view::StreamView;
use crate::schema::validate::Violation;
use crate::schema::Pointer;

/// What a streaming run tells its caller while it runs.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum StreamEvent<'e> {
    /// A request is about to be sent: the first, a re-ask, or a transport retry (`number`
    /// counts them all, from 1).
    Attempt {
        /// Which request, from 1.
        number: usize,
    },
    /// The value so far changed: free text grew, or values completed (their pointers). It only
    /// grows within an attempt; a new attempt starts from nothing.
    Partial {
        /// The value so far, in the schema's shape.
        value: &'e Value,
        /// The values completed since the last event (none when only free text grew).
        completed: &'e [Pointer],
    },
    /// The answer's text as it arrives, each piece once and in order, before what it shows: a
    /// caller that prints free text (a markdown wrapper answered in plain Markdown, which holds no
    /// value until it ends) prints these.
    Text(&'e str),
    /// Values just completed break rules (each with its path), reported before the answer
    /// ends. With [`RunConfig::stop_stream_on_violation`](super::RunConfig::stop_stream_on_violation) the attempt stops here and is
    /// re-asked.
    Violations(&'e [Violation]),
}

/// What one attempt's answer showed while it arrived.
pub(super) struct Shown<'v> {
    pub(super) reader: StreamReader<'v>,
    /// The value so far, kept in step by the reader's changes (no copy per event).
    pub(super) value: StreamView,
    /// When the answer is written in another shape than the schema's ([`super::Reshape`]):
    /// the changes read back into the schema's shape, and the value so far in that shape.
    pub(super) reshaped: Option<(ReadBackStream<'v>, Value)>,
    /// Rules broken before the answer ended, when the run stops there.
    pub(super) stopped: Option<Vec<Violation>>,
    pub(super) stop_on_violation: bool,
}

impl Shown<'_> {
    /// Reads more of the answer, tells the caller what changed; `false` to stop reading.
    pub(super) fn feed(
        &mut self,
        text: &str,
        on_event: &mut (dyn FnMut(StreamEvent<'_>) + Send),
    ) -> bool {
        if !text.is_empty() {
            on_event(StreamEvent::Text(text));
        }
        // The reader and the value kept beside it are apart: nothing is copied per chunk.
        let progress = self.reader.feed_str(text);
        for change in progress.changes {
            self.value.apply(change);
        }
        if !progress.violations.is_empty() {
            on_event(StreamEvent::Violations(progress.violations));
            if self.stop_on_violation {
                self.stopped = Some(progress.violations.to_vec());
            }
        }
        if progress.changed {
            match &mut self.reshaped {
                // In the schema's own shape, change by change.
                Some((back, written)) => {
                    let completed = back.apply(
                        progress.changes,
                        progress.completed,
                        self.value.value(),
                        written,
                    );
                    on_event(StreamEvent::Partial {
                        value: written,
                        completed: &completed,
                    });
                }
                None => on_event(StreamEvent::Partial {
                    value: self.value.value(),
                    completed: progress.completed,
                }),
            }
        }
        self.stopped.is_none()
    }
}
