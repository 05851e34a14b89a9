# cuBLAS (through torch) and Triton reference timings for bench_matmul.cpp, in the same GPU run:
# f16 / bf16 matmul at 1024^3, 4096^3, 8192^3 and 8192 x 8192 x 1024 (short K) (Triton: the matmul-tutorial kernel of
# triton_ref.py over the same four configs, best taken), and torch's matmul + bias + GELU
# (cuBLAS, then one pointwise kernel) and the same Triton kernel with bias + GELU (erf) fused
# into its epilogue (best of the same configs, checked against torch) at 4096 and 8192. Writes
# $OUT/matmul_ref.json. BENCH_CASES=plain / fused keeps one of the two parts (as bench_matmul.cpp);
# BENCH_SIZES="4096,8192x8192x1024" keeps those plain shapes.
import json, os
import torch, triton, triton.language as tl
from triton.testing import do_bench

@triton.jit
def mm(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
       G: tl.constexpr, bias=None, EPI: tl.constexpr = 0):
    pid = tl.program_id(0); npm = tl.cdiv(M, BM); npn = tl.cdiv(N, BN)
    npg = G * npn; gid = pid // npg; fm = gid * G; gs = min(npm - fm, G)
    pm = fm + ((pid % npg) % gs); pn = (pid % npg) // gs
    rm = pm * BM + tl.arange(0, BM); rn = pn * BN + tl.arange(0, BN); rk = tl.arange(0, BK)
    ap = a + rm[:, None] * sam + rk[None, :] * sak; bp = b + rk[:, None] * sbk + rn[None, :] * sbn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        acc += tl.dot(tl.load(ap), tl.load(bp)); ap += BK * sak; bp += BK * sbk
    if EPI == 1:  # bias + GELU (erf), in f32, as tessel's matmul_bias_gelu
        acc += tl.load(bias + rn).to(tl.float32)[None, :]
        h = acc * 0.5
        acc = h + h * tl.math.erf(acc * 0.7071067811865476)
    tl.store(c + rm[:, None] * scm + rn[None, :] * scn, acc.to(c.dtype.element_ty))

def tflops(n, ms, m=None, k=None): return 2 * (m or n) * n * (k or n) / (ms * 1e-3) / 1e12

def fused_triton(n, A, B, bias, tag):
    """The Triton kernel with bias + GELU fused, best of four configs, checked against torch."""
    want = torch.nn.functional.gelu(A.float() @ B.float() + bias.float())
    C = torch.empty_like(A)
    best = None
    for (BM, BN, BK, w, s) in [(128, 256, 64, 8, 3), (128, 128, 64, 4, 4), (128, 256, 64, 8, 4), (256, 128, 64, 8, 3)]:
        try:
            g = (triton.cdiv(n, BM) * triton.cdiv(n, BN),)
            run = lambda: mm[g](A, B, C, n, n, n, A.stride(0), A.stride(1), B.stride(0), B.stride(1), C.stride(0),
                                C.stride(1), BM=BM, BN=BN, BK=BK, G=8, bias=bias, EPI=1, num_warps=w, num_stages=s)
            C.fill_(float('nan')); run()
            err = ((C.float() - want).abs().max() / want.abs().max()).item()
            if not err < 1e-2: raise RuntimeError(f'wrong result, relative error {err}')
            ms = do_bench(run, return_mode='median')
            res[f'matmul_bias_gelu_{tag}{n}_triton_{BM}x{BN}x{BK}_w{w}_s{s}_ms'] = ms
            best = ms if best is None else min(best, ms)
        except Exception as e:
            print(f'triton fused {BM}x{BN}x{BK} w{w} s{s}: {type(e).__name__}: {e}')
    if best is not None: res[f'matmul_bias_gelu_{tag}{n}_triton_ms'] = best

def listed(var, name):  # as bench_filter.hpp: a part "=x" matches only the name x
    v = os.environ.get(var, '')
    return not v or any(p and (name == p[1:] if p.startswith('=') else p in name) for p in v.split(','))

def listed_exactly(var, name):
    v = os.environ.get(var, '')
    return not v or name in v.split(',')

res = {}
# (M, N, K); a cube is named by its n, as bench_matmul.cpp names it.
for (m, n, k) in ((1024, 1024, 1024), (4096, 4096, 4096), (8192, 8192, 8192), (8192, 8192, 1024)):
    shape = str(n) if m == n == k else f'{m}x{n}x{k}'
    if not listed('BENCH_CASES', 'plain') or not listed_exactly('BENCH_SIZES', shape): continue
    for dt in (torch.float16, torch.bfloat16):
        name = str(dt)[6:]
        A = torch.randn(m, k, device='cuda', dtype=dt); B = torch.randn(k, n, device='cuda', dtype=dt)
        C = torch.empty(m, n, device='cuda', dtype=dt)
        res[f'matmul_{name}_{shape}_cublas_TFLOPs'] = tflops(n, do_bench(lambda: A @ B, return_mode='median'), m, k)
        best = 0
        for (BM, BN, BK, w, s) in [(128, 256, 64, 8, 3), (128, 128, 64, 4, 4), (128, 256, 64, 8, 4), (256, 128, 64, 8, 3),
                                   (64, 64, 32, 4, 1), (128, 128, 32, 4, 1)]:
            try:
                g = (triton.cdiv(m, BM) * triton.cdiv(n, BN),)
                ms = do_bench(lambda: mm[g](A, B, C, m, n, k, A.stride(0), A.stride(1), B.stride(0), B.stride(1),
                                            C.stride(0), C.stride(1), BM=BM, BN=BN, BK=BK, G=8, num_warps=w,
                                            num_stages=s), return_mode='median')
                best = max(best, tflops(n, ms, m, k))
                res[f'matmul_{name}_{shape}_triton_{BM}x{BN}x{BK}_w{w}_s{s}_TFLOPs'] = tflops(n, ms, m, k)
            except Exception as e:  # a config that does not fit this card
                print(f'triton {BM}x{BN}x{BK} w{w} s{s}: {type(e).__name__}')
        res[f'matmul_{name}_{shape}_triton_TFLOPs'] = best
for n in (4096, 8192):
    if not listed('BENCH_CASES', 'fused') or not listed_exactly('BENCH_SIZES', str(n)): continue
    A = torch.randn(n, n, device='cuda', dtype=torch.float16); B = torch.randn(n, n, device='cuda', dtype=torch.float16)
    bias = torch.randn(n, device='cuda', dtype=torch.float16)
    res[f'matmul_bias_gelu_{n}_torch_ms'] = do_bench(lambda: torch.nn.functional.gelu(A @ B + bias), return_mode='median')
    res[f'matmul_{n}_torch_ms'] = do_bench(lambda: A @ B, return_mode='median')
    fused_triton(n, A, B, bias, '')
    # A scaled so that A @ B has unit standard deviation (as bench_matmul's *_unit_* rows).
    Au = (A.float() / n ** 0.5).to(torch.float16)  # A is randn here: A @ B then has unit standard deviation
    res[f'matmul_bias_gelu_unit_{n}_torch_ms'] = do_bench(lambda: torch.nn.functional.gelu(Au @ B + bias), return_mode='median')
    fused_triton(n, Au, B, bias, 'unit_')
print(json.dumps(res, indent=1))
json.dump(res, open('matmul_ref.json', 'w'), indent=1)
