// IRBuilder.h - Convenience construction of Program IR (tests and passes).
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_IR_IRBUILDER_H
#define OPDC_IR_IRBUILDER_H

#include "ir/IR.h"

#include <initializer_list>

namespace opdc::ir {

/// Adds globals and functions to a Program and builds typed nodes. Node
/// helpers are static: they compute each node's type from its operands (the
/// same rules the verifier checks) and take an optional source range.
/// Nothing here checks consistency; run verifyIR on the result.
class IRBuilder {
public:
  explicit IRBuilder(Program &p) : program(p) {}

  //===--- Globals -------------------------------------------------------===//
  Const *addConst(std::string name, ConstValue value, SourceRange r = {});
  Param *addParam(std::string name, Type type, ConstValue defaultValue,
                  SourceRange r = {});
  /// A set sized by \p size (an integer host expression).
  Set *addSet(std::string name, ExprPtr size, SourceRange r = {});
  /// A set whose size is read from the file named by \p file.
  Set *addSetFromFile(std::string name, ExprPtr file, SourceRange r = {});
  /// \p file null: the program fills the map.
  Map *addMap(std::string name, Set *from, Set *to, unsigned arity,
              ExprPtr file = nullptr, SourceRange r = {});
  Block *addBlock(std::string name, unsigned dims, SourceRange r = {});
  Stencil *addStencil(std::string name, unsigned dims,
                      std::vector<std::vector<int64_t>> points,
                      SourceRange r = {});
  /// A zero-initialised dat on a set.
  Dat *addDat(std::string name, Set *set, Type elem, SourceRange r = {});
  /// A zero-initialised dat on a block with the given extents and halos
  /// (\p haloMinus / \p haloPlus / base default to zeros when empty).
  Dat *addBlockDat(std::string name, Block *block, Type elem,
                   std::vector<ExprPtr> size,
                   std::vector<int64_t> haloMinus = {},
                   std::vector<int64_t> haloPlus = {}, SourceRange r = {});

  //===--- Functions -----------------------------------------------------===//
  Function *addKernel(std::string name, SourceRange r = {});
  /// A kernel named \p name, or name_2, name_3, ... when that is taken (the
  /// kernels passes make).
  Function *addUniqueKernel(const std::string &name, SourceRange r = {});
  Function *addFn(std::string name, Type returnType, SourceRange r = {});
  Function *addProc(std::string name, Type returnType, SourceRange r = {});
  /// Creates (or replaces) main.
  Function *setMain(SourceRange r = {});
  /// Appends a kernel parameter; returns its index.
  static unsigned addKernelParam(Function &kernel, std::string name,
                                 AccessMode mode, Type type,
                                 Stencil *stencil = nullptr,
                                 SourceRange r = {});
  /// Appends an immutable parameter slot to a fn or proc; returns the slot.
  static unsigned addParamVar(Function &f, std::string name, Type type,
                              SourceRange r = {});

  //===--- Expressions ---------------------------------------------------===//
  static ExprPtr constant(ConstValue v, SourceRange r = {});
  static ExprPtr f64(double v) {
    return constant(ConstValue::ofFloat(ScalarKind::F64, v));
  }
  static ExprPtr f32(double v) {
    return constant(ConstValue::ofFloat(ScalarKind::F32, v));
  }
  static ExprPtr i32(int64_t v) {
    return constant(ConstValue::ofInt(ScalarKind::I32, v));
  }
  static ExprPtr i64(int64_t v) {
    return constant(ConstValue::ofInt(ScalarKind::I64, v));
  }
  static ExprPtr boolean(bool v) { return constant(ConstValue::ofBool(v)); }
  static ExprPtr str(std::string v) {
    return constant(ConstValue::ofString(std::move(v)));
  }
  static ExprPtr var(const Function &f, unsigned slot, SourceRange r = {});
  static ExprPtr param(Param *p, SourceRange r = {});
  /// Kernel parameter \p index of \p kernel; \p offset for stencil reads.
  static ExprPtr arg(const Function &kernel, unsigned index,
                     std::vector<int64_t> offset = {}, SourceRange r = {});
  static ExprPtr unary(UnaryOp op, ExprPtr e, SourceRange r = {});
  static ExprPtr binary(BinaryOp op, ExprPtr l, ExprPtr rhs,
                        SourceRange r = {});
  /// A Cast, or \p e itself when it already has type \p to; a Constant is
  /// converted in place (folded).
  static ExprPtr cast(ScalarKind to, ExprPtr e, SourceRange r = {});
  static ExprPtr index(ExprPtr base, ExprPtr i, SourceRange r = {});
  static ExprPtr index(ExprPtr base, int64_t i) {
    return index(std::move(base), i32(i));
  }
  static ExprPtr intrinsic(Intrinsic id, std::vector<ExprPtr> args,
                           SourceRange r = {});
  static ExprPtr call(Function *callee, std::vector<ExprPtr> args,
                      SourceRange r = {});
  static ExprPtr arrayLit(std::vector<ExprPtr> elements, SourceRange r = {});
  static ExprPtr sizeOf(Set *s, SourceRange r = {});
  static ExprPtr sizeOf(Dat *d, unsigned dim, SourceRange r = {});

  //===--- Statements ----------------------------------------------------===//
  static StmtPtr decl(unsigned slot, ExprPtr init, SourceRange r = {});
  static StmtPtr assign(ExprPtr target, ExprPtr value,
                        AssignOp op = AssignOp::Set, SourceRange r = {});
  static StmtPtr eval(ExprPtr call, SourceRange r = {});
  static StmtPtr ifThen(ExprPtr cond, Body thenBody, Body elseBody = {},
                        SourceRange r = {});
  static StmtPtr forRange(unsigned slot, ExprPtr lo, ExprPtr hi, Body body,
                          SourceRange r = {});
  static StmtPtr whileLoop(ExprPtr cond, Body body, SourceRange r = {});
  static StmtPtr ret(ExprPtr value = nullptr, SourceRange r = {});
  static StmtPtr print(std::vector<ExprPtr> args, SourceRange r = {});
  static StmtPtr printFormatted(std::string format, std::vector<ExprPtr> args,
                                SourceRange r = {});
  static StmtPtr swap(Dat *a, Dat *b, SourceRange r = {});
  static StmtPtr write(std::vector<Dat *> dats, ExprPtr file,
                       SourceRange r = {});
  static StmtPtr read(std::vector<Dat *> dats, ExprPtr file,
                      SourceRange r = {});
  /// A ParLoop over a set; add arguments with the descriptor helpers.
  static std::unique_ptr<ParLoopStmt> loopOverSet(Function *kernel, Set *set,
                                                  SourceRange r = {});
  /// A ParLoop over a block; \p ranges empty for the whole block.
  static std::unique_ptr<ParLoopStmt>
  loopOverBlock(Function *kernel, Block *block,
                std::vector<LoopRange> ranges = {}, SourceRange r = {});

  //===--- Access descriptors --------------------------------------------===//
  // Scalar type, dim and bytes come from the dat, map or expression.
  static AccessDescriptor direct(Dat *d, AccessMode mode);
  static AccessDescriptor indirect(Dat *d, Map *m, int index, AccessMode mode);
  static AccessDescriptor stencil(Dat *d, Stencil *s, AccessMode mode);
  static AccessDescriptor mapDirect(Map *m, AccessMode mode);
  static AccessDescriptor globalRead(ExprPtr value);
  /// \p type is the variable's type.
  static AccessDescriptor reduction(int slot, Type type, AccessMode mode);

  /// Appends \p s to \p b and returns a pointer to it.
  template <typename T> static T *append(Body &b, std::unique_ptr<T> s) {
    T *raw = s.get();
    b.stmts.push_back(std::move(s));
    return raw;
  }

private:
  Program &program;
};

/// A Body made of the given statements.
Body makeBody(std::vector<StmtPtr> stmts);

/// A vector of expressions (initializer lists cannot hold unique_ptrs):
/// `B::print(exprs(B::var(f, x), B::f64(1)))`.
template <typename... Ts> std::vector<ExprPtr> exprs(Ts &&...xs) {
  std::vector<ExprPtr> v;
  v.reserve(sizeof...(xs));
  (v.push_back(std::forward<Ts>(xs)), ...);
  return v;
}

} // namespace opdc::ir
#endif
