//! PNG charts of benchmark records (plotters, bitmap backend, with a font
//! shipped in the workspace's `assets/fonts/` so that no system font library is needed).

use std::path::Path;

use plotters::prelude::*;

use crate::records::{DelassusBenchRecord, EarlyTerminationRecord, LocalGlobalRecord, ScaleRecord};
use crate::BenchError;

const FONT: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSansMono.ttf");
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
        let pts: Vec<(f64, f64)> =
            records.iter().filter(|r| r.method == method).map(|r| (x(r), r.build_ms)).collect();
        marked_line(&mut chart, pts, color, method).map_err(err)?;
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
pub fn local_global_figure(dir: &Path, records: &[LocalGlobalRecord]) -> Result<(), BenchError> {
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

/// dahl2019 Figs. 3–4 on our scenes: `et-fig3-<scene>.png`, kinetic energy
/// after one step cut at k PCG iterations (Jacobi) over the converged
/// step's, per initial guess; `et-fig4-<scene>.png`, one panel per initial
/// guess with the four preconditioners.
pub fn early_termination_figures(dir: &Path, records: &[EarlyTerminationRecord]) -> Result<(), BenchError> {
    std::fs::create_dir_all(dir).map_err(|e| BenchError::Io(dir.to_path_buf(), e))?;
    register_font();
    let rows: Vec<_> = records.iter().filter(|r| r.experiment == "fig3").collect();
    let mut scenes: Vec<&str> = rows.iter().map(|r| r.scene.as_str()).collect();
    scenes.dedup();
    const GUESSES: [(&str, RGBColor); 3] = [("zero", RED), ("previous_velocity", BLUE), ("explicit", GREEN)];
    const KINDS: [(&str, RGBColor); 4] =
        [("identity", RED), ("mass", MAGENTA), ("jacobi", BLUE), ("ldlt", BLACK)];
    for scene in scenes {
        let of_scene: Vec<_> = rows.iter().copied().filter(|r| r.scene == scene).collect();
        let path = dir.join(format!("et-fig3-{scene}.png"));
        let root = BitMapBackend::new(&path, (900, 600)).into_drawing_area();
        let title = format!("{scene}: kinetic energy after one step cut at k CG iterations (Jacobi)");
        let series: Vec<_> = GUESSES
            .iter()
            .map(|&(g, c)| {
                (g, c, ratio_points(&of_scene, |r| r.initial_guess == g && r.preconditioner == "jacobi"))
            })
            .collect();
        ratio_panel(&root, &title, &series, &path)?;
        root.present().map_err(|e| BenchError::Other(format!("{}: {e}", path.display())))?;

        let path = dir.join(format!("et-fig4-{scene}.png"));
        let root = BitMapBackend::new(&path, (1500, 500)).into_drawing_area();
        for (panel, &(g, _)) in root.split_evenly((1, 3)).iter().zip(&GUESSES) {
            let series: Vec<_> = KINDS
                .iter()
                .map(|&(k, c)| {
                    (k, c, ratio_points(&of_scene, |r| r.initial_guess == g && r.preconditioner == k))
                })
                .collect();
            ratio_panel(panel, &format!("{scene}, initial guess {g}"), &series, &path)?;
        }
        root.present().map_err(|e| BenchError::Other(format!("{}: {e}", path.display())))?;
    }
    Ok(())
}

/// (iterations, kinetic energy / converged) of the matching records.
fn ratio_points(
    rows: &[&EarlyTerminationRecord],
    keep: impl Fn(&EarlyTerminationRecord) -> bool,
) -> Vec<(f64, f64)> {
    rows.iter()
        .filter(|r| keep(r))
        .filter_map(|r| Some((r.iterations? as f64, r.kinetic_energy / r.converged_kinetic_energy)))
        .filter(|p| p.1.is_finite())
        .collect()
}

/// A named, coloured line of (x, y) points.
type Series<'a> = (&'a str, RGBColor, Vec<(f64, f64)>);

/// One chart of kinetic-energy ratios against iterations (log x), with the
/// converged value as a dashed line at 1.
fn ratio_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
    series: &[Series],
    path: &Path,
) -> Result<(), BenchError> {
    let err = |e: String| BenchError::Other(format!("{}: {e}", path.display()));
    area.fill(&WHITE).map_err(|e| err(e.to_string()))?;
    let points = series.iter().flat_map(|s| s.2.iter());
    let (x1, y0, y1) =
        points.fold((1.0f64, 1.0f64, 1.0f64), |(x, lo, hi), p| (x.max(p.0), lo.min(p.1), hi.max(p.1)));
    let (y0, y1) = (y0.max(0.0) * 0.95, (y1 * 1.05).min(y0.max(0.0) + 5.0));
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 16))
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d((1.0..x1 * 1.2).log_scale(), y0..y1)
        .map_err(|e| err(e.to_string()))?;
    chart
        .configure_mesh()
        .x_desc("CG iterations (log)")
        .y_desc("kinetic energy / converged")
        .draw()
        .map_err(|e| err(e.to_string()))?;
    chart
        .draw_series(DashedLineSeries::new(vec![(1.0, 1.0), (x1 * 1.2, 1.0)], 6, 4, BLACK.stroke_width(1)))
        .map_err(|e| err(e.to_string()))?;
    for (name, color, pts) in series {
        let color = *color;
        chart
            .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
            .map_err(|e| err(e.to_string()))?
            .label(*name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
        chart
            .draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))
            .map_err(|e| err(e.to_string()))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(|e| err(e.to_string()))
}

/// `bench scale --figure`: median step time against vertices, log–log,
/// one line per case, with the 33 ms (30 steps a second) line.
pub fn scale_figure(path: &Path, records: &[ScaleRecord]) -> Result<(), BenchError> {
    if records.is_empty() {
        return Ok(());
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| BenchError::Io(dir.to_path_buf(), e))?;
    }
    register_font();
    let err = |e: String| BenchError::Other(format!("{}: {e}", path.display()));
    let fold = |f: fn(&ScaleRecord) -> f64| {
        records.iter().map(f).fold((f64::INFINITY, 0.0f64), |(a, b), v| (a.min(v), b.max(v)))
    };
    let (x0, x1) = fold(|r| r.vertices as f64);
    let (y0, y1) = fold(|r| r.step_ms_median);
    let root = BitMapBackend::new(path, (900, 600)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(format!("Step time against mesh size ({} threads)", records[0].threads), ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d((x0 * 0.8..x1 * 1.25).log_scale(), (y0.min(33.0) * 0.5..y1 * 2.0).log_scale())
        .map_err(|e| err(e.to_string()))?;
    chart
        .configure_mesh()
        .x_desc("vertices (log)")
        .y_desc("median step (ms, log)")
        .draw()
        .map_err(|e| err(e.to_string()))?;
    let realtime = vec![(x0 * 0.8, 33.3), (x1 * 1.25, 33.3)];
    chart
        .draw_series(LineSeries::new(realtime, BLACK.mix(0.4).stroke_width(1)))
        .map_err(|e| err(e.to_string()))?
        .label("30 steps per second")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.mix(0.4)));
    let mut cases: Vec<&str> = records.iter().map(|r| r.case.as_str()).collect();
    cases.dedup();
    for (i, case) in cases.into_iter().enumerate() {
        let color = [RED, BLUE, GREEN, MAGENTA, CYAN, RGBColor(230, 140, 0)][i % 6];
        let pts: Vec<(f64, f64)> = records
            .iter()
            .filter(|r| r.case == case)
            .map(|r| (r.vertices as f64, r.step_ms_median))
            .collect();
        marked_line(&mut chart, pts, color, case).map_err(err)?;
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

/// A labelled line through `pts` (sorted by x here) with a dot at each point.
fn marked_line<X, Y>(
    chart: &mut ChartContext<'_, BitMapBackend<'_>, Cartesian2d<X, Y>>,
    mut pts: Vec<(f64, f64)>,
    color: RGBColor,
    label: &str,
) -> Result<(), String>
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    chart
        .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
        .map_err(|e| e.to_string())?
        .label(label)
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
    chart
        .draw_series(pts.into_iter().map(|p| Circle::new(p, 4, color.filled())))
        .map_err(|e| e.to_string())?;
    Ok(())
}
