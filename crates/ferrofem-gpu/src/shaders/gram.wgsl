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
        for (var q = 0u; q < TILE; q++) {
            acc += za[l.y][q] * zb[l.x][q];
        }
        workgroupBarrier();
    }
    if a < dims.columns && b < dims.columns {
        w[b * dims.columns + a] = acc;
    }
}
