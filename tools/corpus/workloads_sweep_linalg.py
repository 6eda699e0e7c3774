"""Op-family sweep (issue 34, part 2): linear algebra, sizes x batch. QR (geqrf + orgqr), Q applied
without forming it (geqrf + ormqr, where this JAX has lax.linalg.ormqr), eigh
(syevd / syevj), SVD (gesvdj / gesvd), Cholesky (potrf), LU (getrf with pivots and permutation),
triangular solve (trsm) and a general solve (getrf + trsm); f32, and c64 for QR and solve.

As in workloads_linalg.py, factors unique only up to signs (phases) are normalized (R with a
non-negative real diagonal; each eigen/singular vector with its largest entry real and positive)
so the small modules compare against JAX's outputs; only elementwise work follows the calls.
Usage on the GPU machine: SET=sweep_linalg python3 tools/corpus/jax_corpus.py OUTDIR all
(or tools/corpus/sweep.sh linalg OUTDIR).
"""
import numpy as np

FAMILY = "linalg"


def make(g):
    jax, jnp, lax, rnd = g["jax"], g["jnp"], g["lax"], g["rnd"]
    work = {}

    def mat(shape, dtype=np.float32):
        a = rnd(shape)
        if dtype == np.complex64:
            a = (a + 1j * rnd(shape)).astype(np.complex64)
        return a

    def herm(shape, dtype=np.float32):
        a = mat(shape, dtype)
        return jnp.asarray((a + np.conj(np.swapaxes(a, -1, -2))).astype(dtype))

    def spd(shape, dtype=np.float32):
        a = mat(shape, dtype)
        n = shape[-1]
        return jnp.asarray((a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n, dtype=dtype)).astype(dtype))

    def tri(shape):
        # Lower triangular, well conditioned: unit-scale diagonal, small off-diagonal.
        a = np.tril(mat(shape)) / shape[-1] + 2.0 * np.eye(shape[-1], dtype=np.float32)
        return jnp.asarray(a.astype(np.float32))

    def phase_fix(v, axis):
        idx = jnp.argmax(jnp.abs(v), axis=axis, keepdims=True)
        big = jnp.take_along_axis(v, idx, axis=axis)
        return v * jnp.conj(big / jnp.maximum(jnp.abs(big), 1e-30).astype(big.dtype))

    def qr(a):
        q, r = jnp.linalg.qr(a)
        d = jnp.diagonal(r, axis1=-2, axis2=-1)
        ph = d / jnp.maximum(jnp.abs(d), 1e-30).astype(d.dtype)
        return q * ph[..., None, :], r * jnp.conj(ph)[..., :, None]

    def eigh(a):
        w, v = jnp.linalg.eigh(a)
        return w, phase_fix(v, -2)

    def svd(a):
        u, s, vh = jnp.linalg.svd(a, full_matrices=False)
        u2 = phase_fix(u, -2)
        ph = jnp.sum(u2 * jnp.conj(u), axis=-2) / jnp.maximum(jnp.sum(jnp.abs(u) ** 2, axis=-2), 1e-30)
        return s, u2, vh * jnp.conj(ph)[..., :, None]

    def ormqr(a, c):
        # Q c, Q^H (Q c) (== c) and c^T Q^H; geqrf's reflectors are unique in LAPACK's convention
        # (cuSOLVER's too), so no normalization.
        r, taus = lax.linalg.geqrf(a)
        qc = lax.linalg.ormqr(r, taus, c, left=True, transpose=False)
        back = lax.linalg.ormqr(r, taus, qc, left=True, transpose=True)
        return qc, back, lax.linalg.ormqr(r, taus, jnp.swapaxes(c, -1, -2), left=False, transpose=True)

    def lu(a):
        lu_, piv, perm = lax.linalg.lu(a)
        return lu_, piv, perm

    def add(name, fn, small, large, dtype=np.float32):
        tag = "f32" if dtype == np.float32 else "c64"
        work[f"sweep_linalg_{name}_{tag}"] = (lambda *a: fn(*a), small, large)

    M = lambda *s: (lambda: (jnp.asarray(mat(s)),))
    # QR: many small, a few medium, one large, tall-skinny; c64.
    add("qr_b256_n64", qr, M(3, 6, 6), M(256, 64, 64))
    add("qr_b16_n256", qr, M(2, 8, 8), M(16, 256, 256))
    add("qr_b1_n1024", qr, M(9, 9), M(1024, 1024))
    add("qr_tall_8192x64", qr, M(40, 6), M(8192, 64))
    add("qr_b16_n128", qr, lambda: (jnp.asarray(mat((2, 6, 5), np.complex64)),),
        lambda: (jnp.asarray(mat((16, 128, 128), np.complex64)),), np.complex64)
    # ormqr (op(Q) c from geqrf's reflectors): batched medium, f32 and c64.
    if hasattr(lax.linalg, "ormqr"):  # newer than JAX 0.11 (a JAX PR's lowering)
        add("ormqr_b16_n256_k32", ormqr, lambda: (jnp.asarray(mat((2, 8, 6))), jnp.asarray(mat((2, 8, 3)))),
            lambda: (jnp.asarray(mat((16, 256, 256))), jnp.asarray(mat((16, 256, 32)))))
        add("ormqr_b16_n128_k16", ormqr,
            lambda: (jnp.asarray(mat((2, 6, 5), np.complex64)), jnp.asarray(mat((2, 6, 3), np.complex64))),
            lambda: (jnp.asarray(mat((16, 128, 128), np.complex64)), jnp.asarray(mat((16, 128, 16), np.complex64))),
            np.complex64)
    # eigh: batched tiny (syevj's batched path), medium, one large.
    H = lambda *s: (lambda: (herm(s),))
    add("eigh_b4096_n16", eigh, H(64, 6, 6), H(4096, 16, 16))
    add("eigh_b64_n128", eigh, H(2, 8, 8), H(64, 128, 128))
    add("eigh_b1_n512", eigh, H(10, 10), H(512, 512))
    # SVD: batched small, medium, tall.
    add("svd_b512_n32", svd, M(4, 6, 5), M(512, 32, 32))
    add("svd_b8_n256", svd, M(2, 8, 7), M(8, 256, 256))
    add("svd_tall_8192x64", svd, M(30, 5), M(8192, 64))
    add("svdvals_b64_n128", lambda a: jnp.linalg.svd(a, compute_uv=False), M(3, 9, 7), M(64, 128, 128))
    # Cholesky: batched small, medium, one large.
    P = lambda *s: (lambda: (spd(s),))
    add("cholesky_b1024_n32", jnp.linalg.cholesky, P(5, 6, 6), P(1024, 32, 32))
    add("cholesky_b16_n512", jnp.linalg.cholesky, P(2, 9, 9), P(16, 512, 512))
    add("cholesky_b1_n2048", jnp.linalg.cholesky, P(12, 12), P(2048, 2048))
    # LU with partial pivoting (factors, pivots, permutation).
    add("lu_b512_n64", lu, M(3, 7, 7), M(512, 64, 64))
    add("lu_b1_n1024", lu, M(11, 11), M(1024, 1024))
    # Triangular solves: batched with a few right-hand sides, one large with many.
    solve_tri = lambda a, b: jax.scipy.linalg.solve_triangular(a, b, lower=True)
    add("trsm_b64_n256_k16", solve_tri, lambda: (tri((2, 6, 6)), jnp.asarray(mat((2, 6, 3)))),
        lambda: (tri((64, 256, 256)), jnp.asarray(mat((64, 256, 16)))))
    add("trsm_b1_n2048_k128", solve_tri, lambda: (tri((9, 9)), jnp.asarray(mat((9, 4)))),
        lambda: (tri((2048, 2048)), jnp.asarray(mat((2048, 128)))))
    # General solve (LU + triangular solves), f32 and c64.
    add("solve_b64_n256_k16", jnp.linalg.solve, lambda: (spd((2, 6, 6)), jnp.asarray(mat((2, 6, 3)))),
        lambda: (spd((64, 256, 256)), jnp.asarray(mat((64, 256, 16)))))
    add("solve_b64_n128_k8", jnp.linalg.solve,
        lambda: (spd((2, 6, 6), np.complex64), jnp.asarray(mat((2, 6, 3), np.complex64))),
        lambda: (spd((64, 128, 128), np.complex64), jnp.asarray(mat((64, 128, 8), np.complex64))), np.complex64)
    return work
