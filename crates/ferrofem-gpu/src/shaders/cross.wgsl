// A new generation's block of the cached W̄ against an older one
// (zeng2022 §5, eq. 29): C = Z_aᵀ D⁻¹ Z_b over the rows both reaches hold,
// listed as pairs of slots (pair_a[k], pair_b[k]) with 1/d of the row.
// 16 × 16 tiles of C, one per workgroup, the pairs staged 16 at a time;
// C is `columns_a × columns_b` column-major, written at column offset
// `offset` of `out` (leading dimension `columns_a`).

struct Dims {
    columns_a: u32,
    columns_b: u32,
    pairs: u32,
    reach_a: u32,
    reach_b: u32,
    offset: u32,
}

@group(0) @binding(0) var<uniform> dims: Dims;
@group(0) @binding(1) var<storage, read> za: array<f64>;
@group(0) @binding(2) var<storage, read> zb: array<f64>;
@group(0) @binding(3) var<storage, read> pair_a: array<u32>;
@group(0) @binding(4) var<storage, read> pair_b: array<u32>;
@group(0) @binding(5) var<storage, read> inv_d: array<f64>;
@group(0) @binding(6) var<storage, read_write> out: array<f64>;

const TILE: u32 = 16u;
var<workgroup> ta: array<array<f64, 16>, 16>;
var<workgroup> tb: array<array<f64, 16>, 16>;

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) l: vec3<u32>) {
    let a = wg.y * TILE + l.y;
    let b = wg.x * TILE + l.x;
    // Columns this invocation loads: row l.y of a's tile, row l.y of b's.
    let la = wg.y * TILE + l.y;
    let lb = wg.x * TILE + l.y;
    var acc = f64(0.0);
    for (var k0 = 0u; k0 < dims.pairs; k0 += TILE) {
        let k = k0 + l.x;
        var va = f64(0.0);
        var vb = f64(0.0);
        if k < dims.pairs {
            if la < dims.columns_a {
                va = za[la * dims.reach_a + pair_a[k]] * inv_d[k];
            }
            if lb < dims.columns_b {
                vb = zb[lb * dims.reach_b + pair_b[k]];
            }
        }
        ta[l.y][l.x] = va;
        tb[l.y][l.x] = vb;
        workgroupBarrier();
        // Unrolled, as in gram.wgsl (lavapipe's 65,535-iteration cap).
        let x = &ta[l.y];
        let y = &tb[l.x];
        acc += (*x)[0] * (*y)[0];
        acc += (*x)[1] * (*y)[1];
        acc += (*x)[2] * (*y)[2];
        acc += (*x)[3] * (*y)[3];
        acc += (*x)[4] * (*y)[4];
        acc += (*x)[5] * (*y)[5];
        acc += (*x)[6] * (*y)[6];
        acc += (*x)[7] * (*y)[7];
        acc += (*x)[8] * (*y)[8];
        acc += (*x)[9] * (*y)[9];
        acc += (*x)[10] * (*y)[10];
        acc += (*x)[11] * (*y)[11];
        acc += (*x)[12] * (*y)[12];
        acc += (*x)[13] * (*y)[13];
        acc += (*x)[14] * (*y)[14];
        acc += (*x)[15] * (*y)[15];
        workgroupBarrier();
    }
    if a < dims.columns_a && b < dims.columns_b {
        out[(dims.offset + b) * dims.columns_a + a] = acc;
    }
}
