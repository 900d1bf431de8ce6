//! Schema-aware coercion: fits a JSON value to a schema given as data, within a policy.
//!
//! It reads the schema (`type`, `enum`, `properties`, `required`, `additionalProperties`,
//! `items`, `anyOf`, local `$ref`), so a derived type's schema and a schema loaded at run time
//! are served alike. Each change is a [`Recovery`] at a JSON pointer; what the policy does not
//! allow is left for validation to report.
//!
//! ```
//! use serde_json::json;
//! use structured_runtime::read::coerce::{coerce, CoercePolicy, RecoveryKind};
//!
//! let schema = json!({
//!     "type": "object",
//!     "properties": {
//!         "level": {"type": "string", "enum": ["low", "high"]},
//!         "score": {"type": "number"},
//!         "tags": {"type": "array", "items": {"type": "string"}},
//!         "note": {"type": ["string", "null"]}
//!     },
//!     "required": ["level", "score", "tags", "note"],
//!     "additionalProperties": false
//! });
//! let mut value = json!({"level": "HIGH", "score": "0.7", "tags": "urgent", "extra": 1});
//! let recoveries = coerce(&mut value, &schema, &CoercePolicy::default());
//! assert_eq!(value, json!({"level": "high", "score": 0.7, "tags": ["urgent"], "note": null}));
//! assert_eq!(recoveries.len(), 5);
//! assert!(recoveries.iter().any(|r| r.kind == RecoveryKind::DroppedUnknownKey && r.path == "/extra"));
//! ```

use std::fmt;
use std::sync::LazyLock;

use serde_json::{Map, Number, Value};

use crate::schema::validate::Path;
use crate::schema::validation::check_part;

/// Schema nesting (plus `$ref` hops) followed before giving up on a branch.
const MAX_DEPTH: usize = 160;

/// What coercion may change. [`CoercePolicy::default`] allows the changes that cannot invent
/// content; [`CoercePolicy::lenient`] adds the seed's recovery strategies, which can;
/// [`CoercePolicy::strict`] allows nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoercePolicy {
    /// Drop keys the schema does not declare (`additionalProperties: false`).
    pub drop_unknown_keys: bool,
    /// Match keys ignoring case (`"Severity"` → `"severity"`) when the match is unique.
    pub keys_ignore_case: bool,
    /// Give a missing property whose schema allows `null` the value `null`.
    pub fill_optional_null: bool,
    /// Read numbers from numeric strings (`"0.7"`), and integers from integral floats (`3.0`).
    pub numbers_from_strings: bool,
    /// Read booleans from `"true"` / `"false"` in any case.
    pub bools_from_strings: bool,
    /// Write numbers and booleans found where a string belongs as strings.
    pub scalars_to_strings: bool,
    /// Wrap a single item found where an array belongs into an array.
    pub wrap_single_item: bool,
    /// Match enum values ignoring case, spaces, `-` and `_` (`"Very High"` → `"very_high"`),
    /// when exactly one value matches.
    pub enum_ignore_case: bool,
    /// Extra spellings for enum values: `(alias, value)`, compared like `enum_ignore_case`.
    pub enum_aliases: Vec<(String, String)>,
    /// A missing required property gets its type's default (`""`, `0`, `false`, `[]`, an object
    /// of defaults). Invents content: off unless lenient.
    pub missing_to_default: bool,
    /// `null` where the schema does not allow it becomes the type's default. Invents content.
    pub null_to_default: bool,
    /// Drop a property that is not required and does not fit its schema. Loses content.
    pub required_only: bool,
}

impl Default for CoercePolicy {
    fn default() -> Self {
        CoercePolicy {
            drop_unknown_keys: true,
            keys_ignore_case: true,
            fill_optional_null: true,
            numbers_from_strings: true,
            bools_from_strings: true,
            scalars_to_strings: false,
            wrap_single_item: true,
            enum_ignore_case: true,
            enum_aliases: Vec::new(),
            missing_to_default: false,
            null_to_default: false,
            required_only: false,
        }
    }
}

impl CoercePolicy {
    /// Nothing is changed: the value must fit as written.
    pub fn strict() -> Self {
        CoercePolicy {
            drop_unknown_keys: false,
            keys_ignore_case: false,
            fill_optional_null: false,
            numbers_from_strings: false,
            bools_from_strings: false,
            scalars_to_strings: false,
            wrap_single_item: false,
            enum_ignore_case: false,
            enum_aliases: Vec::new(),
            missing_to_default: false,
            null_to_default: false,
            required_only: false,
        }
    }

    /// Everything, including the strategies that invent or drop content (each one a warning).
    pub fn lenient() -> Self {
        CoercePolicy {
            scalars_to_strings: true,
            missing_to_default: true,
            null_to_default: true,
            required_only: true,
            ..CoercePolicy::default()
        }
    }

    /// Adds an alias for an enum value.
    pub fn with_alias(mut self, alias: impl Into<String>, value: impl Into<String>) -> Self {
        self.enum_aliases.push((alias.into(), value.into()));
        self
    }
}

/// One change made to fit the schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovery {
    /// What was done.
    pub kind: RecoveryKind,
    /// JSON pointer of the value changed (of the key, for keys).
    pub path: String,
    /// What was there before, shortened.
    pub was: String,
}

impl fmt::Display for Recovery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = if self.path.is_empty() {
            "(root)"
        } else {
            &self.path
        };
        write!(f, "{path}: {} (was {})", self.kind, self.was)
    }
}

/// The changes coercion makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RecoveryKind {
    /// A key the schema does not declare was dropped.
    DroppedUnknownKey,
    /// A key was renamed to the declared key it matches ignoring case.
    RenamedKey,
    /// A missing property that allows `null` became `null`.
    FilledNull,
    /// A missing required property got its type's default.
    DefaultForMissing,
    /// A `null` the schema does not allow became the type's default.
    DefaultForNull,
    /// A number was read from a string.
    NumberFromString,
    /// An integral float became an integer.
    IntegerFromFloat,
    /// A boolean was read from a string.
    BoolFromString,
    /// A number or boolean became a string.
    StringFromScalar,
    /// A single item was wrapped into an array.
    WrappedInArray,
    /// An enum value was matched ignoring case or separators.
    EnumIgnoringCase,
    /// An enum value was matched through an alias.
    EnumAlias,
    /// A property that is not required and did not fit was dropped.
    DroppedInvalidOptional,
}

impl RecoveryKind {
    /// Whether this change can put content in the value that the model did not write.
    pub fn invents(self) -> bool {
        matches!(
            self,
            RecoveryKind::DefaultForMissing | RecoveryKind::DefaultForNull
        )
    }
}

impl fmt::Display for RecoveryKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use RecoveryKind::*;
        f.write_str(match self {
            DroppedUnknownKey => "dropped a key the schema does not declare",
            RenamedKey => "matched a key ignoring case",
            FilledNull => "a missing optional property became null",
            DefaultForMissing => "a missing required property got a default",
            DefaultForNull => "a null got a default",
            NumberFromString => "read a number from a string",
            IntegerFromFloat => "read an integer from an integral float",
            BoolFromString => "read a boolean from a string",
            StringFromScalar => "wrote a number or boolean as a string",
            WrappedInArray => "wrapped a single item into an array",
            EnumIgnoringCase => "matched an enum value ignoring case",
            EnumAlias => "matched an enum value through an alias",
            DroppedInvalidOptional => "dropped an optional property that did not fit",
        })
    }
}

/// Fits `value` to `schema` (the root, against which `$ref`s resolve) as far as `policy`
/// allows, and returns every change made. Never fails: what cannot be fitted is left as it is.
pub fn coerce(value: &mut Value, schema: &Value, policy: &CoercePolicy) -> Vec<Recovery> {
    let mut run = Coerce {
        root: schema,
        policy,
        out: Vec::new(),
    };
    run.node(schema, value, &Path::root(), 0);
    run.out
}

struct Coerce<'a> {
    root: &'a Value,
    policy: &'a CoercePolicy,
    out: Vec<Recovery>,
}

impl<'a> Coerce<'a> {
    fn push(&mut self, kind: RecoveryKind, path: &Path<'_>, was: &Value) {
        self.out.push(Recovery {
            kind,
            path: path.to_pointer(),
            was: crate::schema::validate::preview_json(was),
        });
    }

    /// Follows `$ref`s to the schema that says what the value is.
    fn resolve(&self, mut schema: &'a Value, depth: &mut usize) -> &'a Value {
        while let Some(target) = schema
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix('#'))
            .and_then(|p| self.root.pointer(p))
        {
            *depth += 1;
            if *depth > MAX_DEPTH {
                break;
            }
            schema = target;
        }
        schema
    }

    fn node(&mut self, schema: &'a Value, value: &mut Value, path: &Path<'_>, mut depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        let schema = self.resolve(schema, &mut depth);
        if let Some(Value::Array(branches)) = schema.get("anyOf") {
            if let Some(branch) = self.pick_branch(branches, value) {
                self.node(branch, value, path, depth + 1);
            }
            return;
        }
        if value.is_null() {
            if !allows_null(schema) && self.policy.null_to_default {
                if let Some(default) = self.default_for(schema, depth) {
                    self.push(RecoveryKind::DefaultForNull, path, value);
                    *value = default;
                }
            }
            return;
        }
        let types = types_of(schema);
        let wants = |t: &str| types.contains(&t);
        if wants("array") && !value.is_array() && self.policy.wrap_single_item {
            self.push(RecoveryKind::WrappedInArray, path, value);
            let item = std::mem::take(value);
            *value = Value::Array(vec![item]);
        }
        self.scalar(schema, &types, value, path);
        match value {
            Value::Array(items) => {
                if let Some(item_schema) = schema.get("items").filter(|s| s.is_object()) {
                    for (i, item) in items.iter_mut().enumerate() {
                        self.node(item_schema, item, &path.index(i), depth + 1);
                    }
                }
            }
            Value::Object(map) => self.object(schema, map, path, depth),
            _ => {}
        }
    }

    /// For `anyOf` (how `Option<Struct>` is written): the branch whose type the value has, or
    /// the only branch that is not `null`.
    fn pick_branch(&self, branches: &'a [Value], value: &Value) -> Option<&'a Value> {
        if value.is_null() {
            return None;
        }
        let mut depth = 0;
        let resolved: Vec<&'a Value> = branches
            .iter()
            .map(|b| self.resolve(b, &mut depth))
            .collect();
        let matching = resolved
            .iter()
            .position(|b| types_of(b).iter().any(|t| type_is(t, value)));
        if let Some(i) = matching {
            return branches.get(i);
        }
        let mut non_null = branches
            .iter()
            .zip(&resolved)
            .filter(|(_, r)| types_of(r) != ["null"]);
        match (non_null.next(), non_null.next()) {
            (Some((b, _)), None) => Some(b),
            _ => None,
        }
    }

    fn scalar(&mut self, schema: &Value, types: &[&str], value: &mut Value, path: &Path<'_>) {
        let wants = |t: &str| types.contains(&t);
        if types.is_empty() || types.iter().any(|t| type_is(t, value)) {
            self.enum_value(schema, value, path);
            return;
        }
        let policy = self.policy;
        let replacement = match &*value {
            Value::String(s)
                if policy.numbers_from_strings && (wants("number") || wants("integer")) =>
            {
                number_from_str(s.trim(), wants("number"))
                    .map(|n| (n, RecoveryKind::NumberFromString))
            }
            Value::Number(n) if policy.numbers_from_strings && wants("integer") => n
                .as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
                .map(|f| {
                    (
                        Value::Number(Number::from(f as i64)),
                        RecoveryKind::IntegerFromFloat,
                    )
                }),
            Value::String(s) if policy.bools_from_strings && wants("boolean") => {
                match s.trim().to_ascii_lowercase().as_str() {
                    "true" => Some((Value::Bool(true), RecoveryKind::BoolFromString)),
                    "false" => Some((Value::Bool(false), RecoveryKind::BoolFromString)),
                    _ => None,
                }
            }
            Value::Number(n) if policy.scalars_to_strings && wants("string") => {
                Some((Value::String(n.to_string()), RecoveryKind::StringFromScalar))
            }
            Value::Bool(b) if policy.scalars_to_strings && wants("string") => {
                Some((Value::String(b.to_string()), RecoveryKind::StringFromScalar))
            }
            _ => None,
        };
        if let Some((new, kind)) = replacement {
            self.push(kind, path, value);
            *value = new;
        }
        self.enum_value(schema, value, path);
    }

    /// A string not among the `enum` values matched ignoring case, or through an alias.
    fn enum_value(&mut self, schema: &Value, value: &mut Value, path: &Path<'_>) {
        let (Some(Value::Array(allowed)), Value::String(s)) = (schema.get("enum"), &*value) else {
            return;
        };
        if allowed.iter().any(|a| a.as_str() == Some(s)) {
            return;
        }
        let wanted = normalize(s);
        let mut found = None;
        if self.policy.enum_ignore_case {
            let mut hits = allowed
                .iter()
                .filter_map(Value::as_str)
                .filter(|a| normalize(a) == wanted);
            if let (Some(hit), None) = (hits.next(), hits.next()) {
                found = Some((hit.to_owned(), RecoveryKind::EnumIgnoringCase));
            }
        }
        if found.is_none() {
            found = self
                .policy
                .enum_aliases
                .iter()
                .find(|(alias, target)| {
                    normalize(alias) == wanted && allowed.iter().any(|a| a.as_str() == Some(target))
                })
                .map(|(_, target)| (target.clone(), RecoveryKind::EnumAlias));
        }
        if let Some((hit, kind)) = found {
            self.push(kind, path, value);
            *value = Value::String(hit);
        }
    }

    fn object(
        &mut self,
        schema: &'a Value,
        map: &mut Map<String, Value>,
        path: &Path<'_>,
        depth: usize,
    ) {
        static NONE: LazyLock<Map<String, Value>> = LazyLock::new(Map::new);
        let properties = schema
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&NONE);
        let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
        if self.policy.keys_ignore_case {
            self.rename_keys(properties, map, path);
        }
        if closed && self.policy.drop_unknown_keys {
            let unknown: Vec<String> = map
                .keys()
                .filter(|k| !properties.contains_key(*k))
                .cloned()
                .collect();
            for key in unknown {
                if let Some(old) = map.shift_remove(&key) {
                    self.push(RecoveryKind::DroppedUnknownKey, &path.key(&key), &old);
                }
            }
        }
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for (key, prop_schema) in properties {
            let child = path.key(key);
            match map.get_mut(key) {
                Some(v) => self.node(prop_schema, v, &child, depth + 1),
                None if required.contains(&key.as_str()) => {
                    let mut d = depth;
                    let resolved = self.resolve(prop_schema, &mut d);
                    if allows_null(resolved) && self.policy.fill_optional_null {
                        self.push(RecoveryKind::FilledNull, &child, &Value::Null);
                        map.insert(key.clone(), Value::Null);
                    } else if self.policy.missing_to_default {
                        if let Some(default) = self.default_for(prop_schema, depth) {
                            self.push(RecoveryKind::DefaultForMissing, &child, &Value::Null);
                            map.insert(key.clone(), default);
                        }
                    }
                }
                None => {}
            }
        }
        if self.policy.required_only {
            let optional: Vec<String> = map
                .keys()
                .filter(|k| !required.contains(&k.as_str()))
                .cloned()
                .collect();
            for key in optional {
                let fits = match (properties.get(&key), map.get(&key)) {
                    (Some(s), Some(v)) => check_part(self.root, s, v).is_empty(),
                    _ => true,
                };
                if !fits {
                    if let Some(old) = map.shift_remove(&key) {
                        self.push(RecoveryKind::DroppedInvalidOptional, &path.key(&key), &old);
                    }
                }
            }
        }
    }

    /// Keys that match a declared property only ignoring case are renamed to it.
    fn rename_keys(
        &mut self,
        properties: &Map<String, Value>,
        map: &mut Map<String, Value>,
        path: &Path<'_>,
    ) {
        let renames: Vec<(String, String)> = map
            .keys()
            .filter(|k| !properties.contains_key(*k))
            .filter_map(|k| {
                let mut hits = properties.keys().filter(|p| p.eq_ignore_ascii_case(k));
                match (hits.next(), hits.next()) {
                    (Some(p), None) if !map.contains_key(p) => Some((k.clone(), p.clone())),
                    _ => None,
                }
            })
            .collect();
        for (from, to) in renames {
            if let Some(v) = map.shift_remove(&from) {
                self.push(
                    RecoveryKind::RenamedKey,
                    &path.key(&from),
                    &Value::String(from.clone()),
                );
                map.insert(to, v);
            }
        }
    }

    /// The default of a type: `""`, `0`, `false`, `[]`, `null` where allowed, an object of its
    /// required properties' defaults. `None` for an enum (no value is more right than another).
    fn default_for(&self, schema: &'a Value, mut depth: usize) -> Option<Value> {
        if depth > MAX_DEPTH {
            return None;
        }
        let schema = self.resolve(schema, &mut depth);
        if allows_null(schema) {
            return Some(Value::Null);
        }
        if schema.get("enum").is_some() || schema.get("const").is_some() {
            return None;
        }
        if let Some(Value::Array(branches)) = schema.get("anyOf") {
            return branches
                .first()
                .and_then(|b| self.default_for(b, depth + 1));
        }
        let types = types_of(schema);
        Some(match types.first().copied() {
            Some("string") => Value::String(String::new()),
            Some("number" | "integer") => Value::Number(0.into()),
            Some("boolean") => Value::Bool(false),
            Some("array") => Value::Array(Vec::new()),
            Some("object") => {
                let mut map = Map::new();
                let required = schema.get("required").and_then(Value::as_array);
                let properties = schema.get("properties").and_then(Value::as_object);
                if let (Some(required), Some(properties)) = (required, properties) {
                    for key in required.iter().filter_map(Value::as_str) {
                        let default = properties
                            .get(key)
                            .and_then(|s| self.default_for(s, depth + 1))?;
                        map.insert(key.to_owned(), default);
                    }
                }
                Value::Object(map)
            }
            _ => return None,
        })
    }
}

fn types_of(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

fn allows_null(schema: &Value) -> bool {
    types_of(schema).contains(&"null")
        || schema
            .get("enum")
            .and_then(Value::as_array)
            .is_some_and(|e| e.contains(&Value::Null))
        || schema
            .get("anyOf")
            .and_then(Value::as_array)
            .is_some_and(|bs| bs.iter().any(|b| types_of(b) == ["null"]))
}

fn type_is(t: &str, value: &Value) -> bool {
    match (t, value) {
        ("string", Value::String(_))
        | ("boolean", Value::Bool(_))
        | ("array", Value::Array(_))
        | ("object", Value::Object(_))
        | ("null", Value::Null)
        | ("number", Value::Number(_)) => true,
        ("integer", Value::Number(n)) => n.is_i64() || n.is_u64(),
        _ => false,
    }
}

fn number_from_str(s: &str, float_ok: bool) -> Option<Value> {
    if let Ok(i) = s.parse::<i64>() {
        return Some(Value::Number(i.into()));
    }
    let f = s.parse::<f64>().ok().filter(|f| f.is_finite())?;
    if !float_ok {
        return (f.fract() == 0.0 && f.abs() < 9.0e15).then(|| Value::Number((f as i64).into()));
    }
    Number::from_f64(f).map(Value::Number)
}

/// Lowercase, with spaces, `-` and `_` removed.
fn normalize(s: &str) -> String {
    s.trim()
        .chars()
        .filter(|c| !matches!(c, ' ' | '-' | '_'))
        .flat_map(char::to_lowercase)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(schema: Value, mut value: Value, policy: CoercePolicy) -> (Value, Vec<RecoveryKind>) {
        let out = coerce(&mut value, &schema, &policy);
        (value, out.into_iter().map(|r| r.kind).collect())
    }

    #[test]
    fn strict_changes_nothing() {
        let schema = json!({"type": "object", "properties": {"n": {"type": "number"}},
            "required": ["n"], "additionalProperties": false});
        let (v, r) = run(schema, json!({"n": "1", "x": 2}), CoercePolicy::strict());
        assert_eq!(v, json!({"n": "1", "x": 2}));
        assert!(r.is_empty());
    }

    #[test]
    fn numbers_integers_and_bools_from_strings() {
        let schema = json!({"type": "array", "items": {"anyOf": [
            {"type": "integer"}, {"type": "null"}]}});
        let (v, r) = run(
            schema,
            json!(["3", 4.0, " 5 ", "x"]),
            CoercePolicy::default(),
        );
        assert_eq!(v, json!([3, 4, 5, "x"]));
        assert_eq!(r.len(), 3);
        let schema = json!({"type": "boolean"});
        assert_eq!(
            run(schema, json!("TRUE"), CoercePolicy::default()).0,
            json!(true)
        );
    }

    #[test]
    fn enums_ignoring_case_and_separators_and_by_alias() {
        let schema = json!({"type": "string", "enum": ["very_high", "low"]});
        assert_eq!(
            run(schema.clone(), json!("Very High"), CoercePolicy::default()).0,
            json!("very_high")
        );
        let policy = CoercePolicy::default().with_alias("minimal", "low");
        let (v, r) = run(schema.clone(), json!("Minimal"), policy);
        assert_eq!((v, r), (json!("low"), vec![RecoveryKind::EnumAlias]));
        assert_eq!(
            run(schema, json!("medium"), CoercePolicy::lenient()).0,
            json!("medium")
        );
    }

    #[test]
    fn ambiguous_enum_matches_are_left_alone() {
        let schema = json!({"type": "string", "enum": ["a-b", "a_b"]});
        assert_eq!(
            run(schema, json!("A B"), CoercePolicy::default()).0,
            json!("A B")
        );
    }

    #[test]
    fn missing_and_null_get_defaults_only_when_lenient() {
        let schema = json!({"type": "object", "properties": {
            "s": {"type": "string"}, "n": {"type": "number"}, "o": {"$ref": "#/$defs/O"},
            "e": {"type": "string", "enum": ["x"]}},
            "required": ["s", "n", "o", "e"], "additionalProperties": false,
            "$defs": {"O": {"type": "object", "properties": {"b": {"type": "boolean"}},
                "required": ["b"], "additionalProperties": false}}});
        let (v, _) = run(schema.clone(), json!({"n": null}), CoercePolicy::default());
        assert_eq!(v, json!({"n": null}));
        let (v, r) = run(schema, json!({"n": null}), CoercePolicy::lenient());
        assert_eq!(
            v,
            json!({"n": 0, "s": "", "o": {"b": false}}),
            "no default for an enum"
        );
        let expected = [
            RecoveryKind::DefaultForMissing,
            RecoveryKind::DefaultForNull,
            RecoveryKind::DefaultForMissing,
        ];
        assert_eq!(r, expected, "in property order: s, n, o");
    }

    #[test]
    fn keys_matched_ignoring_case_and_nested_paths_reported() {
        let schema = json!({"type": "object", "properties": {"items": {"type": "array",
            "items": {"type": "object", "properties": {"n": {"type": "number"}},
            "required": ["n"], "additionalProperties": false}}},
            "required": ["items"], "additionalProperties": false});
        let mut value = json!({"Items": [{"n": "2", "junk": true}]});
        let out = coerce(&mut value, &schema, &CoercePolicy::default());
        assert_eq!(value, json!({"items": [{"n": 2}]}));
        let paths: Vec<&str> = out.iter().map(|r| r.path.as_str()).collect();
        assert_eq!(paths, ["/Items", "/items/0/junk", "/items/0/n"]);
    }

    #[test]
    fn required_only_drops_an_optional_property_that_does_not_fit() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "string"},
            "b": {"type": "number"}}, "required": ["a"]});
        let (v, r) = run(
            schema,
            json!({"a": "x", "b": "nope"}),
            CoercePolicy::lenient(),
        );
        assert_eq!(v, json!({"a": "x"}));
        assert_eq!(r, vec![RecoveryKind::DroppedInvalidOptional]);
    }

    #[test]
    fn recursive_schemas_stop() {
        let schema = json!({"$ref": "#"});
        let mut v = json!({});
        assert!(coerce(&mut v, &schema, &CoercePolicy::lenient()).is_empty());
    }
}
