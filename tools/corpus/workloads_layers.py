"""Compile-time scaling: one transformer training step (pre-norm attention + MLP blocks, mean-square loss,
SGD update) at 5, 10, 20 and 40 layers, unrolled in Python as a user's model is, so the HLO grows linearly with
the layer count. Only small sizes: what is measured is compile time (results.json compile_s), and the small
inputs/outputs check correctness. SET=layers python3 jax_corpus.py OUT small"""
import numpy as np


def make(g):
    jax, jnp, lax, rnd = g["jax"], g["jnp"], g["lax"], g["rnd"]
    B, S, D, H = 2, 16, 64, 4
    Dh = D // H

    def norm(x, s):
        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        return (x - m) * lax.rsqrt(v + 1e-5) * s

    def block(x, p):
        wq, wk, wv, wo, w1, w2, g1, g2 = p
        h = norm(x, g1)
        q = (h @ wq).reshape(B, S, H, Dh); k = (h @ wk).reshape(B, S, H, Dh); v = (h @ wv).reshape(B, S, H, Dh)
        s = jnp.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(Dh).astype(np.float32)
        s = jnp.where(jnp.tril(jnp.ones((S, S), bool)), s, -1e9)
        a = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, -1), v).reshape(B, S, D)
        x = x + a @ wo
        return x + jax.nn.gelu(norm(x, g2) @ w1) @ w2

    def case(L):
        def step(x, *flat):
            ps = [flat[8 * i: 8 * i + 8] for i in range(L)]
            def loss(ps):
                h = x
                for p in ps: h = block(h, p)
                return jnp.mean(h ** 2)
            l, gr = jax.value_and_grad(loss)(ps)
            return (l,) + tuple(w - 0.01 * gw for p, gp in zip(ps, gr) for w, gw in zip(p, gp))
        def args():
            a = [jnp.asarray(rnd((B, S, D)))]
            for _ in range(L):
                for shp in ((D, D), (D, D), (D, D), (D, D), (D, 4 * D), (4 * D, D)):
                    a.append(jnp.asarray(rnd(shp, np.float32, -0.1, 0.1)))
                a += [jnp.ones((D,), jnp.float32), jnp.ones((D,), jnp.float32)]
            return tuple(a)
        return step, args

    work = {}
    for L in (5, 10, 20, 40):
        f, a = case(L)
        work[f"transformer_train_L{L:02d}"] = (f, a, None)
    return work
