// The one logging hook of every tessel library: a level (TESSEL_LOG) and a user sink.
#pragma once
#include <functional>
#include <optional>
#include <string_view>

// It lives in the runtime because the runtime is the library every other one that prints (the
// driver loader here, the JIT's cache and autotuner) can reach, and a runtime-only production
// program needs it too. Nothing here touches the driver.
namespace tessel::rt {

// Most severe first: a level shows its own messages and those above it.
//   Error  failures tessel cannot report through an exception (none today; reserved)
//   Warn   something the user did not ask for and should know: a silent fallback to the CPU
//          interpreter, a corrupt cache entry recompiled, a tuning database ignored, a release
//          failure ignored in a destructor. The default level.
//   Info   what tessel decided, when it was asked for it: the backend kernels run on, the CUDA
//          driver being unavailable (the interpreter was requested, or the GPU is not used).
//   Debug  detail for tessel's own debugging (the driver version loaded, ...).
enum class LogLevel { Error = 0, Warn = 1, Info = 2, Debug = 3 };

// "error", "warn", "info", "debug".
std::string_view log_level_name(LogLevel level);
// The inverse of log_level_name (also "warning"); nullopt for anything else.
std::optional<LogLevel> parse_log_level(std::string_view text);

// The current level. Initialised on first use from TESSEL_LOG (error|warn|info|debug); unset or
// empty means warn, and any other value means warn after one warning naming the bad value.
LogLevel log_level();
// Overrides TESSEL_LOG for the rest of the process (or until called again).
void set_log_level(LogLevel level);
// Whether a message at `level` is shown now: for skipping the formatting of a hidden message.
bool log_enabled(LogLevel level);

// Receives every shown message: its level and the text (one line, no "tessel: " prefix, no
// newline). Calls are serialized (never two at once), so a sink need not lock; a sink must not
// throw (what it throws is dropped) and a message it logs itself goes to stderr, not to it.
using LogSink = std::function<void(LogLevel, std::string_view)>;
// Installs `sink` for the whole process; an empty one restores the default, which writes
// "tessel: <message>\n" to stderr.
void set_log_sink(LogSink sink);

// Sends `message` to the sink when `level` is shown (log_enabled). Thread-safe; never throws.
void log(LogLevel level, std::string_view message);
// Sends `message` to the sink whatever the level: output the user asked for with a knob of its
// own (TESSEL_PRINT_AUTOTUNING=1), as Triton prints it. The sink sees it as Info.
void log_forced(std::string_view message);
// log(), once per process for each `id` (later calls with the same id are dropped, shown or not):
// for conditions that repeat on every launch, such as a damaged entry or an unwritable path.
void log_once(LogLevel level, std::string_view id, std::string_view message);

}  // namespace tessel::rt
