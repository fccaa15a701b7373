#!/usr/bin/env python3
"""The Delassus operator W = H A⁻¹ Hᵀ by CHOLMOD's route (scikit-sparse):
a supernodal LDLᵀ of A, then S = L⁻¹ P Hᵀ by CHOLMOD's sparse-right-hand-side
solve (cholmod_spsolve) and W = Sᵀ D⁻¹ S as a sparse product.

usage: cholmod_delassus.py A.mtx H.mtx P.txt
A: symmetric (lower triangle), H: c × n constraint Jacobian, P: c probe values.
Prints JSON: build_ms (median of 3, the factorization excluded), numeric_ms,
nnz_s (nonzeros of S) and w_times_probe (W p, to check W against ours).
Installs what it needs as cholmod_factor.py does; exit code 2 when CHOLMOD
is unavailable.
"""
import json
import sys
import time

from cholmod_factor import ensure


def main():
    if len(sys.argv) != 4:
        print("usage: cholmod_delassus.py A.mtx H.mtx P.txt", file=sys.stderr)
        return 2
    if not ensure():
        return 2
    import numpy as np
    import scipy.io
    import scipy.sparse as sp
    from sksparse.cholmod import analyze

    a = scipy.io.mmread(sys.argv[1]).tocsc()
    h = scipy.io.mmread(sys.argv[2]).tocsr()
    probe = np.loadtxt(sys.argv[3])
    factor = analyze(a, mode="supernodal", ordering_method="best")
    t = time.perf_counter()
    factor.cholesky_inplace(a)
    numeric_ms = (time.perf_counter() - t) * 1e3
    ht = h.T.tocsc()
    times, w, nnz_s = [], None, 0
    for _ in range(3):
        t = time.perf_counter()
        s = factor.solve_L(factor.apply_P(ht), use_LDLt_decomposition=True)
        d_inv = sp.diags(1.0 / factor.D())
        w = (s.T @ (d_inv @ s)).toarray()
        times.append((time.perf_counter() - t) * 1e3)
        nnz_s = s.nnz
    times.sort()
    print(json.dumps({
        "build_ms": times[1],
        "numeric_ms": numeric_ms,
        "nnz_s": int(nnz_s),
        "w_times_probe": (w @ probe).tolist(),
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
