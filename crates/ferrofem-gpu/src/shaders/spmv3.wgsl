// y[out[r]] = scale[r] · Σ_k vals[k] · x[cols[k]] for three right-hand
// sides interleaved per index (x[3c + d]): eight rows per workgroup of 64,
// each row's entries strided over 8 lanes and summed by a fixed tree (the
// result does not depend on scheduling). Rows of S range from one entry
// (a leaf's) to all n (the root's); 8 lanes keep short rows from idling
// a whole workgroup.

struct Dims {
    rows: u32,
    // Workgroups along x of the dispatch grid (beyond 65535 they go to y).
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

const LANES: u32 = 8u;
const ROWS: u32 = 8u;
var<workgroup> sum0: array<f64, 64>;
var<workgroup> sum1: array<f64, 64>;
var<workgroup> sum2: array<f64, 64>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) i: u32) {
    let lane = i % LANES;
    let r = (wg.x + wg.y * dims.stride) * ROWS + i / LANES;
    var a0 = f64(0.0);
    var a1 = f64(0.0);
    var a2 = f64(0.0);
    if r < dims.rows {
        let end = row_ptr[r + 1u];
        for (var k = row_ptr[r] + lane; k < end; k += LANES) {
            let v = vals[k];
            let c = 3u * cols[k];
            a0 += v * x[c];
            a1 += v * x[c + 1u];
            a2 += v * x[c + 2u];
        }
    }
    sum0[i] = a0;
    sum1[i] = a1;
    sum2[i] = a2;
    workgroupBarrier();
    for (var s = LANES / 2u; s > 0u; s = s / 2u) {
        if lane < s {
            sum0[i] += sum0[i + s];
            sum1[i] += sum1[i + s];
            sum2[i] += sum2[i + s];
        }
        workgroupBarrier();
    }
    if lane == 0u && r < dims.rows {
        let o = 3u * out_index[r];
        let f = scale[r];
        y[o] = f * sum0[i];
        y[o + 1u] = f * sum1[i];
        y[o + 2u] = f * sum2[i];
    }
}
