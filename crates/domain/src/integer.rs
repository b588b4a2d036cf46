//! Integers as JSON Schema reads them: a number with no fractional part is an integer,
//! however it is written (`2095`, `2095.0`, `2.095e3`). The body reader (`kind::Int`) and
//! the query reader (`query::QInt`) share this, so a body and a query string accept the
//! same integers, and an integer beyond the 64-bit range is told apart from a non-integer
//! (out of range, not of the wrong type).

/// What the text of a number is as an integer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Integer {
    /// An integer of the 64-bit range.
    Fits(i64),
    /// An integer beyond the 64-bit range.
    Huge,
    /// Not an integer: a fraction, or not a number at all.
    Not,
}

/// Reads the text of a decimal number (`2095`, `2095.0`, `2.095e3`, with an optional
/// sign) as JSON Schema reads a number: an integer when it has no fractional part.
pub fn integer_text(s: &str) -> Integer {
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    let (negative, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let (mantissa, exponent) = match body.split_once(['e', 'E']) {
        Some((m, e)) => {
            let unsigned = e.strip_prefix(['+', '-']).unwrap_or(e);
            if !digits(unsigned) {
                return Integer::Not;
            }
            // An exponent too long for i64 is still a number: saturate.
            let saturated = if e.starts_with('-') {
                i64::MIN
            } else {
                i64::MAX
            };
            (m, e.parse::<i64>().unwrap_or(saturated))
        }
        None => (body, 0),
    };
    let (int, frac) = match mantissa.split_once('.') {
        Some((i, f)) if digits(f) => (i, f),
        Some(_) => return Integer::Not,
        None => (mantissa, ""),
    };
    if !digits(int) {
        return Integer::Not;
    }
    // The value is `significant * 10^shift`.
    let all = format!("{int}{frac}");
    let significant = all.trim_start_matches('0');
    let trimmed = significant.trim_end_matches('0');
    if trimmed.is_empty() {
        return Integer::Fits(0);
    }
    let shift = exponent
        .saturating_sub(frac.len() as i64)
        .saturating_add((significant.len() - trimmed.len()) as i64);
    if shift < 0 {
        return Integer::Not;
    }
    if (trimmed.len() as i64).saturating_add(shift) > 19 {
        return Integer::Huge;
    }
    // At most 19 digits: fits in an i128 with room to spare.
    let magnitude = trimmed.parse::<i128>().unwrap_or(i128::MAX) * 10i128.pow(shift as u32);
    let value = if negative { -magnitude } else { magnitude };
    i64::try_from(value).map_or(Integer::Huge, Integer::Fits)
}

#[cfg(test)]
mod tests {
    use super::{Integer::*, *};

    #[test]
    fn integer_text_reads_as_json_schema_does() {
        for (text, read) in [
            ("0", Fits(0)),
            ("-0", Fits(0)),
            ("0.000", Fits(0)),
            ("+7", Fits(7)),
            ("007", Fits(7)),
            ("2095.0", Fits(2095)),
            ("2.095e3", Fits(2095)),
            ("2095000e-3", Fits(2095)),
            ("1E2", Fits(100)),
            ("-9223372036854775808", Fits(i64::MIN)),
            ("9223372036854775807", Fits(i64::MAX)),
            ("9223372036854775808", Huge),
            ("-9223372036854775809", Huge),
            ("1e19", Huge),
            ("1e99999999999999999999", Huge),
            ("2.5", Not),
            ("25e-1", Not),
            ("1e-99999999999999999999", Not),
            ("", Not),
            ("-", Not),
            ("1.", Not),
            (".5", Not),
            ("1e", Not),
            ("0x10", Not),
            (" 1", Not),
            ("one", Not),
        ] {
            assert_eq!(integer_text(text), read, "{text:?}");
        }
    }
}
