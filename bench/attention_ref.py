# torch reference timings for bench_attention.cpp, in the same GPU run: scaled_dot_product_attention
# (f16; torch picks its flash / memory-efficient kernel) on the same shapes and under the same keys
# as tessel_bench_attention.json ({"device", "kernels": {name: {"ms", "TFLOPs" or "GBs"}}}), plus
# "copy_1GiB": a device-to-device copy's GB/s (bytes read + written), the bandwidth the decode
# target (80% of copy on the KV bytes) is measured against, and "<case>_triton": a Triton
# forward (below) on the square MHA forward cases. Writes $OUT/attention_ref.json (run from
# $OUT, as gpu_run.sh does). BENCH_CASES (as the C++ benches read it) keeps some cases only.
import json
import os
import torch
import torch.nn.functional as F
import triton
import triton.language as tl
from triton.testing import do_bench

# A Triton forward written the way a Triton user writes FlashAttention's algorithm (the same as
# tessel's attention_fwd: Q resident, K^T and V blocks, online softmax in base 2, causal blocks
# longest first, the unmasked key blocks before the diagonal ones), autotuned over the usual
# tiles. Its figure sits beside SDPA's as "<case>_triton".
TRITON_CONFIGS = [triton.Config({'BM': bm, 'BN': bn}, num_warps=w, num_stages=st)
                  for bm, bn, w, st in ((128, 64, 8, 3), (128, 128, 8, 2), (128, 64, 4, 3), (64, 64, 4, 3),
                                        (128, 128, 8, 3), (64, 128, 4, 2))]


@triton.autotune(configs=TRITON_CONFIGS, key=['SEQ', 'D', 'CAUSAL'])
@triton.jit
def fa_fwd(Q, K, V, O, qk_scale, SEQ, H, sb, sh, ss,
           D: tl.constexpr, CAUSAL: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    blk = tl.program_id(0)
    if CAUSAL:
        blk = tl.num_programs(0) - 1 - blk  # longest first
    bh = tl.program_id(1)
    base = (bh // H) * sb + (bh % H) * sh  # Q, K, V, O share the [batch, heads, seq, dim] strides
    rm = blk * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rd = tl.arange(0, D)
    q = tl.load(Q + base + rm[:, None] * ss + rd[None, :], mask=rm[:, None] < SEQ, other=0.0)
    m_i = tl.full([BM], float('-inf'), tl.float32)
    l_i = tl.zeros([BM], tl.float32)
    acc = tl.zeros([BM, D], tl.float32)
    # Whole key blocks below the block's first row (causal) or below SEQ: no mask.
    split = SEQ // BN * BN
    end = SEQ
    if CAUSAL:
        split = tl.minimum(blk * BM, SEQ) // BN * BN
        end = tl.minimum((blk + 1) * BM, SEQ)
    for n in range(0, split, BN):
        kt = tl.load(K + base + (n + rn)[None, :] * ss + rd[:, None])
        s = tl.dot(q, kt)
        m_new = tl.maximum(m_i, tl.max(s, 1) * qk_scale)
        p = tl.math.exp2(s * qk_scale - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(V + base + (n + rn)[:, None] * ss + rd[None, :])
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
        m_i = m_new
    for n in range(split, end, BN):
        key = n + rn
        kt = tl.load(K + base + key[None, :] * ss + rd[:, None], mask=key[None, :] < SEQ, other=0.0)
        s = tl.dot(q, kt)
        keep = key[None, :] < SEQ
        if CAUSAL:
            keep = keep & (key[None, :] <= rm[:, None])
        s = tl.where(keep, s, float('-inf'))
        m_new = tl.maximum(m_i, tl.max(s, 1) * qk_scale)
        p = tl.math.exp2(s * qk_scale - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(V + base + key[:, None] * ss + rd[None, :], mask=key[:, None] < SEQ, other=0.0)
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
        m_i = m_new
    out = acc * (1.0 / l_i)[:, None]
    tl.store(O + base + rm[:, None] * ss + rd[None, :], out.to(O.dtype.element_ty), mask=rm[:, None] < SEQ)


def triton_attention(q, k, v, causal):
    b, h, s, d = q.shape
    o = torch.empty_like(q)
    grid = lambda meta: (triton.cdiv(s, meta['BM']), b * h)
    fa_fwd[grid](q, k, v, o, (1.0 / d ** 0.5) * 1.4426950408889634, s, h, q.stride(0), q.stride(1), q.stride(2),
                 D=d, CAUSAL=causal)
    return o

CASES = []  # (name, batch, heads, kv_heads, seq_q, seq_k, dim, causal, decode), as bench_attention.cpp
for s in (2048, 8192):
    for d in (64, 128):
        CASES.append((f'attn_causal_f16_b8_h16_s{s}_d{d}', 8, 16, 16, s, s, d, True, False))
CASES.append(('attn_f16_b4_h16_s8192_d128', 4, 16, 16, 8192, 8192, 128, False, False))
CASES.append(('decode_f16_h32_kv32768_d128', 1, 32, 32, 1, 32768, 128, False, True))
CASES.append(('decode_f16_h32_kvh8_kv32768_d128', 1, 32, 8, 1, 32768, 128, False, True))

def listed(name):  # BENCH_CASES as bench_filter.hpp reads it: parts a name contains ("=x": only x)
    parts = [p for p in os.environ.get('BENCH_CASES', '').split(',') if p]
    return not parts or any(name == p[1:] if p.startswith('=') else p in name for p in parts)

CASES = [c for c in CASES if listed(c[0])]

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
            # The Triton forward beside it (square, MHA cases only), checked against SDPA first.
            if sq == sk and kvh == h:
                try:
                    ref = run()
                    err = (triton_attention(q, k, v, causal).float() - ref.float()).abs().max().item()
                    if not err < 1e-2:
                        raise ValueError(f'max |triton - sdpa| = {err}')
                    tms = do_bench(lambda: triton_attention(q, k, v, causal), return_mode='median')
                    kernels[name + '_triton'] = {'ms': tms, 'TFLOPs': flops / (tms * 1e-3) / 1e12,
                                                 'config': str(fa_fwd.best_config), 'max_err_vs_sdpa': err}
                except Exception as e:
                    print(f'{name} (triton): {type(e).__name__}: {e}')
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
