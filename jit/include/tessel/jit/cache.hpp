// The on-disk compilation cache: keys, entries (IR, LLVM IR, PTX, cubin, metadata) and the store.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tessel/ir/ir.hpp"
#include "tessel/jit/options.hpp"
#include "tessel/options/launch_spec.hpp"
#include "tessel/options/launch.hpp"

namespace tessel::jit::cache {

namespace fs = std::filesystem;

// ---- Key -------------------------------------------------------------------------------------

// Everything a compiled artefact depends on, and nothing else: the key is a hash of these only.
// The printed IR carries the kernel name, the parameter types and the specialisation (as
// parameter attributes); source locations are left out of it, so moving a kernel in its file
// or tracing it twice gives the same key. The compile options (the base) are keyed as the table
// says: an option not always shown is keyed only when it is not its default.
struct KeyInputs : CompileOptions {
  std::string ir_text;         // ir::print(f) without locations, after the passes
  std::string meta;            // f.meta as "BLOCK=1024,WARPS=4": they name the PTX entry
  std::string arch;            // "sm_90", "sm_90a"; "interpreter" for CPU-only dumps
  int ptx_version = 0;         // resolved PTX ISA version, e.g. 80
  std::string tessel_version;  // tessel_version()
  std::string tessel_build;    // tessel_build_id()
  std::string llvm_version;    // lowering::llvm_version(), "" without the lowering
};

// tessel's own version, from the CMake project version ("0.1.2").
std::string tessel_version();

// This build of tessel: 16 hex digits hashing the sources of ir/, lang/, lowering/, jit/ and
// runtime/ (generated at build time, see jit/CMakeLists.txt). In every key, so entries written
// by a build whose code generation may differ are never loaded, whatever the version says.
std::string tessel_build_id();

// The inputs for `f` (already through the passes) compiled with `opts` for a target.
KeyInputs key_inputs(const ir::Function& f, const CompileOptions& opts, std::string arch, int ptx_version,
                     std::string llvm_version);

// XXH3-128 of the inputs as 32 lowercase hex characters. Deterministic across processes and hosts.
std::string make_key(const KeyInputs& in);

// Whether `s` looks like a key (32 lowercase hex characters): guards paths built from user input.
bool is_key(std::string_view s);

// ---- Entry -----------------------------------------------------------------------------------

// The files of an entry, in the order they are written (meta.json comes last).
inline constexpr const char* kTirFile = "kernel.tir";
inline constexpr const char* kPlanFile = "kernel.plan";  // the kernel plan (lowering::plan_text)
inline constexpr const char* kLlvmFile = "kernel.ll";
inline constexpr const char* kPtxFile = "kernel.ptx";
inline constexpr const char* kCubinFile = "kernel.cubin";
inline constexpr const char* kMetaFile = "meta.json";
inline constexpr const char* kHitsFile = "hits";  // best-effort hit counter, not checksummed

struct ParamInfo {
  std::string name;
  std::string type;  // "ptr<f32>", "i32"
  bool div16 = false;
  bool equal1 = false;
  friend bool operator==(const ParamInfo&, const ParamInfo&) = default;
};

struct FileSum {
  uint64_t size = 0;
  std::string xxh3;  // XXH3-64 of the bytes, 16 hex characters
  friend bool operator==(const FileSum&, const FileSum&) = default;
};

// meta.json. Unknown resource figures are -1. The compile options (the base: programs_per_cta
// divides grid.x, warp_specialize adds a producer warpgroup per CTA) are written under their
// table names; those absent from older entries take their defaults.
struct EntryMeta : CompileOptions {
  std::string key;
  std::string kernel;                 // the kernel's name
  std::vector<std::pair<std::string, int64_t>> meta_params;  // ir::Function::meta
  std::vector<ParamInfo> params;
  std::string specialisation;         // e.g. "x:d16 n:-" (d16: divisible by 16, eq1: equals 1)
  // How to launch it, as the lowering produced it (lowering::Compiled::launch), stored as-is:
  // the PTX .entry name of this variant (lowering::entry_symbol: kernel, meta, options), what
  // cuModuleGetFunction is asked for and what ncu/nsys show, recorded beside the
  // meta-parameters and options it stands for; threads per CTA (the formula the lowering set
  // .maxntid from, options/launch.hpp); shared memory; cluster; tensor maps built at each launch.
  LaunchSpec launch;
  const std::string& entry() const { return launch.symbol; }
  int registers = -1;                 // per thread
  int local_bytes = -1;               // spills and stack per thread
  int spill_bytes = -1;               // spill stores (ptxas reports them)
  std::string arch;                   // the target the PTX was generated for
  std::string cubin_arch;             // the sm the cubin was made for ("" without a cubin)
  std::string cubin_tool;             // "driver" | "ptxas" | ""
  int ptx_version = 0;
  std::string tessel_version;
  std::string tessel_build;           // tessel_build_id() of the writer ("" in entries before it)
  std::string llvm_version;
  int64_t created = 0;                // unix seconds
  std::map<std::string, FileSum> files;  // every other file of the entry, by name
};

// A complete entry in memory: the artefacts and their metadata. An empty `cubin` means none.
struct Entry {
  std::string tir;
  std::string plan;
  std::string llvm_ir;
  std::string ptx;
  std::vector<char> cubin;
  EntryMeta meta;
};

// The metadata of `f` for key `in` (kernel, parameters, specialisation, options, versions,
// creation time); resource figures and checksums are filled in later.
EntryMeta describe(const ir::Function& f, const KeyInputs& in, std::string key);

// meta.json text: a pretty-printed object with a "checksum" over the rest of it, so any changed
// byte (values or formatting) is detected by parse_meta.
std::string meta_to_json(const EntryMeta& m);
// Parses and checks meta.json text; std::runtime_error saying what is wrong otherwise.
EntryMeta parse_meta(std::string_view text);

// XXH3-64 of bytes as 16 hex characters.
std::string file_hash(std::string_view bytes);

// ---- Settings --------------------------------------------------------------------------------

// The environment knobs, read when asked (tests change them).
//   TESSEL_CACHE=0           disables the cache (no lookups, no writes)
//   TESSEL_CACHE_DIR=DIR     where entries live (default $XDG_CACHE_HOME/tessel, else ~/.cache/tessel)
//   TESSEL_ALWAYS_COMPILE=1  ignore hits, still write
//   TESSEL_DUMP_DIR=DIR      write every stage of every kernel compiled to DIR/<kernel>-<key>/
struct Settings {
  bool enabled = true;
  bool always_compile = false;
  fs::path dir;                  // empty when no location can be found (then disabled)
  std::optional<fs::path> dump_dir;
  static Settings from_env();
  // The cache directory the environment names (even when TESSEL_CACHE=0), for the CLI.
  static fs::path dir_from_env();
};

// Writes `e`'s stages (tir, ll, ptx, cubin when present, meta.json) to dump_dir/<kernel>-<key>/,
// overwriting. Failures are reported once to stderr and otherwise ignored.
void dump_entry(const fs::path& dump_dir, const Entry& e);
// The same for `tessel dump`, which must fail when nothing was written: returns "" when every
// file was written, else why not (nothing is reported).
std::string write_dump(const fs::path& dump_dir, const Entry& e);

// The policy a compile path applies, in two steps around its own compilation:
// fetch: the cached entry for `key`, or nullopt when the cache is disabled, TESSEL_ALWAYS_COMPILE
//        is set, or there is no (intact) entry.
// publish: after compiling (hit = false) stores the entry (replacing an existing one under
//        TESSEL_ALWAYS_COMPILE or when `replace`: a hit whose cubin was linked again); either
//        way dumps it to TESSEL_DUMP_DIR when set.
std::optional<Entry> fetch(const Settings& s, const std::string& key);
void publish(const Settings& s, const Entry& e, bool hit, bool replace = false);

// Lowers `f` (already through the passes) for `arch` ("sm_90") into a complete entry keyed as
// the GPU device would key it: tir, LLVM IR, PTX and, when `with_cubin` and the driver or ptxas
// can make one, the cubin with its resource figures (offline cache warming, `tessel cache warm`).
// Throws std::runtime_error when tessel was built without the lowering.
Entry compile_entry(const ir::Function& f, const CompileOptions& opts, std::string_view arch, bool with_cubin = true);

// ---- Store -----------------------------------------------------------------------------------

enum class StoreResult { Stored, Exists, Failed };

// What verify found in one entry. Unreadable is not damage: a file is there but could not be read
// (permissions, an I/O error), so nothing may be concluded about it, and nothing is removed.
struct EntryCheck {
  enum Kind { Intact, Absent, Corrupt, Unreadable } kind = Intact;
  std::string problem;  // "" when Intact, else why ("kernel.ptx truncated (100 of 798 bytes)")
};

// What clear did. Only tessel's own entries and temporaries are removed; anything else in the
// cache directory (the user's files and folders) is left and counted in `foreign`.
struct ClearResult {
  size_t removed = 0;  // entries removed
  size_t kept = 0;     // entries that could not be removed (a read-only cache)
  size_t foreign = 0;  // files and folders that are not tessel's, left alone
};

// One entry's summary, for listings.
struct EntryInfo {
  std::string key;
  fs::path path;
  std::optional<EntryMeta> meta;  // nullopt when meta.json is unreadable
  std::string problem;            // why meta is missing
  uint64_t bytes = 0;             // all files
  uint64_t hits = 0;
};

// The cache directory: <dir>/<key[0:2]>/<key>/ per entry, <dir>/tmp/ for entries being written
// (<key>.tessel-tmp.<pid>.<rand>/) or removed (<key>.tessel-trash.<pid>.<rand>/). Only those
// shapes are tessel's: an entry is a key-named directory in its shard holding nothing but entry
// files, a temporary a directory so named holding nothing but entry files. Nothing else in the
// directory is ever removed. Every public operation is safe against other processes using the same directory:
// an entry appears by one rename() of a complete, fsync'ed directory and disappears by one
// rename() out of place, so readers never see half of one. I/O failures never throw out of
// lookup/store: they are reported once to stderr and the cache is bypassed.
class Store {
 public:
  explicit Store(fs::path dir) : dir_(std::move(dir)) {}
  const fs::path& dir() const { return dir_; }
  fs::path entry_path(const std::string& key) const;

  // The entry, with every checksum verified; nullopt on a miss. A corrupt entry (missing,
  // truncated or altered file) is reported once per process to stderr, removed, and a miss.
  // An entry with a file that cannot be read (permissions) is reported once and a miss, and
  // left in place. A hit bumps the entry's hit count.
  std::optional<Entry> lookup(const std::string& key);

  // Publishes `e` (whose meta.key names it) atomically; meta.files and meta.key are filled in
  // here. Exists when another process published the key first (ours is discarded), unless
  // `replace`, which swaps an existing entry out first (TESSEL_ALWAYS_COMPILE). Failed when the
  // directory cannot be written (full, read-only): the reason goes to `failure` when given,
  // else it is reported once to stderr.
  StoreResult store(Entry e, bool replace = false, std::string* failure = nullptr);

  // Checks one entry without changing it.
  EntryCheck check(const std::string& key) const;
  // check(key).problem: "" when intact, else the reason.
  std::string verify(const std::string& key) const;
  // Removes one entry (false when absent, not tessel's, or not removable).
  bool remove(const std::string& key);
  // Every entry, sorted by key.
  std::vector<EntryInfo> list() const;
  // The entry whose key starts with `prefix`; std::invalid_argument when none or several match.
  std::string resolve(std::string_view prefix) const;
  // Removes every entry and the temporaries of dead writers, and nothing that is not tessel's.
  ClearResult clear();
  // tessel's temporary directories (unfinished or abandoned writes) currently present.
  std::vector<fs::path> temporaries() const;

 private:
  fs::path dir_;
};

}  // namespace tessel::jit::cache
