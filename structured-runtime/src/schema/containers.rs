//! The schema and the rules of the types that hold other types: `Vec`, arrays, tuples, sets,
//! maps, and the pointers (`Box`, `Arc`, `Rc`, `String` over `str`). A rule written on a field
//! (`#[range]`, `#[enum_values]`, `#[pattern]`, `#[format]`) goes through a container to each
//! value it holds, in the schema (`items`, `additionalProperties`) and in `Validate`.
//!
//! Where a violation is reported: a list's item at its index (`/tags/2`), a map's value at its
//! key (`/scores/ada`), a tuple's element at its position. A set's items have no position once
//! read (a `HashSet` keeps no order, a `BTreeSet` sorts), so a violation inside a set is
//! reported at the set itself.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::rc::Rc;
use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::types::{
    EnumTarget, FormatTarget, Length, LengthTarget, PatternTarget, Range, RangeTarget, SchemaGen,
    SchemaType,
};
use super::validate::{Path, Rule, Violation};

/// The rule traits of the same shape: `apply_*` writes into a node, `check_*` checks a value.
/// `$m!` is called once per trait with its name, its two methods and its argument type.
macro_rules! for_each_rule {
    ($m:ident) => {
        $m!(RangeTarget, apply_range, check_range, Range);
        $m!(EnumTarget, apply_enum, check_enum, &[&str]);
        $m!(PatternTarget, apply_pattern, check_pattern, &'static str);
        $m!(FormatTarget, apply_format, check_format, &'static str);
    };
}

/// A pointer holds one value: its schema and rules are that value's.
macro_rules! through_pointers {
    ($tr:ident, $apply:ident, $check:ident, $arg:ty) => {
        through_pointers!(@ptr $tr, $apply, $check, $arg, Box);
        through_pointers!(@ptr $tr, $apply, $check, $arg, Arc);
        through_pointers!(@ptr $tr, $apply, $check, $arg, Rc);
    };
    (@ptr $tr:ident, $apply:ident, $check:ident, $arg:ty, $ptr:ident) => {
        impl<T: $tr + ?Sized> $tr for $ptr<T> {
            fn $apply(node: &mut Value, arg: $arg) {
                T::$apply(node, arg)
            }
            fn $check(&self, arg: $arg, path: &Path<'_>, out: &mut Vec<Violation>) {
                (**self).$check(arg, path, out)
            }
        }
    };
}
for_each_rule!(through_pointers);

/// A `String` takes the string rules as `str` does.
macro_rules! string_as_str {
    ($($tr:ident, $apply:ident, $check:ident, $arg:ty);*) => {$(
        impl $tr for String {
            fn $apply(node: &mut Value, arg: $arg) {
                str::$apply(node, arg)
            }
            #[inline]
            fn $check(&self, arg: $arg, path: &Path<'_>, out: &mut Vec<Violation>) {
                self.as_str().$check(arg, path, out)
            }
        }
    )*};
}
string_as_str!(
    EnumTarget, apply_enum, check_enum, &[&str];
    PatternTarget, apply_pattern, check_pattern, &'static str;
    FormatTarget, apply_format, check_format, &'static str;
    LengthTarget, apply_length, check_length, Length
);

/// A list, an array or a set: the rule goes to `items` and to every item.
macro_rules! through_items {
    ($tr:ident, $apply:ident, $check:ident, $arg:ty) => {
        impl<T: $tr> $tr for Vec<T> {
            fn $apply(node: &mut Value, arg: $arg) {
                if let Some(items) = node.get_mut("items") {
                    T::$apply(items, arg);
                }
            }
            fn $check(&self, arg: $arg, path: &Path<'_>, out: &mut Vec<Violation>) {
                for (i, item) in self.iter().enumerate() {
                    item.$check(arg, &path.index(i), out);
                }
            }
        }
        impl<T: $tr, const N: usize> $tr for [T; N] {
            fn $apply(node: &mut Value, arg: $arg) {
                if let Some(items) = node.get_mut("items") {
                    T::$apply(items, arg);
                }
            }
            fn $check(&self, arg: $arg, path: &Path<'_>, out: &mut Vec<Violation>) {
                for (i, item) in self.iter().enumerate() {
                    item.$check(arg, &path.index(i), out);
                }
            }
        }
        impl<T: $tr, S> $tr for HashSet<T, S> {
            fn $apply(node: &mut Value, arg: $arg) {
                if let Some(items) = node.get_mut("items") {
                    T::$apply(items, arg);
                }
            }
            fn $check(&self, arg: $arg, path: &Path<'_>, out: &mut Vec<Violation>) {
                self.iter().for_each(|item| item.$check(arg, path, out));
            }
        }
        impl<T: $tr> $tr for BTreeSet<T> {
            fn $apply(node: &mut Value, arg: $arg) {
                if let Some(items) = node.get_mut("items") {
                    T::$apply(items, arg);
                }
            }
            fn $check(&self, arg: $arg, path: &Path<'_>, out: &mut Vec<Violation>) {
                self.iter().for_each(|item| item.$check(arg, path, out));
            }
        }
    };
}
for_each_rule!(through_items);

/// A map: the rule goes to `additionalProperties` and to every value.
macro_rules! through_values {
    ($tr:ident, $apply:ident, $check:ident, $arg:ty) => {
        impl<K: MapKey, V: $tr, S> $tr for HashMap<K, V, S> {
            fn $apply(node: &mut Value, arg: $arg) {
                if let Some(values) = node.get_mut("additionalProperties") {
                    V::$apply(values, arg);
                }
            }
            fn $check(&self, arg: $arg, path: &Path<'_>, out: &mut Vec<Violation>) {
                for (key, value) in self {
                    value.$check(arg, &path.key(&key.key_name()), out);
                }
            }
        }
        impl<K: MapKey, V: $tr> $tr for BTreeMap<K, V> {
            fn $apply(node: &mut Value, arg: $arg) {
                if let Some(values) = node.get_mut("additionalProperties") {
                    V::$apply(values, arg);
                }
            }
            fn $check(&self, arg: $arg, path: &Path<'_>, out: &mut Vec<Violation>) {
                for (key, value) in self {
                    value.$check(arg, &path.key(&key.key_name()), out);
                }
            }
        }
    };
}
for_each_rule!(through_values);

impl SchemaType for String {
    fn json_schema(gen: &mut SchemaGen) -> Value {
        str::json_schema(gen)
    }
}

/// A `char` is a string of exactly one character.
impl SchemaType for char {
    fn json_schema(_: &mut SchemaGen) -> Value {
        json!({ "type": "string", "minLength": 1, "maxLength": 1 })
    }
}

macro_rules! pointer_schema {
    ($($ptr:ident),*) => {$(
        impl<T: SchemaType + ?Sized> SchemaType for $ptr<T> {
            fn json_schema(gen: &mut SchemaGen) -> Value {
                T::json_schema(gen)
            }
            fn validate_nested(&self, path: &Path<'_>, out: &mut Vec<Violation>) {
                (**self).validate_nested(path, out)
            }
        }
        impl<T: LengthTarget + ?Sized> LengthTarget for $ptr<T> {
            fn apply_length(node: &mut Value, length: Length) {
                T::apply_length(node, length)
            }
            fn check_length(&self, length: Length, path: &Path<'_>, out: &mut Vec<Violation>) {
                (**self).check_length(length, path, out)
            }
        }
    )*};
}
pointer_schema!(Box, Arc, Rc);

impl<T: SchemaType> SchemaType for Vec<T> {
    fn json_schema(gen: &mut SchemaGen) -> Value {
        array_of(T::json_schema(gen), None, false)
    }
    // Counted by hand: an `enumerate` is compiled once more for each item type (3,200 of the
    // LLVM IR lines scripts/derive-compile-time's 50 types compile to in a debug build).
    #[allow(clippy::explicit_counter_loop)]
    fn validate_nested(&self, path: &Path<'_>, out: &mut Vec<Violation>) {
        let mut i = 0;
        for item in self {
            item.validate_nested(&path.index(i), out);
            i += 1;
        }
    }
}

impl<T> LengthTarget for Vec<T> {
    fn apply_length(node: &mut Value, length: Length) {
        length.apply(node, "minItems", "maxItems")
    }
    fn check_length(&self, length: Length, path: &Path<'_>, out: &mut Vec<Violation>) {
        length.check(self.len(), "items", Rule::Items, path, out)
    }
}

/// `[T; N]`: exactly `N` items.
impl<T: SchemaType, const N: usize> SchemaType for [T; N] {
    fn json_schema(gen: &mut SchemaGen) -> Value {
        array_of(T::json_schema(gen), Some(N), false)
    }
    fn validate_nested(&self, path: &Path<'_>, out: &mut Vec<Violation>) {
        for (i, item) in self.iter().enumerate() {
            item.validate_nested(&path.index(i), out);
        }
    }
}

/// A set is a list of distinct items (`uniqueItems`): a repeated item is a violation, never
/// silently merged (see `from_json`).
macro_rules! set_schema {
    ($set:ident $(, $s:ident)?) => {
        impl<T: SchemaType $(, $s)?> SchemaType for $set<T $(, $s)?> {
            fn json_schema(gen: &mut SchemaGen) -> Value {
                gen.check_against_schema();
                array_of(T::json_schema(gen), None, true)
            }
            fn validate_nested(&self, path: &Path<'_>, out: &mut Vec<Violation>) {
                self.iter().for_each(|item| item.validate_nested(path, out));
            }
        }
        impl<T $(, $s)?> LengthTarget for $set<T $(, $s)?> {
            fn apply_length(node: &mut Value, length: Length) {
                length.apply(node, "minItems", "maxItems")
            }
            fn check_length(&self, length: Length, path: &Path<'_>, out: &mut Vec<Violation>) {
                length.check(self.len(), "items", Rule::Items, path, out)
            }
        }
    };
}
set_schema!(HashSet, S);
set_schema!(BTreeSet);

/// What may key a map: a `String` (any property name), or a unit-only enum that derives
/// `StructuredOutput` (the names it declares, as `propertyNames`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot key a map in a JSON object",
    label = "JSON object keys are strings",
    note = "key the map with String, or with a unit-only enum that derives StructuredOutput"
)]
pub trait MapKey {
    /// The `propertyNames` schema, when keys are limited.
    fn key_schema() -> Option<Value>;
    /// This key as the property name serde writes.
    fn key_name(&self) -> std::borrow::Cow<'_, str>;
}

impl MapKey for String {
    fn key_schema() -> Option<Value> {
        None
    }
    fn key_name(&self) -> std::borrow::Cow<'_, str> {
        std::borrow::Cow::Borrowed(self)
    }
}

fn map_schema<K: MapKey, V: SchemaType>(gen: &mut SchemaGen) -> Value {
    let mut node = Map::new();
    node.insert("type".into(), Value::from("object"));
    node.insert("additionalProperties".into(), V::json_schema(gen));
    if let Some(names) = K::key_schema() {
        node.insert("propertyNames".into(), names);
    }
    Value::Object(node)
}

macro_rules! map_schema {
    ($map:ident $(, $s:ident)?) => {
        impl<K: MapKey, V: SchemaType $(, $s)?> SchemaType for $map<K, V $(, $s)?> {
            fn json_schema(gen: &mut SchemaGen) -> Value {
                map_schema::<K, V>(gen)
            }
            fn validate_nested(&self, path: &Path<'_>, out: &mut Vec<Violation>) {
                for (key, value) in self {
                    value.validate_nested(&path.key(&key.key_name()), out);
                }
            }
        }
        /// `#[length]` on a map counts its entries.
        impl<K, V $(, $s)?> LengthTarget for $map<K, V $(, $s)?> {
            fn apply_length(node: &mut Value, length: Length) {
                length.apply(node, "minProperties", "maxProperties")
            }
            fn check_length(&self, length: Length, path: &Path<'_>, out: &mut Vec<Violation>) {
                length.check(self.len(), "entries", Rule::Properties, path, out)
            }
        }
    };
}
map_schema!(HashMap, S);
map_schema!(BTreeMap);

/// An array of `items` (exactly `len` of them, when given; distinct, when `unique`). Written
/// here once: the generic impls only compute their items' node.
fn array_of(items: Value, len: Option<usize>, unique: bool) -> Value {
    let mut node = serde_json::Map::new();
    node.insert("type".into(), Value::from("array"));
    node.insert("items".into(), items);
    if let Some(n) = len {
        node.insert("minItems".into(), Value::from(n));
        node.insert("maxItems".into(), Value::from(n));
    }
    if unique {
        node.insert("uniqueItems".into(), Value::Bool(true));
    }
    Value::Object(node)
}

/// A tuple's node: an array of exactly these items, each at its position (`prefixItems`; the
/// item counts say there is nothing after them).
pub fn tuple(items: Vec<Value>) -> Value {
    let n = items.len();
    json!({
        "type": "array",
        "prefixItems": items,
        "minItems": n,
        "maxItems": n,
    })
}

/// A tuple is an array of fixed length, each position its own schema (`prefixItems`).
macro_rules! tuple_schema {
    ($(($($t:ident . $i:tt),+)),*) => {$(
        impl<$($t: SchemaType),+> SchemaType for ($($t,)+) {
            fn json_schema(gen: &mut SchemaGen) -> Value {
                tuple(vec![$($t::json_schema(gen)),+])
            }
            fn validate_nested(&self, path: &Path<'_>, out: &mut Vec<Violation>) {
                $(self.$i.validate_nested(&path.index($i), out);)+
            }
        }
    )*};
}
tuple_schema!(
    (A.0),
    (A.0, B.1),
    (A.0, B.1, C.2),
    (A.0, B.1, C.2, D.3),
    (A.0, B.1, C.2, D.3, E.4),
    (A.0, B.1, C.2, D.3, E.4, F.5),
    (A.0, B.1, C.2, D.3, E.4, F.5, G.6),
    (A.0, B.1, C.2, D.3, E.4, F.5, G.6, H.7)
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn containers_write_their_shapes() {
        let mut g = SchemaGen::new();
        assert_eq!(
            <(String, u8)>::json_schema(&mut g),
            json!({"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer", "minimum": 0, "maximum": 255}],
                   "minItems": 2, "maxItems": 2})
        );
        assert_eq!(
            <[bool; 3]>::json_schema(&mut g),
            json!({"type": "array", "items": {"type": "boolean"}, "minItems": 3, "maxItems": 3})
        );
        assert_eq!(
            <BTreeSet<String>>::json_schema(&mut g),
            json!({"type": "array", "items": {"type": "string"}, "uniqueItems": true})
        );
        assert_eq!(
            <HashMap<String, f64>>::json_schema(&mut g),
            json!({"type": "object", "additionalProperties": {"type": "number"}})
        );
        assert_eq!(<Arc<str>>::json_schema(&mut g), json!({"type": "string"}));
        assert_eq!(
            char::json_schema(&mut g),
            json!({"type": "string", "minLength": 1, "maxLength": 1})
        );
    }

    #[test]
    fn a_rule_reaches_map_values_at_their_keys() {
        let mut node = <BTreeMap<String, f64>>::json_schema(&mut SchemaGen::new());
        let range = Range {
            min: Some(super::super::types::Bound::Int(0)),
            max: Some(super::super::types::Bound::Int(1)),
        };
        <BTreeMap<String, f64> as RangeTarget>::apply_range(&mut node, range);
        assert_eq!(node["additionalProperties"]["maximum"], json!(1));
        let scores: BTreeMap<String, f64> = [("ada".into(), 0.5), ("bob".into(), 2.0)].into();
        let mut out = Vec::new();
        scores.check_range(range, &Path::root(), &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].path.as_str(), "/bob");
    }
}
