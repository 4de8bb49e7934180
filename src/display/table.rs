//! Pure renderers of a DataFrame as an HTML or plain-text table (head … tail, with dtypes).

use polars::prelude::{AnyValue, DataFrame};

/// Rows shown by default: the first and last `DEFAULT_MAX_ROWS / 2` of a longer frame.
pub const DEFAULT_MAX_ROWS: usize = 10;

/// Longest cell shown in full; longer strings are cut and end in `…`.
const MAX_CELL_CHARS: usize = 60;

/// Significant digits shown for floats.
const FLOAT_DIGITS: i32 = 6;

/// Escapes `&`, `<`, `>`, `"` and `'` for HTML text and attributes.
///
/// ```
/// assert_eq!(dp_mcmc::display::escape_html("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
/// ```
pub fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// Formats a float with [`FLOAT_DIGITS`] significant digits: plain notation between 1e-4 and
/// 1e9, scientific outside; integer-valued floats keep a `.0`.
pub(crate) fn format_float(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.into();
    }
    if x == 0.0 {
        return "0.0".into();
    }
    let magnitude = x.abs().log10().floor() as i32;
    if (-4..9).contains(&magnitude) {
        let decimals = (FLOAT_DIGITS - 1 - magnitude).clamp(1, 12) as usize;
        let s = format!("{x:.decimals$}");
        let trimmed = s.trim_end_matches('0');
        if trimmed.ends_with('.') {
            format!("{trimmed}0")
        } else {
            trimmed.to_string()
        }
    } else {
        let s = format!("{:.*e}", (FLOAT_DIGITS - 1) as usize, x);
        match s.split_once('e') {
            Some((mantissa, exp)) => {
                let m = mantissa.trim_end_matches('0').trim_end_matches('.');
                format!("{m}e{exp}")
            }
            None => s,
        }
    }
}

/// Formats one cell: strings without quotes, floats with 6 significant digits, `null` for
/// missing values; long strings are cut at 60 characters.
///
/// ```
/// use dp_mcmc::polars::prelude::AnyValue;
/// use dp_mcmc::display::format_value;
/// assert_eq!(format_value(&AnyValue::String("ADP")), "ADP");
/// assert_eq!(format_value(&AnyValue::Float64(1.0 / 3.0)), "0.333333");
/// assert_eq!(format_value(&AnyValue::Null), "null");
/// ```
pub fn format_value(v: &AnyValue<'_>) -> String {
    let s = match v {
        AnyValue::Null => "null".to_string(),
        AnyValue::String(s) => s.to_string(),
        AnyValue::StringOwned(s) => s.to_string(),
        AnyValue::Float64(x) => format_float(*x),
        AnyValue::Float32(x) => format_float(f64::from(*x)),
        other => other.to_string(),
    };
    if s.chars().count() > MAX_CELL_CHARS {
        let cut: String = s.chars().take(MAX_CELL_CHARS - 1).collect();
        format!("{cut}…")
    } else {
        s
    }
}

/// The rows to show: all of them, or the first and last `max_rows / 2` (at least one each).
/// `None` marks the elision between head and tail.
fn shown_rows(height: usize, max_rows: usize) -> Vec<Option<usize>> {
    if height <= max_rows.max(2) {
        return (0..height).map(Some).collect();
    }
    let half = (max_rows / 2).max(1);
    (0..half)
        .map(Some)
        .chain(std::iter::once(None))
        .chain((height - half..height).map(Some))
        .collect()
}

/// Header names, dtype names, and the shown cells (`None` = elision row).
type Cells = (Vec<String>, Vec<String>, Vec<Option<Vec<String>>>);

fn cells(df: &DataFrame, max_rows: usize) -> Cells {
    let columns = df.columns();
    let names = columns.iter().map(|c| c.name().to_string()).collect();
    let dtypes = columns.iter().map(|c| c.dtype().to_string()).collect();
    let rows = shown_rows(df.height(), max_rows)
        .into_iter()
        .map(|row| {
            row.map(|i| {
                columns
                    .iter()
                    .map(|c| match c.get(i) {
                        Ok(v) => format_value(&v),
                        // `i < height` by construction of `shown_rows`; keep the table
                        // readable rather than fail if polars disagrees.
                        Err(_) => "?".to_string(),
                    })
                    .collect()
            })
        })
        .collect();
    (names, dtypes, rows)
}

/// Renders `df` as an HTML table: escaped cells, the dtype under each column name, at most
/// `max_rows` rows (head, a `…` row, tail) and the shape as a caption.
///
/// ```
/// use dp_mcmc::polars::prelude::*;
/// # fn main() -> dp_mcmc::Result<()> {
/// let df = df!("k" => (0..100).collect::<Vec<i64>>())?;
/// let html = dp_mcmc::display::frame_to_html(&df, 4);
/// assert!(html.contains("<td>99</td>") && !html.contains("<td>50</td>"));
/// assert!(html.contains("shape: (100, 1)"));
/// # Ok(())
/// # }
/// ```
pub fn frame_to_html(df: &DataFrame, max_rows: usize) -> String {
    let (names, dtypes, rows) = cells(df, max_rows);
    let mut h = String::new();
    h.push_str("<div class=\"dp-mcmc-frame\">\n<table class=\"dataframe\" border=\"1\">\n");
    h.push_str(&format!(
        "<caption style=\"caption-side: bottom; text-align: left\">shape: ({}, {})</caption>\n",
        df.height(),
        df.width()
    ));
    h.push_str("<thead>\n<tr>");
    for name in &names {
        h.push_str(&format!("<th>{}</th>", escape_html(name)));
    }
    h.push_str("</tr>\n<tr>");
    for dtype in &dtypes {
        h.push_str(&format!(
            "<th style=\"font-weight: normal; font-style: italic\">{}</th>",
            escape_html(dtype)
        ));
    }
    h.push_str("</tr>\n</thead>\n<tbody>\n");
    for row in &rows {
        h.push_str("<tr>");
        match row {
            Some(values) => {
                for v in values {
                    h.push_str(&format!("<td>{}</td>", escape_html(v)));
                }
            }
            None => {
                for _ in &names {
                    h.push_str("<td>…</td>");
                }
            }
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</tbody>\n</table>\n</div>");
    h
}

/// Renders `df` as an aligned plain-text table: names, dtypes, a rule, at most `max_rows` rows
/// (head, a `…` row, tail), and the shape.
///
/// ```
/// use dp_mcmc::polars::prelude::*;
/// # fn main() -> dp_mcmc::Result<()> {
/// let df = df!("epsilon" => [0.5, 6.0], "iterations" => [3u64, 1817])?;
/// let text = dp_mcmc::display::frame_to_text(&df, 10);
/// assert!(text.contains("f64") && text.contains("1817") && text.ends_with("shape: (2, 2)"));
/// # Ok(())
/// # }
/// ```
pub fn frame_to_text(df: &DataFrame, max_rows: usize) -> String {
    let (names, dtypes, rows) = cells(df, max_rows);
    let width = |s: &str| s.chars().count();
    let mut widths: Vec<usize> = names
        .iter()
        .zip(&dtypes)
        .map(|(n, d)| width(n).max(width(d)).max(1))
        .collect();
    for values in rows.iter().flatten() {
        for (w, v) in widths.iter_mut().zip(values) {
            *w = (*w).max(width(v));
        }
    }
    let line = |cells: &[String]| -> String {
        cells
            .iter()
            .zip(&widths)
            .map(|(c, &w)| format!("{c:<w$}"))
            .collect::<Vec<_>>()
            .join(" | ")
            .trim_end()
            .to_string()
    };
    let mut out = vec![line(&names), line(&dtypes)];
    out.push(
        widths
            .iter()
            .map(|&w| "-".repeat(w))
            .collect::<Vec<_>>()
            .join("-+-"),
    );
    for row in &rows {
        match row {
            Some(values) => out.push(line(values)),
            None => out.push(line(&vec!["…".to_string(); names.len()])),
        }
    }
    out.push(format!("shape: ({}, {})", df.height(), df.width()));
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use polars::prelude::*;

    fn frame(n: usize) -> DataFrame {
        let eps: Vec<f64> = (0..n).map(|i| i as f64 * 0.5).collect();
        let its: Vec<u64> = (0..n as u64).map(|i| i * 10).collect();
        let method: Vec<String> = (0..n).map(|i| format!("m{i}")).collect();
        df!("epsilon" => eps, "iterations" => its, "method" => method)
            .expect("columns have equal length")
    }

    #[test]
    fn html_escapes_names_and_cells() {
        let df = df!("a<b>" => ["x & y", "<script>alert('hi')</script>"]).unwrap();
        let html = frame_to_html(&df, 10);
        assert!(html.contains("<th>a&lt;b&gt;</th>"));
        assert!(html.contains("<td>x &amp; y</td>"));
        assert!(html.contains("&lt;script&gt;alert(&#39;hi&#39;)&lt;/script&gt;"));
        assert!(!html.contains("<script>"));
    }

    #[test]
    fn html_shows_dtypes_and_shape() {
        let html = frame_to_html(&frame(3), 10);
        for dtype in ["f64", "u64", "str"] {
            assert!(html.contains(&format!("italic\">{dtype}</th>")), "{dtype}");
        }
        assert!(html.contains("shape: (3, 3)"));
        assert_eq!(html.matches("<tr>").count(), 2 + 3);
    }

    #[test]
    fn html_truncates_to_head_and_tail() {
        let html = frame_to_html(&frame(50), 6);
        // Head rows 0..3, one elision row, tail rows 47..50.
        for i in [0, 1, 2, 47, 48, 49] {
            assert!(html.contains(&format!("<td>m{i}</td>")), "row {i} missing");
        }
        for i in [3, 25, 46] {
            assert!(!html.contains(&format!("<td>m{i}</td>")), "row {i} shown");
        }
        assert_eq!(html.matches("<td>…</td>").count(), 3);
        assert_eq!(html.matches("<tr>").count(), 2 + 7);
        assert!(html.contains("shape: (50, 3)"));
    }

    #[test]
    fn no_truncation_at_the_limit() {
        let text = frame_to_text(&frame(10), 10);
        assert!(!text.contains('…'));
        assert!(text.contains("m9"));
        let text = frame_to_text(&frame(11), 10);
        assert!(text.contains('…'));
        assert!(!text.contains("m5 "));
    }

    #[test]
    fn text_is_aligned_with_dtypes() {
        let text = frame_to_text(&frame(2), 10);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "epsilon | iterations | method");
        assert_eq!(lines[1], "f64     | u64        | str");
        assert_eq!(lines[2], "--------+------------+-------");
        assert_eq!(lines[3], "0.0     | 0          | m0");
        assert_eq!(lines[4], "0.5     | 10         | m1");
        assert_eq!(lines[5], "shape: (2, 3)");
    }

    #[test]
    fn text_truncates_to_head_and_tail() {
        let text = frame_to_text(&frame(100), 4);
        let rows: Vec<&str> = text.lines().skip(3).collect();
        assert_eq!(rows.len(), 4 + 1 + 1, "{text}");
        assert!(rows[0].starts_with("0.0"));
        assert!(rows[2].starts_with('…'));
        assert!(rows[4].starts_with("49.5"));
        assert_eq!(rows[5], "shape: (100, 3)");
    }

    #[test]
    fn empty_frame_renders() {
        let df = frame(0);
        assert!(frame_to_html(&df, 10).contains("shape: (0, 3)"));
        assert!(frame_to_text(&df, 10).ends_with("shape: (0, 3)"));
    }

    #[test]
    fn floats_and_nulls() {
        assert_eq!(format_float(6.0), "6.0");
        assert_eq!(format_float(1234.56789), "1234.57");
        assert_eq!(format_float(0.00123456), "0.00123456");
        assert_eq!(format_float(-2.5e-7), "-2.5e-7");
        assert_eq!(format_float(3.0e12), "3e12");
        assert_eq!(format_float(f64::NAN), "NaN");
        assert_eq!(format_float(f64::NEG_INFINITY), "-inf");
        let s = Series::new("x".into(), [Some(1.5), None]);
        let df = DataFrame::new(2, vec![s.into()]).unwrap();
        assert!(frame_to_text(&df, 10).contains("null"));
    }

    #[test]
    fn long_strings_are_cut() {
        let long = "x".repeat(200);
        let shown = format_value(&AnyValue::String(&long));
        assert_eq!(shown.chars().count(), MAX_CELL_CHARS);
        assert!(shown.ends_with('…'));
    }
}
