//! Number formatting exactly as the DevTools AI formatters print it (`UnitFormatters.ts`: en-US
//! `Intl.NumberFormat`, narrow units, a no-break space before the unit), so our summaries read
//! like the reference's.

/// The no-break space DevTools puts between a number and its unit.
const NBSP: char = '\u{a0}';

/// Milliseconds: whole numbers with thousands separators, one decimal below 1 ms
/// (`8 ms`, `1,434 ms`, `0.3 ms`).
pub(super) fn millis(ms: f64) -> String {
    if !ms.is_finite() || ms == f64::MAX {
        return "-".to_string();
    }
    let digits = if ms < 1.0 { 1 } else { 0 };
    format!("{}{NBSP}ms", number(ms, digits))
}

/// Microseconds: `μs` below 100 µs, else as milliseconds.
pub(super) fn micros(us: f64) -> String {
    if !us.is_finite() || us == f64::MAX {
        return "-".to_string();
    }
    if us < 100.0 {
        return format!("{}{NBSP}μs", number(us, 0));
    }
    millis(us / 1000.0)
}

/// Bytes: `B` below 1,000, then `kB` and `MB` with at most one decimal (`77.1 kB`).
pub(super) fn bytes(count: f64) -> String {
    if count < 1000.0 {
        return format!("{}{NBSP}B", number(count, 0));
    }
    let kilobytes = count / 1000.0;
    if kilobytes < 1000.0 {
        return format!("{}{NBSP}kB", number(kilobytes, 1));
    }
    format!("{}{NBSP}MB", number(kilobytes / 1000.0, 1))
}

/// A trace window as DevTools serialises it: `{min: 122410996889µs, max: 122416385853µs}`.
pub(super) fn bounds(min: f64, max: f64) -> String {
    format!("{{min: {}µs, max: {}µs}}", plain(min), plain(max))
}

/// A number as JavaScript's `String(n)` prints it: no trailing `.0` for whole values.
pub(super) fn plain(value: f64) -> String {
    format!("{value}")
}

/// `Math.round`, as the reference uses for whole-millisecond metrics (`129 ms`).
pub(super) fn round(value: f64) -> i64 {
    // Saturating float-to-int conversion; trace values are far inside i64.
    (value + 0.5).floor() as i64
}

/// `Number.prototype.toFixed`.
pub(super) fn fixed(value: f64, digits: usize) -> String {
    format!("{value:.digits$}")
}

/// en-US grouping with at most `digits` decimals, rounding half away from zero and dropping
/// trailing zeros (`minimumFractionDigits: 0`).
fn number(value: f64, digits: u32) -> String {
    let scale = 10f64.powi(digits as i32);
    let scaled = (value.abs() * scale).round();
    let whole = (scaled / scale).trunc();
    let fraction = scaled - whole * scale;
    let mut text = group(whole);
    if fraction > 0.0 {
        let decimals = format!("{:0width$}", fraction as u64, width = digits as usize);
        text.push('.');
        text.push_str(decimals.trim_end_matches('0'));
    }
    if value < 0.0 && scaled > 0.0 {
        text.insert(0, '-');
    }
    text
}

fn group(whole: f64) -> String {
    let digits = format!("{whole:.0}");
    let mut grouped = String::with_capacity(digits.len() + digits.len() / 3);
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    grouped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_the_devtools_unit_formatters() {
        assert_eq!(millis(7.939), "8\u{a0}ms");
        assert_eq!(millis(1434.2), "1,434\u{a0}ms");
        assert_eq!(millis(0.25), "0.3\u{a0}ms");
        assert_eq!(millis(0.0), "0\u{a0}ms");
        assert_eq!(micros(7939.0), "8\u{a0}ms");
        assert_eq!(micros(42.0), "42\u{a0}μs");
        assert_eq!(micros(73410.0), "73\u{a0}ms");
        assert_eq!(bytes(77_100.0), "77.1\u{a0}kB");
        assert_eq!(bytes(77_000.0), "77\u{a0}kB");
        assert_eq!(bytes(512.0), "512\u{a0}B");
        assert_eq!(bytes(2_350_000.0), "2.4\u{a0}MB");
        assert_eq!(
            bounds(122410996889.0, 122416385853.0),
            "{min: 122410996889µs, max: 122416385853µs}"
        );
        assert_eq!(round(128.5), 129);
        assert_eq!(fixed(0.0, 2), "0.00");
        assert_eq!(fixed(0.254, 4), "0.2540");
    }
}
