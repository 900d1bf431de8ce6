//! Strict-mode preflight: the rules providers enforce on a strict schema (OpenAI's strict-mode guide),
//! checked before any request so a bad schema is an error with a path, not a 400 from the API.
//!
//! Every breaking node is reported, not only the first. Paths are JSON pointers into the schema.

use std::fmt;

use serde_json::{Map, Value};

use super::node::{JsonType, Node};
use super::pointer::Pointer;

/// Strict mode limits (OpenAI's current guide; other providers accept less or the same).
pub mod limits {
    /// Object nesting levels.
    pub const MAX_DEPTH: usize = 10;
    /// Object properties across the whole schema.
    pub const MAX_PROPERTIES: usize = 5000;
    /// Characters in property names, definition names, enum and const values.
    pub const MAX_STRING_BUDGET: usize = 120_000;
    /// Enum values across all enums.
    pub const MAX_ENUM_VALUES: usize = 1000;
    /// A string enum with more values than this ...
    pub const LARGE_ENUM_VALUES: usize = 250;
    /// ... may total at most this many characters.
    pub const LARGE_ENUM_CHARS: usize = 15_000;
}

/// Keywords strict mode rejects. `default` and `minLength`/`maxLength` are not listed as rejected
/// everywhere, but some deployments reject them and none enforces them, so they count here too.
const UNSUPPORTED_KEYWORDS: &[&str] = &[
    "$anchor",
    "$dynamicAnchor",
    "$dynamicRef",
    "$recursiveAnchor",
    "$recursiveRef",
    "allOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "minContains",
    "maxContains",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
    "dependentRequired",
    "dependentSchemas",
    "dependencies",
    "patternProperties",
    "propertyNames",
    "minProperties",
    "maxProperties",
    "prefixItems",
    "additionalItems",
    "unevaluatedItems",
    "unevaluatedProperties",
    "uniqueItems",
    "minLength",
    "maxLength",
    "default",
];

/// `format` values strict mode accepts.
pub(crate) const SUPPORTED_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// A strict-mode rule broken by one node.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StrictRule {
    /// The root must be `type: "object"`.
    RootNotObject,
    /// The root may not be an `anyOf`.
    RootAnyOf,
    /// Every object must say `additionalProperties: false`.
    AdditionalPropertiesNotFalse,
    /// Every property must be listed in `required`.
    NotRequired {
        /// The property missing from `required`.
        property: String,
    },
    /// `required` names a property that `properties` does not declare.
    RequiredUnknown {
        /// The name in `required`.
        property: String,
    },
    /// A keyword strict mode rejects.
    UnsupportedKeyword {
        /// The keyword.
        keyword: String,
    },
    /// A `format` strict mode does not know.
    UnsupportedFormat {
        /// The format.
        format: String,
    },
    /// A `type` that is not a JSON Schema type, or not a string/array of them.
    BadType {
        /// The value found.
        found: String,
    },
    /// An array schema without an object-form `items`.
    ArrayWithoutItems,
    /// A boolean (`true`/`false`) or non-object where a schema is expected.
    NotASchema,
    /// A `$ref` that is not local or does not resolve.
    BadRef {
        /// The reference.
        reference: String,
    },
    /// A `$ref` with sibling keywords (providers ignore or reject them).
    RefWithSiblings,
    /// Objects nested deeper than the limit.
    TooDeep {
        /// The limit.
        limit: usize,
    },
    /// More object properties than the limit.
    TooManyProperties {
        /// How many the schema has.
        count: usize,
        /// The limit.
        limit: usize,
    },
    /// Names and enum/const values longer in total than the limit.
    StringBudget {
        /// How many characters the schema has.
        chars: usize,
        /// The limit.
        limit: usize,
    },
    /// More enum values than the limit.
    TooManyEnumValues {
        /// How many the schema has.
        count: usize,
        /// The limit.
        limit: usize,
    },
    /// A string enum of more than 250 values whose values total more than 15,000 characters.
    LargeEnumTooLong {
        /// The enum's total length.
        chars: usize,
    },
}

impl fmt::Display for StrictRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StrictRule::RootNotObject => write!(f, "the root must be `\"type\": \"object\"`"),
            StrictRule::RootAnyOf => write!(f, "the root may not be an `anyOf`"),
            StrictRule::AdditionalPropertiesNotFalse => {
                write!(f, "object must set `\"additionalProperties\": false`")
            }
            StrictRule::NotRequired { property } => write!(
                f,
                "property `{property}` is not in `required` (make it required and nullable instead)"
            ),
            StrictRule::RequiredUnknown { property } => {
                write!(
                    f,
                    "`required` names `{property}`, which `properties` does not declare"
                )
            }
            StrictRule::UnsupportedKeyword { keyword } => {
                write!(f, "keyword `{keyword}` is not supported in strict mode")
            }
            StrictRule::UnsupportedFormat { format } => write!(
                f,
                "format `{format}` is not supported in strict mode (supported: {})",
                SUPPORTED_FORMATS.join(", ")
            ),
            StrictRule::BadType { found } => write!(f, "`type` {found} is not a JSON Schema type"),
            StrictRule::ArrayWithoutItems => {
                write!(f, "array schema needs `items` as a single schema")
            }
            StrictRule::NotASchema => write!(f, "expected a schema object"),
            StrictRule::BadRef { reference } => {
                write!(
                    f,
                    "`$ref` {reference:?} is not a local reference that resolves"
                )
            }
            StrictRule::RefWithSiblings => write!(f, "`$ref` may not have sibling keywords"),
            StrictRule::TooDeep { limit } => {
                write!(f, "objects are nested more than {limit} levels deep")
            }
            StrictRule::TooManyProperties { count, limit } => {
                write!(f, "{count} object properties in all, the limit is {limit}")
            }
            StrictRule::StringBudget { chars, limit } => write!(
                f,
                "{chars} characters of names and enum values in all, the limit is {limit}"
            ),
            StrictRule::TooManyEnumValues { count, limit } => {
                write!(f, "{count} enum values in all, the limit is {limit}")
            }
            StrictRule::LargeEnumTooLong { chars } => write!(
                f,
                "an enum of more than {} values totals {chars} characters, the limit is {}",
                limits::LARGE_ENUM_VALUES,
                limits::LARGE_ENUM_CHARS
            ),
        }
    }
}

/// One node breaking one strict rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StrictViolation {
    /// The node in the schema: `/properties/signals/items`.
    pub path: Pointer,
    /// The rule broken.
    pub rule: StrictRule,
}

impl fmt::Display for StrictViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.rule)
    }
}

/// Every strict-mode violation of a schema.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("schema breaks strict mode in {} place(s):{}", .0.len(), list(.0))]
pub struct StrictReport(pub Vec<StrictViolation>);

fn list(vs: &[StrictViolation]) -> String {
    vs.iter().map(|v| format!("\n  {v}")).collect()
}

/// Checks `schema` as a strict root and reports every breaking node.
pub fn preflight(schema: &Value) -> Result<(), StrictReport> {
    let root = Node::root(schema);
    let mut walk = Walk {
        out: Vec::new(),
        path: Pointer::root(),
        properties: 0,
        string_chars: 0,
        enum_values: 0,
    };
    if root.has("anyOf") {
        walk.push(StrictRule::RootAnyOf);
    } else if !root.types().is_only(JsonType::Object) || root.map().is_none() {
        walk.push(StrictRule::RootNotObject);
    }
    walk.node(root, 0);
    for key in ["$defs", "definitions"] {
        for (name, def) in root
            .get(key)
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            walk.string_chars += name.chars().count();
            walk.path = Pointer::root().key(key).key(name);
            walk.node(root.child(def), 1);
        }
    }
    walk.totals();
    if walk.out.is_empty() {
        Ok(())
    } else {
        Err(StrictReport(walk.out))
    }
}

struct Walk {
    out: Vec<StrictViolation>,
    /// The node being checked.
    path: Pointer,
    properties: usize,
    string_chars: usize,
    enum_values: usize,
}

impl Walk {
    fn push(&mut self, rule: StrictRule) {
        self.out.push(StrictViolation {
            path: self.path.clone(),
            rule,
        });
    }

    /// `objects`: object levels above this node.
    fn node(&mut self, node: Node<'_>, objects: usize) {
        let Some(map) = node.map() else {
            self.push(StrictRule::NotASchema);
            return;
        };
        if node.too_deep() {
            self.push(StrictRule::TooDeep {
                limit: limits::MAX_DEPTH,
            });
            return;
        }
        for key in map.keys() {
            if UNSUPPORTED_KEYWORDS.contains(&key.as_str()) {
                self.push(StrictRule::UnsupportedKeyword {
                    keyword: key.clone(),
                });
            }
        }
        if let Some(reference) = map.get("$ref") {
            self.check_ref(node, map, reference);
            return;
        }
        let types = node.types();
        if types.declared() && (types.malformed() || types.is_empty()) {
            let found = map.get("type").map(Value::to_string).unwrap_or_default();
            self.push(StrictRule::BadType { found });
        }
        if let Some(Value::String(format)) = map.get("format") {
            if !SUPPORTED_FORMATS.contains(&format.as_str()) {
                self.push(StrictRule::UnsupportedFormat {
                    format: format.clone(),
                });
            }
        }
        self.enum_and_const(map);

        let mut objects = objects;
        if types.contains(JsonType::Object) || map.contains_key("properties") {
            objects += 1;
            if objects > limits::MAX_DEPTH {
                self.push(StrictRule::TooDeep {
                    limit: limits::MAX_DEPTH,
                });
                return;
            }
            self.object(node, map, objects);
        }
        if types.contains(JsonType::Array) || map.contains_key("items") {
            match map.get("items") {
                Some(items @ Value::Object(_)) => {
                    self.path.push("items");
                    self.node(node.child(items), objects);
                    self.path.pop();
                }
                _ => self.push(StrictRule::ArrayWithoutItems),
            }
        }
        if let Some(any_of) = map.get("anyOf") {
            match any_of {
                Value::Array(branches) => {
                    self.path.push("anyOf");
                    for (i, branch) in branches.iter().enumerate() {
                        self.path.push_index(i);
                        self.node(node.child(branch), objects);
                        self.path.pop();
                    }
                    self.path.pop();
                }
                _ => self.push(StrictRule::NotASchema),
            }
        }
    }

    fn object(&mut self, node: Node<'_>, map: &Map<String, Value>, objects: usize) {
        if !node.closed() {
            self.push(StrictRule::AdditionalPropertiesNotFalse);
        }
        let properties = match map.get("properties") {
            Some(Value::Object(p)) => Some(p),
            Some(_) => {
                self.push(StrictRule::NotASchema);
                None
            }
            None => None,
        };
        for name in node.required() {
            if !properties.is_some_and(|p| p.contains_key(name)) {
                self.push(StrictRule::RequiredUnknown {
                    property: name.to_owned(),
                });
            }
        }
        for (name, sub) in properties.into_iter().flatten() {
            self.properties += 1;
            self.string_chars += name.chars().count();
            if !node.is_required(name) {
                self.push(StrictRule::NotRequired {
                    property: name.clone(),
                });
            }
            self.path.push("properties");
            self.path.push(name);
            self.node(node.child(sub), objects);
            self.path.pop();
            self.path.pop();
        }
    }

    fn enum_and_const(&mut self, map: &Map<String, Value>) {
        if let Some(Value::Array(values)) = map.get("enum") {
            self.enum_values += values.len();
            let chars: usize = values
                .iter()
                .filter_map(Value::as_str)
                .map(|s| s.chars().count())
                .sum();
            self.string_chars += chars;
            let strings = values.iter().filter(|v| v.is_string()).count();
            if strings > limits::LARGE_ENUM_VALUES && chars > limits::LARGE_ENUM_CHARS {
                self.push(StrictRule::LargeEnumTooLong { chars });
            }
        }
        if let Some(Value::String(c)) = map.get("const") {
            self.string_chars += c.chars().count();
        }
    }

    fn check_ref(&mut self, node: Node<'_>, map: &Map<String, Value>, reference: &Value) {
        let resolves = reference.as_str().is_some_and(|r| node.lookup(r).is_ok());
        if !resolves {
            self.push(StrictRule::BadRef {
                reference: reference.to_string(),
            });
        }
        // Annotations beside a $ref are harmless; constraints are not.
        if map
            .keys()
            .any(|k| !matches!(k.as_str(), "$ref" | "description" | "title"))
        {
            self.push(StrictRule::RefWithSiblings);
        }
    }

    fn totals(&mut self) {
        self.path = Pointer::root();
        if self.properties > limits::MAX_PROPERTIES {
            let count = self.properties;
            self.push(StrictRule::TooManyProperties {
                count,
                limit: limits::MAX_PROPERTIES,
            });
        }
        if self.string_chars > limits::MAX_STRING_BUDGET {
            let chars = self.string_chars;
            self.push(StrictRule::StringBudget {
                chars,
                limit: limits::MAX_STRING_BUDGET,
            });
        }
        if self.enum_values > limits::MAX_ENUM_VALUES {
            let count = self.enum_values;
            self.push(StrictRule::TooManyEnumValues {
                count,
                limit: limits::MAX_ENUM_VALUES,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rules(schema: Value) -> Vec<(String, StrictRule)> {
        match preflight(&schema) {
            Ok(()) => Vec::new(),
            Err(report) => report
                .0
                .into_iter()
                .map(|v| (v.path.as_str().to_owned(), v.rule))
                .collect(),
        }
    }

    #[test]
    fn a_strict_schema_passes() {
        let schema = json!({
            "type": "object",
            "properties": {
                "a": {"type": ["string", "null"], "enum": ["x", null]},
                "b": {"type": "array", "items": {"type": "integer", "minimum": 0}},
                "c": {"anyOf": [{"$ref": "#/$defs/n"}, {"type": "null"}]}
            },
            "required": ["a", "b", "c"],
            "additionalProperties": false,
            "$defs": {"n": {"type": "object", "properties": {"next": {"anyOf": [{"$ref": "#/$defs/n"}, {"type": "null"}]}}, "required": ["next"], "additionalProperties": false}}
        });
        assert_eq!(rules(schema), vec![]);
    }

    #[test]
    fn every_breaking_node_is_reported_with_its_path() {
        let schema = json!({
            "type": "object",
            "properties": {
                "a": {"type": "object", "properties": {"x": {"type": "string", "minLength": 2}}},
                "b": {"type": "array"},
                "c": {"oneOf": [{"type": "string"}], "format": "uri"},
                "d": {"$ref": "https://example.com/s.json"}
            },
            "required": ["a", "b", "c", "ghost"]
        });
        assert_eq!(
            rules(schema),
            vec![
                ("".into(), StrictRule::AdditionalPropertiesNotFalse),
                (
                    "".into(),
                    StrictRule::RequiredUnknown {
                        property: "ghost".into()
                    }
                ),
                (
                    "/properties/a".into(),
                    StrictRule::AdditionalPropertiesNotFalse
                ),
                (
                    "/properties/a".into(),
                    StrictRule::NotRequired {
                        property: "x".into()
                    }
                ),
                (
                    "/properties/a/properties/x".into(),
                    StrictRule::UnsupportedKeyword {
                        keyword: "minLength".into()
                    }
                ),
                ("/properties/b".into(), StrictRule::ArrayWithoutItems),
                (
                    "/properties/c".into(),
                    StrictRule::UnsupportedKeyword {
                        keyword: "oneOf".into()
                    }
                ),
                (
                    "/properties/c".into(),
                    StrictRule::UnsupportedFormat {
                        format: "uri".into()
                    }
                ),
                (
                    "".into(),
                    StrictRule::NotRequired {
                        property: "d".into()
                    }
                ),
                (
                    "/properties/d".into(),
                    StrictRule::BadRef {
                        reference: "\"https://example.com/s.json\"".into()
                    }
                ),
            ]
        );
    }

    #[test]
    fn root_must_be_an_object_and_not_any_of() {
        assert_eq!(
            rules(json!({"type": "array", "items": {"type": "string"}}))[0].1,
            StrictRule::RootNotObject
        );
        assert_eq!(
            rules(json!({"anyOf": [{"type": "string"}]}))[0].1,
            StrictRule::RootAnyOf
        );
        assert_eq!(rules(json!(true))[0].1, StrictRule::RootNotObject);
    }

    #[test]
    fn nesting_beyond_ten_levels_is_reported_once() {
        let mut node = json!({"type": "string"});
        for _ in 0..11 {
            node = json!({"type": "object", "properties": {"n": node}, "required": ["n"], "additionalProperties": false});
        }
        let found = rules(node);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].1, StrictRule::TooDeep { limit: 10 });
        assert_eq!(found[0].0, "/properties/n".repeat(10));
    }

    #[test]
    fn size_limits_are_counted_across_the_schema() {
        let values: Vec<String> = (0..1001).map(|i| format!("v{i}")).collect();
        let schema = json!({
            "type": "object",
            "properties": {"e": {"type": "string", "enum": values}},
            "required": ["e"],
            "additionalProperties": false
        });
        assert_eq!(
            rules(schema),
            vec![(
                "".into(),
                StrictRule::TooManyEnumValues {
                    count: 1001,
                    limit: 1000
                }
            )]
        );

        let long: Vec<String> = (0..300).map(|i| format!("{i:0>60}")).collect();
        let schema = json!({
            "type": "object",
            "properties": {"e": {"type": "string", "enum": long}},
            "required": ["e"],
            "additionalProperties": false
        });
        assert_eq!(
            rules(schema),
            vec![(
                "/properties/e".into(),
                StrictRule::LargeEnumTooLong { chars: 18000 }
            )]
        );
    }
}
