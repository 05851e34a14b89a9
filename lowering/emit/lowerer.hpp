// The lowering state shared by every op family: LLVM builder, value maps, thread geometry.
#pragma once
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "plan/kernel_plan.hpp"
#include "shared_steps.hpp"
#include "tessel/ir/ir.hpp"
#include "tessel/lowering/compile.hpp"

namespace tessel::lowering {

// ceil(log2(x)) for x >= 1: the shift of a power of two.
inline int log2i(int64_t x) {
  int n = 0;
  while ((int64_t{1} << n) < x) ++n;
  return n;
}

// One thread's registers of a tile (indexed by the layout's register numbering), or the
// single register of a scalar. Indexed only by compile-time constants: no allocas.
using Regs = std::vector<llvm::Value*>;

struct PipelineState;  // pipeline.hpp

// The emitter of a kernel plan (plan/kernel_plan.hpp): walks the IR and the plan and builds the
// LLVM module. It decides nothing the plan decides; what it keeps is emission state (the
// registers of each value, shared-memory buffers, the role being emitted).
class Lowerer {
 public:
  Lowerer(const KernelPlan& plan, llvm::LLVMContext& ctx);
  // Builds the kernel; call once.
  std::unique_ptr<llvm::Module> run();

  llvm::LLVMContext& ctx;
  llvm::IRBuilder<> b;  // inserts into the kernel body
  const KernelPlan& plan;
  const ir::Function& irf;
  const Options& opts;
  const AxisAnalysis& axis;
  // The layouts of the role being emitted: the programs' (plan.layouts), or the producer
  // warps' (plan.producer_layouts) while their body is emitted.
  const LayoutAssignment& layouts() const { return *layouts_; }

  llvm::Module& module() { return *mod_; }
  llvm::Function* function() { return fn_; }

  // Types: registers hold i1 as i1; memory holds it as i8. Pointers are global (addrspace 1).
  llvm::Type* reg_type(ir::DType d);
  llvm::Type* mem_type(ir::DType d);
  llvm::PointerType* global_ptr();

  // Values.
  llvm::Value* scalar(const ir::Value* v);
  // A tile's registers in layout `l`: its natural registers, or recomputed in `l` when its
  // producers are cheap, or converted through shared memory.
  const Regs& tile(const ir::Value* v, const Layout& l);
  // Operand i of `op` as registers for an op computed in layout `l` (null: a scalar op).
  // A scalar operand of a tile op is repeated into every register.
  Regs operand(const ir::Op& op, int i, const Layout* l);
  // Converts op's tile operands to the layouts it reads them in, in operand order, before the op
  // is lowered (operands_converted_first): its own shared-memory use then follows every
  // conversion's.
  void convert_operands(const ir::Op& op, const Layout* l);
  int64_t result_regs(const ir::Op& op, const Layout* l);  // registers of result 0

  // Thread geometry, computed once in the kernel's prologue. tid() is the thread's index in
  // its program (Options::programs_per_cta), cta_tid() in the CTA, group() the program's
  // index in the CTA (constant 0 with one program per CTA).
  llvm::Value* tid();
  llvm::Value* cta_tid();
  llvm::Value* group();
  int program_threads() const { return plan.program_threads(); }
  // Warp specialisation: one producer warpgroup per CTA (KernelPlan::kProducerWarps).
  int producer_threads() const { return plan.producer_threads(); }
  int consumer_threads() const { return program_threads() * opts.programs_per_cta; }  // all programs' own warps
  llvm::Value* lane();
  llvm::Value* warp();
  llvm::Value* warp_uniform();  // warp(), known to ptxas as the same in every lane (lowerer.cpp)
  llvm::Value* grid_width();    // %nctaid.x, read once in the prologue
  // The thread's coordinate along parent dim p of `l` (warp_coord * tpw + lane_coord).
  llvm::Value* thread_coord(const Layout& l, int p);
  // The element coordinate (i32) along tile dim d held by register index r_d.
  llvm::Value* coord(const Layout& l, const ir::Shape& s, int d, int64_t r_d);
  // Row-major linear element index (i32) held by register `reg`.
  llvm::Value* linear_index(const Layout& l, const ir::Shape& s, int64_t reg);
  // i1: does this thread own its registers' elements (see layout.hpp)? Constant true when
  // the layout does not replicate the tile across threads.
  llvm::Value* thread_owner(const Layout& l, const ir::Shape& s);

  // Shared memory: a few static buffers, each sized for its largest use, as the plan laid them
  // out (KernelPlan::shared): each request below takes the planned slot (and the barrier the
  // plan puts first) and is checked against the plan's step (shared_steps.hpp).
  //   SmemBuffer s = smem_begin(bytes); <writes>; barrier(); <reads>; smem_done(s);
  struct SmemBuffer {
    int slot = -1;
    llvm::Value* base = nullptr;  // i8 addrspace(3), 16-byte aligned
  };
  // `align`: the buffer's offset in shared memory is a multiple of it (wgmma stagings: 1024).
  SmemBuffer smem_begin(int64_t bytes, int64_t align = 16);  // emits a barrier when no buffer is free
  // The shared memory a layout conversion may use here without costing occupancy (the plan's
  // budget for the next conversion that asks: plan/shared_exchange.hpp).
  int64_t smem_conversion_budget();
  void smem_done(const SmemBuffer& s);   // the caller's reads are emitted
  void barrier();  // bar.sync 0; frees every buffer
  // A basic-block boundary ptxas keeps (before deferred wgmma waits, after turn hand-overs).
  void block_boundary();
  // One inline asm: `before` (PTX statements over `args`, $0.. with `constraints`) then the
  // never-taken uniform branch that ends the block (block_boundary's), so nothing comes between.
  void kept_block_end(const std::string& before, const std::string& label, std::vector<llvm::Value*> args,
                      const std::string& constraints);
  // Loops: the body is lowered as if it were entered from before the loop only; at the end
  // of the body smem_loop_latch() adds a barrier when a buffer still in use there is one the
  // body touches before its first barrier (the next trip would race with this one). On exit
  // the buffers in use are those in use before the loop or at the latch.
  void smem_loop_begin();
  void smem_loop_latch();
  void smem_loop_exit();
  // A buffer of its own for a pipelined loop (pipeline.hpp): barriers do not free it and no
  // other request gets it until smem_unpin, after which it is busy until the next barrier. Whether
  // its users synchronise through mbarriers (rings, stage mbarriers) and whether it is the CTA's
  // (a ring the programs share) are the plan's (plan/shared_walk_loops.cpp pins it so).
  SmemBuffer smem_pinned(int64_t bytes, int64_t align = 16);
  void smem_unpin(const SmemBuffer& s);
  // Resident dot operands staged by a pipelined loop (ResidentOperand), by value, pinned until
  // the last loop of their block that reads them is lowered.
  std::map<const ir::Value*, SmemBuffer> kept_residents;
  // Lowers the pure ops `ops` (block order) again with `subst` bound in place of those values,
  // runs `use`, then restores every binding those values and ops' results had (their
  // registers in other layouts included). Software pipelining evaluates a load's mask for a
  // later trip this way.
  void with_rebound(const std::vector<std::pair<const ir::Value*, Regs>>& subst, const std::vector<const ir::Op*>& ops,
                    const std::function<void()>& use);
  // Programs sharing a CTA (program_groups.cpp): a wgmma K loop waits for its program's turn
  // before its first trip and hands the turn to the next program after its last.
  void mainloop_acquire();
  void mainloop_release();
  // Warp specialisation with several programs per CTA: the programs' ring loops share one ring
  // of programs_per_cta x num_stages stages (program_groups.cpp). Each role takes turns at it
  // (the producers in the order the consumers will read), and the trip count the next run
  // starts from is handed over with the turn.
  bool shared_ring() const { return plan.shared_ring(); }
  // Warpgroup turns of the pipelined or ring loop being emitted (PipelinePlan::warpgroup_turns,
  // warpgroup_turns.cpp): turns_open before the loop, turn_take at the trip's first dot before
  // its wgmma (`after_pass` runs once the turn is handed on: the trip's copies), turn_pass where
  // the holder would next wait (a wgmma wait, a barrier, the trip's end) or after the trip's last
  // dot (a no-op when no turn is held), turns_close after the loop.
  void turns_open(int warpgroups);
  void turn_take(std::function<void()> after_pass);
  void turn_pass();
  void turns_close();
  bool turn_held() const { return turn_held_; }
  // CTAs run in clusters of two whose producers multicast a shared operand (TmaOperand::
  // multicast): each CTA's empty[s] also counts the other CTA's consumers, and both CTAs meet
  // at a cluster barrier after setting up their mbarriers and before leaving.
  bool cluster_pair() const { return plan.cluster_pair; }
  void cluster_sync();  // barrier.cluster arrive + wait (warp_roles.cpp)
  llvm::Value* cluster_rank();  // %cluster_ctarank, read once in the prologue (warp_roles.cpp)
  void retire();  // this role of this program runs no more turns (before its exit)
  // Warp specialisation (Options::warp_specialize, warp_roles.cpp). The kernel body is lowered
  // twice: once for the programs' own warps (Role::Consumer) and once for their producer warps
  // (Role::Producer), which lower only the ops the plan gives them (KernelPlan::producer_ops):
  // those their loop bounds and the pipelined copies' pointers and masks come from.
  enum class Role { Both, Consumer, Producer };
  Role role = Role::Both;
  bool producer_lowers(const ir::Op& op) const { return role != Role::Producer || plan.producer_ops.count(&op) > 0; }
  bool producer_keeps(const ir::Value* v) const {
    return role != Role::Producer || plan.producer_values.count(v) > 0;
  }
  // The ring of a warp-specialised K loop (KernelPlan::rings): its stage buffers followed by
  // 2 * stages mbarriers (full[s], then empty[s]). Allocated by the consumer's emission, found
  // by the producer's.
  struct Ring {
    SmemBuffer buf;
    int stages = 0;
    int64_t stage_bytes = 0;
  };
  const Ring& ring_of(const ir::Op& loop);  // a loop continuing another's ring (RingPlan::shares) gets that one
  const ir::Op& ring_owner(const ir::Op& loop) const;  // the loop whose ring `loop` uses (itself, or RingPlan::shares)
  llvm::Value* ring_base(const Ring& r) { return slot_base(r.buf.slot); }  // in this role's program
  llvm::Value* tma_map_arg(int index) const;  // the generic address of tensor map `index` (KernelPlan::launch.tensor_maps)
  llvm::Value* ring_full(const Ring& r, llvm::Value* slot);
  llvm::Value* ring_empty(const Ring& r, llvm::Value* slot);
  // A shared ring's trip count where `role`'s next run starts (an i32 after its mbarriers).
  llvm::Value* ring_trips_word(const Ring& r, Role role);
  // Shared rings: the run's turn and its first trip (before the loop), and their hand-over.
  void ring_acquire(const ir::Op& loop, const Ring& r);
  void ring_release(const ir::Op& loop, const Ring& r);
  // A counter of this thread's trips through `loop`'s ring (an alloca LLVM promotes): the
  // stage and phase of each trip follow from it, across every run of the loop (and of the
  // loops continuing the same ring).
  llvm::Value* ring_counter(const ir::Op& loop);
  // The mbarriers of a pipelined loop whose stages they signal (PipelinePlan::mbarriers): full[s]
  // (every program thread's copies arrive) then empty[s] (each program warp arrives), in a buffer
  // of their own that init_barriers sets up once; ring_counter(loop) counts the stages' uses.
  struct StageBarriers {
    SmemBuffer buf;
    int stages = 0;
  };
  const StageBarriers& stage_barriers(const ir::Op& loop);  // made at the loop's first emission
  llvm::Value* stage_full(const StageBarriers& s, llvm::Value* slot);
  llvm::Value* stage_empty(const StageBarriers& s, llvm::Value* slot);
  // Emits `body` in a block that only threads with `cond` run; code after it runs in all.
  // Values made inside `body` do not dominate what follows.
  void if_then(llvm::Value* cond, const std::function<void()>& body);
  bool is_used(const ir::Value* v) const { return plan.use_count(v) > 0; }
  int use_count(const ir::Value* v) const { return plan.use_count(v); }

  llvm::Value* intrinsic(llvm::Intrinsic::ID id, llvm::ArrayRef<llvm::Type*> types,
                         llvm::ArrayRef<llvm::Value*> args);
  llvm::Value* i32(int64_t v) { return b.getInt32(static_cast<uint32_t>(v)); }

  // Lowering.
  // Every op but the terminator. `pipe`: the block is the body of a pipelined or ring loop whose
  // dot (pipe's) reads its operands from the stages (lower_dot_mma).
  void lower_block(const ir::Block& blk, const PipelineState* pipe = nullptr);
  std::vector<Regs> lower_op(const ir::Op& op, const Layout* l);
  void bind(const ir::Value* v, Regs r);
  // Gives tile(v, l) registers `r` of `v` in layout `l` (not its own) made by other means than a
  // conversion (a dense prefetch read at l's coordinates); forgotten with the current scope.
  void bind_in(const ir::Value* v, const Layout& l, Regs r);
  // wgmma groups committed without a wait (PipelinePlan::deferred_waits), oldest first, by the
  // dot's result: waited for where the result is first read (tile()), with wait_group n for
  // the n groups committed after it, or before anything that could disturb a group in flight
  // (a barrier, a shared buffer handed out, another wgmma's own wait, the end of the trip).
  // Each wait passes the registers of the groups it retires through it, so nothing reads them
  // earlier, and follows a block boundary ptxas keeps (otherwise it schedules the wait above
  // the work written before it: Lowerer::block_boundary). A register A operand (P) is not
  // passed through: keeping it intact until the wait is ptxas's part (it serialises the wgmma,
  // and says so, where it cannot; the attention PTX test checks that it does not).
  void defer_wgmma(const ir::Value* result) { wgmma_pending_.push_back(result); }
  void settle_wgmma(const ir::Value* v);
  void settle_all_wgmma();
  bool wgmma_deferred() const { return !wgmma_pending_.empty(); }
  // Recomputed/converted tiles made inside a loop body are forgotten when it ends (they do
  // not dominate the code after the loop).
  void push_scope();
  void pop_scope();

 private:
  void build_signature();
  llvm::Value* prologue_value(const std::string& key, const std::function<llvm::Value*(llvm::IRBuilder<>&)>& make);
  void finish_shared();
  llvm::Value* slot_base(int slot);           // the slot's address in this program's region
  // The turn words after the programs' regions (program_groups.cpp): program g's turn
  // mbarrier in `r`'s turns (consumers, or producers of a shared ring), the trip count a
  // role's next ring run starts from, and the mbarrier a retired role of program g arrives on.
  llvm::Value* turn_barrier(llvm::Value* g, Role r = Role::Consumer);
  llvm::Value* retired_barrier(Role r, llvm::Value* g);
  llvm::Value* turn_word(int64_t offset, llvm::Value* index, int64_t scale);
  int64_t turn_bytes() const { return (shared_ring() ? 32 : 16) * opts.programs_per_cta; }
  void wait_turn(Role r);
  // The block where each program's thread 0 initialises its mbarriers (turns, rings), then a
  // CTA-wide barrier; then `body`.
  llvm::BasicBlock* init_barriers(llvm::BasicBlock* body);
  void lower_roles();  // warp_roles.cpp: both roles' bodies, from the insert point
  void annotate_kernel();
  int turn_barrier_id(int g) const;  // warpgroup g's turn: a named barrier
  llvm::Value* warpgroup_index();     // this warp's warpgroup among the turns'
  // bar.sync (or bar.arrive) id(g), 256 for this thread's warpgroup g.
  void turn_barrier(const std::function<int(int)>& id, bool arrive);
  int turn_groups_ = 0;                           // > 0: inside a loop with warpgroup turns
  bool turn_held_ = false;
  std::function<void()> turn_after_;

  const LayoutAssignment* layouts_;
  std::unique_ptr<llvm::Module> mod_;
  llvm::Function* fn_ = nullptr;
  llvm::BasicBlock* entry_ = nullptr;
  llvm::IRBuilder<> pb_;  // prologue builder (end of the entry block)
  std::vector<Regs> values_;                        // natural registers by Value::id
  std::vector<const ir::Value*> wgmma_pending_;     // deferred wgmma groups, oldest first
  std::map<std::pair<uint32_t, std::string>, Regs> other_layouts_;  // (id, layout) -> regs
  std::vector<std::vector<std::pair<uint32_t, std::string>>> scopes_;
  std::map<std::string, llvm::Value*> prologue_;    // geometry by key
  // The plan's shared-memory steps as the emitter takes them, and each slot's placeholder
  // global, replaced by its planned offset in the dynamic shared array by finish_shared.
  SharedSteps shared_steps_;
  std::vector<llvm::GlobalVariable*> smem_vars_;
  llvm::GlobalVariable* slot_var(int slot);
  // programs_per_cta > 1: each program's buffers sit at group * (one program's bytes), this
  // multiply's constant set by finish_shared; the turn barriers follow the programs' regions.
  std::map<Role, llvm::BinaryOperator*> group_offset_;  // per role (their group() differ)
  llvm::GlobalVariable* turn_var_ = nullptr;
  llvm::AllocaInst* turn_count_ = nullptr;
  std::map<const ir::Op*, Ring> rings_;
  std::vector<std::pair<const ir::Op*, StageBarriers>> stage_barriers_;  // in emission order
  std::map<std::pair<const ir::Op*, Role>, llvm::AllocaInst*> ring_counters_;
};

// Op families: each returns result 0's registers computed in layout `l` (null for scalars).
Regs lower_shape(Lowerer& L, const ir::Op& op, const Layout* l);        // constant .. expand_dims
Regs lower_elementwise(Lowerer& L, const ir::Op& op, const Layout* l);  // arith, bitwise, compare, select, fma
Regs lower_cast(Lowerer& L, const ir::Op& op, const Layout* l);
// The fp8 bits of the constant `v` of op's fp8 result type (zero directly, else one cvt).
llvm::Value* fp8_constant(Lowerer& L, const ir::Op& op, double v);
// The f32 value (exact) of one fp8 byte of format `s`: a cvt pair where the target has one,
// else integer operations.
llvm::Value* fp8_to_f32(Lowerer& L, llvm::Value* byte, ir::Scalar s);
Regs lower_unpack(Lowerer& L, const ir::Op& op, const Layout* l);       // bit fields of words
Regs lower_math(Lowerer& L, const ir::Op& op, const Layout* l);         // exp .. ceil
Regs lower_memory(Lowerer& L, const ir::Op& op, const Layout* l);       // addptr, load, store
Regs lower_random(Lowerer& L, const ir::Op& op, const Layout* l);       // rand, randn
void lower_for(Lowerer& L, const ir::Op& op);
// f64 exp, exp2, log, log2, sin, cos, tanh, sigmoid (f64_math.hpp); InternalError for other ops.
llvm::Value* f64_unary(Lowerer& L, ir::OpKind k, llvm::Value* x);
Regs lower_reduce(Lowerer& L, const ir::Op& op, const Layout* l);       // reduce_*, argmax/argmin, reduce
Regs lower_scan(Lowerer& L, const ir::Op& op, const Layout* l);         // cumsum
Regs lower_reshape(Lowerer& L, const ir::Op& op, const Layout* l);      // reshape, trans
Regs lower_atomic(Lowerer& L, const ir::Op& op, const Layout* l);       // atomic_add, atomic_max
Regs lower_dot(Lowerer& L, const ir::Op& op, const Layout* l, const PipelineState* pipe);  // tensor cores or FMA
// dot on tensor cores (lower_dot_mma.cpp): the result's registers in layout `l`, the plan's
// accumulator layout. `pipe`: the dot of a pipelined or ring loop, whose operands are in the
// loop's stages (else it stages them itself; loads in KernelPlan::staged_loads by cp.async).
Regs lower_dot_mma(Lowerer& L, const ir::Op& op, const Layout& l, const MmaPlan& plan, const PipelineState* pipe);
// cp.async copies of a load's tile into staging `t` at `base`, from pointers `ptrs` (registers
// of the load's layout) where `mask` (empty: everywhere) and `guard` (null: true) hold; the
// rest is zero-filled (copies of 0 bytes). No commit. `by_class`: the destinations addressed by
// class (RingPlan::lean_copies), one offset register a class.
void stage_async(Lowerer& L, llvm::Value* base, const SmemTile& t, const ir::Op& load, const Regs& ptrs,
                 const Regs& mask, llvm::Value* guard, bool by_class = false);
// Moves a tile between layouts through shared memory.
Regs convert_layout(Lowerer& L, const ir::Value* v, const Regs& src, const Layout& from, const Layout& to);
// Exchanges values through shared memory: the writes, one barrier, then the reads. Each
// channel (argmax: value and index) is an array of `slots` elements of its type (integers
// narrower than 32 bits travel as i32) in one buffer; a write stores one value per channel at its slot, a read loads every
// channel of a slot. With `pred`, only threads where it holds write.
struct SmemWrite {
  llvm::Value* slot;
  std::vector<llvm::Value*> values;  // one per channel
};
std::vector<std::vector<llvm::Value*>> exchange_through_smem(Lowerer& L, const std::vector<llvm::Type*>& channels,
                                                             int64_t slots, const std::vector<SmemWrite>& writes,
                                                             llvm::Value* pred, const std::vector<llvm::Value*>& reads);

// Warp shuffles of a value of any register type (64-bit values move as two 32-bit halves,
// narrower ones widened), with the full-warp member mask.
llvm::Value* shfl_xor(Lowerer& L, llvm::Value* v, int lane_mask);
llvm::Value* shfl_up(Lowerer& L, llvm::Value* v, int delta);      // lanes below delta keep v
llvm::Value* shfl_idx(Lowerer& L, llvm::Value* v, llvm::Value* src_lane);

// Shared scalar helpers.
bool is_half(ir::DType d);  // f16 or bf16: computed in f32
// Widens f16/bf16 to f32 for arithmetic; other values pass through.
llvm::Value* to_compute(Lowerer& L, llvm::Value* v, ir::DType d);
llvm::Value* from_compute(Lowerer& L, llvm::Value* v, ir::DType d);

}  // namespace tessel::lowering
