// Environment filters of the benchmarks: NAME_LIST="a,b" keeps the cases (or configs) whose name
// contains one of the listed parts (listed; a part "=x" only the name x) or is one of them
// (listed_exactly); unset or empty keeps all.
#pragma once
#include <algorithm>
#include <cstdlib>
#include <string>

namespace tessel::bench {

inline bool listed_by(const char* var, const std::string& name, bool exactly) {
  const char* e = std::getenv(var);
  if (!e || !*e) return true;
  const std::string list = e;
  for (size_t at = 0; at <= list.size();) {
    const size_t end = std::min(list.find(',', at), list.size());
    const std::string part = list.substr(at, end - at);
    // A part "=text" matches only a name equal to text (a config that others extend: "... ws cr232"
    // without "... ws cr232 wt").
    const bool exact = exactly || (!part.empty() && part[0] == '=');
    const std::string want = !exactly && exact ? part.substr(1) : part;
    if (!want.empty() && (exact ? name == want : name.find(want) != std::string::npos)) return true;
    at = end + 1;
  }
  return false;
}
inline bool listed(const char* var, const std::string& name) { return listed_by(var, name, false); }
inline bool listed_exactly(const char* var, const std::string& name) { return listed_by(var, name, true); }

}  // namespace tessel::bench
