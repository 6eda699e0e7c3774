"""Op-family sweep (issue 34, part 2): reductions. Row (last axis), column (first axis), middle
axis, several axes (batch-norm statistics) and full reductions; short, square and very long rows;
sum / max / argmax / mean+variance / logsumexp; f32, bf16 (accumulated in f32 as JAX does) and int32.

Sums draw non-negative inputs so a small module's result is not a cancellation of its terms (the
relative error of a sum of mixed signs says nothing about the reduction).
Usage on the GPU machine: SET=sweep_reduce python3 tools/corpus/jax_corpus.py OUTDIR all
(or tools/corpus/sweep.sh reduce OUTDIR).
"""
import numpy as np

FAMILY = "reduce"


def make(g):
    jax, jnp, rnd = g["jax"], g["jnp"], g["rnd"]
    bf16 = g["bf16"]
    work = {}

    def tag(dtype):
        return {np.float32: "f32", np.int32: "s32"}.get(dtype, "bf16")

    def arr(shape, dtype, lo, hi):
        if dtype == np.int32:
            return jnp.asarray(rnd(shape, np.int32, -1000, 1000))
        return jnp.asarray(rnd(shape, np.float32, lo, hi), dtype=dtype)

    def add(name, fn, small, large, dtype=np.float32, lo=0.0, hi=1.0):
        work[f"sweep_reduce_{name}_{tag(dtype)}"] = (
            lambda *a: fn(*a), lambda: (arr(small, dtype, lo, hi),), lambda: (arr(large, dtype, lo, hi),))

    rowsum = lambda x: jnp.sum(x, axis=-1)
    colsum = lambda x: jnp.sum(x, axis=0)
    # Row reductions: square, short rows, few very long rows, rows of 3.
    add("row_sum_8192x8192", rowsum, (6, 40), (8192, 8192))
    add("row_sum_65536x128", rowsum, (33, 16), (65536, 128))
    add("row_sum_64x1m", rowsum, (2, 3000), (64, 1 << 20))
    add("row_sum_4mx3", rowsum, (100, 3), (1 << 22, 3))
    add("row_max_8192x8192", lambda x: jnp.max(x, axis=-1), (6, 40), (8192, 8192), lo=-1.0)
    add("row_sum_16384x4096", lambda x: jnp.sum(x, axis=-1, dtype=jnp.float32), (6, 40), (16384, 4096), bf16)
    add("row_sum_8192x1024", rowsum, (6, 40), (8192, 1024), np.int32)
    add("row_argmax_4096x32000", lambda x: jnp.argmax(x, axis=-1), (5, 50), (4096, 32000), lo=-1.0)
    add("row_meanvar_16384x1024", lambda x: (x.mean(-1), x.var(-1)), (6, 40), (16384, 1024), lo=-1.0)
    add("row_logsumexp_8192x32000", lambda x: jax.nn.logsumexp(x.astype(jnp.float32), axis=-1), (6, 40),
        (8192, 32000), bf16, lo=-3.0, hi=3.0)
    # Column reductions: square, tall with few columns, short and wide.
    add("col_sum_8192x8192", colsum, (40, 6), (8192, 8192))
    add("col_sum_1mx64", colsum, (300, 5), (1 << 20, 64))
    add("col_sum_128x65536", colsum, (7, 100), (128, 65536))
    add("col_max_16384x1024", lambda x: jnp.max(x, axis=0), (40, 6), (16384, 1024), bf16, lo=-1.0)
    # Middle axis, several axes (NHWC batch-norm statistics), full reductions.
    add("mid_sum_256x512x256", lambda x: jnp.sum(x, axis=1), (3, 7, 5), (256, 512, 256))
    add("nhw_meanvar_64x56x56x256", lambda x: (x.mean((0, 1, 2)), x.var((0, 1, 2))), (2, 5, 5, 8),
        (64, 56, 56, 256), lo=-1.0)
    add("full_sum_64m", lambda x: jnp.sum(x), (1000,), (1 << 26,))
    add("full_sum_64m", lambda x: jnp.sum(x, dtype=jnp.float32), (1000,), (1 << 26,), bf16)
    add("full_max_16m", lambda x: jnp.max(x), (1000,), (1 << 24,), lo=-1.0)
    add("full_sum_2d_4096x4096", lambda x: jnp.sum(x), (7, 9), (4096, 4096))
    return work
