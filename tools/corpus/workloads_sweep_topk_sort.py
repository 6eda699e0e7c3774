"""Op-family sweep (issue 34, part 2): top-k and sort. lax.top_k over rows x length x k -- with
the beam-search shape issue 34 names (8..64 rows of 32k..50k, k <= 16) and one very long row --
and jnp.sort / jnp.argsort / a key-value lax.sort over rows x length, f32, bf16 and int32.

The small versions draw every row as a permutation of distinct values exactly representable in
bf16, so top-k's indices and argsort's order have no ties and are comparable exactly.
Usage on the GPU machine: SET=sweep_topk_sort python3 tools/corpus/jax_corpus.py OUTDIR all
(or tools/corpus/sweep.sh topk_sort OUTDIR).
"""
import numpy as np

FAMILY = "topk_sort"


def make(g):
    jnp, lax, rnd, rng = g["jnp"], g["lax"], g["rnd"], g["rng"]
    bf16 = g["bf16"]
    work = {}

    def distinct(rows, length, dtype):
        # |value| <= 256 * 2^-7: exact in bf16 (8 significant bits) for length <= 512.
        assert length <= 512
        v = np.stack([rng.permutation(length) - length // 2 for _ in range(rows)]).astype(np.float32) / 128.0
        return jnp.asarray(v, dtype=dtype)

    def data(rows, length, dtype, small):
        if dtype == np.int32:
            return jnp.asarray(rnd((rows, length), np.int32, -(1 << 30), 1 << 30))
        if small:
            return distinct(rows, length, dtype)
        return jnp.asarray(rnd((rows, length)), dtype=dtype)

    def tag(dtype):
        return {np.float32: "f32", np.int32: "s32"}.get(dtype, "bf16")

    def add(name, fn, small, large, dtype):
        work[f"sweep_topk_sort_{name}_{tag(dtype)}"] = (
            lambda *a: fn(*a),
            lambda: (data(*small, dtype, True),),
            lambda: (data(*large, dtype, False),))

    def topk(rows, length, k, dtype, small_rows=3):
        small_len = min(max(2 * k, 40), 512)
        add(f"topk_r{rows}_l{length}_k{k}", lambda x: lax.top_k(x, k), (small_rows, small_len), (rows, length), dtype)

    # Few rows, long rows (beam search over a vocabulary), k <= 16.
    topk(8, 32768, 4, np.float32)
    topk(16, 50257, 16, np.float32)
    topk(64, 32000, 8, bf16)
    topk(32, 50000, 2, np.float32)
    topk(8, 50000, 1, bf16)
    topk(1, 1 << 20, 16, np.float32, small_rows=1)
    # Many rows, short rows; larger k (top-k sampling).
    topk(4096, 1024, 8, np.float32)
    topk(128, 128, 16, np.float32)
    topk(1024, 4096, 64, np.float32)
    topk(256, 32000, 50, bf16)

    # Sorts along the last axis: values, indices (argsort), a key with a payload, descending.
    def sort(rows, length, dtype, small=(3, 100)):
        add(f"sort_r{rows}_l{length}", lambda x: jnp.sort(x, axis=-1), small, (rows, length), dtype)
    sort(1024, 1024, np.float32)
    sort(16, 32768, np.float32)
    sort(1, 1 << 20, np.float32, small=(1, 500))
    sort(4096, 256, bf16)
    sort(512, 4096, np.int32)
    add("argsort_r1024_l1024", lambda x: jnp.argsort(x, axis=-1), (3, 100), (1024, 1024), np.float32)
    add("argsort_r8_l32768", lambda x: jnp.argsort(x, axis=-1), (2, 300), (8, 32768), np.float32)
    add("sort_desc_r64_l32000", lambda x: -jnp.sort(-x, axis=-1), (3, 120), (64, 32000), bf16)

    def sort_kv(x):
        iota = lax.broadcasted_iota(jnp.int32, x.shape, 1)
        keys, perm = lax.sort((x, iota), dimension=1, num_keys=1)
        return keys, perm
    add("sort_kv_r256_l8192", sort_kv, (4, 64), (256, 8192), np.float32)
    add("sort_axis0_r8192_c256", lambda x: jnp.sort(x, axis=0), (64, 5), (8192, 256), np.float32)
    return work
