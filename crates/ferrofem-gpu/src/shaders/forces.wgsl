// A contact frame's constraint forces in the global step's right-hand
// side (zeng2025 eq. 23b): b[d] += Σ_k coef[k] · (λ[row[k]] − mode · λᵏ[row[k]])
// over the entries of each DOF d the rows touch, coef = h² H_jd: h² Hᵀ λ
// before the global step (mode 0), the correction's h² Hᵀ Δλ after the
// solve (mode 1), whose global step then gives q + h² A⁻¹ Hᵀ Δλ. One
// touched DOF per invocation; its entries in a fixed order.

struct Dims {
    dofs: u32,
    // Invocations along x of the dispatch grid.
    stride: u32,
    mode: u32,
}

@group(0) @binding(0) var<uniform> dims: Dims;
@group(0) @binding(1) var<storage, read> dof_ptr: array<u32>;
@group(0) @binding(2) var<storage, read> row: array<u32>;
@group(0) @binding(3) var<storage, read> coef: array<f64>;
@group(0) @binding(4) var<storage, read> dof: array<u32>;
@group(0) @binding(5) var<storage, read> lambda: array<f64>;
@group(0) @binding(6) var<storage, read> previous: array<f64>;
@group(0) @binding(7) var<storage, read_write> b: array<f64>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x + id.y * dims.stride;
    if i >= dims.dofs {
        return;
    }
    let keep = f64(dims.mode);
    var f = f64(0.0);
    for (var k = dof_ptr[i]; k < dof_ptr[i + 1u]; k++) {
        let j = row[k];
        f += coef[k] * (lambda[j] - keep * previous[j]);
    }
    b[dof[i]] += f;
}
