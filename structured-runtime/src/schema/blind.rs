//! Whether a schema looks inside a value below the one it judges: what lets rules beside the
//! way to a long list (a condition on another member, `not` both of two members, a rule on the
//! names) stand while the list is read an item at a time (`schema::parts`). Such a rule judges
//! the value with the list emptied exactly as it judges it whole when it reads only other
//! members, names, counts and the kind of the values on the way, through every schema it
//! applies (`allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`, `dependentSchemas`, local
//! `$ref`s).

use serde_json::Value;

use super::checks::asserts_nothing;
use super::node::Node;
use super::pointer::Step;

/// Schema nodes [`blind_below`] looks at, at most (past that, it says the schema may look).
const MAX_NODES: usize = 4096;

/// Whether the schema `node`, applied to a value, judges it the same whatever the value
/// `steps` below it holds, as long as that value keeps its kind (the value on the way: a list
/// emptied, an object's members taken out), in the same words: it looks at what lies beside
/// the way, at names and counts above it, at the kind of the value on the way, and no further.
/// Keywords in `skip` (the way's own, judged by the reading in parts) are not looked at here.
/// Within [`MAX_NODES`] schema nodes; `false` past them.
pub(crate) fn blind_below(node: Node<'_>, steps: &[Step], skip: &[&str]) -> bool {
    let mut budget = MAX_NODES;
    blind(node, steps, skip, &mut budget)
}

/// [`blind_below`] within `budget` schema nodes.
fn blind(node: Node<'_>, steps: &[Step], skip: &[&str], budget: &mut usize) -> bool {
    if *budget == 0 || node.too_deep() {
        return false;
    }
    *budget -= 1;
    let Some(map) = node.map() else {
        // `true` and `false` judge every value alike.
        return true;
    };
    let each = |keyword: &str, budget: &mut usize| match node.get(keyword) {
        Some(Value::Array(branches)) => branches
            .iter()
            .all(|b| blind(node.child(b), steps, &[], budget)),
        _ => false,
    };
    map.iter().all(|(keyword, value)| {
        let keyword = keyword.as_str();
        if skip.contains(&keyword) || asserts_nothing(keyword) {
            return true;
        }
        match keyword {
            // The same schema again, on the same value.
            "allOf" | "anyOf" | "oneOf" => each(keyword, budget),
            "not" | "if" | "then" | "else" => blind(node.child(value), steps, &[], budget),
            "dependentSchemas" => value.as_object().is_some_and(|schemas| {
                schemas
                    .values()
                    .all(|s| blind(node.child(s), steps, &[], budget))
            }),
            "$ref" => match value.as_str().map(|reference| node.lookup(reference)) {
                Some(Ok(target)) => blind(target, steps, &[], budget),
                _ => false,
            },
            // Definitions are read only through references.
            "$defs" | "definitions" | "$schema" => true,
            // The kind of every value above the way, and of the value on the way, is kept.
            "type" => true,
            _ => match steps.split_first() {
                // At the value on the way: nothing else may look at it (what it holds changes).
                None => false,
                Some((Step::Key(name), below)) => {
                    blind_in_object(node, keyword, value, name, below, budget)
                }
                Some((Step::Index(index), below)) => {
                    blind_in_array(node, keyword, value, *index, below, budget)
                }
            },
        }
    })
}

/// [`blind_below`] for one `keyword` (its `value`) of `node`, applied to an object whose member
/// `name` is on the way (`below` it, the rest of the way).
fn blind_in_object(
    node: Node<'_>,
    keyword: &str,
    value: &Value,
    name: &str,
    below: &[Step],
    budget: &mut usize,
) -> bool {
    let declared = || node.property(name).is_some();
    let matched = || node.patterns_matching(name).next().is_some();
    match keyword {
        // Its names and count are kept.
        "required" | "minProperties" | "maxProperties" | "propertyNames" | "dependentRequired" => {
            true
        }
        "properties" => match value.get(name) {
            Some(member) => blind(node.child(member), below, &[], budget),
            None => true,
        },
        "patternProperties" => node
            .patterns_matching(name)
            .all(|member| blind(member, below, &[], budget)),
        "additionalProperties" if declared() || matched() => true,
        "additionalProperties" => blind(node.child(value), below, &[], budget),
        // What judges only lists, strings and numbers passes an object by.
        _ => judges_no_object(keyword),
    }
}

/// [`blind_below`] for one `keyword` (its `value`) of `node`, applied to a list whose item
/// `index` is on the way (a tuple's position; `below` it, the rest of the way).
fn blind_in_array(
    node: Node<'_>,
    keyword: &str,
    value: &Value,
    index: usize,
    below: &[Step],
    budget: &mut usize,
) -> bool {
    let prefix = node
        .get("prefixItems")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    match keyword {
        // Its count is kept.
        "minItems" | "maxItems" => true,
        "prefixItems" => match value.as_array().and_then(|p| p.get(index)) {
            Some(position) => blind(node.child(position), below, &[], budget),
            None => true,
        },
        "items" if value.is_array() => false,
        "items" if index < prefix => true,
        "items" => blind(node.child(value), below, &[], budget),
        // (What compares or counts the items looks inside them.)
        "contains" | "minContains" | "maxContains" | "uniqueItems" | "unevaluatedItems"
        | "additionalItems" | "enum" | "const" => false,
        _ => judges_no_list(keyword),
    }
}

/// Whether `keyword` judges only values that are not objects (an object passes it).
fn judges_no_object(keyword: &str) -> bool {
    matches!(
        keyword,
        "items"
            | "prefixItems"
            | "additionalItems"
            | "contains"
            | "minContains"
            | "maxContains"
            | "minItems"
            | "maxItems"
            | "uniqueItems"
            | "unevaluatedItems"
    ) || judges_only_scalars(keyword)
}

/// Whether `keyword` judges only values that are not lists (a list passes it).
fn judges_no_list(keyword: &str) -> bool {
    matches!(
        keyword,
        "properties"
            | "patternProperties"
            | "additionalProperties"
            | "required"
            | "minProperties"
            | "maxProperties"
            | "propertyNames"
            | "dependentRequired"
            | "dependentSchemas"
            | "unevaluatedProperties"
    ) || judges_only_scalars(keyword)
}

/// Whether `keyword` judges only strings or numbers.
fn judges_only_scalars(keyword: &str) -> bool {
    matches!(
        keyword,
        "minLength"
            | "maxLength"
            | "pattern"
            | "format"
            | "minimum"
            | "maximum"
            | "exclusiveMinimum"
            | "exclusiveMaximum"
            | "multipleOf"
            | "contentEncoding"
            | "contentMediaType"
            | "contentSchema"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Where the walk says a schema does not look inside `rows`, the validator gives the same
    /// verdict with `rows` emptied as on the whole value; where it looks, some value tells.
    #[test]
    fn a_schema_blind_to_the_rows_judges_them_emptied_as_it_judges_them_whole() {
        let rows = [Step::Key("rows".into())];
        let values = [
            json!({"kind": "a", "rows": [1, 2, 3]}),
            json!({"kind": "a", "note": "n", "rows": [1, 2, 3]}),
            json!({"kind": "b", "rows": []}),
            json!({"kind": "b", "note": "n", "rows": [7]}),
            json!({"rows": [1], "extra": true}),
        ];
        let emptied = |v: &Value| {
            let mut v = v.clone();
            v["rows"] = json!([]);
            v
        };
        let blind_schemas = [
            json!({"if": {"properties": {"kind": {"const": "a"}}}, "then": {"required": ["note"]}}),
            json!({"not": {"required": ["kind", "note"]}}),
            json!({"allOf": [{"maxProperties": 2}, {"properties": {"rows": {"type": "array"}}}]}),
            json!({"anyOf": [{"required": ["note"]}, {"additionalProperties": {"type": "string"}}]}),
            json!({"dependentSchemas": {"note": {"properties": {"kind": {"const": "b"}}}}}),
            json!({"oneOf": [{"$ref": "#/$defs/k"}, {"required": ["extra"]}], "$defs": {"k": {"required": ["kind"]}}}),
        ];
        for schema in &blind_schemas {
            assert!(blind_below(Node::root(schema), &rows, &[]), "{schema}");
            let validator = jsonschema::validator_for(schema).unwrap();
            for value in &values {
                assert_eq!(
                    validator.is_valid(value),
                    validator.is_valid(&emptied(value)),
                    "{schema} {value}"
                );
            }
        }
        let looking = [
            json!({"properties": {"rows": {"minItems": 1}}}),
            json!({"not": {"properties": {"rows": {"contains": {"const": 7}}}}}),
            json!({"additionalProperties": {"maxItems": 2}, "properties": {"kind": {}}}),
            json!({"if": {"properties": {"rows": {"items": {"maximum": 2}}}}, "then": {"required": ["x"]}}),
            json!({"enum": [{"kind": "a", "rows": [1, 2, 3]}]}),
        ];
        for schema in &looking {
            assert!(!blind_below(Node::root(schema), &rows, &[]), "{schema}");
            let validator = jsonschema::validator_for(schema).unwrap();
            assert!(
                values
                    .iter()
                    .any(|v| validator.is_valid(v) != validator.is_valid(&emptied(v))),
                "{schema}"
            );
        }
    }
}
