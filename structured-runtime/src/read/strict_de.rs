//! A deserializer adapter that makes serde exactly as strict as the derived schema, in one pass.
//!
//! `serde_json::from_str` alone is more lenient than a strict schema: it ignores unknown keys,
//! lets `Option` and `#[serde(default)]` fields be absent, reads a struct from an array and a
//! unit variant from `{"Variant": null}`. It is also stricter in one place: it refuses `1.0` for
//! an integer, which JSON Schema calls an integer. This adapter closes each gap while forwarding
//! every token, so valid input costs no more than a counter per property:
//!
//! - a struct is read from an object only; a key it does not declare is refused (serde reads the
//!   value of such a key through `deserialize_ignored_any`, which this adapter refuses), and every
//!   field must be present (serde refuses duplicates, so counting the keys it knows is enough);
//! - an enum is read from a string only;
//! - an integer field takes a float with no fractional part.
//!
//! When a value is refused, the path of the refused value is recorded on the way out (nothing is
//! recorded on success).

use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::fmt;

use crate::read::fingerprint::fingerprint;
use crate::read::number::{long_numbers, may_hold_long};
use crate::schema::Pointer;
use serde::de::{
    self, DeserializeOwned, DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, SeqAccess,
    Unexpected, Visitor,
};

/// A refusal from the strict pass: the deserializer's message and the pointer of the value.
#[derive(Debug)]
pub(crate) struct StrictDeError {
    pub path: Pointer,
    pub error: serde_json::Error,
}

impl fmt::Display for StrictDeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.path.is_root() {
            true => write!(f, "{}", self.error),
            false => write!(f, "at {}: {}", self.path, self.error),
        }
    }
}

/// A `Value` from JSON a provider sent (a body, an event, a batch's line, a tool call's input),
/// read by [`value_from_str`]: a key given twice is refused, and every key is a key.
/// (`serde_json`'s own `Value` reading, with the `raw_value` feature this workspace turns on,
/// reads an object whose first key is `$serde_json::private::RawValue` as the JSON its string
/// holds: a value other than the one written.)
pub(crate) fn json_value(json: &str) -> Result<serde_json::Value, StrictDeError> {
    value_from_str(json).map(|(value, _)| value)
}

/// Deserializes `T` from `json` as strictly as its schema.
#[cfg(test)]
pub(crate) fn from_str<T: DeserializeOwned>(json: &str) -> Result<T, StrictDeError> {
    from_str_noting_floats(json).map(|(value, _)| value)
}

/// [`from_str`], and whether a float was read that only the text can say is the number as
/// written (then [`crate::read::repair::inexact_number`] decides).
#[cfg(test)]
pub(crate) fn from_str_noting_floats<T: DeserializeOwned>(
    json: &str,
) -> Result<(T, Noted), StrictDeError> {
    // Keys are kept for error paths only when there is an error: the first pass does not keep
    // them, and a refused input is read again, keeping them, to say where.
    read_strictly::<T>(json, false)
        .map_err(|first| located(first, || read_strictly::<T>(json, true)))
}

/// The refusal to report for `first`, a refusal of the strict pass that kept no key: itself
/// when the text is not JSON (where it broke is in the error), else that of a second reading
/// keeping the keys (`read_located`), or `first` when that reading accepts the text.
pub(crate) fn located<T>(
    first: StrictDeError,
    read_located: impl FnOnce() -> Result<T, StrictDeError>,
) -> StrictDeError {
    if first.error.is_syntax() || first.error.is_eof() {
        return first;
    }
    read_located().err().unwrap_or(first)
}

/// `T` from `json` by the strict pass, for a caller that needs only whether it reads: a refusal
/// is not read again to say where.
pub(crate) fn try_from_str_noting_floats<T: DeserializeOwned>(json: &str) -> Option<(T, Noted)> {
    read_strictly::<T>(json, false).ok()
}

/// `T` from `json` by the strict pass, and what it noticed; where a refusal happened (the keys
/// kept for its path) only when `locate`.
pub(crate) fn read_strictly<T: DeserializeOwned>(
    json: &str,
    locate: bool,
) -> Result<(T, Noted), StrictDeError> {
    let track = Track {
        unlocated: !locate,
        text: Some(json),
        ..Track::default()
    };
    let mut de = serde_json::Deserializer::from_str(json);
    // (Matched out, without closures: this is compiled once per type read.)
    let error = match T::deserialize(Strict {
        de: &mut de,
        track: &track,
    }) {
        Ok(value) => match de.end() {
            Ok(()) => return Ok((value, track.noted())),
            Err(error) => error,
        },
        Err(error) => error,
    };
    Err(track.refusal(error))
}

/// What the strict pass noticed on input it accepted.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Noted {
    /// [`Noted::long_float`], one past it: a word, where an `Option<usize>` is two (the value
    /// read is returned beside it, moved by a few stores rather than a copy).
    long_float_after: Option<std::num::NonZeroUsize>,
    /// Part of the value was read where this adapter cannot follow (serde buffers it: a tagged
    /// or untagged enum, a flattened field, a type that reads any JSON value), so only a check
    /// of the value against the schema says it is exactly as declared.
    pub loose: bool,
}

impl Noted {
    /// Where the first number lies, in bytes, that was read as a float only the text can say
    /// is the number as written ([`Track::saw_float`]) and that is written long (more digits or
    /// a larger exponent than any float keeps: `read::number::long_numbers`); none, when every
    /// such float is written short (`0.0`), which any reader reads as written. (0 when the
    /// reading has no text to look in: from the start.)
    pub fn long_float(&self) -> Option<usize> {
        self.long_float_after.map(|after| after.get() - 1)
    }
}

/// Deserializes `T` from a value already parsed, exactly as strictly as [`from_str`] reads its
/// text: nothing is printed and parsed again.
pub(crate) fn from_value<T: DeserializeOwned>(
    value: &serde_json::Value,
) -> Result<(T, Noted), StrictDeError> {
    let track = Track::default();
    match T::deserialize(Strict {
        de: value,
        track: &track,
    }) {
        Ok(value) => Ok((value, track.noted())),
        Err(error) => Err(track.refusal(error)),
    }
}

/// A `serde_json::Value` from `json`, refusing what `serde_json` would resolve without a word:
/// a key given twice in one object (serde_json keeps the last). The path is the duplicated
/// key's. Numbers are `serde_json`'s; beside the value, where the first long number lies among
/// the floats only the text can vouch for ([`Noted::long_float`]).
pub(crate) fn value_from_str(
    json: &str,
) -> Result<(serde_json::Value, Option<usize>), StrictDeError> {
    let track = Track {
        text: Some(json),
        ..Track::default()
    };
    let mut de = serde_json::Deserializer::from_str(json);
    let result = UniqueKeys { track: &track }
        .deserialize(&mut de)
        .and_then(|v| {
            de.end()?;
            Ok(v)
        });
    match result {
        Ok(value) => Ok((value, track.noted().long_float())),
        Err(error) => Err(track.refusal(error)),
    }
}

/// The compact JSON text of `json` as `serde_json` writes the `Value` it reads, when `json` is
/// one JSON value with no key given twice in an object; written as it is read, so no `Value` is
/// built (a repeated key, or anything `serde_json` refuses, is `None`). Memory: the text written
/// and the keys of the objects open at once.
pub(crate) fn json_from_str(json: &str) -> Option<String> {
    // Room for a short text at once; a long one grows as it is written. (Room for the whole of
    // a long text, given back when it is not JSON as written, moved the allocator's threshold
    // for mapping memory of its own past the text's size: what the repair after it built then
    // grew by copies into memory it kept, `structured repair` of 10 MB needing repair peaking
    // at 33 MB where 24 MB is enough.)
    let out = RefCell::new(Text::Written(Vec::with_capacity(
        json.len().min(WRITTEN_ROOM),
    )));
    let mut de = serde_json::Deserializer::from_str(json);
    Transcode { out: &out }.deserialize(&mut de).ok()?;
    de.end().ok()?;
    match out.into_inner() {
        // serde_json writes UTF-8 only.
        Text::Written(out) => String::from_utf8(out).ok(),
        Text::Checked | Text::Compared { .. } => None,
    }
}

/// The most room [`json_from_str`] takes before it writes (bytes).
const WRITTEN_ROOM: usize = 64 * 1024;

/// Whether `json` is already [`json_from_str`]'s text: one JSON value, no key given twice,
/// written as `serde_json` writes it. Compared as it is read: nothing is written.
pub(crate) fn is_written_json(json: &str) -> bool {
    let out = RefCell::new(Text::Compared {
        text: json.as_bytes(),
        at: 0,
        differs: None,
    });
    let mut de = serde_json::Deserializer::from_str(json);
    let read = Transcode { out: &out }.deserialize(&mut de).is_ok() && de.end().is_ok();
    matches!(out.into_inner(), Text::Compared { differs: None, at, .. } if read && at == json.len())
}

/// Whether `json` is one JSON value with no key given twice in an object (what
/// [`json_from_str`] takes), however it is spaced. Nothing is written.
pub(crate) fn is_strict_json(json: &str) -> bool {
    let out = RefCell::new(Text::Checked);
    let mut de = serde_json::Deserializer::from_str(json);
    Transcode { out: &out }.deserialize(&mut de).is_ok() && de.end().is_ok()
}

/// Appends [`json_from_str`]'s text of `json` to `out`; `false` (and `out` as it was) when
/// `json` is not one JSON value with each key once.
pub(crate) fn write_compact(json: &str, out: &mut Vec<u8>) -> bool {
    let start = out.len();
    let text = RefCell::new(Text::Written(std::mem::take(out)));
    let mut de = serde_json::Deserializer::from_str(json);
    let read = Transcode { out: &text }.deserialize(&mut de).is_ok() && de.end().is_ok();
    if let Text::Written(written) = text.into_inner() {
        *out = written;
    }
    if !read {
        out.truncate(start);
    }
    read
}

/// Where [`Transcode`] writes: a text, a comparison with a text as it would be written, or
/// nowhere (the value is only checked).
enum Text<'t> {
    Written(Vec<u8>),
    Checked,
    Compared {
        text: &'t [u8],
        /// How far the writing has gone.
        at: usize,
        /// Where it first wrote other than `text` (a comma taken back does not count).
        differs: Option<usize>,
    },
}

impl Text<'_> {
    fn len(&self) -> usize {
        match self {
            Text::Written(out) => out.len(),
            Text::Checked => 0,
            Text::Compared { at, .. } => *at,
        }
    }

    fn truncate(&mut self, len: usize) {
        match self {
            Text::Written(out) => out.truncate(len),
            Text::Checked => {}
            Text::Compared { at, differs, .. } => {
                *at = len.min(*at);
                if differs.is_some_and(|d| d >= *at) {
                    *differs = None;
                }
            }
        }
    }
}

impl std::io::Write for Text<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Text::Written(out) => out.extend_from_slice(buf),
            Text::Checked => {}
            Text::Compared { text, at, differs } => {
                let end = at.saturating_add(buf.len());
                if differs.is_none() && text.get(*at..end) != Some(buf) {
                    *differs = Some(*at);
                }
                *at = end;
            }
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Writes each value read as `serde_json` writes it, refusing a key given twice in an object.
#[derive(Clone, Copy)]
struct Transcode<'o, 't> {
    out: &'o RefCell<Text<'t>>,
}

impl Transcode<'_, '_> {
    fn push(&self, text: &[u8]) {
        let _ = std::io::Write::write(&mut *self.out.borrow_mut(), text);
    }
    /// Writes `value` with serde_json's own writer, straight into the text.
    fn write<T: serde::Serialize + ?Sized>(&self, value: &T) {
        let mut out = self.out.borrow_mut();
        if serde_json::to_writer(&mut *out, value).is_err() {
            let _ = std::io::Write::write(&mut *out, b"null");
        }
    }
}

impl<'de> DeserializeSeed<'de> for Transcode<'_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
        // Compared with a text already written otherwise: nothing more to learn.
        if matches!(
            &*self.out.borrow(),
            Text::Compared {
                differs: Some(_),
                ..
            }
        ) {
            return Err(de::Error::custom("written otherwise"));
        }
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Transcode<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E: de::Error>(self, b: bool) -> Result<(), E> {
        self.write(&b);
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, n: i64) -> Result<(), E> {
        self.write(&n);
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, n: u64) -> Result<(), E> {
        self.write(&n);
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, n: f64) -> Result<(), E> {
        // As a `Value` holds it: a float no JSON number is becomes null.
        self.write(&serde_json::Number::from_f64(n));
        Ok(())
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<(), E> {
        self.write(s);
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.push(b"null");
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        self.push(b"[");
        let mut first = true;
        loop {
            // The comma goes before an item, so it is written only once the item is there.
            let at = self.out.borrow().len();
            if !first {
                self.push(b",");
            }
            if seq.next_element_seed(self)?.is_none() {
                self.out.borrow_mut().truncate(at);
                break;
            }
            first = false;
        }
        self.push(b"]");
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        self.push(b"{");
        let mut keys = SeenKeys::default();
        while let Some(key) = map.next_key_seed(KeyText)? {
            if !keys.is_empty() {
                self.push(b",");
            }
            self.write(key.as_ref());
            self.push(b":");
            map.next_value_seed(self)?;
            if !keys.insert(key) {
                return Err(de::Error::custom("a key is given twice"));
            }
        }
        if !keys.distinct() {
            return Err(de::Error::custom("a key is given twice"));
        }
        self.push(b"}");
        Ok(())
    }
}

/// An object's key, borrowed from the text unless it had escapes.
struct KeyText;

impl<'de> DeserializeSeed<'de> for KeyText {
    type Value = Cow<'de, str>;
    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Self::Value, D::Error> {
        de.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeyText {
    type Value = Cow<'de, str>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a key")
    }
    fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(s))
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(s.to_owned()))
    }
    fn visit_string<E: de::Error>(self, s: String) -> Result<Self::Value, E> {
        Ok(Cow::Owned(s))
    }
}

/// The keys an object has given so far: a short list searched in place (most objects are
/// small), past [`SeenKeys::FEW`] each key's 64-bit fingerprint in a list, sorted once the
/// object ends to find a repeat ([`SeenKeys::distinct`]), so a wide object costs 8 bytes per key
/// (a hash set of them costs twice that and more while it grows) and `n log n` time. Two keys
/// with one fingerprint are taken for a repeat, which only makes this reader give up on the text
/// (the callers then read it another way, which tells a repeat exactly): never a wrong value.
enum SeenKeys<'de> {
    Few(Vec<Cow<'de, str>>),
    Many(Vec<u64>),
}

impl Default for SeenKeys<'_> {
    fn default() -> Self {
        SeenKeys::Few(Vec::new())
    }
}

impl<'de> SeenKeys<'de> {
    const FEW: usize = 16;

    fn is_empty(&self) -> bool {
        match self {
            SeenKeys::Few(keys) => keys.is_empty(),
            SeenKeys::Many(keys) => keys.is_empty(),
        }
    }

    /// Notes `key`; `false` when it is one of the few given before (past the few, a repeat is
    /// found by [`SeenKeys::distinct`] when the object ends).
    fn insert(&mut self, key: Cow<'de, str>) -> bool {
        match self {
            SeenKeys::Few(keys) if keys.contains(&key) => false,
            SeenKeys::Few(keys) if keys.len() < Self::FEW => {
                keys.push(key);
                true
            }
            SeenKeys::Few(keys) => {
                let mut prints: Vec<u64> = keys.iter().map(|k| fingerprint(k)).collect();
                prints.push(fingerprint(&key));
                *self = SeenKeys::Many(prints);
                true
            }
            SeenKeys::Many(prints) => {
                prints.push(fingerprint(&key));
                true
            }
        }
    }

    /// Whether no key (past the few: no fingerprint) was given twice.
    fn distinct(&mut self) -> bool {
        match self {
            SeenKeys::Few(_) => true,
            SeenKeys::Many(prints) => {
                prints.sort_unstable();
                prints.windows(2).all(|pair| pair.first() != pair.last())
            }
        }
    }
}

/// Builds a `Value` as `serde_json` does, with every object's keys checked for repeats.
#[derive(Clone, Copy)]
struct UniqueKeys<'t> {
    track: &'t Track<'t>,
}

impl<'de> DeserializeSeed<'de> for UniqueKeys<'_> {
    type Value = serde_json::Value;
    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Self::Value, D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for UniqueKeys<'_> {
    type Value = serde_json::Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Self::Value, E> {
        Ok(b.into())
    }
    fn visit_i64<E: de::Error>(self, n: i64) -> Result<Self::Value, E> {
        Ok(n.into())
    }
    fn visit_u64<E: de::Error>(self, n: u64) -> Result<Self::Value, E> {
        Ok(n.into())
    }
    fn visit_f64<E: de::Error>(self, n: f64) -> Result<Self::Value, E> {
        self.track.saw_float(n);
        Ok(serde_json::Number::from_f64(n).map_or(serde_json::Value::Null, Into::into))
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
        Ok(s.into())
    }
    fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Self::Value, E> {
        self.track.string_at(s);
        Ok(s.into())
    }
    fn visit_string<E: de::Error>(self, s: String) -> Result<Self::Value, E> {
        Ok(s.into())
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(serde_json::Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(self).inspect_err(|_| {
            self.track.push(Seg::Index(items.len()));
        })? {
            items.push(item);
        }
        Ok(serde_json::Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(self).inspect_err(|_| {
                self.track.push(Seg::Key(key.clone()));
            })?;
            if out.contains_key(&key) {
                let message = format!("the key {key:?} is given twice");
                self.track.push(Seg::Key(key));
                return Err(de::Error::custom(message));
            }
            out.insert(key, value);
        }
        Ok(serde_json::Value::Object(out))
    }
}

enum Seg {
    Key(String),
    Index(usize),
}

/// Path segments pushed innermost first while an error travels up, and where the numbers lie
/// that may not be read as written.
#[derive(Default)]
struct Track<'j> {
    /// Keep no struct key read: a first pass that, on an error, is read again keeping them to
    /// say where it happened.
    unlocated: bool,
    path: RefCell<Vec<Seg>>,
    /// The text read, when the reading has one: a string value borrowed from it says where the
    /// reading is ([`Track::string_at`]).
    text: Option<&'j str>,
    /// The address where the last string value read ends (0 before one is): one borrowed from
    /// the text ends there, before its closing quote.
    string_end: Cell<usize>,
    /// The address where the part of the text starts that holds the floats only the text can
    /// vouch for read since the last string value: where that string ends (0: no such float
    /// since; 1: no string read before it, from the text's start). The string value read next
    /// ends the part.
    open_floats: Cell<usize>,
    /// [`Noted::long_float`], in the parts ended so far.
    long_float: Cell<Option<usize>>,
    /// [`Noted::loose`].
    loose: Cell<bool>,
}

impl Track<'_> {
    fn noted(&self) -> Noted {
        if self.open_floats.get() != 0 {
            self.close_floats(usize::MAX);
        }
        Noted {
            long_float_after: self
                .long_float
                .get()
                .and_then(|at| std::num::NonZeroUsize::new(at.wrapping_add(1))),
            loose: self.loose.get(),
        }
    }

    /// A float that only the text can vouch for: zero (an underflow reads as zero) or beyond
    /// the integers a float holds exactly (a long integer reads rounded). Any other float is
    /// the nearest one to the decimal written, as every JSON reader reads it. The part of the
    /// text that holds it starts at the end of the last string value read (values are read in
    /// the order they are written) and ends where the next one starts.
    #[inline(always)]
    fn saw_float(&self, x: f64) {
        if x == 0.0 || x.abs() >= 9_007_199_254_740_992.0 {
            self.open_float_part();
        }
    }

    /// [`Track::saw_float`] of a float only the text can vouch for.
    #[cold]
    #[inline(never)]
    fn open_float_part(&self) {
        if self.open_floats.get() == 0 {
            self.open_floats.set(self.string_end.get().max(1));
        }
    }

    /// A string value or a struct's key read ([`KeySeed`]): where it ends is kept, and it ends
    /// the part of the text holding the floats read since the last one. Addresses, made
    /// offsets only when such a float was read: a few
    /// instructions a string. A string not borrowed from the text (written with an escape, or
    /// read from a value) is not seen here, and one from elsewhere widens the part to the
    /// text's start or end ([`Track::close_floats`]).
    #[inline(always)]
    fn string_at(&self, string: &str) {
        if self.open_floats.get() != 0 {
            self.close_floats(string.as_ptr() as usize);
        }
        self.string_end.set(string.as_ptr() as usize + string.len());
    }

    /// The floats read since [`Track::open_floats`] lie before `end`, the address of a string's
    /// first byte (`usize::MAX`: the text's end): that part of the text is looked at for a long
    /// number, once (the parts are apart and in order: no byte is looked at twice). A part
    /// starts after a string's closing quote and ends before a string's opening quote: outside
    /// any string.
    #[cold]
    #[inline(never)]
    fn close_floats(&self, end: usize) {
        let start = self.open_floats.replace(0);
        if self.long_float.get().is_some() {
            return;
        }
        let found = match self.text {
            Some(text) => {
                // An address in the text as an offset in it, moved past the string's quote. Any
                // other address (1, a string read from elsewhere) widens the part to the text's
                // start or end.
                let offset = |address: usize, quote: isize| {
                    let at = address.wrapping_sub(text.as_ptr() as usize);
                    (at <= text.len()).then(|| at.saturating_add_signed(quote))
                };
                let from = offset(start, 1).unwrap_or(0);
                let to = offset(end, -1).unwrap_or(text.len());
                let part = text.get(from..to.max(from)).unwrap_or_default();
                // (Most parts hold no long number, which a look at each byte says first.)
                may_hold_long(part.as_bytes())
                    .then(|| long_numbers(part).next())
                    .flatten()
                    .map(|(at, _)| from + at)
            }
            // No text to look in: from its start.
            None => Some(0),
        };
        self.long_float.set(found);
    }

    fn push(&self, seg: Seg) {
        self.path.borrow_mut().push(seg);
    }

    /// `error`, at the path the reading recorded on its way out.
    #[inline(never)]
    fn refusal(&self, error: serde_json::Error) -> StrictDeError {
        StrictDeError {
            path: self.pointer(),
            error,
        }
    }

    fn pointer(&self) -> Pointer {
        let mut out = Pointer::root();
        for seg in self.path.borrow().iter().rev() {
            match seg {
                Seg::Key(k) => out.push(k),
                Seg::Index(i) => out.push_index(*i),
            }
        }
        out
    }
}

/// Forwards deserializer methods, wrapping the visitor with the adapter's `$split` method.
macro_rules! forward_de {
    ($split:ident; $($method:ident($($arg:ident: $ty:ty),*);)*) => {
        $(
            #[inline(always)]
            fn $method<V: Visitor<'de>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value, Self::Error> {
                let (de, visitor) = self.$split(visitor);
                de.$method($($arg,)* visitor)
            }
        )*
    };
}

/// Forwards visitor methods that carry a scalar.
macro_rules! forward_visit {
    ($($method:ident($ty:ty);)*) => {
        $(
            #[inline(always)]
            fn $method<E: de::Error>(self, x: $ty) -> Result<Self::Value, E> {
                self.v.$method(x)
            }
        )*
    };
}

/// A deserializer read strictly: what it reads nested is read through this adapter too.
///
/// Its forwarders, the scalar visits, and the steps to each key, value and item
/// ([`StrictSeed`], [`StructMap`], [`Seq`]) are `#[inline(always)]`: they are on the way to every
/// value, and left to the compiler some stayed calls (`HeartbeatDecision::from_json` 11,014
/// instructions, 10,853 inlined; the visits of a float, an option, a list and an object inlined
/// as well cost more again, 10,982).
struct Strict<'t, D> {
    de: D,
    track: &'t Track<'t>,
}

impl<'t, D> Strict<'t, D> {
    fn split<V>(self, v: V) -> (D, Wrap<'t, V>) {
        (
            self.de,
            Wrap {
                v,
                track: self.track,
            },
        )
    }

    fn split_int<V>(self, v: V) -> (D, IntWrap<V>) {
        (self.de, IntWrap { v })
    }
}

impl<'de, 't, D: Deserializer<'de>> Deserializer<'de> for Strict<'t, D> {
    type Error = D::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        // serde reads this way what it buffers before choosing a shape (tagged and untagged
        // enums, flattened fields): what is inside is not seen by this adapter.
        self.track.loose.set(true);
        let (de, visitor) = self.split(visitor);
        de.deserialize_any(visitor)
    }

    forward_de! { split;
        deserialize_bool(); deserialize_f32(); deserialize_f64();
        deserialize_char(); deserialize_str(); deserialize_string(); deserialize_bytes();
        deserialize_byte_buf(); deserialize_option(); deserialize_unit();
        deserialize_unit_struct(name: &'static str);
        deserialize_newtype_struct(name: &'static str);
        deserialize_seq(); deserialize_tuple(len: usize);
        deserialize_tuple_struct(name: &'static str, len: usize);
        deserialize_map(); deserialize_identifier();
    }

    forward_de! { split_int;
        deserialize_i8(); deserialize_i16(); deserialize_i32(); deserialize_i64();
        deserialize_i128(); deserialize_u8(); deserialize_u16(); deserialize_u32();
        deserialize_u64(); deserialize_u128();
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        let track = self.track;
        self.de.deserialize_struct(
            name,
            fields,
            StructVisitor {
                v: visitor,
                fields,
                track,
            },
        )
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        // A unit variant is read from its name; a variant with data from `{"name": data}`,
        // which this adapter does not follow inside (so the value is checked after).
        self.de.deserialize_any(ExternalEnum {
            v: visitor,
            track: self.track,
        })
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(
        self,
        _visitor: V,
    ) -> Result<V::Value, Self::Error> {
        // serde ignores only what the type does not declare: a strict schema allows none of it.
        Err(de::Error::custom(
            "unknown field: the type declares no such property",
        ))
    }

    fn is_human_readable(&self) -> bool {
        self.de.is_human_readable()
    }
}

struct StrictSeed<'t, S> {
    seed: S,
    track: &'t Track<'t>,
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for StrictSeed<'_, S> {
    type Value = S::Value;
    #[inline(always)]
    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<S::Value, D::Error> {
        self.seed.deserialize(Strict {
            de,
            track: self.track,
        })
    }
}

/// Wraps a visitor so everything nested is read strictly too.
struct Wrap<'t, V> {
    v: V,
    track: &'t Track<'t>,
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Wrap<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        self.v.expecting(f)
    }

    forward_visit! {
        visit_bool(bool); visit_i64(i64); visit_u64(u64); visit_i128(i128); visit_u128(u128);
        visit_char(char); visit_str(&str);
        visit_string(String); visit_bytes(&[u8]); visit_borrowed_bytes(&'de [u8]);
        visit_byte_buf(Vec<u8>);
    }

    #[inline(always)]
    fn visit_borrowed_str<E: de::Error>(self, x: &'de str) -> Result<Self::Value, E> {
        self.track.string_at(x);
        self.v.visit_borrowed_str(x)
    }

    fn visit_f64<E: de::Error>(self, x: f64) -> Result<Self::Value, E> {
        self.track.saw_float(x);
        self.v.visit_f64(x)
    }

    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        self.v.visit_none()
    }

    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        self.v.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, de: D) -> Result<V::Value, D::Error> {
        self.v.visit_some(Strict {
            de,
            track: self.track,
        })
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, de: D) -> Result<V::Value, D::Error> {
        self.v.visit_newtype_struct(Strict {
            de,
            track: self.track,
        })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        self.v.visit_seq(Seq {
            seq,
            track: self.track,
            index: 0,
        })
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.v.visit_map(PlainMap {
            map,
            track: self.track,
        })
    }

    fn visit_enum<A: de::EnumAccess<'de>>(self, data: A) -> Result<V::Value, A::Error> {
        self.v.visit_enum(data)
    }
}

/// An integer visitor that also takes floats with no fractional part, as JSON Schema does.
struct IntWrap<V> {
    v: V,
}

impl<'de, V: Visitor<'de>> Visitor<'de> for IntWrap<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        self.v.expecting(f)
    }

    forward_visit! { visit_i64(i64); visit_u64(u64); visit_i128(i128); visit_u128(u128); }

    fn visit_f64<E: de::Error>(self, x: f64) -> Result<V::Value, E> {
        match whole(x) {
            Some(Whole::Unsigned(u)) => self.v.visit_u64(u),
            Some(Whole::Signed(i)) => self.v.visit_i64(i),
            None => self.v.visit_f64(x),
        }
    }
}

/// A float with no fractional part, as the 64-bit integer it equals.
pub(crate) enum Whole {
    Unsigned(u64),
    Signed(i64),
}

/// `x` as the integer it equals, when it has no fractional part and fits 64 bits.
pub(crate) fn whole(x: f64) -> Option<Whole> {
    // 2^64 and -2^63 are exact in f64; inside them an integral float converts without loss.
    const TWO_64: f64 = 18_446_744_073_709_551_616.0;
    const MINUS_TWO_63: f64 = -9_223_372_036_854_775_808.0;
    if x.fract() != 0.0 {
        None
    } else if (0.0..TWO_64).contains(&x) {
        Some(Whole::Unsigned(x as u64))
    } else if (MINUS_TWO_63..0.0).contains(&x) {
        Some(Whole::Signed(x as i64))
    } else {
        None
    }
}

/// An externally tagged enum: a unit variant read from its name, another from a one-key object.
struct ExternalEnum<'t, V> {
    v: V,
    track: &'t Track<'t>,
}

impl<'de, V: Visitor<'de>> Visitor<'de> for ExternalEnum<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        self.v.expecting(f)
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<V::Value, E> {
        self.v.visit_enum(s.into_deserializer())
    }

    fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<V::Value, E> {
        self.v
            .visit_enum(de::value::BorrowedStrDeserializer::new(s))
    }

    fn visit_string<E: de::Error>(self, s: String) -> Result<V::Value, E> {
        self.v.visit_enum(s.into_deserializer())
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.track.loose.set(true);
        self.v
            .visit_enum(de::value::MapAccessDeserializer::new(map))
    }
}

struct Seq<'t, A> {
    seq: A,
    track: &'t Track<'t>,
    index: usize,
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for Seq<'_, A> {
    type Error = A::Error;

    #[inline(always)]
    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, A::Error> {
        let track = self.track;
        match self.seq.next_element_seed(StrictSeed { seed, track }) {
            Ok(item) => {
                self.index += 1;
                Ok(item)
            }
            Err(e) => {
                track.push(Seg::Index(self.index));
                Err(e)
            }
        }
    }

    fn size_hint(&self) -> Option<usize> {
        self.seq.size_hint()
    }
}

/// A map that is not a struct: values are read strictly, keys as they are.
struct PlainMap<'t, A> {
    map: A,
    track: &'t Track<'t>,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for PlainMap<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        self.map.next_key_seed(seed)
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, A::Error> {
        self.map.next_value_seed(StrictSeed {
            seed,
            track: self.track,
        })
    }

    fn size_hint(&self) -> Option<usize> {
        self.map.size_hint()
    }
}

struct StructVisitor<'t, V> {
    v: V,
    fields: &'static [&'static str],
    track: &'t Track<'t>,
}

impl<'de, V: Visitor<'de>> Visitor<'de> for StructVisitor<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        self.v.expecting(f)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, _seq: A) -> Result<V::Value, A::Error> {
        Err(de::Error::invalid_type(Unexpected::Seq, &"a JSON object"))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        let track = self.track;
        let mut cursor = Cursor::default();
        let result = self.v.visit_map(StructMap {
            map,
            track,
            cursor: &mut cursor,
        });
        let value = match result {
            Ok(value) => value,
            Err(e) => {
                // Refused by the visitor itself right after a key (a duplicated field): located
                // there, unless a reading below located it already.
                cursor.locate(track);
                return Err(e);
            }
        };
        // serde lets `Option` and defaulted fields be absent; the strict schema requires them
        // all. Unknown keys were refused and duplicates are refused by serde, so when every
        // name is present the count says so. Fewer keys than names is either an absent field or
        // a name list longer than the properties (serde lists aliases, and an adjacently tagged
        // unit variant has no content): the value is then checked against the schema.
        if cursor.keys != self.fields.len() {
            track.loose.set(true);
        }
        Ok(value)
    }
}

/// The key being read, how many keys were read, and whether an error below has been located.
#[derive(Default)]
struct Cursor<'de> {
    /// Kept only while the keys are kept for error paths ([`Track::unlocated`] false).
    key: Option<Cow<'de, str>>,
    keys: usize,
    located: bool,
}

impl Cursor<'_> {
    /// An error met at the key being read: its place is that key, noted once (the first to
    /// locate it is the reading nearest the error). One copy for every type read (the generic
    /// readers above only call it).
    #[cold]
    #[inline(never)]
    fn locate(&mut self, track: &Track<'_>) {
        if self.located {
            return;
        }
        self.located = true;
        if let Some(key) = &self.key {
            track.push(Seg::Key(key.as_ref().to_owned()));
        }
    }
}

struct StructMap<'t, 'c, 'de, A> {
    map: A,
    track: &'t Track<'t>,
    cursor: &'c mut Cursor<'de>,
}

impl<'de, A: MapAccess<'de>> StructMap<'_, '_, 'de, A> {
    /// The next key read as text and kept for an error's path. Not generic over the type read,
    /// so one copy serves every type.
    #[inline(never)]
    fn keep_key(&mut self) -> Result<Option<&Cow<'de, str>>, A::Error> {
        self.cursor.key = None;
        match self.map.next_key_seed(KeyText) {
            Ok(Some(key)) => {
                self.cursor.keys += 1;
                Ok(Some(self.cursor.key.insert(key)))
            }
            Ok(None) => Ok(None),
            Err(e) => {
                self.cursor.locate(self.track);
                Err(e)
            }
        }
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for StructMap<'_, '_, 'de, A> {
    type Error = A::Error;

    /// A first reading keeps no key: the type's own key reader reads it. A reading that keeps
    /// the keys for an error's path reads each as text by one reader for every type
    /// ([`KeyText`]), then gives it to the type's key reader as that text (a struct's key is a
    /// string in JSON; serde's field names are read from it alike): each derived type adds that
    /// last step to the code, not a second copy of the JSON key reader.
    #[inline(always)]
    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        if self.track.unlocated {
            let track = self.track;
            let key = self.map.next_key_seed(KeySeed { seed, track })?;
            self.cursor.keys += usize::from(key.is_some());
            return Ok(key);
        }
        // (Matched out, not `?`: compiled once per type read, and run only to say where a
        // refusal was.)
        match self.keep_key() {
            Ok(Some(key)) => match seed.deserialize(KeyStr {
                key,
                error: std::marker::PhantomData,
            }) {
                Ok(field) => Ok(Some(field)),
                Err(e) => Err(e),
            },
            Ok(None) => Ok(None),
            Err(e) => Err(e),
        }
    }

    #[inline(always)]
    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, A::Error> {
        let track = self.track;
        let value = self.map.next_value_seed(StrictSeed { seed, track });
        if value.is_err() {
            self.cursor.locate(track);
        }
        value
    }

    fn size_hint(&self) -> Option<usize> {
        self.map.size_hint()
    }
}

/// A key already read, given to a type's key reader as the text it is: borrowed from the input
/// unless it had escapes.
struct KeyStr<'k, 'de, E> {
    key: &'k Cow<'de, str>,
    error: std::marker::PhantomData<E>,
}

impl<'de, E: de::Error> Deserializer<'de> for KeyStr<'_, 'de, E> {
    type Error = E;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, E> {
        match self.key {
            Cow::Borrowed(key) => visitor.visit_borrowed_str(key),
            Cow::Owned(key) => visitor.visit_str(key),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

/// A struct's key, read by the type's own key reader, where it lies noted
/// ([`Track::string_at`]): a key ends the part of the text holding the floats read before it
/// as a string value does, so that part is a value's few bytes, not every string written with
/// an escape since the last plain one.
struct KeySeed<'t, K> {
    seed: K,
    track: &'t Track<'t>,
}

impl<'de, K: DeserializeSeed<'de>> DeserializeSeed<'de> for KeySeed<'_, K> {
    type Value = K::Value;
    #[inline(always)]
    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<K::Value, D::Error> {
        self.seed.deserialize(KeyDe {
            de,
            track: self.track,
        })
    }
}

/// [`KeySeed`]'s deserializer: the ways a key is read as a string see it; every other way is
/// the deserializer's own.
struct KeyDe<'t, D> {
    de: D,
    track: &'t Track<'t>,
}

impl<'t, D> KeyDe<'t, D> {
    fn seen<V>(self, v: V) -> (D, KeyWrap<'t, V>) {
        (
            self.de,
            KeyWrap {
                v,
                track: self.track,
            },
        )
    }

    fn plain<V>(self, v: V) -> (D, V) {
        (self.de, v)
    }
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for KeyDe<'_, D> {
    type Error = D::Error;

    forward_de! { seen;
        deserialize_any(); deserialize_identifier(); deserialize_str(); deserialize_string();
    }

    forward_de! { plain;
        deserialize_bool(); deserialize_i8(); deserialize_i16(); deserialize_i32();
        deserialize_i64(); deserialize_i128(); deserialize_u8(); deserialize_u16();
        deserialize_u32(); deserialize_u64(); deserialize_u128(); deserialize_f32();
        deserialize_f64(); deserialize_char(); deserialize_bytes(); deserialize_byte_buf();
        deserialize_option(); deserialize_unit(); deserialize_unit_struct(name: &'static str);
        deserialize_newtype_struct(name: &'static str); deserialize_seq();
        deserialize_tuple(len: usize); deserialize_tuple_struct(name: &'static str, len: usize);
        deserialize_map();
        deserialize_struct(name: &'static str, fields: &'static [&'static str]);
        deserialize_enum(name: &'static str, variants: &'static [&'static str]);
        deserialize_ignored_any();
    }

    fn is_human_readable(&self) -> bool {
        self.de.is_human_readable()
    }
}

/// [`KeyDe`]'s visitor: a key borrowed from the text is noted, then given on.
struct KeyWrap<'t, V> {
    v: V,
    track: &'t Track<'t>,
}

impl<'de, V: Visitor<'de>> Visitor<'de> for KeyWrap<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        self.v.expecting(f)
    }

    forward_visit! {
        visit_bool(bool); visit_i64(i64); visit_u64(u64); visit_i128(i128); visit_u128(u128);
        visit_f64(f64); visit_char(char); visit_str(&str); visit_string(String);
        visit_bytes(&[u8]); visit_borrowed_bytes(&'de [u8]); visit_byte_buf(Vec<u8>);
    }

    #[inline(always)]
    fn visit_borrowed_str<E: de::Error>(self, x: &'de str) -> Result<Self::Value, E> {
        self.track.string_at(x);
        self.v.visit_borrowed_str(x)
    }

    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        self.v.visit_none()
    }

    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        self.v.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, de: D) -> Result<V::Value, D::Error> {
        self.v.visit_some(de)
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, de: D) -> Result<V::Value, D::Error> {
        self.v.visit_newtype_struct(de)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        self.v.visit_seq(seq)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.v.visit_map(map)
    }

    fn visit_enum<A: de::EnumAccess<'de>>(self, data: A) -> Result<V::Value, A::Error> {
        self.v.visit_enum(data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The transcoder writes what serde_json writes for the value, and refuses a repeated key
    /// in a small object, in a wide one (past the short list) and behind an escape.
    #[test]
    fn json_from_str_writes_the_value_and_refuses_repeated_keys() {
        let wide: Vec<String> = (0..40).map(|i| format!("\"k{i}\": {i}.5")).collect();
        let wide = format!("{{{}}}", wide.join(", "));
        for json in [
            r#"{"a": [1, -2, 3.25e3, true, null, "x\"y\u00e9"], "b": {}}"#,
            r#"[{"k": 1}, {"k": 2}]"#,
            wide.as_str(),
        ] {
            let value: serde_json::Value = serde_json::from_str(json).unwrap();
            assert_eq!(json_from_str(json), Some(value.to_string()), "{json}");
            // Not as written (spaces, an exponent), then as written.
            assert!(!is_written_json(json), "{json}");
            assert!(is_written_json(&value.to_string()), "{value}");
        }
        // Written otherwise at its very end, or with text after it.
        for json in [
            r#"[1,2] "#,
            "[1,2]]",
            r#"{"a":1.0e0}"#,
            "[]x",
            r#"{"a":1}{}"#,
        ] {
            assert!(!is_written_json(json), "{json}");
        }
        assert!(is_written_json(r#"[[],{},[1],{"a":[]}]"#));
        // Checked however it is spaced; written compact after what is there.
        assert!(is_strict_json(" { \"a\" : [ 1 , 2 ] } "));
        assert!(!is_strict_json(r#"{"a": 1, "a": 2}"#) && !is_strict_json("[1,]"));
        let mut out = b"x".to_vec();
        assert!(write_compact(" { \"a\" : [ 1 , 2.50 ] } ", &mut out));
        assert_eq!(out, br#"x{"a":[1,2.5]}"#);
        assert!(!write_compact(r#"{"a": 1, "a": 2}"#, &mut out));
        assert_eq!(out, br#"x{"a":[1,2.5]}"#);
        let wide_repeat = wide.replacen("}", ", \"k3\": 0}", 1);
        // Both past the short list: the repeat is found when the object ends.
        let late_repeat = wide.replacen("}", ", \"k30\": 0, \"z\": 1}", 1);
        for repeated in [
            r#"{"a": 1, "a": 2}"#,
            r#"{"a": 1, "\u0061": 2}"#,
            wide_repeat.as_str(),
            late_repeat.as_str(),
            &format!("[{late_repeat}]"),
        ] {
            assert_eq!(json_from_str(repeated), None, "{repeated}");
            assert!(!is_written_json(repeated), "{repeated}");
        }
    }
    use serde::Deserialize;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Inner {
        n: u8,
        tag: Option<String>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "lowercase")]
    enum Kind {
        Low,
        High,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Outer {
        items: Vec<Inner>,
        kind: Kind,
        #[serde(default)]
        count: u32,
    }

    fn err(json: &str) -> (String, String) {
        let e = from_str::<Outer>(json).unwrap_err();
        let value: Option<serde_json::Value> = serde_json::from_str(json).ok();
        if let Some(value) = value {
            // Read from the parsed value, the refusal is the same, at the same place.
            let from_value = from_value::<Outer>(&value).unwrap_err();
            assert_eq!(from_value.path, e.path, "{json}");
        }
        (e.path.as_str().to_owned(), e.error.to_string())
    }

    #[test]
    fn a_value_with_a_repeated_key_is_refused_at_the_key() {
        let ok = r#"{"a": [1, {"b": 2.5}], "c": null}"#;
        assert_eq!(
            value_from_str(ok).unwrap().0,
            serde_json::from_str::<serde_json::Value>(ok).unwrap()
        );
        let e = value_from_str(r#"{"a": [1, {"b": 1, "b": 2}]}"#).unwrap_err();
        assert_eq!(e.path.as_str(), "/a/1/b");
        assert!(e.error.to_string().contains("given twice"), "{}", e.error);
    }

    #[test]
    fn valid_input_reads_like_serde() {
        let v: Outer =
            from_str(r#"{"items":[{"n":1,"tag":null}],"kind":"high","count":2.0}"#).unwrap();
        assert_eq!(v.items, vec![Inner { n: 1, tag: None }]);
        assert_eq!(v.kind, Kind::High);
        assert_eq!(v.count, 2);
        let value = serde_json::json!({"items":[{"n":1,"tag":"t"}],"kind":"low","count":2.0});
        let v: Outer = from_value(&value).unwrap().0;
        assert_eq!(v.items[0].tag.as_deref(), Some("t"));
        assert_eq!((v.kind, v.count), (Kind::Low, 2));
    }

    #[test]
    fn unknown_key_is_refused_at_its_path() {
        let (path, msg) =
            err(r#"{"items":[{"n":1,"tag":null,"extra":true}],"kind":"low","count":0}"#);
        assert_eq!(path, "/items/0/extra");
        assert!(msg.starts_with("unknown field"), "{msg}");
        // A key written with an escape is its field's name, in the reading that keeps the keys
        // for the path as in the first: the refusal is the value's, under its unescaped key.
        let (path, msg) = err(r#"{"it\u0065ms":[{"n":1,"t\u0061g":null,"\u0065xtra":1}]}"#);
        assert_eq!(path, "/items/0/extra");
        assert!(msg.starts_with("unknown field"), "{msg}");
        let (path, _) = err(r#"{"it\u0065ms":[{"n":"one","tag":null}],"kind":"low","count":0}"#);
        assert_eq!(path, "/items/0/n");
    }

    #[test]
    fn absent_option_and_default_fields_are_noted_loose() {
        // The fast pass only counts; a short count sends the value to the schema check, which
        // names every missing field.
        for json in [
            r#"{"items":[{"n":1}],"kind":"low","count":0}"#,
            r#"{"items":[],"kind":"low"}"#,
        ] {
            let (_, noted) = from_str_noting_floats::<Outer>(json).unwrap();
            assert!(noted.loose, "{json}");
        }
    }

    #[test]
    fn struct_from_array_and_enum_from_object_are_refused() {
        let (path, _) = err(r#"{"items":[[1,null]],"kind":"low","count":0}"#);
        assert_eq!(path, "/items/0");
        // A unit variant written as `{"low": null}` is read (serde's enum form for data
        // variants), but noted as loose: the value is then checked against the schema, which
        // says a string.
        let (_, noted) =
            from_str_noting_floats::<Outer>(r#"{"items":[],"kind":{"low":null},"count":0}"#)
                .unwrap();
        assert!(noted.loose);
        let (_, noted) =
            from_str_noting_floats::<Outer>(r#"{"items":[],"kind":"low","count":0}"#).unwrap();
        assert!(!noted.loose);
    }

    #[test]
    fn integers_take_integral_floats_only() {
        let (path, _) = err(r#"{"items":[{"n":1.5,"tag":null}],"kind":"low","count":0}"#);
        assert_eq!(path, "/items/0/n");
        let (path, _) = err(r#"{"items":[{"n":256.0,"tag":null}],"kind":"low","count":0}"#);
        assert_eq!(path, "/items/0/n");
        assert!(
            from_str::<Outer>(r#"{"items":[{"n":-0.0,"tag":null}],"kind":"low","count":1e3}"#)
                .is_ok()
        );
    }

    #[test]
    fn trailing_input_and_depth_are_errors_not_panics() {
        assert!(from_str::<Outer>(r#"{"items":[],"kind":"low","count":0} x"#).is_err());
        let deep = "[".repeat(100_000);
        assert!(from_str::<Vec<serde_json::Value>>(&deep).is_err());
    }

    /// A text for [`Probe`]: floats from a pool (zeros, underflows, long integers, plain and
    /// long fractions), string values plain and escaped, keys plain and escaped.
    fn probe_text() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let number = prop::sample::select(vec![
            "0",
            "0.0",
            "-0.0",
            "0e5",
            "1e-400",
            "-1e-400",
            "0.5",
            "-2.25",
            "1e300",
            "7",
            "123456789012345678901234",
            "9007199254740993.0",
            "0.1234567890123456789",
            "2e-320",
            "4.9e-324",
            "1e-330",
        ]);
        let string =
            prop::sample::select(vec!["\"plain\"", "\"a\\\"b\"", "\"\u{e9}t\u{e9}\"", "\"\""]);
        let key = |name: &'static str, escaped: &'static str| {
            prop::bool::ANY.prop_map(move |e| if e { escaped } else { name })
        };
        (
            (number.clone(), key("a", "\\u0061")),
            prop::collection::vec(number.clone(), 0..4),
            (string.clone(), key("s", "\\u0073")),
            prop::collection::vec((number.clone(), string.clone()), 0..4),
            prop::collection::vec(("[a-z]{1,3}", number), 0..3),
            " {0,2}",
        )
            .prop_map(|((a, ka), b, (s, ks), d, m, gap)| {
                let b = b.join(&format!(",{gap}"));
                let d: Vec<String> = d
                    .iter()
                    .map(|(x, t)| format!(r#"{{"x":{gap}{x}, "t": {t}}}"#))
                    .collect();
                let mut keys = std::collections::BTreeSet::new();
                let m: Vec<String> = m
                    .iter()
                    .filter(|(k, _)| keys.insert(k.clone()))
                    .map(|(k, x)| format!(r#""{k}": {x}"#))
                    .collect();
                format!(
                    r#"{{"{ka}": {a},{gap}"b": [{b}], "{ks}": {s}, "d": [{}], "m": {{{}}}}}"#,
                    d.join(", "),
                    m.join(", ")
                )
            })
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Probe {
        a: f64,
        b: Vec<f64>,
        s: String,
        d: Vec<ProbeItem>,
        m: std::collections::BTreeMap<String, f64>,
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct ProbeItem {
        x: f64,
        t: String,
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 2000,
            ..proptest::prelude::ProptestConfig::default()
        })]

        /// The part of the text looked at again for an inexact number finds what a look at the
        /// whole text finds whenever a float only the text can vouch for was read (zero, or
        /// beyond 2^53: the old rule, from serde_json's own reading of the text), for a derived
        /// type and for a `Value`.
        #[test]
        fn the_parts_looked_at_again_find_what_the_whole_text_holds(text in probe_text()) {
            let value: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
            fn suspicious(v: &serde_json::Value) -> bool {
                match v {
                    serde_json::Value::Number(n) => n.is_f64() && n.as_f64().is_some_and(|x| {
                        x == 0.0 || x.abs() >= 9_007_199_254_740_992.0
                    }),
                    serde_json::Value::Array(items) => items.iter().any(suspicious),
                    serde_json::Value::Object(map) => map.values().any(suspicious),
                    _ => false,
                }
            }
            let whole = |long_float: Option<usize>| {
                long_float.and_then(|from| crate::read::repair::inexact_number_from(&text, from))
            };
            let expected = suspicious(&value)
                .then(|| crate::read::repair::inexact_number(&text))
                .flatten();
            let (_, noted) = read_strictly::<Probe>(&text, false).expect("reads");
            proptest::prop_assert_eq!(whole(noted.long_float()), expected.clone(), "{}", text);
            let (read, long_float) = value_from_str(&text).expect("reads");
            proptest::prop_assert_eq!(read, value);
            proptest::prop_assert_eq!(whole(long_float), expected, "{}", text);
        }
    }
}
