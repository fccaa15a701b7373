//! PNG charts of benchmark records (plotters, bitmap backend, with a font
//! shipped in `assets/` so that no system font library is needed).

use std::path::Path;

use plotters::prelude::*;

use crate::delassus::DelassusBenchRecord;
use crate::BenchError;

const FONT: &[u8] = include_bytes!("../assets/DejaVuSansMono.ttf");
const METHODS: [(&str, RGBColor); 3] = [("dense", RED), ("isodof", BLUE), ("isodof-reuse", GREEN)];

fn register_font() {
    // Registering twice is harmless; an unreadable font only loses the labels.
    let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, FONT);
}

/// `fig9.png` (W time against constraints) and `fig10.png` (against DOFs),
/// log-scaled like zeng2022 Fig. 9–10.
pub fn delassus_figures(dir: &Path, records: &[DelassusBenchRecord]) -> Result<(), BenchError> {
    std::fs::create_dir_all(dir).map_err(|e| BenchError::Io(dir.to_path_buf(), e))?;
    register_font();
    let fig9: Vec<_> = records.iter().filter(|r| r.experiment == "fig9").collect();
    let fig10: Vec<_> = records.iter().filter(|r| r.experiment == "fig10").collect();
    let title = fig9.first().map_or(String::new(), |r| {
        format!("Build W against constraints ({}, {:.1}k DOFs)", r.case, r.dofs as f64 / 1e3)
    });
    chart(&dir.join("fig9.png"), &title, "constraints", &fig9, |r| r.constraints as f64)?;
    chart(&dir.join("fig10.png"), "Build W against mesh size (600 constraints)", "DOFs", &fig10, |r| {
        r.dofs as f64
    })
}

fn chart(
    path: &Path,
    title: &str,
    x_label: &str,
    records: &[&DelassusBenchRecord],
    x: impl Fn(&DelassusBenchRecord) -> f64,
) -> Result<(), BenchError> {
    if records.is_empty() {
        return Ok(());
    }
    let err = |e: String| BenchError::Other(format!("{}: {e}", path.display()));
    let xs = records.iter().map(|r| x(r));
    let (x0, x1) = xs.clone().fold((f64::INFINITY, 0.0f64), |(a, b), v| (a.min(v), b.max(v)));
    let ys = records.iter().map(|r| r.build_ms);
    let (y0, y1) = ys.fold((f64::INFINITY, 0.0f64), |(a, b), v| (a.min(v), b.max(v)));
    let root = BitMapBackend::new(path, (900, 600)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d((x0 * 0.9)..(x1 * 1.1), (y0 * 0.5..y1 * 2.0).log_scale())
        .map_err(|e| err(e.to_string()))?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc("W build (ms, log)")
        .draw()
        .map_err(|e| err(e.to_string()))?;
    for (method, color) in METHODS {
        let mut pts: Vec<(f64, f64)> =
            records.iter().filter(|r| r.method == method).map(|r| (x(r), r.build_ms)).collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        chart
            .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
            .map_err(|e| err(e.to_string()))?
            .label(method)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
        chart
            .draw_series(pts.into_iter().map(|p| Circle::new(p, 4, color.filled())))
            .map_err(|e| err(e.to_string()))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(|e| err(e.to_string()))?;
    root.present().map_err(|e| err(e.to_string()))
}

/// `lg-fig9.png`: relative error against local-global iterations for the
/// complete solution and the Jacobi baselines at each stiffness (zeng2025 Fig. 9b).
pub fn local_global_figure(
    dir: &Path,
    records: &[crate::local_global::LocalGlobalRecord],
) -> Result<(), BenchError> {
    let rows: Vec<_> = records.iter().filter(|r| r.experiment == "fig9").collect();
    if rows.is_empty() {
        return Ok(());
    }
    std::fs::create_dir_all(dir).map_err(|e| BenchError::Io(dir.to_path_buf(), e))?;
    register_font();
    let path = dir.join("lg-fig9.png");
    let err = |e: String| BenchError::Other(format!("{}: {e}", path.display()));
    let iters = rows.iter().map(|r| r.errors.len()).max().unwrap_or(1) as f64;
    let root = BitMapBackend::new(&path, (900, 600)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
    let mut chart = ChartBuilder::on(&root)
        .caption("Twisting bar: relative error per iteration", ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d((1.0..iters).log_scale(), (1e-9..2.0).log_scale())
        .map_err(|e| err(e.to_string()))?;
    chart
        .configure_mesh()
        .x_desc("local-global iterations (log)")
        .y_desc("relative error (log)")
        .draw()
        .map_err(|e| err(e.to_string()))?;
    let palette = [
        RED,
        BLUE,
        GREEN,
        MAGENTA,
        CYAN,
        BLACK,
        RGBColor(200, 120, 0),
        RGBColor(120, 0, 200),
        RGBColor(0, 120, 120),
    ];
    for (i, r) in rows.iter().enumerate() {
        let color = palette[i % palette.len()];
        let pts: Vec<(f64, f64)> = r
            .errors
            .iter()
            .enumerate()
            .filter(|(_, e)| e.is_finite() && **e > 0.0)
            .map(|(k, e)| ((k + 1) as f64, e.max(1e-9)))
            .collect();
        chart
            .draw_series(LineSeries::new(pts, color.stroke_width(2)))
            .map_err(|e| err(e.to_string()))?
            .label(format!("{} E={:.0e}", r.global_method, r.young))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerLeft)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(|e| err(e.to_string()))?;
    root.present().map_err(|e| err(e.to_string()))
}
