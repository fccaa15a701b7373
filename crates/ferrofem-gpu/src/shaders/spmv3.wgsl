// y[out[r]] = scale[r] · Σ_k vals[k] · x[cols[k]] for three right-hand
// sides interleaved per index (x[3c + d]): one CSR row per workgroup, its
// entries strided over 64 lanes and summed by a fixed tree (the result does
// not depend on scheduling).

struct Dims {
    rows: u32,
    // Workgroups along x of the dispatch grid (rows beyond 65535 go to y).
    stride: u32,
}

@group(0) @binding(0) var<uniform> dims: Dims;
@group(0) @binding(1) var<storage, read> row_ptr: array<u32>;
@group(0) @binding(2) var<storage, read> cols: array<u32>;
@group(0) @binding(3) var<storage, read> vals: array<f64>;
@group(0) @binding(4) var<storage, read> scale: array<f64>;
@group(0) @binding(5) var<storage, read> out_index: array<u32>;
@group(0) @binding(6) var<storage, read> x: array<f64>;
@group(0) @binding(7) var<storage, read_write> y: array<f64>;

const LANES: u32 = 64u;
var<workgroup> sum0: array<f64, 64>;
var<workgroup> sum1: array<f64, 64>;
var<workgroup> sum2: array<f64, 64>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lane: u32) {
    let r = wg.x + wg.y * dims.stride;
    if r >= dims.rows {
        return;
    }
    var a0 = f64(0.0);
    var a1 = f64(0.0);
    var a2 = f64(0.0);
    let end = row_ptr[r + 1u];
    for (var k = row_ptr[r] + lane; k < end; k += LANES) {
        let v = vals[k];
        let c = 3u * cols[k];
        a0 += v * x[c];
        a1 += v * x[c + 1u];
        a2 += v * x[c + 2u];
    }
    sum0[lane] = a0;
    sum1[lane] = a1;
    sum2[lane] = a2;
    workgroupBarrier();
    for (var s = LANES / 2u; s > 0u; s = s / 2u) {
        if lane < s {
            sum0[lane] += sum0[lane + s];
            sum1[lane] += sum1[lane + s];
            sum2[lane] += sum2[lane + s];
        }
        workgroupBarrier();
    }
    if lane == 0u {
        let o = 3u * out_index[r];
        let f = scale[r];
        y[o] = f * sum0[0];
        y[o + 1u] = f * sum1[0];
        y[o + 2u] = f * sum2[0];
    }
}
