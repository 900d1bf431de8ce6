//! Prompt guidance: compact (measured in real tokens against the seed's form) and complete (every
//! name, enum value, bound and description of the schema is in the text).

use serde_json::Value;
use structured_examples::{all_schemas, DaimonAppraisal, HeartbeatDecision};
use structured_runtime::{GuidanceFormat, ResponseSchema, StructuredOutput};
use tiktoken_rs::CoreBPE;

fn tokens(bpe: &CoreBPE, text: &str) -> usize {
    bpe.encode_with_special_tokens(text).len()
}

fn bpe() -> CoreBPE {
    tiktoken_rs::o200k_base().expect("o200k_base is bundled with tiktoken-rs")
}

/// The seed's `prompt_guidance`: the schema pretty-printed inside its instruction sentences.
fn seed_form(schema: &Value) -> String {
    format!(
        "\n\nRespond ONLY with valid JSON matching this structure:\n```json\n{}\n```\nDo not include any text outside the JSON block.",
        serde_json::to_string_pretty(schema).unwrap()
    )
}

fn golden_schema(file: &str) -> Value {
    let path = format!("{}/data/golden/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {path}: {e}"));
    serde_json::from_str::<Value>(&text).unwrap()["schema"].clone()
}

#[test]
fn the_seed_form_costs_what_the_issue_says() {
    // The measuring stick itself: the seed's form of the seed's own schemas.
    let bpe = bpe();
    let seed = |f| tokens(&bpe, &seed_form(&golden_schema(f)));
    assert_eq!(seed("heartbeat_decision.json"), 324);
    assert_eq!(seed("daimon_appraisal.json"), 248);
}

#[test]
fn guidance_is_at_most_60_percent_of_the_seed_form() {
    let bpe = bpe();
    for (name, schema, guidance) in [
        (
            "HeartbeatDecision",
            HeartbeatDecision::schema(),
            HeartbeatDecision::prompt_guidance(),
        ),
        (
            "DaimonAppraisal",
            DaimonAppraisal::schema(),
            DaimonAppraisal::prompt_guidance(),
        ),
    ] {
        let seed = tokens(&bpe, &seed_form(schema.schema()));
        let ours = tokens(&bpe, guidance);
        let compact = tokens(&bpe, &schema.guidance_as(GuidanceFormat::JsonSchema));
        println!(
            "{name}: seed form {seed} tokens, sketch (default) {ours} ({:.0}%), compact schema {compact} ({:.0}%)",
            100.0 * ours as f64 / seed as f64,
            100.0 * compact as f64 / seed as f64
        );
        assert!(
            ours * 100 <= seed * 60,
            "{name}: {ours} tokens is more than 60% of the seed form's {seed}"
        );
    }
}

/// Every property name, enum value, bound and description of `node`, as the text to find.
fn constraints(node: &Value, out: &mut Vec<String>) {
    match node {
        Value::Object(map) => {
            for (key, value) in map {
                match key.as_str() {
                    "properties" => {
                        for (name, sub) in value.as_object().into_iter().flatten() {
                            out.push(format!("\"{name}\""));
                            constraints(sub, out);
                        }
                    }
                    "enum" => {
                        out.extend(value.as_array().into_iter().flatten().map(Value::to_string))
                    }
                    // Bounds as the sketch writes them, each in its shortest form.
                    "minimum" => out.push(match map.get("maximum") {
                        Some(max) => format!("{} to {}", shortest(value), shortest(max)),
                        None => format!(">= {}", shortest(value)),
                    }),
                    "maximum" if !map.contains_key("minimum") => {
                        out.push(format!("<= {}", shortest(value)))
                    }
                    "maximum" => {}
                    // Every word of a description (its closing full stop is left out).
                    "description" => {
                        let text = value
                            .as_str()
                            .unwrap()
                            .split_whitespace()
                            .collect::<Vec<_>>()
                            .join(" ");
                        out.push(text.strip_suffix('.').unwrap_or(&text).to_owned())
                    }
                    "type"
                        if value
                            .as_array()
                            .is_some_and(|t| t.contains(&Value::from("null"))) =>
                    {
                        out.push("|null".into())
                    }
                    _ => constraints(value, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|i| constraints(i, out)),
        _ => {}
    }
}

/// `1.0` as `1`: the same number.
fn shortest(value: &Value) -> String {
    let text = value.to_string();
    match text.strip_suffix(".0") {
        Some(whole) if !text.contains('e') => whole.to_owned(),
        _ => text,
    }
}

fn assert_complete(schema: &ResponseSchema, text: &str) {
    let mut wanted = Vec::new();
    constraints(schema.schema(), &mut wanted);
    assert!(!wanted.is_empty());
    for w in wanted {
        assert!(
            text.contains(&w),
            "{}: {w:?} is missing from\n{text}",
            schema.name()
        );
    }
}

/// The issue's measuring stick: a BAML-style rendering of the same types, with their ranges,
/// takes 216 and 168 `o200k_base` tokens; the guidance carries every rule in no more.
#[test]
fn guidance_is_at_most_the_baml_style_count() {
    let bpe = bpe();
    let heartbeat = tokens(&bpe, HeartbeatDecision::prompt_guidance());
    let daimon = tokens(&bpe, DaimonAppraisal::prompt_guidance());
    println!(
        "HeartbeatDecision {heartbeat} tokens (BAML-style 216), DaimonAppraisal {daimon} (168)"
    );
    assert!(heartbeat <= 216, "{heartbeat}");
    assert!(daimon <= 168, "{daimon}");
}

#[test]
fn every_constraint_is_in_the_text_in_every_format() {
    for schema in all_schemas() {
        assert_complete(schema, schema.prompt_guidance());
        assert_complete(schema, &schema.guidance_as(GuidanceFormat::Sketch));
        // The compact form is the schema itself, after one line of instruction.
        let compact = schema.guidance_as(GuidanceFormat::JsonSchema);
        let (_, json) = compact.split_once('\n').unwrap();
        assert_eq!(
            &serde_json::from_str::<Value>(json).unwrap(),
            schema.schema()
        );
    }
}

#[test]
fn the_completeness_check_can_fail() {
    let schema = HeartbeatDecision::schema();
    let cut = schema
        .prompt_guidance()
        .replace("\"critical\"", "\"severe\"");
    let result = std::panic::catch_unwind(|| assert_complete(schema, &cut));
    assert!(result.is_err());
}

#[test]
fn the_default_is_the_shorter_form() {
    let bpe = bpe();
    for schema in all_schemas() {
        let default = tokens(&bpe, schema.prompt_guidance());
        let sketch = tokens(&bpe, &schema.guidance_as(GuidanceFormat::Sketch));
        let compact = tokens(&bpe, &schema.guidance_as(GuidanceFormat::JsonSchema));
        assert_eq!(default, sketch.min(compact), "{}", schema.name());
    }
}

#[test]
fn heartbeat_guidance_reads_as_written() {
    assert_eq!(
        HeartbeatDecision::prompt_guidance(),
        r#"Reply with JSON only, this shape (all keys required; null only where shown):
// The heartbeat's inference output, structured
{
 "severity": "none"|"low"|"moderate"|"high"|"critical", // Current assessment severity
 "action": "observe"|"analyze"|"rebalance"|"hedge"|"exit"|"escalate", // Recommended action
 "confidence": number 0 to 1, // Confidence in this assessment
 "rationale": string, // Brief rationale (1-2 sentences)
 "signals": [{
  "source": string, // Where the signal comes from, e.g. "price", "volume", "governance", "liquidity"
  "description": string, // What was observed
  "magnitude": number 0 to 1 // Strength of the signal
 }], // Specific signals that drove this decision / One signal behind a heartbeat decision
 "escalate": boolean // Whether to escalate to a higher tier (T1->T2)
}"#
    );
}
