// Test helpers shared by several test folders: a temporary directory and a scoped environment variable.
#pragma once
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>

namespace tessel_test {

// A fresh directory, removed with its contents at scope exit.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string t = (std::filesystem::temp_directory_path() / "tessel-test-XXXXXX").string();
    if (!::mkdtemp(t.data())) throw std::runtime_error("mkdtemp failed");
    path = t;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

// Sets (or unsets, with nullopt) an environment variable and restores it at scope exit.
struct EnvVar {
  std::string name;
  std::optional<std::string> old;
  EnvVar(std::string n, std::optional<std::string> value) : name(std::move(n)) {
    if (const char* v = std::getenv(name.c_str())) old = v;
    if (value) ::setenv(name.c_str(), value->c_str(), 1);
    else ::unsetenv(name.c_str());
  }
  ~EnvVar() {
    if (old) ::setenv(name.c_str(), old->c_str(), 1);
    else ::unsetenv(name.c_str());
  }
  EnvVar(const EnvVar&) = delete;
  EnvVar& operator=(const EnvVar&) = delete;
};

}  // namespace tessel_test
