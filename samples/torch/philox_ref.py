"""tessel's rand(seed, offset) in Python: the dropout mask of torch.ops.tessel.bias_gelu_dropout.

ir/include/tessel/ir/philox.hpp defines the stream: Philox 4x32-10 keyed by the seed's two 32-bit
halves, counter (offset >> 2, 0, 0, 0), word offset & 3 of the four it gives, made a float in
[0, 1) as f32(s) * 4.6566127342e-10f with s = int32(word), or ~s when negative.

The integer arithmetic is written with operators only (+, *, &, ^, >>, <<, ==), so one code path
serves Python ints (the scalar reference, checked against KNOWN_RAND below) and int64 torch
tensors (the vectorised mask): every intermediate value is non-negative and below 2^49, so int64
never overflows and shifts never see a sign.
"""
import struct

M32 = 0xFFFFFFFF
KEY_A, KEY_B = 0x9E3779B9, 0xBB67AE85
ROUND_A, ROUND_B = 0xD2511F53, 0xCD9E8D57
ROUNDS = 10
SCALE_F32 = 4.6566127342e-10  # as an f32: 0x2FFFFFFF, the float just below 2^-31

# (seed, offset, bits of the f32 rand(seed, offset)) printed by a C++ program calling
# tessel::ir::philox::rand: the definition the kernels' mask follows.
KNOWN_RAND = [
    (0, 0, 0x3F4C4FD1), (0, 1, 0x3E74B1D3), (0, 2, 0x3F0750A6), (0, 3, 0x3F49FE47),
    (0, 4, 0x3D63666A), (0, 5, 0x3F396401), (0, 1000, 0x3F65CD38), (0, 4097, 0x3F7A8D5D),
    (0, 16777215, 0x3EA56190), (0, 2147483647, 0x3F05D304),
    (1, 0, 0x3E60BFCB), (1, 3, 0x3F13D4AB), (1, 4097, 0x3F465795), (1, 2147483647, 0x3B3572F9),
    (7, 2, 0x3E69D5D1), (7, 1000, 0x3D05EB99), (7, 16777215, 0x3E345E9D),
    (12345, 4, 0x3BB66928), (12345, 4097, 0x3F2D837D),
    (2147483647, 0, 0x3F2FC3F4), (2147483647, 1000, 0x3C1AF831), (2147483647, 2147483647, 0x3F0FD3B6),
]


def _mulhilo(a, c):
    """(high, low) 32-bit halves of the 64-bit product a * c, a a 32-bit constant, c < 2^32.

    Split into 16-bit halves of a so no partial product reaches 2^49."""
    ah, al = a >> 16, a & 0xFFFF
    p_lo = c * al                 # < 2^48
    t = c * ah + (p_lo >> 16)     # the product >> 16, < 2^49
    lo = ((t & 0xFFFF) << 16) | (p_lo & 0xFFFF)
    return (t >> 16) & M32, lo


def philox_words(seed, counter, zero):
    """The four words of Philox 4x32-10 at counter (counter, 0, 0, 0), key (seed lo, seed hi).

    `zero` is 0 for Python ints, or a zero tensor shaped like `counter`."""
    c0, c1, c2, c3 = counter, zero, zero, zero
    k0, k1 = seed & M32, (seed >> 32) & M32
    for _ in range(ROUNDS):
        hi_a, lo_a = _mulhilo(ROUND_A, c0)
        hi_b, lo_b = _mulhilo(ROUND_B, c2)
        c0, c1, c2, c3 = hi_b ^ c1 ^ k0, lo_b, hi_a ^ c3 ^ k1, lo_a
        k0, k1 = (k0 + KEY_A) & M32, (k1 + KEY_B) & M32
    return c0, c1, c2, c3


def rand_int(seed, offset, zero=0):
    """The non-negative int32 s of rand(seed, offset); rand = f32(s) * f32(SCALE_F32)."""
    u = offset & M32
    w0, w1, w2, w3 = philox_words(seed, u >> 2, zero)
    sel = u & 3
    w = w0 * (sel == 0) + w1 * (sel == 1) + w2 * (sel == 2) + w3 * (sel == 3)
    neg = w >> 31                     # the word read as int32 is negative
    return w + neg * (M32 - 2 * w)    # negative: ~int32(w) = 2^32 - 1 - w


def _f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def rand_scalar(seed, offset):
    """rand(seed, offset) as a Python float holding the f32 value."""
    # f32(s) * f32(scale): the product of two 24-bit significands is exact in a double, so
    # rounding it to f32 once gives the f32 multiplication's result.
    return _f32(_f32(float(rand_int(seed, offset))) * _f32(SCALE_F32))


def f32_bits(x):
    return struct.unpack("I", struct.pack("f", x))[0]


def rand_tensor(torch, seed, n, device):
    """rand(seed, i) for i in [0, n) as a float32 tensor on `device` (n < 2^31)."""
    offsets = torch.arange(n, dtype=torch.int64, device=device)
    s = rand_int(seed, offsets, torch.zeros_like(offsets))
    scale = torch.tensor(SCALE_F32, dtype=torch.float32, device=device)
    return s.to(torch.float32) * scale


def self_check_scalar():
    """Mismatches of rand_scalar against KNOWN_RAND, as strings (empty: all agree)."""
    bad = []
    for seed, offset, bits in KNOWN_RAND:
        got = f32_bits(rand_scalar(seed, offset))
        if got != bits:
            bad.append(f"rand({seed}, {offset}) = 0x{got:08x}, expected 0x{bits:08x}")
    return bad


if __name__ == "__main__":
    problems = self_check_scalar()
    print("\n".join(problems) or f"philox_ref: {len(KNOWN_RAND)} known values agree")
    raise SystemExit(1 if problems else 0)
