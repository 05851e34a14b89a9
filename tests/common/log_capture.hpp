// Captures tessel's log (rt::set_log_sink) for a test's scope, then restores the level and stderr.
#pragma once
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tessel/runtime/log.hpp"

namespace tessel_test {

class LogCapture {
 public:
  // `level`: the level for the scope (the process's level is put back afterwards).
  explicit LogCapture(tessel::rt::LogLevel level = tessel::rt::LogLevel::Warn) : saved_(tessel::rt::log_level()) {
    tessel::rt::set_log_level(level);
    tessel::rt::set_log_sink([this](tessel::rt::LogLevel l, std::string_view m) {
      std::lock_guard lock(mu_);
      messages_.emplace_back(l, std::string(m));
    });
  }
  ~LogCapture() {
    tessel::rt::set_log_sink(nullptr);
    tessel::rt::set_log_level(saved_);
  }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  std::vector<std::pair<tessel::rt::LogLevel, std::string>> messages() {
    std::lock_guard lock(mu_);
    return messages_;
  }
  // The messages containing `part`.
  std::vector<std::pair<tessel::rt::LogLevel, std::string>> matching(std::string_view part) {
    std::vector<std::pair<tessel::rt::LogLevel, std::string>> out;
    for (auto& m : messages())
      if (m.second.find(part) != std::string::npos) out.push_back(m);
    return out;
  }

 private:
  tessel::rt::LogLevel saved_;
  std::mutex mu_;
  std::vector<std::pair<tessel::rt::LogLevel, std::string>> messages_;
};

}  // namespace tessel_test
