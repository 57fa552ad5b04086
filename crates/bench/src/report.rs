//! What every benchmark prints and writes: an aligned text table, a CSV
//! file with one row per run (the `csv` crate), and a PNG chart (bars, or
//! lines over a linear or logarithmic axis).
//!
//! Charts are drawn with `plotters` into an in-memory RGB buffer and
//! encoded with the `png` crate. Text goes through plotters' `ab_glyph`
//! backend in DejaVu Sans, which the `dejavu` crate embeds in the binary:
//! the machines that run the benchmarks need no font files.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::OnceLock;

use plotters::prelude::*;

/// A text table whose columns are right-aligned to their widest cell.
pub struct Table {
    headers: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(headers: &[&str]) -> Table {
        Table { headers: headers.iter().map(|h| h.to_string()).collect(), rows: Vec::new() }
    }

    /// Adds a row; it must have one cell per header.
    pub fn push_row(&mut self, cells: Vec<String>) {
        assert_eq!(cells.len(), self.headers.len(), "a table row needs one cell per column");
        self.rows.push(cells);
    }

    pub fn render(&self) -> String {
        let mut widths: Vec<usize> = self.headers.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (width, cell) in widths.iter_mut().zip(row) {
                *width = (*width).max(cell.chars().count());
            }
        }
        let mut out = String::new();
        let mut line = |cells: &[String]| {
            let mut text = String::new();
            for (index, (cell, width)) in cells.iter().zip(&widths).enumerate() {
                if index > 0 {
                    text.push_str("  ");
                }
                let _ = write!(text, "{cell:>width$}");
            }
            out.push_str(text.trim_end());
            out.push('\n');
        };
        line(&self.headers);
        let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
        line(&rule);
        for row in &self.rows {
            line(row);
        }
        out
    }
}

/// Writes `headers` and `rows` as CSV (RFC 4180: a field is quoted only
/// when it holds a comma, a quote or a line break), replacing `path`.
pub fn write_csv(path: &Path, headers: &[&str], rows: &[Vec<String>]) -> Result<(), String> {
    let failed = |e: csv::Error| format!("writing CSV file {}: {e}", path.display());
    let mut writer = csv::WriterBuilder::new().terminator(csv::Terminator::Any(b'\n')).from_path(path).map_err(failed)?;
    writer.write_record(headers).map_err(failed)?;
    for row in rows {
        assert_eq!(row.len(), headers.len(), "a CSV row needs one field per column");
        writer.write_record(row).map_err(failed)?;
    }
    writer.flush().map_err(|e| format!("writing CSV file {}: {e}", path.display()))
}

/// One bar of a chart.
#[derive(Debug, Clone)]
pub struct Bar {
    pub label: String,
    pub value: f64,
}

const PLOT_WIDTH: u32 = 800;
const PLOT_HEIGHT: u32 = 480;
const MARGIN_LEFT: i32 = 90;
const MARGIN_RIGHT: i32 = 30;
const MARGIN_TOP: i32 = 60;
const MARGIN_BOTTOM: i32 = 60;
const BAR_COLOR: RGBColor = RGBColor(70, 120, 190);
const AXIS_COLOR: RGBColor = RGBColor(40, 40, 40);
const GRID_COLOR: RGBColor = RGBColor(225, 225, 225);
/// The family name the embedded font is registered under, and its size.
const FONT_FAMILY: &str = "sans-serif";
const FONT_PIXELS: u32 = 15;

/// Draws `bars`, each with its value above it, under `title` and writes
/// the chart to `path` as a PNG.
pub fn plot_bars(path: &Path, title: &str, bars: &[Bar]) -> Result<(), String> {
    if bars.is_empty() {
        return Err(format!("plot {}: nothing to plot", path.display()));
    }
    if let Some(bar) = bars.iter().find(|b| !b.value.is_finite() || b.value < 0.0) {
        return Err(format!("plot {}: bar {:?} has value {}, not a finite number ≥ 0", path.display(), bar.label, bar.value));
    }
    let mut pixels = vec![255u8; (PLOT_WIDTH * PLOT_HEIGHT * 3) as usize];
    // No plotters call below is expected to panic (the font is registered
    // first); the guard keeps a plotting bug from aborting a benchmark
    // whose numbers are already measured.
    let drawn = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| draw_bars(&mut pixels, title, bars)));
    match drawn {
        Ok(Ok(())) => {}
        Ok(Err(error)) => return Err(format!("plot {}: {error}", path.display())),
        Err(_) => return Err(format!("plot {}: the plotting library panicked; no chart written", path.display())),
    }
    write_png(path, &pixels)
}

fn draw_bars(pixels: &mut [u8], title: &str, bars: &[Bar]) -> Result<(), String> {
    register_font()?;
    let root = BitMapBackend::with_buffer(pixels, (PLOT_WIDTH, PLOT_HEIGHT)).into_drawing_area();
    let error = |e: DrawingAreaErrorKind<_>| e.to_string();
    root.fill(&WHITE).map_err(error)?;

    let (left, right) = (MARGIN_LEFT, PLOT_WIDTH as i32 - MARGIN_RIGHT);
    let (top, bottom) = (MARGIN_TOP, PLOT_HEIGHT as i32 - MARGIN_BOTTOM);
    let maximum = bars.iter().map(|b| b.value).fold(0.0, f64::max);
    let (step, ticks) = nice_ticks(maximum);
    let axis_max = step * ticks as f64;
    let y_of = |value: f64| bottom - ((value / axis_max) * (bottom - top) as f64).round() as i32;

    // Grid lines and y-axis labels.
    for tick in 0..=ticks {
        let value = step * tick as f64;
        let y = y_of(value);
        if tick > 0 {
            root.draw(&PathElement::new(vec![(left, y), (right, y)], GRID_COLOR.stroke_width(1))).map_err(error)?;
        }
        let label = format_tick(value);
        let x = left - 8 - text_width(&label);
        draw_text(&root, (x, y - 7), &label)?;
    }

    // Bars, their values and labels.
    let slot = (right - left) / bars.len() as i32;
    let bar_width = (slot * 3 / 5).max(2);
    for (index, bar) in bars.iter().enumerate() {
        let center = left + slot * index as i32 + slot / 2;
        let y = y_of(bar.value);
        root.draw(&Rectangle::new([(center - bar_width / 2, y), (center + bar_width / 2, bottom)], BAR_COLOR.filled())).map_err(error)?;
        let value = format!("{:.0}", bar.value);
        draw_text(&root, (center - text_width(&value) / 2, y - 20), &value)?;
        let label = fit_text(&bar.label, slot - 4);
        draw_text(&root, (center - text_width(&label) / 2, bottom + 14), &label)?;
    }
    // Axes and title.
    root.draw(&PathElement::new(vec![(left, top), (left, bottom), (right, bottom)], AXIS_COLOR.stroke_width(2))).map_err(error)?;
    let title = fit_text(title, PLOT_WIDTH as i32 - 20);
    draw_text(&root, ((PLOT_WIDTH as i32 - text_width(&title)) / 2, 18), &title)?;
    root.present().map_err(error)
}

/// How an axis maps values to pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    Linear,
    /// Powers of ten evenly spaced. Points with a value ≤ 0 on a log axis
    /// cannot be drawn and are left out.
    Log,
}

/// One line of a [`LineChart`]: its legend label and its (x, y) points,
/// joined in the order given.
#[derive(Debug, Clone)]
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

/// A chart of one or more lines over a shared x axis, e.g. latency
/// against transaction size for two settings.
#[derive(Debug, Clone)]
pub struct LineChart {
    pub title: String,
    pub x_label: String,
    /// Drawn above the y axis, where it needs no turning.
    pub y_label: String,
    pub x_scale: Scale,
    pub y_scale: Scale,
    /// Where the x axis is labelled and with what (e.g. 64 MiB as
    /// "64MiB"); the x axis spans these and every point.
    pub x_ticks: Vec<(f64, String)>,
    pub series: Vec<Series>,
}

impl Scale {
    fn can_draw(self, value: f64) -> bool {
        value.is_finite() && (self == Scale::Linear || value > 0.0)
    }
}

impl LineChart {
    fn is_drawable(&self, (x, y): (f64, f64)) -> bool {
        self.x_scale.can_draw(x) && self.y_scale.can_draw(y)
    }
}

/// Line colours, in series order (then repeated).
const SERIES_COLORS: [RGBColor; 4] = [BAR_COLOR, RGBColor(210, 90, 60), RGBColor(60, 150, 80), RGBColor(150, 90, 180)];

/// Draws `chart` and writes it to `path` as a PNG.
pub fn plot_lines(path: &Path, chart: &LineChart) -> Result<(), String> {
    let points: Vec<(f64, f64)> = chart.series.iter().flat_map(|s| s.points.iter().copied()).filter(|p| chart.is_drawable(*p)).collect();
    if points.is_empty() {
        return Err(format!("plot {}: nothing to plot", path.display()));
    }
    if let Some((x, _)) = chart.x_ticks.iter().find(|(x, _)| !chart.x_scale.can_draw(*x)) {
        return Err(format!("plot {}: x tick {x} cannot be drawn on this axis", path.display()));
    }
    let mut pixels = vec![255u8; (PLOT_WIDTH * PLOT_HEIGHT * 3) as usize];
    // As in `plot_bars`: a plotting bug must not abort a finished benchmark.
    let drawn = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| draw_lines(&mut pixels, chart, &points)));
    match drawn {
        Ok(Ok(())) => {}
        Ok(Err(error)) => return Err(format!("plot {}: {error}", path.display())),
        Err(_) => return Err(format!("plot {}: the plotting library panicked; no chart written", path.display())),
    }
    write_png(path, &pixels)
}

/// An axis: the span of transformed values (log10 of the value on a log
/// axis) that maps onto the plot area.
struct Axis {
    scale: Scale,
    low: f64,
    high: f64,
}

impl Axis {
    fn transform(&self, value: f64) -> f64 {
        match self.scale {
            Scale::Linear => value,
            Scale::Log => value.log10(),
        }
    }

    /// 0 at the low end of the axis, 1 at the high end.
    fn fraction(&self, value: f64) -> f64 {
        (self.transform(value) - self.low) / (self.high - self.low)
    }
}

fn draw_lines(pixels: &mut [u8], chart: &LineChart, points: &[(f64, f64)]) -> Result<(), String> {
    register_font()?;
    let root = BitMapBackend::with_buffer(pixels, (PLOT_WIDTH, PLOT_HEIGHT)).into_drawing_area();
    let error = |e: DrawingAreaErrorKind<_>| e.to_string();
    root.fill(&WHITE).map_err(error)?;
    let (left, right) = (MARGIN_LEFT, PLOT_WIDTH as i32 - MARGIN_RIGHT);
    let (top, bottom) = (MARGIN_TOP, PLOT_HEIGHT as i32 - MARGIN_BOTTOM);

    // x: the span of the ticks and points, with a margin so that no point
    // sits on the frame.
    let x_values = points.iter().map(|p| p.0).chain(chart.x_ticks.iter().map(|t| t.0));
    let mut x_axis = Axis { scale: chart.x_scale, low: f64::INFINITY, high: f64::NEG_INFINITY };
    for value in x_values {
        let t = x_axis.transform(value);
        x_axis.low = x_axis.low.min(t);
        x_axis.high = x_axis.high.max(t);
    }
    let pad = if x_axis.high > x_axis.low { (x_axis.high - x_axis.low) * 0.06 } else { 1.0 };
    x_axis.low -= pad;
    x_axis.high += pad;

    // y: from 0 (linear) or the decade below the smallest value (log) to
    // the tick above the largest; every tick labelled.
    let y_maximum = points.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
    let (y_axis, y_ticks): (Axis, Vec<f64>) = match chart.y_scale {
        Scale::Linear => {
            let (step, ticks) = nice_ticks(y_maximum);
            let ticks: Vec<f64> = (0..=ticks).map(|tick| step * tick as f64).collect();
            (Axis { scale: Scale::Linear, low: 0.0, high: *ticks.last().unwrap() }, ticks)
        }
        Scale::Log => {
            let y_minimum = points.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
            let low = y_minimum.log10().floor() as i32;
            let high = (y_maximum.log10().ceil() as i32).max(low + 1);
            let ticks = (low..=high).map(|power| 10f64.powi(power)).collect();
            (Axis { scale: Scale::Log, low: low as f64, high: high as f64 }, ticks)
        }
    };
    let x_of = |value: f64| left + (x_axis.fraction(value) * (right - left) as f64).round() as i32;
    let y_of = |value: f64| bottom - (y_axis.fraction(value) * (bottom - top) as f64).round() as i32;

    for (index, &value) in y_ticks.iter().enumerate() {
        let y = y_of(value);
        if index > 0 {
            root.draw(&PathElement::new(vec![(left, y), (right, y)], GRID_COLOR.stroke_width(1))).map_err(error)?;
        }
        let label = format_tick(value);
        draw_text(&root, (left - 8 - text_width(&label), y - 7), &label)?;
    }
    let slot = (right - left) / chart.x_ticks.len().max(1) as i32;
    for (value, label) in &chart.x_ticks {
        let x = x_of(*value);
        root.draw(&PathElement::new(vec![(x, top), (x, bottom)], GRID_COLOR.stroke_width(1))).map_err(error)?;
        let label = fit_text(label, slot - 4);
        draw_text(&root, (x - text_width(&label) / 2, bottom + 10), &label)?;
    }

    for (index, series) in chart.series.iter().enumerate() {
        let color = SERIES_COLORS[index % SERIES_COLORS.len()];
        let pixels: Vec<(i32, i32)> = series.points.iter().filter(|p| chart.is_drawable(**p)).map(|&(x, y)| (x_of(x), y_of(y))).collect();
        if pixels.len() > 1 {
            root.draw(&PathElement::new(pixels.clone(), color.stroke_width(2))).map_err(error)?;
        }
        for pixel in pixels {
            root.draw(&Circle::new(pixel, 4, color.filled())).map_err(error)?;
        }
    }
    // The legend sits above the plot area, right-aligned on the y label's
    // row, so that no line runs through it: entries from right to left.
    let mut legend_right = right;
    for (index, series) in chart.series.iter().enumerate().rev() {
        let color = SERIES_COLORS[index % SERIES_COLORS.len()];
        let legend_y = top - 28;
        let label = fit_text(&series.label, (right - left) / 3);
        let legend_x = legend_right - text_width(&label);
        root.draw(&PathElement::new(vec![(legend_x - 34, legend_y + 7), (legend_x - 8, legend_y + 7)], color.stroke_width(3)))
            .map_err(error)?;
        draw_text(&root, (legend_x, legend_y), &label)?;
        legend_right = legend_x - 34 - 20;
    }

    root.draw(&PathElement::new(vec![(left, top), (left, bottom), (right, bottom)], AXIS_COLOR.stroke_width(2))).map_err(error)?;
    let y_label = fit_text(&chart.y_label, right - left);
    draw_text(&root, (left - text_width(&y_label).min(left - 4), top - 28), &y_label)?;
    let x_label = fit_text(&chart.x_label, right - left);
    draw_text(&root, ((left + right - text_width(&x_label)) / 2, bottom + 32), &x_label)?;
    let title = fit_text(&chart.title, PLOT_WIDTH as i32 - 20);
    draw_text(&root, ((PLOT_WIDTH as i32 - text_width(&title)) / 2, 12), &title)?;
    root.present().map_err(error)
}

/// A step of 1, 2 or 5 × 10^k and a tick count (3 to 10) whose product
/// covers `maximum`.
fn nice_ticks(maximum: f64) -> (f64, u32) {
    if maximum <= 0.0 {
        return (1.0, 1);
    }
    let rough = maximum / 5.0;
    let magnitude = 10f64.powf(rough.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * magnitude).find(|s| *s >= rough).unwrap_or(10.0 * magnitude);
    let ticks = (maximum / step).ceil().max(1.0) as u32;
    (step, ticks)
}

fn format_tick(value: f64) -> String {
    if value.fract() == 0.0 {
        format!("{value:.0}")
    } else {
        format!("{value}")
    }
}

/// Registers the embedded DejaVu Sans as [`FONT_FAMILY`], once per
/// process: plotters has no font until one is registered.
fn register_font() -> Result<(), String> {
    static REGISTERED: OnceLock<Result<(), String>> = OnceLock::new();
    REGISTERED
        .get_or_init(|| {
            plotters::style::register_font(FONT_FAMILY, FontStyle::Normal, dejavu::sans::regular())
                .map_err(|_| "the embedded DejaVu Sans font cannot be read".to_string())
        })
        .clone()
}

fn font() -> FontDesc<'static> {
    (FONT_FAMILY, FONT_PIXELS).into_font()
}

/// Width of `text` in pixels.
fn text_width(text: &str) -> i32 {
    font().box_size(text).map_or(0, |(width, _)| width as i32)
}

/// `text`, cut with ".." so that it fits `width` pixels.
fn fit_text(text: &str, width: i32) -> String {
    if text_width(text) <= width {
        return text.to_string();
    }
    let mut cut: String = text.chars().collect();
    while !cut.is_empty() && text_width(&format!("{cut}..")) > width {
        cut.pop();
    }
    format!("{cut}..")
}

/// Draws `text` with its top left corner at (x, y).
fn draw_text<DB: DrawingBackend>(area: &DrawingArea<DB, plotters::coord::Shift>, (x, y): (i32, i32), text: &str) -> Result<(), String> {
    area.draw_text(text, &font().color(&AXIS_COLOR), (x, y)).map_err(|e| e.to_string())
}

/// Writes 8-bit RGB pixels (row-major, no padding) of a chart to `path` as a PNG.
fn write_png(path: &Path, rgb: &[u8]) -> Result<(), String> {
    let png = encode_png_rgb(PLOT_WIDTH, PLOT_HEIGHT, rgb).map_err(|e| format!("encoding PNG file {}: {e}", path.display()))?;
    std::fs::write(path, png).map_err(|e| format!("writing PNG file {}: {e}", path.display()))
}

fn encode_png_rgb(width: u32, height: u32, rgb: &[u8]) -> Result<Vec<u8>, png::EncodingError> {
    let mut png = Vec::new();
    let mut encoder = png::Encoder::new(&mut png, width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(rgb)?;
    writer.finish()?;
    Ok(png)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_right_aligns_columns() {
        let mut table = Table::new(&["sessions", "commits/s"]);
        table.push_row(vec!["1".into(), "250".into()]);
        table.push_row(vec!["16".into(), "12345".into()]);
        assert_eq!(table.render(), "sessions  commits/s\n--------  ---------\n       1        250\n      16      12345\n");
    }

    #[test]
    fn csv_quotes_only_when_needed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("quoted.csv");
        write_csv(&path, &["number", "list", "said"], &[vec!["12.5".into(), "a,b".into(), "say \"hi\"".into()]]).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "number,list,said\n12.5,\"a,b\",\"say \"\"hi\"\"\"\n");
    }

    #[test]
    fn png_has_signature_and_valid_chunk_checksums() {
        let png = encode_png_rgb(2, 2, &[255, 0, 0, 255, 0, 0, 0, 0, 255, 0, 0, 255]).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        let mut at = 8;
        let mut kinds = Vec::new();
        while at < png.len() {
            let length = u32::from_be_bytes(png[at..at + 4].try_into().unwrap()) as usize;
            let body = &png[at + 4..at + 8 + length];
            let crc = u32::from_be_bytes(png[at + 8 + length..at + 12 + length].try_into().unwrap());
            assert_eq!(crc32fast::hash(body), crc);
            kinds.push(String::from_utf8(body[..4].to_vec()).unwrap());
            at += 12 + length;
        }
        assert_eq!(kinds, ["IHDR", "IDAT", "IEND"]);
    }

    #[test]
    fn nice_ticks_cover_the_maximum() {
        for maximum in [0.4, 1.0, 7.0, 99.0, 1234.0, 87_654.0] {
            let (step, ticks) = nice_ticks(maximum);
            assert!(step * ticks as f64 >= maximum, "{maximum}");
            assert!((1..=10).contains(&ticks), "{maximum}: {ticks} ticks");
        }
    }

    #[test]
    fn line_chart_writes_a_png_on_log_axes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lines.png");
        let sizes = [64.0, 256.0, 1024.0, 4096.0];
        let chart = LineChart {
            title: "commit latency".into(),
            x_label: "transaction size".into(),
            y_label: "ms".into(),
            x_scale: Scale::Log,
            y_scale: Scale::Log,
            x_ticks: sizes.iter().map(|s| (*s, format!("{s}MiB"))).collect(),
            series: vec![
                Series { label: "on".into(), points: sizes.iter().map(|s| (*s, 12.0)).collect() },
                // The 0 cannot be drawn on a log axis and is left out.
                Series { label: "off".into(), points: sizes.iter().map(|s| (*s, s * 10.0)).chain([(8192.0, 0.0)]).collect() },
            ],
        };
        plot_lines(&path, &chart).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
        let empty = LineChart { series: vec![Series { label: "none".into(), points: vec![(1.0, 0.0)] }], ..chart };
        assert!(plot_lines(&path, &empty).is_err(), "nothing drawable is an error");
    }

    #[test]
    fn plot_writes_a_png() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("chart.png");
        let bars = [Bar { label: "1 session".into(), value: 310.0 }, Bar { label: "16 sessions".into(), value: 4100.0 }];
        plot_bars(&path, "commits/s (sync_binlog=1)", &bars).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
        assert!(bytes.len() < 200_000, "chart should compress, got {} bytes", bytes.len());
    }
}
