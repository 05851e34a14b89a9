// The compile options' CLI flags (--num-warps, --tma, ...), one per row of compile_options.def.
#pragma once
#include <CLI/CLI.hpp>

#include <string>

#include "tessel/jit/options.hpp"

namespace tessel::cli {

// Adds a flag per compile option to `cmd`, bound to `o`: "--num-warps N" for an int option,
// "--warp-specialize" for a bool. `help_prefix` goes before each table help ("Matmul samples: ").
void add_option_flags(CLI::App* cmd, jit::CompileOptions& o, const std::string& help_prefix = "");

// Sets in `into` the options whose flags were given on `cmd` (their values in `given`), keeping
// the others: a kernel's own config with the user's overrides.
void override_given_options(const CLI::App& cmd, const jit::CompileOptions& given, jit::CompileOptions& into);

// UsageError naming the flags when `o` breaks a rule of the table ("--tma needs
// --warp-specialize (...)"); call it in the subcommand's callback, after parsing.
void check_option_flags(const jit::CompileOptions& o);

}  // namespace tessel::cli
