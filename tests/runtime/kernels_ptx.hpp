// Hand-written PTX shared by the runtime tests: a vector add and a broken variant.
#pragma once

namespace tessel::rt::test {

// out[i] = a[i] + b[i] for i < n; params (f32* a, f32* b, f32* out, u32 n).
inline constexpr const char* kVaddPtx = R"(.version 8.0
.target sm_80
.address_size 64

.visible .entry vadd(
    .param .u64 p_a,
    .param .u64 p_b,
    .param .u64 p_out,
    .param .u32 p_n)
{
    .reg .pred %p<2>;
    .reg .b32 %r<6>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<8>;

    ld.param.u64 %rd1, [p_a];
    ld.param.u64 %rd2, [p_b];
    ld.param.u64 %rd3, [p_out];
    ld.param.u32 %r1, [p_n];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.s32 %r5, %r2, %r3, %r4;
    setp.ge.u32 %p1, %r5, %r1;
    @%p1 bra DONE;
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd2, %rd2;
    cvta.to.global.u64 %rd3, %rd3;
    mul.wide.u32 %rd4, %r5, 4;
    add.s64 %rd5, %rd1, %rd4;
    add.s64 %rd6, %rd2, %rd4;
    add.s64 %rd7, %rd3, %rd4;
    ld.global.f32 %f1, [%rd5];
    ld.global.f32 %f2, [%rd6];
    add.f32 %f3, %f1, %f2;
    st.global.f32 [%rd7], %f3;
DONE:
    ret;
}
)";

// The same kernel with an undeclared register (%q9) on line 17: the JIT must reject it.
inline constexpr const char* kBadPtx = R"(.version 8.0
.target sm_80
.address_size 64

.visible .entry broken(
    .param .u64 p_out)
{
    .reg .f32 %f<4>;
    .reg .b64 %rd<4>;

    ld.param.u64 %rd1, [p_out];
    cvta.to.global.u64 %rd1, %rd1;
    mov.f32 %f1, 0f3F800000;
    mov.f32 %f2, 0f40000000;
    add.f32 %f3, %f1, %f2;
    st.global.f32 [%rd1], %f3;
    add.f32 %f3, %f3, %q9;
    st.global.f32 [%rd1], %f3;
    ret;
}
)";

}  // namespace tessel::rt::test
