// The gaps of a contact frame's rows (zeng2025 eq. 40, affine in q):
// δ(q)_j = g_j + Σ_k coef[k] · q[dofs[k]] over row j's entries, written
// where the Newton solve reads the gaps it starts from (its FREE vector,
// from element `at` of `v`). One row per invocation; its entries in a
// fixed order.

struct Dims {
    rows: u32,
    // Invocations along x of the dispatch grid.
    stride: u32,
    // Where in `v` row 0's gap goes.
    at: u32,
}

@group(0) @binding(0) var<uniform> dims: Dims;
@group(0) @binding(1) var<storage, read> row_ptr: array<u32>;
@group(0) @binding(2) var<storage, read> dofs: array<u32>;
@group(0) @binding(3) var<storage, read> coef: array<f64>;
@group(0) @binding(4) var<storage, read> g: array<f64>;
@group(0) @binding(5) var<storage, read> q: array<f64>;
@group(0) @binding(6) var<storage, read_write> v: array<f64>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let j = id.x + id.y * dims.stride;
    if j >= dims.rows {
        return;
    }
    var d = g[j];
    for (var k = row_ptr[j]; k < row_ptr[j + 1u]; k++) {
        d += coef[k] * q[dofs[k]];
    }
    v[dims.at + j] = d;
}
