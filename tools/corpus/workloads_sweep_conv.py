"""Op-family sweep (issue 34, part 2): convolutions. A sampled grid, not the full product, over
groups (1, 2, C/8, C = depthwise), kernels 1/3/5/7, strides 1/2, dilations 1/2, 1-D/2-D/3-D,
f32/bf16, and the three directions JAX emits: forward, input gradient (vjp in x) and filter
gradient (vjp in w). Channels-last (NWC / NHWC / NDHWC, as Flax writes them), SAME padding.
Depthwise NHWC 3x3 and 7x7 at realistic sizes (N=32, 56x56, C=128) in all three directions: the
cliff issue 34 names.

Each case's groups is a function of its channels (C/8, C), so the small version (a few channels,
checked against JAX's outputs) and the large one (timed beside XLA) are the same program.
Usage on the GPU machine: SET=sweep_conv python3 tools/corpus/jax_corpus.py OUTDIR all
(or tools/corpus/sweep.sh conv OUTDIR, which also times hloc and checks the small modules).
"""
import numpy as np

FAMILY = "conv"
SPEC = {1: ("NWC", "WIO", "NWC"), 2: ("NHWC", "HWIO", "NHWC"), 3: ("NDHWC", "DHWIO", "NDHWC")}


def make(g):
    jax, jnp, lax, rnd = g["jax"], g["jnp"], g["lax"], g["rnd"]
    work = {}

    def groups_of(spec, c):
        return {"1": 1, "2": 2, "c8": max(c // 8, 1), "c": c}[spec]

    def case(dims, groups, k, stride, dil, direction, dtype, small, large, cout=None):
        """small/large: (N, spatial, C); cout: output channels (default C; depthwise: C)."""
        tag = "f32" if dtype == np.float32 else "bf16"
        name = f"sweep_conv_{dims}d_g{groups}_k{k}_s{stride}_d{dil}_{direction}_{tag}"
        if cout is not None:
            name += f"_o{cout}"

        def conv(x, w):
            c = x.shape[-1]
            return lax.conv_general_dilated(x, w, (stride,) * dims, "SAME", rhs_dilation=(dil,) * dims,
                                            dimension_numbers=SPEC[dims],
                                            feature_group_count=groups_of(groups, c))

        def fn(x, w, *dy):
            if direction == "fwd":
                return conv(x, w)
            if direction == "dgrad":
                return jax.vjp(lambda x: conv(x, w), x)[1](dy[0])[0]
            return jax.vjp(lambda w: conv(x, w), w)[1](dy[0])[0]

        def args(shape, big):
            n, sp, c = shape
            co = c if cout is None else (cout if big else max(cout // 8, 4))
            gr = groups_of(groups, c)
            x = rnd((n,) + (sp,) * dims + (c,))
            w = rnd((k,) * dims + (c // gr, co), np.float32, -0.2, 0.2)
            x, w = jnp.asarray(x, dtype=dtype), jnp.asarray(w, dtype=dtype)
            if direction == "fwd":
                return x, w
            out = jax.eval_shape(conv, x, w)
            return x, w, jnp.asarray(rnd(out.shape), dtype=dtype)

        work[name] = (lambda *a: fn(*a), lambda: args(small, False), lambda: args(large, True))

    f32, bf16 = np.float32, g["bf16"]
    # Depthwise (groups = C), NHWC: 3x3 (MobileNet) and 7x7 (ConvNeXt), all three directions.
    for d in ("fwd", "dgrad", "wgrad"):
        case(2, "c", 3, 1, 1, d, f32, (2, 8, 8), (32, 56, 128))
        case(2, "c", 7, 1, 1, d, bf16, (2, 9, 8), (32, 56, 128))
    case(2, "c", 3, 2, 1, "fwd", f32, (2, 8, 16), (32, 56, 256))
    case(2, "c", 5, 1, 1, "fwd", bf16, (2, 8, 8), (32, 28, 192))
    case(2, "c", 3, 1, 2, "fwd", f32, (2, 8, 8), (32, 28, 256))
    # Dense (groups 1): pointwise, 3x3 in all directions, strided, dilated, 5x5, the 7x7/2 stem.
    case(2, "1", 1, 1, 1, "fwd", bf16, (2, 6, 8), (32, 28, 256))
    for d in ("fwd", "dgrad", "wgrad"):
        case(2, "1", 3, 1, 1, d, f32, (2, 8, 8), (32, 28, 128))
    case(2, "1", 3, 2, 1, "dgrad", bf16, (2, 8, 8), (32, 56, 128))
    case(2, "1", 3, 1, 2, "fwd", f32, (2, 9, 8), (16, 28, 128))
    case(2, "1", 5, 1, 1, "fwd", bf16, (2, 8, 8), (16, 28, 128))
    case(2, "1", 7, 2, 1, "fwd", bf16, (2, 16, 3), (16, 224, 3), cout=64)
    # Grouped: 2 groups, C/8 groups (ResNeXt-like).
    case(2, "2", 3, 1, 1, "fwd", f32, (2, 8, 8), (32, 28, 128))
    case(2, "c8", 3, 1, 1, "fwd", bf16, (2, 8, 16), (32, 28, 256))
    case(2, "c8", 3, 1, 1, "wgrad", bf16, (2, 8, 16), (32, 28, 256))
    # 1-D (audio / sequence): dilated, input gradient, depthwise 7 (Conformer-style).
    case(1, "1", 5, 1, 2, "fwd", f32, (2, 32, 8), (16, 4096, 256))
    case(1, "1", 3, 1, 1, "dgrad", bf16, (2, 32, 8), (16, 4096, 256))
    case(1, "c", 7, 1, 1, "fwd", f32, (2, 32, 8), (16, 4096, 512))
    # 3-D (video / volumes): forward f32, filter gradient bf16.
    case(3, "1", 3, 1, 1, "fwd", f32, (1, 6, 4), (4, 16, 64))
    case(3, "1", 3, 1, 1, "wgrad", bf16, (1, 6, 4), (4, 16, 64))
    return work
