// IRPrinter.cpp - Deterministic text form of the Program IR (--emit=ir).
// SPDX-License-Identifier: Apache-2.0
//
// Format. Globals first, one per line, grouped by kind in this order and in
// source order within a kind:
//
//   program airfoil
//
//   const gam: f64 = 1.399999976158142
//   param niter: i32 = 1000
//   set nodes from meshfile              (or: set cells size nx * ny)
//   map pedge: edges -> nodes[2] from meshfile
//   map pfill: cells -> nodes[4] filled-by-program
//   block grid[2]
//   stencil cross[2] = [(0, 0), (1, 0), (-1, 0)]
//   dat x: nodes f64[2] from meshfile
//   dat q: cells f64[4] fill [1.0, 0.0, 0.0, 2.5]
//   dat u: grid f64 size [nx, ny] halo [1, 1] : [1, 1] base [0, 0] zero
//   dat dJ.x: nodes f64[2] zero derivative-of x
//
// then fns, kernels, procs and main, separated by blank lines:
//
//   kernel @res_calc(%x1: read f64[2], %u: read f64 @cross, %r: inc f64) {
//     let %dx: f64 = %x1[0] - %x2[0]        (var for mutable slots)
//     %r += %dx * 0.5
//     for %n: i32 in 0 .. 4 { ... }         (always half-open, step 1)
//   }
//   fn @sq(%x: f64) -> f64 { return %x * %x }
//   main {
//     loop @res_calc over edges
//       arg 0: x[pedge[0]]  indirect    read  f64[2] 16B
//       arg 1: pedge        map-direct  read  i32[2] 8B
//       arg 2: 0.5 * dt     global-read read  f64 8B
//       arg 3: %rms         reduction   sum   f64 8B
//     loop @jacobi over grid[1 .. nx - 1, 1 .. ny - 1]
//       arg 0: u@cross      stencil     read  f64 8B
//     loop @init over grid                  (whole block)
//     solve tridiagonal(a, b, c, d) along 0 over grid
//     swap(u, u2)
//     write q to "q.h5"                     (read q from ...)
//     print(%x, 1)                          (printf("%d\n", %i))
//     %J = adjoint @objective(%a) wrt (x -> dJ.x, @objective.%alpha ->
//          %dJ.alpha) checkpoints 10        (one line)
//     %d = tangent @objective(%a) along (x: dx, @objective.%alpha: 1.0)
//   }
//
// Names: `@` for functions, `%` for local slots and kernel parameters (a
// repeated name gets `.1`, `.2`, ... in slot order), globals bare. Loop
// arguments print as written (x[pedge[0]], u@cross, pedge, %rms or the
// global expression), then kind, mode, element type and bytes per element.
//
// Expressions are typed by construction; the printer shows each constant's
// type in its spelling (`1` i32, `1i64`, `1.0` f64, `1.0f` f32, `true`),
// every conversion as a cast `f64(%i)`, declarations with their type, and
// parenthesises by precedence. Floats use the shortest digits that read back
// exactly (in their own precision), in fixed notation for exponents -4..15
// and scientific notation otherwise (`1e-05`, `1e+30`). With a SourceManager, kernel headers and loop lines end with
// `; file:line:col` (basename only), aligned to column 48 when shorter;
// nothing else prints a location, so golden tests stay stable.#include "ir/IRPrinter.h"

#include "ir/IRPrinterImpl.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

namespace opdc {

using namespace ir;
using namespace ir::printer;

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

namespace {

/// Shortest decimal that reads back as the same value: the fewest
/// significant digits (up to \p maxDigits) that round-trip through
/// \p roundTrips, shown in fixed notation for exponents -4..15 and in
/// scientific notation otherwise (as Python's repr does).
template <typename RoundTrips>
std::string shortestDecimal(double d, int maxDigits, RoundTrips roundTrips) {
  if (std::isnan(d))
    return "nan";
  if (std::isinf(d))
    return d < 0 ? "-inf" : "inf";
  char buf[64];
  int digits = maxDigits;
  for (int p = 1; p <= maxDigits; ++p) {
    std::snprintf(buf, sizeof buf, "%.*e", p - 1, d);
    if (roundTrips(buf)) {
      digits = p;
      break;
    }
  }
  std::snprintf(buf, sizeof buf, "%.*e", digits - 1, d);
  int exponent = std::atoi(std::strchr(buf, 'e') + 1);
  std::string s;
  if (exponent >= -4 && exponent < 16) {
    int decimals = std::max(digits - 1 - exponent, 0);
    std::snprintf(buf, sizeof buf, "%.*f", decimals, d);
    s = buf;
    if (s.find('.') == std::string::npos)
      s += ".0";
  } else {
    // d.ddde+XX: keep the mantissa as printed, drop a redundant ".0".
    s = buf;
  }
  return s;
}

std::string shortestDouble(double d) {
  return shortestDecimal(
      d, 17, [d](const char *text) { return std::strtod(text, nullptr) == d; });
}

std::string shortestFloat(float f) {
  return shortestDecimal(double(f), 9, [f](const char *text) {
    return std::strtof(text, nullptr) == f;
  });
}

} // namespace

std::string ir::printer::componentToString(const ConstValue &v, unsigned i) {
  switch (v.type.scalar) {
  case ScalarKind::Bool:
    return v.asInt(i) ? "true" : "false";
  case ScalarKind::I32:
    return std::to_string(v.asInt(i));
  case ScalarKind::I64:
    return std::to_string(v.asInt(i)) + "i64";
  case ScalarKind::F32:
    return shortestFloat(float(v.asDouble(i))) + "f";
  case ScalarKind::F64:
    return shortestDouble(v.asDouble(i));
  }
  return "?";
}

std::string constToString(const ConstValue &v) {
  switch (v.type.kind) {
  case Type::Kind::String:
    return quoteString(v.text);
  case Type::Kind::Scalar:
    return componentToString(v, 0);
  case Type::Kind::Array: {
    std::string out = "[";
    for (unsigned i = 0; i < v.type.length; ++i) {
      if (i)
        out += ", ";
      out += componentToString(v, i);
    }
    return out + "]";
  }
  case Type::Kind::Void:
    return "void";
  case Type::Kind::Error:
    break;
  }
  return "<invalid>";
}

//===----------------------------------------------------------------------===//
// Printer
//===----------------------------------------------------------------------===//

namespace ir::printer {

void Printer::function(const Function &f) {
  NameTable names(&f);
  std::string head;
  switch (f.kind) {
  case FunctionKind::Kernel: {
    head = "kernel @" + f.name + "(";
    for (size_t i = 0; i < f.kernelParams.size(); ++i) {
      const KernelParam &p = f.kernelParams[i];
      if (i)
        head += ", ";
      head += names.param(unsigned(i)) + ": " + accessModeName(p.mode) + " " +
              typeToString(p.type);
      if (p.stencil)
        head += " @" + p.stencil->name;
    }
    head += ") {";
    lineWithLoc(head, f.range);
    break;
  }
  case FunctionKind::Fn:
  case FunctionKind::Proc: {
    head = std::string(functionKindName(f.kind)) + " @" + f.name + "(";
    for (size_t i = 0; i < f.params.size(); ++i) {
      unsigned slot = f.params[i];
      if (i)
        head += ", ";
      Type t = slot < f.vars.size() ? f.vars[slot].type : Type::error();
      head += names.var(int(slot)) + ": " + typeToString(t);
    }
    head += ")";
    if (!f.returnType.isVoid())
      head += " -> " + typeToString(f.returnType);
    os << head << " {\n";
    break;
  }
  case FunctionKind::Main:
    os << "main {\n";
    break;
  }
  body(f.body, f, names, 1);
  os << "}\n";
}

bool Printer::globals(const Program &p) {
  NameTable none(nullptr);
  auto e = [&](const ExprPtr &x) { return exprOrNull(x, none); };
  bool any = false;
  for (const auto &c : p.consts) {
    os << "const " << c->name << ": " << typeToString(c->value.type) << " = "
       << constToString(c->value) << "\n";
    any = true;
  }
  for (const auto &x : p.params) {
    os << "param " << x->name << ": " << typeToString(x->type) << " = "
       << constToString(x->defaultValue) << "\n";
    any = true;
  }
  for (const auto &s : p.sets) {
    os << "set " << s->name;
    if (s->fromFile)
      os << " from " << e(s->fromFile);
    if (s->size)
      os << " size " << e(s->size);
    os << "\n";
    any = true;
  }
  for (const auto &m : p.maps) {
    os << "map " << m->name << ": " << (m->from ? m->from->name : "<null>")
       << " -> " << (m->to ? m->to->name : "<null>") << "[" << m->arity << "]";
    if (m->fromFile)
      os << " from " << e(m->fromFile);
    else
      os << " filled-by-program";
    os << "\n";
    any = true;
  }
  for (const auto &b : p.blocks) {
    os << "block " << b->name << "[" << b->dims << "]\n";
    any = true;
  }
  for (const auto &s : p.stencils) {
    os << "stencil " << s->name << "[" << s->dims << "] = [";
    for (size_t i = 0; i < s->points.size(); ++i) {
      if (i)
        os << ", ";
      os << "(";
      for (size_t j = 0; j < s->points[i].size(); ++j) {
        if (j)
          os << ", ";
        os << s->points[i][j];
      }
      os << ")";
    }
    os << "]\n";
    any = true;
  }
  auto ints = [](const std::vector<int64_t> &v) {
    std::string out = "[";
    for (size_t i = 0; i < v.size(); ++i) {
      if (i)
        out += ", ";
      out += std::to_string(v[i]);
    }
    return out + "]";
  };
  for (const auto &d : p.dats) {
    os << "dat " << d->name << ": ";
    if (d->set)
      os << d->set->name;
    else if (d->block)
      os << d->block->name;
    else
      os << "<null>";
    os << " " << typeToString(d->elemType);
    if (d->block) {
      os << " size [";
      for (size_t i = 0; i < d->size.size(); ++i) {
        if (i)
          os << ", ";
        os << e(d->size[i]);
      }
      os << "] halo " << ints(d->haloMinus) << " : " << ints(d->haloPlus)
         << " base " << ints(d->base);
    }
    switch (d->init) {
    case DatInit::Zero:
      os << " zero";
      break;
    case DatInit::Fill:
      os << " fill " << e(d->initValue);
      break;
    case DatInit::File:
      os << " from " << e(d->initFile);
      break;
    }
    if (d->isDerivative)
      os << " derivative-of " << (d->primal ? d->primal->name : "<null>");
    os << "\n";
    any = true;
  }
  return any;
}

void Printer::program(const Program &p) {
  if (!p.name.empty())
    os << "program " << p.name << "\n\n";
  if (p.haloLayers != 1 || p.blockHaloDepth != 2)
    os << "halo layers " << p.haloLayers << " block-depth "
       << p.blockHaloDepth << "\n\n";
  bool first = !globals(p);
  for (const Function *f : p.functions()) {
    if (!first)
      os << "\n";
    first = false;
    function(*f);
  }
}

} // namespace ir::printer

void printIR(const Program &p, llvm::raw_ostream &os, const SourceManager *sm) {
  Printer(os, sm).program(p);
}

void printFunction(const Function &f, llvm::raw_ostream &os,
                   const SourceManager *sm) {
  Printer(os, sm).function(f);
}

std::string exprToString(const Expr &e, const Function *context) {
  NameTable names(context);
  return Printer(llvm::nulls(), nullptr).expr(e, names);
}

} // namespace opdc
