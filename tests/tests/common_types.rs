//! Common types from other crates as field types (the runtime's features `chrono`, `uuid`,
//! `url`, `rust_decimal`): the exact schema, a `from_json` round trip of what serde writes, the
//! forms their parsers take but their formats do not refused with the rule and path, decimals
//! read exactly, and a lowering per target.

use std::str::FromStr;

use chrono::{DateTime, FixedOffset, NaiveDate, NaiveTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use structured_runtime::provider::dialect::{lower_reporting, SchemaTarget};
use structured_runtime::{FromJsonError, Rule, StructuredOutput};
use url::Url;
use uuid::Uuid;

/// A booking as a user's domain model holds it.
#[derive(StructuredOutput, Deserialize, Serialize, Debug, Clone, PartialEq)]
struct Booking {
    id: Uuid,
    day: NaiveDate,
    opens: NaiveTime,
    created: DateTime<Utc>,
    local: DateTime<FixedOffset>,
    link: Url,
    price: Decimal,
    deposit: Option<Decimal>,
}

fn booking() -> Booking {
    Booking {
        id: Uuid::from_str("67e55044-10b1-426f-9247-bb680e5fe0c8").unwrap(),
        day: NaiveDate::from_ymd_opt(2024, 2, 29).unwrap(),
        opens: NaiveTime::from_hms_milli_opt(9, 30, 0, 250).unwrap(),
        created: DateTime::parse_from_rfc3339("2024-02-29T12:30:00Z")
            .unwrap()
            .with_timezone(&Utc),
        local: DateTime::parse_from_rfc3339("2024-02-29T14:30:00+02:00").unwrap(),
        link: Url::parse("https://example.com/b?id=1").unwrap(),
        price: Decimal::from_str("12.50").unwrap(),
        deposit: None,
    }
}

fn json_of(booking: &Booking) -> Value {
    serde_json::to_value(booking).unwrap()
}

/// `(path, rule)` of each violation `from_json` reports for `value`.
fn refused(value: Value) -> Vec<(String, Rule)> {
    match Booking::from_json(&value.to_string()) {
        Err(FromJsonError::Invalid(v)) => v.iter().map(|v| (v.path.to_string(), v.rule)).collect(),
        other => panic!("expected a refusal, got {other:?} for {value}"),
    }
}

fn with(key: &str, v: Value) -> Value {
    let mut value = json_of(&booking());
    value[key] = v;
    value
}

#[test]
fn each_type_is_a_string_in_its_format() {
    let pattern = "^-?(0|[1-9][0-9]{0,27})(\\.[0-9]{1,27})?$";
    let decimal = json!({"type": "string", "pattern": pattern, "maxLength": 29});
    let deposit = json!({"type": ["string", "null"], "pattern": pattern, "maxLength": 29});
    let schema = Booking::schema().schema().clone();
    let props = &schema["properties"];
    assert_eq!(props["id"], json!({"type": "string", "format": "uuid"}));
    assert_eq!(props["day"], json!({"type": "string", "format": "date"}));
    assert_eq!(
        props["opens"],
        json!({"type": "string", "pattern": "^([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\\.[0-9]{1,9})?$"})
    );
    assert_eq!(
        props["created"],
        json!({"type": "string", "format": "date-time"})
    );
    assert_eq!(
        props["local"],
        json!({"type": "string", "format": "date-time"})
    );
    assert_eq!(props["link"], json!({"type": "string", "format": "uri"}));
    assert_eq!(props["price"], decimal);
    // Why a naive time is a pattern: the `time` format requires an offset.
    let time = jsonschema::options()
        .should_validate_formats(true)
        .build(&json!({"type": "string", "format": "time"}))
        .unwrap();
    assert!(!time.is_valid(&json!("09:30:00")));
    assert!(time.is_valid(&json!("09:30:00Z")));
    assert_eq!(props["deposit"], deposit);
}

#[test]
fn what_serde_writes_reads_back() {
    let value = booking();
    let text = serde_json::to_string(&value).unwrap();
    assert_eq!(Booking::from_json(&text).unwrap(), value, "{text}");
    let with_deposit = Booking {
        deposit: Some(Decimal::from_str("-0.05").unwrap()),
        ..booking()
    };
    let text = serde_json::to_string(&with_deposit).unwrap();
    assert_eq!(Booking::from_json(&text).unwrap(), with_deposit, "{text}");
}

#[test]
fn forms_the_parsers_take_but_the_formats_do_not_are_refused() {
    let cases = [
        // chrono takes an unpadded date; the `date` format does not.
        ("day", json!("2024-2-9"), Rule::Format),
        // A day that does not exist: both refuse.
        ("day", json!("2023-02-29"), Rule::Format),
        ("opens", json!("9:30"), Rule::Pattern),
        ("opens", json!("09:30:00Z"), Rule::Pattern),
        // chrono takes a space for the `T`.
        ("created", json!("2024-02-29 12:30:00Z"), Rule::Format),
        ("local", json!("2024-02-29T14:30:00"), Rule::Format),
        // uuid takes the braced, URN and unhyphenated forms.
        (
            "id",
            json!("{67e55044-10b1-426f-9247-bb680e5fe0c8}"),
            Rule::Format,
        ),
        (
            "id",
            json!("urn:uuid:67e55044-10b1-426f-9247-bb680e5fe0c8"),
            Rule::Format,
        ),
        (
            "id",
            json!("67e5504410b1426f9247bb680e5fe0c8"),
            Rule::Format,
        ),
        // url takes a space (and encodes it).
        ("link", json!("https://example.com/a b"), Rule::Format),
        ("link", json!("not a url"), Rule::Format),
        // rust_decimal takes underscores and an exponent in a string.
        ("price", json!("1_000"), Rule::Pattern),
        ("price", json!("1e3"), Rule::Pattern),
        ("price", json!(" 12"), Rule::Pattern),
        // A number cannot be read digit for digit (see the runtime's docs): a string is asked.
        ("price", json!(12.5), Rule::Type),
        ("price", json!(true), Rule::Type),
    ];
    for (key, v, rule) in cases {
        let found = refused(with(key, v.clone()));
        assert_eq!(found, [(format!("/{key}"), rule)], "{key}: {v}");
    }
}

#[test]
fn a_decimal_is_read_digit_for_digit() {
    let read = |v: Value| Booking::from_json(&with("price", v).to_string()).map(|b| b.price);
    // Every digit, beyond what an f64 holds.
    for written in [
        "12345678901234567.8901",
        "0.30000000000000001",
        "-0.05",
        "12.50",
        "0",
        "9999999999999999999999999999",
        "-99999999999999999999999999.9",
        "0.000000000000000000000000001",
    ] {
        assert_eq!(read(json!(written)).unwrap().to_string(), written);
    }
    // More digits than a Decimal holds for certain: refused, never rounded.
    for written in [
        "99999999999999999999999999999",
        "1.2345678901234567890123456789",
    ] {
        let refused = read(json!(written)).unwrap_err();
        assert_eq!(
            refused
                .violations()
                .unwrap()
                .iter()
                .next()
                .unwrap()
                .path
                .to_string(),
            "/price",
            "{written}"
        );
    }
    // A number where a decimal belongs: refused by the default pipeline, at its path (the
    // re-ask asks for a string); the lenient one writes it as a string, with a warning.
    use structured_runtime::{ParseError, ParseOptions, Reading, StructuredOutputMode};
    let answer = with("price", json!(12.5)).to_string();
    match Reading::new(StructuredOutputMode::PromptGuided)
        .options(&ParseOptions::default())
        .typed::<Booking>(&answer)
    {
        Err(ParseError::Invalid { violations, .. }) => {
            assert_eq!(violations.iter().next().unwrap().path.to_string(), "/price")
        }
        other => panic!("{other:?}"),
    }
    let read = Reading::new(StructuredOutputMode::PromptGuided)
        .options(&ParseOptions::lenient())
        .typed::<Booking>(&answer)
        .unwrap();
    assert_eq!(read.value.price.to_string(), "12.5");
    assert_ne!(read.provenance, structured_runtime::Provenance::Clean);
    assert!(
        format!("{:?}", read.warnings).contains("/price"),
        "{:?}",
        read.warnings
    );
}

#[test]
fn an_instant_in_another_offset_is_the_same_instant() {
    let value = with("created", json!("2024-02-29T14:30:00+02:00"));
    let read = Booking::from_json(&value.to_string()).unwrap();
    assert_eq!(read.created, booking().created);
}

#[test]
fn lowering_per_target() {
    for target in SchemaTarget::ALL {
        match lower_reporting(Booking::schema().schema(), target) {
            Ok(lowered) => println!("{target:?}: {:?}", lowered.moved),
            Err(report) => panic!("{target:?}: {report}"),
        }
    }
}
