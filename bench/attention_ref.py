# torch reference timings for bench_attention.cpp, in the same GPU run: scaled_dot_product_attention
# (f16; torch picks its flash / memory-efficient kernel) on the same shapes and under the same keys
# as tessel_bench_attention.json ({"device", "kernels": {name: {"ms", "TFLOPs" or "GBs"}}}), plus
# "copy_1GiB": a device-to-device copy's GB/s (bytes read + written), the bandwidth the decode
# target (80% of copy on the KV bytes) is measured against. Writes $OUT/attention_ref.json
# (run from $OUT, as gpu_run.sh does).
import json
import torch
import torch.nn.functional as F
from triton.testing import do_bench

CASES = []  # (name, batch, heads, kv_heads, seq_q, seq_k, dim, causal, decode), as bench_attention.cpp
for s in (2048, 8192):
    for d in (64, 128):
        CASES.append((f'attn_causal_f16_b8_h16_s{s}_d{d}', 8, 16, 16, s, s, d, True, False))
CASES.append(('attn_f16_b4_h16_s8192_d128', 4, 16, 16, 8192, 8192, 128, False, False))
CASES.append(('decode_f16_h32_kv32768_d128', 1, 32, 32, 1, 32768, 128, False, True))
CASES.append(('decode_f16_h32_kvh8_kv32768_d128', 1, 32, 8, 1, 32768, 128, False, True))

def sdpa(q, k, v, causal, gqa):
    if gqa:  # torch >= 2.5 reads each KV head once for its group of query heads
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
    return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

kernels = {}
for (name, b, h, kvh, sq, sk, d, causal, decode) in CASES:
    try:
        q = torch.randn(b, h, sq, d, device='cuda', dtype=torch.float16)
        k = torch.randn(b, kvh, sk, d, device='cuda', dtype=torch.float16)
        v = torch.randn(b, kvh, sk, d, device='cuda', dtype=torch.float16)
        run = lambda: sdpa(q, k, v, causal, kvh != h)
        run()
        ms = do_bench(run, return_mode='median')
        if decode:
            kernels[name] = {'ms': ms, 'GBs': 2 * b * kvh * sk * d * 2 / (ms * 1e-3) / 1e9}
        else:
            flops = 4 * b * h * sq * sk * d * (0.5 if causal else 1.0)
            kernels[name] = {'ms': ms, 'TFLOPs': flops / (ms * 1e-3) / 1e12}
    except Exception as e:  # e.g. enable_gqa on an older torch
        print(f'{name}: {type(e).__name__}: {e}')
    finally:
        q = k = v = None
        torch.cuda.empty_cache()

src = torch.empty(1 << 29, device='cuda', dtype=torch.float16)  # 1 GiB
dst = torch.empty_like(src)
ms = do_bench(lambda: dst.copy_(src), return_mode='median')
kernels['copy_1GiB'] = {'ms': ms, 'GBs': 2 * src.numel() * 2 / (ms * 1e-3) / 1e9}
res = {'device': torch.cuda.get_device_name(), 'torch': torch.__version__, 'kernels': kernels}
print(json.dumps(res, indent=1))
json.dump(res, open('attention_ref.json', 'w'), indent=1)
