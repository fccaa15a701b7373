#!/usr/bin/env python3
"""zeng2022 Table 1's direct-solver row by Intel MKL PARDISO (the `mkl`
wheel, through its C interface): the augmented system [A Hᵀ; H 0] is
factorized with the Schur complement on H's rows (iparm[35] = 2), which is
-W = -H A⁻¹ Hᵀ, and its partial solves (phases 331, 332, 333) give the
free motion A⁻¹ b (the Schur part of the solution set to 0) and the
corrective motion A⁻¹ Hᵀ λ (the right-hand side 0, the Schur part -λ), as
the paper uses the one factorization for all three.

usage: pardiso_step.py A.mtx H.mtx P.txt THREADS
A: symmetric (lower triangle), H: c × n constraint Jacobian, P: c probe
values, THREADS: PARDISO's threads. Prints JSON, each time the median of
three runs in ms: analysis_ms (reordering and symbolic factorization of the
augmented system), factor_schur_ms (its numeric factorization with the
Schur complement), factor_a_ms (the numeric factorization of A alone, the
same solver: the difference is what W costs), free_ms, corr_ms, and
w_times_probe (W p, to check W against ours), nnz_factor (PARDISO's
iparm[17]) and version.

Installs what it needs when missing (`pip install mkl==2026.2.1 numpy scipy`:
the MKL that pypardiso builds on, whose solver class does not expose the
Schur-complement mode, so PARDISO's C interface is called here); exit
code 2 when PARDISO is unavailable.
"""
import ctypes
import json
import os
import subprocess
import sys
import time


def load_mkl():
    """libmkl_rt, installing the `mkl` wheel when it is missing (or None)."""
    for attempt in range(2):
        for name in ("libmkl_rt.so.3", "libmkl_rt.so.2", "libmkl_rt.so"):
            for path in (name, os.path.join(sys.prefix, "lib", name)):
                try:
                    return ctypes.CDLL(path)
                except OSError:
                    pass
        if attempt == 0:
            try:
                subprocess.run([sys.executable, "-m", "pip", "install", "-q", "mkl==2026.2.1", "numpy", "scipy"],
                               check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               timeout=1800)
            except Exception as e:  # noqa: BLE001
                print(f"PARDISO unavailable: {e}", file=sys.stderr)
                return None
    print("PARDISO unavailable: libmkl_rt not found after installing mkl", file=sys.stderr)
    return None


class Pardiso:
    """One PARDISO handle on a symmetric matrix (upper triangle, CSR, 0-based)."""

    def __init__(self, mkl, upper, mtype, schur_rows=0):
        import numpy as np

        self.mkl, self.np = mkl, np
        self.n = upper.shape[0]
        self.a = upper.data.astype(np.float64)
        self.ia = upper.indptr.astype(np.int32)
        self.ja = upper.indices.astype(np.int32)
        self.pt = np.zeros(64, dtype=np.int64)
        self.iparm = np.zeros(64, dtype=np.int32)
        self.mtype = ctypes.c_int32(mtype)
        mkl.pardisoinit(self._p(self.pt), ctypes.byref(self.mtype), self._p(self.iparm))
        self.iparm[34] = 1  # zero-based indices
        self.perm = np.zeros(self.n, dtype=np.int32)
        self.schur = schur_rows
        if schur_rows:
            self.iparm[35] = 2  # Schur complement, the partial factorization kept for 331–333
            self.perm[self.n - schur_rows:] = 1

    @staticmethod
    def _p(array):
        return array.ctypes.data_as(ctypes.c_void_p)

    def call(self, phase, b, x):
        """One PARDISO phase; raises on a nonzero error code."""
        i32, one, err = ctypes.c_int32, ctypes.c_int32(1), ctypes.c_int32(0)
        self.mkl.pardiso(self._p(self.pt), ctypes.byref(one), ctypes.byref(one), ctypes.byref(self.mtype),
                         ctypes.byref(i32(phase)), ctypes.byref(i32(self.n)), self._p(self.a), self._p(self.ia),
                         self._p(self.ja), self._p(self.perm), ctypes.byref(one), self._p(self.iparm),
                         ctypes.byref(i32(0)), self._p(b), self._p(x), ctypes.byref(err))
        if err.value != 0:
            raise RuntimeError(f"PARDISO phase {phase}: error {err.value}")
        return x

    def release(self):
        dummy = self.np.zeros(1)
        self.call(-1, dummy, dummy)


def timed(f, repeats=3):
    """Median ms of `repeats` calls of f, and f's last result."""
    times, out = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        out = f()
        times.append((time.perf_counter() - t) * 1e3)
    times.sort()
    return times[len(times) // 2], out


def main():
    if len(sys.argv) != 5:
        print("usage: pardiso_step.py A.mtx H.mtx P.txt THREADS", file=sys.stderr)
        return 2
    mkl = load_mkl()
    if mkl is None:
        return 2
    import numpy as np
    import scipy.io
    import scipy.sparse as sp

    # Its own thread count: the caller pins OpenMP to one thread for BLAS.
    mkl.MKL_Set_Num_Threads(ctypes.c_int(int(sys.argv[4])))
    a = scipy.io.mmread(sys.argv[1]).tocsr()
    h = scipy.io.mmread(sys.argv[2]).tocsr()
    probe = np.loadtxt(sys.argv[3], ndmin=1)
    n, c = a.shape[0], h.shape[0]
    # Upper triangle of [A Hᵀ; H 0], the Schur block's diagonal stored as
    # explicit zeros (PARDISO's symmetric types need every diagonal entry).
    ua, ht = sp.triu(a, format="coo"), h.tocoo()
    rows = np.r_[ua.row, ht.col, n + np.arange(c)]
    cols = np.r_[ua.col, n + ht.row, n + np.arange(c)]
    vals = np.r_[ua.data, ht.data, np.zeros(c)]
    k = sp.coo_matrix((vals, (rows, cols)), shape=(n + c, n + c)).tocsr()
    k.sort_indices()
    upper_a = sp.triu(a, format="csr")
    upper_a.sort_indices()

    zero = np.zeros(1)
    handles = []

    def analysed():
        # A fresh handle each time: PARDISO analyses a handle once.
        handles.append(Pardiso(mkl, k, -2, schur_rows=c))
        return handles[-1].call(11, zero, zero)

    analysis_ms, _ = timed(analysed)
    for old in handles[:-1]:
        old.release()
    aug = handles[-1]
    schur = np.zeros(c * c)
    factor_schur_ms, _ = timed(lambda: aug.call(22, zero, schur))
    w = -schur.reshape(c, c)

    def partial_solve(rhs, y):
        z = aug.call(331, rhs, np.zeros(n + c))
        z = aug.call(332, z.copy(), np.zeros(n + c))
        z[n:] = y
        return aug.call(333, z, np.zeros(n + c))[:n]

    b = np.cos(np.arange(n) * 0.37)
    lam = np.sin(np.arange(c) * 0.61)
    free_ms, free = timed(lambda: partial_solve(np.r_[b, np.zeros(c)], np.zeros(c)))
    corr_ms, corr = timed(lambda: partial_solve(np.zeros(n + c), -lam))
    nnz_factor = int(aug.iparm[17])
    aug.release()

    alone = Pardiso(mkl, upper_a, 2)
    alone.call(11, zero, zero)
    factor_a_ms, _ = timed(lambda: alone.call(22, zero, zero))
    # The partial solves checked against the factor of A alone.
    x = np.zeros(n)
    solve = lambda rhs: alone.call(33, rhs.copy(), x.copy())  # noqa: E731
    err_free = float(np.abs(free - solve(b)).max() / max(np.abs(free).max(), 1e-300))
    err_corr = float(np.abs(corr - solve(h.T @ lam)).max() / max(np.abs(corr).max(), 1e-300))
    alone.release()
    print(json.dumps({
        "analysis_ms": analysis_ms,
        "factor_schur_ms": factor_schur_ms,
        "factor_a_ms": factor_a_ms,
        "free_ms": free_ms,
        "corr_ms": corr_ms,
        "free_rel_err": err_free,
        "corr_rel_err": err_corr,
        "nnz_factor": nnz_factor,
        "threads": int(sys.argv[4]),
        "w_times_probe": (w @ probe).tolist(),
        "version": mkl_version(mkl),
    }))
    return 0


def mkl_version(mkl):
    """MKL's version string."""
    buf = ctypes.create_string_buffer(256)
    try:
        mkl.MKL_Get_Version_String(buf, ctypes.c_int(256))
        return buf.value.decode().strip()
    except AttributeError:
        return "unknown"


if __name__ == "__main__":
    sys.exit(main())
