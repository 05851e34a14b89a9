// The GPU a kernel is compiled for (sm_XX, PTX ISA version), the one table of architectures
// tessel knows, and the hardware facts the lowering uses.
#pragma once
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tessel::lowering {

inline constexpr int kWarpSize = 32;

// One architecture tessel can compile for. This table is the only list of them: the CLI's
// --arch choices, bundle export's validation and Target::parse's message all come from it.
struct KnownTarget {
  std::string_view name;  // "sm_90a"
  int sm;                 // 90
  bool arch_specific;     // the "a" variant: code that runs on exactly this sm
  bool wgmma;             // warpgroup MMA (wgmma.mma_async), setmaxnreg: sm_90a only
  bool tma;               // the tensor memory accelerator (cp.async.bulk.tensor)
  bool clusters;          // thread-block clusters (.reqnctapercluster, multicast)
  int min_ptx;            // the oldest PTX ISA version with this target (78 = 7.8)
};

// Every known architecture, oldest first.
std::span<const KnownTarget> known_targets();
// Their names ("sm_80", ..., "sm_90a"), in the same order: the CLI's --arch choices.
std::vector<std::string> known_target_names();
// "sm_80, sm_86, sm_87, sm_89, sm_90 or sm_90a", for messages.
std::string known_targets_text();

// A CUDA compute capability and PTX ISA version. `accel` is the architecture-specific
// variant (sm_90a); ask the feature queries rather than reading `sm` or `accel` directly.
struct Target {
  int sm = 90;           // one of known_targets()
  bool accel = false;    // sm_90a
  int ptx_version = 0;   // 0: default_ptx_version(sm); otherwise e.g. 78 for PTX ISA 7.8

  std::string arch() const;        // "sm_90", "sm_90a"
  int resolved_ptx() const;        // ptx_version, or the default for the sm
  std::string ptx_feature() const; // LLVM subtarget feature, "+ptx80"
  // This target's row of known_targets(); null for a GPU's own sm outside the table.
  const KnownTarget* known() const;
  bool has_mma() const { return sm >= 80; }  // mma.sync, ldmatrix, cp.async
  bool has_wgmma() const;
  bool has_tma() const;
  bool has_clusters() const;
  // cvt to and from e4m3x2 / e5m2x2: sm_90 with PTX ISA 7.8, sm_89 with 8.1
  bool has_fp8_convert() const { return sm >= 90 ? resolved_ptx() >= 78 : sm == 89 && resolved_ptx() >= 81; }
  // mma.sync.m16n8k32 on e4m3/e5m2 operands: sm_89 and later with PTX ISA 8.4 (wgmma's fp8
  // form comes with has_wgmma())
  bool has_fp8_mma() const { return sm >= 89 && resolved_ptx() >= 84; }
  int min_ptx() const;             // the oldest PTX ISA version that has this target (70 off the table)
  // One of known_target_names(); std::invalid_argument naming them otherwise.
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
  int shared_reserved_per_block = 1024;      // what the driver keeps of an SM's shared memory per block
  int registers_per_sm = 64 * 1024;
  int max_registers_per_thread = 255;
};
TargetInfo target_info(const Target& t);

}  // namespace tessel::lowering
