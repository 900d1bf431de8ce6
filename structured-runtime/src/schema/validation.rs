//! Checks a JSON value against a schema given as data and reports every violation with its path.
//!
//! Covers the keywords strict schemas use: `type`, `enum`, `const`, `minimum`/`maximum` (and the
//! exclusive forms), `minLength`/`maxLength`, `properties`, `required`, `additionalProperties`,
//! `items`, `minItems`/`maxItems`, `anyOf` and local `$ref`. Other keywords are not checked.
//! `from_json` uses it to explain a refusal completely, so acceptance never depends on it.

use serde_json::{Map, Value};

use crate::schema::validate::{preview_json, Path, Rule, Violation};

/// Walks deeper than any input `serde_json` parses (128) plus room for `$ref` hops.
const MAX_DEPTH: usize = 256;

/// Every violation of `instance` against `schema` (the root, against which `$ref`s resolve).
pub fn check_instance(schema: &Value, instance: &Value) -> Vec<Violation> {
    check_part(schema, schema, instance)
}

/// Every violation of `instance` against `part`, a sub-schema of `root` (`$ref`s resolve
/// against `root`).
pub(crate) fn check_part(root: &Value, part: &Value, instance: &Value) -> Vec<Violation> {
    let mut check = Check {
        root,
        out: Vec::new(),
    };
    check.node(part, instance, &Path::root(), 0);
    check.out
}

struct Check<'a> {
    root: &'a Value,
    out: Vec<Violation>,
}

impl<'a> Check<'a> {
    fn push(&mut self, path: &Path<'_>, rule: Rule, expected: String, found: String) {
        self.out.push(Violation {
            path: path.to_pointer(),
            rule,
            expected,
            found,
        });
    }

    fn node(&mut self, schema: &'a Value, value: &Value, path: &Path<'_>, depth: usize) {
        let Value::Object(s) = schema else { return };
        if depth > MAX_DEPTH {
            return;
        }
        if let Some(target) = s
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| self.resolve(r))
        {
            self.node(target, value, path, depth + 1);
        }
        if let Some(Value::Array(branches)) = s.get("anyOf") {
            self.any_of(branches, value, path, depth);
        }
        if let Some(types) = s.get("type") {
            if !type_matches(types, value) {
                let expected = describe_types(types);
                self.push(path, Rule::Type, expected, preview_json(value));
                return;
            }
        }
        if let Some(Value::Array(allowed)) = s.get("enum") {
            if !allowed.iter().any(|a| json_eq(a, value)) {
                let expected = describe_values(allowed);
                self.push(path, Rule::Enum, expected, preview_json(value));
            }
        }
        if let Some(c) = s.get("const") {
            if !json_eq(c, value) {
                self.push(
                    path,
                    Rule::Enum,
                    format!("exactly {c}"),
                    preview_json(value),
                );
            }
        }
        match value {
            Value::Number(n) => self.number(s, n.as_f64().unwrap_or(f64::NAN), value, path),
            Value::String(text) => self.string(s, text, value, path),
            Value::Array(items) => self.array(s, items, path, depth),
            Value::Object(map) => self.object(s, map, path, depth),
            _ => {}
        }
    }

    fn resolve(&self, reference: &str) -> Option<&'a Value> {
        let pointer = reference.strip_prefix('#')?;
        self.root.pointer(pointer)
    }

    fn any_of(&mut self, branches: &'a [Value], value: &Value, path: &Path<'_>, depth: usize) {
        let mut reports = Vec::new();
        for branch in branches {
            let mut sub = Check {
                root: self.root,
                out: Vec::new(),
            };
            sub.node(branch, value, path, depth + 1);
            if sub.out.is_empty() {
                return;
            }
            reports.push((branch, sub.out));
        }
        // When exactly one branch takes this kind of value (the usual `T or null`), its own
        // violations say more than "no branch matched".
        let mut same_type = reports
            .into_iter()
            .filter(|(b, _)| b.get("type").is_none_or(|t| type_matches(t, value)));
        match (same_type.next(), same_type.next()) {
            (Some((_, violations)), None) => self.out.extend(violations),
            _ => self.push(
                path,
                Rule::AnyOf,
                format!("a value matching one of {} schemas", branches.len()),
                preview_json(value),
            ),
        }
    }

    fn number(&mut self, s: &Map<String, Value>, n: f64, value: &Value, path: &Path<'_>) {
        let min = s.get("minimum").and_then(Value::as_f64);
        let max = s.get("maximum").and_then(Value::as_f64);
        let xmin = s.get("exclusiveMinimum").and_then(Value::as_f64);
        let xmax = s.get("exclusiveMaximum").and_then(Value::as_f64);
        let bad = min.is_some_and(|m| n < m)
            || max.is_some_and(|m| n > m)
            || xmin.is_some_and(|m| n <= m)
            || xmax.is_some_and(|m| n >= m);
        if bad {
            let mut parts = Vec::new();
            if let Some(m) = s.get("minimum") {
                parts.push(format!(">= {m}"));
            }
            if let Some(m) = s.get("exclusiveMinimum") {
                parts.push(format!("> {m}"));
            }
            if let Some(m) = s.get("maximum") {
                parts.push(format!("<= {m}"));
            }
            if let Some(m) = s.get("exclusiveMaximum") {
                parts.push(format!("< {m}"));
            }
            let expected = match (s.get("minimum"), s.get("maximum"), parts.len()) {
                (Some(lo), Some(hi), 2) => format!("a number in [{lo}, {hi}]"),
                _ => format!("a number {}", parts.join(" and ")),
            };
            self.push(path, Rule::Range, expected, preview_json(value));
        }
    }

    fn string(&mut self, s: &Map<String, Value>, text: &str, value: &Value, path: &Path<'_>) {
        let min = s.get("minLength").and_then(Value::as_u64);
        let max = s.get("maxLength").and_then(Value::as_u64);
        if min.is_none() && max.is_none() {
            return;
        }
        let len = text.chars().count() as u64;
        if min.is_some_and(|m| len < m) || max.is_some_and(|m| len > m) {
            let expected = format!(
                "a string of {} to {} characters",
                min.unwrap_or(0),
                max.map_or("any number of".to_owned(), |m| m.to_string())
            );
            self.push(
                path,
                Rule::Length,
                expected,
                format!("{len} characters: {}", preview_json(value)),
            );
        }
    }

    fn array(&mut self, s: &'a Map<String, Value>, items: &[Value], path: &Path<'_>, depth: usize) {
        let min = s.get("minItems").and_then(Value::as_u64);
        let max = s.get("maxItems").and_then(Value::as_u64);
        let len = items.len() as u64;
        if min.is_some_and(|m| len < m) || max.is_some_and(|m| len > m) {
            let expected = format!(
                "{} to {} items",
                min.unwrap_or(0),
                max.map_or("any number of".to_owned(), |m| m.to_string())
            );
            self.push(path, Rule::Items, expected, format!("{len} items"));
        }
        if let Some(item_schema @ Value::Object(_)) = s.get("items") {
            for (i, item) in items.iter().enumerate() {
                self.node(item_schema, item, &path.index(i), depth + 1);
            }
        }
    }

    fn object(
        &mut self,
        s: &'a Map<String, Value>,
        map: &Map<String, Value>,
        path: &Path<'_>,
        depth: usize,
    ) {
        let properties = s.get("properties").and_then(Value::as_object);
        if let Some(Value::Array(required)) = s.get("required") {
            for name in required.iter().filter_map(Value::as_str) {
                if !map.contains_key(name) {
                    let at = path.key(name);
                    self.push(
                        &at,
                        Rule::Required,
                        format!("property `{name}`"),
                        "nothing".into(),
                    );
                }
            }
        }
        let additional = s.get("additionalProperties");
        for (key, item) in map {
            let path = &path.key(key);
            match properties.and_then(|p| p.get(key)) {
                Some(sub) => self.node(sub, item, path, depth + 1),
                None => match additional {
                    Some(Value::Bool(false)) => {
                        let declared = properties
                            .map(|p| {
                                p.keys()
                                    .map(|k| format!("`{k}`"))
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            })
                            .unwrap_or_default();
                        self.push(
                            path,
                            Rule::AdditionalProperty,
                            format!("only the declared properties ({declared})"),
                            format!("property {}", crate::schema::validate::preview_str(key)),
                        );
                    }
                    Some(sub @ Value::Object(_)) => self.node(sub, item, path, depth + 1),
                    _ => {}
                },
            }
        }
    }
}

fn type_matches(types: &Value, value: &Value) -> bool {
    match types {
        Value::String(t) => one_type_matches(t, value),
        Value::Array(ts) => ts
            .iter()
            .filter_map(Value::as_str)
            .any(|t| one_type_matches(t, value)),
        _ => true,
    }
}

fn one_type_matches(t: &str, value: &Value) -> bool {
    match (t, value) {
        ("null", Value::Null) | ("boolean", Value::Bool(_)) | ("string", Value::String(_)) => true,
        ("number", Value::Number(_))
        | ("array", Value::Array(_))
        | ("object", Value::Object(_)) => true,
        ("integer", Value::Number(n)) => {
            n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        _ => false,
    }
}

fn describe_types(types: &Value) -> String {
    let names: Vec<&str> = match types {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let with_article: Vec<String> = names
        .iter()
        .map(|t| match *t {
            "null" => "null".to_owned(),
            "integer" | "object" | "array" => format!("an {t}"),
            _ => format!("a {t}"),
        })
        .collect();
    with_article.join(" or ")
}

fn describe_values(values: &[Value]) -> String {
    let shown: Vec<String> = values.iter().map(Value::to_string).collect();
    format!("one of {}", shown.join(", "))
}

/// JSON equality where `1` equals `1.0`, as JSON Schema compares numbers.
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x == y || x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "level": {"type": "number", "minimum": 0.0, "maximum": 1.0},
                "kind": {"type": ["string", "null"], "enum": ["a", "b", null]},
                "items": {"type": "array", "items": {"$ref": "#/$defs/item"}},
                "count": {"type": "integer", "minimum": 0}
            },
            "required": ["level", "kind", "items", "count"],
            "additionalProperties": false,
            "$defs": {"item": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"], "additionalProperties": false}}
        })
    }

    fn report(instance: Value) -> Vec<(String, Rule, String, String)> {
        check_instance(&schema(), &instance)
            .into_iter()
            .map(|v| (v.path, v.rule, v.expected, v.found))
            .collect()
    }

    #[test]
    fn valid_value_has_no_violation() {
        assert_eq!(
            report(json!({"level": 0.5, "kind": null, "items": [{"n": 2.0}], "count": 3})),
            vec![]
        );
    }

    #[test]
    fn every_violation_is_reported_in_document_order() {
        let found = report(
            json!({"level": 1.5, "kind": "c", "items": [{"n": 1}, {"m": 1}, 7], "extra": 1}),
        );
        let s = |x: &str| x.to_owned();
        assert_eq!(
            found,
            vec![
                (
                    s("/count"),
                    Rule::Required,
                    s("property `count`"),
                    s("nothing")
                ),
                (
                    s("/level"),
                    Rule::Range,
                    s("a number in [0.0, 1.0]"),
                    s("1.5")
                ),
                (
                    s("/kind"),
                    Rule::Enum,
                    s("one of \"a\", \"b\", null"),
                    s("\"c\"")
                ),
                (
                    s("/items/1/n"),
                    Rule::Required,
                    s("property `n`"),
                    s("nothing")
                ),
                (
                    s("/items/1/m"),
                    Rule::AdditionalProperty,
                    s("only the declared properties (`n`)"),
                    s("property \"m\"")
                ),
                (s("/items/2"), Rule::Type, s("an object"), s("7")),
                (
                    s("/extra"),
                    Rule::AdditionalProperty,
                    s("only the declared properties (`level`, `kind`, `items`, `count`)"),
                    s("property \"extra\"")
                ),
            ]
        );
    }

    #[test]
    fn nullable_any_of_reports_the_inner_violation() {
        let schema = json!({"anyOf": [{"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"], "additionalProperties": false}, {"type": "null"}]});
        let out = check_instance(&schema, &json!({"x": 1}));
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].path.as_str(), out[0].rule), ("/x", Rule::Type));
        let out = check_instance(&schema, &json!(true));
        assert_eq!(out[0].rule, Rule::AnyOf);
        assert!(check_instance(&schema, &Value::Null).is_empty());
    }

    #[test]
    fn self_referencing_schema_terminates() {
        let schema = json!({"$defs": {"a": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"});
        assert!(check_instance(&schema, &json!(1)).is_empty());
    }
}
