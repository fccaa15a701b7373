// W = h² Ĥ W̄ Ĥᵀ (zeng2025 eq. 26–27 with A = A_s ⊗ I₃): entry (j, l) is
// Σ_p Σ_q (c_p · c_q) W̄[a_p, a_q] over the vertex entries p of row j and
// q of row l, c the 3-vector of a row's coefficients at a vertex times h, a the
// vertex's column in W̄ = A_s⁻¹ over the touched vertices (`gram.wgsl`'s
// lower triangle, W̄[a, b] at min·m + max). Written in f64 and rounded to
// f32 where the Newton solve reads them, and, when asked, W's diagonal as
// the complementarity scale r. One entry per invocation; its terms in a
// fixed order.

struct Dims {
    rows: u32,
    // Columns of W̄.
    columns: u32,
    // Invocations along x of the dispatch grid.
    stride: u32,
    // Where in `v` r starts (the solve's SCALE vector), or 0xffffffff.
    scale_at: u32,
}

@group(0) @binding(0) var<uniform> dims: Dims;
// Row j's vertex entries at ptr[j]..ptr[j + 1]: their column in W̄ and c.
@group(0) @binding(1) var<storage, read> ptr: array<u32>;
@group(0) @binding(2) var<storage, read> column: array<u32>;
@group(0) @binding(3) var<storage, read> coef: array<f64>;
@group(0) @binding(4) var<storage, read> wbar: array<f64>;
@group(0) @binding(5) var<storage, read_write> w: array<f64>;
@group(0) @binding(6) var<storage, read_write> w32: array<f32>;
@group(0) @binding(7) var<storage, read_write> v: array<f64>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let e = id.x + id.y * dims.stride;
    if e >= dims.rows * dims.rows {
        return;
    }
    let j = e / dims.rows;
    let l = e % dims.rows;
    var sum = f64(0.0);
    for (var p = ptr[j]; p < ptr[j + 1u]; p++) {
        for (var q = ptr[l]; q < ptr[l + 1u]; q++) {
            let dot = coef[3u * p] * coef[3u * q] + coef[3u * p + 1u] * coef[3u * q + 1u]
                + coef[3u * p + 2u] * coef[3u * q + 2u];
            let a = column[p];
            let b = column[q];
            sum += dot * wbar[min(a, b) * dims.columns + max(a, b)];
        }
    }
    let entry = sum;
    w[e] = entry;
    w32[e] = f32(entry);
    if j == l && dims.scale_at != 0xffffffffu {
        v[dims.scale_at + j] = entry;
    }
}
