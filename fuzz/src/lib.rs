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
