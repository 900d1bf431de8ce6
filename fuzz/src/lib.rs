//! What the fuzz targets share.

use serde_json::Value;

/// The key `serde_json` gives a meaning of its own when it reads a `Value` with its `raw_value`
/// feature (on in this workspace): an object whose first key it is, is read as the JSON its
/// string holds (or refused). The runtime reads it as a key.
const RAW_VALUE_KEY: &str = "$serde_json::private::RawValue";

/// Whether `serde_json` reads `value`'s JSON text back as `value`: no object in it has
/// [`RAW_VALUE_KEY`] first. Where it does, a target compares nothing with `serde_json`'s reading.
pub fn serde_reads_back(value: &Value) -> bool {
    match value {
        Value::Array(items) => items.iter().all(serde_reads_back),
        Value::Object(map) => {
            map.keys().next().map(String::as_str) != Some(RAW_VALUE_KEY)
                && map.values().all(serde_reads_back)
        }
        _ => true,
    }
}

/// Whether `text` is JSON (its syntax alone: no `Value` built, so no key is read specially).
pub fn is_json(text: &str) -> bool {
    serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok()
}

/// Whether every number in `json` (JSON text) is the value a reading holds for it, by the rule
/// the runtime promises for a clean reading, written here apart from the runtime's own: a
/// number that reads as infinite is not; nor one that reads as zero though a digit of it is not
/// zero (an underflow); nor an integer (no fraction, no exponent) that no `i64` or `u64` holds
/// whose float's shortest decimal is another number. A fraction is read to the nearest float.
pub fn numbers_read_as_written(json: &str) -> bool {
    let bytes = json.as_bytes();
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'"' => {
                i += 1;
                while let Some(&c) = bytes.get(i) {
                    i += match c {
                        b'\\' => 2,
                        b'"' => break,
                        _ => 1,
                    };
                }
                i += 1;
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while bytes
                    .get(i)
                    .is_some_and(|c| matches!(c, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
                {
                    i += 1;
                }
                if !number_as_written(json.get(start..i).unwrap_or_default()) {
                    return false;
                }
            }
            _ => i += 1,
        }
    }
    true
}

fn number_as_written(token: &str) -> bool {
    let Ok(f) = token.parse::<f64>() else {
        return false;
    };
    if !f.is_finite() {
        return false;
    }
    let mantissa = token.split(['e', 'E']).next().unwrap_or_default();
    if f == 0.0 {
        return !mantissa.bytes().any(|b| matches!(b, b'1'..=b'9'));
    }
    let integer = !token.contains(['.', 'e', 'E']);
    if !integer || token.parse::<i64>().is_ok() || token.parse::<u64>().is_ok() {
        return true;
    }
    decimal(token) == decimal(&format!("{:e}", f.abs()))
}

/// A number's significant digits and the power of ten of its first one.
fn decimal(text: &str) -> (String, i64) {
    let text = text.trim_start_matches('-');
    let (mantissa, exponent) = match text.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.parse::<i64>().unwrap_or(i64::MAX / 2)),
        None => (text, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits: String = int.chars().chain(frac.chars()).collect();
    let leading = digits.len() - digits.trim_start_matches('0').len();
    let significant = digits.trim_start_matches('0').trim_end_matches('0').to_owned();
    let power = exponent.saturating_add(int.len() as i64 - leading as i64);
    (significant, power)
}
