// Affine forms of integer and pointer tiles: a value as an integer polynomial over scalar IR
// values, each monomial optionally times the index along one tile dimension. The TMA plan
// (tma_plan.hpp) and compact copy pointers (pipeline_plan.hpp) read pointer tiles this way.
#pragma once
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "tessel/ir/accessors.hpp"
#include "tessel/ir/ir.hpp"

namespace tessel::lowering {

// An integer polynomial over scalar IR values (kernel parameters, program ids, induction
// variables, other scalar results), each monomial optionally times the index along one
// dimension of a tile (`iota`): the affine form of an offset, pointer or bound tile.
struct Mono {
  int iota = -1;                            // tile dimension, or -1
  std::vector<const ir::Value*> atoms;      // sorted by id, repeats allowed
  friend bool operator==(const Mono& a, const Mono& b) { return a.iota == b.iota && a.atoms == b.atoms; }
};
using Poly = std::map<Mono, int64_t>;

inline bool operator<(const Mono& a, const Mono& b) {
  if (a.iota != b.iota) return a.iota < b.iota;
  return std::lexicographical_compare(a.atoms.begin(), a.atoms.end(), b.atoms.begin(), b.atoms.end(),
                                      [](const ir::Value* x, const ir::Value* y) { return x->id < y->id; });
}

inline Poly constant(int64_t c) {
  Poly p;
  if (c != 0) p[Mono{}] = c;
  return p;
}
inline Poly atom(const ir::Value* v) { return Poly{{Mono{-1, {v}}, 1}}; }
inline Poly iota(int dim) { return Poly{{Mono{dim, {}}, 1}}; }

inline void add_into(Poly& p, const Mono& m, int64_t c) {
  if ((p[m] += c) == 0) p.erase(m);
}
inline Poly add(const Poly& a, const Poly& b, int64_t sign = 1) {
  Poly out = a;
  for (const auto& [m, c] : b) add_into(out, m, sign * c);
  return out;
}
inline std::optional<Poly> mul(const Poly& a, const Poly& b) {
  Poly out;
  for (const auto& [ma, ca] : a)
    for (const auto& [mb, cb] : b) {
      if (ma.iota >= 0 && mb.iota >= 0) return std::nullopt;  // not affine in the tile index
      Mono m{std::max(ma.iota, mb.iota), ma.atoms};
      m.atoms.insert(m.atoms.end(), mb.atoms.begin(), mb.atoms.end());
      std::sort(m.atoms.begin(), m.atoms.end(), [](const ir::Value* x, const ir::Value* y) { return x->id < y->id; });
      add_into(out, m, ca * cb);
    }
  return out;
}
inline bool has_iota(const Poly& p) {
  return std::any_of(p.begin(), p.end(), [](const auto& t) { return t.first.iota >= 0; });
}
// Tile dimension d of the operand becomes `map(d)` in the result.
template <class F>
inline Poly remap(const Poly& p, F map) {
  Poly out;
  for (const auto& [m, c] : p) add_into(out, Mono{m.iota < 0 ? -1 : map(m.iota), m.atoms}, c);
  return out;
}
// The terms along tile dimension d (its iota removed), or those with no iota (d = -1).
inline Poly part(const Poly& p, int d) {
  Poly out;
  for (const auto& [m, c] : p)
    if (m.iota == d) out[Mono{-1, m.atoms}] = c;
  return out;
}

class Affine {
 public:
  Affine(const ir::Function& f, const ir::ForOp& loop) : f_(f), loop_(loop) {}

  // An integer value (scalar or tile) as a polynomial; nullopt when it is not affine.
  std::optional<Poly> of(const ir::Value* v) {
    if (!v->type.dtype.is_int() || v->type.dtype.is_bool()) return std::nullopt;
    if (v->is_block_arg()) {
      if (v->block == &f_.body) {
        if (f_.params.at(v->index).spec.equal1) return constant(1);
        return atom(v);
      }
      if (v == loop_.induction_var() || v->type.is_scalar()) return atom(v);  // outer loops' values too
      return std::nullopt;
    }
    const ir::Op& d = *v->def;
    using K = ir::OpKind;
    switch (d.kind) {
      case K::Constant: return constant(ir::ConstantOp{d}.int_value());
      case K::Arange: return add(iota(0), constant(ir::ArangeOp{d}.start()));
      case K::Splat:
      case K::Cast:
      case K::Hint: return of(d.operands[0]);
      case K::Broadcast: return broadcast(of(d.operands[0]), d);  // same rank: dimensions unchanged
      case K::ExpandDims: return expand(of(d.operands[0]), d);
      case K::Add:
      case K::Sub: {
        auto a = of(d.operands[0]), c = of(d.operands[1]);
        if (!a || !c) return std::nullopt;
        return add(*a, *c, d.kind == K::Sub ? -1 : 1);
      }
      case K::Mul: {
        auto a = of(d.operands[0]), c = of(d.operands[1]);
        if (!a || !c) return std::nullopt;
        return mul(*a, *c);
      }
      default:  // not affine: the load keeps cp.async, which the plan dump shows (never silently wrong)
        if (v->type.is_scalar()) return atom(v);  // an opaque scalar (program ids, divisions, ...)
        return std::nullopt;
    }
  }

  // A pointer tile as (pointer parameter, offset in elements).
  std::optional<std::pair<int, Poly>> pointer(const ir::Value* v) {
    if (v->is_block_arg()) {
      if (v->block != &f_.body || !v->type.dtype.ptr) return std::nullopt;
      return std::make_pair(v->index, Poly{});
    }
    const ir::Op& d = *v->def;
    using K = ir::OpKind;
    switch (d.kind) {
      case K::Splat:
      case K::Hint: return pointer(d.operands[0]);
      case K::Broadcast: {
        auto p = pointer(d.operands[0]);
        if (!p) return std::nullopt;
        return std::make_pair(p->first, *broadcast(p->second, d));
      }
      case K::ExpandDims: {
        auto p = pointer(d.operands[0]);
        if (!p) return std::nullopt;
        auto e = expand(p->second, d);
        if (!e) return std::nullopt;
        return std::make_pair(p->first, *e);
      }
      case K::AddPtr: {
        auto p = pointer(d.operands[0]);
        auto o = of(d.operands[1]);
        if (!p || !o) return std::nullopt;
        return std::make_pair(p->first, add(p->second, *o));
      }
      default: return std::nullopt;
    }
  }

  // A mask as bounds (dimension d, R) meaning iota_d + R < 0, appended to `out`.
  bool bounds(const ir::Value* m, std::vector<std::pair<int, Poly>>& out) {
    if (m->is_block_arg()) return false;
    const ir::Op& d = *m->def;
    using K = ir::OpKind;
    switch (d.kind) {
      case K::And: return bounds(d.operands[0], out) && bounds(d.operands[1], out);
      case K::Broadcast:
      case K::Hint: return bounds(d.operands[0], out);
      case K::ExpandDims: {
        std::vector<std::pair<int, Poly>> in;
        if (!bounds(d.operands[0], in)) return false;
        for (auto& [dim, r] : in) {
          const int axis = static_cast<int>(d.int_attr("axis"));
          out.emplace_back(dim >= axis ? dim + 1 : dim, r);
        }
        return true;
      }
      case K::CmpLt:
      case K::CmpGt:
      case K::CmpLe:
      case K::CmpGe: {
        auto a = of(d.operands[0]), c = of(d.operands[1]);
        if (!a || !c) return false;
        const bool less = d.kind == K::CmpLt || d.kind == K::CmpLe;
        Poly diff = less ? add(*a, *c, -1) : add(*c, *a, -1);  // diff < 0 (or <= 0)
        if (d.kind == K::CmpLe || d.kind == K::CmpGe) diff = add(diff, constant(-1));
        int dim = -1;
        for (const auto& [mono, coeff] : diff) {
          if (mono.iota < 0) continue;
          if (dim >= 0 || coeff != 1 || !mono.atoms.empty()) return false;
          dim = mono.iota;
        }
        if (dim < 0) return false;
        out.emplace_back(dim, part(diff, -1));
        return true;
      }
      default: return false;
    }
  }

 private:
  // A broadcast repeats a size-1 dimension: the index along it is 0 in the source, so its
  // iota terms (an arange(k, k + 1) there) drop out.
  static std::optional<Poly> broadcast(const std::optional<Poly>& p, const ir::Op& d) {
    if (!p) return std::nullopt;
    const ir::Shape& from = d.operands[0]->type.shape;
    const ir::Shape& to = d.results[0]->type.shape;
    Poly out;
    for (const auto& [m, c] : *p) {
      const auto dim = static_cast<size_t>(m.iota);
      if (m.iota >= 0 && dim < from.size() && dim < to.size() && from[dim] == 1 && to[dim] != 1) continue;
      out[m] = c;
    }
    return out;
  }
  std::optional<Poly> expand(const std::optional<Poly>& p, const ir::Op& d) {
    if (!p) return std::nullopt;
    const int axis = static_cast<int>(d.int_attr("axis"));
    return remap(*p, [&](int dim) { return dim >= axis ? dim + 1 : dim; });
  }

  const ir::Function& f_;
  const ir::ForOp& loop_;
};

}  // namespace tessel::lowering
