//! A run's spans as OpenTelemetry exports them (through `tracing-opentelemetry`, read back with
//! the SDK's in-memory exporter): the run's span and one `chat {model}` span per request, with
//! the GenAI semantic conventions' attributes, the re-ask reason and the provenance. The bodies
//! are there only when the caller opts in.

use std::collections::BTreeMap;

mod common;

use common::scripted::{openai_text, Scripted, GOOD, OUT_OF_RANGE};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use structured_examples::replay::block_on;
use structured_examples::DaimonAppraisal;
use structured_runtime::provider::capabilities::ProviderKind;
use structured_runtime::provider::wire::ChatRequest;
use structured_runtime::run::{run_structured, RunConfig};
use tracing_subscriber::layer::SubscriberExt;

/// The spans one run with a re-ask exports, each as its name and attributes.
fn exported(config: &RunConfig) -> Vec<SpanData> {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("structured-tests")));
    let scripted = Scripted::new(
        ProviderKind::OpenAiChat,
        "gpt-4o",
        vec![openai_text(OUT_OF_RANGE), openai_text(GOOD)],
    );
    let out = tracing::subscriber::with_default(subscriber, || {
        block_on(run_structured::<DaimonAppraisal, _>(
            &scripted,
            &ChatRequest::user("Appraise the funding flip."),
            config,
        ))
    })
    .unwrap();
    assert_eq!(out.attempts, 2);
    provider.force_flush().unwrap();
    exporter.get_finished_spans().unwrap()
}

fn attributes(span: &SpanData) -> BTreeMap<String, String> {
    span.attributes
        .iter()
        .map(|kv| (kv.key.to_string(), kv.value.to_string()))
        .collect()
}

#[test]
fn a_run_with_a_re_ask_exports_genai_spans() {
    let spans = exported(&RunConfig::default());
    let names: Vec<&str> = spans.iter().map(|s| s.name.as_ref()).collect();
    assert_eq!(
        names,
        ["chat gpt-4o", "chat gpt-4o", "structured daimon_appraisal"]
    );
    let run = &spans[2];
    for chat in &spans[..2] {
        assert_eq!(chat.parent_span_id, run.span_context.span_id());
    }
    let first = attributes(&spans[0]);
    let second = attributes(&spans[1]);
    let whole = attributes(run);
    // For the closing note: the spans as the exporter saw them.
    for span in &spans {
        println!("{}", span.name);
        for (k, v) in attributes(span) {
            if !k.starts_with("code.")
                && !k.starts_with("thread.")
                && k != "target"
                && k != "busy_ns"
                && k != "idle_ns"
            {
                println!("  {k} = {v}");
            }
        }
    }
    assert_eq!(first["gen_ai.operation.name"], "chat");
    assert_eq!(first["gen_ai.provider.name"], "openai");
    assert_eq!(first["gen_ai.request.model"], "gpt-4o");
    assert_eq!(first["gen_ai.request.max_tokens"], "4096");
    assert_eq!(first["gen_ai.usage.input_tokens"], "100");
    assert_eq!(first["gen_ai.usage.output_tokens"], "40");
    assert_eq!(first["gen_ai.response.finish_reasons"], "stop");
    assert_eq!(first["structured.result"], "invalid");
    assert!(
        first["structured.reask.reason"].contains("/pleasure"),
        "{first:?}"
    );
    assert_eq!(second["structured.result"], "accepted");
    assert_eq!(second["structured.provenance"], "Clean");
    assert_eq!(whole["structured.attempts"], "2");
    assert_eq!(whole["structured.provenance"], "Clean");
    assert_eq!(whole["gen_ai.usage.input_tokens"], "200");
    assert_eq!(whole["gen_ai.usage.output_tokens"], "80");
    // The bodies hold the user's data: not recorded unless asked for.
    assert!(!first.contains_key("gen_ai.input.messages"));
    let opted_in = exported(&RunConfig {
        trace_bodies: true,
        ..RunConfig::default()
    });
    let first = attributes(&opted_in[0]);
    assert!(first["gen_ai.input.messages"].contains("Appraise the funding flip."));
    assert!(first["gen_ai.output.messages"].contains("1.7"));
}
