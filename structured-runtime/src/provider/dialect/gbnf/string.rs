//! Strings as GBNF: one JSON string character, literals, the formats the grammar can write, and
//! `pattern`s in the regular subset (parsed by `regex-syntax`, the regex crate's own parser).
//!
//! Everything here writes a string's JSON text (between its quotes): a `"` or `\` a pattern
//! allows is written escaped, a control character never, so what the grammar writes reads back
//! as the string the rule describes.

use regex_syntax::hir::{Class, Hir, HirKind, Look};

use super::number::{group, repeat};

/// The rule name of one JSON string character (one code point once read).
pub(super) const CHAR: &str = "char";

/// The `char` rule: any character but `"`, `\` and controls, written as itself, or one of the
/// short escapes. A `\u` escape is left out: it would let one character of a budget cost six
/// bytes (and a surrogate half alone is not a character); every character it could write but a
/// rare control is written as itself.
pub(super) const CHAR_RULE: &str = r#"[^"\\\x00-\x1F] | "\\" ["\\/bfnrt]"#;

/// A GBNF literal that writes exactly `text`.
pub(super) fn literal(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c as u32 == 0x7F => {
                out.push_str(&format!("\\x{:02X}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A GBNF literal that writes `value` as compact JSON.
pub(super) fn json_literal(value: &serde_json::Value) -> String {
    literal(&value.to_string())
}

/// The string's content (between its quotes) for a `format` the grammar writes: a subset of
/// what the format allows, every part of it valid. `None` for a format it does not write.
pub(super) fn format(name: &str) -> Option<String> {
    const DATE: &str = r#"[12] [0-9]{3} "-" (("0" [13578] | "1" [02]) "-" ("0" [1-9] | [12] [0-9] | "3" [01]) | ("0" [469] | "11") "-" ("0" [1-9] | [12] [0-9] | "30") | "02" "-" ("0" [1-9] | "1" [0-9] | "2" [0-8]))"#;
    const TIME: &str = r#"([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9] ":" [0-5] [0-9] ("." [0-9]{1,6})? ("Z" | [+-] ([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9])"#;
    const HEX: &str = "[0-9a-f]";
    const LABEL: &str = "[a-z0-9]{1,20}";
    Some(match name {
        "date" => DATE.to_owned(),
        "time" => TIME.to_owned(),
        "date-time" => format!("{DATE} \"T\" {TIME}"),
        "uuid" => format!(
            "{HEX}{{8}} \"-\" {HEX}{{4}} \"-\" {HEX}{{4}} \"-\" {HEX}{{4}} \"-\" {HEX}{{12}}"
        ),
        "email" => {
            format!("{LABEL} (\".\" {LABEL}){{0,2}} \"@\" {LABEL} (\".\" [a-z]{{2,10}}){{1,2}}")
        }
        "hostname" => format!("{LABEL} (\".\" {LABEL}){{0,3}}"),
        "ipv4" => {
            let octet = r#"("25" [0-5] | "2" [0-4] [0-9] | "1" [0-9] [0-9] | [1-9] [0-9] | [0-9])"#;
            format!("{octet} \".\" {octet} \".\" {octet} \".\" {octet}")
        }
        "uri" => format!(
            "\"https://\" {LABEL} (\".\" {LABEL}){{1,3}} (\"/\" [a-zA-Z0-9._~-]{{1,20}}){{0,4}}"
        ),
        _ => return None,
    })
}

/// The string's content for a `pattern` (a search, as JSON Schema means it: a side not anchored
/// by `^` / `$` takes up to `budget` more characters), or why the grammar cannot write it.
pub(super) fn pattern(pattern: &str, budget: usize) -> Result<String, String> {
    let hir = regex_syntax::ParserBuilder::new()
        .unicode(false)
        .utf8(false)
        .nest_limit(64)
        .build()
        .parse(pattern)
        .map_err(|e| format!("not in the regular subset the grammar writes ({e})"))?;
    let mut parts: Vec<&Hir> = match hir.kind() {
        HirKind::Concat(parts) => parts.iter().collect(),
        _ => vec![&hir],
    };
    let starts = matches!(
        parts.first().map(|h| h.kind()),
        Some(HirKind::Look(Look::Start))
    );
    if starts {
        parts.remove(0);
    }
    let ends = matches!(
        parts.last().map(|h| h.kind()),
        Some(HirKind::Look(Look::End))
    );
    if ends {
        parts.pop();
    }
    let mut out = Vec::new();
    let pad = repeat(CHAR, 0, budget);
    if !starts && !pad.is_empty() {
        out.push(pad.clone());
    }
    for part in parts {
        let written = translate(part, 0)?;
        if !written.is_empty() {
            out.push(written);
        }
    }
    if !ends && !pad.is_empty() {
        out.push(pad);
    }
    Ok(out.join(" "))
}

/// One part of a pattern; anchors and word boundaries inside it are not written.
fn translate(hir: &Hir, depth: usize) -> Result<String, String> {
    if depth > 64 {
        return Err("nested too deep".into());
    }
    Ok(match hir.kind() {
        HirKind::Empty => String::new(),
        HirKind::Literal(lit) => {
            let text = std::str::from_utf8(&lit.0)
                .map_err(|_| "a literal that is not UTF-8".to_owned())?;
            let json = serde_json::Value::from(text).to_string();
            let inner = json.get(1..json.len() - 1).unwrap_or_default();
            literal(inner)
        }
        HirKind::Class(class) => {
            let ranges: Vec<(u32, u32)> = match class {
                Class::Unicode(c) => c
                    .ranges()
                    .iter()
                    .map(|r| (r.start() as u32, r.end() as u32))
                    .collect(),
                Class::Bytes(c) => c
                    .ranges()
                    .iter()
                    .filter(|r| r.start() < 0x80)
                    .map(|r| (u32::from(r.start()), u32::from(r.end().min(0x7F))))
                    .collect(),
            };
            char_class(&ranges)?
        }
        HirKind::Look(look) => return Err(format!("the assertion {look:?} inside the pattern")),
        HirKind::Repetition(rep) => {
            let sub = translate(&rep.sub, depth + 1)?;
            if sub.is_empty() {
                return Ok(String::new());
            }
            let sub = group(&sub);
            match rep.max {
                None if rep.min == 0 => format!("{sub}*"),
                None if rep.min == 1 => format!("{sub}+"),
                None => format!("{sub}{{{},}}", rep.min),
                Some(max) if max > 1_000 => {
                    return Err(format!("a repetition of up to {max}"));
                }
                Some(max) => repeat(&sub, rep.min as usize, max as usize),
            }
        }
        HirKind::Capture(cap) => translate(&cap.sub, depth + 1)?,
        HirKind::Concat(parts) => {
            let written: Result<Vec<String>, String> =
                parts.iter().map(|p| translate(p, depth + 1)).collect();
            let written: Vec<String> = written?.into_iter().filter(|p| !p.is_empty()).collect();
            match written.len() {
                0 => String::new(),
                1 => written.into_iter().next().unwrap_or_default(),
                _ => format!("({})", written.join(" ")),
            }
        }
        HirKind::Alternation(branches) => {
            let written: Result<Vec<String>, String> =
                branches.iter().map(|b| translate(b, depth + 1)).collect();
            let written = written?;
            let empty = written.iter().any(String::is_empty);
            let filled: Vec<String> = written.into_iter().filter(|b| !b.is_empty()).collect();
            match (filled.len(), empty) {
                (0, _) => String::new(),
                (_, false) => format!("({})", filled.join(" | ")),
                (_, true) => format!("({})?", filled.join(" | ")),
            }
        }
    })
}

/// A class of characters as their JSON text: `"` and `\` escaped, controls left out.
fn char_class(ranges: &[(u32, u32)]) -> Result<String, String> {
    let mut kept = Vec::new();
    let mut escapes = Vec::new();
    for &(start, end) in ranges {
        // Controls are left out; `"` and `\` are cut out of the range and written escaped.
        let mut from = start.max(0x20);
        for forbidden in [0x22u32, 0x5C] {
            if from <= forbidden && forbidden <= end {
                escapes.push(forbidden);
                if from < forbidden {
                    kept.push((from, forbidden - 1));
                }
                from = forbidden + 1;
            }
        }
        if from <= end {
            kept.push((from, end));
        }
    }
    let mut alternatives = Vec::new();
    if !kept.is_empty() {
        let mut class = String::from("[");
        for (a, b) in kept {
            class.push_str(&class_char(a));
            if b > a {
                class.push('-');
                class.push_str(&class_char(b));
            }
        }
        class.push(']');
        alternatives.push(class);
    }
    for e in escapes {
        alternatives.push(if e == 0x22 { r#""\\\"""# } else { r#""\\\\""# }.to_owned());
    }
    match alternatives.len() {
        0 => Err("a class of control characters only".into()),
        1 => Ok(alternatives.into_iter().next().unwrap_or_default()),
        _ => Ok(format!("({})", alternatives.join(" | "))),
    }
}

/// A character inside `[...]`, escaped where the class syntax needs it.
fn class_char(c: u32) -> String {
    match char::from_u32(c) {
        Some(ch @ ('a'..='z' | 'A'..='Z' | '0'..='9')) => ch.to_string(),
        _ if c <= 0xFF => format!("\\x{c:02X}"),
        _ if c <= 0xFFFF => format!("\\u{c:04X}"),
        _ => format!("\\U{c:08X}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_and_classes_write_json_text() {
        assert_eq!(literal("a\"b\\"), r#""a\"b\\""#);
        assert_eq!(pattern("^a\"$", 8).unwrap(), r#""a\\\"""#);
        assert_eq!(pattern("^[a-c]+$", 8).unwrap(), "[a-c]+");
        assert_eq!(pattern("^x", 2).unwrap(), "\"x\" char{0,2}");
        assert!(pattern("^(?=a)$", 2).is_err());
        assert!(pattern(r"\bword", 2).is_err());
    }
}
