//! Lowering a schema of nested shared definitions for every target: time and size of the
//! result (`cargo run --release -p structured-runtime --example lower_cost -- 12`).
use serde_json::{json, Map, Value};
use structured_runtime::provider::dialect::{lower, SchemaTarget};

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(12);
    let mut defs = Map::new();
    for i in 0..n {
        let next = if i + 1 < n {
            json!({"$ref": format!("#/$defs/d{}", i + 1), "description": "shared"})
        } else {
            json!({"type": "string"})
        };
        defs.insert(
            format!("d{i}"),
            json!({"type": "object", "properties": {"a": next.clone(), "b": next},
                   "required": ["a", "b"], "additionalProperties": false}),
        );
    }
    let schema = json!({"type": "object", "properties": {"root": {"$ref": "#/$defs/d0", "description": "r"}},
        "required": ["root"], "additionalProperties": false, "$defs": Value::Object(defs)});
    run(&schema);
    // The same, with each definition's own `$defs` holding the next (nested shared definitions).
    let mut inner = json!({"type": "string"});
    for i in (0..n).rev() {
        let path: String = (0..=i).map(|j| format!("/$defs/d{j}")).collect();
        let next = format!("#{path}/$defs/d{}", i + 1);
        let leaf = i + 1 == n;
        let field = if leaf {
            json!({"type": "string"})
        } else {
            json!({"$ref": next, "description": "x"})
        };
        let mut def = json!({"type": "object", "properties": {"a": field.clone(), "b": field},
            "required": ["a", "b"], "additionalProperties": false});
        if !leaf {
            def["$defs"] = json!({format!("d{}", i + 1): inner});
        }
        inner = def;
    }
    let inner = json!({"type": "object", "properties": {"root": {"$ref": "#/$defs/d0", "description": "r"}},
        "required": ["root"], "additionalProperties": false, "$defs": {"d0": inner}});
    run(&inner);
}

fn run(schema: &Value) {
    println!("schema: {} bytes", schema.to_string().len());
    for target in [
        SchemaTarget::OpenAiStrict,
        SchemaTarget::Anthropic,
        SchemaTarget::GeminiResponseSchema,
        SchemaTarget::LlamaCpp,
    ] {
        let started = std::time::Instant::now();
        let out = lower(schema, target);
        let size = match &out {
            Ok(v) => format!("ok, {} bytes", v.to_string().len()),
            Err(e) => format!(
                "error: {}",
                e.to_string().chars().take(100).collect::<String>()
            ),
        };
        println!("{target:?}: {:?} {size}", started.elapsed());
    }
}
