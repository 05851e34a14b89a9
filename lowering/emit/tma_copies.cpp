// TMA copies of a ring trip: box coordinates evaluated from the plan's polynomials, the boxes
// dealt to the producer warps, and the expect_tx / cp.async.bulk.tensor instructions.
#include "tma_copies.hpp"

#include <fmt/format.h>
#include <llvm/IR/InlineAsm.h>

#include "tessel/ir/accessors.hpp"

namespace tessel::lowering {

llvm::Value* emit_poly(Lowerer& L, const Poly& p, const ir::Value* iv, llvm::Value* iv_value) {
  auto& b = L.b;
  llvm::Value* sum = L.i32(0);
  for (const auto& [m, c] : p) {
    llvm::Value* term = L.i32(c);
    for (const ir::Value* a : m.atoms) {
      llvm::Value* v = a == iv ? iv_value : L.scalar(a);
      term = b.CreateMul(term, b.CreateSExtOrTrunc(v, b.getInt32Ty()));
    }
    sum = b.CreateAdd(sum, term);
  }
  return sum;
}

void issue_stage_tma(Lowerer& L, const PipelinePlan& p, const RingPlan& r, llvm::Value* stage, llvm::Value* full,
                     llvm::Value* iv, llvm::Value* warp) {
  const std::vector<TmaOperand>& ops = r.tma;
  auto& b = L.b;
  auto shared32 = [&](llvm::Value* ptr) {
    return b.CreateTrunc(b.CreatePtrToInt(ptr, b.getInt64Ty()), b.getInt32Ty());
  };
  std::vector<llvm::Value*> col(ops.size()), row(ops.size());
  for (size_t o = 0; o < ops.size(); ++o) {
    col[o] = emit_poly(L, ops[o].col, ops[o].iv, iv);
    row[o] = emit_poly(L, ops[o].row, ops[o].iv, iv);
  }
  auto* expect = llvm::FunctionType::get(b.getVoidTy(), {b.getInt32Ty(), b.getInt32Ty()}, false);
  auto* asm_expect = llvm::InlineAsm::get(expect,
                                          "{\n.reg .pred p;\nelect.sync _|p, 0xffffffff;\n"
                                          "@p mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;\n}",
                                          "r,r,~{memory}", true);
  auto* copy = llvm::FunctionType::get(
      b.getVoidTy(), {b.getInt32Ty(), b.getPtrTy(), b.getInt32Ty(), b.getInt32Ty(), b.getInt32Ty()}, false);
  // 2-D boxes: {column, row}. View boxes: {column, 0, ..., 0, the tile's first row / unit}.
  auto copy_asm = [&](int rank) {
    std::string coords = "$2";
    for (int d = 1; d + 1 < rank; ++d) coords += ", 0";
    coords += ", $3";
    return llvm::InlineAsm::get(copy,
                                fmt::format("{{\n.reg .pred p;\nelect.sync _|p, 0xffffffff;\n"
                                            "@p cp.async.bulk.tensor.{}d.shared::cluster.global.mbarrier::complete_tx::"
                                            "bytes [$0], [$1, {{{}}}], [$4];\n}}",
                                            rank, coords),
                                "r,l,r,r,r,~{memory}", true);
  };
  // A multicast operand's box, issued by one CTA of the pair into both CTAs' stages (the same
  // offsets), completing bytes on both CTAs' full barriers (cluster_pair()).
  auto* mcopy = llvm::FunctionType::get(
      b.getVoidTy(), {b.getInt32Ty(), b.getPtrTy(), b.getInt32Ty(), b.getInt32Ty(), b.getInt32Ty(), b.getInt16Ty()},
      false);
  auto* mcopy_asm = llvm::InlineAsm::get(
      mcopy,
      "{\n.reg .pred p;\nelect.sync _|p, 0xffffffff;\n"
      "@p cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster "
      "[$0], [$1, {$2, $3}], [$4], $5;\n}",
      "r,l,r,r,r,h,~{memory}", true);
  llvm::Value* cta_rank = L.cluster_pair() ? L.cluster_rank() : nullptr;
  // The boxes are dealt to the first W producer warps, W no more than either path's box count,
  // so every issuer has bytes to announce; the other producer warps only wait for the stages.
  // A warp announces all its boxes' bytes, also those of multicast boxes the other CTA issues.
  const int W = r.full_arrivals;
  auto issue = [&](const std::vector<Box>& boxes) {
    std::vector<int64_t> nth(ops.size(), 0), index(boxes.size());  // a box's index among its operand's
    for (size_t k = 0; k < boxes.size(); ++k) index[k] = nth[boxes[k].op]++;
    for (int w = 0; w < W; ++w) {
      int64_t bytes = 0;
      for (size_t k = w; k < boxes.size(); k += W) bytes += boxes[k].bytes;
      L.if_then(b.CreateICmpEQ(warp, L.i32(w)), [&] {
        b.CreateCall(asm_expect, {shared32(full), L.i32(bytes)});
        for (size_t k = w; k < boxes.size(); k += W) {
          const Box& x = boxes[k];
          const TmaOperand& t = ops[x.op];
          llvm::Value* dst = b.CreateConstGEP1_64(b.getInt8Ty(), stage, x.dst);
          llvm::Value* c = b.CreateAdd(col[x.op], L.i32(x.dcol));
          if (x.view) {
            const int rank = static_cast<int>(1 + t.view.view.size());
            llvm::Value* outer = b.CreateSDiv(row[x.op], L.i32(view_unit(t.view)));
            b.CreateCall(copy_asm(rank), {shared32(dst), L.tma_map_arg(t.view_index), c, outer, shared32(full)});
          } else if (t.multicast && cta_rank) {
            // Even boxes from CTA 0, odd ones from CTA 1, each into both.
            L.if_then(b.CreateICmpEQ(cta_rank, L.i32(index[k] % 2)), [&] {
              b.CreateCall(mcopy_asm, {shared32(dst), L.tma_map_arg(t.map_index), c,
                                       b.CreateAdd(row[x.op], L.i32(x.drow)), shared32(full), b.getInt16(3)});
            });
          } else {
            b.CreateCall(copy_asm(2), {shared32(dst), L.tma_map_arg(t.map_index), c,
                                       b.CreateAdd(row[x.op], L.i32(x.drow)), shared32(full)});
          }
        }
      });
    }
  };
  // The view boxes serve tiles wholly inside the rows whose first row is a multiple of the
  // view's unit (the same in every producer thread, so the branch is uniform).
  llvm::Value* whole = nullptr;
  for (size_t o = 0; o < ops.size(); ++o) {
    if (ops[o].view_index < 0) continue;
    const TensorMapRecipe& v = ops[o].view;
    llvm::Value* rows = L.i32(0);
    for (const TensorMapTerm& t : v.rows) {
      llvm::Value* term = L.i32(t.coeff);
      for (int param : t.params)
        term = b.CreateMul(term, b.CreateSExtOrTrunc(L.scalar(L.irf.body.args.at(param)), b.getInt32Ty()));
      rows = b.CreateAdd(rows, term);
    }
    llvm::Value* ok = b.CreateAnd(b.CreateICmpEQ(b.CreateSRem(row[o], L.i32(view_unit(v))), L.i32(0)),
                                  b.CreateICmpSLE(b.CreateAdd(row[o], L.i32(v.box_rows)), rows));
    whole = whole ? b.CreateAnd(whole, ok) : ok;
  }
  if (!whole) return issue(stage_boxes(p, ops, false));
  L.if_then(whole, [&] { issue(stage_boxes(p, ops, true)); });
  L.if_then(b.CreateNot(whole), [&] { issue(stage_boxes(p, ops, false)); });
}

llvm::Value* Lowerer::tma_map_arg(int index) const {
  return fn_->getArg(static_cast<unsigned>(irf.body.args.size() + index));
}

}  // namespace tessel::lowering
