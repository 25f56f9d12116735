// SemaImpl.h - State and helpers shared by the semantic analysis files.
// SPDX-License-Identifier: Apache-2.0
//
// Internal to compiler/sema: one Sema object checks one Program. Its member
// functions are defined across one file per family of checks
// (NameResolution.cpp, ConstFolding.cpp, Declarations.cpp, TypeCheck.cpp,
// TypeCheckLiterals.cpp, TypeCheckCalls.cpp, Statements.cpp, Loops.cpp,
// Solvers.cpp, Derivatives.cpp, Printf.cpp).
#ifndef OPDC_SEMA_SEMAIMPL_H
#define OPDC_SEMA_SEMAIMPL_H

#include "ast/AST.h"
#include "support/Diagnostics.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Casting.h"

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace opdc::sema {

using llvm::cast;
using llvm::dyn_cast;
using llvm::dyn_cast_or_null;
using llvm::isa;
using llvm::isa_and_nonnull;

/// Which language the code being checked is written in.
enum class CodeKind : uint8_t {
  Global, ///< initialisers of global declarations (consts, sizes, fills)
  Kernel, ///< a kernel body
  Fn,     ///< a fn body (kernel language)
  Host,   ///< main or a proc
};

/// What a name is expected to denote where it is written; drives the
/// "unknown dat 'x'" / "'x' is a set, expected a dat" messages and which
/// declarations did-you-mean may suggest.
enum class Want : uint8_t {
  Value, ///< const, param, variable, kernel parameter
  Dat,
  Set,
  Block,
  SetOrBlock,
  Map,
  Stencil,
  Kernel,
  Proc,
  Callable,   ///< fn, proc or intrinsic
  DatOrParam, ///< a `wrt`/`along` target
  Arg,        ///< a loop argument: dat, map or value
};

/// How a VarDecl came to be: decides the wording of "cannot assign" errors.
enum class VarOrigin : uint8_t {
  Let,
  Var,
  Induction,
  Parameter,
  Derived,
  SolveResult
};

/// A use of idx(d) in a kernel, checked against every loop running it.
struct IdxUse {
  int64_t dim;
  SourceRange range;
};

/// Result of checking an assignment target.
struct LValue {
  ast::Decl *root = nullptr;    ///< the variable or parameter written
  Type type = Type::error();    ///< type of the written location
  bool isStencilAccess = false; ///< u(0, 0) or u(0, 0)[k]
  bool ok = false;              ///< false: already reported
};

/// Collects sema's diagnostics and hands them to the DiagnosticEngine in
/// source order (modules in load order, then position) when flushed: checks
/// run kind by kind, but a reader expects line order. An error identical
/// (same place, same text) to one already collected is dropped with its
/// notes: the parser gives each name of `dat a, b: ...` its own copy of the
/// shared clauses, which would otherwise report every problem once per name.
class SemaDiags {
public:
  explicit SemaDiags(DiagnosticEngine &engine) : engine(engine) {}
  void error(SourceRange at, const llvm::Twine &message);
  void note(SourceRange at, const llvm::Twine &message);
  /// Errors reported so far, collected ones included.
  unsigned errorCount() const {
    return engine.errorCount() + unsigned(pending.size());
  }
  /// Prints everything collected, sorted; \p rank orders buffers.
  void flush(const std::function<unsigned(SourceRange)> &rank);

  DiagnosticEngine &engine;

private:
  struct Pending {
    SourceRange at;
    std::string message;
    std::vector<std::pair<SourceRange, std::string>> notes;
  };
  std::vector<Pending> pending;
  std::set<std::pair<const char *, std::string>> seen;
  bool dropping = false;
};

class Sema {
public:
  Sema(ast::Program &program, DiagnosticEngine &diags);
  /// Runs every check; true if no error was reported.
  bool run();

  ast::Program &prog;
  SemaDiags diags;

  //===--------------------------------------------------------------------===//
  // Where we are.
  //===--------------------------------------------------------------------===//
  struct Context {
    CodeKind code = CodeKind::Global;
    ast::Decl *owner = nullptr;        ///< kernel, fn, proc or main
    /// Whose names global code sees (a declaration's module); null in
    /// bodies, where the owner's module is used.
    ast::Module *module = nullptr;
    ast::KernelDecl *kernel = nullptr; ///< set in kernel bodies
    Type returnType = Type::voidType();
    unsigned loopDepth = 0;
    bool constInit = false; ///< a const or param default: folding is strict
  } ctx;

  /// Saves the context (and, with \p clearScopes, sets the local scopes
  /// aside), restoring both on destruction: a const folded on demand from
  /// inside a kernel sees only globals.
  struct ContextGuard {
    Sema &s;
    Context saved;
    bool clearedScopes;
    std::vector<std::map<std::string, ast::Decl *>> savedScopes;
    explicit ContextGuard(Sema &s, bool clearScopes = false);
    ~ContextGuard();
  };

  bool inKernelCode() const {
    return ctx.code == CodeKind::Kernel || ctx.code == CodeKind::Fn;
  }
  /// "a kernel", "a fn", "host code", "a declaration".
  const char *codeDescription() const;

  //===--------------------------------------------------------------------===//
  // NameResolution.cpp
  //===--------------------------------------------------------------------===//
  std::vector<std::map<std::string, ast::Decl *>> scopes;
  std::unordered_map<const ast::VarDecl *, VarOrigin> varOrigins;
  /// Global declarations that clashed with an earlier one of the same name
  /// (already reported): a use of the name that fits one of them is not an
  /// error, one that fits none is not reported twice.
  std::multimap<std::string, ast::Decl *> duplicates;

  void collectGlobals();

  //===--------------------------------------------------------------------===//
  // ModuleScopes.cpp
  //===--------------------------------------------------------------------===//
  /// The global names one module sees.
  struct ModuleScope {
    std::map<std::string, ast::Decl *> own; ///< its own declarations
    /// Brought in by plain and selective imports; several declarations
    /// under one name make it ambiguous (an error only when used).
    std::map<std::string, std::vector<ast::Decl *>> imported;
    std::map<std::string, const ast::ImportDecl *> aliases; ///< `as m`
    std::map<std::string, const ast::NameRef *> selected;   ///< `(a, b)`
  };
  std::map<const ast::Module *, ModuleScope> moduleScopes;
  /// What `import M` brings in and `m.x` reaches: M's own declarations and,
  /// unless M declares the name itself, what M's plain imports export.
  std::map<const ast::Module *, std::map<std::string, std::vector<ast::Decl *>>>
      exports;

  /// Fills moduleScopes and exports (modules in load order) and reports
  /// bad selective imports and clashing aliases.
  void buildModuleScopes();
  /// The module whose names the code being checked sees.
  ast::Module *currentModule() const;
  /// Every global declaration \p name ("x" or "m.x") may denote, as seen
  /// from the current module: none (unknown), one, or several (ambiguous).
  std::vector<ast::Decl *> lookupGlobalAll(const std::string &name) const;
  /// The one global declaration \p name denotes; null if unknown or
  /// ambiguous.
  ast::Decl *lookupGlobal(const std::string &name) const;
  /// Reports a qualified name ("m.x") that does not resolve, or an
  /// ambiguous plain one; false if \p name is neither.
  bool reportUnresolvedGlobal(const std::string &name, SourceRange range,
                              Want want);
  /// The import that declares \p alias in the current module, if any.
  const ast::ImportDecl *aliasImport(const std::string &alias) const;
  /// Gives every global a name unique across modules (for the IR): a
  /// declaration whose name an earlier one (root module first) took is
  /// renamed "<module>_<name>".
  void uniquifyGlobalNames();
  void pushScope();
  void popScope();
  /// Declares a local in the innermost scope; a clash in the same scope is
  /// a redefinition error.
  void declareLocal(ast::Decl *d, VarOrigin origin = VarOrigin::Let);
  /// Innermost local, then global; null if unknown.
  ast::Decl *lookup(const std::string &name) const;
  static bool isKind(const ast::Decl *d, Want want);
  /// Looks \p name up and reports unknown names (with did-you-mean) and
  /// names of the wrong kind. Returns the declaration only if it is of the
  /// wanted kind.
  ast::Decl *resolve(const std::string &name, SourceRange range, Want want);
  void resolveRef(ast::NameRef &ref, Want want);
  void reportUnknown(const std::string &name, SourceRange range, Want want);
  void reportWrongKind(const ast::Decl *d, SourceRange range, Want want);
  /// The visible name closest to \p name by edit distance, among those of
  /// the wanted kind (and intrinsics when \p withIntrinsics).
  std::string suggest(const std::string &name, Want want,
                      bool withIntrinsics = false) const;
  void noteDeclared(const ast::Decl *d);
  static const char *wantName(Want want);

  //===--------------------------------------------------------------------===//
  // ConstFolding.cpp
  //===--------------------------------------------------------------------===//
  enum class FoldState : uint8_t { InProgress, Done };
  std::unordered_map<const ast::Decl *, FoldState> foldStates;

  /// Folds a const's initialiser on first use (cycles are errors).
  void foldConst(ast::ConstDecl *c, SourceRange use);
  /// Resolves a param's type and default on first use.
  void ensureParam(ast::ParamDecl *p);
  /// Resolves a written type; array lengths must fold to an integer >= 1.
  Type resolveType(ast::TypeRef &t, bool allowString);
  /// Checks \p e as a global-context integer that must fold; reports with
  /// \p what ("array length", "map arity") and returns nullopt on failure.
  std::optional<int64_t> foldInteger(ast::ExprPtr &e, const llvm::Twine &what);
  /// Points at the first name that keeps \p e from folding.
  void explainNotConstant(const ast::Expr &e);

  std::optional<ConstValue> foldUnary(ast::UnaryOp op, const ConstValue &v,
                                      Type type, SourceRange at);
  std::optional<ConstValue> foldBinary(ast::BinaryOp op, const ConstValue &a,
                                       const ConstValue &b, Type operandType,
                                       SourceRange at);
  /// False (after an error at \p at) when a constant shift count is
  /// negative or not below the bit width of \p k.
  bool checkShiftCount(const ConstValue &count, ScalarKind k, SourceRange at);
  /// &, |, ^, <<, >> on integers of kind \p k.
  std::optional<ConstValue> foldBitwise(ast::BinaryOp op, int64_t a, int64_t b,
                                        ScalarKind k, SourceRange at);
  /// Folds arithmetic on untyped constants (integers as i64, floats as f64).
  std::optional<ConstValue> foldUntyped(ast::BinaryOp op, const ConstValue &a,
                                        const ConstValue &b, SourceRange at);
  std::optional<ConstValue> foldCast(ScalarKind to, const ConstValue &v,
                                     SourceRange at);
  std::optional<ConstValue> foldIntrinsic(ast::Intrinsic i,
                                          const std::vector<ConstValue> &args,
                                          Type type, SourceRange at);
  /// Converts an untyped constant to \p k if the value is exactly
  /// representable (integers) or in range (floats to f32).
  std::optional<ConstValue> representAs(const ConstValue &v, ScalarKind k);

  //===--------------------------------------------------------------------===//
  // Declarations.cpp
  //===--------------------------------------------------------------------===//
  std::unordered_set<const ast::KernelParamDecl *> badParams;
  void checkDeclarations();
  void checkSetDecl(ast::SetDecl &d);
  void checkMapDecl(ast::MapDecl &d);
  void checkDatDecl(ast::DatDecl &d);
  void checkBlockDecl(ast::BlockDecl &d);
  void checkStencilDecl(ast::StencilDecl &d);
  void checkKernelSignature(ast::KernelDecl &k);
  void checkFnSignature(std::vector<std::unique_ptr<ast::VarDecl>> &params,
                        std::optional<ast::TypeRef> &ret, bool host,
                        ast::Decl &owner);
  /// A host expression of params/consts giving a str (a file name).
  void checkFileName(ast::ExprPtr &e, const llvm::Twine &what);
  /// Halo depth \p e folded per dimension.
  std::optional<std::vector<int64_t>> foldPerDim(ast::ExprPtr &e, int64_t dims,
                                                 const llvm::Twine &what,
                                                 bool allowNegative);
  static bool isCentreOnly(const ast::StencilDecl &s);

  //===--------------------------------------------------------------------===//
  // TypeCheck.cpp (expressions), TypeCheckLiterals.cpp (untyped literals),
  // TypeCheckCalls.cpp (calls, intrinsics, stencil reads)
  //===--------------------------------------------------------------------===//
  /// Expressions made only of untyped literals (`2`, `-1.5`, `2 * 3`): they
  /// take the type their context asks for. The untyped value is kept in
  /// constValue (i64 or f64), the type holds the default (i32/i64/f64).
  std::unordered_set<const ast::Expr *> untyped;
  /// Nodes replaced by folded literals; kept alive until sema ends so that
  /// no pointer in `untyped` is reused.
  std::vector<ast::ExprPtr> graveyard;
  /// Set while checking the `x` of `x = min(x, e)` on a min/max parameter.
  const ast::Expr *allowedReductionRead = nullptr;
  bool insideAllowedRead = false;
  /// idx(d) uses per kernel, checked against each loop's dimensions.
  std::unordered_map<const ast::KernelDecl *, std::vector<IdxUse>> idxUses;
  /// Calls between fns/procs, for the recursion check.
  std::map<const ast::Decl *, std::vector<std::pair<ast::Decl *, SourceRange>>>
      callGraph;

  /// Checks \p e; an untyped result stays untyped (see `untyped`).
  Type check(ast::ExprPtr &e);
  /// Checks \p e and gives an untyped result its default type. Void results
  /// (a call of a proc without result) are errors.
  Type checkValue(ast::ExprPtr &e);
  bool isUntyped(const ast::Expr &e) const { return untyped.count(&e) != 0; }
  /// Default type of an untyped expression; replaces compound ones by a
  /// literal.
  void finalize(ast::ExprPtr &e);
  enum class Adapt { Ok, Mismatch, Reported };
  /// Gives untyped \p e the type \p target.
  Adapt adapt(ast::ExprPtr &e, Type target);
  /// Checks \p e and makes it of type \p target (adapting untyped literals);
  /// on mismatch reports "<what> has type 'A', expected 'B'". Returns false
  /// if an error was reported (or \p e was already erroneous).
  bool convert(ast::ExprPtr &e, Type target, const llvm::Twine &what);
  /// As convert, for an already checked expression.
  bool convertChecked(ast::ExprPtr &e, Type target, const llvm::Twine &what);
  /// Unifies already-checked operands to one scalar type (binary operators,
  /// min/max, ...). Returns the common type or error (reported).
  Type unify(std::vector<ast::ExprPtr *> operands, SourceRange at,
             const llvm::Twine &what, bool preferFloat);
  void reportMismatch(SourceRange at, const llvm::Twine &what, Type found,
                      Type expected);
  void replaceWithLiteral(ast::ExprPtr &e, const ConstValue &v);

  Type checkName(ast::NameExpr &e);
  Type checkUnary(ast::ExprPtr &e);
  Type checkBinary(ast::ExprPtr &e);
  Type checkLogical(ast::BinaryExpr &b, const char *op);
  Type checkCall(ast::CallExpr &e);
  Type checkIntrinsic(ast::CallExpr &e, ast::Intrinsic i);
  Type checkSize(ast::CallExpr &e, size_t n);
  /// rng_uniform / rng_normal: kernels only, two integer arguments.
  Type checkRandom(ast::CallExpr &e);
  Type checkUserCall(ast::CallExpr &e, ast::Decl *callee);
  Type checkStencilRead(ast::CallExpr &e, ast::KernelParamDecl *p,
                        bool asTarget);
  Type checkCast(ast::CastExpr &e);
  Type checkIndex(ast::IndexExpr &e);
  Type checkMember(ast::MemberExpr &e, bool wantDat);
  Type checkArrayLit(ast::ExprPtr &e);
  /// A kernel parameter read in an expression: mode rules.
  void checkParamRead(ast::KernelParamDecl *p, const ast::Expr &e);
  /// Resolves a dat written by name or as a derivative field (`dJ.x`).
  ast::DatDecl *resolveDatExpr(ast::ExprPtr &e);

  //===--------------------------------------------------------------------===//
  // Statements.cpp
  //===--------------------------------------------------------------------===//
  void checkBodies();
  void checkKernelBody(ast::KernelDecl &k);
  void checkFnBody(ast::FnDecl &f);
  void checkProcBody(ast::ProcDecl &p);
  void checkMainBody(ast::MainDecl &m);
  void checkBlock(ast::Block &b, bool newScope = true);
  void checkStmt(ast::Stmt &s);
  void checkVarDecl(ast::VarDecl &v, VarOrigin origin);
  void checkAssign(ast::AssignStmt &s);
  LValue checkTarget(ast::ExprPtr &target);
  void checkReturn(ast::ReturnStmt &s);
  bool alwaysReturns(const ast::Stmt &s) const;
  void checkRecursion();
  /// Host-only statement in kernel code: reported, true.
  bool rejectInKernel(const ast::Stmt &s, const char *what);

  //===--------------------------------------------------------------------===//
  // Loops.cpp, Solvers.cpp, Derivatives.cpp, Printf.cpp
  //===--------------------------------------------------------------------===//
  void checkLoop(ast::LoopStmt &s);
  void checkIndirectWrites(ast::LoopStmt &s);
  void checkLoopArg(ast::LoopStmt &s, ast::LoopArg &a, ast::KernelParamDecl &p,
                    ast::SetDecl *set, ast::BlockDecl *block);
  void checkRanges(std::vector<ast::RangeExpr> &ranges, bool hasRanges,
                   const ast::NameRef &space, ast::BlockDecl *block,
                   SourceRange at);
  void checkHalo(ast::LoopStmt &s, ast::LoopArg &a, ast::BlockDecl &block);
  /// One loop argument being bound, with what its errors name; the
  /// helpers below check one shape of argument each.
  struct LoopArgSite {
    ast::LoopStmt &s;
    ast::LoopArg &a;
    ast::KernelParamDecl &p;
    ast::SetDecl *set;
    ast::BlockDecl *block;
    Type pt;
    bool badParam;
    std::string paramDesc;
    const char *mode;
  };
  bool checkArgElemType(const LoopArgSite &at, Type elem,
                        const std::string &what);
  void checkReductionArg(const LoopArgSite &at);
  bool checkIndirectArg(const LoopArgSite &at, ast::IndexExpr &ie);
  void checkDatArg(const LoopArgSite &at, ast::DatDecl *dat);
  void checkMapArg(const LoopArgSite &at, ast::MapDecl *map);
  void checkGlobalArg(const LoopArgSite &at);
  void checkSolve(ast::SolveStmt &s);
  void checkSolveCG(ast::SolveStmt &s);
  void checkAdjoint(ast::AdjointStmt &s);
  void checkTangent(ast::TangentStmt &s);
  /// A `wrt`/`along` target: a dat or a float parameter of \p proc.
  ast::Decl *resolveDerivTarget(ast::NameRef &ref, ast::ProcDecl *proc);
  /// Checks the arguments of a proc call (adjoint/tangent/plain calls).
  void checkCallArgs(std::vector<ast::ExprPtr> &args,
                     std::vector<std::unique_ptr<ast::VarDecl>> &params,
                     const ast::Decl &callee, SourceRange at);
  void checkPrint(ast::PrintStmt &s);
  void checkFormat(ast::StringLitExpr &fmt, std::vector<ast::ExprPtr> &args);
  void checkSwap(ast::SwapStmt &s);
  void checkWriteRange(ast::WriteStmt &w);
  void checkWriteRead(std::vector<ast::ExprPtr> &dats, ast::ExprPtr &file,
                      const char *what);
};

/// Source text of \p r (empty for an invalid range).
llvm::StringRef textOf(SourceRange r);
/// "(1, 0)".
std::string offsetString(const std::vector<int64_t> &o);
/// \p v is in the range of i32 (defined in TypeCheckLiterals.cpp).
bool fitsI32(int64_t v);
/// \p e has a float constant value (for an untyped \p e: a float literal).
bool isUntypedFloat(const ast::Expr &e);

} // namespace opdc::sema
#endif
