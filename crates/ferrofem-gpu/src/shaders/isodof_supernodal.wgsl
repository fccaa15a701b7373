// One level of the isolated-DOF columns' forward substitution in
// supernodal form (zeng2022 eq. 23): Z = L⁻¹ P Īᵀ, dense over the reach
// (the rows of the supernodes the columns' etree paths cross). A block is
// a supernode of the reach with the columns that cross it (lo .. hi) and
// its rows from rho on; the blocks of a level have all their descendants
// on lower levels, so each of its tasks (a block and a tile of 4 of its
// columns) is independent of the others. A task, left-looking:
//   Z_t ← E_t                    (the unit entries of columns starting in t)
//   Z_t −= L_ts Z_s               for each source s (a descendant block whose
//                                 panel has rows in t), only the columns of s
//   Z_t ← L_tt⁻¹ Z_t              (the unit-lower diagonal block, by columns)
// 64 invocations per column stride over the rows; each sum runs in the
// same order whatever the scheduling. Loop bounds that a barrier follows
// are loaded uniformly (workgroupUniformLoad). Mesa's lavapipe stops a
// loop after 65,535 iterations per invocation, counted over all entries
// into it: the 64 lanes per column, the update's sums unrolled by 4 and
// the triangular solve's by 2 keep a 32k-DOF ball's root supernode (2,136
// columns, 87 sources) at about 14k and 36k.

struct Level {
    // Tasks of this level: first .. first + count.
    first: u32,
    count: u32,
    // Rows of the reach: the leading dimension of z.
    reach: u32,
    // Workgroups along x of the dispatch grid.
    stride: u32,
    // Offsets into `shape`: column pointers of the patterns, panel starts, patterns.
    pattern_ptr: u32,
    panel_ptr: u32,
    pattern: u32,
    // Offsets into `plan`: source pointers per block, sources, tasks, unit entries.
    src_ptr: u32,
    sources: u32,
    tasks: u32,
    starts: u32,
    unused: u32,
}

const TILE: u32 = 4u;
const LANES: u32 = 64u;
// Words of a block in `plan`: supernode, lo, hi, rho, first slot, columns
// starting in it (lo, hi), unused.
const BLOCK: u32 = 8u;

@group(0) @binding(0) var<uniform> level: Level;
// Supernode s owns columns shape[s] .. shape[s + 1] of L; its pattern
// (rows below its diagonal block) is shape[pattern + shape[pattern_ptr + s] ..];
// its panel ((w + q) × w, column-major, each column k from row k + 1 on)
// starts at panels[shape[panel_ptr + s]].
@group(0) @binding(1) var<storage, read> shape: array<u32>;
@group(0) @binding(2) var<storage, read> panels: array<f64>;
// Blocks (BLOCK words each) from 0, then what `level` points at.
@group(0) @binding(3) var<storage, read> plan: array<u32>;
@group(0) @binding(4) var<storage, read_write> z: array<f64>;

// Where L[r, k] (r > k) of a panel lies: column k starts after the
// columns before it, ld − j − 1 entries each.
fn at(base: u32, ld: u32, r: u32, k: u32) -> u32 {
    return base + k * ld - k * (k + 1u) / 2u + r - k - 1u;
}

// The task's block, first column, supernode, width, rho and sources.
var<workgroup> task_info: array<u32, 8>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) i: u32) {
    let task = wg.x + wg.y * level.stride;
    if task >= level.count {
        return;
    }
    if i == 0u {
        let at = level.tasks + 2u * (level.first + task);
        let b = plan[at];
        let sn = plan[BLOCK * b];
        let sources = level.src_ptr + b;
        let w = shape[sn + 1u] - shape[sn];
        task_info = array<u32, 8>(b, plan[at + 1u], sn, w, plan[BLOCK * b + 3u], plan[sources], plan[sources + 1u], 0u);
    }
    let info = workgroupUniformLoad(&task_info);
    let blk = BLOCK * info[0];
    let sn = info[2];
    let w = info[3];
    let rho = info[4];
    let hi = plan[blk + 2u];
    let slot0 = plan[blk + 4u];
    let lane = i % LANES;
    let c = info[1] + i / LANES;
    let live = c < hi;
    let zc = c * level.reach;
    // The unit entries of the columns that start in this block.
    if live && lane == 0u && c >= plan[blk + 5u] && c < plan[blk + 6u] {
        z[zc + plan[level.starts + c]] = f64(1.0);
    }
    storageBarrier();
    // Left-looking updates from the sources, one after another (two
    // sources may reach the same rows).
    let top = shape[sn] + rho;
    for (var k = info[5]; k < info[6]; k++) {
        let e = level.sources + 3u * k;
        let sb = BLOCK * plan[e];
        let ssn = plan[sb];
        let slo = plan[sb + 1u];
        let shi = plan[sb + 2u];
        let srho = plan[sb + 3u];
        let sslot = plan[sb + 4u];
        let sw = shape[ssn + 1u] - shape[ssn];
        let pp = shape[level.pattern_ptr + ssn];
        let ld = sw + shape[level.pattern_ptr + ssn + 1u] - pp;
        let base = shape[level.panel_ptr + ssn];
        if live && c >= slo && c < shi {
            for (var p = plan[e + 1u] + lane; p < plan[e + 2u]; p += LANES) {
                let r = sw + p;
                let zs = zc + sslot - srho;
                var acc = f64(0.0);
                var j = srho;
                for (; j + 4u <= sw; j += 4u) {
                    acc += panels[at(base, ld, r, j)] * z[zs + j] + panels[at(base, ld, r, j + 1u)] * z[zs + j + 1u]
                        + panels[at(base, ld, r, j + 2u)] * z[zs + j + 2u]
                        + panels[at(base, ld, r, j + 3u)] * z[zs + j + 3u];
                }
                for (; j < sw; j++) {
                    acc += panels[at(base, ld, r, j)] * z[zs + j];
                }
                let row = shape[level.pattern + pp + p];
                z[zc + slot0 + row - top] -= acc;
            }
        }
        storageBarrier();
    }
    // The diagonal block, column by column of L.
    let ld = w + shape[level.pattern_ptr + sn + 1u] - shape[level.pattern_ptr + sn];
    let base = shape[level.panel_ptr + sn];
    for (var k = rho; k < w; k++) {
        if live {
            let x = z[zc + slot0 + k - rho];
            for (var r = k + 1u + lane; r < w; r += 2u * LANES) {
                z[zc + slot0 + r - rho] -= panels[at(base, ld, r, k)] * x;
                let s = r + LANES;
                if s < w {
                    z[zc + slot0 + s - rho] -= panels[at(base, ld, s, k)] * x;
                }
            }
        }
        storageBarrier();
    }
}
