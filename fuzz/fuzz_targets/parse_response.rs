//! `parse_response` and `parse_value` on arbitrary text, in every mode and with every policy:
//! no panic, and what a `Parsed` claims holds.
#![no_main]

use libfuzzer_sys::fuzz_target;
use structured_examples::{DaimonAppraisal, HeartbeatDecision};
use structured_runtime::{
    parse_value, Answer, ParseError, ParseOptions, Parsed, Provenance, Reading, StructuredOutput,
    StructuredOutputMode, Warning,
};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let modes = [
        StructuredOutputMode::None,
        StructuredOutputMode::SchemaEnforced,
        StructuredOutputMode::ToolUseWorkaround,
        StructuredOutputMode::PromptGuided,
    ];
    let lenient_truncated = ParseOptions {
        accept_truncated: true,
        ..ParseOptions::lenient()
    };
    for options in [
        ParseOptions::strict(),
        ParseOptions::default(),
        lenient_truncated,
    ] {
        for mode in modes {
            check::<HeartbeatDecision>(text, mode, &options);
            check::<DaimonAppraisal>(text, mode, &options);
        }
        let schema = HeartbeatDecision::schema();
        if let Ok(parsed) = parse_value(text, schema, &options) {
            holds(&parsed, text, &options);
            // Clean means the answer as written is exactly the value.
            if parsed.provenance == Provenance::Clean {
                let written = serde_json::from_str::<serde_json::Value>(text);
                assert_eq!(written.ok().as_ref(), Some(&parsed.value));
            }
        }
        // The same text as a value a provider sent already parsed (a tool call's arguments).
        if let Ok(value) = serde_json::from_str::<serde_json::Value>(text) {
            for mode in modes {
                let answer = Answer::Json(value.clone());
                if let Ok(parsed) = Reading::new(mode)
                    .options(&options)
                    .typed::<HeartbeatDecision>(&answer)
                {
                    assert!(structured_runtime::Validate::validate(&parsed.value).is_ok());
                    holds(&parsed, "", &options);
                }
            }
        }
    }
});

fn check<T: StructuredOutput>(text: &str, mode: StructuredOutputMode, options: &ParseOptions) {
    match Reading::new(mode).options(options).typed::<T>(text) {
        Ok(parsed) => {
            // Whatever the path, the value is one the type's own rules accept.
            assert!(parsed.value.validate().is_ok());
            holds(&parsed, text, options);
        }
        Err(ParseError::Truncated { warnings, .. }) => {
            assert!(warnings.contains(&Warning::Truncated));
        }
        Err(_) => {}
    }
}

fn holds<T>(parsed: &Parsed<T>, text: &str, options: &ParseOptions) {
    assert!(parsed.span.start <= parsed.span.end && parsed.span.end <= text.len());
    // Exact options return only the answer as written.
    assert!(!options.exact || parsed.provenance == Provenance::Clean);
    if parsed.provenance == Provenance::Clean && !text.is_empty() {
        assert!(serde_json::from_str::<serde_json::Value>(text).is_ok());
    }
    if parsed.provenance == Provenance::Clean {
        assert!(parsed.warnings.is_empty() && !parsed.truncated);
    } else {
        assert!(!parsed.warnings.is_empty(), "{:?}", parsed.provenance);
    }
    // A truncated value is returned only when asked for, and always says so.
    assert_eq!(
        parsed.truncated,
        parsed.warnings.contains(&Warning::Truncated)
    );
    assert!(!parsed.truncated || options.accept_truncated);
}
