// The tessel CLI's subcommands: each registers its options and runs.
#pragma once
#include <CLI/CLI.hpp>

#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "tessel/ir/error.hpp"
#include "tessel/jit/device.hpp"
#include "tessel/jit/registry.hpp"

namespace tessel::cli {

// A user mistake on the command line: exit code 1 with a one-line reason (a UserError, which
// main() reports for every layer).
class UsageError : public UserError {
 public:
  using UserError::UserError;
};

// A failure the OS reported (std::system_error, std::filesystem::filesystem_error) as one line
// naming the call and the path: the user's environment, reported with exit 1.
std::string os_error_text(const std::system_error& e);

// -D NAME=VALUE definitions into a Meta.
jit::Meta parse_defines(const std::vector<std::string>& defs);

// UsageError for a -D name that none of `kernels` has, naming the ones they have (a misspelt
// name would otherwise be ignored and the default used). `what` names them in the message:
// "kernel 'x'", "sample 'y'".
void check_defines(const jit::Meta& meta, const std::vector<const jit::KernelEntry*>& kernels, const std::string& what);

// A registered kernel traced with -D definitions over its defaults, through the IR passes;
// `aligned` specialises every parameter as divisible by 16. UsageError for unknown names.
std::unique_ptr<ir::Function> trace_registered(const std::string& kernel, const std::vector<std::string>& defines,
                                               bool aligned, const std::vector<std::string>& ones = {});

// --device N (run, tune, bench): the GPU the command uses, by ordinal (default 0).
void add_device_option(CLI::App* cmd, int& ordinal);
// Makes device `ordinal` the current one (after any --interpret selection) and returns it;
// UsageError naming the devices there are when there is no such device.
jit::Device& use_device(int ordinal);

// Each add_* registers a subcommand on `app`; its callback sets `rc`.
void add_list(CLI::App& app, int& rc);
void add_compile(CLI::App& app, int& rc);
void add_run(CLI::App& app, int& rc);
void add_dump(CLI::App& app, int& rc);
void add_cache(CLI::App& app, int& rc);
void add_export(CLI::App& app, int& rc);
void add_tune(CLI::App& app, int& rc);
void add_bench(CLI::App& app, int& rc);
void add_report(CLI::App& app, int& rc);

}  // namespace tessel::cli
