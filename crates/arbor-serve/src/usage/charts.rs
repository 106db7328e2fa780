//! The usage page's charts, written on the server as SVG: a stacked bar chart (upright for a
//! time series, lying for categories such as models and projects) and a heatmap grid. No
//! script and no style attribute: colours come from classes the page's stylesheet
//! (`usage.css`) paints from CSS variables, so the charts follow the light and dark schemes
//! and print. Every bar and cell carries its numbers in `data-` attributes and a `<title>`
//! (shown on hover), every text is escaped ([`crate::layout::esc`]).
use crate::layout::esc;
use std::fmt::Write as _;

/// One series of a stacked bar chart: its name (in the legend and the hover text) and the
/// class that paints it (`s-NAME` in `usage.css`).
#[derive(Debug, Clone, Copy)]
pub struct Series {
    /// Its name.
    pub name: &'static str,
    /// Its class.
    pub class: &'static str,
}

/// One bar: its label and one value per series.
#[derive(Debug, Clone)]
pub struct Bar {
    /// The label (escaped here).
    pub label: String,
    /// The values, in the order of the series.
    pub values: Vec<f64>,
}

/// What the numbers are, for the axis and the hover text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Dollars.
    Dollars,
    /// Tokens.
    Tokens,
}

impl Unit {
    /// `v` as a person reads it: `$1.23`, `12.3K`, `4.5M`.
    pub fn show(self, v: f64) -> String {
        match self {
            Unit::Dollars if v.abs() >= 1000.0 => format!("${}", short(v)),
            Unit::Dollars if v.abs() >= 10.0 => format!("${v:.0}"),
            Unit::Dollars => format!("${v:.2}"),
            Unit::Tokens => short(v),
        }
    }
}

/// A number in a few characters: `950`, `12.3K`, `4.5M`, `7.0B`, `1.2T`.
pub fn short(v: f64) -> String {
    let a = v.abs();
    let (d, s) = if a >= 1e12 {
        (1e12, "T")
    } else if a >= 1e9 {
        (1e9, "B")
    } else if a >= 1e6 {
        (1e6, "M")
    } else if a >= 1e3 {
        (1e3, "K")
    } else {
        return if v.fract() == 0.0 {
            format!("{v:.0}")
        } else {
            format!("{v:.2}")
        };
    };
    format!("{:.1}{s}", v / d)
}

/// The top of the value axis over `max`: 1, 2 or 5 times a power of ten, at or above it (1 for
/// nothing, so that an empty chart still has an axis).
pub fn nice_max(max: f64) -> f64 {
    if !max.is_finite() || max <= 0.0 {
        return 1.0;
    }
    let p = 10f64.powf(max.log10().floor());
    for m in [1.0, 2.0, 5.0, 10.0] {
        if m * p >= max {
            return m * p;
        }
    }
    10.0 * p
}

/// A stacked bar chart.
#[derive(Debug, Clone, Copy)]
pub struct BarChart<'a> {
    /// The chart's name, for `aria-label` and ids (escaped here).
    pub title: &'a str,
    /// What the values are.
    pub unit: Unit,
    /// The series stacked in each bar.
    pub series: &'a [Series],
    /// The bars, in order.
    pub bars: &'a [Bar],
    /// Bars lying (categories, labels on the left) rather than upright (a time series).
    pub lying: bool,
}

const W: f64 = 760.0;

/// The `data-` attributes and `<title>` of one stacked segment.
fn segment(out: &mut String, c: &BarChart<'_>, b: &Bar, k: usize, rect: (f64, f64, f64, f64)) {
    let s = &c.series[k];
    // Not a number is drawn, told and carried as nothing.
    let finite = |v: f64| if v.is_finite() { v } else { 0.0 };
    let v = finite(b.values.get(k).copied().unwrap_or(0.0));
    let total: f64 = b.values.iter().copied().map(finite).sum();
    let _ = write!(
        out,
        "<rect class=\"bar {}\" x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" data-group=\"{}\" data-series=\"{}\" data-value=\"{}\"><title>{}: {} {} (of {})</title></rect>",
        s.class,
        rect.0,
        rect.1,
        rect.2.max(0.0),
        rect.3.max(0.0),
        esc(&b.label),
        s.name,
        v,
        esc(&b.label),
        c.unit.show(v),
        s.name,
        c.unit.show(total),
    );
}

/// The legend: a swatch and name per series.
fn legend(out: &mut String, series: &[Series], y: f64) {
    let mut x = 0.0;
    for s in series {
        let _ = write!(
            out,
            "<rect class=\"swatch {}\" x=\"{x:.0}\" y=\"{:.0}\" width=\"10\" height=\"10\"/><text class=\"legend\" x=\"{:.0}\" y=\"{:.0}\">{}</text>",
            s.class,
            y - 9.0,
            x + 14.0,
            y,
            esc(s.name)
        );
        x += 24.0 + 7.0 * s.name.len() as f64;
    }
}

/// `text` cut to `n` characters (an ellipsis at the start: a path's end tells it apart).
fn cut(text: &str, n: usize) -> String {
    let count = text.chars().count();
    if count <= n {
        return text.to_string();
    }
    let tail: String = text.chars().skip(count - (n - 1)).collect();
    format!("…{tail}")
}

/// The chart as an `<svg>` element (`role="img"`, labelled), or a short note when there is
/// nothing to draw.
pub fn bars(c: &BarChart<'_>) -> String {
    let mut out = String::new();
    if c.bars.is_empty() {
        let _ = write!(
            out,
            "<svg class=\"chart empty\" viewBox=\"0 0 {W} 40\" role=\"img\" aria-label=\"{}: no data\"><text class=\"note\" x=\"0\" y=\"24\">No usage in this range.</text></svg>",
            esc(c.title)
        );
        return out;
    }
    let max = c
        .bars
        .iter()
        .map(|b| b.values.iter().filter(|v| v.is_finite()).sum::<f64>())
        .fold(0.0, f64::max);
    let top = nice_max(max);
    let ticks = 4;
    if c.lying {
        let label_w = 210.0;
        let plot_w = W - label_w - 20.0;
        let row = 22.0;
        let h = 30.0 + row * c.bars.len() as f64 + 24.0;
        let _ = write!(
            out,
            "<svg class=\"chart lying\" viewBox=\"0 0 {W} {h:.0}\" role=\"img\" aria-label=\"{}\" data-unit=\"{}\">",
            esc(c.title),
            if c.unit == Unit::Dollars { "dollars" } else { "tokens" }
        );
        legend(&mut out, c.series, 12.0);
        let y0 = 24.0;
        for t in 0..=ticks {
            let v = top * t as f64 / ticks as f64;
            let x = label_w + plot_w * t as f64 / ticks as f64;
            let _ = write!(
                out,
                "<line class=\"grid\" x1=\"{x:.1}\" y1=\"{y0}\" x2=\"{x:.1}\" y2=\"{:.1}\"/><text class=\"tick\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                h - 20.0,
                h - 6.0,
                esc(&c.unit.show(v))
            );
        }
        for (i, b) in c.bars.iter().enumerate() {
            let y = y0 + 4.0 + row * i as f64;
            let _ = write!(
                out,
                "<g class=\"row\"><text class=\"label\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\"><title>{}</title>{}</text>",
                label_w - 6.0,
                y + 12.0,
                esc(&b.label),
                esc(&cut(&b.label, 30))
            );
            let mut x = label_w;
            for k in 0..c.series.len() {
                let v = b.values.get(k).copied().unwrap_or(0.0);
                let w = if v.is_finite() { plot_w * v / top } else { 0.0 };
                segment(&mut out, c, b, k, (x, y, w, row - 6.0));
                x += w.max(0.0);
            }
            out.push_str("</g>");
        }
    } else {
        let left = 64.0;
        let plot_w = W - left - 10.0;
        let plot_h = 200.0;
        let y0 = 24.0;
        let h = y0 + plot_h + 44.0;
        let _ = write!(
            out,
            "<svg class=\"chart upright\" viewBox=\"0 0 {W} {h:.0}\" role=\"img\" aria-label=\"{}\" data-unit=\"{}\">",
            esc(c.title),
            if c.unit == Unit::Dollars { "dollars" } else { "tokens" }
        );
        legend(&mut out, c.series, 12.0);
        for t in 0..=ticks {
            let v = top * t as f64 / ticks as f64;
            let y = y0 + plot_h - plot_h * t as f64 / ticks as f64;
            let _ = write!(
                out,
                "<line class=\"grid\" x1=\"{left}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\"/><text class=\"tick\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                left + plot_w,
                left - 6.0,
                y + 4.0,
                esc(&c.unit.show(v))
            );
        }
        let n = c.bars.len() as f64;
        let slot = plot_w / n;
        let gap = (slot * 0.2).min(6.0);
        // A label every so many bars, so that labels (up to 10 characters, about 66 px) do
        // not touch.
        let every = ((72.0 / slot).ceil() as usize).max(1);
        for (i, b) in c.bars.iter().enumerate() {
            let x = left + slot * i as f64 + gap / 2.0;
            out.push_str("<g class=\"col\">");
            let mut y = y0 + plot_h;
            for k in 0..c.series.len() {
                let v = b.values.get(k).copied().unwrap_or(0.0);
                let bh = if v.is_finite() { plot_h * v / top } else { 0.0 };
                y -= bh.max(0.0);
                segment(&mut out, c, b, k, (x, y, slot - gap, bh));
            }
            if i % every == 0 {
                let _ = write!(
                    out,
                    "<text class=\"tick\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                    x + (slot - gap) / 2.0,
                    y0 + plot_h + 16.0,
                    esc(&cut(&b.label, 12))
                );
            }
            out.push_str("</g>");
        }
    }
    out.push_str("</svg>");
    out
}

/// A heatmap: `rows` × `cols` cells, each shaded by its value against the largest (classes
/// `h0` .. `h5`), with the cell's `hover` text.
#[derive(Debug, Clone, Copy)]
pub struct Heatmap<'a> {
    /// The chart's name, for `aria-label`.
    pub title: &'a str,
    /// The rows' labels (days of the week).
    pub rows: &'a [&'a str],
    /// The columns' labels (hours), shown every few.
    pub cols: &'a [String],
    /// The values, `values[row][col]`.
    pub values: &'a [Vec<u64>],
    /// A second number per cell told on hover and in a data attribute (sessions), when any.
    pub second: Option<(&'a str, &'a [Vec<u64>])>,
    /// What the values count (`turns`).
    pub counts: &'a str,
}

/// The heatmap as an `<svg>` element.
pub fn heatmap(m: &Heatmap<'_>) -> String {
    let mut out = String::new();
    let left = 44.0;
    let cell_w = ((W - left - 4.0) / m.cols.len().max(1) as f64).floor();
    let cell_h = 22.0;
    let top = 6.0;
    let h = top + cell_h * m.rows.len() as f64 + 22.0;
    let max = m.values.iter().flatten().copied().max().unwrap_or(0);
    let _ = write!(
        out,
        "<svg class=\"chart heat\" viewBox=\"0 0 {W} {h:.0}\" role=\"img\" aria-label=\"{}\">",
        esc(m.title)
    );
    for (r, label) in m.rows.iter().enumerate() {
        let y = top + cell_h * r as f64;
        let _ = write!(
            out,
            "<text class=\"label\" x=\"{:.0}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            left - 6.0,
            y + 15.0,
            esc(label)
        );
        for (k, col) in m.cols.iter().enumerate() {
            let v = m
                .values
                .get(r)
                .and_then(|row| row.get(k))
                .copied()
                .unwrap_or(0);
            // 0 for none, else 1..=5 by the share of the largest.
            let level = if v == 0 || max == 0 {
                0
            } else {
                1 + ((v as f64 / max as f64) * 4.0).round() as u64
            };
            let x = left + cell_w * k as f64;
            let (second, second_attr) = match m.second {
                Some((name, vals)) => {
                    let s = vals.get(r).and_then(|row| row.get(k)).copied().unwrap_or(0);
                    (
                        format!(", {s} {}", esc(name)),
                        format!(" data-{}=\"{s}\"", esc(name)),
                    )
                }
                None => (String::new(), String::new()),
            };
            let _ = write!(
                out,
                "<rect class=\"cell h{level}\" x=\"{x:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{:.1}\" data-row=\"{r}\" data-col=\"{k}\" data-value=\"{v}\"{second_attr}><title>{} {}: {v} {}{second}</title></rect>",
                cell_w - 2.0,
                cell_h - 2.0,
                esc(label),
                esc(col),
                esc(m.counts)
            );
        }
    }
    let every = (m.cols.len() / 12).max(1);
    for (k, col) in m.cols.iter().enumerate().step_by(every) {
        let _ = write!(
            out,
            "<text class=\"tick\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            left + cell_w * k as f64 + cell_w / 2.0,
            h - 6.0,
            esc(col)
        );
    }
    out.push_str("</svg>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO: [Series; 2] = [
        Series {
            name: "a",
            class: "s-path",
        },
        Series {
            name: "b",
            class: "s-other",
        },
    ];

    fn chart(bars: &[Bar], lying: bool) -> String {
        bars_of(bars, lying, "Cost by day")
    }

    fn bars_of(bars: &[Bar], lying: bool, title: &str) -> String {
        super::bars(&BarChart {
            title,
            unit: Unit::Dollars,
            series: &TWO,
            bars,
            lying,
        })
    }

    fn bar(label: &str, a: f64, b: f64) -> Bar {
        Bar {
            label: label.into(),
            values: vec![a, b],
        }
    }

    /// The number after `attr="` in the first element holding `anchor`.
    fn attr_of(svg: &str, anchor: &str, attr: &str) -> f64 {
        let at = svg
            .find(anchor)
            .unwrap_or_else(|| panic!("{anchor} in {svg}"));
        let start = svg[..at].rfind('<').unwrap();
        let el = &svg[start..at + svg[at..].find('>').unwrap()];
        let k = el.find(&format!(" {attr}=\"")).unwrap() + attr.len() + 3;
        el[k..k + el[k..].find('"').unwrap()].parse().unwrap()
    }

    #[test]
    fn nice_max_is_one_two_or_five_times_a_power_of_ten() {
        assert_eq!(nice_max(0.0), 1.0);
        assert_eq!(nice_max(-3.0), 1.0);
        assert_eq!(nice_max(f64::NAN), 1.0);
        assert_eq!(nice_max(0.3), 0.5);
        assert_eq!(nice_max(1.0), 1.0);
        assert_eq!(nice_max(1.2), 2.0);
        assert_eq!(nice_max(7.0), 10.0);
        assert_eq!(nice_max(4_200.0), 5_000.0);
        assert_eq!(nice_max(3.1e15), 5e15);
    }

    #[test]
    fn bars_scale_to_the_axis_and_stack() {
        // Largest total 8 → axis 10: a bar of 4 is 40% of the plot, stacked on its first part.
        let svg = chart(&[bar("d1", 4.0, 0.0), bar("d2", 6.0, 2.0)], false);
        let h1 = attr_of(&svg, "data-group=\"d1\" data-series=\"a\"", "height");
        let h2a = attr_of(&svg, "data-group=\"d2\" data-series=\"a\"", "height");
        let h2b = attr_of(&svg, "data-group=\"d2\" data-series=\"b\"", "height");
        assert_eq!(h1, 80.0, "4 of 10 on a 200 px plot");
        assert_eq!(h2a, 120.0);
        assert_eq!(h2b, 40.0);
        let ya = attr_of(&svg, "data-group=\"d2\" data-series=\"a\"", "y");
        let yb = attr_of(&svg, "data-group=\"d2\" data-series=\"b\"", "y");
        assert_eq!(yb + h2b, ya, "b sits on a");
        assert!(svg.contains(">$10</text>"), "the axis' top: {svg}");
        assert!(svg.contains("data-value=\"6\""));
        assert!(
            svg.contains("<title>d2: $6.00 a (of $8.00)</title>"),
            "{svg}"
        );
        assert!(svg.starts_with("<svg class=\"chart upright\""));
        assert!(svg.contains("role=\"img\" aria-label=\"Cost by day\""));
    }

    #[test]
    fn lying_bars_scale_their_width() {
        let svg = chart(&[bar("m", 5.0, 5.0)], true);
        assert!(svg.starts_with("<svg class=\"chart lying\""));
        let w = attr_of(&svg, "data-group=\"m\" data-series=\"a\"", "width");
        let plot = W - 210.0 - 20.0;
        assert!((w - plot / 2.0).abs() < 0.06, "{w}");
    }

    #[test]
    fn empty_data_says_so() {
        let svg = chart(&[], false);
        assert!(svg.contains("No usage in this range."), "{svg}");
        assert!(svg.contains("aria-label=\"Cost by day: no data\""));
        assert!(!svg.contains("<rect"));
        // All zero: an axis to 1 and bars of no height.
        let svg = chart(&[bar("d", 0.0, 0.0)], false);
        assert_eq!(attr_of(&svg, "data-series=\"a\"", "height"), 0.0);
    }

    #[test]
    fn one_point_and_huge_values() {
        let svg = chart(&[bar("only", 1e15, 0.0)], false);
        assert_eq!(attr_of(&svg, "data-series=\"a\"", "height"), 200.0);
        assert!(svg.contains("data-value=\"1000000000000000\""), "{svg}");
        assert!(svg.contains(">$1000.0T</text>"), "the axis' top: {svg}");
        // Not a number: drawn as nothing, never as NaN in an attribute.
        let svg = chart(
            &[bar("x", f64::NAN, 1.0), bar("y", f64::INFINITY, 1.0)],
            false,
        );
        assert!(!svg.contains("NaN") && !svg.contains("inf"), "{svg}");
    }

    #[test]
    fn labels_are_escaped_everywhere() {
        let evil = "<script>alert(\"x\")</script>&'";
        let svg = bars_of(&[bar(evil, 1.0, 0.0)], true, evil);
        assert!(!svg.contains("<script>"), "{svg}");
        assert!(svg.contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;"));
        let svg = bars_of(&[bar(evil, 1.0, 0.0)], false, evil);
        assert!(!svg.contains("<script>"), "{svg}");
        let svg = heatmap(&Heatmap {
            title: evil,
            rows: &[evil],
            cols: &[evil.to_string()],
            values: &[vec![3]],
            second: Some(("sessions", &[vec![1]])),
            counts: "turns",
        });
        assert!(!svg.contains("<script>"), "{svg}");
        assert!(
            svg.contains("data-value=\"3\" data-sessions=\"1\""),
            "{svg}"
        );
    }

    #[test]
    fn heatmap_shades_by_share_of_the_largest() {
        let values = vec![vec![0, 1, 2, 4], vec![0, 0, 0, 0]];
        let svg = heatmap(&Heatmap {
            title: "t",
            rows: &["Mon", "Tue"],
            cols: &["0".into(), "1".into(), "2".into(), "3".into()],
            values: &values,
            second: None,
            counts: "turns",
        });
        let class = |r: usize, c: usize| {
            let anchor = format!("data-row=\"{r}\" data-col=\"{c}\"");
            let at = svg.find(&anchor).unwrap();
            let start = svg[..at].rfind("class=\"").unwrap() + 7;
            svg[start..start + svg[start..].find('"').unwrap()].to_string()
        };
        assert_eq!(class(0, 0), "cell h0");
        assert_eq!(class(0, 1), "cell h2");
        assert_eq!(class(0, 2), "cell h3");
        assert_eq!(class(0, 3), "cell h5");
        assert_eq!(class(1, 3), "cell h0");
        // Nothing at all: every cell empty, no division by zero.
        let zero = vec![vec![0u64; 24]; 7];
        let cols: Vec<String> = (0..24).map(|h| h.to_string()).collect();
        let svg = heatmap(&Heatmap {
            title: "t",
            rows: &["a", "b", "c", "d", "e", "f", "g"],
            cols: &cols,
            values: &zero,
            second: None,
            counts: "turns",
        });
        assert_eq!(svg.matches("cell h0").count(), 7 * 24);
    }

    #[test]
    fn short_numbers() {
        assert_eq!(short(950.0), "950");
        assert_eq!(short(0.25), "0.25");
        assert_eq!(short(12_345.0), "12.3K");
        assert_eq!(short(4_500_000.0), "4.5M");
        assert_eq!(short(7e9), "7.0B");
        assert_eq!(Unit::Dollars.show(0.5), "$0.50");
        assert_eq!(Unit::Dollars.show(12.4), "$12");
        assert_eq!(Unit::Dollars.show(12_400.0), "$12.4K");
    }
}
