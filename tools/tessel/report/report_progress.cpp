// The tuning progress bar and its TTY / plain-line printer.
#include "tessel/report/report_progress.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace tessel::samples::report {

std::string progress_bar(std::string_view label, int done, int total, int width, std::string_view last) {
  int filled = total > 0 ? static_cast<int>(static_cast<int64_t>(std::clamp(done, 0, total)) * width / total) : 0;
  std::string bar(static_cast<size_t>(filled), '#');
  bar.append(static_cast<size_t>(width - filled), '-');
  std::string s = fmt::format("{} [{}] {:>3}/{}", label, bar, done, total);
  if (!last.empty()) s += fmt::format("  {}", last);
  return s;
}

void ProgressPrinter::update(int done, int total, std::string_view last) {
  if (tty_) {
    std::string line = progress_bar(label_, done, total, 24, last);
    std::string pad(drawn_ > line.size() ? drawn_ - line.size() : 0, ' ');
    fmt::print(out_, "\r{}{}", line, pad);
    drawn_ = line.size();
  } else {
    fmt::print(out_, "{} {}/{} {}\n", label_, done, total, last);
  }
  std::fflush(out_);
}

void ProgressPrinter::done(std::string_view summary) {
  if (tty_) {
    std::string line = fmt::format("{} {}", label_, summary);
    std::string pad(drawn_ > line.size() ? drawn_ - line.size() : 0, ' ');
    fmt::print(out_, "\r{}{}\n", line, pad);
    drawn_ = 0;
  } else {
    fmt::print(out_, "{} {}\n", label_, summary);
  }
  std::fflush(out_);
}

}  // namespace tessel::samples::report
