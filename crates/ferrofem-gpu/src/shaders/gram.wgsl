// W̄ = Zᵀ D⁻¹ Z (zeng2022 eq. 24) for Z `reach × m` column-major: the
// lower triangle's 16 × 16 tiles, one per workgroup (the host mirrors
// them), Z staged through workgroup memory 16 rows at a time; each entry
// summed in the same order whatever the scheduling.

struct Dims {
    columns: u32,
    reach: u32,
}

@group(0) @binding(0) var<uniform> dims: Dims;
@group(0) @binding(1) var<storage, read> z: array<f64>;
@group(0) @binding(2) var<storage, read> inv_d: array<f64>;
@group(0) @binding(3) var<storage, read_write> w: array<f64>;

const TILE: u32 = 16u;
var<workgroup> za: array<array<f64, 16>, 16>;
var<workgroup> zb: array<array<f64, 16>, 16>;

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) l: vec3<u32>) {
    if wg.x > wg.y {
        return;
    }
    let a = wg.y * TILE + l.y;
    let b = wg.x * TILE + l.x;
    // Columns this invocation loads: row l.y of a's tile, row l.x of b's.
    let la = wg.y * TILE + l.y;
    let lb = wg.x * TILE + l.y;
    var acc = f64(0.0);
    for (var r0 = 0u; r0 < dims.reach; r0 += TILE) {
        let r = r0 + l.x;
        var va = f64(0.0);
        var vb = f64(0.0);
        if r < dims.reach {
            if la < dims.columns {
                va = z[la * dims.reach + r] * inv_d[r];
            }
            if lb < dims.columns {
                vb = z[lb * dims.reach + r];
            }
        }
        za[l.y][l.x] = va;
        zb[l.y][l.x] = vb;
        workgroupBarrier();
        // Unrolled: lavapipe caps a loop at 65,535 iterations per
        // invocation, which an inner loop over q would reach at 4,096
        // tiles of the reach.
        let a = &za[l.y];
        let b = &zb[l.x];
        acc += (*a)[0] * (*b)[0];
        acc += (*a)[1] * (*b)[1];
        acc += (*a)[2] * (*b)[2];
        acc += (*a)[3] * (*b)[3];
        acc += (*a)[4] * (*b)[4];
        acc += (*a)[5] * (*b)[5];
        acc += (*a)[6] * (*b)[6];
        acc += (*a)[7] * (*b)[7];
        acc += (*a)[8] * (*b)[8];
        acc += (*a)[9] * (*b)[9];
        acc += (*a)[10] * (*b)[10];
        acc += (*a)[11] * (*b)[11];
        acc += (*a)[12] * (*b)[12];
        acc += (*a)[13] * (*b)[13];
        acc += (*a)[14] * (*b)[14];
        acc += (*a)[15] * (*b)[15];
        workgroupBarrier();
    }
    if a < dims.columns && b < dims.columns {
        w[b * dims.columns + a] = acc;
    }
}
