"""Op-family sweep (issue 34, part 2): dots. Skinny (decode GEMV, a few rows, tall outputs, tiny
and huge contractions), batched (small matrices in bulk, attention-shaped einsums, batched
matrix-vector), tiny (launch-bound: a 16x16 product, 8192 batched 4x4, 1M points times a 3x3),
square reference points and transposed operands; f32 (DEFAULT and HIGHEST precision), bf16
(bf16 or f32 results) and int8 -> int32.
Usage on the GPU machine: SET=sweep_dot python3 tools/corpus/jax_corpus.py OUTDIR all
(or tools/corpus/sweep.sh dot OUTDIR).
"""
import numpy as np

FAMILY = "dot"


def make(g):
    jnp, lax, rnd = g["jnp"], g["lax"], g["rnd"]
    bf16 = g["bf16"]
    work = {}
    tags = {np.float32: "f32", np.int8: "s8"}

    def arr(shape, dtype):
        if dtype == np.int8:
            return jnp.asarray(rnd(shape, np.int8, -128, 127))
        return jnp.asarray(rnd(shape, np.float32, -1.0, 1.0), dtype=dtype)

    def add(name, fn, small, large, dtype=np.float32):
        """small, large: the operands' shapes."""
        work[f"sweep_dot_{name}_{tags.get(dtype, 'bf16')}"] = (
            lambda *a: fn(*a),
            lambda: tuple(arr(s, dtype) for s in small),
            lambda: tuple(arr(s, dtype) for s in large))

    mm = lambda a, b: a @ b
    # Skinny.
    add("gemv_1x4096x16384", mm, [(1, 24), (24, 40)], [(1, 4096), (4096, 16384)], bf16)
    add("vecmat_4096x4096", mm, [(24,), (24, 40)], [(4096,), (4096, 4096)])
    add("rows8_8x4096x4096", mm, [(8, 24), (24, 40)], [(8, 4096), (4096, 4096)], bf16)
    add("tall_16384x4096x8", mm, [(40, 24), (24, 3)], [(16384, 4096), (4096, 8)])
    add("outer_k16_4096x16x4096", mm, [(24, 16), (16, 40)], [(4096, 16), (16, 4096)])
    add("splitk_64x262144x64", mm, [(8, 500), (500, 8)], [(64, 262144), (262144, 64)])
    # Batched.
    add("bmm_512x64x64x64", mm, [(3, 8, 8), (3, 8, 8)], [(512, 64, 64), (512, 64, 64)])
    add("bmm_64x256x256x256", mm, [(3, 8, 8), (3, 8, 8)], [(64, 256, 256), (64, 256, 256)], bf16)
    add("attn_scores_32x16x128x128x64", lambda q, k: jnp.einsum("bhqd,bhkd->bhqk", q, k),
        [(2, 2, 5, 4), (2, 2, 6, 4)], [(32, 16, 128, 64), (32, 16, 128, 64)], bf16)
    add("batched_matvec_4096x128x128", lambda a, x: jnp.einsum("bij,bj->bi", a, x),
        [(5, 8, 8), (5, 8)], [(4096, 128, 128), (4096, 128)])
    # Tiny: launch-bound.
    add("tiny_16x16x16", mm, [(4, 4), (4, 4)], [(16, 16), (16, 16)])
    add("tiny_batched_8192x4x4x4", mm, [(10, 4, 4), (10, 4, 4)], [(8192, 4, 4), (8192, 4, 4)])
    add("points_1mx3x3", mm, [(100, 3), (3, 3)], [(1 << 20, 3), (3, 3)])
    # Square reference points, precision, transposed operands, mixed and integer types.
    add("square_4096", mm, [(24, 32), (32, 40)], [(4096, 4096), (4096, 4096)], bf16)
    add("square_2048", mm, [(24, 32), (32, 40)], [(2048, 2048), (2048, 2048)])
    add("square_highest_2048", lambda a, b: jnp.matmul(a, b, precision=lax.Precision.HIGHEST),
        [(24, 32), (32, 40)], [(2048, 2048), (2048, 2048)])
    add("wgrad_tn_4096x1024x1024", lambda a, b: jnp.einsum("ki,kj->ij", a, b),
        [(32, 24), (32, 40)], [(4096, 1024), (4096, 1024)], bf16)
    add("nt_4096x4096x1024", lambda a, b: jnp.einsum("ik,jk->ij", a, b),
        [(24, 32), (40, 32)], [(4096, 1024), (4096, 1024)])
    add("bf16_f32out_4096x4096x4096", lambda a, b: jnp.matmul(a, b, preferred_element_type=jnp.float32),
        [(24, 32), (32, 40)], [(4096, 4096), (4096, 4096)], bf16)
    add("int8_4096x4096x4096", lambda a, b: lax.dot(a, b, preferred_element_type=jnp.int32),
        [(24, 32), (32, 40)], [(4096, 4096), (4096, 4096)], np.int8)
    return work
