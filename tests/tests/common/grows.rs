//! The streaming invariant: a value shown later keeps everything shown before.

use serde_json::Value;

/// Whether `later` keeps all of `earlier`: a string may only lengthen, an object keep its keys
/// (each value growing), a list its items (the last growing, more after it); anything else stays
/// as it was. A value that grows into the final one is a prefix of it.
pub fn grows(earlier: &Value, later: &Value) -> bool {
    match (earlier, later) {
        (Value::String(a), Value::String(b)) => b.starts_with(a.as_str()),
        (Value::Object(a), Value::Object(b)) => {
            a.iter().all(|(k, v)| b.get(k).is_some_and(|w| grows(v, w)))
        }
        (Value::Array(a), Value::Array(b)) => {
            a.len() <= b.len() && a.iter().zip(b).all(|(x, y)| grows(x, y))
        }
        (Value::Null, _) => true,
        (a, b) => a == b,
    }
}
