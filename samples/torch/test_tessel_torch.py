#!/usr/bin/env python3
"""Checks torch.ops.tessel.* (samples/torch) against PyTorch's own operators on the GPU.

    python3 test_tessel_torch.py path/to/libtessel_torch_ops.so

Each operator on random inputs of odd sizes against an independent reference (float64 where the
op's math is f32, so the reference's own rounding does not count), with NaN left in the memory the
output is allocated from, so an element the kernel does not write shows; then the operators under torch.cuda.graph capture and replay (inputs changed in
place between replays), on a second torch.cuda.Stream (whose queued work the operator must wait
for), under torch.compile(fullgraph=True), and the errors a wrong input gets. Prints one line per
check and a summary; exits 1 when any check fails. With OUT set, writes $OUT/torch_test.json.
pytest also collects it (TESSEL_TORCH_OPS names the library then).
"""
import json
import math
import os
import sys
import time
import traceback

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import philox_ref  # noqa: E402

DEV = "cuda"
RESULTS = []  # {"name", "ok", "detail", "seconds"}
CHECKS = []   # (name, function) in the order they run


def check(fn):
    CHECKS.append((fn.__name__, fn))
    return fn


def ops():
    return torch.ops.tessel


def rand(*shape, dtype=torch.float32, lo=-1.0, hi=1.0, seed=0):
    g = torch.Generator(device=DEV).manual_seed(seed)
    return (torch.rand(*shape, generator=g, device=DEV, dtype=torch.float32) * (hi - lo) + lo).to(dtype)


def poison_next_alloc(like):
    """Fills a freed block of `like`'s size with NaN, so the caching allocator hands an operator's
    output that block: elements the kernel leaves unwritten then fail the comparison."""
    t = torch.full((max(like.numel(), 1),), float("nan"), dtype=like.dtype, device=DEV)
    del t


def assert_close(what, got, want, atol, rtol):
    """|got - want| <= atol + rtol * |want| elementwise (NaN fails); the error names the worst."""
    if got.shape != want.shape:
        raise AssertionError(f"{what}: shape {tuple(got.shape)}, expected {tuple(want.shape)}")
    g, w = got.double(), want.double()
    err = (g - w).abs()
    bad = ~(err <= atol + rtol * w.abs())
    if bool(bad.any()):
        i = int(bad.flatten().nonzero()[0])
        idx = tuple(int(v) for v in torch.unravel_index(torch.tensor(i), got.shape))
        raise AssertionError(f"{what}: {int(bad.sum())} of {got.numel()} elements off (atol {atol}, rtol {rtol}); "
                             f"first at {idx}: got {g.flatten()[i].item()!r}, expected {w.flatten()[i].item()!r}")
    return float(err.max()) if err.numel() else 0.0


# ---- references -------------------------------------------------------------------------

def softmax_ref(x):
    return torch.softmax(x.double(), dim=-1)


def layer_norm_ref(x, w, b, eps):
    return F.layer_norm(x.double(), (x.shape[-1],), w.double(), b.double(), eps)


def gelu_erf(v):
    return 0.5 * v * (1.0 + torch.erf(v / math.sqrt(2.0)))


def dropout_keep(seed, n, p):
    """tessel's mask: element i kept when rand(seed, i) > p, both f32."""
    r = philox_ref.rand_tensor(torch, seed, n, DEV)
    return r > torch.tensor(p, dtype=torch.float32, device=DEV)


def bias_gelu_dropout_ref(x, bias, p, seed):
    """(reference, keep mask): gelu(x + bias) / (1 - p) where kept, in float64; the kernel's
    scale is 1 / (1 - p) rounded to f32, so the reference uses that."""
    keep = dropout_keep(seed, x.numel(), p).view(x.shape)
    one = torch.tensor(1.0, dtype=torch.float32)
    scale = float(one / (one - torch.tensor(p, dtype=torch.float32)))
    g = gelu_erf(x.double() + bias.double())
    return torch.where(keep, g * scale, torch.zeros_like(g)), keep


def matmul_bias_gelu_ref(a, b, bias):
    """(reference, scale): gelu(a @ b + bias) in float64, and |a| @ |b| + |bias|, the size the
    error of an f16 result with f32 accumulation is relative to."""
    ref = gelu_erf(a.double() @ b.double() + bias.double())
    scale = a.double().abs() @ b.double().abs() + bias.double().abs()
    return ref, scale


def check_matmul(what, c, a, b, bias):
    ref, scale = matmul_bias_gelu_ref(a, b, bias)
    err = (c.double() - ref).abs()
    bad = ~(err <= 1.5e-3 * scale + 1e-6)  # f16 output (2^-11) and the GELU's slope (<= 1.13)
    if bool(bad.any()):
        i = int(bad.flatten().nonzero()[0])
        raise AssertionError(f"{what}: {int(bad.sum())} of {c.numel()} elements off; first at flat index {i}: got "
                             f"{c.flatten()[i].item()!r}, expected {ref.flatten()[i].item()!r}")
    return float(err.max())


# Tolerances of the outputs per storage type, against float64 (the samples' own).
LN_TOL = {torch.float32: 1e-4, torch.float16: 2e-3, torch.bfloat16: 1e-2}

SOFTMAX_SHAPES = [(1, 1), (37, 1000), (4096, 4097), (3, 10000), (2, 3, 50), (5, 8192)]
LN_SHAPES = [(1, 1), (37, 1000), (4096, 4097), (5, 10000), (2, 3, 64)]
BGD_SHAPES = [(1, 1), (37, 1000), (4096, 4097), (2, 3, 50)]
MM_SHAPES = [(1, 1, 1), (37, 1000, 129), (128, 256, 512), (511, 1000, 257), (4096, 4096, 4097)]
MSE_SIZES = [1, 4097, 1000003]
# mse_sum against float64: f32 squares summed per lane, then a few hundred atomic f32 additions
# per launch, in whatever order they land: about 1e-7 of the sum; 1e-5 leaves room.
MSE_RTOL = 1e-5


# ---- the operators, eagerly on the current stream ----------------------------------------------

@check
def philox_reference():
    bad = philox_ref.self_check_scalar()
    n = 1 << 22
    r = philox_ref.rand_tensor(torch, 7, n, DEV)
    for seed, offset, bits in philox_ref.KNOWN_RAND:
        if offset < n:
            r1 = philox_ref.rand_tensor(torch, seed, offset + 1, DEV)[offset].item()
            if philox_ref.f32_bits(r1) != bits:
                bad.append(f"rand_tensor({seed})[{offset}] = 0x{philox_ref.f32_bits(r1):08x}, expected 0x{bits:08x}")
    mean = float(r.double().mean())
    if abs(mean - 0.5) > 5 * math.sqrt(1 / 12 / n):
        bad.append(f"rand_tensor(7, {n}) has mean {mean}")
    if bad:
        raise AssertionError("; ".join(bad))
    return f"{len(philox_ref.KNOWN_RAND)} known values; mean of {n} draws {mean:.5f}"


@check
def softmax_values():
    worst = 0.0
    for i, shape in enumerate(SOFTMAX_SHAPES):
        x = rand(*shape, lo=-4.0, hi=4.0, seed=i)
        poison_next_alloc(x)
        y = ops().softmax(x)
        worst = max(worst, assert_close(f"softmax {shape}", y, softmax_ref(x), 1e-6, 2e-5))
        assert y.dtype == torch.float32 and y.is_contiguous()
    return f"{len(SOFTMAX_SHAPES)} shapes up to 4096 x 4097; max |err| {worst:.3g}"


@check
def layer_norm_values():
    worst = {}
    for dtype, tol in LN_TOL.items():
        for i, shape in enumerate(LN_SHAPES):
            cols = shape[-1]
            x = rand(*shape, dtype=dtype, lo=-1.0, hi=5.0, seed=10 + i)  # a nonzero mean to subtract
            w = rand(cols, dtype=dtype, lo=0.5, hi=1.5, seed=20 + i)
            b = rand(cols, dtype=dtype, lo=-1.0, hi=1.0, seed=30 + i)
            poison_next_alloc(x)
            y = ops().layer_norm(x, w, b, 1e-5)
            assert y.dtype == dtype, f"layer_norm {shape} {dtype}: output dtype {y.dtype}"
            err = assert_close(f"layer_norm {shape} {dtype}", y, layer_norm_ref(x, w, b, 1e-5), tol, tol)
            worst[str(dtype)] = max(worst.get(str(dtype), 0.0), err)
    return "; ".join(f"{k}: max |err| {v:.3g}" for k, v in worst.items())


@check
def bias_gelu_dropout_values():
    details = []
    for i, shape in enumerate(BGD_SHAPES):
        for p, seed in [(0.0, 1), (0.1, 7), (0.5, 12345)]:
            x = rand(*shape, lo=-3.0, hi=3.0, seed=40 + i)
            bias = rand(shape[-1], lo=-1.0, hi=1.0, seed=50 + i)
            poison_next_alloc(x)
            y = ops().bias_gelu_dropout(x, bias, p, seed)
            ref, keep = bias_gelu_dropout_ref(x, bias, p, seed)
            # The mask first, exactly: dropped elements are 0, kept ones are not, except where
            # gelu(x + bias) is 0 itself (x = -bias exactly: possible among millions of draws).
            kept_got = y != 0
            differ = (kept_got != keep) & (gelu_erf(x.double() + bias.double()) != 0)
            if bool(differ.any()):
                diff = int(differ.sum())
                raise AssertionError(f"bias_gelu_dropout {shape} p={p} seed={seed}: the kept set differs from "
                                     f"tessel's Philox mask at {diff} of {x.numel()} elements")
            assert_close(f"bias_gelu_dropout {shape} p={p} seed={seed}", y, ref, 1e-5, 1e-5)
            # And the mask's statistics, independently of the reference's Philox.
            n = x.numel()
            if n >= 10000:
                frac = float(kept_got.double().mean())
                sigma = math.sqrt(max(p * (1 - p), 1e-12) / n)
                if abs(frac - (1 - p)) > 6 * sigma + 3.0 / n:  # + 3 elements: rand = 0 exactly, x = -bias
                    raise AssertionError(f"bias_gelu_dropout {shape} p={p}: kept fraction {frac}, expected "
                                         f"{1 - p} +- {6 * sigma:.2g}")
                details.append(f"p={p}: kept {frac:.4f}")
    # p = 0 is GELU alone: the same as PyTorch's exact (erf) GELU.
    x = rand(37, 1000, lo=-3.0, hi=3.0, seed=60)
    bias = rand(1000, seed=61)
    assert_close("bias_gelu_dropout p=0 vs F.gelu", ops().bias_gelu_dropout(x, bias, 0.0, 3),
                 F.gelu(x + bias), 1e-5, 1e-5)
    # The same seed gives the same mask; another seed another.
    a = ops().bias_gelu_dropout(x, bias, 0.5, 9)
    assert torch.equal(a, ops().bias_gelu_dropout(x, bias, 0.5, 9)), "same seed, different results"
    assert not torch.equal(a, ops().bias_gelu_dropout(x, bias, 0.5, 10)), "seeds 9 and 10 give the same mask"
    return "mask = tessel's Philox exactly; " + ", ".join(sorted(set(details)))


@check
def matmul_bias_gelu_values():
    worst = 0.0
    for i, (M, K, N) in enumerate(MM_SHAPES):
        a = rand(M, K, dtype=torch.float16, seed=70 + i) / math.sqrt(K) * 2
        b = rand(K, N, dtype=torch.float16, seed=80 + i)
        bias = rand(N, dtype=torch.float16, seed=90 + i)
        poison_next_alloc(torch.empty(M, N, dtype=torch.float16, device="meta"))
        c = ops().matmul_bias_gelu(a, b, bias)
        assert c.dtype == torch.float16 and tuple(c.shape) == (M, N)
        worst = max(worst, check_matmul(f"matmul_bias_gelu {M}x{K}x{N}", c, a, b, bias))
    # Strided operands: a transposed B (column-major) and a row-padded A.
    a_pad = rand(300, 272, dtype=torch.float16, seed=100)[:, :257]
    b_t = rand(129, 257, dtype=torch.float16, seed=101).t()
    bias = rand(129, dtype=torch.float16, seed=102)
    worst = max(worst, check_matmul("matmul_bias_gelu strided", ops().matmul_bias_gelu(a_pad, b_t, bias),
                                    a_pad, b_t, bias))
    # Against PyTorch's own f16 path too.
    a = rand(256, 512, dtype=torch.float16, seed=103) / 8
    b = rand(512, 384, dtype=torch.float16, seed=104)
    bias = rand(384, dtype=torch.float16, seed=105)
    assert_close("matmul_bias_gelu vs F.gelu(a @ b + bias)", ops().matmul_bias_gelu(a, b, bias),
                 F.gelu((a @ b + bias).float()).half(), 2e-2, 2e-2)
    return f"{len(MM_SHAPES) + 2} cases up to 4096x4096x4097; max |err| {worst:.3g}"


def mse_sum_ref(pred, target, piece=1 << 26):
    """sum((pred - target)^2) in float64, a piece at a time (no float64 copy of a large input)."""
    p, t = pred.reshape(-1), target.reshape(-1)
    total = torch.zeros((), dtype=torch.float64, device=pred.device)
    for i in range(0, p.numel(), piece):
        total += ((p[i:i + piece].double() - t[i:i + piece].double()) ** 2).sum()
    return float(total)


def check_mse_sum(what, got, pred, target):
    """got: mse_sum's output, a 1-element f32 tensor; returns the relative error."""
    if got.dtype != torch.float32 or tuple(got.shape) != (1,):
        raise AssertionError(f"{what}: expected a float32 tensor of shape (1,), got {got.dtype} {tuple(got.shape)}")
    want = mse_sum_ref(pred, target)
    g = float(got[0])
    rel = abs(g - want) / max(abs(want), 1e-30) if want != 0 else abs(g)
    if not rel <= MSE_RTOL:  # NaN fails too
        raise AssertionError(f"{what}: got {g!r}, expected {want!r} (relative error {rel:.3g} > {MSE_RTOL})")
    return rel


@check
def mse_sum_values():
    o = ops()
    worst = 0.0
    for i, n in enumerate(MSE_SIZES):
        pred = rand(n, lo=-2.0, hi=3.0, seed=300 + i)
        target = rand(n, lo=-2.0, hi=3.0, seed=310 + i)
        poison_next_alloc(torch.empty(1, device="meta"))  # the output must be zeroed, not just added to
        worst = max(worst, check_mse_sum(f"mse_sum n={n}", o.mse_sum(pred, target), pred, target))
    # Any shapes of equal numel; a slice whose start is 1 element (4 bytes) past an aligned address.
    pred = rand(7, 11, 13, seed=320)
    target = rand(1001, seed=321)
    worst = max(worst, check_mse_sum("mse_sum [7, 11, 13] vs [1001]", o.mse_sum(pred, target), pred, target))
    base = rand(5001, seed=322)
    worst = max(worst, check_mse_sum("mse_sum of a slice", o.mse_sum(base[1:], base[:-1]), base[1:], base[:-1]))
    # Equal inputs give exactly 0; empty inputs 0 too, nothing launched.
    assert float(o.mse_sum(pred, pred)[0]) == 0.0, "mse_sum(x, x) is not 0"
    assert float(o.mse_sum(torch.empty(0, device=DEV), torch.empty(0, device=DEV))[0]) == 0.0
    # Past 2^30 elements the operator launches once per 2^30-element chunk, adding into one output.
    detail = ""
    n_big = (1 << 30) + 4097
    if torch.cuda.mem_get_info()[0] > 6 * n_big * 4:  # 2 inputs and rand()'s temporaries
        pred = rand(n_big, lo=-2.0, hi=3.0, seed=330)
        target = rand(n_big, lo=-2.0, hi=3.0, seed=331)
        rel = check_mse_sum("mse_sum n=2^30+4097 (2 launches)", o.mse_sum(pred, target), pred, target)
        worst = max(worst, rel)
        detail = f"; 2^30+4097 elements (2 chunks): rel err {rel:.3g}"
        del pred, target
        torch.cuda.empty_cache()
    else:
        detail = "; 2^30+4097 elements: skipped (not enough free GPU memory)"
    # On a side stream: the op must run there, after the in-place update queued before it.
    x = rand(4097, seed=340)
    y = rand(4097, seed=341)
    fresh = rand(4097, lo=5.0, hi=6.0, seed=342)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        if hasattr(torch.cuda, "_sleep"):
            torch.cuda._sleep(50_000_000)
        x.copy_(fresh)
        got = o.mse_sum(x, y)
    torch.cuda.current_stream().wait_stream(s)
    got.record_stream(torch.cuda.current_stream())
    check_mse_sum("mse_sum on a side stream", got, fresh, y)
    return f"sizes {MSE_SIZES}, any shape, slices, side stream; max rel err {worst:.3g} (<= {MSE_RTOL})" + detail


# ---- streams, graphs, compile ------------------------------------------------------------

@check
def dlpack_values():
    """Tensors passed to a tessel launch as DLPack (PyTorch's at::toDLPack), checked at launch."""
    o = ops()
    sizes = [1, 4097, 1000003]
    for n in sizes:
        x = rand(n, lo=-3.0, hi=3.0, seed=300 + n)
        poison_next_alloc(x)
        y = o.scale_dlpack(x, 2.5)
        assert torch.equal(y, x * 2.5), f"scale_dlpack n={n}: differs from x * 2.5"
    # One element in: the address is 4 bytes past an aligned one (the kernel variant without the
    # divisible-by-16 assumption), still right.
    base = rand(4098, seed=310)
    x = base[1:]
    y = o.scale_dlpack(x, -0.5)
    assert torch.equal(y, x * -0.5), "scale_dlpack on an offset view: differs from x * -0.5"
    expect_error("scale_dlpack dtype", lambda: o.scale_dlpack(base.double(), 1.0), "tessel::scale_dlpack",
                 "torch.float32")
    return f"sizes {sizes} and an offset view equal x * s exactly"


def small_inputs():
    """One set of inputs for every operator (fixed shapes: what a graph captures)."""
    return {
        "x": rand(64, 1000, lo=-4.0, hi=4.0, seed=200),
        "xh": rand(64, 1024, dtype=torch.float16, lo=-1.0, hi=5.0, seed=201),
        "w": rand(1024, dtype=torch.float16, lo=0.5, hi=1.5, seed=202),
        "b": rand(1024, dtype=torch.float16, seed=203),
        "bias": rand(1000, seed=204),
        "a": rand(96, 256, dtype=torch.float16, seed=205) / 8,
        "bm": rand(256, 160, dtype=torch.float16, seed=206),
        "bias_h": rand(160, dtype=torch.float16, seed=207),
    }


def run_all(t):
    o = ops()
    return [o.softmax(t["x"]), o.layer_norm(t["xh"], t["w"], t["b"], 1e-5),
            o.bias_gelu_dropout(t["x"], t["bias"], 0.25, 77), o.matmul_bias_gelu(t["a"], t["bm"], t["bias_h"])]


def check_all(what, outs, t):
    sm, ln, bgd, mm = outs
    assert_close(f"{what}: softmax", sm, softmax_ref(t["x"]), 1e-6, 2e-5)
    assert_close(f"{what}: layer_norm", ln, layer_norm_ref(t["xh"], t["w"], t["b"], 1e-5), 2e-3, 2e-3)
    assert_close(f"{what}: bias_gelu_dropout", bgd, bias_gelu_dropout_ref(t["x"], t["bias"], 0.25, 77)[0],
                 1e-5, 1e-5)
    check_matmul(f"{what}: matmul_bias_gelu", mm, t["a"], t["bm"], t["bias_h"])


@check
def side_stream():
    """On a torch.cuda.Stream: the op must run there, after the work queued before it."""
    t = small_inputs()
    fresh = small_inputs()
    for v in fresh.values():
        v.mul_(-0.5).add_(0.25)  # different values, same shapes
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        # The stream is held back ~50 ms, then the inputs change on it: an op launched on any
        # other stream runs first and reads the old values.
        if hasattr(torch.cuda, "_sleep"):
            torch.cuda._sleep(50_000_000)
        for k, v in t.items():
            v.copy_(fresh[k])
        outs = run_all(t)
    torch.cuda.current_stream().wait_stream(s)
    for o in outs:
        o.record_stream(torch.cuda.current_stream())
    check_all("side stream", outs, fresh)
    return "4 ops on a second stream, ordered after a delayed in-place update"


@check
def cuda_graph():
    """Captured by torch.cuda.graph, replayed after the inputs change in place."""
    t = small_inputs()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):  # warm-up (compiles every variant) on a side stream, as PyTorch asks
        for _ in range(2):
            run_all(t)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        outs = run_all(t)
    for round_ in range(3):
        fresh = small_inputs()
        for k, v in t.items():
            v.copy_(fresh[k] * (1.0 + 0.5 * round_) - 0.1 * round_)
        g.replay()
        torch.cuda.synchronize()
        check_all(f"graph replay {round_}", outs, t)
    return "4 ops captured once, 3 replays on changed inputs"


@check
def torch_compile():
    """torch.compile(fullgraph=True) of a function mixing the ops with torch ops (the Meta
    kernels give the shapes the trace needs)."""
    def f(x, w, b, a, bm, bias_h, bias):
        h = ops().layer_norm(x, w, b, 1e-5)                     # f16 [64, 1024]
        s = ops().softmax(h.float() * 0.5)                      # f32
        m = ops().matmul_bias_gelu(a, bm, bias_h)               # f16 [96, 160]
        d = ops().bias_gelu_dropout(s[:, :1000].contiguous(), bias, 0.1, 5)
        return s.sum(dim=-1), m * 2, d

    t = small_inputs()
    args = (t["xh"], t["w"], t["b"], t["a"], t["bm"], t["bias_h"], t["bias"])
    want = f(*args)
    torch._dynamo.reset()
    cf = torch.compile(f, fullgraph=True, dynamic=False)
    got = cf(*args)
    for name, g_, w_ in zip(["softmax row sums", "matmul", "dropout"], got, want):
        assert_close(f"compiled {name}", g_, w_, 1e-3, 1e-3)
    # Fresh values, same shapes: the compiled graph runs again without retracing.
    t2 = small_inputs()
    for v in t2.values():
        v.mul_(0.75)
    args2 = (t2["xh"], t2["w"], t2["b"], t2["a"], t2["bm"], t2["bias_h"], t2["bias"])
    for name, g_, w_ in zip(["softmax row sums", "matmul", "dropout"], cf(*args2), f(*args2)):
        assert_close(f"compiled (2nd call) {name}", g_, w_, 1e-3, 1e-3)
    # The Meta kernels alone: shapes and dtypes without running anything.
    xm = torch.empty(3, 7, 11, device="meta")
    assert ops().softmax(xm).shape == (3, 7, 11)
    am, bmm = torch.empty(5, 9, device="meta", dtype=torch.float16), torch.empty(9, 4, device="meta", dtype=torch.float16)
    r = ops().matmul_bias_gelu(am, bmm, torch.empty(4, device="meta", dtype=torch.float16))
    assert r.shape == (5, 4) and r.dtype == torch.float16 and r.device.type == "meta"
    m = ops().mse_sum(torch.empty(3, 4, device="meta"), torch.empty(12, device="meta"))
    assert m.shape == (1,) and m.dtype == torch.float32 and m.device.type == "meta"
    return "fullgraph compile of 4 ops with torch ops between; meta shapes"


# ---- errors ----------------------------------------------------------------------------

def expect_error(what, fn, *needles):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 (RuntimeError, NotImplementedError, ValueError alike)
        msg = str(e)
        missing = [n for n in needles if n not in msg]
        if missing:
            raise AssertionError(f"{what}: the error does not say {missing!r}: {type(e).__name__}: {msg[:300]}")
        return f"{type(e).__name__}"
    raise AssertionError(f"{what}: no error")


@check
def input_errors():
    o = ops()
    x = rand(8, 16)
    got = [
        expect_error("non-contiguous x", lambda: o.softmax(rand(16, 8).t()), "tessel::softmax", "contiguous"),
        expect_error("float64 x", lambda: o.softmax(x.double()), "tessel::softmax", "torch.float32", "torch.float64"),
        expect_error("CPU x", lambda: o.softmax(x.cpu()), "CPU"),
        expect_error("weight size", lambda: o.layer_norm(x, rand(15), rand(16), 1e-5), "tessel::layer_norm",
                     "weight", "[16]"),
        expect_error("weight dtype", lambda: o.layer_norm(x, rand(16).half(), rand(16), 1e-5), "tessel::layer_norm",
                     "torch.float16"),
        expect_error("dropout p", lambda: o.bias_gelu_dropout(x, rand(16), 1.5, 0), "p must be in [0, 1]"),
        expect_error("dropout seed", lambda: o.bias_gelu_dropout(x, rand(16), 0.5, -1), "seed"),
        expect_error("matmul shapes", lambda: o.matmul_bias_gelu(rand(4, 8).half(), rand(7, 3).half(),
                                                                 rand(3).half()), "a's columns must equal b's rows"),
        expect_error("matmul dtype", lambda: o.matmul_bias_gelu(rand(4, 8), rand(8, 3), rand(3)), "torch.float16"),
        expect_error("mse_sum numel", lambda: o.mse_sum(rand(10), rand(11)), "tessel::mse_sum",
                     "same number of elements", "10", "11"),
        expect_error("mse_sum dtype", lambda: o.mse_sum(rand(10), rand(10).double()), "tessel::mse_sum", "target",
                     "torch.float64"),
        expect_error("mse_sum non-contiguous", lambda: o.mse_sum(rand(4, 6).t(), rand(6, 4)), "tessel::mse_sum",
                     "contiguous"),
    ]
    if torch.cuda.device_count() > 1:
        got.append(expect_error("two GPUs", lambda: o.layer_norm(x, rand(16), rand(16).to("cuda:1"), 1e-5),
                                "cuda:1"))
    return f"{len(got)} wrong inputs rejected with their names"


@check
def empty_inputs():
    o = ops()
    assert o.softmax(torch.empty(0, 5, device=DEV)).shape == (0, 5)
    assert o.layer_norm(torch.empty(0, 4, device=DEV), rand(4), rand(4), 1e-5).shape == (0, 4)
    assert o.matmul_bias_gelu(torch.empty(0, 4, device=DEV, dtype=torch.float16), rand(4, 3).half(),
                              rand(3).half()).shape == (0, 3)
    return "empty tensors give empty results, nothing launched"


@check
def first_call_compiles_later_calls_launch():
    """Timing, for information: a new variant's first call compiles; later calls only launch."""
    o = ops()
    x = rand(3, 333)  # a row width no other check used: a new BLOCK, a fresh variant
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    o.softmax(x)
    torch.cuda.synchronize()
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    for _ in range(100):
        o.softmax(x)
    torch.cuda.synchronize()
    later = (time.perf_counter() - t0) / 100
    assert later < first, f"later calls ({later * 1e6:.1f} us) not faster than the first ({first * 1e3:.1f} ms)"
    return f"first call {first * 1e3:.1f} ms (compile or cache load), later calls {later * 1e6:.1f} us"


# ---- running ----------------------------------------------------------------------------

def load(path):
    torch.ops.load_library(path)
    return torch.ops.tessel


def run(path):
    load(path)
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}, library {path}")
    only = [n for n in os.environ.get("TESSEL_TORCH_CHECKS", "").split(",") if n]  # a subset, by name
    for name, fn in CHECKS:
        if only and name not in only:
            continue
        t0 = time.perf_counter()
        try:
            detail = fn() or ""
            ok = True
        except Exception as e:  # noqa: BLE001: every failure is reported, the run goes on
            detail = f"{type(e).__name__}: {e}"
            if not isinstance(e, AssertionError):
                detail += "\n" + traceback.format_exc(limit=4)
            ok = False
        dt = time.perf_counter() - t0
        RESULTS.append({"name": name, "ok": ok, "detail": detail, "seconds": round(dt, 3)})
        print(f"{'PASS' if ok else 'FAIL'} {name} ({dt:.1f} s): {detail}", flush=True)
    failed = [r["name"] for r in RESULTS if not r["ok"]]
    print(f"summary: {len(RESULTS) - len(failed)} of {len(RESULTS)} checks passed"
          + (f"; failed: {', '.join(failed)}" if failed else ""))
    if os.environ.get("OUT"):
        os.makedirs(os.environ["OUT"], exist_ok=True)
        with open(os.path.join(os.environ["OUT"], "torch_test.json"), "w") as f:
            json.dump({"torch": torch.__version__, "device": torch.cuda.get_device_name(), "library": path,
                       "passed": not failed, "checks": RESULTS}, f, indent=1)
    return 0 if not failed else 1


# pytest: one test per check, the library from TESSEL_TORCH_OPS.
def _pytest_case(fn):
    def case():
        load(os.environ["TESSEL_TORCH_OPS"])
        fn()
    case.__name__ = "test_" + fn.__name__
    return case


for _name, _fn in list(CHECKS):
    globals()["test_" + _name] = _pytest_case(_fn)

if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__)
        sys.exit(2)
    if not torch.cuda.is_available():
        print("FAIL: CUDA is not available to PyTorch")
        sys.exit(1)
    sys.exit(run(sys.argv[1]))
