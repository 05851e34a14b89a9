// Where NVIDIA's ptxas is: the one search order the JIT, the CLI and the tests share.
#pragma once
#include <string>
#include <string_view>

namespace tessel::rt {

// The ptxas to run, as a path, or "" when there is none. Looked for in this order:
//   1. $TESSEL_PTXAS, when set and non-empty: that file and nothing else ("" when it is not an
//      executable file), so an explicit choice is never silently replaced by another ptxas;
//   2. `ptxas` in a directory of $PATH, first match;
//   3. $CUDA_PATH/bin/ptxas, then $CUDA_HOME/bin/ptxas (the toolkit installers' variables);
//   4. /usr/local/cuda/bin/ptxas (the toolkit's default location).
// Read from the environment at each call (tests change it); no file is run.
std::string find_ptxas();

// Another tool of the CUDA toolkit ("nvdisasm", "cuobjdump"), looked for as ptxas is from step 2
// on: PATH, $CUDA_PATH/bin, $CUDA_HOME/bin, /usr/local/cuda/bin. "" when there is none.
std::string find_cuda_tool(std::string_view tool);
// Where find_cuda_tool looks, for a message when it found nothing:
// "on PATH, in $CUDA_PATH/bin (unset), $CUDA_HOME/bin (/opt/cuda/bin) or /usr/local/cuda/bin".
std::string cuda_tool_search_text();

// What to tell a user when find_ptxas() found nothing: the ways to point tessel at one.
std::string_view ptxas_not_found_hint();

}  // namespace tessel::rt
