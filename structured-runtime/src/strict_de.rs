//! A deserializer adapter that makes serde exactly as strict as the derived schema, in one pass.
//!
//! `serde_json::from_str` alone is more lenient than a strict schema: it ignores unknown keys,
//! lets `Option` and `#[serde(default)]` fields be absent, reads a struct from an array and a
//! unit variant from `{"Variant": null}`. It is also stricter in one place: it refuses `1.0` for
//! an integer, which JSON Schema calls an integer. This adapter closes each gap while forwarding
//! every token, so valid input costs only a key lookup per property:
//!
//! - a struct is read from an object only; each key must be one of its fields (the field list serde
//!   derives, which is the schema's `properties`) and every field must be present;
//! - an enum is read from a string only;
//! - an integer field takes a float with no fractional part.
//!
//! When a value is refused, the path of the refused value is recorded on the way out (nothing is
//! recorded on success).

use std::cell::RefCell;
use std::fmt;

use serde::de::{
    self, DeserializeOwned, DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, SeqAccess,
    Unexpected, Visitor,
};

/// A refusal from the strict pass: the deserializer's message and the JSON pointer of the value.
#[derive(Debug)]
pub(crate) struct StrictDeError {
    pub path: String,
    pub error: serde_json::Error,
}

/// Deserializes `T` from `json` as strictly as its schema.
pub(crate) fn from_str<T: DeserializeOwned>(json: &str) -> Result<T, StrictDeError> {
    let track = Track::default();
    let mut de = serde_json::Deserializer::from_str(json);
    let result = T::deserialize(Strict {
        de: &mut de,
        track: &track,
    })
    .and_then(|v| {
        de.end()?;
        Ok(v)
    });
    result.map_err(|error| StrictDeError {
        path: track.pointer(),
        error,
    })
}

enum Seg {
    Field(&'static str),
    Key(String),
    Index(usize),
}

/// Path segments pushed innermost first while an error travels up.
#[derive(Default)]
struct Track(RefCell<Vec<Seg>>);

impl Track {
    fn push(&self, seg: Seg) {
        self.0.borrow_mut().push(seg);
    }

    fn pointer(&self) -> String {
        let mut path = crate::validate::Path::new();
        for seg in self.0.borrow().iter().rev() {
            match seg {
                Seg::Field(f) => path.push_field(f),
                Seg::Key(k) => path.push_key(k),
                Seg::Index(i) => path.push_index(*i),
            }
        }
        path.to_pointer()
    }
}

/// Forwards deserializer methods, wrapping the visitor with the adapter's `$split` method.
macro_rules! forward_de {
    ($split:ident; $($method:ident($($arg:ident: $ty:ty),*);)*) => {
        $(
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
            fn $method<E: de::Error>(self, x: $ty) -> Result<Self::Value, E> {
                self.v.$method(x)
            }
        )*
    };
}

struct Strict<'t, D> {
    de: D,
    track: &'t Track,
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

    forward_de! { split;
        deserialize_any(); deserialize_bool(); deserialize_f32(); deserialize_f64();
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
        // The schema of a derived enum is a string enum: read the variant from a string only.
        self.de.deserialize_str(UnitEnum { v: visitor })
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.de.deserialize_ignored_any(visitor)
    }

    fn is_human_readable(&self) -> bool {
        self.de.is_human_readable()
    }
}

struct StrictSeed<'t, S> {
    seed: S,
    track: &'t Track,
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for StrictSeed<'_, S> {
    type Value = S::Value;
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
    track: &'t Track,
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Wrap<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        self.v.expecting(f)
    }

    forward_visit! {
        visit_bool(bool); visit_i64(i64); visit_u64(u64); visit_i128(i128); visit_u128(u128);
        visit_f64(f64); visit_char(char); visit_str(&str); visit_borrowed_str(&'de str);
        visit_string(String); visit_bytes(&[u8]); visit_borrowed_bytes(&'de [u8]);
        visit_byte_buf(Vec<u8>);
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
        // 2^64 and -2^63 are exact in f64; inside them an integral float converts without loss.
        const TWO_64: f64 = 18_446_744_073_709_551_616.0;
        const MINUS_TWO_63: f64 = -9_223_372_036_854_775_808.0;
        if x.fract() == 0.0 && (0.0..TWO_64).contains(&x) {
            self.v.visit_u64(x as u64)
        } else if x.fract() == 0.0 && (MINUS_TWO_63..0.0).contains(&x) {
            self.v.visit_i64(x as i64)
        } else {
            self.v.visit_f64(x)
        }
    }
}

/// A unit-only enum read from its variant name.
struct UnitEnum<V> {
    v: V,
}

impl<'de, V: Visitor<'de>> Visitor<'de> for UnitEnum<V> {
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
}

struct Seq<'t, A> {
    seq: A,
    track: &'t Track,
    index: usize,
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for Seq<'_, A> {
    type Error = A::Error;

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
    track: &'t Track,
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

/// Which of a struct's fields were seen.
enum Seen {
    Bits(u64),
    Many(Vec<bool>),
}

impl Seen {
    fn new(n: usize) -> Self {
        if n <= 64 {
            Seen::Bits(0)
        } else {
            Seen::Many(vec![false; n])
        }
    }

    fn mark(&mut self, i: usize) {
        match self {
            Seen::Bits(bits) => *bits |= 1u64.checked_shl(i as u32).unwrap_or(0),
            Seen::Many(flags) => {
                if let Some(flag) = flags.get_mut(i) {
                    *flag = true;
                }
            }
        }
    }

    fn first_missing(&self, n: usize) -> Option<usize> {
        match self {
            Seen::Bits(bits) => (0..n).find(|i| bits & (1u64 << i) == 0),
            Seen::Many(flags) => flags.iter().position(|f| !f),
        }
    }
}

struct StructVisitor<'t, V> {
    v: V,
    fields: &'static [&'static str],
    track: &'t Track,
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
        let (fields, track) = (self.fields, self.track);
        let mut seen = Seen::new(fields.len());
        let mut cursor = Cursor::default();
        let result = self.v.visit_map(StructMap {
            map,
            fields,
            track,
            seen: &mut seen,
            cursor: &mut cursor,
        });
        let value = result.inspect_err(|_| {
            // Refused by the visitor itself right after a key (a duplicated field): locate it there.
            if !cursor.located {
                if let Some(name) = cursor.current.and_then(|i| fields.get(i)) {
                    track.push(Seg::Field(name));
                }
            }
        })?;
        // serde lets Option and defaulted fields be absent; the strict schema requires them all.
        match seen.first_missing(fields.len()).and_then(|i| fields.get(i)) {
            Some(missing) => {
                track.push(Seg::Field(missing));
                Err(de::Error::missing_field(missing))
            }
            None => Ok(value),
        }
    }
}

/// The field being read, and whether an error below it has already recorded its location.
#[derive(Default)]
struct Cursor {
    current: Option<usize>,
    located: bool,
}

struct StructMap<'t, 's, A> {
    map: A,
    fields: &'static [&'static str],
    track: &'t Track,
    seen: &'s mut Seen,
    cursor: &'s mut Cursor,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for StructMap<'_, '_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        self.cursor.current = None;
        let key = self
            .map
            .next_key_seed(KeySeed {
                seed,
                fields: self.fields,
                track: self.track,
                found: &mut self.cursor.current,
            })
            .inspect_err(|_| self.cursor.located = true)?;
        if let Some(i) = self.cursor.current {
            self.seen.mark(i);
        }
        Ok(key)
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, A::Error> {
        let track = self.track;
        self.map
            .next_value_seed(StrictSeed { seed, track })
            .inspect_err(|_| {
                self.cursor.located = true;
                if let Some(name) = self.cursor.current.and_then(|i| self.fields.get(i)) {
                    track.push(Seg::Field(name));
                }
            })
    }

    fn size_hint(&self) -> Option<usize> {
        self.map.size_hint()
    }
}

/// Reads a struct key and checks it names a field.
struct KeySeed<'t, 'f, S> {
    seed: S,
    fields: &'static [&'static str],
    track: &'t Track,
    found: &'f mut Option<usize>,
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for KeySeed<'_, '_, S> {
    type Value = S::Value;
    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<S::Value, D::Error> {
        self.seed.deserialize(KeyDe {
            de,
            fields: self.fields,
            track: self.track,
            found: self.found,
        })
    }
}

struct KeyDe<'t, 'f, D> {
    de: D,
    fields: &'static [&'static str],
    track: &'t Track,
    found: &'f mut Option<usize>,
}

impl<'t, 'f, D> KeyDe<'t, 'f, D> {
    fn split<V>(self, v: V) -> (D, KeyVisitor<'t, 'f, V>) {
        let KeyDe {
            de,
            fields,
            track,
            found,
        } = self;
        (
            de,
            KeyVisitor {
                v,
                fields,
                track,
                found,
            },
        )
    }
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for KeyDe<'_, '_, D> {
    type Error = D::Error;

    forward_de! { split;
        deserialize_any(); deserialize_bool(); deserialize_i8(); deserialize_i16();
        deserialize_i32(); deserialize_i64(); deserialize_i128(); deserialize_u8();
        deserialize_u16(); deserialize_u32(); deserialize_u64(); deserialize_u128();
        deserialize_f32(); deserialize_f64(); deserialize_char(); deserialize_str();
        deserialize_string(); deserialize_bytes(); deserialize_byte_buf(); deserialize_option();
        deserialize_unit(); deserialize_unit_struct(name: &'static str);
        deserialize_newtype_struct(name: &'static str); deserialize_seq();
        deserialize_tuple(len: usize); deserialize_tuple_struct(name: &'static str, len: usize);
        deserialize_map();
        deserialize_struct(name: &'static str, fields: &'static [&'static str]);
        deserialize_enum(name: &'static str, variants: &'static [&'static str]);
        deserialize_identifier(); deserialize_ignored_any();
    }
}

struct KeyVisitor<'t, 'f, V> {
    v: V,
    fields: &'static [&'static str],
    track: &'t Track,
    found: &'f mut Option<usize>,
}

impl<V> KeyVisitor<'_, '_, V> {
    fn check<E: de::Error>(&mut self, key: &str) -> Result<(), E> {
        match self.fields.iter().position(|f| *f == key) {
            Some(i) => {
                *self.found = Some(i);
                Ok(())
            }
            None => {
                self.track.push(Seg::Key(key.to_owned()));
                Err(E::unknown_field(key, self.fields))
            }
        }
    }
}

impl<'de, V: Visitor<'de>> Visitor<'de> for KeyVisitor<'_, '_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        self.v.expecting(f)
    }

    fn visit_str<E: de::Error>(mut self, key: &str) -> Result<V::Value, E> {
        self.check(key)?;
        self.v.visit_str(key)
    }

    fn visit_borrowed_str<E: de::Error>(mut self, key: &'de str) -> Result<V::Value, E> {
        self.check(key)?;
        self.v.visit_borrowed_str(key)
    }

    fn visit_string<E: de::Error>(mut self, key: String) -> Result<V::Value, E> {
        self.check(&key)?;
        self.v.visit_string(key)
    }

    fn visit_bytes<E: de::Error>(mut self, key: &[u8]) -> Result<V::Value, E> {
        let text = String::from_utf8_lossy(key);
        self.check(&text)?;
        self.v.visit_bytes(key)
    }

    forward_visit! { visit_bool(bool); visit_i64(i64); visit_u64(u64); visit_f64(f64); }
}

#[cfg(test)]
mod tests {
    use super::*;
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
        (e.path, e.error.to_string())
    }

    #[test]
    fn valid_input_reads_like_serde() {
        let v: Outer =
            from_str(r#"{"items":[{"n":1,"tag":null}],"kind":"high","count":2.0}"#).unwrap();
        assert_eq!(v.items, vec![Inner { n: 1, tag: None }]);
        assert_eq!(v.kind, Kind::High);
        assert_eq!(v.count, 2);
    }

    #[test]
    fn unknown_key_is_refused_at_its_path() {
        let (path, msg) =
            err(r#"{"items":[{"n":1,"tag":null,"extra":true}],"kind":"low","count":0}"#);
        assert_eq!(path, "/items/0/extra");
        assert!(msg.starts_with("unknown field `extra`"), "{msg}");
    }

    #[test]
    fn absent_option_and_default_fields_are_refused() {
        let (path, msg) = err(r#"{"items":[{"n":1}],"kind":"low","count":0}"#);
        assert_eq!(path, "/items/0/tag");
        assert!(msg.starts_with("missing field `tag`"), "{msg}");
        let (path, _) = err(r#"{"items":[],"kind":"low"}"#);
        assert_eq!(path, "/count");
    }

    #[test]
    fn struct_from_array_and_enum_from_object_are_refused() {
        let (path, _) = err(r#"{"items":[[1,null]],"kind":"low","count":0}"#);
        assert_eq!(path, "/items/0");
        let (path, _) = err(r#"{"items":[],"kind":{"low":null},"count":0}"#);
        assert_eq!(path, "/kind");
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
}
