"""Op-family sweep (issue 34, part 2): reduce-window. Max and average pools (2-D NHWC, 1-D, 3-D,
global), their gradients (select-and-scatter for max, a padded reduce-window for average),
cumulative reductions as JAX emits them (jnp.cumsum, lax.cummax, along rows and columns) and
explicit prefix / sliding-window sums written as reduce_window; f32 and bf16.
Usage on the GPU machine: SET=sweep_reduce_window python3 tools/corpus/jax_corpus.py OUTDIR all
(or tools/corpus/sweep.sh reduce_window OUTDIR).
"""
import numpy as np

FAMILY = "reduce_window"


def make(g):
    jax, jnp, lax, rnd = g["jax"], g["jnp"], g["lax"], g["rnd"]
    bf16 = g["bf16"]
    work = {}

    def tag(dtype):
        return "f32" if dtype == np.float32 else "bf16"

    def add(name, fn, small, large, dtype=np.float32, lo=-1.0, hi=1.0, nargs=1):
        def args(shape):
            return tuple(jnp.asarray(rnd(shape, np.float32, lo, hi), dtype=dtype) for _ in range(nargs))
        work[f"sweep_reduce_window_{name}_{tag(dtype)}"] = (
            lambda *a: fn(*a), lambda: args(small), lambda: args(large))

    def maxpool(win, stride, pad="VALID"):
        return lambda x: lax.reduce_window(x, jnp.asarray(-jnp.inf, x.dtype), lax.max, win, stride, pad)

    def avgpool(win, stride, pad="VALID"):
        def f(x):
            s = lax.reduce_window(x, jnp.asarray(0, x.dtype), lax.add, win, stride, pad)
            return s / int(np.prod(win))
        return f

    def grad_of(pool):
        # The pool's vjp against a cotangent of its output's shape (the second argument's first
        # elements: the argument is drawn at the input's shape and sliced to the output's).
        def f(x, dy_full):
            y, vjp = jax.vjp(pool, x)
            dy = lax.slice(dy_full, (0,) * dy_full.ndim, y.shape)
            return vjp(dy)[0]
        return f

    # 2-D NHWC pools.
    add("maxpool_2x2s2_64x112x112x64", maxpool((1, 2, 2, 1), (1, 2, 2, 1)), (2, 8, 8, 4), (64, 112, 112, 64))
    add("maxpool_3x3s2same_32x112x112x64", maxpool((1, 3, 3, 1), (1, 2, 2, 1), "SAME"), (2, 9, 9, 4),
        (32, 112, 112, 64), bf16)
    add("avgpool_2x2s2_64x56x56x256", avgpool((1, 2, 2, 1), (1, 2, 2, 1)), (2, 8, 8, 4), (64, 56, 56, 256))
    add("avgpool_3x3s1same_32x56x56x128", avgpool((1, 3, 3, 1), (1, 1, 1, 1), "SAME"), (2, 7, 7, 4),
        (32, 56, 56, 128), bf16)
    add("globalavg_7x7_128x7x7x2048", avgpool((1, 7, 7, 1), (1, 1, 1, 1)), (2, 7, 7, 4), (128, 7, 7, 2048))
    # Their gradients.
    add("maxpool_3x3s2same_grad_32x112x112x64", grad_of(maxpool((1, 3, 3, 1), (1, 2, 2, 1), "SAME")),
        (2, 9, 9, 4), (32, 112, 112, 64), nargs=2)
    add("avgpool_2x2s2_grad_64x56x56x256", grad_of(avgpool((1, 2, 2, 1), (1, 2, 2, 1))), (2, 8, 8, 4),
        (64, 56, 56, 256), nargs=2)
    # 1-D and 3-D.
    add("maxpool1d_3s1same_16x16384x128", maxpool((1, 3, 1), (1, 1, 1), "SAME"), (2, 30, 4), (16, 16384, 128))
    add("maxpool3d_2x2x2s2_8x32x32x32x32", maxpool((1, 2, 2, 2, 1), (1, 2, 2, 2, 1)), (1, 4, 4, 4, 3),
        (8, 32, 32, 32, 32), bf16)
    # Cumulative reductions as JAX emits them.
    add("cumsum_rows_4096x4096", lambda x: jnp.cumsum(x, axis=-1), (6, 40), (4096, 4096), lo=0.0)
    add("cumsum_cols_4096x1024", lambda x: jnp.cumsum(x, axis=0), (40, 6), (4096, 1024), lo=0.0)
    add("cumsum_rows_1024x32768", lambda x: jnp.cumsum(x, axis=-1, dtype=jnp.float32), (4, 200), (1024, 32768),
        bf16, lo=0.0)
    add("cummax_rows_1024x4096", lambda x: lax.cummax(x, axis=1), (6, 40), (1024, 4096))
    add("cumsum_rev_rows_4096x512", lambda x: lax.cumsum(x, axis=1, reverse=True), (6, 40), (4096, 512), lo=0.0)
    # Explicit windows: a prefix sum and a sliding (moving-average) window of 64, as reduce_window.
    def prefix(x):
        n = x.shape[-1]
        return lax.reduce_window(x, 0.0, lax.add, (1, n), (1, 1), ((0, 0), (n - 1, 0)))
    add("prefix_window_rows_2048x2048", prefix, (5, 33), (2048, 2048), lo=0.0)
    add("sliding_sum64_rows_1024x8192", lambda x: lax.reduce_window(x, 0.0, lax.add, (1, 64), (1, 1), "VALID"),
        (5, 100), (1024, 8192), lo=0.0)
    return work
