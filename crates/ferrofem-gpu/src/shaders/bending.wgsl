// The local step of a membrane's bending stencils (zeng2025 Table 1's
// bending terms), one stencil per invocation: y = Σₐ cₐ xₐ projected onto
// the sphere ‖p‖ = r of its rest length (`Stencil::project`: p = (y/‖y‖) r,
// zero where y or r is zero).

struct Params {
    stencils: u32,
    // Invocations along x of the dispatch grid.
    stride: u32,
    // Index of the first stencil's projection in `targets`.
    base: u32,
    unused: u32,
}

@group(0) @binding(0) var<uniform> prm: Params;
// Entries of each stencil: `ptr[s]..ptr[s + 1]`.
@group(0) @binding(1) var<storage, read> ptr: array<u32>;
@group(0) @binding(2) var<storage, read> vertices: array<u32>;
@group(0) @binding(3) var<storage, read> coeffs: array<f64>;
@group(0) @binding(4) var<storage, read> rest: array<f64>;
@group(0) @binding(5) var<storage, read> x: array<f64>;
@group(0) @binding(6) var<storage, read_write> targets: array<f64>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let s = id.x + id.y * prm.stride;
    if s >= prm.stencils {
        return;
    }
    var y = array<f64, 3>(f64(0.0), f64(0.0), f64(0.0));
    for (var k = ptr[s]; k < ptr[s + 1u]; k++) {
        let v = vertices[k];
        let c = coeffs[k];
        for (var i = 0u; i < 3u; i++) {
            y[i] += x[3u * v + i] * c;
        }
    }
    let n = sqrt(y[0] * y[0] + y[1] * y[1] + y[2] * y[2]);
    let r = rest[s];
    let out = prm.base + 3u * s;
    for (var i = 0u; i < 3u; i++) {
        var p = f64(0.0);
        if n > f64(0.0) && r > f64(0.0) {
            p = (y[i] / n) * r;
        }
        targets[out + i] = p;
    }
}
