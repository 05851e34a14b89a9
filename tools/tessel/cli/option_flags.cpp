// The compile options' CLI flags, generated from the options table.
#include "option_flags.hpp"

#include <cctype>

#include "commands.hpp"

namespace tessel::cli {
namespace {

void add_one(CLI::App* cmd, const std::string& flag, int& value, const std::string& help) {
  cmd->add_option(flag, value, help);
}
void add_one(CLI::App* cmd, const std::string& flag, bool& value, const std::string& help) {
  cmd->add_flag(flag, value, help);
}

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The option names of a rule's message as the user typed them: "tma" -> "--tma".
std::string with_flag_names(const std::string& message) {
  std::string out;
  for (size_t i = 0; i < message.size();) {
    if (!word_char(message[i])) {
      out += message[i++];
      continue;
    }
    size_t end = i;
    while (end < message.size() && word_char(message[end])) ++end;
    const std::string word = message.substr(i, end - i);
    const OptionInfo* o = find_option(word);
    out += o ? o->cli_flag() : word;
    i = end;
  }
  return out;
}

}  // namespace

void add_option_flags(CLI::App* cmd, jit::CompileOptions& o, const std::string& help_prefix) {
#define TESSEL_OPTION(type, name, def, shown, tag, help) \
  add_one(cmd, find_option(#name)->cli_flag(), o.name, help_prefix + help);
#include "tessel/options/compile_options.def"
#undef TESSEL_OPTION
}

void override_given_options(const CLI::App& cmd, const jit::CompileOptions& given, jit::CompileOptions& into) {
  for (const OptionInfo& o : option_table())
    if (cmd.count(o.cli_flag()) > 0) set_option_value(into, o.name, option_value(given, o.name));
}

void check_option_flags(const jit::CompileOptions& o) {
  if (std::string why = option_problem(o); !why.empty()) throw UsageError(with_flag_names(why));
}

}  // namespace tessel::cli
