# torch and Triton reference timings for the reduction benchmarks (bench_reductions.cpp), in
# the same GPU run: LayerNorm fp16 4096xN (torch, and a Triton kernel in the style of Triton's
# LayerNorm tutorial: one program per row, looped over column blocks), cross-entropy
# 8192x32000 fp32 (torch eager). Writes $OUT/reductions_ref.json.
import json, os
import torch, triton, triton.language as tl
from triton.testing import do_bench

res = {}
def gbps(nbytes, ms): return nbytes / (ms * 1e-3) / 1e9

@triton.jit
def ln_fwd(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    X += row * stride
    Y += row * stride
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        acc += tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
    mean = tl.sum(acc, axis=0) / N
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        d = tl.where(cols < N, x - mean, 0.)
        acc += d * d
    rstd = 1 / tl.sqrt(tl.sum(acc, axis=0) / N + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        m = cols < N
        w = tl.load(W + cols, mask=m)
        b = tl.load(B + cols, mask=m)
        x = tl.load(X + cols, mask=m, other=0.).to(tl.float32)
        tl.store(Y + cols, ((x - mean) * rstd * w + b).to(Y.dtype.element_ty), mask=m)

for N in (1024, 4096, 16384):
    M = 4096
    x = torch.randn(M, N, device='cuda', dtype=torch.float16)
    w = torch.randn(N, device='cuda', dtype=torch.float16)
    b = torch.randn(N, device='cuda', dtype=torch.float16)
    ln = torch.nn.LayerNorm(N, device='cuda', dtype=torch.float16)
    nbytes = 2 * 2 * M * N
    with torch.no_grad():
        res[f'layernorm_f16_4096x{N}_torch_GBps'] = gbps(nbytes, do_bench(lambda: ln(x), return_mode='median'))
    y = torch.empty_like(x)
    mean = torch.empty(M, device='cuda', dtype=torch.float32)
    rstd = torch.empty(M, device='cuda', dtype=torch.float32)
    BLOCK = min(65536 // x.element_size(), triton.next_power_of_2(N))
    warps = min(max(BLOCK // 256, 1), 8)
    f = lambda: ln_fwd[(M,)](x, y, w, b, mean, rstd, x.stride(0), N, 1e-5, BLOCK=BLOCK, num_warps=warps)
    res[f'layernorm_f16_4096x{N}_triton_GBps'] = gbps(nbytes, do_bench(f, return_mode='median'))

R, V = 8192, 32000
logits = torch.randn(R, V, device='cuda')
targets = torch.randint(0, V, (R,), device='cuda')
ms = do_bench(lambda: torch.nn.functional.cross_entropy(logits, targets, reduction='none'), return_mode='median')
res['cross_entropy_8192x32000_torch_ms'] = ms
res['cross_entropy_8192x32000_torch_GBps'] = gbps(4 * R * V, ms)
print(json.dumps(res, indent=1))
json.dump(res, open(os.environ.get('OUT', '.') + '/reductions_ref.json', 'w'), indent=1)
