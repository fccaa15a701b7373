#!/usr/bin/env python3
"""CHOLMOD (scikit-sparse) on a Matrix Market file: prints JSON with the
numeric factorization time (median of 3, ms), analysis time and nnz(L).

Installs what it needs when missing: `apt-get install libsuitesparse-dev`
and `pip install numpy scipy scikit-sparse==0.4.16`. Pin BLAS to one thread
(OPENBLAS_NUM_THREADS=1): on a shared 2-core machine threaded BLAS can be far
slower on small kernels. Exit code 2 when CHOLMOD is unavailable.
"""
import json
import subprocess
import sys
import time


def ensure():
    try:
        import sksparse.cholmod  # noqa: F401
        return True
    except ImportError:
        pass
    try:
        subprocess.run(["apt-get", "install", "-y", "-q", "libsuitesparse-dev"], check=False,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600)
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "numpy", "scipy", "scikit-sparse==0.4.16"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=900)
        import sksparse.cholmod  # noqa: F401
        return True
    except Exception as e:  # noqa: BLE001
        print(f"CHOLMOD unavailable: {e}", file=sys.stderr)
        return False


def main():
    if len(sys.argv) != 2:
        print("usage: cholmod_factor.py MATRIX.mtx", file=sys.stderr)
        return 2
    if not ensure():
        return 2
    import scipy.io
    from sksparse.cholmod import analyze

    a = scipy.io.mmread(sys.argv[1]).tocsc()
    t = time.perf_counter()
    factor = analyze(a, mode="supernodal", ordering_method="best")
    analyze_ms = (time.perf_counter() - t) * 1e3
    times = []
    for _ in range(3):
        t = time.perf_counter()
        factor.cholesky_inplace(a)
        times.append((time.perf_counter() - t) * 1e3)
    times.sort()
    nnz_l = factor.L().nnz - a.shape[0]
    print(json.dumps({"numeric_ms": times[1], "analyze_ms": analyze_ms, "nnz_l": int(nnz_l)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
