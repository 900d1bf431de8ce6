//! What a schema given at run time must be before it is used ([`SchemaLimits`]): a JSON object
//! describing an object (by default), within a size cap, with references inside the document
//! only, and written with keywords the validator knows. Each refusal is a [`SchemaError`] naming
//! the schema node it found.
//!
//! One linear walk over the document: every sub-schema is visited once, references are checked
//! where they are written and never followed, so no schema makes the check slow.

use std::io;

use serde_json::Value;

pub(crate) use super::node::asserts_nothing;
pub use super::node::is_annotation;
use super::node::{JsonType, Node};
use super::pointer::Pointer;

/// What a schema given at run time may be. The defaults are generous; the checks that do not
/// depend on them (keywords, references) always apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaLimits {
    /// The schema, written as compact JSON, is at most this many bytes (default 1 MiB).
    pub max_bytes: usize,
    /// The root must say `"type": "object"`, as every provider's strict mode requires (default
    /// true; false lets a prompt-guided caller ask for an array or a scalar).
    pub object_root: bool,
}

impl Default for SchemaLimits {
    fn default() -> Self {
        SchemaLimits {
            max_bytes: 1 << 20,
            object_root: true,
        }
    }
}

impl SchemaLimits {
    /// The limits a gateway's HTTP layer puts on a schema a client sends (as the documents this
    /// project was designed from state them): at most 16 KiB, an object root.
    pub fn gateway() -> Self {
        SchemaLimits {
            max_bytes: 16 << 10,
            object_root: true,
        }
    }
}

/// The limits by name, for configuration files and the command line: `"default"` (1 MiB, an
/// object root: [`SchemaLimits::default`]) or `"gateway"` (16 KiB, an object root:
/// [`SchemaLimits::gateway`]).
///
/// ```
/// use structured_runtime::schema::{LimitProfile, SchemaLimits};
/// let profile: LimitProfile = "gateway".parse().unwrap();
/// assert_eq!(profile.limits(), SchemaLimits::gateway());
/// assert!("strictest".parse::<LimitProfile>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitProfile {
    /// [`SchemaLimits::default`].
    #[default]
    Default,
    /// [`SchemaLimits::gateway`].
    Gateway,
}

impl LimitProfile {
    /// Every profile, in the order listed.
    pub const ALL: [LimitProfile; 2] = [LimitProfile::Default, LimitProfile::Gateway];

    /// The limits this profile names.
    pub fn limits(self) -> SchemaLimits {
        match self {
            LimitProfile::Default => SchemaLimits::default(),
            LimitProfile::Gateway => SchemaLimits::gateway(),
        }
    }

    /// The profile's name, as configuration files write it.
    pub fn name(self) -> &'static str {
        match self {
            LimitProfile::Default => "default",
            LimitProfile::Gateway => "gateway",
        }
    }
}

impl std::fmt::Display for LimitProfile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for LimitProfile {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        LimitProfile::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| {
                format!("unknown limit profile {s:?}: expected \"default\" or \"gateway\"")
            })
    }
}

/// Why a [`ResponseSchema`](crate::ResponseSchema) could not be built. Each names the schema node it is about.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SchemaError {
    /// Providers take names matching `^[a-zA-Z0-9_-]{1,64}$`.
    #[error("schema name {name:?} is invalid: expected 1 to 64 characters from a-z, A-Z, 0-9, `_` and `-`")]
    InvalidName {
        /// The name given.
        name: String,
    },
    /// The schema must be a JSON object (a boolean or other value is not accepted by providers).
    #[error("schema must be a JSON object, found {found}")]
    NotAnObject {
        /// The kind of JSON value given.
        found: &'static str,
    },
    /// The root does not describe an object ([`SchemaLimits::object_root`]).
    #[error("the schema's root must be `\"type\": \"object\"`, found {found}")]
    RootNotObject {
        /// What the root says instead.
        found: String,
    },
    /// Larger than [`SchemaLimits::max_bytes`].
    #[error("the schema is larger than {limit} bytes")]
    TooLarge {
        /// The limit.
        limit: usize,
    },
    /// Nested deeper than any walk of it may go.
    #[error("{path}: the schema is nested deeper than {limit} levels")]
    TooDeep {
        /// Where the limit was reached.
        path: Pointer,
        /// The limit.
        limit: usize,
    },
    /// A keyword the validator does not implement: it would be ignored, so it is refused.
    #[error("{path}: unknown keyword `{keyword}` (not a JSON Schema keyword: a typo, or an extension this crate does not implement)")]
    UnknownKeyword {
        /// The node that has it.
        path: Pointer,
        /// The keyword.
        keyword: String,
    },
    /// A reference to another document: only references inside the schema are followed.
    #[error("{path}: `$ref` {reference:?} points outside the schema; only local references (`#/...`) are followed")]
    RemoteRef {
        /// The reference keyword.
        path: Pointer,
        /// The reference.
        reference: String,
    },
    /// A local reference that names nothing in the schema.
    #[error("{path}: `$ref` {reference:?} names nothing in the schema")]
    UnresolvedRef {
        /// The reference keyword.
        path: Pointer,
        /// The reference.
        reference: String,
    },
    /// A `pattern` (or a `patternProperties` name) uses a feature that only a backtracking
    /// engine runs (a backreference, lookaround): patterns are matched in linear time, so such a
    /// pattern is refused rather than matched slowly or given up on.
    #[error("{path}: the pattern {pattern:?} cannot be used: {reason}")]
    UnsupportedPattern {
        /// Where the pattern is written.
        path: Pointer,
        /// The pattern.
        pattern: String,
        /// Which feature, and why.
        reason: &'static str,
    },
    /// The validator refused the schema (a keyword with a value of the wrong kind, an unknown
    /// `format`, a pattern that is not a regular expression, ...).
    #[error("{path}: {message}")]
    Invalid {
        /// Where the validator found the problem.
        path: Pointer,
        /// The validator's message.
        message: String,
    },
}

/// Every keyword of the JSON Schema drafts the validator implements (2020-12, 2019-09, 7, 6, 4):
/// assertions, applicators, references and the annotations the drafts define. A keyword outside
/// this list (and not an extension annotation) would be ignored by the validator, so it is
/// refused instead.
const KNOWN_KEYWORDS: &[&str] = &[
    // core
    "$schema",
    "$id",
    "id",
    "$ref",
    "$anchor",
    "$dynamicRef",
    "$dynamicAnchor",
    "$recursiveRef",
    "$recursiveAnchor",
    "$vocabulary",
    "$defs",
    "definitions",
    // applicators
    "prefixItems",
    "items",
    "additionalItems",
    "contains",
    "additionalProperties",
    "properties",
    "patternProperties",
    "dependentSchemas",
    "dependencies",
    "propertyNames",
    "if",
    "then",
    "else",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "unevaluatedItems",
    "unevaluatedProperties",
    // validation
    "type",
    "const",
    "enum",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "maxContains",
    "minContains",
    "maxProperties",
    "minProperties",
    "required",
    "dependentRequired",
    "format",
    // content (annotations from 2019-09 on)
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
    // meta-data: `node::META_DATA`
];

/// Keywords whose value is a reference.
const REFERENCES: &[&str] = &["$ref", "$dynamicRef", "$recursiveRef"];

/// Checks `schema` against `limits` and the rules above.
pub(crate) fn admit(schema: &Value, limits: &SchemaLimits) -> Result<(), SchemaError> {
    if !schema.is_object() {
        return Err(SchemaError::NotAnObject {
            found: json_kind(schema),
        });
    }
    let bytes = serialized_len(schema, limits.max_bytes);
    if bytes > limits.max_bytes {
        return Err(SchemaError::TooLarge {
            limit: limits.max_bytes,
        });
    }
    let root = Node::root(schema);
    if limits.object_root && !root.types().is_only(JsonType::Object) {
        let found = root
            .get("type")
            .map_or_else(|| "no `type`".to_owned(), |t| format!("`type` {t}"));
        return Err(SchemaError::RootNotObject { found });
    }
    let mut walk = Walk {
        path: Pointer::root(),
        nested_ids: false,
        references: Vec::new(),
    };
    walk.node(root)?;
    // With a nested `$id`, a `#/...` reference may point into that resource rather than this
    // document: the validator resolves those, and refuses what does not resolve.
    if !walk.nested_ids {
        for (path, reference) in walk.references {
            if reference.starts_with("#/") || reference == "#" {
                if let Err(_e) = root.lookup(&reference) {
                    return Err(SchemaError::UnresolvedRef { path, reference });
                }
            }
        }
    }
    Ok(())
}

/// Whether OpenAPI's `discriminator` (`value`) at `node` says nothing its branches do not: it
/// names a property every branch of the node's `oneOf` (or `anyOf`) requires with one string,
/// and its `mapping`, if any, maps each such string to the branch that holds it. Then the value
/// must hold that property with one of those strings whatever the keyword says, and the keyword
/// is left out of validation and of what providers are sent. Else why not.
fn said_by_branches(node: Node<'_>, value: &Value) -> Result<(), String> {
    let Some(map) = value.as_object() else {
        return Err("`discriminator` must be an object".into());
    };
    let Some(name) = map.get("propertyName").and_then(Value::as_str) else {
        return Err("`discriminator` must name its property (`propertyName`, a string)".into());
    };
    if let Some(other) = map.keys().find(|k| *k != "propertyName" && *k != "mapping") {
        return Err(format!(
            "`discriminator` has `{other}`, beside `propertyName` and `mapping`"
        ));
    }
    let Some(branches) = ["oneOf", "anyOf"]
        .iter()
        .find_map(|k| node.get(k).and_then(Value::as_array))
    else {
        return Err("`discriminator` stands beside no `oneOf` or `anyOf`".into());
    };
    let mut tags = Vec::with_capacity(branches.len());
    for (i, branch) in branches.iter().enumerate() {
        let branch = node.child(branch);
        let Ok(target) = branch.resolve() else {
            // A reference that does not resolve: the check of references refuses the schema,
            // saying so.
            return Ok(());
        };
        let tag = target
            .property(name)
            .and_then(Node::single_value)
            .and_then(Value::as_str)
            .filter(|_| target.is_required(name));
        let Some(tag) = tag else {
            return Err(format!(
                "branch {i} does not require `{name}` with one string: `discriminator` is accepted only where every branch does (it then says nothing the branches do not)"
            ));
        };
        tags.push((branch.reference(), tag));
    }
    let mapping = match map.get("mapping") {
        None => return Ok(()),
        Some(Value::Object(mapping)) => mapping,
        Some(_) => return Err("`discriminator`'s `mapping` must be an object".into()),
    };
    for (tag, reference) in mapping {
        let maps_to_its_branch = tags
            .iter()
            .any(|(r, t)| *t == tag.as_str() && *r == reference.as_str());
        if !maps_to_its_branch {
            return Err(format!(
                "`discriminator`'s `mapping` sends {tag:?} to {reference}, which is not the branch whose `{name}` is {tag:?}"
            ));
        }
    }
    Ok(())
}

struct Walk {
    path: Pointer,
    /// A sub-schema has its own `$id`.
    nested_ids: bool,
    /// Every local reference, with where it is written.
    references: Vec<(Pointer, String)>,
}

impl Walk {
    fn node(&mut self, node: Node<'_>) -> Result<(), SchemaError> {
        if node.too_deep() {
            return Err(SchemaError::TooDeep {
                path: self.path.clone(),
                limit: super::node::MAX_DEPTH,
            });
        }
        let Some(map) = node.map() else {
            return Ok(());
        };
        for (keyword, value) in map {
            if !KNOWN_KEYWORDS.contains(&keyword.as_str()) && !asserts_nothing(keyword) {
                return Err(SchemaError::UnknownKeyword {
                    path: self.path.clone(),
                    keyword: keyword.clone(),
                });
            }
            self.patterns(keyword, value)?;
            if keyword == "discriminator" {
                said_by_branches(node, value).map_err(|message| SchemaError::Invalid {
                    path: self.path.key(keyword),
                    message,
                })?;
            }
            if node.depth() > 0 && matches!(keyword.as_str(), "$id" | "id") && value.is_string() {
                self.nested_ids = true;
            }
            if REFERENCES.contains(&keyword.as_str()) {
                let reference = value.as_str().unwrap_or_default();
                if !reference.starts_with('#') {
                    return Err(SchemaError::RemoteRef {
                        path: self.path.key(keyword),
                        reference: reference.to_owned(),
                    });
                }
                self.references
                    .push((self.path.key(keyword), reference.to_owned()));
            }
        }
        for child in node.children() {
            let len = self.path.as_str().len();
            child.push_to(&mut self.path);
            let result = self.node(child.node);
            for _ in 0..child.segments() {
                self.path.pop();
            }
            debug_assert_eq!(self.path.as_str().len(), len);
            result?;
        }
        Ok(())
    }
}

impl Walk {
    /// A `pattern`, or the names of `patternProperties`, the linear-time engine cannot run.
    fn patterns(&self, keyword: &str, value: &Value) -> Result<(), SchemaError> {
        let written: Vec<(Pointer, &str)> = match (keyword, value) {
            ("pattern", Value::String(p)) => vec![(self.path.key(keyword), p.as_str())],
            ("patternProperties", Value::Object(map)) => map
                .keys()
                .map(|p| (self.path.key(keyword).key(p), p.as_str()))
                .collect(),
            _ => return Ok(()),
        };
        for (path, pattern) in written {
            if let Some(reason) = super::pattern::unsupported(pattern) {
                return Err(SchemaError::UnsupportedPattern {
                    path,
                    pattern: pattern.to_owned(),
                    reason,
                });
            }
        }
        Ok(())
    }
}

pub(crate) fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The length of `value` written as compact JSON, counted up to just past `limit`.
fn serialized_len(value: &Value, limit: usize) -> usize {
    struct Count {
        n: usize,
        limit: usize,
    }
    impl io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.n += buf.len();
            if self.n > self.limit {
                return Err(io::Error::other("over the limit"));
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count { n: 0, limit };
    let _ = serde_json::to_writer(&mut count, value);
    count.n
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(schema: Value) -> Result<(), SchemaError> {
        admit(&schema, &SchemaLimits::default())
    }

    fn object(properties: Value) -> Value {
        json!({"type": "object", "properties": properties})
    }

    /// pydantic's discriminated union: `discriminator` beside a `oneOf` of references whose
    /// variants each require the tag with one string.
    fn pets(discriminator: Value, dog_tag: Value) -> Value {
        json!({
            "type": "object",
            "properties": {"pet": {"oneOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}],
                                   "discriminator": discriminator}},
            "$defs": {
                "Cat": {"type": "object", "properties": {"kind": {"const": "cat", "type": "string"}},
                        "required": ["kind"]},
                "Dog": {"type": "object", "properties": {"kind": dog_tag}, "required": ["kind"]}
            }
        })
    }

    #[test]
    fn a_discriminator_is_admitted_only_where_the_branches_already_say_it() {
        let dog = json!({"const": "dog"});
        let mapping = json!({"propertyName": "kind",
                             "mapping": {"cat": "#/$defs/Cat", "dog": "#/$defs/Dog"}});
        assert_eq!(check(pets(mapping, dog.clone())), Ok(()));
        assert_eq!(
            check(pets(
                json!({"propertyName": "kind"}),
                json!({"enum": ["dog"]})
            )),
            Ok(())
        );
        for (discriminator, dog_tag, why) in [
            // A branch that does not fix the tag: the keyword would assert something.
            (
                json!({"propertyName": "kind"}),
                json!({"type": "string"}),
                "branch 1",
            ),
            (json!({"propertyName": "name"}), dog.clone(), "branch 0"),
            // A mapping sending a tag to another branch.
            (
                json!({"propertyName": "kind", "mapping": {"cat": "#/$defs/Dog"}}),
                dog.clone(),
                "mapping",
            ),
            (json!({"propertyName": 3}), dog.clone(), "propertyName"),
            (
                json!({"propertyName": "kind", "extra": 1}),
                dog.clone(),
                "extra",
            ),
            (json!("kind"), dog.clone(), "object"),
        ] {
            match check(pets(discriminator.clone(), dog_tag)) {
                Err(SchemaError::Invalid { path, message }) => {
                    assert_eq!(path.as_str(), "/properties/pet/discriminator");
                    assert!(message.contains(why), "{discriminator}: {message}");
                }
                other => panic!("{discriminator}: {other:?}"),
            }
        }
        // A branch whose reference does not resolve: refused for that, by the reference check.
        let mut unresolved = pets(json!({"propertyName": "kind"}), dog.clone());
        unresolved["properties"]["pet"]["oneOf"][1] = json!({"$ref": "#/$defs/Nowhere"});
        assert!(
            matches!(check(unresolved), Err(SchemaError::UnresolvedRef { .. })),
            "a dangling reference is named as one"
        );
        // Beside no union.
        let alone =
            object(json!({"a": {"type": "object", "discriminator": {"propertyName": "k"}}}));
        assert!(matches!(check(alone), Err(SchemaError::Invalid { .. })));
    }

    #[test]
    fn a_plain_schema_passes() {
        let schema = object(json!({
            "a": {"type": "string", "pattern": "^x", "minLength": 1},
            "b": {"$ref": "#/$defs/b"}
        }));
        let mut schema = schema;
        schema["$defs"] = json!({"b": {"oneOf": [{"type": "integer"}, {"not": {"const": 3}}]}});
        assert_eq!(check(schema), Ok(()));
    }

    #[test]
    fn unknown_keywords_are_refused_where_they_are() {
        let err = check(object(json!({"a": {"type": "string", "nullable": true}}))).unwrap_err();
        assert_eq!(
            err,
            SchemaError::UnknownKeyword {
                path: Pointer::parse("/properties/a").unwrap(),
                keyword: "nullable".into()
            }
        );
        // A property named like an unknown keyword is a name, not a keyword.
        assert_eq!(
            check(object(json!({"nullable": {"type": "boolean"}}))),
            Ok(())
        );
        // An enum value is data.
        assert_eq!(
            check(object(json!({"e": {"enum": [{"nullable": 1}]}}))),
            Ok(())
        );
    }

    #[test]
    fn references_stay_in_the_document() {
        let err = check(object(json!({"a": {"$ref": "https://example.com/s.json"}}))).unwrap_err();
        assert_eq!(
            err,
            SchemaError::RemoteRef {
                path: Pointer::parse("/properties/a/$ref").unwrap(),
                reference: "https://example.com/s.json".into()
            }
        );
        let err = check(object(json!({"a": {"$ref": "#/$defs/nope"}}))).unwrap_err();
        assert!(matches!(err, SchemaError::UnresolvedRef { .. }), "{err:?}");
    }

    #[test]
    fn root_type_and_size_are_limited() {
        let err = check(json!({"type": "array"})).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the schema's root must be `\"type\": \"object\"`, found `type` \"array\""
        );
        let any_root = SchemaLimits {
            object_root: false,
            ..SchemaLimits::default()
        };
        assert_eq!(admit(&json!({"type": "array"}), &any_root), Ok(()));
        let small = SchemaLimits {
            max_bytes: 20,
            ..SchemaLimits::default()
        };
        let err = admit(&object(json!({"a": {"type": "string"}})), &small).unwrap_err();
        assert_eq!(err, SchemaError::TooLarge { limit: 20 });
    }

    #[test]
    fn nesting_beyond_the_walk_limit_is_an_error() {
        let mut node = json!({"type": "string"});
        for _ in 0..(super::super::node::MAX_DEPTH + 5) {
            node = json!({"type": "array", "items": node});
        }
        let schema = object(json!({"deep": node}));
        let err = check(schema).unwrap_err();
        assert!(matches!(err, SchemaError::TooDeep { .. }), "{err:?}");
    }
}
