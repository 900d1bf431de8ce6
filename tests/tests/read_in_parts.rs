//! Reading an answer in parts (`read::parts::parse_value_json`: a long list an item at a time,
//! never the whole value) gives what `parse_value` gives on the whole value: the same text, the
//! same provenance, the same warnings and the same violations. Answers are valid values of each
//! schema, then given the mistakes models make in lists (a number as a string, a missing or
//! unknown key, a wrong case, an item that is not an object, a scalar where the list goes), then
//! broken in the ways the repairer mends.

use proptest::prelude::*;
use serde_json::{json, Value};
use structured_runtime::read::parts::{
    parse_value_json, parse_value_json_nesting_every_item, parse_value_json_within,
};
use structured_runtime::schema::{Rule, MAX_VIOLATIONS};
use structured_runtime::{
    parse_value, ParseError, ParseOptions, Parsed, ResponseSchema, SchemaLimits,
};

/// Schemas whose lists are read in parts: a root list, a list in an object (items by `$ref`),
/// two lists and a nested one, and counts on each.
fn schemas() -> Vec<ResponseSchema> {
    let tagged_batch = json!({
        "type": "object",
        "properties": {
            "kind": {"type": "string", "enum": ["batch"]},
            "scores": {"type": "array", "items": {"type": "number", "maximum": 100}, "maxItems": 4}
        },
        "required": ["kind", "scores"],
        "additionalProperties": false
    });
    let tagged_wait = json!({
        "type": "object",
        "properties": {"kind": {"const": "wait"}, "reason": {"type": "string"}},
        "required": ["kind", "reason"],
        "additionalProperties": false
    });
    // An enum's variants tagged by their one key.
    let keyed_batch = json!({
        "type": "object",
        "properties": {"Batch": {
            "type": "object",
            "properties": {"scores": {"type": "array", "items": {"type": "number", "maximum": 100}}},
            "required": ["scores"],
            "additionalProperties": false
        }},
        "required": ["Batch"],
        "additionalProperties": false
    });
    let keyed_wait = json!({
        "type": "object",
        "properties": {"Wait": {"type": "integer"}},
        "required": ["Wait"],
        "additionalProperties": false
    });
    let row = json!({
        "type": "object",
        "properties": {
            "id": {"type": "integer", "minimum": 0},
            "name": {"type": "string", "maxLength": 12},
            "ok": {"type": "boolean"},
            "kind": {"enum": ["alpha", "beta"]},
            "tags": {"type": "array", "items": {"type": "string"}}
        },
        "required": ["id", "name", "ok", "kind"],
        "additionalProperties": false
    });
    // An object with declared properties whose other members are judged by `additional` (or
    // dropped, or refused), their names by `propertyNames` and their count with the declared.
    let named_and_counted = |additional: Value, max: u64| {
        json!({
            "type": "object",
            "properties": {
                "title": {"type": "string"},
                "subtitle": {"type": "string"},
                "rows": {"type": "array", "items": row, "maxItems": 6}
            },
            "required": ["title"],
            "additionalProperties": additional,
            "propertyNames": {"maxLength": 5},
            "minProperties": 2,
            "maxProperties": max
        })
    };
    [
        json!({"type": "array", "items": row, "maxItems": 6}),
        json!({
            "type": "object",
            "properties": {
                "title": {"type": "string"},
                "rows": {"type": "array", "items": {"$ref": "#/$defs/Row"}, "minItems": 1},
                "meta": {"description": "anything at all"}
            },
            "required": ["title", "rows"],
            "additionalProperties": false,
            "$defs": {"Row": row}
        }),
        json!({
            "type": "object",
            "properties": {
                "rows": {"type": "array", "items": row},
                "meta": {
                    "type": "object",
                    "properties": {
                        "scores": {"type": "array", "items": {"type": "number", "maximum": 100}, "maxItems": 4},
                        "by": {"type": "string"}
                    },
                    "required": ["scores"],
                    "additionalProperties": false
                }
            },
            "required": ["rows", "meta"]
        }),
        // A map at the root: every member judged by `additionalProperties` alone.
        json!({"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}}),
        // A map beside a list, and a map that takes anything.
        json!({
            "type": "object",
            "properties": {
                "scores": {"type": "object", "additionalProperties": {"type": "number", "maximum": 100}},
                "notes": {"type": "object"},
                "rows": {"type": "array", "items": row}
            },
            "required": ["scores"]
        }),
        // Members beside declared properties, judged by `additionalProperties` alone.
        json!({
            "type": "object",
            "properties": {"title": {"type": "string"}, "n": {"type": "integer"}},
            "required": ["title"],
            "additionalProperties": {"type": "number", "maximum": 100}
        }),
        // The same, any other member allowed.
        json!({
            "type": "object",
            "properties": {"title": {"type": "string", "maxLength": 3}},
            "required": ["title"]
        }),
        // Lists whose items must differ, or some match: judged by prints and counts.
        json!({
            "type": "object",
            "properties": {
                "title": {"type": "string"},
                "scores": {"type": "array", "items": {"type": "number", "maximum": 100},
                           "uniqueItems": true, "contains": {"minimum": 50}, "maxContains": 3}
            },
            "required": ["scores"],
            "additionalProperties": false
        }),
        json!({"type": "array", "items": row, "uniqueItems": true, "minItems": 1}),
        // Draft 7 knows no `minContains`: one match is needed whatever it says.
        json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "array",
            "items": {"type": "number"},
            "contains": {"minimum": 50},
            "minContains": 0
        }),
        // Objects allowing no member they do not declare (as derived types are), one inside the
        // other with a list: the others are dropped (or refused) one at a time.
        json!({
            "type": "object",
            "properties": {
                "title": {"type": "string"},
                "n": {"type": "integer"},
                "inner": {
                    "type": ["object", "null"],
                    "properties": {"scores": {"type": "array", "items": {"type": "number", "maximum": 100}}},
                    "required": ["scores"],
                    "additionalProperties": false
                }
            },
            "required": ["title", "inner"],
            "additionalProperties": false
        }),
        // An object allowing other members, a list among its declared ones.
        json!({
            "type": "object",
            "properties": {"rows": {"type": "array", "items": {"type": "integer"}}, "n": {"type": "integer"}}
        }),
        // An enum with data, tagged inside (`#[serde(tag = "kind")]`), as an `Option`: the
        // variant the value names decides where the list is.
        json!({"anyOf": [tagged_batch.clone(), tagged_wait.clone(), {"type": "null"}]}),
        // An enum with data, tagged by its one key (serde's default), as a member.
        json!({
            "type": "object",
            "properties": {
                "note": {"type": "string"},
                "action": {"description": "what to do", "anyOf": [
                    keyed_batch.clone(), keyed_wait.clone(), {"type": "string", "enum": ["Stop"]}
                ]}
            },
            "required": ["note", "action"],
            "additionalProperties": false
        }),
        // A list of such variants: a long one read in parts itself.
        json!({"type": "array", "items": {"anyOf": [tagged_batch.clone(), tagged_wait.clone()]}}),
        // As code generators write schemas: the root a reference, an optional list (`anyOf` a
        // list or `null`), a member wrapped in an `allOf` of one reference, definitions
        // everywhere.
        json!({
            "$ref": "#/$defs/Page",
            "$defs": {
                "Row": row,
                "Scores": {"type": "array", "items": {"type": "number", "maximum": 100}, "maxItems": 4},
                "Meta": {
                    "type": "object",
                    "properties": {"scores": {"$ref": "#/$defs/Scores"}, "by": {"type": "string"}},
                    "required": ["scores"],
                    "additionalProperties": false
                },
                "Page": {
                    "type": "object",
                    "properties": {
                        "title": {"type": "string", "title": "Title"},
                        "rows": {"anyOf": [
                            {"type": "array", "items": {"$ref": "#/$defs/Row"}, "maxItems": 6},
                            {"type": "null"}
                        ], "default": null},
                        "meta": {"allOf": [{"$ref": "#/$defs/Meta"}], "description": "about"}
                    },
                    "required": ["title", "meta"],
                    "additionalProperties": false
                }
            }
        }),
        // A member referring back to the root: a value held there is judged by the whole root.
        json!({
            "type": "object",
            "properties": {
                "rows": {"type": "array", "items": row},
                "again": {"$ref": "#"}
            },
            "required": ["rows"]
        }),
        // An enum with data whose variants are references, as a member (a `oneOf`: no value
        // matches two of them).
        json!({
            "type": "object",
            "properties": {"pet": {"oneOf": [{"$ref": "#/$defs/Batch"}, {"$ref": "#/$defs/Wait"}]}},
            "required": ["pet"],
            "$defs": {"Batch": tagged_batch, "Wait": tagged_wait}
        }),
        // An enum with data tagged by its key as a `oneOf`, in draft 7 (as `schemars` writes it).
        json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {
                "note": {"type": "string"},
                "action": {"$ref": "#/definitions/Action"}
            },
            "required": ["note", "action"],
            "additionalProperties": false,
            "definitions": {
                "Action": {"oneOf": [
                    {"type": "string", "enum": ["Stop"]}, keyed_batch, keyed_wait
                ]}
            }
        }),
        // Maps whose keys are judged (`propertyNames`) and counted (as pydantic writes a dict
        // with constrained keys): at the root, and as a member.
        json!({
            "type": "object",
            "additionalProperties": {"type": "number", "maximum": 100},
            "propertyNames": {"pattern": "^k[0-3]$"},
            "minProperties": 1,
            "maxProperties": 4
        }),
        json!({
            "type": "object",
            "properties": {"scores": {
                "type": "object",
                "additionalProperties": {"type": "number"},
                "propertyNames": {"enum": ["k0", "k1", "k2"]},
                "maxProperties": 2
            }},
            "required": ["scores"]
        }),
        // A dict whose keys have a pattern, as pydantic writes it (`patternProperties`, no
        // `additionalProperties`: a name the pattern does not match takes anything).
        json!({
            "type": "object",
            "properties": {"rows": {
                "type": "object",
                "patternProperties": {"^[a-z][a-z0-9]*$": {"$ref": "#/$defs/Row"}},
                "maxProperties": 6
            }},
            "required": ["rows"],
            "$defs": {"Row": row}
        }),
        // Patterns that overlap (a name two match is judged by both, and fitted by neither),
        // beside `additionalProperties` for the names none match; `\d` as ECMA-262 reads it.
        json!({
            "type": "object",
            "patternProperties": {
                "^k": {"type": "number", "maximum": 100},
                "^k[01]$": {"minimum": 1},
                "^\\d+$": {"type": "integer"},
                // A list where `additionalProperties` takes a text: read by its pattern's schema.
                "^o": {"type": "array", "items": {"type": "integer"}}
            },
            "additionalProperties": {"type": "string"}
        }),
        // Members beside declared properties by their names' patterns (no pattern matches a
        // declared name), the others by `additionalProperties`, a list below a declared one.
        json!({
            "type": "object",
            "properties": {"title": {"type": "string"}, "n": {"type": "integer"}, "rows": {"type": "array", "items": row}},
            "required": ["title"],
            "patternProperties": {"^x-": {"type": "integer", "minimum": 0}},
            "additionalProperties": {"type": "number", "maximum": 100}
        }),
        // A tree as a recursive derived type writes it: the root's list of children, each the
        // root again (`{"$ref": "#"}`), and an optional parent held in the rest, judged whole.
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "maxLength": 12},
                "children": {"type": "array", "items": {"$ref": "#"}, "maxItems": 5},
                "parent": {"anyOf": [{"$ref": "#"}, {"type": "null"}]}
            },
            "required": ["name", "children"],
            "additionalProperties": false
        }),
        // A list whose items the schema takes whatever they are (`Vec<serde_json::Value>`):
        // each kept as its text, beside a member fitted now and then.
        json!({
            "type": "object",
            "properties": {
                "data": {"type": "array", "items": {}, "maxItems": 6},
                "n": {"type": "integer"}
            },
            "required": ["data"]
        }),
        // Patterns that match declared names too (those members held whole, judged by both),
        // beside a list no pattern matches, the others by `additionalProperties`.
        json!({
            "type": "object",
            "properties": {
                "x-id": {"type": "integer"},
                "rows": {"type": "array", "items": row},
                "data": {"type": "array", "items": {"type": "integer", "maximum": 50}}
            },
            // (`^d` says only that `data` is a list: it stays on the way; `^r` counts the rows.)
            "patternProperties": {"^x-": {"minimum": 0}, "^r": {"maxItems": 4}, "^d": {"type": "array"}},
            "additionalProperties": {"type": "string"}
        }),
        // Objects allowing only their declared members and those their patterns match: beside a
        // list, and a map whose members are counted.
        json!({
            "type": "object",
            "properties": {"title": {"type": "string"}, "rows": {"type": "array", "items": row}},
            "required": ["title"],
            "patternProperties": {"^x-": {"type": "integer", "minimum": 0}},
            "additionalProperties": false
        }),
        json!({
            "type": "object",
            "properties": {"scores": {
                "type": "object",
                "patternProperties": {"^k[0-9]$": {"type": "number", "maximum": 100}},
                "additionalProperties": false,
                "minProperties": 1,
                "maxProperties": 4
            }},
            "required": ["scores"]
        }),
        // An untagged enum's variants as a member (`#[serde(untagged)]`): only the names an
        // object has tell them apart, and the branch declaring most of them is taken.
        json!({
            "type": "object",
            "properties": {
                "note": {"type": "string"},
                "payload": {"anyOf": [
                    {
                        "type": "object",
                        "properties": {"rows": {"type": "array", "items": row}, "title": {"type": "string"}},
                        "required": ["rows", "title"],
                        "additionalProperties": false
                    },
                    {
                        "type": "object",
                        "properties": {
                            "rows": {"type": "array", "items": {"type": "integer"}},
                            "title": {"type": ["string", "integer", "null"]},
                            "count": {"type": "integer"}
                        },
                        "additionalProperties": false
                    },
                    {
                        "type": "object",
                        "properties": {"row": row, "title": {"type": "string"}, "count": {"type": "integer"}},
                        "required": ["row", "title", "count"],
                        "additionalProperties": false
                    },
                    {"$ref": "#/$defs/Scores"},
                    {"type": "string"}
                ]}
            },
            "required": ["note", "payload"],
            "additionalProperties": false,
            "$defs": {"Scores": {
                "type": "object",
                "properties": {
                    "scores": {"type": "array", "items": {"type": "number", "maximum": 100}},
                    "title": {"type": "string"}
                },
                "required": ["scores"],
                "additionalProperties": false
            }}
        }),
        // Tuples (a derived `(Meta, Vec<Row>, (i64, Vec<f64>))` field, then anything): each
        // position judged by its own schema, the lists at positions read in parts.
        json!({
            "type": "object",
            "properties": {
                "page": {"type": "array", "prefixItems": [
                    {"type": "object", "properties": {"title": {"type": "string"}},
                        "required": ["title"], "additionalProperties": false},
                    {"type": "array", "items": row, "maxItems": 6},
                    {"type": "array", "prefixItems": [
                        {"type": "integer"},
                        {"type": "array", "items": {"type": "number", "maximum": 100}}
                    ], "items": false, "minItems": 2},
                    {"description": "anything"}
                ], "minItems": 3, "maxItems": 4},
                "note": {"type": "string"}
            },
            "required": ["page"],
            "additionalProperties": false
        }),
        // Rules beside the way that look at other members, names and counts, never inside the
        // list: a condition (`if`/`then`/`else`), `not`, `dependentRequired`, an `allOf`.
        json!({
            "type": "object",
            "properties": {
                "kind": {"type": "string", "enum": ["a", "b"]},
                "rows": {"type": "array", "items": row, "maxItems": 6},
                "note": {"type": "string"},
                "meta": {}
            },
            "required": ["kind", "rows"],
            "if": {"properties": {"kind": {"const": "a"}}},
            "then": {"required": ["note"]},
            "else": {"not": {"required": ["note"]}},
            "dependentRequired": {"meta": ["note"]},
            "allOf": [{"properties": {"rows": {"type": "array"}}}, {"maxProperties": 4}]
        }),
        // An object with declared properties whose other members are judged one at a time,
        // its names by `propertyNames` (a declared one too long now and then) and its count
        // counting both.
        named_and_counted(json!({"type": "integer", "minimum": 0}), 6),
        // The same, allowing no member it does not declare (`additionalProperties: false`):
        // each undeclared one dropped or refused (its name judged too), the count of those kept.
        named_and_counted(json!(false), 3),
    ]
    .into_iter()
    .map(|schema| {
        let any_root = SchemaLimits {
            object_root: false,
            ..SchemaLimits::default()
        };
        ResponseSchema::with_limits("parts", schema, &any_root).unwrap()
    })
    .collect()
}

fn row() -> impl Strategy<Value = Value> {
    (
        0u32..500,
        "[a-z ]{0,14}",
        any::<bool>(),
        prop::sample::select(vec!["alpha", "beta", "Alpha", "gamma"]),
        prop::collection::vec("[a-z]{0,3}", 0..3),
        0u8..17,
    )
        .prop_map(|(id, name, ok, kind, tags, mistake)| {
            let mut row = json!({"id": id, "name": name, "ok": ok, "kind": kind, "tags": tags});
            match mistake {
                0 => row["id"] = json!(id.to_string()),
                1 => row["ok"] = json!(if ok { "true" } else { "no" }),
                2 => {
                    row.as_object_mut().unwrap().remove("name");
                }
                3 => row["extra"] = json!(1),
                4 => row["tags"] = json!("solo"),
                5 => row = json!(id),
                6 => row["id"] = json!(-1),
                7 => row["name"] = json!(null),
                // Containers where a scalar goes (held empty, their size noted), in a member the
                // row does not declare, and where a list goes (wrapped in one).
                8 => row["id"] = json!([1, [2, 3]]),
                9 => row["name"] = json!({"a": [1], "b": {}}),
                10 => row["extra"] = json!([1, {"b": 2}]),
                11 => row["tags"] = json!({"x": "y"}),
                12 => row["ok"] = json!([]),
                // A member coercion renames to a declared one, holding a container.
                13 => {
                    let map = row.as_object_mut().unwrap();
                    map.remove("id");
                    map.insert("ID".into(), json!([5]));
                }
                _ => {}
            }
            row
        })
}

/// The scores as members named `k0`, `k1`, ...
fn named_k(scores: &[Value]) -> serde_json::Map<String, Value> {
    scores
        .iter()
        .enumerate()
        .map(|(i, v)| (format!("k{i}"), v.clone()))
        .collect()
}

fn value_for(schema: usize) -> impl Strategy<Value = Value> {
    let rows = prop::collection::vec(row(), 0..8);
    let scores = prop::collection::vec(
        prop_oneof![
            (0.0f64..120.0).prop_map(Value::from),
            Just(json!("42")),
            Just(json!(7))
        ],
        0..6,
    );
    (rows, scores, 0u8..10).prop_map(move |(rows, scores, mistake)| {
        let rows = Value::Array(rows);
        let mut value = match schema {
            0 => rows,
            1 => {
                // A member the schema takes whatever it is (kept as its text), now and then.
                let len = rows.as_array().map_or(0, Vec::len);
                let meta = match len % 4 {
                    0 => json!({"a": [1, {"b": "x\n"}], "n": 1.5, "e": 1e3}),
                    1 => json!([true, null, "é", -0.0]),
                    2 => json!("free"),
                    _ => json!(null),
                };
                json!({"title": "t", "meta": meta, "rows": rows})
            }
            2 => json!({"rows": rows, "meta": {"scores": scores, "by": "x"}}),
            3 | 19 => Value::Object(named_k(&scores)),
            20 => {
                // Now and then a key the names refuse, or one given in another case.
                let len = rows.as_array().map_or(0, Vec::len);
                let map: serde_json::Map<String, Value> = scores
                    .iter()
                    .enumerate()
                    .map(|(i, v)| match (i, len % 3) {
                        (1, 1) => ("K1".to_owned(), v.clone()),
                        (2, 2) => ("x".to_owned(), v.clone()),
                        _ => (format!("k{i}"), v.clone()),
                    })
                    .collect();
                json!({"scores": map})
            }
            7 => json!({"title": "t", "scores": scores}),
            9 => Value::Array(scores),
            21 => {
                // Rows by name; now and then a name the pattern does not match (taken as it is).
                let len = rows.as_array().map_or(0, Vec::len);
                let rows = rows.as_array().cloned().unwrap_or_default();
                let map: serde_json::Map<String, Value> = rows
                    .into_iter()
                    .enumerate()
                    .map(|(i, row)| match (i, len % 3) {
                        (1, 1) => ("R1".to_owned(), row),
                        (2, 2) => ("2x".to_owned(), json!(null)),
                        _ => (format!("r{i}"), row),
                    })
                    .collect();
                json!({"rows": map})
            }
            22 => {
                // Scores by pattern, a number's name, others by `additionalProperties`.
                let len = rows.as_array().map_or(0, Vec::len);
                let mut map = named_k(&scores);
                map.insert(
                    ["7", "\u{663}", "12"][len % 3].to_owned(),
                    [json!(4), json!("5"), json!(2.5)][len % 3].clone(),
                );
                map.insert("note".into(), if len == 2 { json!(3) } else { json!("n") });
                map.insert(
                    "o1".into(),
                    [json!([1, 2]), json!([1, "2"]), json!([{"a": 1}])][len % 3].clone(),
                );
                Value::Object(map)
            }
            15 => {
                // The optional list given, `null`, or missing; the meta's scores by reference.
                let len = rows.as_array().map_or(0, Vec::len);
                let rows = match len % 5 {
                    3 => Value::Null,
                    4 => json!("none"),
                    _ => rows,
                };
                let mut value =
                    json!({"title": "t", "rows": rows, "meta": {"scores": scores, "by": "x"}});
                if len == 2 {
                    value.as_object_mut().unwrap().remove("rows");
                }
                value
            }
            27 => {
                let len = rows.as_array().map_or(0, Vec::len);
                let mut value = json!({"title": "t", "rows": rows});
                let map = value.as_object_mut().unwrap();
                map.insert("x-a".into(), [json!(3), json!(-1), json!("4")][len % 3].clone());
                if len % 2 == 1 {
                    map.insert("zz".into(), json!({"a": [1]}));
                }
                if len % 4 == 2 {
                    map.insert("x-b".into(), json!([1, 2]));
                    map.insert("Title".into(), json!("u"));
                }
                value
            }
            28 => {
                let len = rows.as_array().map_or(0, Vec::len);
                let mut map = named_k(&scores);
                if len % 3 == 1 {
                    map.insert("other".into(), json!(1));
                }
                json!({"scores": map})
            }
            26 => {
                let len = rows.as_array().map_or(0, Vec::len);
                let data: Vec<Value> = scores.iter().take(4).cloned().collect();
                let mut value = json!({"rows": rows, "data": data});
                let map = value.as_object_mut().unwrap();
                map.insert("x-id".into(), [json!(3), json!(-1), json!("4")][len % 3].clone());
                map.insert("x-b".into(), [json!(5), json!(-2), json!("n")][len % 3].clone());
                map.insert("note".into(), [json!("n"), json!(3)][len % 2].clone());
                if len % 4 == 3 {
                    map.insert("X-ID".into(), json!(-7));
                }
                value
            }
            25 => {
                // Rows, and now and then numbers as written in other ways, text and lists.
                let len = rows.as_array().map_or(0, Vec::len);
                let mut data = rows.as_array().cloned().unwrap_or_default();
                if len % 2 == 1 {
                    data.push(json!([1e3, -0.0, 1.5e-7, "é\n", {"a": [null, true]}]));
                }
                let n = match len % 3 {
                    0 => json!(3),
                    1 => json!("3"),
                    _ => json!([3]),
                };
                json!({"n": n, "data": data})
            }
            24 => {
                // Each row a child (its name, its tags as its own children); now and then a
                // parent, broken deep down or not, or given as a list.
                let len = rows.as_array().map_or(0, Vec::len);
                let children: Vec<Value> = rows
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|row| {
                        let kids: Vec<Value> = row["tags"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .map(|tag| json!({"name": tag, "children": []}))
                            .collect();
                        json!({"name": row["name"], "children": kids})
                    })
                    .collect();
                let parent = match len % 4 {
                    0 => json!(null),
                    1 => json!({"name": "p", "children": [{"name": 5, "children": []}]}),
                    2 => json!({"name": "p", "children": [], "parent": {"name": "q", "children": []}}),
                    _ => json!([{"name": "p"}]),
                };
                json!({"name": "root", "children": children, "parent": parent})
            }
            16 => {
                // The rows again, one level down (or a list where the object goes).
                let len = rows.as_array().map_or(0, Vec::len);
                let again = match len % 3 {
                    0 => json!({"rows": rows.clone(), "again": {"rows": []}}),
                    1 => json!({"rows": [{"id": "x"}]}),
                    _ => rows.clone(),
                };
                json!({"rows": rows, "again": again})
            }
            17 => {
                let len = rows.as_array().map_or(0, Vec::len);
                let pet = match len % 4 {
                    0 | 1 => json!({"kind": "batch", "scores": scores}),
                    2 => json!({"scores": scores, "kind": "wait", "reason": "r"}),
                    _ => json!({"kind": "other", "scores": scores}),
                };
                json!({"pet": pet})
            }
            12 | 14 => {
                // The variant named by its tag, first or last, in another case now and then,
                // or the other variant's members given.
                let tagged = |i: usize| {
                    let mut map = serde_json::Map::new();
                    let (kind, last) = match i % 7 {
                        0 => ("batch", false),
                        1 => ("batch", true),
                        2 => ("Batch", false),
                        3 => ("wait", false),
                        4 => ("nothing", false),
                        _ => ("batch", false),
                    };
                    if !last {
                        map.insert("kind".into(), json!(kind));
                    }
                    match i % 7 {
                        3 => map.insert("reason".into(), json!("r")),
                        5 => map.insert("scores".into(), json!("7")),
                        _ => map.insert("scores".into(), Value::Array(scores.clone())),
                    };
                    if i % 7 == 6 {
                        map.insert("reason".into(), json!("r"));
                    }
                    if last {
                        map.insert("kind".into(), json!(kind));
                    }
                    Value::Object(map)
                };
                let len = rows.as_array().map_or(0, Vec::len);
                if schema == 12 {
                    tagged(len)
                } else {
                    Value::Array((0..len).map(|i| tagged(i + len)).collect())
                }
            }
            13 | 18 => {
                let len = rows.as_array().map_or(0, Vec::len);
                let action = match len % 6 {
                    0 | 1 => json!({"Batch": {"scores": scores}}),
                    2 => json!({"batch": {"scores": scores}}),
                    3 => json!({"Batch": {"scores": scores}, "Wait": 3}),
                    4 => json!("Stop"),
                    _ => json!({"Wait": "3"}),
                };
                let key = if len == 7 { "Action" } else { "action" };
                let mut map = serde_json::Map::new();
                map.insert(key.into(), action);
                map.insert("note".into(), json!("n"));
                Value::Object(map)
            }
            11 => {
                // Other members around the list; its name in another case now and then, its
                // items and `n` given as strings now and then.
                let len = rows.as_array().map_or(0, Vec::len);
                let name = ["rows", "Rows", "ROWS"][len % 3];
                let items: Vec<Value> = scores
                    .iter()
                    .enumerate()
                    .map(|(i, v)| {
                        if len.is_multiple_of(2) && i == 0 {
                            json!("7")
                        } else {
                            json!(v.as_f64().map_or(1, |f| f as i64))
                        }
                    })
                    .collect();
                let mut map = serde_json::Map::new();
                map.insert("k0".into(), json!(1));
                map.insert(name.into(), Value::Array(items));
                map.insert("n".into(), if len == 4 { json!("4") } else { json!(4) });
                map.insert("k1".into(), json!([true]));
                Value::Object(map)
            }
            10 => {
                // Undeclared members among the declared, one of those misnamed now and then.
                let mut map = serde_json::Map::new();
                let len = rows.as_array().map_or(0, Vec::len);
                let title = if len == 3 { "Title" } else { "title" };
                for (i, v) in scores.iter().enumerate() {
                    map.insert(format!("k{i}"), v.clone());
                    if i == 1 {
                        map.insert(title.into(), json!("t"));
                    }
                }
                map.insert(title.into(), json!("t"));
                map.insert("n".into(), if len == 2 { json!("4") } else { json!(4) });
                let mut inner = json!({"scores": scores});
                if len == 4 {
                    inner["extra"] = json!([1, {"x": null}]);
                }
                if len == 6 {
                    inner = Value::Null;
                }
                map.insert(if len == 5 { "Inner" } else { "inner" }.into(), inner);
                Value::Object(map)
            }
            8 => {
                // Now and then an item given twice.
                let mut rows = rows;
                if let Some(items) = rows.as_array_mut() {
                    if let Some(first) = items.first().cloned().filter(|_| items.len() % 2 == 1) {
                        items.push(first);
                    }
                }
                rows
            }
            5 | 6 | 23 => {
                // Declared members among the others, one of them misnamed now and then.
                let mut map = serde_json::Map::new();
                let title = if rows.as_array().is_some_and(|r| r.len() == 3) {
                    "Title"
                } else {
                    "title"
                };
                map.insert(title.into(), json!("t"));
                for (i, v) in scores.iter().enumerate() {
                    map.insert(format!("k{i}"), v.clone());
                    if i == 0 {
                        map.insert(
                            "n".into(),
                            if rows.as_array().is_some_and(|r| r.len() == 2) {
                                json!("4")
                            } else {
                                json!(4)
                            },
                        );
                    }
                }
                if schema == 23 {
                    // Members a pattern takes: as written, given as text, or refused.
                    let len = rows.as_array().map_or(0, Vec::len);
                    map.insert(
                        "x-a".into(),
                        [json!(1), json!("2"), json!(-3)][len % 3].clone(),
                    );
                    map.insert("rows".into(), rows);
                }
                Value::Object(map)
            }
            29 => {
                let len = rows.as_array().map_or(0, Vec::len);
                let first = rows.get(0).cloned().unwrap_or(json!({"id": 1}));
                let payload = match (len * 7 + scores.len()) % 12 {
                    0 | 1 => json!({"rows": rows, "title": "t"}),
                    // Names another branch declares too: that branch may take the rest.
                    8 => json!({"rows": rows, "title": 5}),
                    9 => json!({"rows": [1, "2", 3], "title": "t"}),
                    10 => json!({"rows": [1, 2], "count": 2}),
                    2 => json!({"scores": scores, "title": "t"}),
                    3 => json!({"row": first, "title": "t", "count": 2}),
                    // Names two branches declare, or none alone.
                    4 => json!({"rows": rows, "scores": scores}),
                    5 => json!({"title": "t"}),
                    6 => json!({"rows": rows, "title": "t", "count": 1}),
                    7 => json!({"Rows": rows, "title": "t"}),
                    _ => json!("text"),
                };
                json!({"note": "n", "payload": payload})
            }
            32 | 33 => {
                let len = rows.as_array().map_or(0, Vec::len);
                let mut map = serde_json::Map::new();
                let title = if len % 5 == 4 { "Title" } else { "title" };
                map.insert(title.into(), json!("t"));
                if len % 3 != 2 {
                    map.insert("rows".into(), rows);
                }
                for (i, score) in scores.iter().enumerate() {
                    map.insert(format!("s{i}"), score.clone());
                }
                if len % 4 == 1 {
                    map.insert("toolong".into(), json!(1));
                }
                if scores.len() % 3 == 1 {
                    map.insert("subtitle".into(), json!("u"));
                }
                Value::Object(map)
            }
            31 => {
                let len = rows.as_array().map_or(0, Vec::len);
                let kind = ["a", "b", "A"][len % 3];
                let mut value = json!({"kind": kind, "rows": rows});
                let map = value.as_object_mut().unwrap();
                if scores.len() % 2 == 0 {
                    map.insert("note".into(), json!("n"));
                }
                if scores.len() % 3 == 0 {
                    map.insert("meta".into(), json!({"a": [1, {"b": null}]}));
                }
                value
            }
            30 => {
                let len = rows.as_array().map_or(0, Vec::len);
                let meta = json!({"title": "t"});
                let pair = json!([3, scores]);
                let page = match (len * 5 + scores.len()) % 8 {
                    0 => json!([meta, rows, pair]),
                    // A position the schema takes whatever it is (kept as its text).
                    1 => json!([meta, rows, pair, {"a": [1, {"b": "x\n"}], "n": 1.5, "e": 1e3}]),
                    2 => json!([meta, rows, pair, [true, null, "é", -0.0]]),
                    // Too few or too many positions, a position of the wrong kind, the
                    // positions swapped, a position given as text, the tuple as an object.
                    3 => json!([meta, rows]),
                    4 => json!([meta, rows, pair, 7, 8]),
                    5 => json!([meta, rows, ["3", scores, "x"]]),
                    6 => json!([rows, meta, pair]),
                    _ => json!({"title": "t", "rows": rows}),
                };
                json!({"page": page, "note": "n"})
            }
            _ => json!({
                "scores": Value::Object(
                    scores.iter().enumerate().map(|(i, v)| (format!("s{i}"), v.clone())).collect(),
                ),
                "notes": {"a": 1, "b": [true]},
                "rows": rows,
            }),
        };
        match (mistake, value.as_object_mut()) {
            (0, Some(map)) => {
                map.insert("unknown".into(), json!(true));
            }
            (1, Some(map)) => {
                // A single item where the list goes.
                let first = map
                    .get("rows")
                    .and_then(|r| r.get(0))
                    .cloned()
                    .unwrap_or(json!({}));
                map.insert("rows".into(), first);
            }
            (2, Some(map)) => {
                map.remove("rows");
            }
            (3, _) => value = json!({"rows": value}),
            // `null` where the value goes (a default, where the options give one).
            (4, _) => value = Value::Null,
            // Containers where the rest holds a scalar.
            (5, Some(map)) if map.contains_key("title") => {
                map.insert("title".into(), json!([1, {"x": [2]}]));
            }
            (6, Some(map)) if map.get("meta").is_some_and(Value::is_object) => {
                map["meta"]["by"] = json!({"a": 1, "b": [true]});
            }
            (7, Some(map)) if map.contains_key("note") => {
                map.insert("note".into(), json!({"n": [1, 2]}));
            }
            _ => {}
        }
        value
    })
}

/// Breaks the text as the repairer's tests do: a piece inserted, or the end cut.
fn broken(text: String, edit: Option<(f64, &'static str)>, cut: Option<f64>) -> String {
    let mut text = text;
    if let Some((at, piece)) = edit {
        let mut i = (at * text.len() as f64) as usize;
        while !text.is_char_boundary(i) {
            i -= 1;
        }
        text.insert_str(i, piece);
    }
    if let Some(cut) = cut.filter(|c| *c > 0.7) {
        let mut i = (cut * text.len() as f64) as usize;
        while !text.is_char_boundary(i) {
            i -= 1;
        }
        text.truncate(i);
    }
    text
}

fn options() -> Vec<ParseOptions> {
    let no_repair = ParseOptions {
        repair: false,
        ..ParseOptions::default()
    };
    let mut numbers_as_written = ParseOptions::default();
    numbers_as_written.coerce.scalars_to_strings = false;
    // Defaults for what is missing or null, without `required_only` (which reads whole).
    let mut defaults = ParseOptions::default();
    defaults.coerce.null_to_default = true;
    defaults.coerce.missing_to_default = true;
    vec![
        ParseOptions::default(),
        ParseOptions::strict(),
        ParseOptions::lenient(),
        no_repair,
        numbers_as_written,
        defaults,
    ]
}

/// What a reading says, in a form both readings give: sorted lists of what was reported.
fn outcome<T>(
    result: Result<Parsed<T>, ParseError>,
    text_of: impl Fn(T) -> String,
) -> (String, Vec<String>, Vec<String>) {
    let sorted = |mut v: Vec<String>| {
        v.sort();
        v
    };
    match result {
        Ok(parsed) => (
            format!(
                "Ok {:?} {} {:?} {}",
                parsed.provenance,
                parsed.truncated,
                parsed.span,
                text_of(parsed.value)
            ),
            sorted(parsed.warnings.iter().map(|w| w.to_string()).collect()),
            Vec::new(),
        ),
        Err(ParseError::Invalid {
            violations,
            warnings,
            ..
        }) => (
            "Invalid".into(),
            sorted(warnings.iter().map(|w| w.to_string()).collect()),
            if violations.len() >= MAX_VIOLATIONS {
                // A full report: the first found are listed, in each reading's own order; the
                // counts (what the lists' own keywords say) are always among them.
                let counts = violations
                    .iter()
                    .filter(|v| matches!(v.rule, Rule::Items | Rule::Properties));
                let mut kept: Vec<String> = counts.map(|v| v.to_string()).collect();
                kept.push(format!("{} violations", violations.len()));
                sorted(kept)
            } else {
                sorted(violations.iter().map(|v| v.to_string()).collect())
            },
        ),
        Err(ParseError::Truncated { warnings, .. }) => (
            "Truncated".into(),
            sorted(warnings.iter().map(|w| w.to_string()).collect()),
            Vec::new(),
        ),
        Err(ParseError::NotExact { warnings }) => (
            "NotExact".into(),
            sorted(warnings.iter().map(|w| w.to_string()).collect()),
            Vec::new(),
        ),
        Err(e) => (format!("{e}"), Vec::new(), Vec::new()),
    }
}

fn agree(text: &str, schema: &ResponseSchema) -> Result<(), TestCaseError> {
    for options in options() {
        let whole = outcome(parse_value(text, schema, &options), |v: Value| {
            v.to_string()
        });
        let parts = outcome(parse_value_json(text, schema, &options), |s: String| s);
        prop_assert_eq!(&parts, &whole, "{}", text);
        // Every item whose schema allows read in parts itself too (as a long one is).
        let nested = outcome(
            parse_value_json_nesting_every_item(text, schema, &options),
            |s: String| s,
        );
        prop_assert_eq!(&nested, &whole, "nested: {}", text);
    }
    Ok(())
}

/// Within a limit on what is held whole: the whole reading's words, or a refusal as too large
/// that only an answer longer than the limit can get (a value holding `n` values and keys is
/// written in at least `2n - 1` bytes, and the reading holds no more than the limit allows).
fn agree_within(text: &str, schema: &ResponseSchema, limit: usize) -> Result<(), TestCaseError> {
    for options in options() {
        let within = parse_value_json_within(text, schema, &options, limit);
        if let Err(ParseError::TooLarge {
            bytes, limit: l, ..
        }) = &within
        {
            prop_assert_eq!(*l, limit);
            prop_assert!(text.len() > limit, "refused as too large: {}", text);
            if let Some(bytes) = bytes {
                prop_assert!(
                    *bytes > limit && *bytes <= text.len(),
                    "{} bytes: {}",
                    bytes,
                    text
                );
            }
            continue;
        }
        let whole = outcome(parse_value(text, schema, &options), |v: Value| {
            v.to_string()
        });
        prop_assert_eq!(
            outcome(within, |s: String| s),
            whole,
            "within {}: {}",
            limit,
            text
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

    #[test]
    fn a_reading_within_a_limit_agrees_or_refuses_only_what_passes_it(
        (which, value) in (0usize..34).prop_flat_map(|s| (Just(s), value_for(s))),
        edit in prop::option::of((0.0f64..1.0, prop::sample::select(vec![
            ",", "'", "}", "]", "Sure! ", "1e999, ",
        ]))),
        limit in 0usize..160,
    ) {
        let schema = &schemas()[which];
        agree_within(&broken(value.to_string(), edit, None), schema, limit)?;
    }

    #[test]
    fn a_reading_in_parts_agrees_with_the_whole_reading(
        (which, value) in (0usize..34).prop_flat_map(|s| (Just(s), value_for(s))),
        edit in prop::option::of((0.0f64..1.0, prop::sample::select(vec![
            ",", "'", "}", "]", "// note\n", "True", "\n```json\n", "Sure! ", "1e999, ",
            "\"k\": 123456789012345678901234567890, ",
        ]))),
        cut in prop::option::of(0.0f64..1.0),
        pretty in any::<bool>(),
    ) {
        let schema = &schemas()[which];
        let text = if pretty {
            serde_json::to_string_pretty(&value).unwrap()
        } else {
            value.to_string()
        };
        agree(&broken(text, edit, cut), schema)?;
    }
}

#[test]
fn the_hand_picked_shapes_agree_too() {
    let schemas = schemas();
    for (which, text) in [
        (0, r#"[]"#),
        (
            0,
            r#"[{"id": 1, "name": "a", "ok": true, "kind": "alpha"}]"#,
        ),
        (
            0,
            r#"Here: ```json
[{"id": "1", "name": "a", "ok": "true", "kind": "Alpha"}]
``` done"#,
        ),
        (0, r#"[1, 2, 3, 4, 5, 6, 7]"#),
        // An untagged variant chosen by its names, which another branch declares too: valid as
        // written by that branch (never given the chosen one's defaults).
        (29, r#"{"note": "n", "payload": {"title": "t"}}"#),
        (
            29,
            r#"{"note": "n", "payload": {"rows": [{"id": 1, "name": "a", "ok": true, "kind": "alpha", "tags": []}], "title": 5}}"#,
        ),
        (0, r#"{"id": 1, "name": "a", "ok": true, "kind": "alpha"}"#),
        (0, r#""[1]""#),
        (1, r#"{"title": "t", "rows": []}"#),
        (
            1,
            r#"{"title": "t", "rows": [{"id": 1e400, "name": 1e400, "ok": true, "kind": "beta"}]}"#,
        ),
        (
            1,
            r#"{"title": "t", "Rows": [{"id": 1, "name": "n", "ok": true, "kind": "beta"}]}"#,
        ),
        (
            1,
            r#"{"title": "t", "rows": [{"id": 1, "name": "n", "ok": true, "kind": "beta"}], "rows": []}"#,
        ),
        (
            1,
            r#"{"title": "t", "rows": {"id": 1, "name": "n", "ok": true, "kind": "beta"}}"#,
        ),
        (
            1,
            r#"{"title": "t", "rows": [{"id": 1, "name": "n", "ok": true, "kind": "beta"} {"id": 2}"#,
        ),
        (
            2,
            r#"{"rows": [], "meta": {"scores": [1, "2", 300], "by": 1}}"#,
        ),
        // An object with members beside its declared ones given `null`, then a default: its
        // declared members are written though it is not in the text (found by the fuzzer).
        (5, "None"),
        (5, "null"),
        // A member holding a list given `null`, then a default with a list its text lacks: the
        // parts met are not the parts to write (read whole, never written out of line).
        (2, r#"{"rows": [], "meta": null, "k": "x"}"#),
        (
            2,
            r#"{"rows": [{"id": "1", "name": "n", "ok": true, "kind": "beta"}], "meta": {}}"#,
        ),
        // A list under an object allowing other members, its name in another case (renamed,
        // its items moved into the list: read whole, not written without them).
        (11, r#"{"ROWS": [1, "2"], "n": "5", "k": 1}"#),
        (
            2,
            r#"{"Rows": [{"id": 1, "name": "n", "ok": true, "kind": "beta"}], "meta": {"scores": [1], "by": "x"}, "k": 1}"#,
        ),
        (
            4,
            r#"{"Scores": {"a": 1}, "ROWS": [{"id": 1, "name": "n", "ok": true, "kind": "beta"}], "x": [1]}"#,
        ),
        // A number kept as text, in an item coercion moves into the list.
        (
            2,
            r#"{"rows":{"id":0,"name"1e999, :"","ok":false,"kind":"alpha","extra":1},"meta":{"scores":["42"]}}"#,
        ),
        (
            2,
            r#"{"meta": {"scores": 5}, "rows": [{"id": 1, "name": "n", "ok": true, "kind": "beta"}]}"#,
        ),
        (
            2,
            r#"first {"rows": [], "meta": {"scores": []}} then {"rows": [], "meta": {"scores": [1]}}"#,
        ),
        // A member no pattern matches, dropped where coercion drops it: not counted then.
        (
            28,
            r#"{"scores": {"k0": 1, "k1": 2, "other": 3, "k2": 3, "k3": 4}}"#,
        ),
        (28, r#"{"scores": {"other": 3}}"#),
    ] {
        agree(text, &schemas[which]).unwrap();
    }
}

#[test]
fn past_the_listed_changes_both_readings_count_the_rest() {
    let schema = &schemas()[0];
    let rows: Vec<String> = (0..1500)
        .map(|i| format!(r#"{{"id": "{i}", "name": "n", "ok": true, "kind": "beta"}}"#))
        .collect();
    let text = format!("[{}]", rows.join(","));
    agree(&text, schema).unwrap();
    let parsed = parse_value_json(&text, schema, &ParseOptions::default());
    let warnings = parsed.map(|p| p.warnings).unwrap_or_else(|e| match e {
        ParseError::Invalid { warnings, .. } => warnings,
        other => panic!("{other:?}"),
    });
    // The first thousand changes listed, then one entry counting the other 500.
    assert_eq!(warnings.len(), 1001);
    assert_eq!(
        warnings.last().map(|w| w.to_string()).unwrap_or_default(),
        "recovery: made more changes of the kinds listed, not listed one by one: 500 more"
    );
}

/// Items that repeat an earlier one, and lists with too few items matching `contains`, are
/// refused in parts (no value held: the refusal's `value` is `null`) with the whole reading's
/// report.
#[test]
fn repeats_and_unmet_contains_are_refused_in_parts_as_the_whole_reading_refuses_them() {
    let schemas = schemas();
    let row = |id: &str| format!(r#"{{"id": {id}, "name": "n", "ok": true, "kind": "beta"}}"#);
    for (which, text, expected) in [
        // Equal as written, and equal once the second is fitted.
        (
            8,
            format!("[{}, {}, {}]", row("1"), row("2"), row("1")),
            ["/2"; 2],
        ),
        // (Strict mode does not fit the second: it is refused for its type instead.)
        (
            8,
            format!("[{}, {}]", row("1"), row("\"1\"")),
            ["/1", "/1/id"],
        ),
        (7, r#"{"scores": [60, 3, 60.0]}"#.into(), ["/scores/2"; 2]),
        // No item matches `contains`, nothing else wrong.
        (
            7,
            r#"{"title": "t", "scores": [1, 2]}"#.into(),
            ["/scores"; 2],
        ),
        (9, "[1, 2, 3]".into(), [""; 2]),
        // An item refused too: the validator's `contains` report lies above it, and is not
        // given.
        (7, r#"{"scores": [1, 200]}"#.into(), ["/scores/1"; 2]),
    ] {
        agree(&text, &schemas[which]).unwrap();
        for (options, expected) in [ParseOptions::default(), ParseOptions::strict()]
            .into_iter()
            .zip(expected)
        {
            let refused = parse_value_json(&text, &schemas[which], &options).unwrap_err();
            let ParseError::Invalid {
                violations, value, ..
            } = refused
            else {
                panic!("{text}: {refused:?}")
            };
            assert_eq!(value, Value::Null, "{text}: read whole");
            assert_eq!(violations.len(), 1, "{text}: {violations:?}");
            assert_eq!(violations[0].path, expected, "{text}");
        }
    }
    // The draft-7 list with one match is valid; its `minContains: 0` does not make none enough.
    assert!(parse_value_json("[1, 60]", &schemas[9], &ParseOptions::default()).is_ok());
    // Zeros share a print but are different items to the walk: the whole reading says.
    agree(r#"{"scores": [0, -0.0, 60]}"#, &schemas[7]).unwrap();
    // `contains` unmet beside a refusal elsewhere: the whole reading orders the report.
    agree(r#"{"title": 5, "scores": [1]}"#, &schemas[7]).unwrap();
}

#[test]
fn a_reading_in_parts_gives_the_value_as_its_text() {
    let schema = &schemas()[1];
    let parsed = parse_value_json(
        r#"{"title": "t", "rows": [{"id": "7", "name": "n", "ok": true, "kind": "Beta", "tags": []}]}"#,
        schema,
        &ParseOptions::default(),
    )
    .unwrap();
    assert_eq!(
        parsed.value,
        r#"{"title":"t","rows":[{"id":7,"name":"n","ok":true,"kind":"beta","tags":[]}]}"#
    );
    let refused = parse_value_json(
        r#"{"title": "t", "rows": [{"id": -7, "name": "n", "ok": true, "kind": "beta"}]}"#,
        schema,
        &ParseOptions::default(),
    )
    .unwrap_err();
    let ParseError::Invalid {
        violations, value, ..
    } = refused
    else {
        panic!("{refused:?}")
    };
    assert_eq!(violations[0].path, "/rows/0/id");
    // A refusal read in parts holds no value.
    assert_eq!(value, Value::Null);
}

/// A limit never makes the reading choose another value than the whole reading: an earlier
/// candidate is not taken as written while a later one is too long to judge (found by the
/// `parse_response` fuzz target), and a long string is one value, held whatever its length.
#[test]
fn a_limit_never_chooses_another_value() {
    let schema = ResponseSchema::new("any", json!({"type": "object"})).unwrap();
    let options = ParseOptions::default();
    let text = r#"{"key":"value"}, {"key":"value_after"}"#;
    let whole = parse_value(text, &schema, &options).unwrap();
    assert_eq!(whole.value, json!({"key": "value_after"}));
    // (Three values and keys each: either may be held within 19 bytes' worth.)
    let within = parse_value_json_within(text, &schema, &options, 19).unwrap();
    assert_eq!(
        (within.value.as_str(), within.span),
        (r#"{"key":"value_after"}"#, 17..38)
    );
    // The later one holding more than 8 bytes' worth: refused, not the earlier one taken.
    let text = r#"{"a": 1}, {"k": [1, 2, 3, 4, 5, 6, 7, 8]}"#;
    assert_eq!(parse_value(text, &schema, &options).unwrap().span, 10..41);
    let within = parse_value_json_within(text, &schema, &options, 8);
    assert!(
        matches!(within, Err(ParseError::TooLarge { limit: 8, .. })),
        "{within:?}"
    );
    // 600 KB of text in one member: one value, read whatever the limit.
    let essay = ResponseSchema::new(
        "essay",
        json!({"type": "object", "properties": {"text": {"type": "string"}}}),
    )
    .unwrap();
    let long = format!(r#"{{"text": "{}"}}"#, "word ".repeat(120_000));
    for answer in [long.clone(), long.replace('"', "'")] {
        let read = parse_value_json_within(&answer, &essay, &options, 1024).unwrap();
        assert_eq!(read.value.len(), 600_011, "{}", &answer[..20]);
    }
}
