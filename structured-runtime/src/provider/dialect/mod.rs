//! Schema lowering: one JSON Schema in, what each provider accepts out (`PROVIDERS.md` §1.3, §2.3,
//! §3.2–3.3, §5.2, §7).
//!
//! The policy is the same for every target. A keyword the target does not accept but whose
//! meaning a model can still follow (a bound, a length, a default) is moved into the node's
//! `description` as `{minimum: 0, maximum: 1}`, never silently dropped; the value is still
//! checked locally after parsing. A construct the target cannot express at all (recursion where
//! refs must be inlined, `not`, a non-string enum in Gemini's `responseSchema`, an external
//! `$ref`) is a [`LowerError`] naming the path and the target, before any request is sent.
//!
//! ```
//! use structured_runtime::provider::dialect::lower;
//! use structured_runtime::provider::capabilities::SchemaTarget;
//! use serde_json::json;
//!
//! let schema = json!({
//!     "type": "object",
//!     "properties": {"confidence": {"type": "number", "minimum": 0.0, "maximum": 1.0}},
//!     "required": ["confidence"],
//!     "additionalProperties": false
//! });
//! let anthropic = lower(&schema, SchemaTarget::Anthropic).unwrap();
//! assert_eq!(
//!     anthropic["properties"]["confidence"],
//!     json!({"type": "number", "description": "{minimum: 0.0, maximum: 1.0}"})
//! );
//! let gemini = lower(&schema, SchemaTarget::GeminiResponseSchema).unwrap();
//! assert_eq!(gemini["type"], "OBJECT");
//! ```

use std::fmt;

use serde_json::{Map, Value};

use crate::provider::capabilities::SchemaTarget;
use crate::schema::strict::preflight;

/// Recursion stops here whatever the schema (a schema built in code may be arbitrarily deep).
const MAX_DEPTH: usize = 64;

/// Lowered nodes at most: inlining a definition used in many places copies it each time, which
/// a schema with shared definitions nested inside each other turns exponential. Four times
/// OpenAI's 5,000-property limit: no provider takes a schema this large.
const MAX_NODES: usize = 20_000;

/// One construct a target cannot express.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LowerError {
    /// The target that cannot express it.
    pub target: SchemaTarget,
    /// JSON pointer into the input schema (`""` is the root).
    pub path: String,
    /// What is wrong and what to do instead.
    pub reason: String,
}

impl fmt::Display for LowerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = if self.path.is_empty() {
            "(root)"
        } else {
            &self.path
        };
        write!(f, "{:?}: {path}: {}", self.target, self.reason)
    }
}

/// Every construct of a schema its target cannot express.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the schema cannot be sent as {target:?}:{}", list(.errors))]
pub struct LowerReport {
    /// The target.
    pub target: SchemaTarget,
    /// Each problem, with its path.
    pub errors: Vec<LowerError>,
}

fn list(errors: &[LowerError]) -> String {
    errors
        .iter()
        .map(|e| {
            let path = if e.path.is_empty() { "(root)" } else { &e.path };
            format!("\n  {path}: {}", e.reason)
        })
        .collect()
}

/// `schema` as `target` accepts it.
pub fn lower(schema: &Value, target: SchemaTarget) -> Result<Value, LowerReport> {
    let mut run = Run::new(target, schema);
    let out = match target {
        SchemaTarget::OpenAiStrict => run.openai(schema),
        SchemaTarget::Anthropic => run.anthropic(schema),
        SchemaTarget::GeminiResponseSchema => run.gemini_openapi(schema, "", 0),
        SchemaTarget::GeminiJsonSchema => run.gemini_json(schema, "", 0),
        SchemaTarget::LlamaCpp => run.llama(schema, "", 0),
        SchemaTarget::JsonSchema => schema.clone(),
    };
    run.finish(out)
}

/// What openai-python's `to_strict_json_schema` does (PROVIDERS.md §1.6), as data: every object
/// closed (`additionalProperties: false` where absent) with every property required, `default:
/// null` dropped, a single-entry `allOf` merged into its parent, and a `$ref` with sibling
/// keywords inlined. It rejects nothing; [`lower`] to [`SchemaTarget::OpenAiStrict`] then checks
/// the result.
pub fn to_strict_json_schema(schema: &Value) -> Value {
    let mut out = schema.clone();
    strictify(&mut out, schema, 0);
    out
}

fn strictify(node: &mut Value, root: &Value, depth: usize) {
    let Value::Object(map) = node else { return };
    if depth > MAX_DEPTH {
        return;
    }
    for defs in ["$defs", "definitions"] {
        if let Some(Value::Object(defs)) = map.get_mut(defs) {
            defs.values_mut()
                .for_each(|d| strictify(d, root, depth + 1));
        }
    }
    if map.get("type").and_then(Value::as_str) == Some("object")
        && !map.contains_key("additionalProperties")
    {
        map.insert("additionalProperties".into(), Value::Bool(false));
    }
    if let Some(Value::Object(props)) = map.get_mut("properties") {
        let names: Vec<Value> = props.keys().cloned().map(Value::String).collect();
        props
            .values_mut()
            .for_each(|p| strictify(p, root, depth + 1));
        map.insert("required".into(), Value::Array(names));
    }
    if let Some(items @ Value::Object(_)) = map.get_mut("items") {
        strictify(items, root, depth + 1);
    }
    for key in ["anyOf", "allOf"] {
        if let Some(Value::Array(branches)) = map.get_mut(key) {
            branches
                .iter_mut()
                .for_each(|b| strictify(b, root, depth + 1));
        }
    }
    if let Some(Value::Array(all)) = map.get("allOf") {
        if let [Value::Object(only)] = all.as_slice() {
            let only = only.clone();
            map.remove("allOf");
            map.extend(only);
        }
    }
    if map.get("default") == Some(&Value::Null) {
        map.remove("default");
    }
    if map.len() > 1 {
        if let Some(Value::String(reference)) = map.get("$ref").cloned() {
            if let Some(Value::Object(target)) = resolve(root, &reference) {
                let mut merged = target.clone();
                map.remove("$ref");
                merged.extend(std::mem::take(map));
                *map = merged;
                strictify(node, root, depth + 1);
            }
        }
    }
}

/// The node a local `#/...` pointer names.
fn resolve<'v>(root: &'v Value, reference: &str) -> Option<&'v Value> {
    let pointer = reference.strip_prefix('#')?;
    root.pointer(pointer)
}

/// Keywords Anthropic's SDK keeps on a node (everything else goes into `description`).
const ANTHROPIC_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "uri",
    "ipv4",
    "ipv6",
    "uuid",
];

/// What anthropic-sdk-python's `transform_schema` does (PROVIDERS.md §2.4), as data: `$defs`
/// kept and transformed, a `$ref` kept alone, `oneOf` read as `anyOf`, objects closed,
/// supported `format`s and `minItems` 0/1 kept, and every other keyword written into
/// `description`. A node without `type` (and no `$ref`, `anyOf` or `allOf`) is an error, as in
/// the SDK. [`lower`] to [`SchemaTarget::Anthropic`] adds the API's own refusals (recursion,
/// external refs, the optional and union parameter caps).
pub fn anthropic_transform(schema: &Value) -> Result<Value, LowerReport> {
    let mut run = Run::new(SchemaTarget::Anthropic, schema);
    let out = run.anthropic_node(schema, "", 0);
    run.finish(out)
}

/// One lowering pass and the problems it found.
struct Run<'s> {
    target: SchemaTarget,
    root: &'s Value,
    errors: Vec<LowerError>,
    /// `$ref`s being inlined, outermost first: a repeat is recursion.
    inlining: Vec<String>,
    /// `$ref`s whose targets were checked in full (Anthropic's recursion check).
    checked: Vec<String>,
    /// Nodes written so far: inlining shared references can multiply a schema's size.
    nodes: usize,
}

impl<'s> Run<'s> {
    fn new(target: SchemaTarget, root: &'s Value) -> Self {
        Run {
            target,
            root,
            errors: Vec::new(),
            // The root is being lowered: a `{"$ref": "#"}` inside it is recursion.
            inlining: vec!["#".to_owned()],
            checked: Vec::new(),
            nodes: 0,
        }
    }

    /// The lowered schema, or every problem found on the way.
    fn finish(self, out: Value) -> Result<Value, LowerReport> {
        if self.errors.is_empty() {
            Ok(out)
        } else {
            Err(LowerReport {
                target: self.target,
                errors: self.errors,
            })
        }
    }

    fn fail(&mut self, path: &str, reason: impl Into<String>) {
        self.errors.push(LowerError {
            target: self.target,
            path: path.to_owned(),
            reason: reason.into(),
        });
    }

    fn too_deep(&mut self, path: &str, depth: usize) -> bool {
        if depth > MAX_DEPTH {
            self.fail(path, format!("nested deeper than {MAX_DEPTH} levels"));
            return true;
        }
        self.nodes += 1;
        if self.nodes == MAX_NODES {
            self.fail(path, format!("more than {MAX_NODES} schema nodes once references are inlined: share fewer definitions, or use a target that keeps `$ref`"));
        }
        self.nodes >= MAX_NODES
    }

    // ---- OpenAI strict ----------------------------------------------------------------

    fn openai(&mut self, schema: &Value) -> Value {
        let mut out = to_strict_json_schema(schema);
        soften(&mut out, &["default", "minLength", "maxLength"], 0);
        rename_one_of(&mut out, 0);
        if let Err(report) = preflight(&out) {
            for v in report.0 {
                self.fail(&v.path, v.rule.to_string());
            }
        }
        out
    }

    // ---- Anthropic ----------------------------------------------------------------------

    fn anthropic(&mut self, schema: &Value) -> Value {
        self.refs_checked(schema, "", 0, &mut vec!["#".to_owned()]);
        let out = self.anthropic_node(schema, "", 0);
        let (optional, unions) = count_optional_and_unions(&out, 0);
        if optional > 24 {
            self.fail("", format!("{optional} optional properties; Anthropic accepts at most 24 per request (make some required and nullable)"));
        }
        if unions > 16 {
            self.fail("", format!("{unions} properties with union types; Anthropic accepts at most 16 per request"));
        }
        out
    }

    fn anthropic_node(&mut self, node: &Value, path: &str, depth: usize) -> Value {
        let Value::Object(map) = node else {
            return node.clone();
        };
        if self.too_deep(path, depth) {
            return node.clone();
        }
        let mut out = Map::new();
        let mut moved = Map::new();
        if let Some(Value::Object(defs)) = map.get("$defs") {
            let defs = defs
                .iter()
                .map(|(k, d)| {
                    (
                        k.clone(),
                        self.anthropic_node(d, &format!("{path}/$defs/{}", escape(k)), depth + 1),
                    )
                })
                .collect();
            out.insert("$defs".into(), Value::Object(defs));
        }
        if let Some(reference) = map.get("$ref") {
            out.insert("$ref".into(), reference.clone());
            return Value::Object(out);
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = map.get(key) {
                let branches = branches
                    .iter()
                    .enumerate()
                    .map(|(i, b)| self.anthropic_node(b, &format!("{path}/{key}/{i}"), depth + 1))
                    .collect();
                out.insert("anyOf".into(), Value::Array(branches));
            }
        }
        if let Some(Value::Array(all)) = map.get("allOf") {
            let all = all
                .iter()
                .enumerate()
                .map(|(i, b)| self.anthropic_node(b, &format!("{path}/allOf/{i}"), depth + 1))
                .collect();
            out.insert("allOf".into(), Value::Array(all));
        }
        let ty = map.get("type");
        if ty.is_none() && out.is_empty() {
            self.fail(
                path,
                "no `type` (nor `$ref`, `anyOf` or `allOf`): say what the value is",
            );
            return node.clone();
        }
        if let Some(ty) = ty {
            out.insert("type".into(), ty.clone());
        }
        for key in ["enum", "const", "description", "title"] {
            if let Some(v) = map.get(key) {
                out.insert(key.into(), v.clone());
            }
        }
        let is = |t: &str| type_names(ty).contains(&t);
        if is("object") {
            let props = match map.get("properties") {
                Some(Value::Object(props)) => props
                    .iter()
                    .map(|(k, p)| {
                        (
                            k.clone(),
                            self.anthropic_node(
                                p,
                                &format!("{path}/properties/{}", escape(k)),
                                depth + 1,
                            ),
                        )
                    })
                    .collect(),
                _ => Map::new(),
            };
            out.insert("properties".into(), Value::Object(props));
            out.insert("additionalProperties".into(), Value::Bool(false));
            if let Some(required) = map.get("required") {
                out.insert("required".into(), required.clone());
            }
        }
        if is("string") {
            if let Some(format) = map.get("format") {
                if format
                    .as_str()
                    .is_some_and(|f| ANTHROPIC_FORMATS.contains(&f))
                {
                    out.insert("format".into(), format.clone());
                } else {
                    moved.insert("format".into(), format.clone());
                }
            }
        }
        if is("array") {
            if let Some(items) = map.get("items") {
                out.insert(
                    "items".into(),
                    self.anthropic_node(items, &format!("{path}/items"), depth + 1),
                );
            }
            if let Some(min) = map.get("minItems") {
                if min.as_u64().is_some_and(|n| n <= 1) {
                    out.insert("minItems".into(), min.clone());
                } else {
                    moved.insert("minItems".into(), min.clone());
                }
            }
        }
        const HANDLED: &[&str] = &[
            "$defs",
            "$ref",
            "anyOf",
            "oneOf",
            "allOf",
            "type",
            "enum",
            "const",
            "description",
            "title",
            "properties",
            "additionalProperties",
            "required",
            "format",
            "items",
            "minItems",
        ];
        for (k, v) in map {
            if !HANDLED.contains(&k.as_str()) {
                moved.insert(k.clone(), v.clone());
            }
        }
        describe(&mut out, &moved);
        Value::Object(out)
    }

    /// Anthropic's refusals the SDK transform does not check: external refs, refs that do not
    /// resolve, and recursion.
    fn refs_checked(&mut self, node: &Value, path: &str, depth: usize, stack: &mut Vec<String>) {
        let Value::Object(map) = node else { return };
        if depth > MAX_DEPTH {
            return;
        }
        if let Some(Value::String(reference)) = map.get("$ref") {
            if !reference.starts_with('#') {
                self.fail(
                    path,
                    format!(
                        "external `$ref` {reference:?}: Anthropic accepts local references only"
                    ),
                );
            } else if stack.contains(reference) {
                self.fail(path, format!("recursive schema (through {reference:?}): Anthropic rejects recursion; bound the depth with a separate type per level"));
            } else if self.checked.contains(reference) {
                // Walked in full once already, without meeting itself: shared, not recursive.
            } else if let Some(target) = resolve(self.root, reference) {
                stack.push(reference.clone());
                self.refs_checked(target, path, depth + 1, stack);
                stack.pop();
                self.checked.push(reference.clone());
            } else {
                self.fail(path, format!("`$ref` {reference:?} does not resolve"));
            }
        }
        // Definitions are walked where they are referenced, so a cycle is reported at the
        // reference that closes it (and an unused definition costs nothing).
        let defs = [format!("{path}/$defs/"), format!("{path}/definitions/")];
        for_each_child(map, path, |child, child_path| {
            if !defs.iter().any(|d| child_path.starts_with(d.as_str())) {
                self.refs_checked(child, &child_path, depth + 1, stack);
            }
        });
    }

    // ---- Gemini responseSchema (OpenAPI subset) -----------------------------------------

    fn gemini_openapi(&mut self, node: &'s Value, path: &str, depth: usize) -> Value {
        if self.too_deep(path, depth) {
            return Value::Object(Map::new());
        }
        match self.inline(node, path) {
            Inlined::Node(map) => self.gemini_openapi_map(map, path, depth),
            Inlined::Ref(map) => {
                let out = self.gemini_openapi_map(map, path, depth);
                self.inlining.pop();
                out
            }
            Inlined::Failed => Value::Object(Map::new()),
        }
    }

    fn gemini_openapi_map(
        &mut self,
        map: &'s Map<String, Value>,
        path: &str,
        depth: usize,
    ) -> Value {
        let mut out = Map::new();
        let mut moved = Map::new();
        let mut nullable = false;
        // `anyOf: [X, {"type": "null"}]` is X, nullable.
        let branches: Option<Vec<&Value>> = map.get("anyOf").and_then(Value::as_array).map(|b| {
            b.iter()
                .filter(|s| s.get("type").and_then(Value::as_str) != Some("null"))
                .collect()
        });
        if let (Some(all), Some(kept)) = (map.get("anyOf").and_then(Value::as_array), &branches) {
            nullable = kept.len() < all.len();
            if let [only] = kept.as_slice() {
                let mut inner = self.gemini_openapi(only, &format!("{path}/anyOf/0"), depth + 1);
                if let Value::Object(inner_map) = &mut inner {
                    if nullable {
                        inner_map.insert("nullable".into(), Value::Bool(true));
                    }
                    for key in ["description", "title"] {
                        if let Some(v) = map.get(key) {
                            inner_map.insert(key.into(), v.clone());
                        }
                    }
                }
                return inner;
            }
            let lowered = kept
                .iter()
                .enumerate()
                .map(|(i, b)| self.gemini_openapi(b, &format!("{path}/anyOf/{i}"), depth + 1))
                .collect();
            out.insert("anyOf".into(), Value::Array(lowered));
        }
        if map.contains_key("oneOf") {
            self.fail(path, "`oneOf` is not in Gemini's responseSchema; use `anyOf` or SchemaTarget::GeminiJsonSchema");
        }
        for key in ["allOf", "not"] {
            if map.contains_key(key) {
                self.fail(path, format!("`{key}` is not in Gemini's responseSchema"));
            }
        }
        let names = type_names(map.get("type"));
        let real: Vec<&str> = names.iter().copied().filter(|t| *t != "null").collect();
        nullable |= real.len() < names.len();
        match real.as_slice() {
            [] if names.is_empty() => {}
            [] => {
                out.insert("type".into(), "NULL".into());
            }
            [one] => {
                out.insert("type".into(), Value::String(one.to_ascii_uppercase()));
            }
            _ => self.fail(
                path,
                format!(
                    "a type union {names:?}: Gemini's responseSchema takes one type (use `anyOf`)"
                ),
            ),
        }
        if nullable {
            out.insert("nullable".into(), Value::Bool(true));
        }
        if let Some(c) = map.get("const") {
            match c {
                Value::String(_) => {
                    out.insert("enum".into(), Value::Array(vec![c.clone()]));
                }
                _ => self.fail(
                    path,
                    "a non-string `const`: Gemini's responseSchema has string enums only",
                ),
            }
        }
        if let Some(Value::Array(values)) = map.get("enum") {
            let strings: Vec<Value> = values.iter().filter(|v| !v.is_null()).cloned().collect();
            if strings.iter().all(Value::is_string) {
                if strings.len() < values.len() {
                    out.insert("nullable".into(), Value::Bool(true));
                }
                out.insert("enum".into(), Value::Array(strings));
            } else {
                self.fail(path, "a non-string `enum`: Gemini's responseSchema has string enums only (use SchemaTarget::GeminiJsonSchema)");
            }
        }
        if let Some(Value::Object(props)) = map.get("properties") {
            let lowered: Map<String, Value> = props
                .iter()
                .map(|(k, p)| {
                    (
                        k.clone(),
                        self.gemini_openapi(
                            p,
                            &format!("{path}/properties/{}", escape(k)),
                            depth + 1,
                        ),
                    )
                })
                .collect();
            if lowered.len() > 1 {
                let order = lowered.keys().cloned().map(Value::String).collect();
                out.insert("propertyOrdering".into(), Value::Array(order));
            }
            out.insert("properties".into(), Value::Object(lowered));
        }
        if let Some(items) = map.get("items") {
            out.insert(
                "items".into(),
                self.gemini_openapi(items, &format!("{path}/items"), depth + 1),
            );
        }
        const KEPT: &[&str] = &[
            "format",
            "title",
            "description",
            "required",
            "minItems",
            "maxItems",
            "minProperties",
            "maxProperties",
            "minimum",
            "maximum",
            "minLength",
            "maxLength",
            "pattern",
            "example",
        ];
        const HANDLED: &[&str] = &[
            "anyOf",
            "oneOf",
            "allOf",
            "not",
            "type",
            "const",
            "enum",
            "properties",
            "items",
            "$defs",
            "definitions",
            "$ref",
            "additionalProperties",
            "default",
            "$schema",
        ];
        for (k, v) in map {
            if KEPT.contains(&k.as_str()) {
                out.insert(k.clone(), v.clone());
            } else if !HANDLED.contains(&k.as_str()) {
                moved.insert(k.clone(), v.clone());
            }
        }
        // `additionalProperties: false` is Gemini's only behaviour; anything else is a rule it
        // cannot enforce.
        if let Some(extra) = map.get("additionalProperties") {
            if extra != &Value::Bool(false) {
                moved.insert("additionalProperties".into(), extra.clone());
            }
        }
        describe(&mut out, &moved);
        Value::Object(out)
    }

    /// The node's keywords, with a `$ref` replaced by what it names (pushed on `inlining`
    /// until the caller pops it). A ref that cannot be inlined (recursion, external,
    /// unresolved) is recorded as an error.
    fn inline(&mut self, node: &'s Value, path: &str) -> Inlined<'s> {
        let Some(map) = node.as_object() else {
            self.fail(path, "expected a schema object");
            return Inlined::Failed;
        };
        let Some(Value::String(reference)) = map.get("$ref") else {
            return Inlined::Node(map);
        };
        if self.inlining.contains(reference) {
            self.fail(path, format!("recursive schema (through {reference:?}): {:?} inlines references and cannot express recursion", self.target));
            return Inlined::Failed;
        }
        match resolve(self.root, reference).and_then(Value::as_object) {
            Some(target) => {
                self.inlining.push(reference.clone());
                Inlined::Ref(target)
            }
            None => {
                self.fail(
                    path,
                    format!("`$ref` {reference:?} is not a local reference that resolves"),
                );
                Inlined::Failed
            }
        }
    }

    // ---- Gemini responseJsonSchema ------------------------------------------------------

    fn gemini_json(&mut self, node: &Value, path: &str, depth: usize) -> Value {
        const KEPT: &[&str] = &[
            "$id",
            "$defs",
            "$ref",
            "$anchor",
            "type",
            "format",
            "title",
            "description",
            "enum",
            "items",
            "prefixItems",
            "minItems",
            "maxItems",
            "minimum",
            "maximum",
            "anyOf",
            "properties",
            "additionalProperties",
            "required",
            "propertyOrdering",
        ];
        self.generic(node, path, depth, KEPT)
    }

    // ---- llama.cpp / Ollama -------------------------------------------------------------

    fn llama(&mut self, node: &'s Value, path: &str, depth: usize) -> Value {
        if self.too_deep(path, depth) {
            return Value::Object(Map::new());
        }
        // Nested `$ref`s are broken in llama.cpp's converter: every ref is inlined.
        let (map, pushed) = match self.inline(node, path) {
            Inlined::Node(map) => (map, false),
            Inlined::Ref(map) => (map, true),
            Inlined::Failed => return Value::Object(Map::new()),
        };
        if map.contains_key("properties")
            && (map.contains_key("anyOf") || map.contains_key("oneOf"))
        {
            self.fail(path, "`properties` beside `anyOf`/`oneOf` in one node: llama.cpp's grammar converter cannot mix them (move the properties into each branch)");
        }
        for key in [
            "not",
            "if",
            "then",
            "else",
            "dependentSchemas",
            "patternProperties",
        ] {
            if map.contains_key(key) {
                self.fail(
                    path,
                    format!("`{key}` is not supported by llama.cpp's grammar converter"),
                );
            }
        }
        let mut out = Map::new();
        let mut moved = Map::new();
        let integer = type_names(map.get("type")).contains(&"integer");
        for (k, v) in map {
            let child = |run: &mut Self, key: &str, v: &'s Value| {
                run.llama(v, &format!("{path}/{key}"), depth + 1)
            };
            match k.as_str() {
                "$defs" | "definitions" | "$ref" => {}
                "properties" => {
                    let props = v
                        .as_object()
                        .map(|props| {
                            props
                                .iter()
                                .map(|(name, p)| {
                                    (
                                        name.clone(),
                                        child(self, &format!("properties/{}", escape(name)), p),
                                    )
                                })
                                .collect()
                        })
                        .unwrap_or_default();
                    out.insert(k.clone(), Value::Object(props));
                }
                "items" => {
                    let lowered = child(self, "items", v);
                    out.insert(k.clone(), lowered);
                }
                "anyOf" | "oneOf" => {
                    let branches = v
                        .as_array()
                        .map(|bs| {
                            bs.iter()
                                .enumerate()
                                .map(|(i, b)| child(self, &format!("{k}/{i}"), b))
                                .collect()
                        })
                        .unwrap_or_default();
                    out.insert(k.clone(), Value::Array(branches));
                }
                "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" if !integer => {
                    moved.insert(k.clone(), v.clone());
                }
                "pattern"
                    if !v
                        .as_str()
                        .is_some_and(|p| p.starts_with('^') && p.ends_with('$')) =>
                {
                    moved.insert(k.clone(), v.clone());
                }
                "format" if v.as_str().is_some_and(|f| matches!(f, "uri" | "email")) => {
                    moved.insert(k.clone(), v.clone());
                }
                "uniqueItems" | "contains" | "prefixItems" | "$anchor" | "multipleOf" => {
                    moved.insert(k.clone(), v.clone());
                }
                _ => {
                    out.insert(k.clone(), v.clone());
                }
            }
        }
        describe(&mut out, &moved);
        if pushed {
            self.inlining.pop();
        }
        Value::Object(out)
    }

    /// Keeps `kept` keywords (recursing into sub-schemas), reads `oneOf` as `anyOf`, moves the
    /// rest into `description`.
    fn generic(&mut self, node: &Value, path: &str, depth: usize, kept: &[&str]) -> Value {
        let Value::Object(map) = node else {
            return node.clone();
        };
        if self.too_deep(path, depth) {
            return node.clone();
        }
        let mut out = Map::new();
        let mut moved = Map::new();
        for (k, v) in map {
            let key = if k == "oneOf" { "anyOf" } else { k.as_str() };
            if !kept.contains(&key) {
                moved.insert(k.clone(), v.clone());
                continue;
            }
            let lowered = match (key, v) {
                ("properties" | "$defs", Value::Object(children)) => Value::Object(
                    children
                        .iter()
                        .map(|(name, c)| {
                            let p = format!("{path}/{k}/{}", escape(name));
                            (name.clone(), self.generic(c, &p, depth + 1, kept))
                        })
                        .collect(),
                ),
                ("anyOf" | "prefixItems", Value::Array(branches)) => Value::Array(
                    branches
                        .iter()
                        .enumerate()
                        .map(|(i, b)| self.generic(b, &format!("{path}/{k}/{i}"), depth + 1, kept))
                        .collect(),
                ),
                ("items" | "additionalProperties", Value::Object(_)) => {
                    self.generic(v, &format!("{path}/{k}"), depth + 1, kept)
                }
                _ => v.clone(),
            };
            out.insert(key.to_owned(), lowered);
        }
        describe(&mut out, &moved);
        Value::Object(out)
    }
}

/// What [`Run::inline`] found.
enum Inlined<'s> {
    /// The node itself (no `$ref`).
    Node(&'s Map<String, Value>),
    /// The schema a `$ref` names (pushed on the inlining stack).
    Ref(&'s Map<String, Value>),
    /// Nothing usable; the error is recorded.
    Failed,
}

/// Appends `{key: value, ...}` for each moved keyword to the node's description (after a blank
/// line when there is one), the way Anthropic's SDK writes it.
fn describe(out: &mut Map<String, Value>, moved: &Map<String, Value>) {
    if moved.is_empty() {
        return;
    }
    let pairs: Vec<String> = moved
        .iter()
        .map(|(k, v)| match v {
            Value::String(s) => format!("{k}: {s}"),
            other => format!("{k}: {other}"),
        })
        .collect();
    let note = format!("{{{}}}", pairs.join(", "));
    let text = match out.get("description").and_then(Value::as_str) {
        Some(existing) if !existing.is_empty() => format!("{existing}\n\n{note}"),
        _ => note,
    };
    out.insert("description".into(), Value::String(text));
}

/// Moves `keys` into the description of every node that has them.
fn soften(node: &mut Value, keys: &[&str], depth: usize) {
    let Value::Object(map) = node else { return };
    if depth > MAX_DEPTH {
        return;
    }
    let mut moved = Map::new();
    for key in keys {
        if let Some(v) = map.remove(*key) {
            moved.insert((*key).to_owned(), v);
        }
    }
    describe(map, &moved);
    for_each_child_mut(map, &mut |child| soften(child, keys, depth + 1));
}

/// `oneOf` read as `anyOf` (what both OpenAI's and Anthropic's SDKs do: the model cannot be
/// held to "exactly one", and the value is checked locally anyway).
fn rename_one_of(node: &mut Value, depth: usize) {
    let Value::Object(map) = node else { return };
    if depth > MAX_DEPTH {
        return;
    }
    if !map.contains_key("anyOf") {
        if let Some(branches) = map.remove("oneOf") {
            map.insert("anyOf".into(), branches);
        }
    }
    for_each_child_mut(map, &mut |child| rename_one_of(child, depth + 1));
}

/// Properties not in their object's `required`, and properties whose schema is a union
/// (`anyOf` or a type array), across the schema.
fn count_optional_and_unions(node: &Value, depth: usize) -> (usize, usize) {
    let Value::Object(map) = node else {
        return (0, 0);
    };
    if depth > MAX_DEPTH {
        return (0, 0);
    }
    let mut optional = 0;
    let mut unions = 0;
    if let Some(Value::Object(props)) = map.get("properties") {
        let required: Vec<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for (name, p) in props {
            optional += usize::from(!required.contains(&name.as_str()));
            unions +=
                usize::from(p.get("anyOf").is_some() || p.get("type").is_some_and(Value::is_array));
        }
    }
    let mut sum = (optional, unions);
    for_each_child(map, "", |child, _| {
        let (o, u) = count_optional_and_unions(child, depth + 1);
        sum.0 += o;
        sum.1 += u;
    });
    sum
}

/// The type names a `type` keyword lists.
fn type_names(ty: Option<&Value>) -> Vec<&str> {
    match ty {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// Every sub-schema of a node, with its path.
fn for_each_child(map: &Map<String, Value>, path: &str, mut f: impl FnMut(&Value, String)) {
    for key in ["properties", "$defs", "definitions"] {
        if let Some(Value::Object(children)) = map.get(key) {
            for (name, c) in children {
                f(c, format!("{path}/{key}/{}", escape(name)));
            }
        }
    }
    for key in ["anyOf", "oneOf", "allOf", "prefixItems"] {
        if let Some(Value::Array(children)) = map.get(key) {
            for (i, c) in children.iter().enumerate() {
                f(c, format!("{path}/{key}/{i}"));
            }
        }
    }
    for key in ["items", "additionalProperties", "not"] {
        if let Some(c @ Value::Object(_)) = map.get(key) {
            f(c, format!("{path}/{key}"));
        }
    }
}

fn for_each_child_mut(map: &mut Map<String, Value>, f: &mut dyn FnMut(&mut Value)) {
    for (key, child) in map.iter_mut() {
        match (key.as_str(), child) {
            ("properties" | "$defs" | "definitions", Value::Object(children)) => {
                children.values_mut().for_each(&mut *f)
            }
            ("anyOf" | "oneOf" | "allOf" | "prefixItems", Value::Array(children)) => {
                children.iter_mut().for_each(&mut *f)
            }
            ("items" | "additionalProperties" | "not", c @ Value::Object(_)) => f(c),
            _ => {}
        }
    }
}

/// A JSON pointer segment.
fn escape(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}
