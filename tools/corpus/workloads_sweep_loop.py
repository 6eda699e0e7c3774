"""Op-family sweep (issue 34, part 2): loops. fori_loop / while_loop / lax.scan over trip count x
body size: elementwise bodies (launch-bound to bandwidth-bound), matrix-product bodies, tanh RNN,
LSTM and GRU cells, backpropagation through time, a data-dependent while (Newton iteration to
convergence), a trip count given as an input, nested loops, stacked scan outputs, and decoding:
one transformer decode step against a KV cache, and a teacher-forced decode loop that writes its
cache step by step. Trip counts of scans come from their inputs' shapes (small versions run a
few steps); fori_loop counts are fixed, their small bodies tiny.
Usage on the GPU machine: SET=sweep_loop python3 tools/corpus/jax_corpus.py OUTDIR all
(or tools/corpus/sweep.sh loop OUTDIR).
"""
import numpy as np

FAMILY = "loop"


def make(g):
    jax, jnp, lax, rnd = g["jax"], g["jnp"], g["lax"], g["rnd"]
    bf16 = g["bf16"]
    i32 = np.int32
    work = {}

    def add(name, fn, small, large):
        work[f"sweep_loop_{name}"] = (lambda *a: fn(*a), small, large)

    def F(*s, dtype=np.float32, lo=-1.0, hi=1.0):
        return jnp.asarray(rnd(s, np.float32, lo, hi), dtype=dtype)

    def Wt(*s, dtype=np.float32):
        return F(*s, dtype=dtype, lo=-1.0 / np.sqrt(s[-2] if len(s) > 1 else 1), hi=1.0 / np.sqrt(s[-2] if len(s) > 1 else 1))

    # Elementwise bodies: trip count x size.
    def fori_elementwise(trips):
        return lambda x: lax.fori_loop(0, trips, lambda i, x: x * 0.5 + jnp.sin(x) * 0.25 + 0.01, x)
    add("fori_ew_t10_n4m_f32", fori_elementwise(10), lambda: (F(100),), lambda: (F(1 << 22),))
    add("fori_ew_t100_n64k_f32", fori_elementwise(100), lambda: (F(100),), lambda: (F(1 << 16),))
    add("fori_ew_t1000_n4k_f32", fori_elementwise(1000), lambda: (F(50),), lambda: (F(1 << 12),))

    # Matrix-product bodies: x <- tanh(x @ w), trips x matrix size.
    def fori_matmul(trips):
        return lambda x, w: lax.fori_loop(0, trips, lambda i, x: jnp.tanh(x @ w), x)
    add("fori_mm_t200_n256_f32", fori_matmul(200), lambda: (F(8, 8), Wt(8, 8)), lambda: (F(256, 256), Wt(256, 256)))
    add("fori_mm_t20_n2048_bf16", fori_matmul(20), lambda: (F(8, 8, dtype=bf16), Wt(8, 8, dtype=bf16)),
        lambda: (F(2048, 2048, dtype=bf16), Wt(2048, 2048, dtype=bf16)))

    # Trip count as an input (a while loop whose bound is data), body with a reduction.
    def while_n(x, n):
        def body(c):
            i, x = c
            return i + 1, x - 0.1 * x / (1.0 + jnp.sum(x * x) / x.size)
        return lax.while_loop(lambda c: c[0] < n, body, (jnp.asarray(0, jnp.int32), x))[1]
    add("while_input_n50_n1m_f32", while_n, lambda: (F(64), jnp.asarray(7, i32)),
        lambda: (F(1 << 20), jnp.asarray(50, i32)))

    # Data-dependent while: Newton's square root until converged (at most 60 steps).
    def newton_sqrt(a):
        def cond(c):
            i, x = c
            return (i < 60) & (jnp.max(jnp.abs(x * x - a) / a) > 1e-6)
        def body(c):
            i, x = c
            return i + 1, 0.5 * (x + a / x)
        return lax.while_loop(cond, body, (jnp.asarray(0, jnp.int32), jnp.ones_like(a)))[1]
    add("while_newton_n1m_f32", newton_sqrt, lambda: (F(100, lo=0.5, hi=100.0),), lambda: (F(1 << 20, lo=0.5, hi=100.0),))

    # Recurrent cells over lax.scan: tanh RNN, LSTM, GRU; trip count = xs.shape[0].
    def rnn(h0, xs, w, u, b):
        def cell(h, x):
            h = jnp.tanh(h @ w + x @ u + b)
            return h, h.sum(-1)
        return lax.scan(cell, h0, xs)
    def rnn_args(T, B, F_, H, dtype=np.float32):
        return lambda: (F(B, H, dtype=dtype), F(T, B, F_, dtype=dtype), Wt(H, H, dtype=dtype), Wt(F_, H, dtype=dtype),
                        F(H, dtype=dtype, lo=-0.1, hi=0.1))
    add("scan_rnn_t128_b64_h512_f32", rnn, rnn_args(5, 4, 8, 16), rnn_args(128, 64, 256, 512))

    def lstm(h0, c0, xs, w, b):
        def cell(hc, x):
            h, c = hc
            z = jnp.concatenate([x, h], -1) @ w + b
            i, f, o, u = jnp.split(z, 4, -1)
            c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(u)
            h = jax.nn.sigmoid(o) * jnp.tanh(c)
            return (h, c), h
        (h, c), ys = lax.scan(cell, (h0, c0), xs)
        return h, c, ys
    def lstm_args(T, B, F_, H, dtype=np.float32):
        return lambda: (F(B, H, dtype=dtype), F(B, H, dtype=dtype), F(T, B, F_, dtype=dtype),
                        Wt(F_ + H, 4 * H, dtype=dtype), F(4 * H, dtype=dtype, lo=-0.1, hi=0.1))
    add("scan_lstm_t64_b64_h512_f32", lstm, lstm_args(4, 2, 8, 8), lstm_args(64, 64, 512, 512))
    add("scan_lstm_t32_b32_h1024_bf16", lstm, lstm_args(4, 2, 8, 8, bf16), lstm_args(32, 32, 1024, 1024, bf16))

    def gru(h0, xs, wx, wh, b):
        def cell(h, x):
            gx = x @ wx + b
            gh = h @ wh
            rx, zx, nx = jnp.split(gx, 3, -1)
            rh, zh, nh = jnp.split(gh, 3, -1)
            r, z = jax.nn.sigmoid(rx + rh), jax.nn.sigmoid(zx + zh)
            n = jnp.tanh(nx + r * nh)
            h = (1 - z) * n + z * h
            return h, h
        return lax.scan(cell, h0, xs)
    def gru_args(T, B, F_, H):
        return lambda: (F(B, H), F(T, B, F_), Wt(F_, 3 * H), Wt(H, 3 * H), F(3 * H, lo=-0.1, hi=0.1))
    add("scan_gru_t100_b128_h256_f32", gru, gru_args(5, 3, 8, 8), gru_args(100, 128, 256, 256))

    # Backpropagation through time: gradient of a tanh RNN's loss in its weights.
    def bptt(h0, xs, w, u, b):
        def loss(w, u):
            h, s = rnn(h0, xs, w, u, b)
            return jnp.mean(h * h) + jnp.mean(s)
        return jax.grad(loss, argnums=(0, 1))(w, u)
    add("scan_bptt_t64_b32_h256_f32", bptt, rnn_args(4, 3, 8, 8), rnn_args(64, 32, 256, 256))

    # Stacked outputs: an exponential moving average over a long sequence, every step kept.
    def ema(s0, xs):
        return lax.scan(lambda s, x: (0.9 * s + 0.1 * x, 0.9 * s + 0.1 * x), s0, xs)
    add("scan_ema_t1024_16x64_f32", ema, lambda: (F(2, 4), F(6, 2, 4)), lambda: (F(16, 64), F(1024, 16, 64)))

    # Nested: a scan of 16 steps, each a fori_loop of 8 small products.
    def nested(x, ws):
        def outer(x, w):
            x = lax.fori_loop(0, 8, lambda i, x: jnp.tanh(x @ w), x)
            return x, x.sum()
        return lax.scan(outer, x, ws)
    add("nested_scan16_fori8_n128_f32", nested, lambda: (F(4, 4), Wt(3, 4, 4)), lambda: (F(128, 128), Wt(16, 128, 128)))

    # One decode step of a transformer layer against a KV cache (position given as an input).
    def attend(q, kc, vc, valid):
        s = jnp.einsum("bhd,bshd->bhs", q, kc) / np.float32(np.sqrt(q.shape[-1]))
        s = jnp.where(valid[None, None, :], s.astype(jnp.float32), -1e9)
        p = jax.nn.softmax(s, -1).astype(q.dtype)
        return jnp.einsum("bhs,bshd->bhd", p, vc)

    def decode_step(x, kc, vc, pos, wqkv, wo, w1, w2):
        B, L, H, Dh = kc.shape
        q, k, v = jnp.split(x @ wqkv, 3, -1)
        kc = lax.dynamic_update_slice(kc, k.reshape(B, 1, H, Dh), (0, pos, 0, 0))
        vc = lax.dynamic_update_slice(vc, v.reshape(B, 1, H, Dh), (0, pos, 0, 0))
        a = attend(q.reshape(B, H, Dh), kc, vc, jnp.arange(L) <= pos).reshape(B, H * Dh) @ wo
        x = x + a
        return x + jax.nn.gelu(x @ w1) @ w2, kc, vc
    def step_args(B, L, H, Dh, pos):
        D = H * Dh
        return lambda: (F(B, D, dtype=bf16), F(B, L, H, Dh, dtype=bf16), F(B, L, H, Dh, dtype=bf16), jnp.asarray(pos, i32),
                        Wt(D, 3 * D, dtype=bf16), Wt(D, D, dtype=bf16), Wt(D, 4 * D, dtype=bf16), Wt(4 * D, D, dtype=bf16))
    add("decode_step_b8_l2048_h8x64_bf16", decode_step, step_args(2, 8, 2, 4, 5), step_args(8, 2048, 8, 64, 1500))

    # A teacher-forced decode loop: each step embeds its token, writes its K/V into the cache at
    # the step's position and attends to the positions written so far.
    def decode_loop(tokens, emb, wqkv, wo, w1, w2, wout):
        B, S = tokens.shape
        D = emb.shape[1]
        H = 4
        Dh = D // H
        def step(i, carry):
            kc, vc, _ = carry
            x = emb[lax.dynamic_index_in_dim(tokens, i, axis=1, keepdims=False)]
            q, k, v = jnp.split(x @ wqkv, 3, -1)
            kc = lax.dynamic_update_slice(kc, k.reshape(B, 1, H, Dh), (0, i, 0, 0))
            vc = lax.dynamic_update_slice(vc, v.reshape(B, 1, H, Dh), (0, i, 0, 0))
            x = x + attend(q.reshape(B, H, Dh), kc, vc, jnp.arange(S) <= i).reshape(B, D) @ wo
            return kc, vc, x + jax.nn.gelu(x @ w1) @ w2
        z = jnp.zeros((B, S, H, Dh), emb.dtype)
        _, _, x = lax.fori_loop(0, S, step, (z, z, jnp.zeros((B, D), emb.dtype)))
        return (x @ wout).astype(jnp.float32)
    def loop_args(B, S, D, V):
        return lambda: (jnp.asarray(rnd((B, S), i32, 0, V)), F(V, D, dtype=bf16), Wt(D, 3 * D, dtype=bf16),
                        Wt(D, D, dtype=bf16), Wt(D, 4 * D, dtype=bf16), Wt(4 * D, D, dtype=bf16), Wt(D, V, dtype=bf16))
    add("decode_loop_s128_b8_d512_v32000_bf16", decode_loop, loop_args(2, 4, 16, 50), loop_args(8, 128, 512, 32000))
    return work
