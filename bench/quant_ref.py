# torch references for bench_quant.cpp (issue 27), timed in the same GPU run: the f16 matmul on the
# unquantised weight at M = 1, 16, 4096 (N = K = 8192), sin and cos as two eager kernels and
# fused by torch.compile, and the seeds' relu((x + 1) * 2)^2 and sigmoid(x) * tanh(x + 1) eager
# and compiled, on 2^26 f32; torch._scaled_mm (fp8) at 4096^3 and 8192^3; cuDNN conv and
# conv + BN + ReLU on ResNet-50's 3x3 layers. Writes $OUT/quant_ref.json.
import json, os
import torch
from triton.testing import do_bench

torch.manual_seed(0)
dev = 'cuda'
res = {}
def ms(fn): return do_bench(fn, warmup=25, rep=100, return_mode='median')

N = 1 << 28
x = torch.randn(N, device=dev); y = torch.empty_like(x)
res['copy_GBps'] = 2 * N * 4 / (ms(lambda: y.copy_(x)) * 1e-3) / 1e9
del x, y

n = 1 << 26
X = torch.randn(n, device=dev)
res['sin_cos_eager_ms'] = ms(lambda: (torch.sin(X), torch.cos(X)))
sc = torch.compile(lambda t: (torch.sin(t), torch.cos(t)))
sc(X)
res['sin_cos_compiled_ms'] = ms(lambda: sc(X))
def relu_sq(t): return torch.relu((t + 1) * 2) ** 2
def sig_tanh(t): return torch.sigmoid(t) * torch.tanh(t + 1)
for name, f in (('relu_sq', relu_sq), ('sigmoid_tanh', sig_tanh)):
    res[f'{name}_eager_ms'] = ms(lambda: f(X))
    c = torch.compile(f)
    c(X)
    res[f'{name}_compiled_ms'] = ms(lambda: c(X))

K = Nn = 8192
W = torch.randn(K, Nn, device=dev, dtype=torch.float16)
for M in (1, 16, 4096):
    A = torch.randn(M, K, device=dev, dtype=torch.float16)
    t = ms(lambda: A @ W)
    res[f'matmul_f16_M{M}_ms'] = t
    res[f'matmul_f16_M{M}_TFLOPs'] = 2 * M * Nn * K / (t * 1e-3) / 1e12
del W, A
# fp8: torch._scaled_mm (cuBLAS fp8), e4m3 x e4m3 with row-wise scales (a [M, 1], b [1, N]),
# f16 out; B is given as a column-major [K, N] (the transpose of a row-major [N, K]), as tessel's.
for S in (4096, 8192):
    a8 = (16 * torch.randn(S, S, device=dev)).to(torch.float8_e4m3fn)
    b8 = (4 * torch.randn(S, S, device=dev)).to(torch.float8_e4m3fn)
    sa = torch.rand(S, 1, device=dev) * 0.09 + 0.01
    sb = torch.rand(1, S, device=dev) * 0.09 + 0.01
    for name, kw in (('rowwise', dict(scale_a=sa, scale_b=sb)),
                     ('tensor', dict(scale_a=torch.tensor(0.05, device=dev), scale_b=torch.tensor(0.05, device=dev)))):
        try:
            f = lambda: torch._scaled_mm(a8, b8.t(), out_dtype=torch.float16 if name == 'rowwise' else torch.bfloat16, **kw)
            f()
            t = ms(f)
            res[f'scaled_mm_{name}_N{S}_ms'] = t
            res[f'scaled_mm_{name}_N{S}_TFLOPs'] = 2 * S ** 3 / (t * 1e-3) / 1e12
        except Exception as e:
            res[f'scaled_mm_{name}_N{S}_error'] = str(e)[:300]
    del a8, b8
# Conv2d -> BN -> ReLU, ResNet-50's 3x3 layers at batch 32, channels_last f16 (cuDNN): the
# convolution alone, eager conv + BN (inference) + ReLU, and torch.compile of the three.
torch.backends.cudnn.benchmark = True
for hw, c in ((56, 64), (28, 128), (14, 256), (7, 512)):
    x = torch.randn(32, c, hw, hw, device=dev, dtype=torch.float16).to(memory_format=torch.channels_last)
    conv = torch.nn.Conv2d(c, c, 3, padding=1, bias=False).to(dev, torch.float16).to(memory_format=torch.channels_last)
    bn = torch.nn.BatchNorm2d(c).to(dev, torch.float16).eval()
    key = f'conv_{hw}x{hw}x{c}'
    with torch.no_grad():
        res[key + '_cudnn_ms'] = ms(lambda: conv(x))
        res[key + '_eager_ms'] = ms(lambda: torch.relu(bn(conv(x))))
        cbr = torch.compile(lambda t: torch.relu(bn(conv(t))))
        cbr(x)
        res[key + '_compiled_ms'] = ms(lambda: cbr(x))
    res[key + '_cudnn_TFLOPs'] = 2 * 32 * hw * hw * c * 9 * c / (res[key + '_cudnn_ms'] * 1e-3) / 1e12
print(json.dumps(res, indent=1))
json.dump(res, open(os.environ.get('OUT', '.') + '/quant_ref.json', 'w'), indent=1)
