//! Numbers as written. A JSON number is decimal text of any length; a value holds an `i64`, a
//! `u64` or an `f64`. A number is read as written when the value is that same decimal number:
//! `0.1` is (it is the shortest decimal of its `f64`), a 30-digit integer and `1e999` are not.
//! Everything else the reader does to a number is a repair with the text that was read.
//!
//! [`long_numbers`] finds the numbers that need this: numbers of at most 15 significant digits
//! and a modest exponent are always read as written.

/// Significant digits any `f64` holds exactly, whatever the exponent (`f64::DIGITS`).
const PLAIN_DIGITS: usize = 15;
/// A decimal exponent comfortably inside `f64`'s normal range (about 1e-308 to 1e308).
const PLAIN_EXPONENT: i64 = 290;

/// The decimal a number's text spells: its significant digits (no leading or trailing zeros)
/// and where the point goes (`value = 0.DIGITS × 10^point`). Zero has no digits.
struct Decimal {
    digits: Vec<u8>,
    point: i64,
}

/// A number token's digits (integer part, then fraction), where its significant digits lie in
/// them (`leading` zeros skipped, then `count` digits), and its point. Zero has no digits.
struct Digits<'a> {
    int: &'a str,
    frac: &'a str,
    leading: usize,
    count: usize,
    point: i64,
}

/// `text` is a number token (an optional sign, digits, an optional fraction and exponent).
fn digits(text: &str) -> Digits<'_> {
    let text = text.trim_start_matches(['-', '+']);
    let (mantissa, exponent) = match text.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.parse::<i64>().unwrap_or(i64::MAX / 4)),
        None => (text, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all = int.bytes().chain(frac.bytes());
    let leading = all.clone().take_while(|&b| b == b'0').count();
    let total = int.len() + frac.len();
    if leading == total {
        return Digits {
            int,
            frac,
            leading,
            count: 0,
            point: 0,
        };
    }
    let trailing = all.rev().take_while(|&b| b == b'0').count();
    Digits {
        int,
        frac,
        leading,
        count: total - leading - trailing,
        point: exponent.saturating_add(int.len() as i64 - leading as i64),
    }
}

/// The decimal `text` spells, its significant digits collected.
fn decimal(text: &str) -> Decimal {
    let d = digits(text);
    let all = d.int.bytes().chain(d.frac.bytes());
    Decimal {
        digits: all.skip(d.leading).take(d.count).collect(),
        point: d.point,
    }
}

/// How many significant digits `text` (a number token) has, and its point, without
/// allocating: what the filters need.
fn shape(text: &str) -> (usize, i64) {
    let d = digits(text);
    (d.count, d.point)
}

/// Whether `f` reads `written` (a JSON number) without a change worth a word. A fraction is
/// read to the nearest float, as every JSON reader reads it; what is a change: an integer
/// (written without a fraction or exponent) whose digits the float does not keep, a number
/// too large for a float (infinite), and a non-zero number read as zero (underflow).
pub(crate) fn same_number(written: &str, f: f64) -> bool {
    if !f.is_finite() {
        return false;
    }
    let (digits, point) = shape(written);
    if digits <= PLAIN_DIGITS && point.abs() < PLAIN_EXPONENT {
        return true;
    }
    if f == 0.0 {
        return digits == 0;
    }
    let integer = !written.contains(['.', 'e', 'E']);
    if !integer {
        return true;
    }
    let spelled = decimal(written);
    let shortest = decimal(&format!("{:e}", f.abs()));
    shortest.digits == spelled.digits && shortest.point == spelled.point
}

/// Every number-like token in `text` (outside double-quoted strings) that is not plain (more
/// than 15 significant digits, or a large exponent), with its offset: the only ones a reader
/// may read differently from how they are written.
pub(crate) fn long_numbers(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let bytes = text.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || loop {
        // Structure, whitespace and literals are skipped a byte at a time by table.
        while bytes.get(i).is_some_and(|&b| !STARTS[usize::from(b)]) {
            i += 1;
        }
        let &b = bytes.get(i)?;
        if b == b'"' {
            i = string_end(bytes, i + 1);
            continue;
        }
        let start = i;
        while bytes
            .get(i)
            .is_some_and(|b| matches!(b, b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-'))
        {
            i += 1;
        }
        let token = text.get(start..i).unwrap_or("");
        // At most 15 characters and no exponent: at most 15 digits, a small point.
        let short = token.len() <= PLAIN_DIGITS && !token.bytes().any(|b| b | 0x20 == b'e');
        if !short && token.bytes().any(|b| b.is_ascii_digit()) {
            let (digits, point) = shape(token);
            if digits > PLAIN_DIGITS || point.abs() >= PLAIN_EXPONENT {
                return Some((start, token));
            }
        }
    })
}

/// Whether `bytes` may hold a number [`long_numbers`] yields: one has more than 15 characters
/// or an exponent, so it holds a run of more than 15 of the bytes a number is written with
/// before any `e`, or an `e` (`E`) right after one of them. A run in a string (a long figure, a
/// word with an `e` after a digit) says "may" too: a filter, looking at each byte once, without
/// telling strings apart. Before [`long_numbers`] on a short part of a text, where setting out
/// to skip each string costs more than looking at its bytes. A text of at most 15 bytes holds
/// no run that long, so only an `e` can say "may" (the parts looked at again for a zero are
/// mostly a value's few bytes).
pub(crate) fn may_hold_long(bytes: &[u8]) -> bool {
    if bytes.len() <= PLAIN_DIGITS {
        return bytes.iter().any(|b| b | 0x20 == b'e');
    }
    let numeric = |b: &u8| NUMERIC[usize::from(*b)];
    let mut i = 0;
    while let Some(skip) = bytes
        .get(i..)
        .and_then(|rest| rest.iter().position(numeric))
    {
        let start = i + skip;
        let run = bytes
            .get(start..)
            .map_or(0, |rest| rest.iter().take_while(|b| numeric(b)).count());
        i = start + run;
        if run > PLAIN_DIGITS || bytes.get(i).is_some_and(|b| b | 0x20 == b'e') {
            return true;
        }
    }
    false
}

/// The bytes a number is written with before its exponent.
const NUMERIC: [bool; 256] = super::byte_table::of(b"0123456789.+-");

/// The bytes [`long_numbers`] stops at: a quote, a minus sign, a digit.
const STARTS: [bool; 256] = super::byte_table::of(b"\"-0123456789");

/// The index after the closing quote of the string whose content starts at `i`.
fn string_end(bytes: &[u8], mut i: usize) -> usize {
    while let Some(found) = memchr::memchr2(b'"', b'\\', bytes.get(i..).unwrap_or(&[])) {
        i += found;
        if bytes[i] == b'\\' {
            i += 2;
        } else {
            return i + 1;
        }
    }
    bytes.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_number_is_the_same_when_its_decimal_is() {
        for (text, f) in [
            ("0.1", 0.1),
            ("-0", -0.0),
            ("1e2", 100.0),
            ("100.000", 100.0),
            ("0.30000000000000004", 0.1 + 0.2),
            ("0.1000000000000000055511", 0.1),
            ("123456789012345678", 123456789012345678.0),
        ] {
            let expect = text != "123456789012345678";
            assert_eq!(same_number(text, f), expect, "{text}");
        }
        assert!(!same_number("1e999", f64::INFINITY));
        assert!(!same_number("1e-400", 0.0));
        assert!(!same_number(
            "123456789012345678901234567890",
            1.2345678901234568e29
        ));
    }

    #[test]
    fn shape_counts_significant_digits_and_the_point() {
        assert_eq!(shape("0.00120"), (2, -2));
        assert_eq!(shape("-1200"), (2, 4));
        assert_eq!(shape("0"), (0, 0));
        assert_eq!(shape("1.5e3"), (2, 4));
        for t in ["0.00120", "-1200", "0", "1.5e3", "123.456e-7"] {
            let d = decimal(t);
            assert_eq!(shape(t), (d.digits.len(), d.point), "{t}");
        }
    }

    #[test]
    fn plain_numbers_pass_the_filter_and_long_ones_do_not() {
        let all_plain = |text| long_numbers(text).next().is_none();
        assert!(all_plain(
            r#"{"a": 1.5, "b": [-2, 3e10], "c": "12345678901234567890"}"#
        ));
        assert!(!all_plain(r#"{"a": 12345678901234567890}"#));
        assert!(!all_plain(r#"{"a": 1e999}"#));
        assert!(!all_plain(r#"{"a": -1e-400}"#));
        assert!(all_plain(r#"{"a": "\"1e999"}"#));
        assert!(all_plain("no numbers"));
    }

    proptest::proptest! {
        /// The filter never says "none" where [`long_numbers`] finds one: over texts of
        /// numbers short and long, with and without exponents, strings holding figures and
        /// escapes, and structure (each part of a text the strict reading looks at again is
        /// looked at by it first).
        #[test]
        fn may_hold_long_says_may_wherever_long_numbers_finds_one(
            parts in proptest::collection::vec(
                proptest::prop_oneof![
                    "-?[0-9]{1,20}(\\.[0-9]{1,20})?([eE][-+]?[0-9]{1,4})?",
                    // Short texts whose one long number is long by its exponent.
                    "-?[0-9]{1,3}[eE]-?[0-9]{3}",
                    "\"([a-z0-9e.]|\\\\\")*\"",
                    "[ ,:\\[\\]{}]{1,3}",
                ],
                0..12,
            )
        ) {
            let text = parts.concat();
            if long_numbers(&text).next().is_some() {
                proptest::prop_assert!(may_hold_long(text.as_bytes()), "{:?}", text);
            }
        }
    }
}
