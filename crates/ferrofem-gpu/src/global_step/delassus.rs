//! `W = h² H A⁻¹ Hᵀ` on the device from the resident sparse inverse
//! (zeng2025 §5.1: the Schur complement from the stored `S` over the
//! rows' reach): with `A = A_s ⊗ I₃`, `A_s⁻¹ = Pᵀ Sᵀ D⁻¹ S P`, so over the
//! vertices the rows touch `W̄ = Zᵀ D⁻¹ Z` with `Z` the columns of `S` at
//! those vertices (etree paths, gathered dense over the union of the paths:
//! `columns.wgsl`; the Gram product: `gram.wgsl`), and `W = h² Ĥ W̄ Ĥᵀ` by
//! the rows' 3-vectors at each vertex (`delassus.wgsl`), written where the
//! Newton solve reads `W` and its f32 copy.

use ferrofem::device::{DeviceError, DeviceRows};
use ferrofem_linalg::SparseInverse;

use crate::kernel::{bind, fits, grid, storage, uniform, zeros, Dispatch, LANES};
use crate::Link;

/// No slot: a row outside the reach.
const NONE: u32 = u32::MAX;

/// `S` by columns on the device (shared with the global step's `Sᵀ`
/// SpMV), and what the host needs to find a set of columns' reach: each
/// column's parent in the elimination tree, `D⁻¹` and the column of
/// each vertex.
#[derive(Debug)]
pub(super) struct Columns {
    pub ptr: wgpu::Buffer,
    pub rows: wgpu::Buffer,
    pub vals: wgpu::Buffer,
    parent: Vec<u32>,
    inv_d: Vec<f64>,
    column_of: Vec<u32>,
}

impl Columns {
    /// Uploads `S`'s columns (each an etree path: row `j`, its parent, …).
    pub fn new(g: &Link, s: &SparseInverse) -> Columns {
        let n = s.col_ptr.len() - 1;
        let ptr: Vec<u32> = s.col_ptr.iter().map(|&p| p as u32).collect();
        let rows: Vec<u32> = (0..n).flat_map(|j| s.column(j).map(|(r, _)| r as u32)).collect();
        let parent = (0..n).map(|j| s.column(j).nth(1).map_or(NONE, |(r, _)| r as u32)).collect();
        let mut column_of = vec![0u32; n];
        s.perm().iter().enumerate().for_each(|(j, &v)| column_of[v] = j as u32);
        Columns {
            ptr: storage(g, "S^T entries", &ptr),
            rows: storage(g, "S^T rows", &rows),
            vals: storage(g, "S^T values", &s.values),
            parent,
            inv_d: s.inv_d().to_vec(),
            column_of,
        }
    }
}

/// A step's rows grouped by vertex, and the vertices they touch: row `j`'s
/// entries at `ptr[j]..ptr[j + 1]`, each a column of `W̄` and `h` times the
/// row's three coefficients there.
#[derive(Debug, Default, PartialEq)]
struct ByVertex {
    ptr: Vec<u32>,
    column: Vec<u32>,
    coef: Vec<f64>,
    vertices: Vec<u32>,
}

impl ByVertex {
    fn new(rows: &DeviceRows, h: f64) -> ByVertex {
        let mut vertices: Vec<u32> = rows.dofs.iter().map(|&d| d / 3).collect();
        vertices.sort_unstable();
        vertices.dedup();
        let mut out = ByVertex { ptr: vec![0], vertices, ..Default::default() };
        for j in 0..rows.rows() {
            let range = rows.row_ptr[j] as usize..rows.row_ptr[j + 1] as usize;
            let mut entries: Vec<(u32, u32, f64)> =
                range.map(|k| (rows.dofs[k] / 3, rows.dofs[k] % 3, rows.coef[k])).collect();
            entries.sort_by_key(|&(v, d, _)| (v, d));
            for (i, &(v, d, c)) in entries.iter().enumerate() {
                if i == 0 || entries[i - 1].0 != v {
                    let a = out.vertices.binary_search(&v).expect("a touched vertex") as u32;
                    out.column.push(a);
                    out.coef.extend([0.0; 3]);
                }
                let last = out.coef.len() - 3;
                out.coef[last + d as usize] += h * c;
            }
            out.ptr.push(out.column.len() as u32);
        }
        out
    }
}

/// The kernels of one build, recorded into a frame's submission.
#[derive(Debug)]
pub(super) struct DelassusBuild {
    z: wgpu::Buffer,
    dispatches: [Dispatch; 3],
    /// Rows and touched vertices, for the stats.
    pub vertices: usize,
}

/// Bytes a build needs in one binding (`Z`, `W̄`), for the check before.
fn sizes(reach: usize, m: usize) -> [(String, usize); 2] {
    [
        (format!("Z of {reach} reach rows × {m} columns"), 8 * reach * m),
        (format!("W̄ of {m} vertices"), 8 * m * m),
    ]
}

impl DelassusBuild {
    /// Whether a build for `rows` fits the adapter's bindings.
    pub fn fits(g: &Link, columns: &Columns, rows: &DeviceRows) -> Result<(), DeviceError> {
        let by = ByVertex::new(rows, 1.0);
        let (_, reach) = reach(columns, &by.vertices);
        sizes(reach.len(), by.vertices.len()).iter().try_for_each(|(what, bytes)| fits(g, what, *bytes))
    }

    /// Uploads the rows by vertex and the reach; the kernels write `W`
    /// into `w` and `w32` (row-major) and, with `scale_at`, its diagonal
    /// into `v` from there.
    pub fn new(
        g: &Link,
        columns: &Columns,
        rows: &DeviceRows,
        h: f64,
        [w, w32, v]: [&wgpu::Buffer; 3],
        scale_at: Option<usize>,
    ) -> Result<DelassusBuild, DeviceError> {
        let by = ByVertex::new(rows, h);
        let (m, c) = (by.vertices.len(), rows.rows());
        let (slot, reach) = reach(columns, &by.vertices);
        let r = reach.len();
        sizes(r, m).iter().try_for_each(|(what, bytes)| fits(g, what, *bytes))?;
        let rw = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
        let z = zeros(g, "Z", r * m, rw);
        let wbar = zeros(g, "W̄", m * m, rw);
        let start: Vec<u32> = by.vertices.iter().map(|&v| columns.column_of[v as usize]).collect();
        let inv_d: Vec<f64> = reach.iter().map(|&row| columns.inv_d[row as usize]).collect();
        let gather = {
            let pipeline = g.pipeline("columns", include_str!("../shaders/columns.wgsl"));
            let groups = grid(m as u32);
            let b = [
                uniform(g, &[m as u32, r as u32, groups.0, 0]),
                storage(g, "starts", &start),
                storage(g, "slots", &slot),
            ];
            let buffers = [&b[0], &columns.ptr, &columns.rows, &columns.vals, &b[1], &b[2], &z];
            Dispatch { group: bind(g, &pipeline, &buffers), pipeline, grid: groups }
        };
        let gram = {
            let pipeline = g.pipeline("gram", include_str!("../shaders/gram.wgsl"));
            let tiles = (m as u32).div_ceil(16);
            let b = [uniform(g, &[m as u32, r as u32]), storage(g, "inv_d", &inv_d)];
            Dispatch { group: bind(g, &pipeline, &[&b[0], &z, &b[1], &wbar]), pipeline, grid: (tiles, tiles) }
        };
        let delassus = {
            let pipeline = g.pipeline("delassus", include_str!("../shaders/delassus.wgsl"));
            let groups = grid(((c * c) as u32).div_ceil(LANES));
            let scale = scale_at.map_or(NONE, |at| at as u32);
            let b = [
                uniform(g, &[c as u32, m as u32, groups.0 * LANES, scale]),
                storage(g, "row vertex entries", &by.ptr),
                storage(g, "row vertex columns", &by.column),
                storage(g, "h H by vertex", &by.coef),
            ];
            let buffers = [&b[0], &b[1], &b[2], &b[3], &wbar, w, w32, v];
            Dispatch { group: bind(g, &pipeline, &buffers), pipeline, grid: groups }
        };
        Ok(DelassusBuild { z, dispatches: [gather, gram, delassus], vertices: m })
    }

    /// Records the build: `Z` cleared, gathered, `W̄`, then `W`.
    pub fn record(&self, g: &Link, encoder: &mut wgpu::CommandEncoder) {
        encoder.clear_buffer(&self.z, 0, None);
        let mut pass = g.pass(encoder, None);
        self.dispatches.iter().for_each(|d| d.record(g, &mut pass));
    }
}

/// The reach of the columns at `vertices`: each row's slot ([`NONE`]
/// outside) and the rows in slot order (the union of their etree paths).
fn reach(columns: &Columns, vertices: &[u32]) -> (Vec<u32>, Vec<u32>) {
    let mut slot = vec![NONE; columns.parent.len()];
    let mut rows = Vec::new();
    for &v in vertices {
        let mut j = columns.column_of[v as usize];
        while j != NONE && slot[j as usize] == NONE {
            slot[j as usize] = rows.len() as u32;
            rows.push(j);
            j = columns.parent[j as usize];
        }
    }
    (slot, rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row's entries grouped by vertex, `h` times each axis's
    /// coefficient; the touched vertices sorted.
    #[test]
    fn rows_are_grouped_by_vertex() {
        let rows = DeviceRows {
            row_ptr: vec![0, 3, 4],
            dofs: vec![7, 6, 2, 8],
            coef: vec![1.0, 2.0, 3.0, 4.0],
            gaps: vec![0.0; 2],
        };
        let by = ByVertex::new(&rows, 0.5);
        assert_eq!(by.vertices, [0, 2]);
        assert_eq!(by.ptr, [0, 2, 3]);
        assert_eq!(by.column, [0, 1, 1]);
        assert_eq!(by.coef, [0.0, 0.0, 1.5, 1.0, 0.5, 0.0, 0.0, 0.0, 2.0]);
    }
}
