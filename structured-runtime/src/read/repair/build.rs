//! What the repairing parser builds from what it reads: a `serde_json::Value` ([`ValueBuild`]),
//! or the value's JSON text ([`TextBuild`]), the same value written as `serde_json` writes it.
//!
//! The parser decides everything (what is a value, what repair it needs, which key wins); a
//! builder only holds the result. The text builder writes each finished value into its parent's
//! text at once, so what it holds is the text written so far plus the members of the objects
//! still open: a few bytes per byte of input, where a `Value` of many small objects is about
//! twenty times its text. `structured repair` reads a large answer through it.

use indexmap::IndexMap;
use serde_json::{Map, Value};

/// How the parser holds what it has read.
pub(crate) trait Build {
    /// A finished value.
    type Node;
    /// An object still taking members.
    type Object;
    /// The items of an array (or of a set or a tuple) being read.
    type List;

    /// A scalar the parser made (`null`, a boolean, a number, or a string it spelled).
    fn scalar(value: Value) -> Self::Node;
    /// A string read from the text.
    fn string(s: String) -> Self::Node;
    /// The node's text when it is a string.
    fn as_str(node: &Self::Node) -> Option<&str>;
    /// The node's text when it is a string, or the node back.
    fn into_string(node: Self::Node) -> Result<String, Self::Node>;
    /// An array or object with nothing in it.
    fn is_empty_container(node: &Self::Node) -> bool;

    fn list() -> Self::List;
    fn push(list: &mut Self::List, node: Self::Node);
    /// The one item of a list of one, or the list back.
    fn only(list: Self::List) -> Result<Self::Node, Self::List>;
    fn array(list: Self::List) -> Self::Node;

    fn object() -> Self::Object;
    fn object_is_empty(object: &Self::Object) -> bool;
    /// Sets `key`; `true` when it was set before (its value is replaced where it stood).
    fn insert(object: &mut Self::Object, key: String, value: Self::Node) -> bool;
    /// Appends the items of `array` to the object's last member, when that is an array.
    fn extend_last(object: &mut Self::Object, array: Self::Node);
    fn finish(object: Self::Object) -> Self::Node;
    /// The object a finished node is, to take more members (an object closed too early).
    fn as_object(node: &mut Self::Node) -> Option<&mut Self::Object>;
}

/// Builds `serde_json::Value`s.
pub(crate) struct ValueBuild;

impl Build for ValueBuild {
    type Node = Value;
    type Object = Map<String, Value>;
    type List = Vec<Value>;

    #[inline]
    fn scalar(value: Value) -> Value {
        value
    }
    #[inline]
    fn string(s: String) -> Value {
        Value::String(s)
    }
    #[inline]
    fn as_str(node: &Value) -> Option<&str> {
        node.as_str()
    }
    #[inline]
    fn into_string(node: Value) -> Result<String, Value> {
        match node {
            Value::String(s) => Ok(s),
            other => Err(other),
        }
    }
    fn is_empty_container(node: &Value) -> bool {
        match node {
            Value::Array(a) => a.is_empty(),
            Value::Object(o) => o.is_empty(),
            _ => false,
        }
    }
    #[inline]
    fn list() -> Vec<Value> {
        Vec::new()
    }
    #[inline]
    fn push(list: &mut Vec<Value>, node: Value) {
        list.push(node);
    }
    fn only(mut list: Vec<Value>) -> Result<Value, Vec<Value>> {
        if list.len() == 1 {
            if let Some(one) = list.pop() {
                return Ok(one);
            }
        }
        Err(list)
    }
    #[inline]
    fn array(list: Vec<Value>) -> Value {
        Value::Array(list)
    }
    #[inline]
    fn object() -> Map<String, Value> {
        Map::new()
    }
    #[inline]
    fn object_is_empty(object: &Map<String, Value>) -> bool {
        object.is_empty()
    }
    #[inline]
    fn insert(object: &mut Map<String, Value>, key: String, value: Value) -> bool {
        object.insert(key, value).is_some()
    }
    fn extend_last(object: &mut Map<String, Value>, array: Value) {
        if let (Value::Array(items), Some((_, Value::Array(last)))) =
            (array, object.iter_mut().next_back())
        {
            last.extend(items);
        }
    }
    #[inline]
    fn finish(object: Map<String, Value>) -> Value {
        Value::Object(object)
    }
    fn as_object(node: &mut Value) -> Option<&mut Map<String, Value>> {
        node.as_object_mut()
    }
}

/// Builds the value's JSON text, compact, as `serde_json` writes the same `Value`.
pub(crate) struct TextBuild;

/// A value read as text: finished JSON (bytes of UTF-8: serde_json writes no other), a scalar
/// or a string not yet written (a string may still be an object's key or be looked at), or an
/// object still open for members.
#[derive(Debug)]
pub(crate) enum Text {
    Json(Vec<u8>),
    /// `null`, a boolean or a number: written where it goes, with no buffer of its own.
    Scalar(Value),
    Str(String),
    Object(TextObject),
}

/// An object's members as JSON text, in the order first set (a key set again keeps its place and
/// takes the new value, as `serde_json`'s map does).
#[derive(Debug)]
pub(crate) enum TextObject {
    /// Written as they come into one buffer (`{` and the members, no closing brace), the names
    /// kept beside with where each member starts (its comma, or its name for the first) and
    /// where its value starts: no key given twice, and at most [`FLAT_MEMBERS`] of them (a name
    /// is then looked for among the few).
    Flat {
        out: Vec<u8>,
        keys: Vec<(String, usize, usize)>,
    },
    /// Each member's text apart, by name: once a key comes twice (its value replaced where it
    /// stood) or there are many.
    Map(IndexMap<String, Vec<u8>>),
}

/// Members an object keeps written in one buffer ([`TextObject::Flat`]); past them, by name.
const FLAT_MEMBERS: usize = 16;

impl Default for TextObject {
    fn default() -> Self {
        let mut out = Vec::with_capacity(START_CAPACITY);
        out.push(b'{');
        TextObject::Flat {
            out,
            keys: Vec::new(),
        }
    }
}

/// Room an object's or a list's text starts with: most of a model's are short, and a buffer
/// grown from a byte at a time is copied a few times over.
const START_CAPACITY: usize = 128;

/// An array's text so far, and its last item not yet written (a list of one may be its item).
pub(crate) struct TextList {
    written: Vec<u8>,
    len: usize,
    last: Option<Text>,
}

impl Text {
    /// The JSON text of this value.
    pub(crate) fn into_json(self) -> String {
        // Every piece was written by serde_json or copied from one: UTF-8 throughout.
        String::from_utf8(self.into_bytes())
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
    }

    /// Appends the JSON text of this value to `out`.
    fn write_to(self, out: &mut Vec<u8>) {
        match self {
            Text::Json(json) => out.extend_from_slice(&json),
            Text::Scalar(value) => write_json(out, &value),
            Text::Str(s) => write_json(out, s.as_str()),
            Text::Object(TextObject::Flat { out: json, .. }) => {
                out.extend_from_slice(&json);
                out.push(b'}');
            }
            Text::Object(TextObject::Map(members)) => {
                out.push(b'{');
                for (i, (key, json)) in members.into_iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    write_json(out, key.as_str());
                    out.push(b':');
                    out.extend_from_slice(&json);
                }
                out.push(b'}');
            }
        }
    }

    /// [`Text::into_json`] as bytes.
    fn into_bytes(self) -> Vec<u8> {
        match self {
            Text::Json(json) => json,
            Text::Object(TextObject::Flat { mut out, .. }) => {
                out.push(b'}');
                out
            }
            Text::Object(object @ TextObject::Map(_)) => object.into_bytes(),
            other => {
                let mut out = Vec::new();
                other.write_to(&mut out);
                out
            }
        }
    }

    /// Written after `prefix`: in `prefix` itself, or, when this is finished JSON longer than a
    /// [`BIG_MEMBER`] and than `prefix`, in its own buffer with `prefix` put in front (the long
    /// text is not copied, so it is never held twice).
    fn write_after(self, prefix: &mut Vec<u8>) {
        match self {
            text @ (Text::Json(_) | Text::Object(_)) => {
                let mut json = text.into_bytes();
                if json.len() >= BIG_MEMBER && json.len() >= prefix.len() {
                    json.reserve_exact(prefix.len() + 1);
                    json.splice(0..0, prefix.drain(..));
                    *prefix = json;
                } else {
                    prefix.extend_from_slice(&json);
                }
            }
            other => other.write_to(prefix),
        }
    }
}

impl TextObject {
    /// The object's JSON text, when it is held by name. A member holding most of it (a long
    /// list) is not copied: the text before it is put in front of it in its own buffer, the
    /// rest after, so the object's text is never held twice.
    fn into_bytes(self) -> Vec<u8> {
        let TextObject::Map(members) = self else {
            return Text::Object(self).into_bytes();
        };
        let total: usize = members.iter().map(|(k, v)| k.len() + v.len() + 4).sum();
        let largest = members
            .values()
            .enumerate()
            .max_by_key(|(_, json)| json.len())
            .map(|(i, json)| (i, json.len()));
        let Some((big, _)) = largest.filter(|(_, len)| *len >= BIG_MEMBER && *len >= total / 2)
        else {
            let mut out = Vec::with_capacity(total + 2);
            Text::Object(TextObject::Map(members)).write_to(&mut out);
            return out;
        };
        let (mut before, mut after, mut body) = (vec![b'{'], Vec::new(), Vec::new());
        for (i, (key, json)) in members.into_iter().enumerate() {
            let to = if i <= big { &mut before } else { &mut after };
            if i > 0 {
                to.push(b',');
            }
            write_json(to, key.as_str());
            to.push(b':');
            if i == big {
                body = json;
            } else {
                to.extend_from_slice(&json);
            }
        }
        after.push(b'}');
        body.reserve_exact(before.len() + after.len());
        body.splice(0..0, before);
        body.extend_from_slice(&after);
        body
    }

    fn is_empty(&self) -> bool {
        match self {
            TextObject::Flat { keys, .. } => keys.is_empty(),
            TextObject::Map(members) => members.is_empty(),
        }
    }

    /// The members by name, each value's text apart (what a flat object becomes).
    fn into_map(self) -> IndexMap<String, Vec<u8>> {
        match self {
            TextObject::Map(members) => members,
            TextObject::Flat { out, keys } => {
                let ends: Vec<usize> = keys
                    .iter()
                    .skip(1)
                    .map(|(_, member, _)| *member)
                    .chain(std::iter::once(out.len()))
                    .collect();
                keys.into_iter()
                    .zip(ends)
                    .map(|((key, _, value), end)| {
                        (key, out.get(value..end).unwrap_or_default().to_vec())
                    })
                    .collect()
            }
        }
    }
}

/// A member this long, holding most of its object's text, is not copied when the object's text
/// is written ([`TextObject::into_bytes`]).
const BIG_MEMBER: usize = 1 << 20;

/// `value` written by serde_json straight into `out`, as it writes the same `Value`.
fn write_json<T: serde::Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    if serde_json::to_writer(&mut *out, value).is_err() {
        out.extend_from_slice(b"null");
    }
}

impl TextList {
    /// Writes the held last item after the others.
    fn flush(&mut self) {
        if let Some(last) = self.last.take() {
            if self.len > 1 {
                self.written.push(b',');
            }
            last.write_to(&mut self.written);
        }
    }
}

impl Build for TextBuild {
    type Node = Text;
    type Object = TextObject;
    type List = TextList;

    fn scalar(value: Value) -> Text {
        match value {
            Value::String(s) => Text::Str(s),
            other => Text::Scalar(other),
        }
    }
    fn string(s: String) -> Text {
        Text::Str(s)
    }
    fn as_str(node: &Text) -> Option<&str> {
        match node {
            Text::Str(s) => Some(s),
            _ => None,
        }
    }
    fn into_string(node: Text) -> Result<String, Text> {
        match node {
            Text::Str(s) => Ok(s),
            other => Err(other),
        }
    }
    fn is_empty_container(node: &Text) -> bool {
        match node {
            Text::Json(json) => json == b"[]",
            Text::Object(object) => object.is_empty(),
            Text::Scalar(_) | Text::Str(_) => false,
        }
    }
    fn list() -> TextList {
        let mut written = Vec::with_capacity(START_CAPACITY);
        written.push(b'[');
        TextList {
            written,
            len: 0,
            last: None,
        }
    }
    fn push(list: &mut TextList, node: Text) {
        list.flush();
        list.last = Some(node);
        list.len += 1;
    }
    fn only(mut list: TextList) -> Result<Text, TextList> {
        if list.len != 1 {
            return Err(list);
        }
        match list.last.take() {
            Some(one) => Ok(one),
            None => Err(list),
        }
    }
    fn array(mut list: TextList) -> Text {
        list.flush();
        list.written.push(b']');
        Text::Json(list.written)
    }
    fn object() -> TextObject {
        TextObject::default()
    }
    fn object_is_empty(object: &TextObject) -> bool {
        object.is_empty()
    }
    fn insert(object: &mut TextObject, key: String, value: Text) -> bool {
        if let TextObject::Flat { out, keys } = object {
            let known = keys.iter().any(|(k, _, _)| *k == key);
            if !known && keys.len() < FLAT_MEMBERS {
                let member = out.len();
                if !keys.is_empty() {
                    out.push(b',');
                }
                write_json(out, key.as_str());
                out.push(b':');
                let at = out.len();
                value.write_after(out);
                keys.push((key, member, at));
                return false;
            }
            // A key given again, or many: by name from here on.
            let flat = std::mem::replace(object, TextObject::Map(IndexMap::new()));
            *object = TextObject::Map(flat.into_map());
        }
        match object {
            TextObject::Map(members) => members.insert(key, value.into_bytes()).is_some(),
            TextObject::Flat { .. } => false,
        }
    }
    fn extend_last(object: &mut TextObject, array: Text) {
        let Text::Json(items) = array else {
            return;
        };
        // Both are arrays as JSON text: `[a,b]` and `[c]` make `[a,b,c]`.
        let inner = items
            .strip_prefix(b"[")
            .and_then(|i| i.strip_suffix(b"]"))
            .unwrap_or_default();
        // The last member's value: the end of a flat object's text.
        let (last, start) = match object {
            TextObject::Flat { out, keys } => match keys.last() {
                Some((_, _, at)) => (out, *at),
                None => return,
            },
            TextObject::Map(members) => match members.last_mut() {
                Some((_, last)) => (last, 0),
                None => return,
            },
        };
        let value = last.get(start..).unwrap_or_default();
        if !value.starts_with(b"[") || inner.is_empty() {
            return;
        }
        let had_items = value.len() > 2;
        last.pop();
        if had_items {
            last.push(b',');
        }
        last.extend_from_slice(inner);
        last.push(b']');
    }
    fn finish(object: TextObject) -> Text {
        Text::Object(object)
    }
    fn as_object(node: &mut Text) -> Option<&mut TextObject> {
        match node {
            Text::Object(object) => Some(object),
            _ => None,
        }
    }
}
