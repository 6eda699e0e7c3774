"""Op-family sweep (issue 34, part 2): gathers and scatters. Embedding lookups (rows of a table),
take_along_axis, scalar gathers, point gathers, batched (vmapped) gathers; scatter-add with
duplicate indices (embedding gradients, histograms), scatter-set with unique indices, segment
sum/max, and a KV-cache dynamic-update-slice; f32 and bf16.

Scatter-set indices are unique (a permutation), so the result does not depend on which of two
writers to one row wins; scatter-add sums in any order within the f32 tolerance.
Usage on the GPU machine: SET=sweep_gather_scatter python3 tools/corpus/jax_corpus.py OUTDIR all
(or tools/corpus/sweep.sh gather_scatter OUTDIR).
"""
import numpy as np

FAMILY = "gather_scatter"


def make(g):
    jax, jnp, lax, rnd, rng = g["jax"], g["jnp"], g["lax"], g["rnd"], g["rng"]
    bf16 = g["bf16"]
    i32 = np.int32
    work = {}

    def add(name, fn, small, large):
        work[f"sweep_gather_scatter_{name}"] = (lambda *a: fn(*a), small, large)

    def F(*s, dtype=np.float32, lo=-1.0, hi=1.0):
        return jnp.asarray(rnd(s, np.float32, lo, hi), dtype=dtype)

    def I(hi, *s):
        return jnp.asarray(rnd(s, i32, 0, hi))

    def S(hi, n):  # sorted segment ids
        return jnp.asarray(np.sort(rnd((n,), i32, 0, hi)))

    def perm(n, k):
        return jnp.asarray(rng.permutation(n)[:k].astype(i32))

    # Gathers.
    add("embed_rows_32000x1024_ids8192_f32", lambda t, i: t[i], lambda: (F(50, 8), I(50, 20)),
        lambda: (F(32000, 1024), I(32000, 8192)))
    add("embed_rows_50000x768_ids64x512_bf16", lambda t, i: jnp.take(t, i, axis=0),
        lambda: (F(40, 8, dtype=bf16), I(40, 3, 5)), lambda: (F(50000, 768, dtype=bf16), I(50000, 64, 512)))
    add("take_along_4096x1024_k64_f32", lambda x, i: jnp.take_along_axis(x, i, axis=1),
        lambda: (F(5, 30), I(30, 5, 7)), lambda: (F(4096, 1024), I(1024, 4096, 64)))
    add("scalars_16m_idx1m_f32", lambda x, i: x[i], lambda: (F(100), I(100, 37)),
        lambda: (F(1 << 24), I(1 << 24, 1 << 20)))
    add("points_4096x4096_idx1m_f32", lambda x, i: x[i[:, 0], i[:, 1]], lambda: (F(9, 11), I(9, 30, 2)),
        lambda: (F(4096, 4096), I(4096, 1 << 20, 2)))
    add("batched_rows_64x4096x64_idx512_bf16", lambda x, i: jax.vmap(lambda a, b: a[b])(x, i),
        lambda: (F(3, 20, 4, dtype=bf16), I(20, 3, 6)), lambda: (F(64, 4096, 64, dtype=bf16), I(4096, 64, 512)))
    add("clip_rows_8192x512_ids32768_f32", lambda t, i: jnp.take(t, i, axis=0, mode="clip"),
        lambda: (F(16, 4), I(16, 25)), lambda: (F(8192, 512), I(8192, 32768)))
    # Scatters.
    add("add_rows_32000x1024_ids8192_f32", lambda t, i, u: t.at[i].add(u),
        lambda: (F(50, 8), I(50, 40), F(40, 8)), lambda: (F(32000, 1024), I(32000, 8192), F(8192, 1024)))
    add("add_rows_50000x768_ids16384_bf16", lambda t, i, u: jnp.zeros_like(t).at[i].add(u),
        lambda: (F(40, 8, dtype=bf16), I(40, 30), F(30, 8, dtype=bf16)),
        lambda: (F(50000, 768, dtype=bf16), I(50000, 16384), F(16384, 768, dtype=bf16)))
    add("histogram_65536_idx4m_f32", lambda i: jnp.zeros((65536,) if i.shape[0] > 1000 else (64,), jnp.float32).at[i].add(1.0),
        lambda: (I(64, 500),), lambda: (I(65536, 1 << 22),))
    add("set_rows_1mx16_idx65536_f32", lambda x, i, u: x.at[i].set(u),
        lambda: (F(100, 4), perm(100, 30), F(30, 4)), lambda: (F(1 << 20, 16), perm(1 << 20, 65536), F(65536, 16)))
    add("segment_sum_1mx64_seg65536_f32", lambda d, s: jax.ops.segment_sum(d, s, num_segments=65536 if d.shape[0] > 1000 else 16),
        lambda: (F(200, 3), I(16, 200)), lambda: (F(1 << 20, 64), I(65536, 1 << 20)))
    add("segment_max_sorted_1mx32_seg4096_f32",
        lambda d, s: jax.ops.segment_max(d, s, num_segments=4096 if d.shape[0] > 1000 else 8, indices_are_sorted=True),
        lambda: (F(100, 3), S(8, 100)), lambda: (F(1 << 20, 32), S(4096, 1 << 20)))
    add("kv_cache_update_32x2048x8x128_bf16", lambda c, u, p: lax.dynamic_update_slice(c, u, (0, p, 0, 0)),
        lambda: (F(2, 16, 2, 4, dtype=bf16), F(2, 1, 2, 4, dtype=bf16), jnp.asarray(5, i32)),
        lambda: (F(32, 2048, 8, 128, dtype=bf16), F(32, 1, 8, 128, dtype=bf16), jnp.asarray(1000, i32)))
    return work
