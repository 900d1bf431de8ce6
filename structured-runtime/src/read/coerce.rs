//! Schema-aware coercion: fits a JSON value to a schema given as data, within a policy.
//!
//! It reads the schema through the one node view (`type`, `enum`, `properties`, `required`,
//! `additionalProperties`, `items`, `anyOf`, local `$ref`), so a derived type's schema and a
//! schema loaded at run time are served alike. Each change is a [`Recovery`] at a JSON pointer;
//! what the policy does not allow is left for validation to report. Whether a value fits is the
//! validator's verdict, never the walk's.
//!
//! ```
//! use serde_json::json;
//! use structured_runtime::read::coerce::{coerce, CoercePolicy, RecoveryKind};
//! use structured_runtime::ResponseSchema;
//!
//! let schema = ResponseSchema::new("t", json!({
//!     "type": "object",
//!     "properties": {
//!         "level": {"type": "string", "enum": ["low", "high"]},
//!         "score": {"type": "number"},
//!         "tags": {"type": "array", "items": {"type": "string"}},
//!         "note": {"type": ["string", "null"]}
//!     },
//!     "required": ["level", "score", "tags", "note"],
//!     "additionalProperties": false
//! }))?;
//! let mut value = json!({"level": "HIGH", "score": "0.7", "tags": "urgent", "extra": 1});
//! let recoveries = coerce(&mut value, &schema, &CoercePolicy::default());
//! assert_eq!(value, json!({"level": "high", "score": 0.7, "tags": ["urgent"], "note": null}));
//! assert_eq!(recoveries.len(), 5);
//! assert!(recoveries.iter().any(|r| r.kind == RecoveryKind::DroppedUnknownKey && r.path == "/extra"));
//! # Ok::<(), structured_runtime::SchemaError>(())
//! ```

use std::fmt;

use serde_json::{Map, Number, Value};

use crate::schema::enum_index::loose;
use crate::schema::node::{Additional, JsonType, Node, Types};
use crate::schema::validate::preview_json;
use crate::schema::{Path, Pointer, ResponseSchema};

/// Schema nodes a default is built from at most: a schema whose definitions refer to each
/// other twice over would otherwise describe an exponentially large default.
const DEFAULT_BUDGET: usize = 10_000;

/// What coercion may change. [`CoercePolicy::default`] allows the changes that cannot invent
/// content; [`CoercePolicy::lenient`] adds the recoveries that can (defaults for missing or null values, dropping what does not fit);
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
    /// Where the value changed is (the key, for keys).
    pub path: Pointer,
    /// What was there before, shortened.
    pub was: String,
}

impl fmt::Display for Recovery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            RecoveryKind::Unlisted => write!(f, "{}: {}", self.kind, self.was),
            _ => write!(f, "{}: {} (was {})", self.path, self.kind, self.was),
        }
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
    /// The value was written in the schema's own shape where the provider was sent another (a
    /// map as a plain object instead of a list of `{key, value}` entries, a root not wrapped):
    /// read as it is, but not what the enforced schema allows.
    NotInSentShape,
    /// More changes than one reading lists ([`MAX_LISTED_RECOVERIES`]) were made: the rest are
    /// counted here (`was` says how many), not listed one by one.
    Unlisted,
}

impl RecoveryKind {
    /// Whether this change can put content in the value that the model did not write (for
    /// [`RecoveryKind::Unlisted`]: whether it may have, as the changes it counts are not known).
    pub fn invents(self) -> bool {
        matches!(
            self,
            RecoveryKind::DefaultForMissing | RecoveryKind::DefaultForNull | RecoveryKind::Unlisted
        )
    }
}

/// Changes one reading lists at most; the rest are counted into one [`RecoveryKind::Unlisted`]
/// entry at the end (as the repairer counts its repairs past its own cap), so the report of a
/// huge answer in which every item was fitted does not outgrow the answer.
pub const MAX_LISTED_RECOVERIES: usize = 1000;

/// Recoveries as they are listed: at most [`MAX_LISTED_RECOVERIES`], the rest counted.
#[derive(Debug, Default)]
pub(crate) struct Listed {
    pub(crate) list: Vec<Recovery>,
    pub(crate) unlisted: usize,
}

impl Listed {
    /// Adds one recovery, or counts it when the list is full.
    pub(crate) fn push(&mut self, recovery: Recovery) {
        if self.list.len() < MAX_LISTED_RECOVERIES {
            self.list.push(recovery);
        } else {
            self.unlisted += 1;
        }
    }

    /// Adds another list's recoveries and its count.
    pub(crate) fn extend(&mut self, more: Listed) {
        self.unlisted += more.unlisted;
        for recovery in more.list {
            self.push(recovery);
        }
    }

    /// Whether anything was listed or counted.
    pub(crate) fn is_empty(&self) -> bool {
        self.list.is_empty() && self.unlisted == 0
    }

    /// The list, with the count of the rest as its last entry when there is one.
    pub(crate) fn into_vec(mut self) -> Vec<Recovery> {
        if self.unlisted > 0 {
            self.list.push(Recovery {
                kind: RecoveryKind::Unlisted,
                path: Pointer::root(),
                was: format!("{} more", self.unlisted),
            });
        }
        self.list
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
            NotInSentShape => "written in the schema's own shape, not the shape sent (a map as an object instead of {key, value} entries, or a root not wrapped)",
            Unlisted => "made more changes of the kinds listed, not listed one by one",
        })
    }
}

/// Fits `value` to `schema` as far as `policy` allows, and returns every change made. Never
/// fails: what cannot be fitted is left as it is, for validation to report.
pub fn coerce(value: &mut Value, schema: &ResponseSchema, policy: &CoercePolicy) -> Vec<Recovery> {
    coerce_with(value, schema, policy, false).into_vec()
}

/// [`coerce`], where a missing or null value the schema gives a choice of (an `enum`, a
/// `const`) takes the first value allowed: for the defaults policy's last resort, which says
/// every field it filled.
pub(crate) fn coerce_choosing(
    value: &mut Value,
    schema: &ResponseSchema,
    policy: &CoercePolicy,
) -> Vec<Recovery> {
    coerce_with(value, schema, policy, true).into_vec()
}

/// [`coerce`] for a part of a value: `value` sits at `path` in a larger one and `node` is its
/// schema in `schema`. Each recovery's pointer is from the larger value's root. What the policy's
/// `required_only` drops is judged on the whole value, so it is not applied here.
pub(crate) fn coerce_at(
    value: &mut Value,
    schema: &ResponseSchema,
    node: Node<'_>,
    path: &Path<'_>,
    policy: &CoercePolicy,
) -> Listed {
    let mut run = Coerce {
        policy,
        schema,
        out: Listed::default(),
        aliases: schema.key_aliases(),
        choose: false,
    };
    run.node(node, value, path);
    run.out
}

/// Whether coercion may rename member `key` of an object at `node`, a member the object does
/// not declare, to a declared name (by an alias, or ignoring case: see `rename_keys`); only the
/// whole object then shows what the member becomes.
pub(crate) fn may_rename(
    schema: &ResponseSchema,
    node: Node<'_>,
    key: &str,
    policy: &CoercePolicy,
) -> bool {
    policy.keys_ignore_case
        && (schema
            .key_aliases()
            .iter()
            .any(|(alias, name)| alias == key && node.property(name).is_some())
            || node
                .properties()
                .any(|(name, _)| name.eq_ignore_ascii_case(key)))
}

fn coerce_with(
    value: &mut Value,
    schema: &ResponseSchema,
    policy: &CoercePolicy,
    choose: bool,
) -> Listed {
    let root = Node::root(schema.schema());
    let mut run = Coerce {
        policy,
        schema,
        out: Listed::default(),
        aliases: schema.key_aliases(),
        choose,
    };
    run.node(root, value, &Path::root());
    if policy.required_only {
        run.drop_invalid_optional(schema, root, value);
    }
    run.out
}

struct Coerce<'p> {
    policy: &'p CoercePolicy,
    schema: &'p ResponseSchema,
    out: Listed,
    /// `(alias, name)`: other names serde reads for a property (`#[serde(alias)]`).
    aliases: &'p [(String, String)],
    /// A missing value the schema gives a choice of takes the first allowed ([`coerce_choosing`]).
    choose: bool,
}

impl Coerce<'_> {
    fn push(&mut self, kind: RecoveryKind, path: Pointer, was: &Value) {
        if self.out.list.len() >= MAX_LISTED_RECOVERIES {
            self.out.unlisted += 1;
            return;
        }
        self.out.push(Recovery {
            kind,
            path,
            was: preview_json(was),
        });
    }

    fn node(&mut self, node: Node<'_>, value: &mut Value, path: &Path<'_>) {
        let node = node.target();
        if node.too_deep() {
            return;
        }
        if let Some(branches) = node.any_of() {
            if let Some(branch) = Node::branch_for(branches, value) {
                self.node(branch, value, path);
            }
            return;
        }
        if value.is_null() {
            if !node.allows_null() && self.policy.null_to_default {
                let mut budget = DEFAULT_BUDGET;
                if let Some(default) = default_for(node, &mut budget, self.choose) {
                    self.push(RecoveryKind::DefaultForNull, path.to_pointer(), value);
                    *value = default;
                }
            }
            return;
        }
        let types = node.types();
        if types.contains(JsonType::Array) && !value.is_array() && self.policy.wrap_single_item {
            self.push(RecoveryKind::WrappedInArray, path.to_pointer(), value);
            let item = std::mem::take(value);
            *value = Value::Array(vec![item]);
        }
        self.scalar(node, types, value, path);
        match value {
            Value::Array(items) => {
                for (i, item) in items.iter_mut().enumerate() {
                    if let Some(item_schema) = node.item(i) {
                        self.node(item_schema, item, &path.index(i));
                    }
                }
            }
            Value::Object(map) => self.object(node, map, path),
            _ => {}
        }
    }

    fn scalar(&mut self, node: Node<'_>, types: Types, value: &mut Value, path: &Path<'_>) {
        let wants = |t| types.contains(t);
        if types.is_empty() || types.iter().any(|t| type_is(t, value)) {
            self.enum_value(node, value, path);
            return;
        }
        let policy = self.policy;
        let replacement = match &*value {
            Value::String(s)
                if policy.numbers_from_strings
                    && (wants(JsonType::Number) || wants(JsonType::Integer)) =>
            {
                number_from_str(s.trim(), wants(JsonType::Number))
                    .map(|n| (n, RecoveryKind::NumberFromString))
            }
            Value::Number(n) if policy.numbers_from_strings && wants(JsonType::Integer) => n
                .as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
                .map(|f| {
                    (
                        Value::Number(Number::from(f as i64)),
                        RecoveryKind::IntegerFromFloat,
                    )
                }),
            Value::String(s) if policy.bools_from_strings && wants(JsonType::Boolean) => {
                match s.trim().to_ascii_lowercase().as_str() {
                    "true" => Some((Value::Bool(true), RecoveryKind::BoolFromString)),
                    "false" => Some((Value::Bool(false), RecoveryKind::BoolFromString)),
                    _ => None,
                }
            }
            Value::Number(n) if policy.scalars_to_strings && wants(JsonType::String) => {
                Some((Value::String(n.to_string()), RecoveryKind::StringFromScalar))
            }
            Value::Bool(b) if policy.scalars_to_strings && wants(JsonType::String) => {
                Some((Value::String(b.to_string()), RecoveryKind::StringFromScalar))
            }
            _ => None,
        };
        if let Some((new, kind)) = replacement {
            self.push(kind, path.to_pointer(), value);
            *value = new;
        }
        self.enum_value(node, value, path);
    }

    /// A string not among the `enum` values matched ignoring case, or through an alias. Looked
    /// up in the schema's enum index: a lookup, not a pass over the values.
    fn enum_value(&mut self, node: Node<'_>, value: &mut Value, path: &Path<'_>) {
        let (Some(allowed), Value::String(s)) = (node.enum_values(), &*value) else {
            return;
        };
        let spellings = self.schema.enum_spellings(allowed);
        if spellings.contains(s) {
            return;
        }
        let wanted = loose(s);
        let mut found = None;
        if self.policy.enum_ignore_case {
            found = spellings
                .named_loosely(&wanted)
                .map(|hit| (hit.to_owned(), RecoveryKind::EnumIgnoringCase));
        }
        if found.is_none() {
            found = self
                .policy
                .enum_aliases
                .iter()
                .find(|(alias, target)| loose(alias) == wanted && spellings.contains(target))
                .map(|(_, target)| (target.clone(), RecoveryKind::EnumAlias));
        }
        if let Some((hit, kind)) = found {
            self.push(kind, path.to_pointer(), value);
            *value = Value::String(hit);
        }
    }

    fn object(&mut self, node: Node<'_>, map: &mut Map<String, Value>, path: &Path<'_>) {
        if self.policy.keys_ignore_case {
            self.rename_keys(node, map, path);
        }
        if node.closed() && self.policy.drop_unknown_keys {
            // One pass, in order: removing keys one by one would shift the map each time.
            let mut dropped = Vec::new();
            map.retain(|key, value| {
                // (A member a `patternProperties` pattern matches is not unknown.)
                let keep = !node.is_additional(key);
                if !keep {
                    dropped.push((key.clone(), std::mem::take(value)));
                }
                keep
            });
            for (key, old) in dropped {
                self.push(
                    RecoveryKind::DroppedUnknownKey,
                    path.key(&key).to_pointer(),
                    &old,
                );
            }
        }
        // Looked up once per object, not once per missing property.
        let required: std::collections::HashSet<&str> = node.required().collect();
        for (key, prop) in node.properties() {
            let child = path.key(key);
            match map.get_mut(key) {
                Some(v) => self.node(prop, v, &child),
                None if required.contains(key) => {
                    if prop.allows_null() && self.policy.fill_optional_null {
                        self.push(RecoveryKind::FilledNull, child.to_pointer(), &Value::Null);
                        map.insert(key.to_owned(), Value::Null);
                    } else if self.policy.missing_to_default {
                        let mut budget = DEFAULT_BUDGET;
                        if let Some(default) = default_for(prop, &mut budget, self.choose) {
                            self.push(
                                RecoveryKind::DefaultForMissing,
                                child.to_pointer(),
                                &Value::Null,
                            );
                            map.insert(key.to_owned(), default);
                        }
                    }
                }
                None => {}
            }
        }
        // The other members, each by its pattern's schema or `additionalProperties`'
        // ([`Node::member`]: a member several patterns match is left as it is).
        if node.has("patternProperties") || matches!(node.additional(), Additional::Schema(_)) {
            for (key, v) in map.iter_mut() {
                if node.property(key).is_none() {
                    if let Some(schema) = node.member(key) {
                        self.node(schema, v, &path.key(key));
                    }
                }
            }
        }
    }

    /// Keys that name a declared property by one of its aliases (`#[serde(alias)]`), or only
    /// ignoring case, are renamed to it.
    fn rename_keys(&mut self, node: Node<'_>, map: &mut Map<String, Value>, path: &Path<'_>) {
        if map.keys().all(|k| node.property(k).is_some()) {
            return;
        }
        // Each declared name by its lowercase form, once; `None` where two names share it.
        let mut folded: std::collections::HashMap<String, Option<&str>> =
            std::collections::HashMap::new();
        for (p, _) in node.properties() {
            folded
                .entry(p.to_ascii_lowercase())
                .and_modify(|hit| *hit = None)
                .or_insert(Some(p));
        }
        // Rebuilt in one pass, each renamed key where it was. A second key folding to a name
        // already taken keeps its own name (and is dropped as unknown, with its warning).
        let exact: std::collections::HashSet<String> = map
            .keys()
            .filter(|k| node.property(k).is_some())
            .cloned()
            .collect();
        let old = std::mem::take(map);
        for (key, value) in old {
            let alias = self
                .aliases
                .iter()
                .find(|(alias, name)| *alias == key && node.property(name).is_some())
                .map(|(_, name)| name.as_str());
            let declared = alias.or_else(|| match folded.get(&key.to_ascii_lowercase()) {
                Some(Some(p)) => Some(*p),
                _ => None,
            });
            let target = match declared {
                Some(p) if node.property(&key).is_none() && !map.contains_key(p) => {
                    Some(p.to_owned())
                }
                _ => None,
            };
            match target {
                Some(to) if !exact.contains(&to) => {
                    self.push(
                        RecoveryKind::RenamedKey,
                        path.key(&key).to_pointer(),
                        &Value::String(key.clone()),
                    );
                    map.insert(to, value);
                }
                _ => {
                    map.insert(key, value);
                }
            }
        }
    }

    /// Drops each property that is not required where the validator refuses a value at or
    /// inside it: the nearest such property on the way down from the root to the refused value.
    fn drop_invalid_optional(
        &mut self,
        schema: &ResponseSchema,
        root: Node<'_>,
        value: &mut Value,
    ) {
        let Ok(compiled) = schema.compiled() else {
            return;
        };
        if compiled.is_valid(value) {
            return;
        }
        for refused in compiled.refused_at(schema.schema(), value) {
            if let Some(at) = optional_on_the_way(root, value, &refused) {
                if let Some(old) = at.remove(value) {
                    self.push(RecoveryKind::DroppedInvalidOptional, at, &old);
                }
            }
        }
    }
}

/// The pointer of the first property on the way from the root to `target` that its object does
/// not require.
fn optional_on_the_way(root: Node<'_>, value: &Value, target: &Pointer) -> Option<Pointer> {
    let mut node = root;
    let mut at = value;
    let mut here = Pointer::root();
    for segment in target.segments() {
        node = node.target();
        if node.too_deep() {
            return None;
        }
        if let Some(branches) = node.any_of() {
            node = Node::branch_for(branches, at)?.target();
        }
        match at {
            Value::Object(map) => {
                let key = segment.as_ref();
                here.push(key);
                if !node.is_required(key) {
                    return Some(here);
                }
                at = map.get(key)?;
                node = node.member(key)?;
            }
            Value::Array(items) => {
                let i: usize = segment.parse().ok()?;
                here.push_index(i);
                at = items.get(i)?;
                node = node.items()?;
            }
            _ => return None,
        }
    }
    None
}

/// The default of a type: its declared `default`, else `""`, `0` (or the range's bound nearest
/// it), `false`, `[]`, `null` where allowed, an object of its required properties' defaults.
/// `None` for an enum or a constant (no value is more right than another) unless `choose`
/// (then its first value), or when the schema is too large to build one from.
fn default_for(node: Node<'_>, budget: &mut usize, choose: bool) -> Option<Value> {
    let node = node.target();
    if node.too_deep() || *budget == 0 {
        return None;
    }
    *budget -= 1;
    // The schema's own default, when it declares one; else the first value it allows.
    if let Some(declared) = node.get("default") {
        return Some(declared.clone());
    }
    if node.allows_null() {
        return Some(Value::Null);
    }
    if node.has("enum") || node.has("const") {
        // A choice among values is the model's to make: only a caller who asked for one made
        // anyway (the defaults policy, last) gets the first value allowed.
        if !choose {
            return None;
        }
        return node
            .get("const")
            .or_else(|| node.enum_values().and_then(<[Value]>::first))
            .cloned();
    }
    if let Some(mut branches) = node.any_of() {
        return branches.next().and_then(|b| default_for(b, budget, choose));
    }
    Some(match node.types().iter().next() {
        Some(JsonType::String) => Value::String(String::new()),
        Some(JsonType::Number | JsonType::Integer) => {
            // Zero, unless the range leaves it out: then the bound it is nearest.
            let bound = |k: &str| node.get(k).filter(|b| b.is_number()).cloned();
            let min = bound("minimum").filter(|m| m.as_f64().is_some_and(|m| m > 0.0));
            let max = bound("maximum").filter(|m| m.as_f64().is_some_and(|m| m < 0.0));
            min.or(max).unwrap_or_else(|| Value::Number(0.into()))
        }
        Some(JsonType::Boolean) => Value::Bool(false),
        Some(JsonType::Array) => Value::Array(Vec::new()),
        Some(JsonType::Object) => {
            let mut map = Map::new();
            for key in node.required() {
                let default = node
                    .property(key)
                    .and_then(|p| default_for(p, budget, choose))?;
                map.insert(key.to_owned(), default);
            }
            Value::Object(map)
        }
        _ => return None,
    })
}

/// Whether `value` has type `t`, strictly (`1.0` is not an integer here: coercion turns it
/// into one, and says so).
fn type_is(t: JsonType, value: &Value) -> bool {
    match (t, value) {
        (JsonType::Integer, Value::Number(n)) => n.is_i64() || n.is_u64(),
        (t, value) => t.matches(value),
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema_of(schema: Value) -> ResponseSchema {
        let limits = crate::schema::SchemaLimits {
            object_root: false,
            ..Default::default()
        };
        ResponseSchema::with_limits("t", schema, &limits).unwrap()
    }

    fn run(schema: Value, mut value: Value, policy: CoercePolicy) -> (Value, Vec<RecoveryKind>) {
        let out = coerce(&mut value, &schema_of(schema), &policy);
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
    fn a_second_key_folding_to_a_taken_name_is_not_merged_silently() {
        let schema = json!({"type": "object", "properties": {"name": {"type": "integer"}},
            "required": ["name"], "additionalProperties": false});
        // The exact key wins; the other is dropped with its warning, wherever it stands.
        for mut value in [json!({"NAME": 1, "name": 2}), json!({"name": 2, "NAME": 1})] {
            let out = coerce(
                &mut value,
                &schema_of(schema.clone()),
                &CoercePolicy::default(),
            );
            assert_eq!(value, json!({"name": 2}));
            let kinds: Vec<RecoveryKind> = out.iter().map(|r| r.kind).collect();
            assert_eq!(kinds, [RecoveryKind::DroppedUnknownKey]);
        }
        // Two that fold: the first is renamed, in place; the second is dropped, said.
        let mut value = json!({"Name": 1, "NAME": 3});
        let out = coerce(&mut value, &schema_of(schema), &CoercePolicy::default());
        assert_eq!(value, json!({"name": 1}));
        let kinds: Vec<RecoveryKind> = out.iter().map(|r| r.kind).collect();
        assert_eq!(
            kinds,
            [RecoveryKind::RenamedKey, RecoveryKind::DroppedUnknownKey]
        );
    }

    #[test]
    fn keys_matched_ignoring_case_and_nested_paths_reported() {
        let schema = json!({"type": "object", "properties": {"items": {"type": "array",
            "items": {"type": "object", "properties": {"n": {"type": "number"}},
            "required": ["n"], "additionalProperties": false}}},
            "required": ["items"], "additionalProperties": false});
        let mut value = json!({"Items": [{"n": "2", "junk": true}]});
        let out = coerce(&mut value, &schema_of(schema), &CoercePolicy::default());
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
        assert!(coerce(&mut v, &schema_of(schema), &CoercePolicy::lenient()).is_empty());
    }
}
