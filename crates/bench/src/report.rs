//! What every benchmark prints and writes: an aligned text table, a CSV
//! file with one row per run, and a PNG chart (bars, or lines over a
//! linear or logarithmic axis).
//!
//! The PNG is drawn with `plotters` into an in-memory RGB buffer and
//! encoded here, because the workspace builds `plotters` without a font
//! backend (`ttf`/`ab_glyph`: no font files on the machines that run the
//! benchmarks) and without the `image` encoder. `plotters`' text
//! functions panic without a font backend, so this module never calls
//! them: labels are drawn with the small built-in 5×7 pixel font below.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

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

/// Writes `headers` and `rows` as CSV (RFC 4180 quoting), replacing `path`.
pub fn write_csv(path: &Path, headers: &[&str], rows: &[Vec<String>]) -> Result<(), String> {
    let mut text = String::new();
    let headers: Vec<String> = headers.iter().map(|h| h.to_string()).collect();
    for row in std::iter::once(&headers).chain(rows) {
        assert_eq!(row.len(), headers.len(), "a CSV row needs one field per column");
        let fields: Vec<String> = row.iter().map(|field| csv_field(field)).collect();
        text.push_str(&fields.join(","));
        text.push('\n');
    }
    std::fs::write(path, text).map_err(|e| format!("writing CSV file {}: {e}", path.display()))
}

fn csv_field(field: &str) -> String {
    if field.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_string()
    }
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

/// Draws `bars`, each with its value above it, under `title` and writes
/// the chart to `path` as a PNG. Labels are upper-cased (the pixel font
/// has no lower case).
pub fn plot_bars(path: &Path, title: &str, bars: &[Bar]) -> Result<(), String> {
    if bars.is_empty() {
        return Err(format!("plot {}: nothing to plot", path.display()));
    }
    if let Some(bar) = bars.iter().find(|b| !b.value.is_finite() || b.value < 0.0) {
        return Err(format!(
            "plot {}: bar {:?} has value {}, not a finite number ≥ 0",
            path.display(),
            bar.label,
            bar.value
        ));
    }
    let mut pixels = vec![255u8; (PLOT_WIDTH * PLOT_HEIGHT * 3) as usize];
    // No plotters call below is expected to panic (no text goes through
    // plotters); the guard keeps a plotting bug from aborting a benchmark
    // whose numbers are already measured.
    let drawn = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| draw_bars(&mut pixels, title, bars)));
    match drawn {
        Ok(Ok(())) => {}
        Ok(Err(error)) => return Err(format!("plot {}: {error}", path.display())),
        Err(_) => return Err(format!("plot {}: the plotting library panicked; no chart written", path.display())),
    }
    let png = encode_png_rgb(PLOT_WIDTH, PLOT_HEIGHT, &pixels);
    std::fs::File::create(path)
        .and_then(|mut file| file.write_all(&png))
        .map_err(|e| format!("writing PNG file {}: {e}", path.display()))
}

fn draw_bars(pixels: &mut [u8], title: &str, bars: &[Bar]) -> Result<(), String> {
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
        let x = left - 8 - text_width(&label, 2);
        draw_text(&root, (x, y - 7), &label, 2, AXIS_COLOR)?;
    }

    // Bars, their values and labels.
    let slot = (right - left) / bars.len() as i32;
    let bar_width = (slot * 3 / 5).max(2);
    for (index, bar) in bars.iter().enumerate() {
        let center = left + slot * index as i32 + slot / 2;
        let y = y_of(bar.value);
        root.draw(&Rectangle::new([(center - bar_width / 2, y), (center + bar_width / 2, bottom)], BAR_COLOR.filled()))
            .map_err(error)?;
        let value = format!("{:.0}", bar.value);
        draw_text(&root, (center - text_width(&value, 2) / 2, y - 20), &value, 2, AXIS_COLOR)?;
        let label = fit_text(&bar.label, slot - 4, 2);
        draw_text(&root, (center - text_width(&label, 2) / 2, bottom + 14), &label, 2, AXIS_COLOR)?;
    }
    // Axes and title.
    root.draw(&PathElement::new(vec![(left, top), (left, bottom), (right, bottom)], AXIS_COLOR.stroke_width(2)))
        .map_err(error)?;
    let title = fit_text(title, PLOT_WIDTH as i32 - 20, 2);
    draw_text(&root, ((PLOT_WIDTH as i32 - text_width(&title, 2)) / 2, 18), &title, 2, AXIS_COLOR)?;
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
    /// Drawn above the y axis (the pixel font has no vertical text).
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

/// Draws `chart` and writes it to `path` as a PNG. Labels are upper-cased
/// (the pixel font has no lower case).
pub fn plot_lines(path: &Path, chart: &LineChart) -> Result<(), String> {
    let points: Vec<(f64, f64)> =
        chart.series.iter().flat_map(|s| s.points.iter().copied()).filter(|p| chart.is_drawable(*p)).collect();
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
    let png = encode_png_rgb(PLOT_WIDTH, PLOT_HEIGHT, &pixels);
    std::fs::File::create(path)
        .and_then(|mut file| file.write_all(&png))
        .map_err(|e| format!("writing PNG file {}: {e}", path.display()))
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
        draw_text(&root, (left - 8 - text_width(&label, 2), y - 7), &label, 2, AXIS_COLOR)?;
    }
    let slot = (right - left) / chart.x_ticks.len().max(1) as i32;
    for (value, label) in &chart.x_ticks {
        let x = x_of(*value);
        root.draw(&PathElement::new(vec![(x, top), (x, bottom)], GRID_COLOR.stroke_width(1))).map_err(error)?;
        let label = fit_text(label, slot - 4, 2);
        draw_text(&root, (x - text_width(&label, 2) / 2, bottom + 10), &label, 2, AXIS_COLOR)?;
    }

    for (index, series) in chart.series.iter().enumerate() {
        let color = SERIES_COLORS[index % SERIES_COLORS.len()];
        let pixels: Vec<(i32, i32)> =
            series.points.iter().filter(|p| chart.is_drawable(**p)).map(|&(x, y)| (x_of(x), y_of(y))).collect();
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
        let label = fit_text(&series.label, (right - left) / 3, 2);
        let legend_x = legend_right - text_width(&label, 2);
        root.draw(&PathElement::new(
            vec![(legend_x - 34, legend_y + 7), (legend_x - 8, legend_y + 7)],
            color.stroke_width(3),
        ))
        .map_err(error)?;
        draw_text(&root, (legend_x, legend_y), &label, 2, AXIS_COLOR)?;
        legend_right = legend_x - 34 - 20;
    }

    root.draw(&PathElement::new(vec![(left, top), (left, bottom), (right, bottom)], AXIS_COLOR.stroke_width(2)))
        .map_err(error)?;
    let y_label = fit_text(&chart.y_label, right - left, 2);
    draw_text(&root, (left - text_width(&y_label, 2).min(left - 4), top - 28), &y_label, 2, AXIS_COLOR)?;
    let x_label = fit_text(&chart.x_label, right - left, 2);
    draw_text(&root, ((left + right - text_width(&x_label, 2)) / 2, bottom + 32), &x_label, 2, AXIS_COLOR)?;
    let title = fit_text(&chart.title, PLOT_WIDTH as i32 - 20, 2);
    draw_text(&root, ((PLOT_WIDTH as i32 - text_width(&title, 2)) / 2, 12), &title, 2, AXIS_COLOR)?;
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

/// Glyphs are 5×7 pixels on a 6-pixel pitch, times `scale`.
fn text_width(text: &str, scale: i32) -> i32 {
    let count = text.chars().count() as i32;
    if count == 0 {
        0
    } else {
        (count * 6 - 1) * scale
    }
}

/// `text`, cut with ".." so that it fits `width` pixels.
fn fit_text(text: &str, width: i32, scale: i32) -> String {
    if text_width(text, scale) <= width {
        return text.to_string();
    }
    let mut cut: String = text.chars().collect();
    while !cut.is_empty() && text_width(&format!("{cut}.."), scale) > width {
        cut.pop();
    }
    format!("{cut}..")
}

fn draw_text<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    (x, y): (i32, i32),
    text: &str,
    scale: i32,
    color: RGBColor,
) -> Result<(), String> {
    for (index, character) in text.chars().enumerate() {
        let rows = glyph(character);
        let origin = x + index as i32 * 6 * scale;
        for (row, bits) in rows.iter().enumerate() {
            for column in 0..5 {
                if bits & (0b10000 >> column) != 0 {
                    let (px, py) = (origin + column * scale, y + row as i32 * scale);
                    for (dx, dy) in (0..scale).flat_map(|dx| (0..scale).map(move |dy| (dx, dy))) {
                        area.draw_pixel((px + dx, py + dy), &color).map_err(|e| e.to_string())?;
                    }
                }
            }
        }
    }
    Ok(())
}

/// The 5×7 pixel font: one byte per row, bit 4 the leftmost pixel. Lower
/// case is drawn as upper case; anything else unknown as '?'.
fn glyph(character: char) -> [u8; 7] {
    match character.to_ascii_uppercase() {
        '0' => [0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E],
        '1' => [0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E],
        '2' => [0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F],
        '3' => [0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E],
        '4' => [0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02],
        '5' => [0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E],
        '6' => [0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E],
        '7' => [0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08],
        '8' => [0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E],
        '9' => [0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C],
        'A' => [0x0E, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11],
        'B' => [0x1E, 0x11, 0x11, 0x1E, 0x11, 0x11, 0x1E],
        'C' => [0x0E, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0E],
        'D' => [0x1C, 0x12, 0x11, 0x11, 0x11, 0x12, 0x1C],
        'E' => [0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x1F],
        'F' => [0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x10],
        'G' => [0x0E, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0F],
        'H' => [0x11, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11],
        'I' => [0x0E, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0E],
        'J' => [0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0C],
        'K' => [0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11],
        'L' => [0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1F],
        'M' => [0x11, 0x1B, 0x15, 0x15, 0x11, 0x11, 0x11],
        'N' => [0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11],
        'O' => [0x0E, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E],
        'P' => [0x1E, 0x11, 0x11, 0x1E, 0x10, 0x10, 0x10],
        'Q' => [0x0E, 0x11, 0x11, 0x11, 0x15, 0x12, 0x0D],
        'R' => [0x1E, 0x11, 0x11, 0x1E, 0x14, 0x12, 0x11],
        'S' => [0x0F, 0x10, 0x10, 0x0E, 0x01, 0x01, 0x1E],
        'T' => [0x1F, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04],
        'U' => [0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E],
        'V' => [0x11, 0x11, 0x11, 0x11, 0x11, 0x0A, 0x04],
        'W' => [0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0A],
        'X' => [0x11, 0x11, 0x0A, 0x04, 0x0A, 0x11, 0x11],
        'Y' => [0x11, 0x11, 0x11, 0x0A, 0x04, 0x04, 0x04],
        'Z' => [0x1F, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1F],
        ' ' => [0; 7],
        '.' => [0x00, 0x00, 0x00, 0x00, 0x00, 0x0C, 0x0C],
        ',' => [0x00, 0x00, 0x00, 0x00, 0x0C, 0x04, 0x08],
        ':' => [0x00, 0x0C, 0x0C, 0x00, 0x0C, 0x0C, 0x00],
        '/' => [0x00, 0x01, 0x02, 0x04, 0x08, 0x10, 0x00],
        '-' => [0x00, 0x00, 0x00, 0x1F, 0x00, 0x00, 0x00],
        '_' => [0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1F],
        '=' => [0x00, 0x00, 0x1F, 0x00, 0x1F, 0x00, 0x00],
        '(' => [0x02, 0x04, 0x08, 0x08, 0x08, 0x04, 0x02],
        ')' => [0x08, 0x04, 0x02, 0x02, 0x02, 0x04, 0x08],
        '%' => [0x18, 0x19, 0x02, 0x04, 0x08, 0x13, 0x03],
        '+' => [0x00, 0x04, 0x04, 0x1F, 0x04, 0x04, 0x00],
        _ => [0x0E, 0x11, 0x01, 0x02, 0x04, 0x00, 0x04],
    }
}

/// Encodes 8-bit RGB pixels (row-major, no padding) as a PNG file.
pub fn encode_png_rgb(width: u32, height: u32, rgb: &[u8]) -> Vec<u8> {
    assert_eq!(rgb.len(), width as usize * height as usize * 3, "pixel buffer size");
    let stride = width as usize * 3 + 1;
    // Every row gets filter type 0 (None); the compressor finds repeats
    // within a row (distance 3: a run of one colour) and between rows
    // (distance `stride`: the pixel above).
    let mut filtered = Vec::with_capacity(stride * height as usize);
    for row in rgb.chunks_exact(width as usize * 3) {
        filtered.push(0);
        filtered.extend_from_slice(row);
    }
    let mut zlib = vec![0x78, 0x01]; // deflate, 32 KiB window, no dictionary; (0x7801 % 31 == 0)
    zlib.extend_from_slice(&deflate_fixed(&filtered, &[3, stride]));
    zlib.extend_from_slice(&adler32(&filtered).to_be_bytes());

    let mut png = vec![0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1A, b'\n'];
    let mut header = Vec::with_capacity(13);
    header.extend_from_slice(&width.to_be_bytes());
    header.extend_from_slice(&height.to_be_bytes());
    header.extend_from_slice(&[8, 2, 0, 0, 0]); // 8 bits per sample, RGB, deflate, adaptive filtering, no interlace
    png_chunk(&mut png, b"IHDR", &header);
    png_chunk(&mut png, b"IDAT", &zlib);
    png_chunk(&mut png, b"IEND", &[]);
    png
}

fn png_chunk(png: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    png.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let start = png.len();
    png.extend_from_slice(kind);
    png.extend_from_slice(data);
    let crc = crc32(&png[start..]);
    png.extend_from_slice(&crc.to_be_bytes());
}

/// Deflate window (RFC 1951): no match may reach further back.
const DEFLATE_WINDOW_BYTES: usize = 32 * 1024;
const DEFLATE_MATCH_BYTES_MIN: usize = 3;
const DEFLATE_MATCH_BYTES_MAX: usize = 258;
const LENGTH_BASE: [u16; 29] =
    [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258];
const LENGTH_EXTRA_BITS: [u8; 29] =
    [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0];
const DISTANCE_BASE: [u16; 30] = [
    1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145,
    8193, 12289, 16385, 24577,
];
const DISTANCE_EXTRA_BITS: [u8; 30] =
    [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13];

/// One final deflate block with the fixed Huffman codes, trying matches
/// only at the given `distances`: enough for charts, which are mostly
/// runs of one colour and rows equal to the row above.
fn deflate_fixed(data: &[u8], distances: &[usize]) -> Vec<u8> {
    assert!(distances.iter().all(|d| (1..=DEFLATE_WINDOW_BYTES).contains(d)), "deflate distance outside the window");
    let mut out = BitWriter::default();
    out.bits(1, 1); // BFINAL
    out.bits(1, 2); // BTYPE 01: fixed Huffman codes
    let mut at = 0;
    while at < data.len() {
        let (mut best_length, mut best_distance) = (0, 0);
        for &distance in distances {
            if distance > at {
                continue;
            }
            let limit = DEFLATE_MATCH_BYTES_MAX.min(data.len() - at);
            let mut length = 0;
            // Overlapping copies are allowed: the source may run into the bytes being produced.
            while length < limit && data[at + length] == data[at + length - distance] {
                length += 1;
            }
            if length > best_length {
                (best_length, best_distance) = (length, distance);
            }
        }
        if best_length >= DEFLATE_MATCH_BYTES_MIN {
            out.length(best_length);
            out.distance(best_distance);
            at += best_length;
        } else {
            out.symbol(data[at] as u16);
            at += 1;
        }
    }
    out.symbol(256); // end of block
    out.finish()
}

#[derive(Default)]
struct BitWriter {
    bytes: Vec<u8>,
    pending: u64,
    pending_bits: u32,
}

impl BitWriter {
    /// Appends the low `count` bits of `value`, least significant first.
    fn bits(&mut self, value: u32, count: u32) {
        debug_assert!(count <= 32 && (count == 32 || value >> count == 0));
        self.pending |= (value as u64) << self.pending_bits;
        self.pending_bits += count;
        while self.pending_bits >= 8 {
            self.bytes.push(self.pending as u8);
            self.pending >>= 8;
            self.pending_bits -= 8;
        }
    }

    /// Huffman codes are packed most significant bit first.
    fn code(&mut self, code: u32, count: u32) {
        let reversed = code.reverse_bits() >> (32 - count);
        self.bits(reversed, count);
    }

    /// A literal/length symbol in the fixed code (RFC 1951 §3.2.6).
    fn symbol(&mut self, symbol: u16) {
        let symbol = symbol as u32;
        match symbol {
            0..=143 => self.code(0x30 + symbol, 8),
            144..=255 => self.code(0x190 + symbol - 144, 9),
            256..=279 => self.code(symbol - 256, 7),
            _ => self.code(0xC0 + symbol - 280, 8),
        }
    }

    fn length(&mut self, length: usize) {
        let index = LENGTH_BASE.iter().rposition(|&base| base as usize <= length).expect("length ≥ 3");
        self.symbol(257 + index as u16);
        self.bits((length - LENGTH_BASE[index] as usize) as u32, LENGTH_EXTRA_BITS[index] as u32);
    }

    fn distance(&mut self, distance: usize) {
        let index = DISTANCE_BASE.iter().rposition(|&base| base as usize <= distance).expect("distance ≥ 1");
        self.code(index as u32, 5);
        self.bits((distance - DISTANCE_BASE[index] as usize) as u32, DISTANCE_EXTRA_BITS[index] as u32);
    }

    fn finish(mut self) -> Vec<u8> {
        if self.pending_bits > 0 {
            self.bytes.push(self.pending as u8);
        }
        self.bytes
    }
}

fn adler32(data: &[u8]) -> u32 {
    const MODULUS: u32 = 65_521;
    let (mut a, mut b) = (1u32, 0u32);
    // 5552 bytes is the most that can be summed before b can overflow u32.
    for chunk in data.chunks(5552) {
        for &byte in chunk {
            a += byte as u32;
            b += a;
        }
        a %= MODULUS;
        b %= MODULUS;
    }
    (b << 16) | a
}

fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in data {
        crc ^= byte as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_right_aligns_columns() {
        let mut table = Table::new(&["sessions", "commits/s"]);
        table.push_row(vec!["1".into(), "250".into()]);
        table.push_row(vec!["16".into(), "12345".into()]);
        assert_eq!(
            table.render(),
            "sessions  commits/s\n--------  ---------\n       1        250\n      16      12345\n"
        );
    }

    #[test]
    fn csv_quotes_only_when_needed() {
        assert_eq!(csv_field("12.5"), "12.5");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
    }

    #[test]
    fn checksums_match_known_values() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(adler32(b"Wikipedia"), 0x11E6_0398);
    }

    #[test]
    fn deflate_of_nothing_is_the_fixed_empty_block() {
        // BFINAL=1, BTYPE=01, end-of-block (7 zero bits): 0x03 0x00, as zlib writes it.
        assert_eq!(deflate_fixed(&[], &[1]), vec![0x03, 0x00]);
    }

    #[test]
    fn png_has_signature_and_valid_chunk_checksums() {
        let png = encode_png_rgb(2, 2, &[255, 0, 0, 255, 0, 0, 0, 0, 255, 0, 0, 255]);
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        let mut at = 8;
        let mut kinds = Vec::new();
        while at < png.len() {
            let length = u32::from_be_bytes(png[at..at + 4].try_into().unwrap()) as usize;
            let body = &png[at + 4..at + 8 + length];
            let crc = u32::from_be_bytes(png[at + 8 + length..at + 12 + length].try_into().unwrap());
            assert_eq!(crc32(body), crc);
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
                Series {
                    label: "off".into(),
                    points: sizes.iter().map(|s| (*s, s * 10.0)).chain([(8192.0, 0.0)]).collect(),
                },
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
        let bars =
            [Bar { label: "1 session".into(), value: 310.0 }, Bar { label: "16 sessions".into(), value: 4100.0 }];
        plot_bars(&path, "commits/s (sync_binlog=1)", &bars).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
        assert!(bytes.len() < 200_000, "chart should compress, got {} bytes", bytes.len());
    }
}
