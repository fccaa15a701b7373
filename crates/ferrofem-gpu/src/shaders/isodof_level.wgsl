// One level of the isolated-DOF columns' forward substitution (zeng2022
// eq. 23): Z = L⁻¹ P Īᵀ, dense over the reach (the union of the columns'
// etree paths). The reach is cut into chains (paths whose rows have one
// child each, e.g. a separator, at most CHAIN rows); a chain depends only
// on chains of lower levels, so every (chain, column) pair of a level is
// independent. A pair walks its chain's rows in order with 8 lanes, which
// stride over row i of L and sum by a fixed tree:
// z[c, s(i)] = [i = start(c)] − Σ_{j < i} L_ij z[c, s(j)],
// terms whose j lies outside the reach being zero. Eight pairs per
// workgroup of 64. (Short loops per invocation also matter on Mesa's
// lavapipe, which stops a loop after 65,535 iterations.)

struct Level {
    // Chains of this level: first .. first + count; chain k's rows are
    // chain_rows[chain_ptr[k] .. chain_ptr[k + 1]].
    first: u32,
    count: u32,
    // Columns (isolated DOFs) and reach rows (the leading dimension of z).
    columns: u32,
    reach: u32,
    // Workgroups along x of the dispatch grid.
    stride: u32,
}

const NONE: u32 = 0xffffffffu;
const LANES: u32 = 8u;
const PAIRS: u32 = 8u;
// Most rows of a chain (the host cuts chains at this length).
const CHAIN: u32 = 16u;

@group(0) @binding(0) var<uniform> level: Level;
@group(0) @binding(1) var<storage, read> l_ptr: array<u32>;
@group(0) @binding(2) var<storage, read> l_col: array<u32>;
@group(0) @binding(3) var<storage, read> l_val: array<f64>;
@group(0) @binding(4) var<storage, read> chain_ptr: array<u32>;
@group(0) @binding(5) var<storage, read> chain_rows: array<u32>;
@group(0) @binding(6) var<storage, read> slot: array<u32>;
@group(0) @binding(7) var<storage, read> start: array<u32>;
@group(0) @binding(8) var<storage, read_write> z: array<f64>;

var<workgroup> part: array<f64, 64>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) i: u32) {
    let lane = i % LANES;
    let t = (wg.x + wg.y * level.stride) * PAIRS + i / LANES;
    let live = t < level.count * level.columns;
    var c = 0u;
    var first = 0u;
    var len = 0u;
    if live {
        c = t / level.count;
        let chain = level.first + t % level.count;
        first = chain_ptr[chain];
        len = chain_ptr[chain + 1u] - first;
    }
    let col = c * level.reach;
    for (var q = 0u; q < CHAIN; q++) {
        let on = live && q < len;
        var row = 0u;
        var acc = f64(0.0);
        if on {
            row = chain_rows[first + q];
            for (var k = l_ptr[row] + lane; k < l_ptr[row + 1u]; k += LANES) {
                let s = slot[l_col[k]];
                if s != NONE {
                    acc -= l_val[k] * z[col + s];
                }
            }
        }
        part[i] = acc;
        workgroupBarrier();
        for (var s = LANES / 2u; s > 0u; s = s / 2u) {
            if lane < s {
                part[i] += part[i + s];
            }
            workgroupBarrier();
        }
        if on && lane == 0u {
            var v = part[i];
            if start[c] == row {
                v += f64(1.0);
            }
            z[col + slot[row]] = v;
        }
        // The row just written is read by the pair's lanes for the next.
        storageBarrier();
    }
}
