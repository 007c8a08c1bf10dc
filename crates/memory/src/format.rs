//! Text helpers with chrome-devtools-mcp 1.11.0's exact output: kB sizes (`1.2 kB` with a
//! no-break space, en-US grouping), truncated names, pagination lines.

/// The reference's default for `maxNameLength`.
pub const MAX_NAME_LENGTH: usize = 100;

/// `formatBytesToKb`: one decimal below 100 kB, whole kB (grouped) from there; rounding half
/// away from zero on the exact decimal value, as `Intl.NumberFormat` does.
pub fn kb(bytes: i64) -> String {
    let negative = bytes < 0;
    let magnitude = bytes.unsigned_abs();
    let sign = if negative { "-" } else { "" };
    if negative || magnitude < 100_000 {
        // Tenths of a kB.
        let tenths = (magnitude + 50) / 100;
        return format!("{sign}{}.{}\u{a0}kB", group(tenths / 10), tenths % 10);
    }
    let whole = (magnitude + 500) / 1000;
    format!("{sign}{}\u{a0}kB", group(whole))
}

pub fn kb_u(bytes: u64) -> String {
    kb(i64::try_from(bytes).unwrap_or(i64::MAX))
}

/// With a `+` for growth, as the diff lines print sizes.
pub fn signed_kb(bytes: i64) -> String {
    if bytes > 0 {
        format!("+{}", kb(bytes))
    } else {
        kb(bytes)
    }
}

pub fn signed_count(count: i64) -> String {
    if count > 0 {
        format!("+{count}")
    } else {
        count.to_string()
    }
}

fn group(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A number as JavaScript prints it (integers without a fraction).
pub fn js_number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e21 {
        format!("{}", value as i64)
    } else {
        format!("{value}")
    }
}

/// Cuts `value` to `max` UTF-16 units, adding `...` when cut.
pub fn truncate(value: &str, max: usize) -> String {
    let mut units = 0;
    for (at, c) in value.char_indices() {
        units += c.len_utf16();
        if units > max {
            return format!("{}...", &value[..at]);
        }
    }
    value.to_string()
}

/// A name on one line: truncated, line breaks escaped.
pub fn name(value: &str, max: usize) -> String {
    truncate(value, max)
        .replace('\r', "\\r")
        .replace('\n', "\\n")
}

/// Which slice of a list a page shows, and the lines that say so.
pub struct Page {
    pub start: usize,
    pub end: usize,
    pub info: Vec<String>,
}

/// The reference's pagination: everything unless a page index or size is given (size 20 by
/// default); an out-of-range page falls back to the first with a note.
pub fn paginate(total: usize, page_idx: Option<u64>, page_size: Option<u64>) -> Page {
    let mut info = Vec::new();
    let (start, end, current, pages, has_next, has_previous) =
        if page_idx.is_none() && page_size.is_none() {
            (0, total, 0u64, 1u64, false, false)
        } else {
            let size = page_size.unwrap_or(20).max(1);
            let pages = (total as u64).div_ceil(size).max(1);
            let (current, invalid) = match page_idx {
                None => (0, false),
                Some(idx) if idx >= pages => (0, true),
                Some(idx) => (idx, false),
            };
            if invalid {
                info.push("Invalid page number provided. Showing first page.".to_string());
            }
            let start = (current.saturating_mul(size)).min(total as u64) as usize;
            let end = (start as u64 + size).min(total as u64) as usize;
            (start, end, current, pages, current + 1 < pages, current > 0)
        };
    let shown_start = if total == 0 { 0 } else { start + 1 };
    info.push(format!(
        "Showing {shown_start}-{end} of {total} (Page {} of {pages}).",
        current + 1
    ));
    if has_next {
        info.push(format!("Next page: {}", current + 1));
    }
    if has_previous {
        info.push(format!("Previous page: {}", current - 1));
    }
    Page { start, end, info }
}

/// `parseByteSize`: `1024`, `1.5GB`, `500KiB` (decimal and binary units).
pub fn parse_byte_size(value: &str) -> Result<u64, String> {
    let trimmed = value.trim();
    if trimmed.is_empty() {
        return Err(format!("Invalid byte size: \"{value}\""));
    }
    let digits_end = trimmed
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(trimmed.len());
    let (number, rest) = trimmed.split_at(digits_end);
    let unit = rest.trim_start();
    let number_ok = !number.is_empty()
        && !number.starts_with('.')
        && !number.ends_with('.')
        && number.matches('.').count() <= 1;
    if !number_ok || !unit.chars().all(|c| c.is_ascii_alphabetic()) {
        return Err(format!(
            "Invalid byte size format: \"{value}\". Expected a number or format like \"1024\", \"1M\", \"1MB\", \"1G\", \"1GB\"."
        ));
    }
    let amount: f64 = number
        .parse()
        .map_err(|_| format!("Invalid byte size: \"{value}\""))?;
    let multiplier: f64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" | "byte" | "bytes" => 1.0,
        "k" | "kb" => 1e3,
        "kib" => 1024.0,
        "m" | "mb" => 1e6,
        "mib" => 1024.0 * 1024.0,
        "g" | "gb" => 1e9,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        "t" | "tb" => 1e12,
        "tib" => 1024.0f64.powi(4),
        _ => {
            return Err(format!(
                "Unknown unit \"{unit}\" in \"{value}\". Supported units: B, KB, KiB, MB, MiB, GB, GiB, TB, TiB."
            ));
        }
    };
    let bytes = (amount * multiplier + 0.5).floor();
    if !bytes.is_finite() {
        return Err(format!("Invalid byte size: \"{value}\""));
    }
    Ok(bytes as u64)
}

/// `parseByteSizeRange`: `1MB` (a minimum), `1MB-2MB`, `-1MB`, `1MB-`; inclusive.
pub fn parse_byte_size_range(value: &str) -> Result<(u64, Option<u64>), String> {
    let trimmed = value.trim();
    if !trimmed.contains('-') {
        return Ok((parse_byte_size(trimmed)?, None));
    }
    let parts: Vec<&str> = trimmed.split('-').collect();
    if parts.len() != 2 {
        return Err(format!(
            "Invalid byte size range: \"{value}\". Expected a size or range like \"1MB\", \"1MB-2MB\", \"-1MB\", or \"1MB-\"."
        ));
    }
    let (min_text, max_text) = (parts[0].trim(), parts[1].trim());
    if min_text.is_empty() && max_text.is_empty() {
        return Err(format!(
            "Invalid byte size range: \"{value}\". At least one bound is required."
        ));
    }
    let min = if min_text.is_empty() {
        0
    } else {
        parse_byte_size(min_text)?
    };
    let max = if max_text.is_empty() {
        None
    } else {
        Some(parse_byte_size(max_text)?)
    };
    if max.is_some_and(|max| min > max) {
        return Err(format!(
            "Invalid byte size range: \"{value}\". The lower bound must not exceed the upper bound."
        ));
    }
    Ok((min, max))
}

#[cfg(test)]
mod tests {
    #[test]
    fn byte_ranges() {
        assert_eq!(parse_byte_size_range("10KB"), Ok((10_000, None)));
        assert_eq!(
            parse_byte_size_range("1MB-2MiB"),
            Ok((1_000_000, Some(2_097_152)))
        );
        assert_eq!(parse_byte_size_range("-1.5k"), Ok((0, Some(1500))));
        assert_eq!(parse_byte_size_range("1GB-"), Ok((1_000_000_000, None)));
        assert!(
            parse_byte_size_range("-")
                .expect_err("no bound")
                .contains("At least one bound")
        );
        assert!(
            parse_byte_size_range("2MB-1MB")
                .expect_err("reversed")
                .contains("lower bound")
        );
        assert!(
            parse_byte_size_range("1XB")
                .expect_err("unit")
                .contains("Unknown unit")
        );
        assert!(
            parse_byte_size_range("abc")
                .expect_err("format")
                .contains("Invalid byte size format")
        );
    }

    use super::*;

    #[test]
    fn kilobytes_like_intl() {
        assert_eq!(kb(0), "0.0\u{a0}kB");
        assert_eq!(kb(1050), "1.1\u{a0}kB");
        assert_eq!(kb(1249), "1.2\u{a0}kB");
        assert_eq!(kb(99_999), "100.0\u{a0}kB");
        assert_eq!(kb(100_000), "100\u{a0}kB");
        assert_eq!(kb(1_234_567_500), "1,234,568\u{a0}kB");
        assert_eq!(kb(-40), "-0.0\u{a0}kB");
        assert_eq!(kb(-1250), "-1.3\u{a0}kB");
        assert_eq!(kb(-250_000), "-250.0\u{a0}kB");
    }

    #[test]
    fn names_are_cut_in_utf16_units() {
        assert_eq!(name("abcdef", 3), "abc...");
        assert_eq!(name("a\nb", 100), "a\\nb");
        assert_eq!(truncate("😀😀", 2), "😀...");
    }

    #[test]
    fn pages() {
        let page = paginate(45, Some(1), Some(20));
        assert_eq!((page.start, page.end), (20, 40));
        assert_eq!(
            page.info,
            vec![
                "Showing 21-40 of 45 (Page 2 of 3).",
                "Next page: 2",
                "Previous page: 0"
            ]
        );
        let page = paginate(5, Some(9), None);
        assert_eq!(
            page.info[0],
            "Invalid page number provided. Showing first page."
        );
        assert_eq!(
            paginate(0, None, None).info,
            vec!["Showing 0-0 of 0 (Page 1 of 1)."]
        );
    }
}
