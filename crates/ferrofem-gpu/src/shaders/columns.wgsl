// The columns of the resident sparse inverse S = L⁻¹ at a set of the
// scalar global matrix's vertices, gathered dense over their reach
// (zeng2025 §5.1: `W` from the stored `S`): Z[a, slot(r)] = S[r, j_a] for
// every row r of column j_a (an etree path). One workgroup per column;
// its 64 lanes stride over the column's entries. Z is zero elsewhere (the
// host clears it first).

struct Dims {
    columns: u32,
    reach: u32,
    // Workgroups along x of the dispatch grid.
    stride: u32,
}

@group(0) @binding(0) var<uniform> dims: Dims;
// S by columns: entries of column j at ptr[j]..ptr[j + 1], their rows and values.
@group(0) @binding(1) var<storage, read> ptr: array<u32>;
@group(0) @binding(2) var<storage, read> rows: array<u32>;
@group(0) @binding(3) var<storage, read> vals: array<f64>;
// Column j_a of each gathered column a, and each row's slot in the reach.
@group(0) @binding(4) var<storage, read> start: array<u32>;
@group(0) @binding(5) var<storage, read> slot: array<u32>;
@group(0) @binding(6) var<storage, read_write> z: array<f64>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) i: u32) {
    let a = wg.x + wg.y * dims.stride;
    if a >= dims.columns {
        return;
    }
    let j = start[a];
    for (var k = ptr[j] + i; k < ptr[j + 1u]; k += 64u) {
        z[a * dims.reach + slot[rows[k]]] = vals[k];
    }
}
