//! Byte tables built at compile time: a scan looks each byte up once where it would compare it
//! with several. The one way the readers build them.

/// The table of the bytes in `set`.
pub(crate) const fn of(set: &[u8]) -> [bool; 256] {
    let mut table = [false; 256];
    let mut i = 0;
    while i < set.len() {
        table[set[i] as usize] = true;
        i += 1;
    }
    table
}

/// The table of the bytes a JSON string holds as themselves (any but a control character, a
/// quote or a backslash), less those in `also`.
pub(crate) const fn plain_in_string(also: &[u8]) -> [bool; 256] {
    let mut table = [true; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = false;
        b += 1;
    }
    table[b'"' as usize] = false;
    table[b'\\' as usize] = false;
    let mut i = 0;
    while i < also.len() {
        table[also[i] as usize] = false;
        i += 1;
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tables_hold_what_they_say() {
        let set = of(b"\"-09");
        for b in 0..=255u8 {
            assert_eq!(
                set[usize::from(b)],
                matches!(b, b'"' | b'-' | b'0' | b'9'),
                "{b}"
            );
            let plain = plain_in_string(b"'{");
            let expected = b >= 0x20 && !matches!(b, b'"' | b'\\' | b'\'' | b'{');
            assert_eq!(plain[usize::from(b)], expected, "{b}");
        }
    }
}
