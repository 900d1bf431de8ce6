//! The value so far as a consumer keeps it: a stream's [`Change`]s applied in their order, each
//! found from where the last one was made.

use serde_json::Value;

use crate::read::stream::{Change, FREE_TEXT_START};
use crate::schema::pointer::{index, newest_mut, unescape};

/// The value so far, kept by applying a stream's [`Change`]s in the order the reader gives them:
/// the same value [`Change::apply`] builds, found faster.
///
/// A stream writes where it wrote last: free text grows where it was begun, a member follows
/// its sibling. The view remembers where the last change went while that place lies along the
/// newest member of every object and the last item of every list, so a change there, beside it
/// or just inside it is made without reading its pointer segment by segment (the pointer is
/// compared, not walked). Any other change is made as [`Change::apply`] makes it.
///
/// ```
/// use serde_json::json;
/// use structured_runtime::{ResponseSchema, StreamReader, StreamView};
///
/// let schema = ResponseSchema::new("note", json!({
///     "type": "object",
///     "properties": {"note": {"type": "string"}, "n": {"type": "integer"}},
///     "required": ["note", "n"]
/// }))?;
/// let mut reader = StreamReader::changes_only(&schema);
/// let mut view = StreamView::new();
/// for chunk in [r#"{"note": "wr"#, r#"itten as it co"#, r#"mes", "n": 3}"#] {
///     for change in reader.feed_str(chunk).changes {
///         view.apply(change);
///     }
/// }
/// assert_eq!(view.value(), &json!({"note": "written as it comes", "n": 3}));
/// # Ok::<(), structured_runtime::SchemaError>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct StreamView {
    value: Value,
    /// The pointer text of the last change's place and its number of segments, while that
    /// place lies along the newest members (kept as text: the next change's pointer is compared
    /// with it).
    newest: Option<(String, usize)>,
}

impl StreamView {
    /// An empty view: `null`, as a stream's value is before its first change.
    pub fn new() -> StreamView {
        StreamView::default()
    }

    /// The value so far.
    pub fn value(&self) -> &Value {
        &self.value
    }

    /// The value so far, taken.
    pub fn into_value(self) -> Value {
        self.value
    }

    /// Applies `change`, the next of a stream's changes. A change that does not fit is left out,
    /// as [`Change::apply`] leaves it.
    pub fn apply(&mut self, change: &Change) {
        let at = change.at().as_str();
        let made = match &self.newest {
            Some((last, depth)) => near(&mut self.value, last, *depth, at, change),
            None => Near::Far,
        };
        match made {
            // (The same place: remembered already.)
            Near::Same => {}
            Near::Made(Some(depth)) => self.remember(at, depth),
            Near::Made(None) => self.newest = None,
            // Nothing made: the last place is where it was.
            Near::Missed => {}
            Near::Far => {
                change.apply(&mut self.value);
                match newest_mut(&mut self.value, at) {
                    Some(_) => self.remember(at, at.bytes().filter(|&b| b == b'/').count()),
                    None => self.newest = None,
                }
            }
        }
    }

    /// `at`, `depth` segments deep, is the last change's place, along the newest members.
    fn remember(&mut self, at: &str, depth: usize) {
        let mut last = self.newest.take().map(|(last, _)| last).unwrap_or_default();
        last.clear();
        last.push_str(at);
        self.newest = Some((last, depth));
    }
}

/// Two views are equal when their values are (where each would look first is not compared).
impl PartialEq for StreamView {
    fn eq(&self, other: &StreamView) -> bool {
        self.value == other.value
    }
}

/// What [`near`] made of a change.
enum Near {
    /// Made at the last place.
    Same,
    /// Made; the depth of its place when that place is along the newest members.
    Made(Option<usize>),
    /// Its place was near the last one, and it did not fit there: nothing made.
    Missed,
    /// Not near the last place: not made.
    Far,
}

/// Makes `change` at `at` when `at` is the last place (`last`, `depth` segments deep, along the
/// newest members) or a member or item of it or of one of the places it lies in.
fn near(doc: &mut Value, last: &str, depth: usize, at: &str, change: &Change) -> Near {
    if at == last {
        let Some(target) = newest_at(doc, depth) else {
            return Near::Missed;
        };
        return match change {
            Change::Set { value, .. } => {
                *target = value.clone();
                Near::Same
            }
            Change::Append { text, .. } => match target {
                Value::String(s) => {
                    if s.capacity() == 0 {
                        // Free text arrives a few bytes at a time: room for a sentence or two.
                        s.reserve(FREE_TEXT_START.max(text.len()));
                    }
                    s.push_str(text);
                    Near::Same
                }
                _ => Near::Missed,
            },
        };
    }
    let Some(cut) = at.rfind('/') else {
        return Near::Far;
    };
    let (parent, segment) = (at.get(..cut).unwrap_or_default(), at.get(cut + 1..));
    // The container is the last place or one of the places it lies in (they are along the
    // newest members too): a member beside it, or beside one of its containers.
    let on_path = last
        .strip_prefix(parent)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'));
    if !on_path {
        return Near::Far;
    }
    let container_depth = parent.bytes().filter(|&b| b == b'/').count();
    let (Some(container), Some(segment)) = (newest_at(doc, container_depth), segment) else {
        return Near::Missed;
    };
    let key = unescape(segment);
    let newest = match (change, container) {
        (Change::Set { value, .. }, Value::Object(map)) => {
            // A name met again keeps its place; a new one goes last.
            let was_last = map.keys().next_back().is_some_and(|k| *k == key);
            map.insert(key.into_owned(), value.clone()).is_none() || was_last
        }
        (Change::Set { value, .. }, Value::Array(items)) => match key.parse::<usize>() {
            Ok(i) if i == items.len() => {
                items.push(value.clone());
                index(&key) == Some(i)
            }
            Ok(i) => match items.get_mut(i) {
                Some(slot) => {
                    *slot = value.clone();
                    // (`01` and `+1` set item 1 as `Change::apply` reads them, but a pointer
                    // does not name it so.)
                    i + 1 == items.len() && index(&key) == Some(i)
                }
                None => return Near::Missed,
            },
            Err(_) => return Near::Missed,
        },
        // Free text appended where no change was made before it (never, in a stream's order),
        // or a value set inside a scalar: as `Change::apply` does it.
        _ => return Near::Far,
    };
    Near::Made(newest.then_some(container_depth + 1))
}

/// The value `depth` steps down along the newest member of each object and the last item of
/// each list.
fn newest_at(doc: &mut Value, depth: usize) -> Option<&mut Value> {
    let mut at = doc;
    for _ in 0..depth {
        at = match at {
            Value::Object(map) => map.values_mut().next_back()?,
            Value::Array(items) => items.last_mut()?,
            _ => return None,
        };
    }
    Some(at)
}
