//! JSON pointers (RFC 6901): where a value is in an answer, or a node in a schema.
//!
//! [`Pointer`] is the one owned pointer every report carries (violations, repairs and recoveries,
//! strict-mode and lowering reports, `from_text` reports, the runner's ledger). [`Path`] builds
//! one while a value is walked without allocating: it is linked through the stack and written out
//! only when something is reported. Escaping (`~` → `~0`, `/` → `~1`), unescaping and the
//! `(root)` display live here and nowhere else.

use std::borrow::Cow;
use std::fmt;

use serde_json::Value;

/// A JSON pointer: `""` is the whole document, `/signals/2/magnitude` a value inside it.
///
/// Displayed as written, except the root, which reads `(root)`.
///
/// ```
/// use structured_runtime::Pointer;
///
/// let mut at = Pointer::root();
/// at.push("signals");
/// at.push_index(2);
/// at.push("a/b");
/// assert_eq!(at, "/signals/2/a~1b");
/// assert_eq!(at.segments().collect::<Vec<_>>(), ["signals", "2", "a/b"]);
/// assert_eq!(Pointer::root().to_string(), "(root)");
///
/// let doc = serde_json::json!({"signals": [0, 1, {"a/b": true}]});
/// assert_eq!(at.get(&doc), Some(&serde_json::json!(true)));
/// ```
#[derive(Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Pointer(String);

impl Clone for Pointer {
    fn clone(&self) -> Pointer {
        Pointer(self.0.clone())
    }

    /// Copies `source` into this pointer's own room when it has enough (a reader that builds a
    /// pointer per value reuses one).
    fn clone_from(&mut self, source: &Pointer) {
        self.0.clone_from(&source.0);
    }
}

/// Text that is not a JSON pointer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{text:?} is not a JSON pointer: {reason}")]
pub struct PointerError {
    /// The text given.
    pub text: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

impl Pointer {
    /// The whole document.
    pub const fn root() -> Pointer {
        Pointer(String::new())
    }

    /// `rest`, a pointer inside the value this one names, as a pointer from this one's
    /// document: `/signals/2` joined with `/magnitude` is `/signals/2/magnitude`.
    pub fn join(&self, rest: &Pointer) -> Pointer {
        Pointer(format!("{}{}", self.0, rest.0))
    }

    /// Reads a pointer as written (`""`, or `/`-separated segments with `~0` and `~1` escapes).
    pub fn parse(text: &str) -> Result<Pointer, PointerError> {
        let fail = |reason| PointerError {
            text: text.to_owned(),
            reason,
        };
        if !text.is_empty() && !text.starts_with('/') {
            return Err(fail("it must be empty or start with `/`"));
        }
        let mut bytes = text.bytes().peekable();
        while let Some(b) = bytes.next() {
            if b == b'~' && !matches!(bytes.next(), Some(b'0' | b'1')) {
                return Err(fail("`~` must be followed by `0` or `1`"));
            }
        }
        Ok(Pointer(text.to_owned()))
    }

    /// The pointer a local reference names: `#` is the root, `#/$defs/node` a node, with the
    /// fragment's percent-encoding decoded (`#/$defs/a%20b`). `None` for any other reference
    /// (a remote document, an anchor).
    pub fn from_fragment(reference: &str) -> Option<Pointer> {
        let fragment = reference.strip_prefix('#')?;
        let decoded = percent_decode(fragment)?;
        Pointer::parse(&decoded).ok()
    }

    /// Appends a property name (escaped).
    pub fn push(&mut self, key: &str) {
        self.0.push('/');
        escape_into(&mut self.0, key);
    }

    /// Appends an array index.
    pub fn push_index(&mut self, index: usize) {
        // Its digits written from the last (`write!` goes through the formatting machinery).
        let mut digits = [0u8; MAX_INDEX_DIGITS];
        let mut at = digits.len();
        let mut n = index;
        loop {
            at -= 1;
            if let Some(d) = digits.get_mut(at) {
                *d = b'0' + (n % 10) as u8;
            }
            n /= 10;
            if n == 0 || at == 0 {
                break;
            }
        }
        self.0.push('/');
        self.0
            .push_str(std::str::from_utf8(digits.get(at..).unwrap_or_default()).unwrap_or("0"));
    }

    /// Removes the last segment; `false` at the root.
    pub fn pop(&mut self) -> bool {
        match self.0.rfind('/') {
            Some(at) => {
                self.0.truncate(at);
                true
            }
            None => false,
        }
    }

    /// This pointer with a property name appended.
    pub fn key(&self, key: &str) -> Pointer {
        // (Room for the segment from the start: a pointer is built per value a stream reads.)
        let mut out = String::with_capacity(self.0.len() + 1 + key.len());
        out.push_str(&self.0);
        let mut out = Pointer(out);
        out.push(key);
        out
    }

    /// This pointer with an array index appended.
    pub fn index(&self, index: usize) -> Pointer {
        let mut out = String::with_capacity(self.0.len() + 1 + MAX_INDEX_DIGITS);
        out.push_str(&self.0);
        let mut out = Pointer(out);
        out.push_index(index);
        out
    }

    /// The pointer as written (`""` for the root).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether this is the whole document.
    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    /// The segments, unescaped, from the root down.
    pub fn segments(&self) -> impl Iterator<Item = Cow<'_, str>> + '_ {
        self.0
            .strip_prefix('/')
            .into_iter()
            .flat_map(segments)
            .map(unescape)
    }

    /// The parent pointer and the last segment (unescaped); `None` at the root.
    pub fn split_last(&self) -> Option<(Pointer, Cow<'_, str>)> {
        let (parent, last) = self.parent_and_last()?;
        Some((Pointer(parent.to_owned()), last))
    }

    /// Whether `other` is this location or inside it (segment by segment: `/a` holds `/a/b`,
    /// not `/ab`).
    pub fn contains(&self, other: &Pointer) -> bool {
        match other.0.strip_prefix(self.0.as_str()) {
            Some(rest) => rest.is_empty() || rest.starts_with('/'),
            None => false,
        }
    }

    /// The value this pointer names in `doc`.
    pub fn get<'v>(&self, doc: &'v Value) -> Option<&'v Value> {
        lookup(doc, &self.0)
    }

    /// The value this pointer names in `doc`, to change it.
    pub fn get_mut<'v>(&self, doc: &'v mut Value) -> Option<&'v mut Value> {
        lookup_mut(doc, &self.0)
    }

    /// The parent's location and this one's last segment (unescaped), borrowed: `None` for the
    /// root.
    pub(crate) fn parent_and_last(&self) -> Option<(&str, Cow<'_, str>)> {
        let at = self.0.rfind('/')?;
        Some((
            self.0.get(..at).unwrap_or_default(),
            unescape(self.0.get(at + 1..).unwrap_or_default()),
        ))
    }

    /// Takes the member or item this pointer names out of `doc` (an array's later items move
    /// up). `None` for the root or a location that does not exist.
    pub fn remove(&self, doc: &mut Value) -> Option<Value> {
        let (parent, last) = self.split_last()?;
        match parent.get_mut(doc)? {
            Value::Object(map) => map.shift_remove(last.as_ref()),
            Value::Array(items) => {
                let i = last.parse::<usize>().ok().filter(|i| *i < items.len())?;
                Some(items.remove(i))
            }
            _ => None,
        }
    }
}

impl fmt::Display for Pointer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // `pad`, so a width in the format string lines pointers up.
        if self.is_root() {
            f.pad("(root)")
        } else {
            f.pad(&self.0)
        }
    }
}

impl PartialEq<str> for Pointer {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for Pointer {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl PartialEq<String> for Pointer {
    fn eq(&self, other: &String) -> bool {
        &self.0 == other
    }
}

impl AsRef<str> for Pointer {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// One step of a [`Path`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Segment<'a> {
    /// A property name.
    Key(&'a str),
    /// An array index.
    Index(usize),
}

/// A [`Segment`] that owns its name: one step of a path kept beside the value (the way from a
/// schema's root to the lists read in parts: declared properties and a tuple's positions).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Step {
    /// A property name.
    Key(String),
    /// An array index.
    Index(usize),
}

impl Step {
    /// This step, borrowed.
    pub(crate) fn segment(&self) -> Segment<'_> {
        match self {
            Step::Key(key) => Segment::Key(key),
            Step::Index(index) => Segment::Index(*index),
        }
    }
}

impl From<Segment<'_>> for Step {
    fn from(segment: Segment<'_>) -> Step {
        match segment {
            Segment::Key(key) => Step::Key(key.to_owned()),
            Segment::Index(index) => Step::Index(index),
        }
    }
}

impl PartialEq<Segment<'_>> for Step {
    fn eq(&self, other: &Segment<'_>) -> bool {
        self.segment() == *other
    }
}

/// (A name compared with a step, in tests.)
#[cfg(test)]
impl PartialEq<&str> for Step {
    fn eq(&self, other: &&str) -> bool {
        self.segment() == Segment::Key(other)
    }
}

impl Pointer {
    /// The pointer of the value `steps` lead to from the root.
    pub(crate) fn of_steps(steps: &[Step]) -> Pointer {
        let mut out = Pointer::root();
        for step in steps {
            out.push_segment(step.segment());
        }
        out
    }

    /// Appends one segment (a name escaped, an index in decimal).
    pub(crate) fn push_segment(&mut self, segment: Segment<'_>) {
        match segment {
            Segment::Key(key) => self.push(key),
            Segment::Index(index) => self.push_index(index),
        }
    }
}

/// The location of a value being walked: a list linked through the stack, so walking a valid
/// value allocates nothing; the [`Pointer`] is written only when something is reported.
///
/// ```
/// use structured_runtime::schema::Path;
///
/// let root = Path::root();
/// let signals = root.key("signals");
/// let second = signals.index(2);
/// assert_eq!(second.key("a/b").to_pointer(), "/signals/2/a~1b");
/// assert_eq!(root.to_pointer(), "");
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Path<'a> {
    parent: Option<&'a Path<'a>>,
    segment: Option<Segment<'a>>,
}

impl<'a> Path<'a> {
    /// The root.
    pub const fn root() -> Path<'static> {
        Path {
            parent: None,
            segment: None,
        }
    }

    /// The property `name` of the value here.
    pub fn key<'b>(&'b self, name: &'b str) -> Path<'b> {
        self.segment(Segment::Key(name))
    }

    /// The item `index` of the array here.
    pub fn index(&self, index: usize) -> Path<'_> {
        self.segment(Segment::Index(index))
    }

    /// The value `segment` names below the value here.
    pub(crate) fn segment<'b>(&'b self, segment: Segment<'b>) -> Path<'b> {
        Path {
            parent: Some(self),
            segment: Some(segment),
        }
    }

    /// The segments from the root down.
    pub fn segments(&self) -> Vec<Segment<'a>> {
        let mut out = Vec::new();
        let mut at = Some(self);
        while let Some(p) = at {
            out.extend(p.segment);
            at = p.parent;
        }
        out.reverse();
        out
    }

    /// The pointer of this location.
    pub fn to_pointer(&self) -> Pointer {
        let mut out = Pointer::root();
        for seg in self.segments() {
            out.push_segment(seg);
        }
        out
    }
}

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.to_pointer().fmt(f)
    }
}

/// The value `pointer` (written as text) names in `doc`, without allocating for segments that
/// need no unescaping. `None` for text that is not a pointer.
pub(crate) fn lookup<'v>(doc: &'v Value, pointer: &str) -> Option<&'v Value> {
    if pointer.is_empty() {
        return Some(doc);
    }
    let mut at = doc;
    for segment in segments(pointer.strip_prefix('/')?) {
        let segment = unescape(segment);
        at = match at {
            Value::Object(map) => map.get(segment.as_ref())?,
            Value::Array(items) => items.get(index(&segment)?)?,
            _ => return None,
        };
    }
    Some(at)
}

/// [`lookup`], to change what it finds: one walk, a segment copied only when it holds an
/// escape.
pub(crate) fn lookup_mut<'v>(doc: &'v mut Value, pointer: &str) -> Option<&'v mut Value> {
    if pointer.is_empty() {
        return Some(doc);
    }
    let mut at = doc;
    for segment in segments(pointer.strip_prefix('/')?) {
        let segment = unescape(segment);
        at = match at {
            Value::Object(map) => map.get_mut(segment.as_ref())?,
            Value::Array(items) => items.get_mut(index(&segment)?)?,
            _ => return None,
        };
    }
    Some(at)
}

/// [`lookup_mut`] along the newest member of each object and the last item of each list,
/// with no key hashed: what a stream is writing is there. `None` as soon as a segment is not
/// the newest one (then [`lookup_mut`] finds it, if it is anywhere).
pub(crate) fn newest_mut<'v>(doc: &'v mut Value, pointer: &str) -> Option<&'v mut Value> {
    // One pass over the pointer's bytes: it is walked for every change a stream applies.
    let mut rest = pointer.as_bytes();
    let mut at = doc;
    while let Some((&slash, tail)) = rest.split_first() {
        if slash != b'/' {
            return None;
        }
        let end = tail.iter().position(|&b| b == b'/').unwrap_or(tail.len());
        let (segment, next) = tail.split_at(end);
        rest = next;
        at = match at {
            Value::Object(map) => {
                let (key, value) = map.iter_mut().next_back()?;
                if !names(segment, key) {
                    return None;
                }
                value
            }
            Value::Array(items) => {
                if index_bytes(segment)?.checked_add(1)? != items.len() {
                    return None;
                }
                items.last_mut()?
            }
            _ => return None,
        };
    }
    Some(at)
}

/// Whether the pointer segment `segment` (escaped: `~0` for `~`, `~1` for `/`) names `key`.
fn names(segment: &[u8], key: &str) -> bool {
    let key = key.as_bytes();
    if !segment.contains(&b'~') {
        return segment == key;
    }
    let mut k = key.iter();
    let mut s = segment.iter();
    while let Some(&b) = s.next() {
        let unescaped = if b == b'~' {
            match s.next() {
                Some(b'0') => b'~',
                Some(b'1') => b'/',
                _ => return false,
            }
        } else {
            b
        };
        if k.next() != Some(&unescaped) {
            return false;
        }
    }
    k.next().is_none()
}

/// An array index as RFC 6901 writes it (decimal digits, no leading zero except `0` itself),
/// read in one pass over the segment's bytes.
fn index_bytes(segment: &[u8]) -> Option<usize> {
    let leading_zero = segment.len() > 1 && segment.first() == Some(&b'0');
    if segment.is_empty() || leading_zero {
        return None;
    }
    segment.iter().try_fold(0usize, |n, &b| {
        let digit = b.checked_sub(b'0').filter(|d| *d < 10)?;
        n.checked_mul(10)?.checked_add(usize::from(digit))
    })
}

/// Runs `edit` on the value `pointer` names in `doc`, found along the newest members first
/// ([`newest_mut`]: where a stream writes), else by one walk ([`lookup_mut`]). Nothing when it
/// names nothing.
pub(crate) fn edit_at(doc: &mut Value, pointer: &str, edit: impl FnOnce(&mut Value)) {
    match newest_mut(doc, pointer) {
        Some(found) => edit(found),
        None => {
            if let Some(found) = lookup_mut(doc, pointer) {
                edit(found)
            }
        }
    }
}

/// The `/`-separated segments of a pointer's text after its first `/`, found byte by byte
/// (`str::split(char)` sets up a searcher per call, and pointers are short).
fn segments(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(text);
    std::iter::from_fn(move || {
        let current = rest?;
        // Segments are short: a plain loop beats a vectorised search's set-up.
        match current.bytes().position(|b| b == b'/') {
            Some(i) => {
                rest = current.get(i + 1..);
                current.get(..i)
            }
            None => {
                rest = None;
                Some(current)
            }
        }
    })
}

/// [`index_bytes`] of a segment's text.
pub(crate) fn index(segment: &str) -> Option<usize> {
    index_bytes(segment.as_bytes())
}

/// The most digits an index has (`usize::MAX` has 20).
const MAX_INDEX_DIGITS: usize = 20;

/// Appends `name` as one pointer segment: `~` → `~0`, `/` → `~1`.
fn escape_into(out: &mut String, name: &str) {
    // Byte by byte: a pattern of two `char`s decodes each character, and names are short.
    if !name.bytes().any(|b| b == b'~' || b == b'/') {
        out.push_str(name);
        return;
    }
    for c in name.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
}

/// One segment as the name it stands for.
pub(crate) fn unescape(segment: &str) -> Cow<'_, str> {
    // Byte by byte: `str::contains(char)` sets up a searcher per call, and segments are short.
    if segment.bytes().any(|b| b == b'~') {
        Cow::Owned(segment.replace("~1", "/").replace("~0", "~"))
    } else {
        Cow::Borrowed(segment)
    }
}

/// `%XX` sequences decoded (a URI fragment); `None` when they do not make UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    if !text.contains('%') {
        return Some(text.to_owned());
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn escapes_and_unescapes_round_trip() {
        let mut p = Pointer::root();
        p.push("a/b~c");
        p.push_index(3);
        assert_eq!(p, "/a~1b~0c/3");
        assert_eq!(p.segments().collect::<Vec<_>>(), ["a/b~c", "3"]);
        let (parent, last) = p.split_last().unwrap();
        assert_eq!((parent.as_str(), last.as_ref()), ("/a~1b~0c", "3"));
        assert!(p.pop() && p.pop() && !p.pop());
        assert!(p.is_root());
    }

    #[test]
    fn parses_pointers_and_fragments() {
        assert_eq!(
            Pointer::parse("/a~01").unwrap().segments().next().unwrap(),
            "a~1"
        );
        assert!(Pointer::parse("a").is_err());
        assert!(Pointer::parse("/a~2").is_err());
        assert!(Pointer::parse("/a~").is_err());
        assert_eq!(Pointer::from_fragment("#").unwrap(), "");
        assert_eq!(
            Pointer::from_fragment("#/$defs/a%20b").unwrap(),
            "/$defs/a b"
        );
        assert!(Pointer::from_fragment("other.json#/a").is_none());
        assert!(Pointer::from_fragment("#anchor").is_none());
        assert!(Pointer::from_fragment("#/%zz").is_none());
    }

    #[test]
    fn lookup_and_lookup_mut_agree_with_serde_json() {
        let doc = json!({"a": [{"b/c": 1, "m~n": [true]}], "": {"": 2}, "01": 3});
        for p in [
            "",
            "/a",
            "/a/0",
            "/a/0/b~1c",
            "/a/0/m~0n/0",
            "/a/00",
            "/a/01",
            "/a/1",
            "/a/x",
            "/a/-1",
            "/",
            "//",
            "/01",
            "/a/0/b~1c/0",
            "x",
            "/a/ 0",
        ] {
            assert_eq!(lookup(&doc, p), doc.pointer(p), "{p:?}");
            let (mut ours, mut theirs) = (doc.clone(), doc.clone());
            assert_eq!(lookup_mut(&mut ours, p), theirs.pointer_mut(p), "{p:?}");
            // Along the newest members, the same value or none.
            let mut newest = doc.clone();
            if let Some(found) = newest_mut(&mut newest, p) {
                assert_eq!(Some(&*found), doc.pointer(p), "{p:?}");
            }
        }
    }

    #[test]
    fn newest_mut_unescapes_segments_and_reads_indexes_as_lookup_does() {
        let doc = json!({"x": 0, "a/b": {"m~n": [0, {"": 5, "~1": 6}]}});
        for (p, found) in [
            ("", true),
            ("/a~1b", true),
            ("/a~1b/m~0n", true),
            ("/a~1b/m~0n/1", true),
            ("/a~1b/m~0n/1/~01", true),
            ("/a~1b/m~0n/01", false),
            ("/a~1b/m~0n/+1", false),
            ("/a~1b/m~0n/18446744073709551617", false),
            ("/a~2b", false),
            ("/a~", false),
            ("/a~1", false),
            ("a~1b", false),
            ("/x", false),
        ] {
            let mut newest = doc.clone();
            let expected = found.then(|| doc.pointer(p).cloned()).flatten();
            assert_eq!(
                newest_mut(&mut newest, p).map(|v| v.clone()),
                expected,
                "{p:?}"
            );
        }
    }

    #[test]
    fn newest_mut_follows_only_the_newest_members() {
        let mut doc = json!({"a": 1, "b": {"c": [1, {"d~e": "x"}]}});
        assert_eq!(newest_mut(&mut doc, "/b/c/1/d~0e"), Some(&mut json!("x")));
        assert_eq!(
            newest_mut(&mut doc, "/b/c/1"),
            Some(&mut json!({"d~e": "x"}))
        );
        // Older members are not newest: found by `lookup_mut` instead.
        assert_eq!(newest_mut(&mut doc, "/a"), None);
        assert_eq!(newest_mut(&mut doc, "/b/c/0"), None);
        assert_eq!(newest_mut(&mut doc, "/b/x"), None);
        assert_eq!(lookup_mut(&mut doc, "/a"), Some(&mut json!(1)));
    }

    #[test]
    fn contains_is_segment_wise() {
        let a = Pointer::parse("/a").unwrap();
        assert!(a.contains(&Pointer::parse("/a/b").unwrap()));
        assert!(a.contains(&a));
        assert!(!a.contains(&Pointer::parse("/ab").unwrap()));
        assert!(Pointer::root().contains(&a));
    }

    #[test]
    fn removes_members_and_items() {
        let mut doc = json!({"a": [1, 2, 3], "b/c": true});
        assert_eq!(
            Pointer::parse("/a/1").unwrap().remove(&mut doc),
            Some(json!(2))
        );
        assert_eq!(
            Pointer::parse("/b~1c").unwrap().remove(&mut doc),
            Some(json!(true))
        );
        assert_eq!(Pointer::parse("/a/9").unwrap().remove(&mut doc), None);
        assert_eq!(Pointer::root().remove(&mut doc), None);
        assert_eq!(doc, json!({"a": [1, 3]}));
    }

    #[test]
    fn indexes_are_written_in_decimal() {
        for n in [0, 7, 10, 99, 100, 12_345, usize::MAX] {
            assert_eq!(Pointer::root().index(n).as_str(), format!("/{n}"));
            assert_eq!(
                Pointer::root().key("a").index(n).as_str(),
                format!("/a/{n}")
            );
        }
    }

    #[test]
    fn paths_write_escaped_pointers() {
        let root = Path::root();
        let signals = root.key("signals");
        let item = signals.index(2);
        assert_eq!(item.key("a/b~c").to_pointer(), "/signals/2/a~1b~0c");
        assert_eq!(item.to_pointer(), "/signals/2");
        assert_eq!(root.to_pointer(), "");
    }

    #[test]
    fn displays_the_root_by_name() {
        assert_eq!(Pointer::root().to_string(), "(root)");
        assert_eq!(Path::root().key("x").to_string(), "/x");
    }
}
