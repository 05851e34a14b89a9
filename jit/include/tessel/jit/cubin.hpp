// PTX to cubin: through the CUDA driver's linker when a GPU is present, else NVIDIA's ptxas.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tessel/ir/error.hpp"

namespace tessel::jit {

struct Cubin {
  std::vector<char> image;
  std::string arch;        // the sm it runs on, "sm_90"
  std::string tool;        // "driver" | "ptxas"
  int registers = -1;      // per thread, when the tool reported it
  int spill_bytes = -1;    // spill stores
  int stack_bytes = -1;    // stack frame
  std::string log;         // the tool's informational output
};

// ptxas ran past its time limit (and was stopped), or TESSEL_PTXAS_TIMEOUT is not a number: the
// kernel's size or the environment, not a tessel bug (a UserError: the CLI exits 1).
class PtxasTimeoutError : public UserError {
 public:
  using UserError::UserError;
};

// Seconds one ptxas run may take: $TESSEL_PTXAS_TIMEOUT when set (0: no limit), else the default.
// Read at each call. A ptxas run of tessel's largest tuned kernels takes seconds; a minutes-long
// one is a kernel whose tiles do not fit its registers, which ptxas may take hours to assemble.
inline constexpr int kDefaultPtxasTimeoutS = 120;
int ptxas_timeout_seconds();

// Assembles `ptx` for `arch` ("sm_80", "sm_90a") with ptxas -v, the one tessel::rt::find_ptxas()
// finds (tessel/runtime/ptxas.hpp has the search order), in a private temporary directory that
// is removed on every way out. Throws PtxasTimeoutError (naming the kernel) when ptxas runs past
// ptxas_timeout_seconds() (its process group is killed), std::runtime_error with ptxas' output
// when it fails or is absent.
// After a successful run, each "Potential Performance Loss" advisory in its log (ptxas_advisories)
// is logged once per kernel and advisory as a warning (TESSEL_LOG): ptxas serialising a kernel's
// wgmma costs it up to half its speed without any error.
Cubin ptxas_cubin(std::string_view ptx, std::string_view arch);

// The "Potential Performance Loss" advisories of a ptxas -v log ("(C7510) Potential Performance
// Loss: wgmma.mma_async instructions are serialized due to ..."), each from its code on, in order.
std::vector<std::string> ptxas_advisories(std::string_view log);

// Links `ptx` with the driver for GPU 0 when a driver is present and that GPU is `arch` (the
// driver links only for the device it runs on); nullopt otherwise. Link errors throw.
std::optional<Cubin> driver_cubin(std::string_view ptx, std::string_view arch);

// The driver when it can (driver_cubin), else ptxas; std::runtime_error when neither can.
Cubin make_cubin(std::string_view ptx, std::string_view arch);

// Which tool makes the cubins of kernels compiled for the GPU in this process (TESSEL_CUBIN_TOOL):
// ptxas (the toolkit's, found by rt::find_ptxas) or the driver's own JIT. Default: ptxas when one
// is found, else the driver. The driver's JIT on CUDA 13.0 (driver 580) serialises the wgmma
// groups of loops with two dots (every HGMMA waits for the one before: attention ran at half
// speed), where the toolkit's ptxas 13.0 keeps them in flight; ptxas is also what Triton uses.
enum class CubinTool { Ptxas, Driver };
// TESSEL_CUBIN_TOOL = "ptxas" | "driver" | unset (ptxas when found); anything else throws
// std::invalid_argument naming the variable. Read at each call.
CubinTool jit_cubin_tool();
// Whether TESSEL_CUBIN_TOOL names a tool (a cache hit made by the other one is then linked again).
bool cubin_tool_forced();

}  // namespace tessel::jit
