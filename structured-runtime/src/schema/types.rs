//! How each Rust type a derived struct may hold is written as strict JSON Schema and walked by
//! `Validate`. The derive dispatches on the field type through these traits, so an unsupported
//! type is an ordinary trait error on that field.

use std::any::TypeId;

use serde_json::{json, Map, Value};

use crate::schema::validate::{Path, Rule, Violation};

/// A Rust type with a strict JSON Schema: `String`, `char`, `bool`, the integer and float types,
/// `Option<T>`, `Vec<T>`, `[T; N]`, tuples, sets, maps keyed by strings, `Box`/`Arc`/`Rc`, and
/// every type that derives `StructuredOutput`; with this crate's features, `chrono`'s dates and
/// times, `uuid::Uuid`, `url::Url` and `rust_decimal::Decimal`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no strict JSON Schema",
    label = "this field type cannot be described to a model",
    note = "use String, char, bool, a number, Option, Vec, [T; N], a tuple, a set, a map keyed by String, Box/Arc/Rc, or a type that derives StructuredOutput",
    note = "chrono, uuid, url and rust_decimal types need the structured-runtime feature of that name",
    note = "`serde_json::Value` and references have no strict schema: declare a struct for the shape you expect"
)]
pub trait SchemaType {
    /// The schema of this type. Nested derived types are inlined; a type that contains itself
    /// is written once under `$defs` and referenced (see [`SchemaGen`]).
    fn json_schema(gen: &mut SchemaGen) -> Value;

    /// Appends the violations of the rules declared inside this type (nested derived types).
    /// Leaf types have none: their shape is checked by deserialization.
    fn validate_nested(&self, _path: &Path<'_>, _out: &mut Vec<Violation>) {}
}

/// Builds one root schema: inlines nested types and keeps the `$defs` of recursive ones.
#[derive(Debug, Default)]
pub struct SchemaGen {
    /// Types being written, outermost first, to detect recursion.
    stack: Vec<(TypeId, String)>,
    /// Types found to contain themselves: their definition name.
    recursive: Vec<(TypeId, String)>,
    defs: Map<String, Value>,
    /// `(alias, name)` pairs the types declared.
    aliases: Vec<(String, String)>,
    /// Some type inside reads more than its schema allows (see [`SchemaGen::check_against_schema`]).
    schema_check: bool,
}

/// A root schema and what reading it needs beyond the schema itself.
pub(crate) struct Root {
    pub schema: Value,
    /// `(alias, name)`: other names serde reads for a property.
    pub aliases: Vec<(String, String)>,
    /// Values must be checked against the schema after deserialization.
    pub schema_check: bool,
}

impl SchemaGen {
    /// A generator for one root schema.
    pub fn new() -> Self {
        Self::default()
    }

    /// The schema of `T` as a root: its own node plus a `$defs` section when some nested type is
    /// recursive. A root that refers to itself does so with `{"$ref": "#"}`.
    pub fn root<T: SchemaType + ?Sized + 'static>() -> Value {
        Self::root_of::<T>().schema
    }

    /// [`SchemaGen::root`], and what reading values of it needs.
    pub(crate) fn root_of<T: SchemaType + ?Sized + 'static>() -> Root {
        Self::root_with(T::json_schema)
    }

    /// [`SchemaGen::root_of`] for the type whose node `json_schema` writes: one copy of this
    /// for every type (only the call above is compiled per type).
    pub(crate) fn root_with(json_schema: fn(&mut SchemaGen) -> Value) -> Root {
        let mut gen = SchemaGen::new();
        let mut root = json_schema(&mut gen);
        if !gen.defs.is_empty() {
            if let Value::Object(map) = &mut root {
                map.insert(
                    "$defs".to_owned(),
                    Value::Object(std::mem::take(&mut gen.defs)),
                );
            }
        }
        Root {
            schema: root,
            aliases: gen.aliases,
            schema_check: gen.schema_check,
        }
    }

    /// Says that reading the type being written cannot vouch for a value as written: it
    /// deserializes more than its schema allows (a set merges a repeated item; a date parser
    /// takes forms its `format` does not), or serde buffers it where the strict pass cannot
    /// follow (an enum with data, a flattened field, a property with aliases). `from_json` and
    /// the pipeline then read each value of the root once as a JSON value, and the validator of
    /// record judges it against the schema. A hand-written [`SchemaType`] whose `Deserialize` is
    /// more lenient than its schema, or reads through `deserialize_any`, calls this.
    pub fn check_against_schema(&mut self) {
        self.schema_check = true;
    }

    /// Notes other names serde reads for the property `name` (`#[serde(alias)]`).
    pub fn aliases(&mut self, name: &str, aliases: &[&str]) {
        // serde takes either name, so a count of keys no longer says every property is there.
        self.schema_check |= !aliases.is_empty();
        for alias in aliases {
            let pair = ((*alias).to_owned(), name.to_owned());
            if !self.aliases.contains(&pair) {
                self.aliases.push(pair);
            }
        }
    }

    /// Writes a named (derived) type. `build` writes its node; when the type is met again while
    /// being written, the inner occurrence becomes a `$ref` and the node moves to `$defs`.
    pub fn named<T: ?Sized + 'static>(
        &mut self,
        name: &str,
        build: impl FnOnce(&mut SchemaGen) -> Value,
    ) -> Value {
        // Only the type's own node is compiled per type; the bookkeeping is one function.
        self.named_by_id(TypeId::of::<T>(), name, Box::new(build))
    }

    fn named_by_id(
        &mut self,
        id: TypeId,
        name: &str,
        build: Box<dyn FnOnce(&mut SchemaGen) -> Value + '_>,
    ) -> Value {
        if let Some(pos) = self.stack.iter().position(|(t, _)| *t == id) {
            if pos == 0 {
                return json!({ "$ref": "#" });
            }
            let def = self.def_name(id, name);
            return json!({ "$ref": format!("#/$defs/{def}") });
        }
        self.stack.push((id, name.to_owned()));
        let node = build(self);
        self.stack.pop();
        match self.recursive.iter().find(|(t, _)| *t == id) {
            Some((_, def)) if !self.stack.is_empty() => {
                let def = def.clone();
                self.defs.insert(def.clone(), node);
                json!({ "$ref": format!("#/$defs/{def}") })
            }
            _ => node,
        }
    }

    /// The `$defs` name of a recursive type: its schema name, made unique.
    fn def_name(&mut self, id: TypeId, name: &str) -> String {
        if let Some((_, def)) = self.recursive.iter().find(|(t, _)| *t == id) {
            return def.clone();
        }
        let mut def = name.to_owned();
        let mut n = 1;
        while self.recursive.iter().any(|(_, d)| *d == def) {
            n += 1;
            def = format!("{name}_{n}");
        }
        self.recursive.push((id, def.clone()));
        def
    }
}

/// Adds `null` to a node's allowed values: `Option<T>` is required and nullable.
pub fn make_nullable(node: Value) -> Value {
    let Value::Object(mut map) = node else {
        return node;
    };
    if map.contains_key("$ref") || map.contains_key("anyOf") {
        if let Some(Value::Array(branches)) = map.get_mut("anyOf") {
            if !branches.iter().any(is_null_branch) {
                branches.push(json!({ "type": "null" }));
            }
            return Value::Object(map);
        }
        return json!({ "anyOf": [Value::Object(map), { "type": "null" }] });
    }
    match map.get_mut("type") {
        Some(Value::String(t)) if t != "null" => {
            let t = std::mem::take(t);
            map.insert("type".into(), json!([t, "null"]));
        }
        Some(Value::Array(types)) if !types.iter().any(|t| t == "null") => {
            types.push(Value::from("null"));
        }
        _ => {}
    }
    if let Some(Value::Array(values)) = map.get_mut("enum") {
        if !values.iter().any(Value::is_null) {
            values.push(Value::Null);
        }
    }
    Value::Object(map)
}

fn is_null_branch(branch: &Value) -> bool {
    branch.get("type").and_then(Value::as_str) == Some("null")
}

/// A numeric bound from `#[range]`, kept exact for integers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Bound {
    /// An integer literal.
    Int(i128),
    /// A float literal.
    Float(f64),
}

impl Bound {
    fn as_json(self) -> Value {
        match self {
            // A literal that fits neither i64 nor u64 cannot be written exactly: the derive rejects
            // such bounds on the types it knows, so this is only reached through type aliases.
            Bound::Int(i) => i64::try_from(i)
                .map(Value::from)
                .or_else(|_| u64::try_from(i).map(Value::from))
                .unwrap_or_else(|_| Value::from(i as f64)),
            Bound::Float(f) => Value::from(f),
        }
    }

    fn as_f64(self) -> f64 {
        match self {
            Bound::Int(i) => i as f64,
            Bound::Float(f) => f,
        }
    }
}

impl std::fmt::Display for Bound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Bound::Int(i) => write!(f, "{i}"),
            Bound::Float(x) => write!(f, "{x:?}"),
        }
    }
}

/// An inclusive range, either side optional.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Range {
    /// Smallest allowed value.
    pub min: Option<Bound>,
    /// Largest allowed value.
    pub max: Option<Bound>,
}

impl Range {
    /// Writes the bounds into a number node, keeping a tighter bound the type already implies.
    pub fn apply(self, node: &mut Value) {
        let Value::Object(map) = node else { return };
        if let Some(min) = self.min {
            let tighter = match map.get("minimum").and_then(Value::as_f64) {
                Some(existing) => min.as_f64() >= existing,
                None => true,
            };
            if tighter {
                map.insert("minimum".into(), min.as_json());
            }
        }
        if let Some(max) = self.max {
            let tighter = match map.get("maximum").and_then(Value::as_f64) {
                Some(existing) => max.as_f64() <= existing,
                None => true,
            };
            if tighter {
                map.insert("maximum".into(), max.as_json());
            }
        }
    }

    /// What the range allows, in words.
    pub fn describe(self) -> String {
        match (self.min, self.max) {
            (Some(lo), Some(hi)) => format!("a number in [{lo}, {hi}]"),
            (Some(lo), None) => format!("a number >= {lo}"),
            (None, Some(hi)) => format!("a number <= {hi}"),
            (None, None) => "a number".to_owned(),
        }
    }
}

/// A number, compared with bounds without losing precision.
#[derive(Debug, Clone, Copy)]
pub enum Num {
    /// From an integer type.
    Int(i128),
    /// From a float type.
    Float(f64),
}

impl Num {
    // Each pair is compared in its own kind: the common float/float case converts nothing.
    fn ge(self, b: Bound) -> bool {
        match (self, b) {
            (Num::Int(x), Bound::Int(b)) => x >= b,
            (Num::Int(x), Bound::Float(b)) => (x as f64) >= b,
            (Num::Float(x), Bound::Float(b)) => x >= b,
            (Num::Float(x), Bound::Int(b)) => x >= b as f64,
        }
    }
    fn le(self, b: Bound) -> bool {
        match (self, b) {
            (Num::Int(x), Bound::Int(b)) => x <= b,
            (Num::Int(x), Bound::Float(b)) => (x as f64) <= b,
            (Num::Float(x), Bound::Float(b)) => x <= b,
            (Num::Float(x), Bound::Int(b)) => x <= b as f64,
        }
    }
}

impl std::fmt::Display for Num {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Num::Int(i) => write!(f, "{i}"),
            Num::Float(x) => write!(f, "{x:?}"),
        }
    }
}

/// A field type `#[range]` applies to: a number, or an `Option`/`Vec`/`Box` of one.
#[diagnostic::on_unimplemented(
    message = "#[range] applies to numbers, found `{Self}`",
    label = "not a number, nor an Option/Vec of numbers",
    note = "use #[range] on integer or float fields; for strings use #[enum_values(..)]"
)]
pub trait RangeTarget {
    /// Writes the range into this type's schema node (descending into `items` for a `Vec`).
    fn apply_range(node: &mut Value, range: Range);
    /// Appends a violation for each number in `self` outside the range.
    fn check_range(&self, range: Range, path: &Path<'_>, out: &mut Vec<Violation>);
}

/// The bounds of `#[length(min = .., max = ..)]`: characters of a string, items of a list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Length {
    /// Fewest allowed.
    pub min: Option<u64>,
    /// Most allowed.
    pub max: Option<u64>,
}

impl Length {
    /// Writes the bounds under `min_key`/`max_key` (`minLength`/`maxLength`, `minItems`/...).
    pub(super) fn apply(self, node: &mut Value, min_key: &str, max_key: &str) {
        let Value::Object(map) = node else { return };
        if let Some(min) = self.min {
            map.insert(min_key.into(), Value::from(min));
        }
        if let Some(max) = self.max {
            map.insert(max_key.into(), Value::from(max));
        }
    }

    /// A violation when `count` (of `unit`) is outside the bounds. (Inlined where the bounds
    /// are constants, as [`check_num`] is; the report is not.)
    #[inline]
    pub(super) fn check(
        self,
        count: usize,
        unit: &str,
        rule: Rule,
        path: &Path<'_>,
        out: &mut Vec<Violation>,
    ) {
        let n = count as u64;
        let short = self.min.is_some_and(|min| n < min);
        let long = self.max.is_some_and(|max| n > max);
        if short || long {
            self.report(count, unit, rule, path, out);
        }
    }

    #[cold]
    #[inline(never)]
    fn report(
        self,
        count: usize,
        unit: &str,
        rule: Rule,
        path: &Path<'_>,
        out: &mut Vec<Violation>,
    ) {
        let expected = match (self.min, self.max) {
            (Some(min), Some(max)) => format!("{min} to {max} {unit}"),
            (Some(min), None) => format!("at least {min} {unit}"),
            (None, Some(max)) => format!("at most {max} {unit}"),
            (None, None) => return,
        };
        out.push(Violation {
            path: path.to_pointer(),
            rule,
            expected,
            found: format!("{count} {unit}"),
        });
    }
}

/// A field type `#[length]` applies to: a `String` (characters) or a `Vec` (items), or an
/// `Option`/`Box` of one.
#[diagnostic::on_unimplemented(
    message = "#[length] applies to strings and lists, found `{Self}`",
    label = "not a String or a Vec, nor an Option of one",
    note = "use #[length(min = .., max = ..)] on String (characters) or Vec (items); for numbers use #[range(min, max)]"
)]
pub trait LengthTarget {
    /// Writes the bounds into this type's schema node.
    fn apply_length(node: &mut Value, length: Length);
    /// Appends a violation when `self` is too short or too long.
    fn check_length(&self, length: Length, path: &Path<'_>, out: &mut Vec<Violation>);
}

impl LengthTarget for str {
    fn apply_length(node: &mut Value, length: Length) {
        length.apply(node, "minLength", "maxLength")
    }
    #[inline]
    fn check_length(&self, length: Length, path: &Path<'_>, out: &mut Vec<Violation>) {
        // JSON Schema counts characters (code points), as `chars` does.
        length.check(self.chars().count(), "characters", Rule::Length, path, out)
    }
}

impl<T: LengthTarget> LengthTarget for Option<T> {
    fn apply_length(node: &mut Value, length: Length) {
        T::apply_length(node, length)
    }
    fn check_length(&self, length: Length, path: &Path<'_>, out: &mut Vec<Violation>) {
        if let Some(inner) = self {
            inner.check_length(length, path, out);
        }
    }
}

/// A field type `#[format]` applies to: a `String`, or an `Option`/`Vec`/`Box` of one.
#[diagnostic::on_unimplemented(
    message = "#[format] applies to strings, found `{Self}`",
    label = "not a String, nor an Option/Vec of String",
    note = "use #[format(\"email\")] (or date, date-time, time, uri, uuid, ...) on String fields"
)]
pub trait FormatTarget {
    /// Writes the format into this type's schema node.
    fn apply_format(node: &mut Value, format: &'static str);
    /// Appends a violation for each string in `self` not in the format.
    fn check_format(&self, format: &'static str, path: &Path<'_>, out: &mut Vec<Violation>);
}

impl FormatTarget for str {
    fn apply_format(node: &mut Value, format: &'static str) {
        if let Value::Object(map) = node {
            map.insert("format".into(), Value::from(format));
        }
    }
    fn check_format(&self, format: &'static str, path: &Path<'_>, out: &mut Vec<Violation>) {
        if !crate::schema::validation::in_format(format, self) {
            out.push(Violation {
                path: path.to_pointer(),
                rule: Rule::Format,
                expected: format!("a string in format {format:?}"),
                found: crate::schema::validate::preview_str(self),
            });
        }
    }
}

impl<T: FormatTarget> FormatTarget for Option<T> {
    fn apply_format(node: &mut Value, format: &'static str) {
        T::apply_format(node, format)
    }
    fn check_format(&self, format: &'static str, path: &Path<'_>, out: &mut Vec<Violation>) {
        if let Some(inner) = self {
            inner.check_format(format, path, out);
        }
    }
}

/// A field type `#[pattern]` applies to: a `String`, or an `Option`/`Vec`/`Box` of one.
#[diagnostic::on_unimplemented(
    message = "#[pattern] applies to strings, found `{Self}`",
    label = "not a String, nor an Option/Vec of String",
    note = "use #[pattern(\"^[A-Z]{{3}}-[0-9]+$\")] on String fields"
)]
pub trait PatternTarget {
    /// Writes the pattern into this type's schema node.
    fn apply_pattern(node: &mut Value, pattern: &'static str);
    /// Appends a violation for each string in `self` the pattern does not match.
    fn check_pattern(&self, pattern: &'static str, path: &Path<'_>, out: &mut Vec<Violation>);
}

use super::pattern::pattern_matches;

impl PatternTarget for str {
    fn apply_pattern(node: &mut Value, pattern: &'static str) {
        if let Value::Object(map) = node {
            map.insert("pattern".into(), Value::from(pattern));
        }
    }
    fn check_pattern(&self, pattern: &'static str, path: &Path<'_>, out: &mut Vec<Violation>) {
        if !pattern_matches(pattern, self) {
            out.push(Violation {
                path: path.to_pointer(),
                rule: Rule::Pattern,
                expected: format!("a string matching {pattern:?}"),
                found: crate::schema::validate::preview_str(self),
            });
        }
    }
}

impl<T: PatternTarget> PatternTarget for Option<T> {
    fn apply_pattern(node: &mut Value, pattern: &'static str) {
        T::apply_pattern(node, pattern)
    }
    fn check_pattern(&self, pattern: &'static str, path: &Path<'_>, out: &mut Vec<Violation>) {
        if let Some(inner) = self {
            inner.check_pattern(pattern, path, out);
        }
    }
}

/// A field type `#[enum_values]` applies to: a `String`, or an `Option`/`Vec`/`Box` of one.
#[diagnostic::on_unimplemented(
    message = "#[enum_values] applies to strings, found `{Self}`",
    label = "not a String, nor an Option/Vec of String",
    note = "use #[enum_values(..)] on String fields; for numbers use #[range(min, max)]"
)]
pub trait EnumTarget {
    /// Writes the allowed values into this type's schema node.
    fn apply_enum(node: &mut Value, allowed: &[&str]);
    /// Appends a violation for each string in `self` that is not allowed.
    fn check_enum(&self, allowed: &[&str], path: &Path<'_>, out: &mut Vec<Violation>);
}

/// What an enum allows, in words: `one of "a", "b"`.
pub fn describe_enum(allowed: &[&str]) -> String {
    let quoted: Vec<String> = allowed.iter().map(|v| format!("{v:?}")).collect();
    format!("one of {}", quoted.join(", "))
}

macro_rules! integer_schema {
    ($($t:ty),*) => {$(
        impl SchemaType for $t {
            fn json_schema(_: &mut SchemaGen) -> Value {
                json!({ "type": "integer", "minimum": <$t>::MIN, "maximum": <$t>::MAX })
            }
        }
        impl RangeTarget for $t {
            fn apply_range(node: &mut Value, range: Range) {
                range.apply(node)
            }
            #[inline]
            fn check_range(&self, range: Range, path: &Path<'_>, out: &mut Vec<Violation>) {
                check_num(Num::Int(*self as i128), range, path, out)
            }
        }
    )*};
}
integer_schema!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

// 128-bit integers: JSON parsers commonly read integers beyond 64 bits as floats, so their full
// bounds cannot be written exactly; only the sign bound is.
impl SchemaType for u128 {
    fn json_schema(_: &mut SchemaGen) -> Value {
        json!({ "type": "integer", "minimum": 0 })
    }
}
impl SchemaType for i128 {
    fn json_schema(_: &mut SchemaGen) -> Value {
        json!({ "type": "integer" })
    }
}
impl RangeTarget for i128 {
    fn apply_range(node: &mut Value, range: Range) {
        range.apply(node)
    }
    fn check_range(&self, range: Range, path: &Path<'_>, out: &mut Vec<Violation>) {
        check_num(Num::Int(*self), range, path, out)
    }
}
impl RangeTarget for u128 {
    fn apply_range(node: &mut Value, range: Range) {
        range.apply(node)
    }
    fn check_range(&self, range: Range, path: &Path<'_>, out: &mut Vec<Violation>) {
        // Beyond i128::MAX every bound a literal can write is exceeded.
        let n = i128::try_from(*self).map_or(Num::Float(*self as f64), Num::Int);
        check_num(n, range, path, out)
    }
}

macro_rules! float_schema {
    ($($t:ty),*) => {$(
        impl SchemaType for $t {
            fn json_schema(_: &mut SchemaGen) -> Value {
                json!({ "type": "number" })
            }
        }
        impl RangeTarget for $t {
            fn apply_range(node: &mut Value, range: Range) {
                range.apply(node)
            }
            #[inline]
            fn check_range(&self, range: Range, path: &Path<'_>, out: &mut Vec<Violation>) {
                check_num(Num::Float(f64::from(*self)), range, path, out)
            }
        }
    )*};
}
float_schema!(f32, f64);

/// Inlined into the caller's `validate_at`, where the bounds are constants: a number in its
/// range costs a comparison or two there.
#[inline]
fn check_num(n: Num, range: Range, path: &Path<'_>, out: &mut Vec<Violation>) {
    // NaN compares false both ways, so it is outside every bounded range.
    let inside = range.min.is_none_or(|b| n.ge(b)) && range.max.is_none_or(|b| n.le(b));
    if !inside {
        out_of_range(n, range, path, out);
    }
}

#[cold]
#[inline(never)]
fn out_of_range(n: Num, range: Range, path: &Path<'_>, out: &mut Vec<Violation>) {
    out.push(Violation {
        path: path.to_pointer(),
        rule: crate::schema::validate::Rule::Range,
        expected: range.describe(),
        found: n.to_string(),
    });
}

impl SchemaType for bool {
    fn json_schema(_: &mut SchemaGen) -> Value {
        json!({ "type": "boolean" })
    }
}

impl SchemaType for str {
    fn json_schema(_: &mut SchemaGen) -> Value {
        json!({ "type": "string" })
    }
}

impl EnumTarget for str {
    fn apply_enum(node: &mut Value, allowed: &[&str]) {
        if let Value::Object(map) = node {
            map.insert(
                "enum".into(),
                allowed.iter().map(|v| Value::from(*v)).collect(),
            );
        }
    }
    #[inline]
    fn check_enum(&self, allowed: &[&str], path: &Path<'_>, out: &mut Vec<Violation>) {
        if !allowed.contains(&self) {
            not_in_enum(self, allowed, path, out);
        }
    }
}

#[cold]
#[inline(never)]
fn not_in_enum(found: &str, allowed: &[&str], path: &Path<'_>, out: &mut Vec<Violation>) {
    out.push(Violation {
        path: path.to_pointer(),
        rule: crate::schema::validate::Rule::Enum,
        expected: describe_enum(allowed),
        found: crate::schema::validate::preview_str(found),
    });
}

impl<T: SchemaType> SchemaType for Option<T> {
    fn json_schema(gen: &mut SchemaGen) -> Value {
        make_nullable(T::json_schema(gen))
    }
    fn validate_nested(&self, path: &Path<'_>, out: &mut Vec<Violation>) {
        if let Some(inner) = self {
            inner.validate_nested(path, out);
        }
    }
}

impl<T: RangeTarget> RangeTarget for Option<T> {
    fn apply_range(node: &mut Value, range: Range) {
        T::apply_range(node, range)
    }
    fn check_range(&self, range: Range, path: &Path<'_>, out: &mut Vec<Violation>) {
        if let Some(inner) = self {
            inner.check_range(range, path, out);
        }
    }
}

impl<T: EnumTarget> EnumTarget for Option<T> {
    fn apply_enum(node: &mut Value, allowed: &[&str]) {
        T::apply_enum(node, allowed);
        // The inner type wrote a non-null enum; null stays allowed.
        if let Some(Value::Array(values)) = node.get_mut("enum") {
            values.push(Value::Null);
        }
    }
    fn check_enum(&self, allowed: &[&str], path: &Path<'_>, out: &mut Vec<Violation>) {
        if let Some(inner) = self {
            inner.check_enum(allowed, path, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_carry_their_type_bounds() {
        let mut g = SchemaGen::new();
        assert_eq!(
            u32::json_schema(&mut g),
            json!({"type": "integer", "minimum": 0, "maximum": 4294967295u64})
        );
        assert_eq!(
            i8::json_schema(&mut g),
            json!({"type": "integer", "minimum": -128, "maximum": 127})
        );
    }

    #[test]
    fn range_keeps_the_tighter_bound() {
        let mut node = json!({"type": "integer", "minimum": 0, "maximum": 255});
        Range {
            min: Some(Bound::Int(-5)),
            max: Some(Bound::Int(10)),
        }
        .apply(&mut node);
        assert_eq!(
            node,
            json!({"type": "integer", "minimum": 0, "maximum": 10})
        );
    }

    #[test]
    fn option_of_enum_allows_null() {
        let mut g = SchemaGen::new();
        let mut node = <Option<String>>::json_schema(&mut g);
        <Option<String> as EnumTarget>::apply_enum(&mut node, &["a", "b"]);
        assert_eq!(
            node,
            json!({"type": ["string", "null"], "enum": ["a", "b", null]})
        );
    }

    #[test]
    fn nullable_ref_becomes_any_of() {
        let node = make_nullable(json!({"$ref": "#/$defs/node"}));
        assert_eq!(
            node,
            json!({"anyOf": [{"$ref": "#/$defs/node"}, {"type": "null"}]})
        );
        // Idempotent: Option<Option<T>> reads the same null.
        assert_eq!(make_nullable(node.clone()), node);
        let twice = make_nullable(make_nullable(json!({"type": "string"})));
        assert_eq!(twice, json!({"type": ["string", "null"]}));
    }

    #[test]
    fn range_check_on_vec_reports_each_index() {
        let values = vec![0.5, 1.5, -0.1, f64::NAN];
        let mut out = Vec::new();
        let range = Range {
            min: Some(Bound::Float(0.0)),
            max: Some(Bound::Int(1)),
        };
        values.check_range(range, &Path::root(), &mut out);
        let paths: Vec<&str> = out.iter().map(|v| v.path.as_str()).collect();
        assert_eq!(paths, ["/1", "/2", "/3"]);
        assert_eq!(out[0].expected, "a number in [0.0, 1]");
    }

    #[test]
    fn large_integers_compare_exactly() {
        let mut out = Vec::new();
        let range = Range {
            min: None,
            max: Some(Bound::Int(9_007_199_254_740_992)),
        };
        9_007_199_254_740_993u64.check_range(range, &Path::root(), &mut out);
        assert_eq!(
            out.len(),
            1,
            "2^53 + 1 is above 2^53 even though f64 cannot tell"
        );
    }
}
