// The GPU a kernel is compiled for (sm_XX, PTX ISA version) and the hardware facts the lowering uses.
#pragma once
#include <string>
#include <string_view>

namespace tessel::lowering {

inline constexpr int kWarpSize = 32;

// A CUDA compute capability and PTX ISA version. `accel` is the architecture-specific
// variant (sm_90a: wgmma, setmaxnreg).
struct Target {
  int sm = 90;           // 80, 86, 87, 89, 90
  bool accel = false;    // sm_90a
  int ptx_version = 0;   // 0: default_ptx_version(sm); otherwise e.g. 78 for PTX ISA 7.8

  std::string arch() const;        // "sm_90", "sm_90a"
  int resolved_ptx() const;        // ptx_version, or the default for the sm
  std::string ptx_feature() const; // LLVM subtarget feature, "+ptx80"
  // "sm_80" | "sm_86" | "sm_87" | "sm_89" | "sm_90" | "sm_90a"; std::invalid_argument otherwise.
  static Target parse(std::string_view arch);
  friend bool operator==(const Target&, const Target&) = default;
};

// The PTX ISA version tessel asks LLVM 19 for when none is given: 8.0 for every supported sm
// (sm_90a needs 8.0; LLVM 19 can emit up to 8.5). 8.0 is accepted by drivers from CUDA 12.0 on.
int default_ptx_version(int sm);
// The newest PTX ISA version LLVM 19's NVPTX backend knows (8.5).
int max_ptx_version();

// Per-architecture limits (CUDA programming guide, "compute capabilities").
struct TargetInfo {
  int warp_size = kWarpSize;
  int max_threads_per_block = 1024;
  int max_warps_per_block = 32;
  int static_shared_per_block = 48 * 1024;  // without opting in
  int max_shared_per_block = 0;              // opt-in limit (cuFuncSetAttribute)
  int shared_per_sm = 0;
  int registers_per_sm = 64 * 1024;
  int max_registers_per_thread = 255;
};
TargetInfo target_info(const Target& t);

}  // namespace tessel::lowering
