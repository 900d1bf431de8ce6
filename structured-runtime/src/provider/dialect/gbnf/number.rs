//! Numbers in a range, written as GBNF: the range is cut into pieces whose digits can be
//! listed position by position (`1[2-9]`, `[2-8][0-9]`, `9[0-4]`), the fraction likewise.
//!
//! Every number is written with at most [`MAX_INTEGER_DIGITS`] integer digits and a bounded
//! number of fraction digits (at least [`FRACTION_DIGITS`], more when a bound needs them), no
//! exponent. Bounds are read as exact decimals (an `f64` bound by the shortest text that reads
//! back as it, an exclusive one as the next `f64` past it), the lower rounded up and the upper
//! down to the digits kept: every number the grammar writes lies in the range as JSON Schema
//! compares (the range may lose its last fraction of a digit, never gain one).

use serde_json::Number;

/// Fraction digits a number may have when its bounds need no more.
pub(super) const FRACTION_DIGITS: u32 = 6;
/// Fraction digits at most, whatever the bounds.
const MAX_FRACTION_DIGITS: u32 = 18;
/// Integer digits of a `number` without bounds.
const NUMBER_DIGITS: u32 = 15;
/// Integer digits of an `integer` without bounds, and of any number at most.
pub(super) const MAX_INTEGER_DIGITS: u32 = 18;

/// One bound of a range: `minimum` or `exclusiveMinimum`, `maximum` or `exclusiveMaximum`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Limit<'s> {
    /// The keyword's value.
    pub value: &'s Number,
    /// `exclusiveMinimum` / `exclusiveMaximum`.
    pub exclusive: bool,
}

/// The GBNF expression for the numbers in `[min, max]` (`integer`: whole numbers only), or why
/// none can be written.
pub(super) fn range(
    min: Option<Limit<'_>>,
    max: Option<Limit<'_>>,
    integer: bool,
) -> Result<String, String> {
    let digits = if integer {
        0
    } else {
        let needed = [min, max]
            .into_iter()
            .flatten()
            .map(|l| {
                let plain = Limit {
                    exclusive: false,
                    ..l
                };
                fraction_len(&text(plain, true))
            })
            .max()
            .unwrap_or(0);
        needed.clamp(FRACTION_DIGITS, MAX_FRACTION_DIGITS)
    };
    let int_digits = if integer {
        MAX_INTEGER_DIGITS
    } else {
        NUMBER_DIGITS
    };
    let unit = 10i128.pow(digits);
    let cap = 10i128.pow(int_digits) * unit - 1;
    let mut lo = -cap;
    let mut hi = cap;
    if let Some(l) = min {
        lo = lo.max(scaled(l, digits, true));
    }
    if let Some(l) = max {
        hi = hi.min(scaled(l, digits, false));
    }
    if lo > hi {
        return Err(format!(
            "no number of at most {int_digits} integer and {digits} fraction digits lies in the range"
        ));
    }
    let p = unit as u128;
    Ok(if lo >= 0 {
        nonnegative(lo as u128, hi as u128, p, digits)
    } else if hi < 0 {
        format!(
            "\"-\" {}",
            group(&nonnegative((-hi) as u128, (-lo) as u128, p, digits))
        )
    } else {
        // `-0` is left out: the smallest negative is one unit of the last digit.
        format!(
            "(\"-\" {} | {})",
            group(&nonnegative(1, (-lo) as u128, p, digits)),
            nonnegative(0, hi as u128, p, digits)
        )
    })
}

/// The bound as exact decimal text: an integer as written, a float by its shortest text; an
/// exclusive float by the next float past it (`lower`: above), so a number at or past that
/// text is past the bound as floats compare.
fn text(limit: Limit<'_>, lower: bool) -> String {
    if let Some(i) = limit.value.as_i64() {
        return i.to_string();
    }
    if let Some(u) = limit.value.as_u64() {
        return u.to_string();
    }
    let f = limit.value.as_f64().unwrap_or(0.0);
    let f = match (limit.exclusive, lower) {
        (false, _) => f,
        (true, true) => next_up(f),
        (true, false) => -next_up(-f),
    };
    // `Display` for f64 writes every digit, never an exponent.
    f.to_string()
}

/// The least float above `f` (`f64::next_up`, written out for the crate's minimum Rust).
fn next_up(f: f64) -> f64 {
    if f.is_nan() || f == f64::INFINITY {
        f
    } else if f == 0.0 {
        f64::from_bits(1)
    } else if f > 0.0 {
        f64::from_bits(f.to_bits() + 1)
    } else {
        f64::from_bits(f.to_bits() - 1)
    }
}

fn fraction_len(text: &str) -> u32 {
    text.split_once('.')
        .map_or(0, |(_, f)| f.len().min(u32::MAX as usize) as u32)
}

/// The bound in units of `10^-digits`, rounded inward (a lower bound up, an upper down); an
/// exclusive integer bound moves one unit inward. Saturates far outside any cap.
fn scaled(limit: Limit<'_>, digits: u32, lower: bool) -> i128 {
    const FAR: i128 = 10i128.pow(37);
    let text = text(limit, lower);
    let (negative, magnitude) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.as_str()),
    };
    let (int, frac) = magnitude.split_once('.').unwrap_or((magnitude, ""));
    let int = int.trim_start_matches('0');
    if int.len() > 20 {
        return if negative { -FAR } else { FAR };
    }
    let mut n: i128 = 0;
    for b in int.bytes() {
        n = n * 10 + i128::from(b - b'0');
    }
    let frac = frac.as_bytes();
    for i in 0..digits as usize {
        let d = frac.get(i).map_or(0, |b| b - b'0');
        n = n * 10 + i128::from(d);
    }
    let rest = frac
        .get(digits as usize..)
        .is_some_and(|r| r.iter().any(|&b| b != b'0'));
    // Rounded inward: up for a lower bound, down for an upper, whatever the sign.
    let value = match (negative, lower) {
        (false, true) => n + i128::from(rest),
        (false, false) => n,
        (true, true) => -n,
        (true, false) => -(n + i128::from(rest)),
    };
    let integral_exclusive =
        limit.exclusive && (limit.value.as_i64().is_some() || limit.value.as_u64().is_some());
    match (integral_exclusive, lower) {
        (true, true) => value + 1,
        (true, false) => value - 1,
        _ => value,
    }
}

/// Non-negative numbers from `a` to `b` (in units of `1/p`, `p = 10^digits`).
fn nonnegative(a: u128, b: u128, p: u128, digits: u32) -> String {
    let (ia, fa) = (a / p, a % p);
    let (ib, fb) = (b / p, b % p);
    let fa_digits = fraction_digits(fa, digits);
    let fb_digits = fraction_digits(fb, digits);
    if ia == ib {
        return join([
            literal_int(ia),
            fraction(digits, Some(&fa_digits), Some(&fb_digits)),
        ]);
    }
    let mut alternatives = Vec::new();
    let first_whole = if fa == 0 { ia } else { ia + 1 };
    let last_whole = if fb == p - 1 { ib } else { ib - 1 };
    if fa != 0 {
        alternatives.push(join([
            literal_int(ia),
            fraction(digits, Some(&fa_digits), None),
        ]));
    }
    if first_whole <= last_whole {
        alternatives.push(join([
            integers(first_whole, last_whole),
            fraction(digits, None, None),
        ]));
    }
    if fb != p - 1 {
        alternatives.push(join([
            literal_int(ib),
            fraction(digits, None, Some(&fb_digits)),
        ]));
    }
    alternatives_of(alternatives)
}

fn fraction_digits(f: u128, digits: u32) -> Vec<u8> {
    let mut out = vec![0u8; digits as usize];
    let mut f = f;
    for slot in out.iter_mut().rev() {
        *slot = (f % 10) as u8;
        f /= 10;
    }
    out
}

/// The optional `.ddd` part whose digits, padded with zeros, lie between `lo` and `hi` (each
/// as many digits as kept; `None`: no bound on that side).
fn fraction(digits: u32, lo: Option<&[u8]>, hi: Option<&[u8]>) -> String {
    match digits_between(digits as usize, lo, hi) {
        (true, None) => String::new(),
        (true, Some(rest)) => format!("(\".\" {})?", group(&rest)),
        (false, Some(rest)) => format!("\".\" {}", group(&rest)),
        (false, None) => String::new(),
    }
}

/// Digit strings of at most `len` digits whose value, padded with zeros to `len` digits, lies
/// between `lo` and `hi` (`len` digits each; `None`: no bound on that side): whether the empty
/// string does, and the expression for the non-empty ones.
fn digits_between(len: usize, lo: Option<&[u8]>, hi: Option<&[u8]>) -> (bool, Option<String>) {
    let lo = lo.filter(|l| l.iter().any(|&d| d != 0));
    let hi = hi.filter(|h| h.iter().any(|&d| d != 9));
    if len == 0 {
        return (true, None);
    }
    let empty = lo.is_none();
    if lo.is_none() && hi.is_none() {
        return (true, Some(repeat("[0-9]", 1, len)));
    }
    let first =
        |s: Option<&[u8]>, default: u8| s.and_then(|s| s.first().copied()).unwrap_or(default);
    let (dl, dh) = (first(lo, 0), first(hi, 9));
    let mut alternatives = Vec::new();
    if dl == dh {
        alternatives.push(join([
            digit(dl),
            optional(digits_between(len - 1, tail(lo), tail(hi))),
        ]));
    } else {
        alternatives.push(join([
            digit(dl),
            optional(digits_between(len - 1, tail(lo), None)),
        ]));
        if dl + 1 < dh {
            alternatives.push(join([class(dl + 1, dh - 1), repeat("[0-9]", 0, len - 1)]));
        }
        alternatives.push(join([
            digit(dh),
            optional(digits_between(len - 1, None, tail(hi))),
        ]));
    }
    (empty, Some(alternatives_of(alternatives)))
}

/// The rest of a digit string after its first digit, as the caller's expression: optional when
/// the empty rest is allowed.
fn tail(s: Option<&[u8]>) -> Option<&[u8]> {
    s.map(|s| s.get(1..).unwrap_or(&[]))
}

fn optional(part: (bool, Option<String>)) -> String {
    match part {
        (_, None) => String::new(),
        (true, Some(rest)) => format!("{}?", group(&rest)),
        (false, Some(rest)) => group(&rest),
    }
}

/// Whole numbers from `x` to `y`, written without leading zeros.
fn integers(x: u128, y: u128) -> String {
    let mut alternatives = Vec::new();
    let (lx, ly) = (x.to_string().len(), y.to_string().len());
    for len in lx..=ly {
        let smallest = if len == 1 {
            0
        } else {
            10u128.pow(len as u32 - 1)
        };
        let largest = 10u128.pow(len as u32) - 1;
        let (a, b) = (x.max(smallest), y.min(largest));
        if a <= b {
            alternatives.push(same_length(
                a.to_string().as_bytes(),
                b.to_string().as_bytes(),
            ));
        }
    }
    alternatives_of(alternatives)
}

/// Digit strings of one length from `xs` to `ys` (ASCII digits, same length).
fn same_length(xs: &[u8], ys: &[u8]) -> String {
    let (Some(&x0), Some(&y0)) = (xs.first(), ys.first()) else {
        return String::new();
    };
    let (x0, y0) = (x0 - b'0', y0 - b'0');
    let (xr, yr) = (xs.get(1..).unwrap_or(&[]), ys.get(1..).unwrap_or(&[]));
    let n = xr.len();
    if x0 == y0 {
        return join([digit(x0), same_length(xr, yr)]);
    }
    let zeros = xr.iter().all(|&d| d == b'0');
    let nines = yr.iter().all(|&d| d == b'9');
    let mut alternatives = Vec::new();
    let low = if zeros { x0 } else { x0 + 1 };
    let high = if nines { y0 } else { y0 - 1 };
    if !zeros {
        let top = vec![b'9'; n];
        alternatives.push(join([digit(x0), same_length(xr, &top)]));
    }
    if low <= high {
        alternatives.push(join([class(low, high), repeat("[0-9]", n, n)]));
    }
    if !nines {
        let bottom = vec![b'0'; n];
        alternatives.push(join([digit(y0), same_length(&bottom, yr)]));
    }
    alternatives_of(alternatives)
}

fn literal_int(n: u128) -> String {
    format!("\"{n}\"")
}

fn digit(d: u8) -> String {
    format!("\"{d}\"")
}

fn class(a: u8, b: u8) -> String {
    if a == b {
        digit(a)
    } else {
        format!("[{a}-{b}]")
    }
}

/// `item` `min` to `max` times.
pub(super) fn repeat(item: &str, min: usize, max: usize) -> String {
    match (min, max) {
        (_, 0) => String::new(),
        (1, 1) => item.to_owned(),
        (0, 1) => format!("{item}?"),
        (min, max) if min == max => format!("{item}{{{min}}}"),
        (min, max) => format!("{item}{{{min},{max}}}"),
    }
}

fn join<const N: usize>(parts: [String; N]) -> String {
    let parts: Vec<String> = parts.into_iter().filter(|p| !p.is_empty()).collect();
    parts.join(" ")
}

fn alternatives_of(alternatives: Vec<String>) -> String {
    match alternatives.len() {
        0 => String::new(),
        1 => alternatives.into_iter().next().unwrap_or_default(),
        _ => format!("({})", alternatives.join(" | ")),
    }
}

/// `expr` as one unit for a sequence or a repetition.
pub(super) fn group(expr: &str) -> String {
    let atom = !expr.contains([' ', '|'])
        && !expr.ends_with(['?', '*', '+', '}'])
        && (expr.starts_with('[')
            || expr.starts_with('"')
            || expr.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'));
    if atom || (expr.starts_with('(') && balanced_group(expr)) {
        expr.to_owned()
    } else {
        format!("({expr})")
    }
}

/// Whether `expr` is one parenthesised group from its first character to its last.
fn balanced_group(expr: &str) -> bool {
    let mut depth = 0usize;
    let mut in_literal = false;
    let mut in_class = false;
    let mut escaped = false;
    let bytes = expr.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if escaped {
            escaped = false;
            continue;
        }
        match b {
            b'\\' => escaped = true,
            b'"' if !in_class => in_literal = !in_literal,
            b'[' if !in_literal => in_class = true,
            b']' if !in_literal => in_class = false,
            b'(' if !in_literal && !in_class => depth += 1,
            b')' if !in_literal && !in_class => {
                depth = depth.saturating_sub(1);
                if depth == 0 && i + 1 != bytes.len() {
                    return false;
                }
            }
            _ => {}
        }
    }
    depth == 0
}
