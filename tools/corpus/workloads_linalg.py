"""Linear-algebra workloads (issue 34): the solver custom calls JAX 0.11 emits on the GPU
(cusolver_geqrf_ffi, cusolver_orgqr_ffi, cusolver_syevd_ffi / syevj, cusolver_gesvdj_ffi /
gesvd, getrf, potrf, trsm; cusolver_ormqr_ffi where this JAX has lax.linalg.ormqr), batched, in f32 and c64 (f64 needs jax_enable_x64, which the corpus
runs do not set).

QR, eigenvectors and singular vectors are unique only up to signs (phases), and cuSOLVER and
LAPACK may pick differently, so each program returns the raw factors *normalized* to a unique
form (R with a non-negative real diagonal; each eigen/singular vector with its largest-magnitude
entry real and positive) together with invariants (reconstructions). The custom calls are the
same as in the raw program; only elementwise work follows them.
Usage on the GPU machine: SET=linalg python3 tools/corpus/jax_corpus.py OUTDIR [small|large|all]
"""
import numpy as np


def make(g):
    jax, jnp, rnd = g["jax"], g["jnp"], g["rnd"]
    work = {}

    def mat(shape, dtype=np.float32):
        a = rnd(shape)
        if dtype == np.complex64:
            a = (a + 1j * rnd(shape)).astype(np.complex64)
        return jnp.asarray(a)

    def herm(shape, dtype=np.float32):
        a = np.asarray(mat(shape, dtype))
        h = a + np.conj(np.swapaxes(a, -1, -2))
        return jnp.asarray(h.astype(dtype))

    def phase_fix(v, axis):
        # Multiplies each vector (along `axis`) by the conjugate phase of its largest entry.
        idx = jnp.argmax(jnp.abs(v), axis=axis, keepdims=True)
        big = jnp.take_along_axis(v, idx, axis=axis)
        ph = big / jnp.maximum(jnp.abs(big), 1e-30).astype(big.dtype)
        return v * jnp.conj(ph)

    def qr(a):
        q, r = jnp.linalg.qr(a)
        d = jnp.diagonal(r, axis1=-2, axis2=-1)
        ph = d / jnp.maximum(jnp.abs(d), 1e-30).astype(d.dtype)
        q = q * ph[..., None, :]
        r = r * jnp.conj(ph)[..., :, None]
        return q, r, q @ r

    def eigh(a):
        w, v = jnp.linalg.eigh(a)
        v = phase_fix(v, -2)
        recon = (v * w[..., None, :].astype(v.dtype)) @ jnp.conj(jnp.swapaxes(v, -1, -2))
        return w, v, recon

    def svd(a):
        u, s, vh = jnp.linalg.svd(a, full_matrices=False)
        u2 = phase_fix(u, -2)
        # u2 = u * conj(p) column by column (p: each column's phase), so V^H's rows take p to keep
        # U S V^H: ph below is conj(p).
        ph = jnp.sum(u2 * jnp.conj(u), axis=-2) / jnp.maximum(jnp.sum(jnp.abs(u) ** 2, axis=-2), 1e-30)
        vh2 = vh * jnp.conj(ph)[..., :, None]
        recon = (u2 * s[..., None, :].astype(u2.dtype)) @ vh2
        return s, u2, vh2, recon

    def ormqr(a, c):
        # Q c, Q^H (Q c) (== c) and c^T Q^H without forming Q. geqrf's reflectors are unique in
        # LAPACK's convention, which cuSOLVER follows, so the results compare raw.
        r, taus = jax.lax.linalg.geqrf(a)
        qc = jax.lax.linalg.ormqr(r, taus, c, left=True, transpose=False)
        back = jax.lax.linalg.ormqr(r, taus, qc, left=True, transpose=True)
        cq = jax.lax.linalg.ormqr(r, taus, jnp.swapaxes(c, -1, -2), left=False, transpose=True)
        return qc, back, cq

    def svdvals(a):
        return jnp.linalg.svd(a, compute_uv=False)

    def lstsq(a, b):
        x, resid, rank, sv = jnp.linalg.lstsq(a, b)
        return x, sv

    def solve(a, b):
        return jnp.linalg.solve(a, b)

    def cholesky_solve(a, b):
        c = jnp.linalg.cholesky(a)
        return jax.scipy.linalg.cho_solve((c, True), b)

    def spd(shape, dtype=np.float32):
        a = np.asarray(mat(shape, dtype))
        n = shape[-1]
        s = a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n, dtype=dtype)
        return jnp.asarray(s.astype(dtype))

    for dt, tag in ((np.float32, "f32"), (np.complex64, "c64")):
        work[f"linalg_qr_{tag}"] = (qr, lambda dt=dt: (mat((3, 6, 4), dt),), lambda dt=dt: (mat((16, 512, 512), dt),))
        work[f"linalg_qr_wide_{tag}"] = (qr, lambda dt=dt: (mat((4, 7), dt),), lambda dt=dt: (mat((256, 4096), dt),))
        work[f"linalg_eigh_{tag}"] = (eigh, lambda dt=dt: (herm((2, 8, 8), dt),), lambda dt=dt: (herm((4, 512, 512), dt),))
        work[f"linalg_svd_{tag}"] = (svd, lambda dt=dt: (mat((2, 6, 5), dt),), lambda dt=dt: (mat((8, 256, 256), dt),))
        if hasattr(jax.lax.linalg, "ormqr"):  # newer than JAX 0.11 (a JAX PR's lowering)
            work[f"linalg_ormqr_{tag}"] = (ormqr, lambda dt=dt: (mat((3, 6, 4), dt), mat((3, 6, 5), dt)),
                                           lambda dt=dt: (mat((16, 512, 512), dt), mat((16, 512, 64), dt)))
    work["linalg_eigh_small_batched_f32"] = (eigh, lambda: (herm((64, 12, 12)),), lambda: (herm((4096, 16, 16)),))
    work["linalg_svd_tall_f32"] = (svd, lambda: (mat((40, 6)),), lambda: (mat((8192, 64)),))
    work["linalg_svdvals_f32"] = (svdvals, lambda: (mat((3, 9, 7)),), lambda: (mat((64, 128, 128)),))
    work["linalg_lstsq_f32"] = (lstsq, lambda: (mat((20, 5)), mat((20, 3))), lambda: (mat((4096, 64)), mat((4096, 8))))
    work["linalg_solve_f32"] = (solve, lambda: (spd((2, 6, 6)), mat((2, 6, 3))), lambda: (spd((64, 256, 256)), mat((64, 256, 16))))
    work["linalg_cho_solve_f32"] = (cholesky_solve, lambda: (spd((2, 6, 6)), mat((2, 6, 3))),
                                    lambda: (spd((64, 256, 256)), mat((64, 256, 16))))
    return work
