//! Prompt guidance: the instruction a model reads to write JSON for a schema when nothing enforces
//! it. Rendered from the schema as data, so a derived type and a schema given at run time get the
//! same text.
//!
//! The sketch writes each node the way a model reads it fastest, in few tokens: `"a"|"b"` for an
//! enum, `number -1 to 1` for a range (each bound in its shortest form), `[{ ... }]` for an array
//! of objects, `[integer, string]` for a tuple, `[string] unique` for a set, `{string: number}`
//! for a map (`{"EUR"|"USD": integer}` when its keys are limited), a `//` comment for a
//! description (its closing full stop left out), one space of indent per level. A node using a
//! keyword the sketch has no notation for is written as compact JSON Schema in place, so no
//! constraint is ever dropped.

use std::fmt::Write as _;

use serde_json::{Map, Value};

use super::node::{JsonType, Node};

/// How guidance is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum GuidanceFormat {
    /// Whichever of the other two is shorter for this schema (the sketch, for every schema this
    /// crate derives).
    #[default]
    Shortest,
    /// A typed sketch of the JSON to write, with constraints and descriptions inline.
    Sketch,
    /// The JSON Schema itself, compact.
    JsonSchema,
}

const SKETCH_HEAD: &str =
    "Reply with JSON only, this shape (all keys required; null only where shown):";
const SKETCH_HEAD_OPTIONAL: &str = "Reply with JSON only, this shape (keys marked ? may be left out, all others required; null only where shown):";
/// One space per level: a wider indent costs a token on every line.
const INDENT: &str = " ";
const SCHEMA_HEAD: &str = "Reply with JSON only, valid against this JSON Schema:";

/// The guidance for the schema `root` named `name`, in `format`.
///
/// ```
/// use serde_json::json;
/// use structured_runtime::{GuidanceFormat, ResponseSchema};
///
/// let schema = ResponseSchema::new("mood", json!({
///     "type": "object",
///     "properties": {
///         "label": { "type": "string", "enum": ["calm", "tense"] },
///         "level": { "type": "number", "minimum": 0.0, "maximum": 1.0, "description": "How strong." }
///     },
///     "required": ["label", "level"],
///     "additionalProperties": false
/// }))?;
/// assert_eq!(
///     schema.guidance_as(GuidanceFormat::Sketch),
///     "Reply with JSON only, this shape (all keys required; null only where shown):\n\
///      {\n \"label\": \"calm\"|\"tense\",\n \"level\": number 0 to 1 // How strong\n}"
/// );
/// # Ok::<(), structured_runtime::SchemaError>(())
/// ```
pub(crate) fn render(
    name: &str,
    description: Option<&str>,
    root: &Value,
    format: GuidanceFormat,
) -> String {
    match format {
        GuidanceFormat::Sketch => sketch(name, description, root),
        GuidanceFormat::JsonSchema => json_schema(description, root),
        GuidanceFormat::Shortest => {
            let (a, b) = (
                sketch(name, description, root),
                json_schema(description, root),
            );
            if a.len() <= b.len() {
                a
            } else {
                b
            }
        }
    }
}

fn json_schema(description: Option<&str>, root: &Value) -> String {
    let mut out = String::from(SCHEMA_HEAD);
    if let Some(d) = description {
        out.push(' ');
        out.push_str(&one_line(d));
    }
    out.push('\n');
    out.push_str(&root.to_string());
    out
}

fn sketch(name: &str, description: Option<&str>, root: &Value) -> String {
    let root = Node::root(root);
    let mut s = Sketcher {
        root_name: name,
        optional_seen: false,
        root_referenced: false,
    };
    let mut body = String::new();
    let mut comments = Vec::new();
    s.node(root, 0, &mut body, &mut comments);
    if let Some(d) = description.map(one_line) {
        if !comments.contains(&d) {
            comments.insert(0, d);
        }
    }
    if let Some(Value::Object(defs)) = root.get("$defs") {
        for (name, def) in defs {
            let _ = write!(body, "\n{name} = ");
            let mut c = Vec::new();
            s.node(root.child(def), 0, &mut body, &mut c);
            push_comments(&mut body, &c);
        }
    }
    let mut out = String::from(if s.optional_seen {
        SKETCH_HEAD_OPTIONAL
    } else {
        SKETCH_HEAD
    });
    out.push('\n');
    // What the whole value is comes first, on its own line.
    if !comments.is_empty() {
        out.push_str("// ");
        out.push_str(&comments.join(" / "));
        out.push('\n');
    }
    if s.root_referenced {
        let _ = write!(out, "{} = ", s.root_name);
    }
    out.push_str(&body);
    out
}

struct Sketcher<'a> {
    root_name: &'a str,
    optional_seen: bool,
    /// A `{"$ref": "#"}` was written: the root needs its name.
    root_referenced: bool,
}

/// Keywords the sketch writes in its own notation; any other makes the node raw JSON Schema.
const SKETCHED: &[&str] = &[
    "type",
    "enum",
    "const",
    "description",
    "title",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "minItems",
    "maxItems",
    "prefixItems",
    "uniqueItems",
    "propertyNames",
    "minProperties",
    "maxProperties",
    "anyOf",
    "$ref",
    "$defs",
];

impl Sketcher<'_> {
    /// Writes `node` inline into `out` (objects span lines at `indent`); its descriptions go to
    /// `comments`, for the caller to put at the end of the line.
    fn node(
        &mut self,
        node: Node<'_>,
        indent: usize,
        out: &mut String,
        comments: &mut Vec<String>,
    ) {
        let Some(map) = node.map() else {
            // `true` / `false` schemas.
            out.push_str(if node.value() == &Value::Bool(false) {
                "nothing"
            } else {
                "any"
            });
            return;
        };
        // Arrays and `anyOf` nest without indenting: the node's own depth says when to stop.
        let raw = node.too_deep()
            || map
                .keys()
                .any(|k| !SKETCHED.contains(&k.as_str()) || (k == "$defs" && indent > 0))
            // A tuple with more items after it, and names limited beside declared properties,
            // have no notation here.
            || (map.contains_key("prefixItems") && map.contains_key("items"))
            || (map.contains_key("propertyNames") && map.contains_key("properties"));
        if raw {
            let _ = write!(out, "schema {}", node.value());
            return;
        }
        if let Some(t) = map.get("title").and_then(Value::as_str) {
            comments.push(one_line(t));
        }
        if let Some(d) = map.get("description").and_then(Value::as_str) {
            comments.push(one_line(d));
        }
        if let Some(values) = node.enum_values() {
            let literals: Vec<String> = values.iter().map(Value::to_string).collect();
            out.push_str(&literals.join("|"));
            return;
        }
        if let Some(c) = map.get("const") {
            let _ = write!(out, "{c}");
            return;
        }
        if let Some(r) = node.reference() {
            match r {
                "#" => {
                    self.root_referenced = true;
                    out.push_str(self.root_name);
                }
                _ => out.push_str(r.strip_prefix("#/$defs/").unwrap_or(r)),
            }
            return;
        }
        if let Some(branches) = node.any_of() {
            for (i, b) in branches.enumerate() {
                if i > 0 {
                    out.push('|');
                }
                // A branch written over several lines (an object: a data enum's variant) has
                // its own description beside its opening brace; another's goes with the union's.
                let start = out.len();
                let mut own = Vec::new();
                self.node(b, indent, out, &mut own);
                let spans_lines = out.get(start..).is_some_and(|b| b.starts_with("{\n"));
                if spans_lines && !own.is_empty() {
                    let mut beside = String::new();
                    push_comments(&mut beside, &own);
                    out.insert_str(start + 1, &beside);
                } else {
                    comments.extend(own);
                }
            }
            return;
        }
        let types = node.types();
        if types.is_empty() {
            out.push_str("any");
        }
        for (i, t) in types.iter().enumerate() {
            if i > 0 {
                out.push('|');
            }
            match t {
                JsonType::Object => self.object(node, map, indent, out, comments),
                JsonType::Array => self.array(node, map, indent, out, comments),
                JsonType::String => string(map, out),
                JsonType::Number | JsonType::Integer => number(t.name(), map, out),
                other => out.push_str(other.name()),
            }
        }
    }

    fn object(
        &mut self,
        node: Node<'_>,
        map: &Map<String, Value>,
        indent: usize,
        out: &mut String,
        comments: &mut Vec<String>,
    ) {
        if !map.get("properties").is_some_and(Value::is_object) {
            self.map(node, map, indent, out, comments);
            return;
        }
        out.push('{');
        let pad = INDENT.repeat(indent + 1);
        let count = node.properties().count();
        for (i, (key, value)) in node.properties().enumerate() {
            out.push('\n');
            out.push_str(&pad);
            let _ = write!(out, "{}", Value::from(key));
            if !node.is_required(key) {
                self.optional_seen = true;
                out.push('?');
            }
            out.push_str(": ");
            let mut comments = Vec::new();
            self.node(value, indent + 1, out, &mut comments);
            if i + 1 < count {
                out.push(',');
            }
            push_comments(out, &comments);
        }
        match map.get("additionalProperties") {
            Some(Value::Bool(false)) => {}
            other => {
                let _ = write!(out, "\n{pad}...other keys: ");
                let mut comments = Vec::new();
                match other {
                    Some(schema @ Value::Object(_)) => {
                        self.node(node.child(schema), indent + 1, out, &mut comments)
                    }
                    _ => out.push_str("any"),
                }
                push_comments(out, &comments);
            }
        }
        out.push('\n');
        out.push_str(&INDENT.repeat(indent));
        out.push('}');
    }

    /// An object without declared properties: `{string: T}` for a map (`{"a"|"b": T}` when
    /// `propertyNames` limits the keys), `object` for any object.
    fn map(
        &mut self,
        node: Node<'_>,
        map: &Map<String, Value>,
        indent: usize,
        out: &mut String,
        comments: &mut Vec<String>,
    ) {
        match map.get("additionalProperties") {
            Some(values @ Value::Object(_)) => {
                // Descriptions of the keys and values join the map's own, at the line's end.
                out.push('{');
                match map.get("propertyNames") {
                    Some(names) => self.node(node.child(names), indent, out, comments),
                    None => out.push_str("string"),
                }
                out.push_str(": ");
                self.node(node.child(values), indent, out, comments);
                out.push('}');
            }
            Some(Value::Bool(false)) => out.push_str("object with no keys"),
            _ => out.push_str("object"),
        }
        let (min, max) = (map.get("minProperties"), map.get("maxProperties"));
        if min.is_some() || max.is_some() {
            out.push(' ');
            bounds(min, max, out);
            out.push_str(" keys");
        }
    }

    /// `[T]`, or `[A, B]` for a tuple; `unique` for a set; the item count when bounded (a
    /// tuple's own count goes without saying).
    fn array(
        &mut self,
        node: Node<'_>,
        map: &Map<String, Value>,
        indent: usize,
        out: &mut String,
        comments: &mut Vec<String>,
    ) {
        out.push('[');
        let mut positions = 0;
        match (map.get("prefixItems"), map.get("items")) {
            (Some(Value::Array(tuple)), _) => {
                positions = tuple.len();
                for (i, item) in tuple.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    self.node(node.child(item), indent, out, comments);
                }
            }
            (_, Some(items)) => self.node(node.child(items), indent, out, comments),
            _ => out.push_str("any"),
        }
        out.push(']');
        if map.get("uniqueItems") == Some(&Value::Bool(true)) {
            out.push_str(" unique");
        }
        let (min, max) = (map.get("minItems"), map.get("maxItems"));
        let count = |v: Option<&Value>| v.and_then(Value::as_u64);
        let tuple_count = map.contains_key("prefixItems")
            && count(min) == Some(positions as u64)
            && count(max) == Some(positions as u64);
        if (min.is_some() || max.is_some()) && !tuple_count {
            out.push(' ');
            bounds(min, max, out);
            out.push_str(" items");
        }
    }
}

fn string(map: &Map<String, Value>, out: &mut String) {
    out.push_str("string");
    let (min, max) = (map.get("minLength"), map.get("maxLength"));
    if min.is_some() || max.is_some() {
        out.push_str(" of ");
        bounds(min, max, out);
        out.push_str(" chars");
    }
    if let Some(p) = map.get("pattern") {
        let _ = write!(out, " matching {p}");
    }
    if let Some(f) = map.get("format") {
        let _ = write!(out, " in format {f}");
    }
}

fn number(kind: &str, map: &Map<String, Value>, out: &mut String) {
    out.push_str(kind);
    let (min, max) = (map.get("minimum"), map.get("maximum"));
    let (xmin, xmax) = (map.get("exclusiveMinimum"), map.get("exclusiveMaximum"));
    if min.is_some() || max.is_some() {
        out.push(' ');
        bounds(min, max, out);
    }
    if let Some(x) = xmin {
        let _ = write!(out, " > {x}");
    }
    if let Some(x) = xmax {
        let _ = write!(out, " < {x}");
    }
}

/// `a to b`, `>= a`, `<= b`, or `a` when both are `a`, each bound in its shortest form.
fn bounds(min: Option<&Value>, max: Option<&Value>, out: &mut String) {
    let _ = match (min, max) {
        (Some(a), Some(b)) if a == b => write!(out, "{}", shortest(a)),
        (Some(a), Some(b)) => write!(out, "{} to {}", shortest(a), shortest(b)),
        (Some(a), None) => write!(out, ">= {}", shortest(a)),
        (None, Some(b)) => write!(out, "<= {}", shortest(b)),
        (None, None) => Ok(()),
    };
}

/// A number as JSON writes it, without a fraction that is zero (`1.0` is `1`: the same number,
/// and the type word before it says whether fractions are allowed); other values as JSON.
fn shortest(value: &Value) -> String {
    let text = value.to_string();
    match text.strip_suffix(".0") {
        Some(whole) if value.is_number() && !text.contains(['e', 'E']) => whole.to_owned(),
        _ => text,
    }
}

/// ` // a / b` after a line's content.
fn push_comments(out: &mut String, comments: &[String]) {
    if !comments.is_empty() {
        out.push_str(" // ");
        out.push_str(&comments.join(" / "));
    }
}

/// A description on one line (a `//` comment ends at the line's end), without the full stop
/// that ends it (a token on every line, and the comment's end says as much).
fn one_line(text: &str) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.strip_suffix('.') {
        Some(stem) if !stem.ends_with('.') => stem.to_owned(),
        _ => line,
    }
}

#[cfg(test)]
mod tests {
    use super::super::node::MAX_DEPTH;
    use super::*;
    use serde_json::json;

    fn sketch_of(schema: Value) -> String {
        render("t", None, &schema, GuidanceFormat::Sketch)
    }

    #[test]
    fn nullable_nested_and_arrays() {
        let text = sketch_of(json!({
            "type": "object",
            "properties": {
                "tags": { "type": "array", "items": { "type": "string", "enum": ["a", "b"] }, "maxItems": 3 },
                "note": { "type": ["string", "null"], "maxLength": 20 },
                "inner": { "anyOf": [
                    { "type": "object", "properties": { "n": { "type": "integer", "minimum": 0 } },
                      "required": ["n"], "additionalProperties": false },
                    { "type": "null" }
                ], "description": "Optional part." }
            },
            "required": ["tags", "note", "inner"],
            "additionalProperties": false
        }));
        assert_eq!(
            text,
            "Reply with JSON only, this shape (all keys required; null only where shown):\n{\n \
             \"tags\": [\"a\"|\"b\"] <= 3 items,\n \
             \"note\": string of <= 20 chars|null,\n \
             \"inner\": {\n  \"n\": integer >= 0\n }|null // Optional part\n}"
        );
    }

    #[test]
    fn unknown_keywords_are_kept_as_schema() {
        let text = sketch_of(json!({
            "type": "object",
            "properties": { "x": { "type": "string", "contentEncoding": "base64" } },
            "required": [],
        }));
        assert!(text.contains(r#""x"?: schema {"type":"string","contentEncoding":"base64"}"#));
        assert!(text.contains("...other keys: any"));
        assert!(text.starts_with(SKETCH_HEAD_OPTIONAL));
    }

    #[test]
    fn deep_nesting_is_written_as_raw_schema() {
        let mut node = json!({ "type": "string" });
        for _ in 0..200 {
            node = json!({ "type": "array", "items": node });
        }
        let mut root = serde_json::Map::new();
        root.insert("type".into(), json!("object"));
        root.insert("properties".into(), json!({}));
        root.insert("required".into(), json!([]));
        root.insert("additionalProperties".into(), json!(false));
        root.insert("$defs".into(), json!({}));
        if let Some(Value::Object(props)) = root.get_mut("properties") {
            props.insert("deep".into(), node);
        }
        let text = render("t", None, &Value::Object(root), GuidanceFormat::Sketch);
        // One `[` per array node the walk may enter, then the rest as schema.
        assert!(text.contains(&format!("{}schema {{", "[".repeat(MAX_DEPTH))));
    }

    #[test]
    fn recursion_names_definitions() {
        let text = sketch_of(json!({
            "type": "object",
            "properties": { "kids": { "type": "array", "items": { "$ref": "#" } },
                            "leaf": { "$ref": "#/$defs/Leaf" } },
            "required": ["kids", "leaf"],
            "additionalProperties": false,
            "$defs": { "Leaf": { "type": "boolean" } }
        }));
        assert!(text.contains("\nt = {\n \"kids\": [t],\n \"leaf\": Leaf\n}\nLeaf = boolean"));
    }

    #[test]
    fn tuples_sets_and_maps_have_a_notation() {
        let text = sketch_of(json!({
            "type": "object",
            "properties": {
                "span": { "type": "array", "prefixItems": [{ "type": "integer" }, { "type": "string" }],
                          "minItems": 2, "maxItems": 2 },
                "tags": { "type": "array", "items": { "type": "string" }, "uniqueItems": true, "minItems": 1 },
                "rgb": { "type": "array", "items": { "type": "integer" }, "minItems": 3, "maxItems": 3 },
                "totals": { "type": "object", "additionalProperties": { "type": "number", "minimum": 0.5 },
                            "propertyNames": { "enum": ["EUR", "USD"] }, "maxProperties": 2,
                            "description": "Per currency." },
                "labels": { "type": "object", "additionalProperties": { "type": "boolean" } },
                "closed": { "type": "object", "additionalProperties": false },
                "open": { "type": "object" }
            },
            "required": ["span", "tags", "rgb", "totals", "labels", "closed", "open"],
            "additionalProperties": false
        }));
        let body = text.split_once('\n').unwrap().1;
        assert_eq!(
            body,
            "{\n \
             \"span\": [integer, string],\n \
             \"tags\": [string] unique >= 1 items,\n \
             \"rgb\": [integer] 3 items,\n \
             \"totals\": {\"EUR\"|\"USD\": number >= 0.5} <= 2 keys, // Per currency\n \
             \"labels\": {string: boolean},\n \
             \"closed\": object with no keys,\n \
             \"open\": object\n}"
        );
        // A tuple followed by more items has no notation: kept as schema.
        let text = sketch_of(json!({
            "type": "object",
            "properties": { "t": { "type": "array", "prefixItems": [{ "type": "integer" }],
                                   "items": { "type": "string" } } },
            "required": ["t"],
            "additionalProperties": false
        }));
        assert!(text.contains(r#""t": schema {"type":"array""#), "{text}");
    }
}
