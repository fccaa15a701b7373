// One level of the isolated-DOF columns' forward substitution (zeng2022
// eq. 23): Z = L⁻¹ P Īᵀ, dense over the reach (the union of the columns'
// etree paths). The reach is cut into chains (paths whose rows have one
// child each, e.g. a separator); a chain depends only on chains of lower
// levels, so every (chain, column) pair of a level is one invocation,
// which walks its chain's rows in order:
// z[c, s(i)] = [i = start(c)] − Σ_{j < i} L_ij z[c, s(j)], j over row i of L,
// terms whose j lies outside the reach being zero.

struct Level {
    // Chains of this level: first .. first + count; chain k's rows are
    // chain_rows[chain_ptr[k] .. chain_ptr[k + 1]].
    first: u32,
    count: u32,
    // Columns (isolated DOFs) and reach rows (the leading dimension of z).
    columns: u32,
    reach: u32,
    // Invocations along x of the dispatch grid.
    stride: u32,
}

const NONE: u32 = 0xffffffffu;

@group(0) @binding(0) var<uniform> level: Level;
@group(0) @binding(1) var<storage, read> l_ptr: array<u32>;
@group(0) @binding(2) var<storage, read> l_col: array<u32>;
@group(0) @binding(3) var<storage, read> l_val: array<f64>;
@group(0) @binding(4) var<storage, read> chain_ptr: array<u32>;
@group(0) @binding(5) var<storage, read> chain_rows: array<u32>;
@group(0) @binding(6) var<storage, read> slot: array<u32>;
@group(0) @binding(7) var<storage, read> start: array<u32>;
@group(0) @binding(8) var<storage, read_write> z: array<f64>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let t = id.x + id.y * level.stride;
    if t >= level.count * level.columns {
        return;
    }
    let c = t / level.count;
    let chain = level.first + t % level.count;
    let col = c * level.reach;
    for (var r = chain_ptr[chain]; r < chain_ptr[chain + 1u]; r++) {
        let i = chain_rows[r];
        var acc = f64(0.0);
        if start[c] == i {
            acc = f64(1.0);
        }
        for (var k = l_ptr[i]; k < l_ptr[i + 1u]; k++) {
            let s = slot[l_col[k]];
            if s != NONE {
                acc -= l_val[k] * z[col + s];
            }
        }
        z[col + slot[i]] = acc;
    }
}
