// Progress of tuning one kernel at one size: a redrawn bar on a terminal, plain lines otherwise.
#pragma once
#include <cstdio>
#include <string>
#include <string_view>

namespace tessel::samples::report {

// "softmax rows=8192,cols=4096 [#########-----------]  3/8  BLOCK=4096 num_warps=8 ..."
// (`width` cells of bar; `last` is the config just finished, may be empty).
std::string progress_bar(std::string_view label, int done, int total, int width, std::string_view last);

// Writes progress to `out`: on a TTY one line redrawn in place ('\r') and finished with a
// newline by done(); otherwise one plain line per finished config.
class ProgressPrinter {
 public:
  ProgressPrinter(std::FILE* out, bool tty, std::string label) : out_(out), tty_(tty), label_(std::move(label)) {}
  void update(int done, int total, std::string_view last);
  void done(std::string_view summary);

 private:
  std::FILE* out_;
  bool tty_;
  std::string label_;
  size_t drawn_ = 0;  // characters on the current line (TTY), to blank leftovers
};

}  // namespace tessel::samples::report
