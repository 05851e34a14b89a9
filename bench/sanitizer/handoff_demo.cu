// What compute-sanitizer racecheck makes of the shared-memory handoffs tessel's ping-pong
// schedule uses (issue 23 #16): a word written by one warpgroup and read by the other, ordered
// by an mbarrier arrive (release) / try_wait.parity (acquire) pair, or by a st.release /
// ld.acquire flag. Both orders are correct under the PTX memory model; this program checks the
// values on every turn (exit 1 on a wrong value) so that racecheck's verdict on each mode can be
// set beside a run that proves the order held. Modes: bar (bar.sync between turns: the control
// racecheck understands), mbarrier and flag (tessel's two orders), none (no order at all: a real
// race, to show racecheck reports one). Mode turns is the warpgroup turns of attention's loop
// (lowering/emit/warpgroup_turns.cpp): warpgroup g syncs on named barrier 1 + g (256 threads) and
// hands over by bar.arrive on the other's; after the loop both pass bar.sync 0, warpgroup 0
// writes a buffer, both pass bar.sync 0 again and warpgroup 1 reads it (then the reverse): the
// epilogue's layout conversion, where racecheck reported hazards in attention with turns.
// Built with nvcc on the device: bench/sanitizer/run.sh.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>

namespace {

__device__ unsigned smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ void mbar_init(unsigned bar, unsigned count) {
  asm volatile("mbarrier.init.shared.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
__device__ void mbar_arrive(unsigned bar) {  // .release.cta by default
  asm volatile("{.reg .b64 s; mbarrier.arrive.shared.b64 s, [%0];}" ::"r"(bar) : "memory");
}
__device__ bool mbar_try_wait(unsigned bar, unsigned parity) {  // .acquire.cta by default
  unsigned done;
  asm volatile(
      "{.reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p;}"
      : "=r"(done) : "r"(bar), "r"(parity) : "memory");
  return done != 0;
}
__device__ void st_release(unsigned addr, unsigned v) {
  asm volatile("st.release.cta.shared::cta.u32 [%0], %1;" ::"r"(addr), "r"(v) : "memory");
}
__device__ unsigned ld_acquire(unsigned addr) {
  unsigned v;
  asm volatile("ld.acquire.cta.shared::cta.u32 %0, [%1];" : "=r"(v) : "r"(addr) : "memory");
  return v;
}

__device__ void named_sync(unsigned id, unsigned threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}
__device__ void named_arrive(unsigned id, unsigned threads) {
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

enum Mode { kBar = 0, kMbarrier = 1, kFlag = 2, kNone = 3, kTurns = 4 };

// The turns: trip k, warpgroup 0 then 1, each checks and advances the token on its turn; then the
// two exchanges through `buf` ordered by bar.sync 0 only.
__device__ void turns_then_exchange(int turns, int* errors, unsigned* token, unsigned* buf) {
  const int wg = threadIdx.x / 128, lane = threadIdx.x % 128;
  if (wg == 1) named_arrive(1, 256);  // warpgroup 0 goes first
  for (int k = 0; k < turns / 2; ++k) {
    named_sync(1 + wg, 256);
    if (lane == 0) {
      volatile unsigned* t = token;
      if (*t != static_cast<unsigned>(2 * k + wg)) atomicAdd(errors, 1);
      *t = 2 * k + wg + 1;
    }
    named_arrive(1 + (1 - wg), 256);
  }
  if (wg == 0) named_sync(1, 256);  // the last hand-over
  for (int from = 0; from < 2; ++from) {
    __syncthreads();
    if (wg == from) buf[lane] = 1000u * from + lane;
    __syncthreads();
    if (wg != from && buf[lane] != 1000u * from + lane) atomicAdd(errors, 1);
  }
}

// Two warpgroups take turns: on its turn a warpgroup's thread 0 reads the shared token, checks
// it equals the turn number and writes the next one; the turn then passes to the other group.
__global__ void handoff(int mode, int turns, int* errors) {
  __shared__ alignas(8) unsigned long long bars[2];
  __shared__ unsigned token;
  __shared__ unsigned flags[2];
  __shared__ unsigned buf[128];
  const int wg = threadIdx.x / 128;
  const bool leader = threadIdx.x % 128 == 0;
  if (threadIdx.x == 0) {
    mbar_init(smem_addr(&bars[0]), 128);
    mbar_init(smem_addr(&bars[1]), 128);
    token = 0;
    flags[0] = flags[1] = 0;
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (mode == kTurns) return turns_then_exchange(turns, errors, &token, buf);
  for (int t = 0; t < turns; ++t) {
    const bool mine = t % 2 == wg;
    const int k = t / 2;  // this group's k-th turn
    if (mode == kBar) {
      if (mine && leader) {
        if (token != static_cast<unsigned>(t)) atomicAdd(errors, 1);
        token = t + 1;
      }
      __syncthreads();
      continue;
    }
    if (!mine) continue;
    if (t > 0) {
      if (mode == kMbarrier) {
        while (!mbar_try_wait(smem_addr(&bars[wg]), (k - (wg == 0 ? 1 : 0)) & 1)) {
        }
      } else if (mode == kFlag) {
        while (ld_acquire(smem_addr(&flags[wg])) != static_cast<unsigned>(t)) {
        }
      }
    }
    if (leader) {
      const unsigned seen = *static_cast<volatile unsigned*>(&token);
      if (mode != kNone && seen != static_cast<unsigned>(t)) atomicAdd(errors, 1);
      *static_cast<volatile unsigned*>(&token) = t + 1;
    }
    if (mode == kMbarrier) {
      mbar_arrive(smem_addr(&bars[1 - wg]));
    } else if (mode == kFlag) {
      __syncwarp();
      if (leader) st_release(smem_addr(&flags[1 - wg]), t + 1);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const char* names[] = {"bar", "mbarrier", "flag", "none", "turns"};
  int mode = -1;
  for (int m = 0; m < 5; ++m)
    if (argc > 1 && std::strcmp(argv[1], names[m]) == 0) mode = m;
  if (mode < 0) {
    std::fprintf(stderr, "usage: %s bar|mbarrier|flag|none|turns [turns]\n", argv[0]);
    return 2;
  }
  const int turns = argc > 2 ? std::atoi(argv[2]) : 64;
  int* errors = nullptr;
  if (cudaMalloc(&errors, sizeof(int)) != cudaSuccess) return 2;
  cudaMemset(errors, 0, sizeof(int));
  handoff<<<1, 256>>>(mode, turns, errors);
  const cudaError_t e = cudaDeviceSynchronize();
  int host = -1;
  cudaMemcpy(&host, errors, sizeof(int), cudaMemcpyDeviceToHost);
  std::printf("handoff %s: %d turns, %d wrong values, %s\n", names[mode], turns, host,
              cudaGetErrorString(e));
  return e == cudaSuccess && host == 0 ? 0 : 1;
}
