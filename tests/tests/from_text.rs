//! `from_text`: the seed's keyword fallbacks on plain prose, and what ours does better on tricky
//! prose (whole words, negation, signed and percent numbers, labels written several ways).

use proptest::prelude::*;
use serde::Deserialize;
use structured_examples::{DaimonAppraisal, HeartbeatDecision, RiskAssessment};
use structured_runtime::{DefaultReason, FromTextError, StructuredOutput, TextSource, Validate};

// ---- The seed's two fallbacks, written as the seed writes them (004, `from_text`). ----

fn seed_heartbeat(text: &str) -> HeartbeatDecision {
    let severity = if text.contains("critical") {
        "critical"
    } else if text.contains("high") {
        "high"
    } else if text.contains("moderate") {
        "moderate"
    } else if text.contains("low") {
        "low"
    } else {
        "none"
    };
    let action = if text.contains("exit") {
        "exit"
    } else if text.contains("hedge") {
        "hedge"
    } else if text.contains("rebalance") {
        "rebalance"
    } else if text.contains("escalate") {
        "escalate"
    } else if text.contains("analyze") {
        "analyze"
    } else {
        "observe"
    };
    HeartbeatDecision {
        severity: severity.into(),
        action: action.into(),
        confidence: 0.5,
        rationale: text.chars().take(200).collect(),
        signals: vec![],
        escalate: text.contains("escalate"),
    }
}

/// The seed calls `extract_float(text, "pleasure")` for "pleasure: 0.3"; this is that reading.
fn seed_float(text: &str, word: &str) -> Option<f64> {
    let at = text.find(word)? + word.len();
    let rest = text[at..].trim_start_matches([':', ' ']);
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-'))
        .unwrap_or(rest.len());
    rest[..end].trim_end_matches('.').parse().ok()
}

fn seed_daimon(text: &str) -> DaimonAppraisal {
    let emotions = [
        "joy",
        "trust",
        "fear",
        "surprise",
        "sadness",
        "disgust",
        "anger",
        "anticipation",
    ];
    let primary = emotions
        .iter()
        .find(|e| text.to_lowercase().contains(*e))
        .unwrap_or(&"anticipation");
    DaimonAppraisal {
        pleasure: seed_float(text, "pleasure").unwrap_or(0.0),
        arousal: seed_float(text, "arousal").unwrap_or(0.0),
        dominance: seed_float(text, "dominance").unwrap_or(0.0),
        primary_emotion: primary.to_string(),
        secondary_emotion: None,
        trigger: text.chars().take(100).collect(),
        memory_bias: "neutral".into(),
    }
}

const PLAIN_HEARTBEAT: &[&str] = &[
    "Volume spiked and spreads widened. Severity is high; we should hedge the position.",
    "Everything is quiet, nothing to report.",
    "This is critical: the pool is being drained. We must exit now and escalate to T2.",
    "A moderate drift in the peg; rebalance the vault over the next hour.",
    "Risk is low. We analyze the governance proposal before the vote.",
    "Governance vote passed with low turnout; analyze the new parameters and escalate if they change fees.",
    "Liquidity is thinning at a moderate pace and we should rebalance, then analyze again in an hour. \
     The oracle lag is within tolerance, the funding rate is flat, and the treasury holds enough \
     stablecoins to cover three months of runway even if the market falls by half from here on.",
    "",
];

const PLAIN_DAIMON: &[&str] = &[
    "pleasure: 0.3, arousal: -0.5, dominance: 0.1. A quiet fear about the position.",
    "pleasure: -0.8 arousal: 0.9 dominance: -0.2 anger at the failed trade",
    "The agent feels trust in the new strategy.",
    "Nothing much; a sense of anticipation.",
    "",
];

/// Plain prose: keywords in lowercase, as whole words, never negated; the seed's substring match
/// is case-sensitive, so "Moderate" is not moderate to it (ours reads it, see `whole_words_only`).
#[test]
fn seed_behaviour_holds_on_plain_prose() {
    for text in PLAIN_HEARTBEAT {
        let ours = HeartbeatDecision::from_text(text).unwrap();
        assert_eq!(ours.value, seed_heartbeat(text), "on {text:?}");
    }
    for text in PLAIN_DAIMON {
        let ours = DaimonAppraisal::from_text(text).unwrap();
        assert_eq!(ours.value, seed_daimon(text), "on {text:?}");
    }
}

fn heartbeat(text: &str) -> HeartbeatDecision {
    let read = HeartbeatDecision::from_text(text).unwrap();
    read.value.validate().unwrap();
    read.value
}

#[test]
fn whole_words_only() {
    // The seed reads "highlight" as high, "lowest"/"allow" as low and "exiting"... as exit.
    let text = "A highlight of the week: we allow the slow drift, no exiting needed.";
    assert_eq!(seed_heartbeat(text).severity, "high");
    assert_eq!(seed_heartbeat(text).action, "exit");
    let ours = heartbeat(text);
    assert_eq!(
        (ours.severity.as_str(), ours.action.as_str()),
        ("none", "observe")
    );
    // Case does not matter.
    let ours = heartbeat("Severity: CRITICAL. Hedge.");
    assert_eq!(
        (ours.severity.as_str(), ours.action.as_str()),
        ("critical", "hedge")
    );
}

#[test]
fn negated_keywords_do_not_count() {
    let text = "This is not critical and there is no need to exit. Don't escalate; hedge instead.";
    let seed = seed_heartbeat(text);
    assert_eq!(
        (seed.severity.as_str(), seed.action.as_str(), seed.escalate),
        ("critical", "exit", true)
    );
    let read = HeartbeatDecision::from_text(text).unwrap();
    let v = &read.value;
    assert_eq!(
        (v.severity.as_str(), v.action.as_str(), v.escalate),
        ("none", "hedge", false)
    );
    // The report says why severity and escalate fell back.
    assert_eq!(
        read.report.field("/severity").unwrap().source,
        TextSource::Default {
            reason: DefaultReason::Negated {
                written: "critical".into(),
                at: 12
            }
        }
    );
    assert!(matches!(
        read.report.field("/escalate").unwrap().source,
        TextSource::Default {
            reason: DefaultReason::Negated { .. }
        }
    ));
    // A negation ends with its clause.
    let v = heartbeat("Not high, but critical. Exit.");
    assert_eq!(
        (v.severity.as_str(), v.action.as_str()),
        ("critical", "exit")
    );
}

#[test]
fn aliases_select_their_value() {
    let v = heartbeat("Sell everything before the unlock.");
    assert_eq!(v.action, "exit");
    let read = HeartbeatDecision::from_text("We should sell   everything.").unwrap();
    assert_eq!(
        read.report.field("/action").unwrap().source,
        TextSource::Keyword {
            value: "exit".into(),
            written: "sell   everything".into(),
            at: 10
        }
    );
}

fn daimon(text: &str) -> (f64, f64, f64) {
    let read = DaimonAppraisal::from_text(text).unwrap();
    read.value.validate().unwrap();
    (
        read.value.pleasure,
        read.value.arousal,
        read.value.dominance,
    )
}

#[test]
fn numbers_written_several_ways() {
    assert_eq!(
        daimon("pleasure: 0.3, arousal of -0.5, dominance=+.3"),
        (0.3, -0.5, 0.3)
    );
    assert_eq!(
        daimon("Pleasure = 0.25; Arousal is about \u{2212}0.75; DOMINANCE -> 1"),
        (0.25, -0.75, 1.0)
    );
    assert_eq!(
        daimon("**pleasure**: -1.0 | **arousal**: 1 | **dominance**: 0"),
        (-1.0, 1.0, 0.0)
    );
    // A percent on a 0..1 field is a fraction.
    let v = heartbeat("Confidence 80%. Hedge.");
    assert_eq!(v.confidence, 0.8);
    let v = heartbeat("confidence: 0.65");
    assert_eq!(v.confidence, 0.65);
    // No number after the label: the declared default, reported as such.
    let read = HeartbeatDecision::from_text("confidence is high").unwrap();
    assert_eq!(read.value.confidence, 0.5);
    assert!(!read.report.field("/confidence").unwrap().is_read());
}

#[test]
fn out_of_range_numbers_fall_back_with_a_warning() {
    let read = DaimonAppraisal::from_text("pleasure: 1.7, arousal: 0.2").unwrap();
    assert_eq!((read.value.pleasure, read.value.arousal), (0.0, 0.2));
    let warnings: Vec<String> = read.report.warnings().map(|w| w.to_string()).collect();
    assert_eq!(
        warnings,
        ["/pleasure: default: 1.7 at byte 10 refused, expected a number in [-1.0, 1.0] that fits f64"]
    );
    let read = HeartbeatDecision::from_text("confidence 140%").unwrap();
    assert_eq!(read.value.confidence, 0.5);
    assert_eq!(read.report.warnings().count(), 1);
}

#[test]
fn the_report_separates_read_from_defaulted() {
    let read = HeartbeatDecision::from_text("Severity high. Hedge.").unwrap();
    let read_fields: Vec<&str> = read.report.read().map(|f| f.field.as_str()).collect();
    let defaulted: Vec<&str> = read.report.defaulted().map(|f| f.field.as_str()).collect();
    assert_eq!(read_fields, ["/severity", "/action", "/rationale"]);
    assert_eq!(defaulted, ["/confidence", "/signals", "/escalate"]);
    assert_eq!(
        read.report.to_string(),
        "/severity: \"high\" from \"high\" at byte 9\n\
         /action: \"hedge\" from \"Hedge\" at byte 15\n\
         /confidence: default: not in the text\n\
         /rationale: first 21 characters of the text\n\
         /signals: not read (no #[fallback_keyword])\n\
         /escalate: default: not in the text"
    );
}

#[test]
fn empty_text_is_all_defaults_and_says_so() {
    for text in ["", "   \n\t", "!!! ???"] {
        let read = HeartbeatDecision::from_text(text).unwrap();
        assert_eq!(
            read.report
                .read()
                .filter(|f| f.field != "/rationale")
                .count(),
            0
        );
        assert_eq!(read.value.severity, "none");
        assert_eq!(read.value.action, "observe");
        let read = DaimonAppraisal::from_text(text).unwrap();
        assert_eq!(read.value.primary_emotion, "anticipation");
        assert_eq!(read.value.memory_bias, "neutral");
    }
}

#[test]
fn non_ascii_text() {
    let text = "Sévérité : HIGH — l’équipe dit « don’t exit », donc hedge. 🚨 émotion: joy";
    let v = heartbeat(text);
    assert_eq!((v.severity.as_str(), v.action.as_str()), ("high", "hedge"));
    // The excerpt is cut on a character boundary.
    let long = "é".repeat(300);
    let v = heartbeat(&long);
    assert_eq!(v.rationale.chars().count(), 200);
    let read = DaimonAppraisal::from_text("😀 joy, pleasure: 0.9").unwrap();
    assert_eq!(read.value.primary_emotion, "joy");
    assert_eq!(read.value.pleasure, 0.9);
}

#[test]
fn a_megabyte_of_text() {
    let filler = "the market moved sideways with ordinary volume and nothing stood out. ";
    let mut text = filler.repeat(1_000_000 / filler.len());
    text.push_str("But now it is critical: exit, escalate. pleasure: -0.4");
    let v = heartbeat(&text);
    assert_eq!(
        (v.severity.as_str(), v.action.as_str(), v.escalate),
        ("critical", "exit", true)
    );
    assert_eq!(v.rationale.chars().count(), 200);
    assert_eq!(daimon(&text).0, -0.4);
}

#[test]
fn a_type_without_fallback_keywords_has_no_reader() {
    #[derive(StructuredOutput, Deserialize, Debug)]
    struct Plain {
        approved: bool,
    }
    let err = Plain::from_text("approved").unwrap_err();
    assert!(matches!(err, FromTextError::NotSupported { .. }));
    assert!(err.to_string().contains("Plain"));
}

/// Every one of the eight subsystem types reads prose (the design documents' requirement that a
/// run with structured output off still yields each of them), and what it reads passes its
/// rules; a field the text does not give is reported as a default.
#[test]
fn every_subsystem_type_reads_prose() {
    use structured_examples::{
        CuratorEvaluation, DreamIntegration, FragmentEvaluation, ReplayAnalysis, ThreatAssessment,
    };
    let risk = RiskAssessment::from_text(
        "Approved. Adjusted size: 2500 USD after the sizing layer; liquidity is thin.",
    )
    .unwrap();
    assert!(risk.value.approved);
    assert_eq!(risk.value.adjusted_size_usd, 2500.0);
    assert!(risk
        .value
        .reasoning
        .as_deref()
        .unwrap()
        .starts_with("Approved."));
    let refused = RiskAssessment::from_text("Not approved: the position is too large.").unwrap();
    assert!(!refused.value.approved);
    assert!(matches!(
        refused.report.field("/adjusted_size_usd").unwrap().source,
        TextSource::Default { .. }
    ));

    let curator =
        CuratorEvaluation::from_text("Evaluated 40 entries; retained 31, pruned 9. Health: 0.8.")
            .unwrap();
    assert_eq!(
        (
            curator.value.entries_evaluated,
            curator.value.entries_retained,
            curator.value.entries_pruned
        ),
        (40, 31, 9)
    );
    assert_eq!(curator.value.grimoire_health, 0.8);

    let replay = ReplayAnalysis::from_text("Surprise 0.7, arousal -0.2 after the replay.").unwrap();
    assert_eq!(
        (replay.value.surprise_score, replay.value.arousal_delta),
        (0.7, -0.2)
    );

    let fragment = FragmentEvaluation::from_text(
        "Novelty 0.9, relevance 0.4, coherence 0.6. Do not discard it; promote it.",
    )
    .unwrap();
    assert_eq!(fragment.value.verdict, "promote");
    assert_eq!(fragment.value.novelty, 0.9);

    let dream = DreamIntegration::from_text("Add a rule: hedge before governance votes.").unwrap();
    assert_eq!(
        dream.value.playbook_diff.as_deref(),
        Some("Add a rule: hedge before governance votes.")
    );
    assert!(dream.value.promoted.is_empty());

    let threat = ThreatAssessment::from_text(
        "Oracle manipulation. Severity high, likelihood 30%. Losses on every open loan.",
    )
    .unwrap();
    assert_eq!(threat.value.severity, "high");
    assert_eq!(threat.value.likelihood, 0.3);
    let unsaid = ThreatAssessment::from_text("Something may go wrong.").unwrap();
    assert_eq!(unsaid.value.severity, "medium");
    assert!(matches!(
        unsaid.report.field("/severity").unwrap().source,
        TextSource::Default { .. }
    ));

    for v in [
        risk.value.validate().is_ok(),
        curator.value.validate().is_ok(),
        replay.value.validate().is_ok(),
        fragment.value.validate().is_ok(),
        dream.value.validate().is_ok(),
        threat.value.validate().is_ok(),
    ] {
        assert!(v);
    }
}

// ---- Every kind of field, on a type of the test's own. ----

/// An action.
#[derive(StructuredOutput, Deserialize, Debug, Clone, Copy, PartialEq)]
#[serde(rename_all = "snake_case")]
enum Move {
    Observe,
    Hedge,
    Exit,
    SellAll,
}

#[derive(StructuredOutput, Deserialize, Debug, PartialEq)]
struct Order {
    #[fallback_keyword("exit", "sell everything" => "exit", "hedge", default = "observe")]
    action: Move,
    /// Bare: every value of `Move` in declared order; `None` when the text names none.
    #[fallback_keyword]
    then: Option<Move>,
    #[range(1, 10)]
    #[fallback_keyword("size", "qty", default = 1)]
    size: u8,
    #[range(0.0, 1.0)]
    #[fallback_keyword("confidence", "certainty")]
    confidence: Option<f64>,
    #[fallback_keyword("urgent", "asap")]
    urgent: bool,
    #[fallback_keyword(excerpt = 10, default = "(none)")]
    note: String,
    #[enum_values("limit", "market")]
    #[fallback_keyword("sell at market" => "market")]
    kind: Option<String>,
    tags: Vec<String>,
    #[serde(skip)]
    internal: u32,
}

#[test]
fn every_field_kind() {
    let read = Order::from_text(
        "Sell everything ASAP, qty 7, confidence 90%, then sell_all. Sell at market.",
    )
    .unwrap();
    assert_eq!(
        read.value,
        Order {
            action: Move::Exit,
            then: Some(Move::SellAll),
            size: 7,
            confidence: Some(0.9),
            urgent: true,
            note: "Sell every".into(),
            kind: Some("market".into()),
            tags: vec![],
            internal: 0,
        }
    );
    let read = Order::from_text("").unwrap();
    assert_eq!(
        read.value,
        Order {
            action: Move::Observe,
            then: None,
            size: 1,
            confidence: None,
            urgent: false,
            note: "(none)".into(),
            kind: None,
            tags: vec![],
            internal: 0,
        }
    );
    // 11 is outside 1..=10 and 300 does not fit a u8: both refused, both reported.
    for text in ["size: 11", "size: 300", "size: 2.5"] {
        let read = Order::from_text(text).unwrap();
        assert_eq!(read.value.size, 1, "{text}");
        assert_eq!(read.report.warnings().count(), 1, "{text}");
    }
    assert_eq!(Order::from_text("size: 10.0").unwrap().value.size, 10);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    /// Whatever the text, a value that passes its own rules, and a report line per field.
    #[test]
    fn any_text_gives_a_valid_value(text in any::<String>()) {
        let read = HeartbeatDecision::from_text(&text).unwrap();
        prop_assert!(read.value.validate().is_ok());
        prop_assert_eq!(read.report.fields().len(), 6);
        let read = DaimonAppraisal::from_text(&text).unwrap();
        prop_assert!(read.value.validate().is_ok());
        let read = Order::from_text(&text).unwrap();
        prop_assert!(read.value.validate().is_ok());
    }

    /// Text built from the words the readers look for, with numbers and negations mixed in.
    #[test]
    fn keyword_soup_gives_a_valid_value(words in proptest::collection::vec(
        prop::sample::select(vec![
            "critical", "high", "not", "no", "exit", "don't", "escalate", "pleasure", ":", "-",
            "1.5", "-0.3", "80%", "confidence", "size", "300", "7", ",", ".", "but", "joy", "é",
        ]),
        0..40,
    )) {
        let text = words.join(" ");
        let read = HeartbeatDecision::from_text(&text).unwrap();
        prop_assert!(read.value.validate().is_ok());
        let read = DaimonAppraisal::from_text(&text).unwrap();
        prop_assert!(read.value.validate().is_ok());
        let read = Order::from_text(&text).unwrap();
        prop_assert!(read.value.validate().is_ok());
    }
}
