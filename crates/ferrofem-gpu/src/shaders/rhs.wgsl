// The global step's right-hand side (zeng2025 eq. 6):
// b[3v + d] = c[3v + d] + Σ_k coef[k] · p[base[k] + d], the constant part
// c = M q̃ + h² Σ w_pin t (+ constraint forces) from the host, the
// projections p of the local step resident, coef = h² w g precomputed. One
// vertex per invocation; its entries in a fixed order.

struct Dims {
    vertices: u32,
    // Invocations along x of the dispatch grid.
    stride: u32,
}

@group(0) @binding(0) var<uniform> dims: Dims;
@group(0) @binding(1) var<storage, read> vertex_ptr: array<u32>;
@group(0) @binding(2) var<storage, read> base: array<u32>;
@group(0) @binding(3) var<storage, read> coef: array<f64>;
@group(0) @binding(4) var<storage, read> c: array<f64>;
@group(0) @binding(5) var<storage, read> p: array<f64>;
@group(0) @binding(6) var<storage, read_write> b: array<f64>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let v = id.x + id.y * dims.stride;
    if v >= dims.vertices {
        return;
    }
    var a0 = c[3u * v];
    var a1 = c[3u * v + 1u];
    var a2 = c[3u * v + 2u];
    for (var k = vertex_ptr[v]; k < vertex_ptr[v + 1u]; k++) {
        let w = coef[k];
        let i = base[k];
        a0 += w * p[i];
        a1 += w * p[i + 1u];
        a2 += w * p[i + 2u];
    }
    b[3u * v] = a0;
    b[3u * v + 1u] = a1;
    b[3u * v + 2u] = a2;
}
