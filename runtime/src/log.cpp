// The logging hook: the level from TESSEL_LOG, the process's sink, serialized delivery.
#include "tessel/runtime/log.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <set>
#include <string>

namespace tessel::rt {
namespace {

constexpr LogLevel kDefaultLevel = LogLevel::Warn;

// Never destroyed: resources held in static objects are released (and may log a failure)
// during static destruction, possibly after this file's objects would have been destroyed.
struct LogState {
  std::once_flag env_once;
  std::atomic<int> level{static_cast<int>(kDefaultLevel)};
  std::atomic<bool> env_warning_pending{false};
  std::string env_warning;  // written once inside env_once, read after it

  std::mutex sink_mu;  // guards sink (a copy is taken, so set_log_sink never waits on a sink)
  std::shared_ptr<const LogSink> sink;
  std::mutex emit_mu;  // held while a message is delivered: sinks are never called concurrently

  std::mutex once_mu;
  std::set<std::string, std::less<>> once_ids;
};

LogState& state() {
  static LogState* s = new LogState;
  return *s;
}

// The sink's own messages go to stderr directly: delivering them to it would recurse, and
// emit_mu (not recursive) would deadlock.
thread_local bool t_in_sink = false;

void write_stderr(std::string_view message) noexcept {
  std::string line;
  try {
    line.reserve(message.size() + 9);
    line.append("tessel: ").append(message).push_back('\n');
  } catch (...) {
    return;  // out of memory while reporting: best effort
  }
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

void emit(LogLevel level, std::string_view message) noexcept {
  if (t_in_sink) {
    write_stderr(message);
    return;
  }
  LogState& s = state();
  std::shared_ptr<const LogSink> sink;
  {
    std::lock_guard lock(s.sink_mu);
    sink = s.sink;
  }
  std::lock_guard lock(s.emit_mu);
  if (!sink) {
    write_stderr(message);
    return;
  }
  t_in_sink = true;
  try {
    (*sink)(level, message);
  } catch (...) {
    // A throwing sink must not turn a warning into a failure of the call that logged it.
  }
  t_in_sink = false;
}

void init_from_env(LogState& s) {
  const char* v = std::getenv("TESSEL_LOG");
  if (v == nullptr || *v == '\0') return;
  if (std::optional<LogLevel> l = parse_log_level(v)) {
    s.level.store(static_cast<int>(*l));
    return;
  }
  s.env_warning = std::string("TESSEL_LOG=") + v + " is not a level (expected error, warn, info or debug); using warn";
  s.env_warning_pending.store(true);
}

// Reads TESSEL_LOG on first use. The warning about a bad value is sent after call_once returns:
// sending it from inside would reach log_level() again, in the same once_flag.
LogState& initialised() {
  LogState& s = state();
  std::call_once(s.env_once, init_from_env, s);
  if (s.env_warning_pending.load(std::memory_order_relaxed) && s.env_warning_pending.exchange(false) &&
      static_cast<int>(LogLevel::Warn) <= s.level.load())
    emit(LogLevel::Warn, s.env_warning);
  return s;
}

}  // namespace

std::string_view log_level_name(LogLevel level) {
  switch (level) {
    case LogLevel::Error: return "error";
    case LogLevel::Warn: return "warn";
    case LogLevel::Info: return "info";
    case LogLevel::Debug: return "debug";
  }
  return "unknown";
}

std::optional<LogLevel> parse_log_level(std::string_view text) {
  for (LogLevel l : {LogLevel::Error, LogLevel::Warn, LogLevel::Info, LogLevel::Debug})
    if (text == log_level_name(l)) return l;
  if (text == "warning") return LogLevel::Warn;
  return std::nullopt;
}

LogLevel log_level() { return static_cast<LogLevel>(initialised().level.load()); }

void set_log_level(LogLevel level) {
  LogState& s = state();
  // An explicit level replaces TESSEL_LOG, and a bad TESSEL_LOG is then not worth a warning.
  std::call_once(s.env_once, init_from_env, s);
  s.env_warning_pending.store(false);
  s.level.store(static_cast<int>(level));
}

bool log_enabled(LogLevel level) { return static_cast<int>(level) <= initialised().level.load(); }

void set_log_sink(LogSink sink) {
  auto p = sink ? std::make_shared<const LogSink>(std::move(sink)) : nullptr;
  LogState& s = state();
  std::lock_guard lock(s.sink_mu);
  s.sink = std::move(p);
}

void log(LogLevel level, std::string_view message) {
  if (log_enabled(level)) emit(level, message);
}

void log_forced(std::string_view message) {
  initialised();  // a pending TESSEL_LOG warning comes first
  emit(LogLevel::Info, message);
}

void log_once(LogLevel level, std::string_view id, std::string_view message) {
  LogState& s = state();
  try {
    std::lock_guard lock(s.once_mu);
    if (!s.once_ids.emplace(id).second) return;
  } catch (...) {
    // Out of memory: the message is still worth more than the deduplication.
  }
  log(level, message);
}

}  // namespace tessel::rt
