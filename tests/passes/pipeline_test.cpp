// The pass pipeline: default order, verification naming the pass, IR dumps, determinism.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "pass_test_util.hpp"
#include "tessel/ir/verify.hpp"

using namespace passtest;

namespace {

// Runs fn with file descriptor 2 pointed at a temporary file; returns what was written.
template <class F>
std::string capture_stderr(F&& fn) {
  std::fflush(stderr);
  char path[] = "/tmp/tessel_passes_stderr_XXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  int saved = dup(2);
  dup2(fd, 2);
  struct Restore {
    int saved, fd;
    ~Restore() {
      std::fflush(stderr);
      dup2(saved, 2);
      close(saved);
      close(fd);
    }
  };
  {
    Restore r{saved, fd};
    fn();
  }
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  unlink(path);
  return ss.str();
}

// A vector-add-like kernel with foldable constants, a duplicate expression, dead code and
// a loop, built the way the DSL would trace it.
void build_kernel(Kernel& k) {
  Builder& b = k.b;
  Value* x = k.param("x", Type{dt(Scalar::f32).pointer_to(), {}});
  Value* out = k.param("out", Type{dt(Scalar::f32).pointer_to(), {}});
  Value* n = k.param("n", scalar_t(Scalar::i32));
  const Shape s{128};
  Value* block = k.op(OpKind::Mul, {k.c_int(64, Scalar::i32), k.c_int(2, Scalar::i32)});  // 128
  Value* start = k.op(OpKind::Mul, {b.program_id(0), block});
  Value* offs = k.op(OpKind::Add, {b.splat(start, s), b.arange(0, 128)});
  Value* mask = k.op(OpKind::CmpLt, {offs, b.splat(n, s)});
  Value* xp = b.value(OpKind::AddPtr, {b.splat(x, s), offs});
  Value* v = b.value(OpKind::Load, {xp, mask});
  Value* scale = k.op(OpKind::Add, {k.c_float(0.5, Scalar::f32), k.c_float(1.5, Scalar::f32)});  // 2
  Value* scaled = k.op(OpKind::Mul, {v, b.splat(scale, s)});
  Value* one = k.c_float(1.0, Scalar::f32, s);
  Value* acc0 = k.op(OpKind::Mul, {scaled, one});  // == scaled
  k.op(OpKind::Exp, {v});                          // dead
  Value* lo = k.c_int(0, Scalar::i32);
  Value* hi = k.c_int(4, Scalar::i32);
  Value* step = k.c_int(1, Scalar::i32);
  Op& loop = b.for_loop(lo, hi, step, {acc0});
  b.set_block(&loop.body());
  Value* again = k.op(OpKind::Mul, {v, b.splat(scale, s)});  // recomputes `scaled`
  b.create(OpKind::Yield, {k.op(OpKind::Add, {loop.body().args[1], again})});
  b.set_block(&k.f.body);
  Value* op = b.value(OpKind::AddPtr, {b.splat(out, s), offs});
  b.create(OpKind::Store, {op, loop.results[0], mask});
}

bool corrupt_first_add(Function& f) {
  // Points the add's second operand at a value of another type: an Arith rule violation.
  for (auto& op : f.body.ops)
    if (op->kind == OpKind::Add) {
      op->operands[1] = f.body.args.back();
      return true;
    }
  return false;
}

struct EnvVar {
  explicit EnvVar(const char* v) {
    if (v) setenv("TESSEL_DUMP_IR", v, 1);
    else unsetenv("TESSEL_DUMP_IR");
  }
  ~EnvVar() { unsetenv("TESSEL_DUMP_IR"); }
};

}  // namespace

TEST_CASE("the default passes are canonicalize, cse, dce") {
  const auto& p = default_passes();
  REQUIRE(p.size() == 3);
  CHECK(p[0].name == "canonicalize");
  CHECK(p[1].name == "cse");
  CHECK(p[2].name == "dce");
  CHECK((p[0].run == &tessel::ir::canonicalize));  // glibc has a canonicalize() too
  CHECK((p[1].run == &cse));
  CHECK((p[2].run == &dce));
}

TEST_CASE("PipelineOptions::from_env reads TESSEL_DUMP_IR") {
  {
    EnvVar e("1");
    CHECK(PipelineOptions::from_env().dump);
  }
  {
    EnvVar e("yes");
    CHECK(PipelineOptions::from_env().dump);
  }
  {
    EnvVar e("0");
    CHECK_FALSE(PipelineOptions::from_env().dump);
  }
  {
    EnvVar e("");
    CHECK_FALSE(PipelineOptions::from_env().dump);
  }
  {
    EnvVar e(nullptr);
    CHECK_FALSE(PipelineOptions::from_env().dump);
    CHECK(PipelineOptions::from_env().verify_each);
  }
}

TEST_CASE("the default pipeline simplifies a traced kernel to verified IR") {
  Kernel k;
  build_kernel(k);
  verify(k.f);
  run_pipeline(k.f, default_passes(), PipelineOptions{});
  CHECK(k.text() ==
        "kernel @k(%x: ptr<f32>, %out: ptr<f32>, %n: i32) {\n"
        "  %0 = constant {value = 128} : i32\n"
        "  %1 = program_id {axis = 0} : i32\n"
        "  %2 = mul %1, %0 : i32\n"
        "  %3 = splat %2 : i32[128]\n"
        "  %4 = arange {end = 128, start = 0} : i32[128]\n"
        "  %5 = add %3, %4 : i32[128]\n"
        "  %6 = splat %n : i32[128]\n"
        "  %7 = cmp_lt %5, %6 : i1[128]\n"
        "  %8 = splat %x : ptr<f32>[128]\n"
        "  %9 = addptr %8, %5 : ptr<f32>[128]\n"
        "  %10 = load %9, %7 : f32[128]\n"
        "  %11 = constant {value = 2.0} : f32[128]\n"
        "  %12 = mul %10, %11 : f32[128]\n"
        "  %13 = constant {value = 0} : i32\n"
        "  %14 = constant {value = 4} : i32\n"
        "  %15 = constant {value = 1} : i32\n"
        "  %16 = for %13, %14, %15, %12 : f32[128] {\n"
        "  ^(%17: i32, %18: f32[128]):\n"
        "    %19 = add %18, %12 : f32[128]\n"
        "    yield %19\n"
        "  }\n"
        "  %20 = splat %out : ptr<f32>[128]\n"
        "  %21 = addptr %20, %5 : ptr<f32>[128]\n"
        "  store %21, %16, %7\n"
        "}\n");
}

TEST_CASE("the pipeline is deterministic") {
  Kernel a, b;
  build_kernel(a);
  build_kernel(b);
  CHECK(a.text() == b.text());
  run_pipeline(a.f, default_passes(), PipelineOptions{});
  run_pipeline(b.f, default_passes(), PipelineOptions{});
  CHECK(a.text() == b.text());
  std::string once = a.text();
  run_pipeline(a.f, default_passes(), PipelineOptions{});  // and idempotent
  CHECK(a.text() == once);
}

TEST_CASE("dump prints the IR after each pass to stderr") {
  Kernel k, ref;
  build_kernel(k);
  build_kernel(ref);
  std::string expected;
  for (const Pass& p : default_passes()) {
    p.run(ref.f);
    expected += "// -----// IR after " + std::string(p.name) + " //----- //\n" + ref.text();
  }
  EnvVar e("1");
  PipelineOptions opts = PipelineOptions::from_env();
  std::string err = capture_stderr([&] { run_pipeline(k.f, default_passes(), opts); });
  CHECK(err == expected);
  CHECK(err.find("IR after cse") != std::string::npos);
  // And nothing without the flag.
  Kernel quiet;
  build_kernel(quiet);
  std::string none = capture_stderr([&] { run_pipeline(quiet.f, default_passes(), PipelineOptions{}); });
  CHECK(none.empty());
}

TEST_CASE("verify_each names the pass that broke the IR") {
  std::vector<Pass> passes{{"canonicalize", &tessel::ir::canonicalize}, {"corrupt", &corrupt_first_add}, {"dce", &dce}};
  Kernel k;
  Value* x = k.param("x", scalar_t(Scalar::i32));
  k.sink(k.op(OpKind::Add, {x, k.c_int(5, Scalar::i32)}));
  std::string msg;
  try {
    run_pipeline(k.f, passes, PipelineOptions{});
  } catch (const tessel::VerifyError& e) {
    msg = e.what();
  }
  CHECK(msg.rfind("after pass 'corrupt': verify: op 'add'", 0) == 0);
  // Without verify_each the broken IR goes through unreported.
  Kernel k2;
  Value* x2 = k2.param("x", scalar_t(Scalar::i32));
  k2.sink(k2.op(OpKind::Add, {x2, k2.c_int(5, Scalar::i32)}));
  PipelineOptions no_verify;
  no_verify.verify_each = false;
  CHECK_NOTHROW(run_pipeline(k2.f, passes, no_verify));
}

TEST_CASE("a malformed input is reported before any pass runs") {
  Kernel k;
  Value* x = k.param("x", scalar_t(Scalar::i32));
  Value* y = k.param("y", scalar_t(Scalar::i64));
  k.sink(k.b.value(OpKind::Add, {x, y}, {scalar_t(Scalar::i32)}));
  std::string msg;
  try {
    run_pipeline(k.f, default_passes(), PipelineOptions{});
  } catch (const tessel::VerifyError& e) {
    msg = e.what();
  }
  CHECK(msg.rfind("before the pipeline: verify:", 0) == 0);
}
