//! zeng-implicit Table 1: recursive corrective motion, the standard update
//! of `W` against the fast one, per Newton iteration and in all.

use super::row::{thousands, PaperRow, Table};
use super::PapersArgs;
use crate::corrective::{self, CorrectiveArgs};
use crate::BenchError;

/// The table (`quick`: its smallest size).
pub(crate) fn rows(a: &PapersArgs) -> Result<Vec<PaperRow>, BenchError> {
    let t = Table {
        paper: "zeng-implicit",
        table: "Table 1",
        hardware: "Ryzen 9 5950X (16 cores) + GeForce RTX 3080",
    };
    let args = CorrectiveArgs { quick: a.quick, steps: a.frames.clamp(1, 5), single: false, json: None };
    let mut rows = Vec::new();
    for r in corrective::table1(&args)?.iter().filter(|r| r.variant != "standard-reuse") {
        let paper_size = format!("{} DOFs, {:.0} constraints", thousands(r.paper_dofs), r.paper_constraints);
        let size = format!("{} DOFs, {} contact groups", thousands(r.dofs), r.constraints);
        let fast = r.variant == "fast";
        let mut quantities = vec![
            ("Rebuild W, per Newton iteration (ms)", r.paper[1], r.rebuild_ms),
            ("PGS, per Newton iteration (ms)", r.paper[2], r.pgs_ms),
            ("Corr., per Newton iteration (ms)", r.paper[3], r.correction_ms),
            ("Newton iteration (ms)", r.paper[4], r.newton_iteration_ms),
            ("Total, 5 Newton iterations (ms)", r.paper[5], r.total_ms),
        ];
        if fast {
            quantities.insert(0, ("Build W_H (ms)", r.paper[0], r.build_mapping_ms));
        }
        let row = format!("{}, {} DOFs", r.variant, thousands(r.paper_dofs));
        for (quantity, paper, ours) in quantities {
            rows.push(
                t.row(row.clone(), quantity, Some(paper), paper_size.clone())
                    .ours(ours, size.clone())
                    .note("a bar squeezed between two jaws (`grasp-rotate`) sized to the paper's DOFs and constraints"),
            );
        }
    }
    Ok(rows)
}
