//! What a stream has shown of a value so far, as a Rust type.
//!
//! Every type that derives `StructuredOutput` implements [`HasPartial`]: a struct with named
//! fields gets a companion struct, `{Name}Partial` (with the same type parameters, each one's
//! partial form), with each field an `Option` (absent until it starts), nested derived structs
//! as their partials and lists as lists of partial items; other shapes (enums, newtypes,
//! tuples, sets, maps, scalars) appear only once complete. It is read from the value so far
//! that [`crate::StreamReader::value`] and [`crate::run::StreamEvent::Partial`] give, which
//! already holds only what may be shown: free text as far as it has come, every other value
//! once complete. Which fields are complete (will not change again) is
//! [`crate::StreamReader::is_complete`], or the pointers each event names.
//!
//! The companion derives only `Default`: the derive cannot tell whether the field types are
//! `Debug` or `Clone`.
//!
//! A type with a hand-written [`crate::SchemaType`] implements it in one line with
//! [`complete_when_whole!`](crate::complete_when_whole): its values appear once complete.

use std::rc::Rc;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;

/// A type's partial form: what a stream has shown of a value of it so far.
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no partial form for streaming",
    label = "a field of this type cannot be shown while a stream arrives",
    note = "derive StructuredOutput for it, or for a type with a hand-written SchemaType write `structured_runtime::complete_when_whole!({Self});`"
)]
pub trait HasPartial {
    /// What a value of this type looks like while it arrives.
    type Partial;
    /// The partial form of `value` (a value so far, as a stream shows it); `None` when it does
    /// not fit the type (yet).
    fn partial_from(value: &Value) -> Option<Self::Partial>;
}

/// Implements [`HasPartial`] for types whose values appear only once whole (the value itself).
///
/// ```
/// # use structured_runtime::complete_when_whole;
/// #[derive(serde::Deserialize)]
/// struct Celsius(f64);
/// complete_when_whole!(Celsius);
/// ```
#[macro_export]
macro_rules! complete_when_whole {
    ($($t:ty),* $(,)?) => {$(
        impl $crate::schema::HasPartial for $t {
            type Partial = $t;
            fn partial_from(value: &$crate::schema::macro_support::Value) -> ::core::option::Option<$t> {
                $crate::schema::macro_support::whole_from(value)
            }
        }
    )*};
}

/// A value read whole from the value so far; `None` when it does not fit.
#[doc(hidden)]
pub fn whole_from<T: DeserializeOwned>(value: &Value) -> Option<T> {
    T::deserialize(value).ok()
}

complete_when_whole!(
    bool,
    char,
    String,
    Box<str>,
    i8,
    i16,
    i32,
    i64,
    i128,
    isize,
    u8,
    u16,
    u32,
    u64,
    u128,
    usize,
    f32,
    f64
);

#[cfg(feature = "chrono")]
complete_when_whole!(
    chrono::NaiveDate,
    chrono::NaiveTime,
    chrono::DateTime<chrono::Utc>,
    chrono::DateTime<chrono::FixedOffset>
);
#[cfg(feature = "uuid")]
complete_when_whole!(uuid::Uuid);
#[cfg(feature = "url")]
complete_when_whole!(url::Url);
#[cfg(feature = "rust_decimal")]
complete_when_whole!(rust_decimal::Decimal);

/// `null` once complete (`Some(None)`), or the inner type's partial form.
impl<T: HasPartial> HasPartial for Option<T> {
    type Partial = Option<T::Partial>;
    fn partial_from(value: &Value) -> Option<Self::Partial> {
        match value {
            Value::Null => Some(None),
            other => T::partial_from(other).map(Some),
        }
    }
}

/// The items so far, each in its partial form (the last may be arriving).
impl<T: HasPartial> HasPartial for Vec<T> {
    type Partial = Vec<T::Partial>;
    fn partial_from(value: &Value) -> Option<Self::Partial> {
        // A plain loop: compiled once per item type, where a `filter_map` collected into the
        // `Vec` compiled the iterator's collecting machinery too (a fifth of the code 50 derived
        // types compile to in a debug build, `scripts/derive-compile-time`'s crate).
        let items = value.as_array()?;
        let mut partial = Vec::with_capacity(items.len());
        for item in items {
            if let Some(item) = T::partial_from(item) {
                partial.push(item);
            }
        }
        Some(partial)
    }
}

macro_rules! through_pointer {
    ($($ptr:ident),*) => {$(
        /// The pointee's partial form, behind the same pointer (so a type that holds itself
        /// has a partial form of finite size).
        impl<T: HasPartial> HasPartial for $ptr<T> {
            type Partial = $ptr<T::Partial>;
            fn partial_from(value: &Value) -> Option<Self::Partial> {
                T::partial_from(value).map($ptr::new)
            }
        }
    )*};
}
through_pointer!(Box, Arc, Rc);

/// Shapes whose values appear only once whole: a set or a map (its entries are checked
/// together), a fixed-size array, a tuple.
macro_rules! whole_when {
    ($([$($g:tt)*] $t:ty;)*) => {$(
        impl<$($g)*> HasPartial for $t where $t: DeserializeOwned {
            type Partial = $t;
            fn partial_from(value: &Value) -> Option<$t> {
                <$t>::deserialize(value).ok()
            }
        }
    )*};
}
whole_when! {
    [T, S] std::collections::HashSet<T, S>;
    [T] std::collections::BTreeSet<T>;
    [K, V, S] std::collections::HashMap<K, V, S>;
    [K, V] std::collections::BTreeMap<K, V>;
    [T, const N: usize] [T; N];
    [A] (A,);
    [A, B] (A, B);
    [A, B, C] (A, B, C);
    [A, B, C, D] (A, B, C, D);
    [A, B, C, D, E] (A, B, C, D, E);
    [A, B, C, D, E, F] (A, B, C, D, E, F);
    [A, B, C, D, E, F, G] (A, B, C, D, E, F, G);
    [A, B, C, D, E, F, G, H] (A, B, C, D, E, F, G, H);
}
