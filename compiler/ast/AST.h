// AST.h - The typed abstract syntax tree of .opd programs.
// SPDX-License-Identifier: Apache-2.0
//
// The parser builds the tree (syntax only); sema fills the fields marked
// "sema:" (types, resolved declarations, folded constants, loop-argument
// access descriptors). Lowering reads only annotated trees from which sema
// reported no error. Children are owned through unique_ptr; cross references
// (a name to its declaration) are plain pointers into the same Program.
//
// Node classes carry a kind tag and `classof`, so llvm::isa / dyn_cast / cast
// work on them.
#ifndef OPDC_AST_AST_H
#define OPDC_AST_AST_H

#include "ast/Operators.h"
#include "ast/Type.h"
#include "support/SourceRange.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace opdc::ast {

// The enumerations shared with the IR (ast/Operators.h).
using opdc::AccessMode;
using opdc::ArgKind;
using opdc::AssignOp;
using opdc::BinaryOp;
using opdc::DatInit;
using opdc::Intrinsic;
using opdc::UnaryOp;
using opdc::accessModeName;
using opdc::argKindName;
using opdc::argKindShortName;
using opdc::intrinsicName;
using opdc::isComparison;
using opdc::isLogical;
using opdc::isReduction;
using opdc::lookupIntrinsic;
using opdc::spelling;

struct Decl;
struct Module;
struct Block;

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

enum class ExprKind : uint8_t {
  IntLit,
  FloatLit,
  BoolLit,
  StringLit,
  Name,     ///< x
  Unary,    ///< -x, !x
  Binary,   ///< a + b
  Call,     ///< f(a, b): intrinsic, fn, proc, or stencil read u(-1, 0)
  Cast,     ///< f64(x)
  Index,    ///< a[i]; in loop arguments also q[pecell[0]]
  Member,   ///< dJ.x
  ArrayLit, ///< [a, b, c]
};

struct Expr {
  const ExprKind kind;
  SourceRange range;
  Type type;                              ///< sema: Error until checked
  std::optional<ConstValue> constValue;   ///< sema: set when it folds

  explicit Expr(ExprKind k, SourceRange r) : kind(k), range(r) {}
  virtual ~Expr() = default;
  /// Deep copy, sema annotations included.
  virtual std::unique_ptr<Expr> clone() const = 0;
};
using ExprPtr = std::unique_ptr<Expr>;

struct IntLitExpr : Expr {
  int64_t value;
  bool forceI64; ///< written with the i64 suffix
  IntLitExpr(SourceRange r, int64_t v, bool i64)
      : Expr(ExprKind::IntLit, r), value(v), forceI64(i64) {}
  static bool classof(const Expr *e) { return e->kind == ExprKind::IntLit; }
  ExprPtr clone() const override;
};

struct FloatLitExpr : Expr {
  double value;   ///< already rounded to single precision when isF32
  bool isF32;     ///< written with the f suffix
  std::string spelling;
  FloatLitExpr(SourceRange r, double v, bool f32, std::string text)
      : Expr(ExprKind::FloatLit, r), value(v), isF32(f32),
        spelling(std::move(text)) {}
  static bool classof(const Expr *e) { return e->kind == ExprKind::FloatLit; }
  ExprPtr clone() const override;
};

struct BoolLitExpr : Expr {
  bool value;
  BoolLitExpr(SourceRange r, bool v) : Expr(ExprKind::BoolLit, r), value(v) {}
  static bool classof(const Expr *e) { return e->kind == ExprKind::BoolLit; }
  ExprPtr clone() const override;
};

struct StringLitExpr : Expr {
  std::string value; ///< escapes already decoded
  StringLitExpr(SourceRange r, std::string v)
      : Expr(ExprKind::StringLit, r), value(std::move(v)) {}
  static bool classof(const Expr *e) { return e->kind == ExprKind::StringLit; }
  ExprPtr clone() const override;
};

struct NameExpr : Expr {
  std::string name;
  Decl *decl = nullptr; ///< sema: what the name refers to
  NameExpr(SourceRange r, std::string n)
      : Expr(ExprKind::Name, r), name(std::move(n)) {}
  static bool classof(const Expr *e) { return e->kind == ExprKind::Name; }
  ExprPtr clone() const override;
};

struct UnaryExpr : Expr {
  UnaryOp op;
  ExprPtr operand;
  UnaryExpr(SourceRange r, UnaryOp o, ExprPtr e)
      : Expr(ExprKind::Unary, r), op(o), operand(std::move(e)) {}
  static bool classof(const Expr *e) { return e->kind == ExprKind::Unary; }
  ExprPtr clone() const override;
};

struct BinaryExpr : Expr {
  BinaryOp op;
  SourceRange opRange; ///< the operator token, for caret placement
  ExprPtr lhs, rhs;
  BinaryExpr(SourceRange r, BinaryOp o, SourceRange opr, ExprPtr l, ExprPtr rr)
      : Expr(ExprKind::Binary, r), op(o), opRange(opr), lhs(std::move(l)),
        rhs(std::move(rr)) {}
  static bool classof(const Expr *e) { return e->kind == ExprKind::Binary; }
  ExprPtr clone() const override;
};

enum class CallTarget : uint8_t {
  Unresolved,
  Intrinsic,   ///< see CallExpr::intrinsic
  Fn,          ///< a fn (kernel helper), callee points to FnDecl
  Proc,        ///< a proc (host), callee points to ProcDecl
  StencilRead, ///< u(-1, 0) on a stencil kernel parameter
};

struct CallExpr : Expr {
  std::string callee;
  SourceRange calleeRange;
  std::vector<ExprPtr> args;
  CallTarget target = CallTarget::Unresolved; ///< sema
  Intrinsic intrinsic = Intrinsic::None;      ///< sema, when target==Intrinsic
  Decl *calleeDecl = nullptr; ///< sema: FnDecl, ProcDecl or KernelParamDecl
  std::vector<int64_t> stencilOffset; ///< sema, when target==StencilRead
  CallExpr(SourceRange r, std::string c, SourceRange cr,
           std::vector<ExprPtr> a)
      : Expr(ExprKind::Call, r), callee(std::move(c)), calleeRange(cr),
        args(std::move(a)) {}
  static bool classof(const Expr *e) { return e->kind == ExprKind::Call; }
  ExprPtr clone() const override;
};

struct CastExpr : Expr {
  ScalarKind to;
  ExprPtr operand;
  CastExpr(SourceRange r, ScalarKind t, ExprPtr e)
      : Expr(ExprKind::Cast, r), to(t), operand(std::move(e)) {}
  static bool classof(const Expr *e) { return e->kind == ExprKind::Cast; }
  ExprPtr clone() const override;
};

struct IndexExpr : Expr {
  ExprPtr base, index;
  IndexExpr(SourceRange r, ExprPtr b, ExprPtr i)
      : Expr(ExprKind::Index, r), base(std::move(b)), index(std::move(i)) {}
  static bool classof(const Expr *e) { return e->kind == ExprKind::Index; }
  ExprPtr clone() const override;
};

struct MemberExpr : Expr {
  ExprPtr base;
  std::string field;
  SourceRange fieldRange;
  Decl *decl = nullptr; ///< sema: the field's declaration (DatDecl or VarDecl)
  MemberExpr(SourceRange r, ExprPtr b, std::string f, SourceRange fr)
      : Expr(ExprKind::Member, r), base(std::move(b)), field(std::move(f)),
        fieldRange(fr) {}
  static bool classof(const Expr *e) { return e->kind == ExprKind::Member; }
  ExprPtr clone() const override;
};

struct ArrayLitExpr : Expr {
  std::vector<ExprPtr> elements;
  ArrayLitExpr(SourceRange r, std::vector<ExprPtr> e)
      : Expr(ExprKind::ArrayLit, r), elements(std::move(e)) {}
  static bool classof(const Expr *e) { return e->kind == ExprKind::ArrayLit; }
  ExprPtr clone() const override;
};

//===----------------------------------------------------------------------===//
// Syntactic helpers
//===----------------------------------------------------------------------===//

/// A written type: `f64`, `f64[4]`, `str`. sema fills `resolved`.
struct TypeRef {
  SourceRange range;
  ScalarKind scalar = ScalarKind::F64;
  bool isString = false;
  ExprPtr length; ///< array length expression, null for scalars and str
  Type resolved;  ///< sema
  TypeRef clone() const;
};

/// A reference by name to a declaration (`over cells`, `swap(u, v)`). A
/// member of a module imported `as m` is spelled "m.x" (here, in NameExpr
/// and in CallExpr::callee); sema resolves the alias.
struct NameRef {
  std::string name;
  SourceRange range;
  Decl *decl = nullptr; ///< sema
};

/// `lo .. hi` (exclusive) or `lo ..= hi` (inclusive).
struct RangeExpr {
  SourceRange range;
  ExprPtr lo, hi;
  bool inclusive = false;
  RangeExpr clone() const;
};

//===----------------------------------------------------------------------===//
// Statements (host and kernel code share one statement language)
//===----------------------------------------------------------------------===//

enum class StmtKind : uint8_t {
  Block,
  VarDecl,  ///< let / var
  Expr,     ///< a call
  Assign,   ///< x = e, x += e, ...
  If,
  For,
  While,
  Break,
  Continue,
  Return,
  // Host only:
  Loop,
  Swap,
  Write,
  Read,
  Print,
  Solve,
  Adjoint,
  Tangent,
};

struct Stmt {
  const StmtKind kind;
  SourceRange range;
  Stmt(StmtKind k, SourceRange r) : kind(k), range(r) {}
  virtual ~Stmt() = default;
};
using StmtPtr = std::unique_ptr<Stmt>;

struct Block : Stmt {
  std::vector<StmtPtr> stmts;
  explicit Block(SourceRange r) : Stmt(StmtKind::Block, r) {}
  static bool classof(const Stmt *s) { return s->kind == StmtKind::Block; }
};

struct VarDecl;

/// `let x = e` / `var x: T = e`; owns the declaration.
struct VarDeclStmt : Stmt {
  std::unique_ptr<VarDecl> var;
  VarDeclStmt(SourceRange r, std::unique_ptr<VarDecl> v);
  ~VarDeclStmt() override;
  static bool classof(const Stmt *s) { return s->kind == StmtKind::VarDecl; }
};

struct ExprStmt : Stmt {
  ExprPtr expr;
  ExprStmt(SourceRange r, ExprPtr e) : Stmt(StmtKind::Expr, r), expr(std::move(e)) {}
  static bool classof(const Stmt *s) { return s->kind == StmtKind::Expr; }
};

struct AssignStmt : Stmt {
  AssignOp op;
  ExprPtr target, value;
  AssignStmt(SourceRange r, AssignOp o, ExprPtr t, ExprPtr v)
      : Stmt(StmtKind::Assign, r), op(o), target(std::move(t)),
        value(std::move(v)) {}
  static bool classof(const Stmt *s) { return s->kind == StmtKind::Assign; }
};

struct IfStmt : Stmt {
  ExprPtr cond;
  std::unique_ptr<Block> thenBlock;
  StmtPtr elseStmt; ///< null, a Block, or another IfStmt (else if)
  IfStmt(SourceRange r, ExprPtr c, std::unique_ptr<Block> t, StmtPtr e)
      : Stmt(StmtKind::If, r), cond(std::move(c)), thenBlock(std::move(t)),
        elseStmt(std::move(e)) {}
  static bool classof(const Stmt *s) { return s->kind == StmtKind::If; }
};

/// `for i in lo .. hi { }`; the induction variable is an immutable VarDecl.
struct ForStmt : Stmt {
  std::unique_ptr<VarDecl> var;
  RangeExpr bounds;
  std::unique_ptr<Block> body;
  ForStmt(SourceRange r, std::unique_ptr<VarDecl> v, RangeExpr b,
          std::unique_ptr<Block> body);
  ~ForStmt() override;
  static bool classof(const Stmt *s) { return s->kind == StmtKind::For; }
};

struct WhileStmt : Stmt {
  ExprPtr cond;
  std::unique_ptr<Block> body;
  WhileStmt(SourceRange r, ExprPtr c, std::unique_ptr<Block> b)
      : Stmt(StmtKind::While, r), cond(std::move(c)), body(std::move(b)) {}
  static bool classof(const Stmt *s) { return s->kind == StmtKind::While; }
};

struct BreakStmt : Stmt {
  explicit BreakStmt(SourceRange r) : Stmt(StmtKind::Break, r) {}
  static bool classof(const Stmt *s) { return s->kind == StmtKind::Break; }
};

struct ContinueStmt : Stmt {
  explicit ContinueStmt(SourceRange r) : Stmt(StmtKind::Continue, r) {}
  static bool classof(const Stmt *s) { return s->kind == StmtKind::Continue; }
};

struct ReturnStmt : Stmt {
  ExprPtr value; ///< may be null
  ReturnStmt(SourceRange r, ExprPtr v) : Stmt(StmtKind::Return, r), value(std::move(v)) {}
  static bool classof(const Stmt *s) { return s->kind == StmtKind::Return; }
};

struct DatDecl;
struct MapDecl;
struct StencilDecl;
struct KernelParamDecl;

/// One argument of a loop; `expr` is what was written, the rest is sema's.
struct LoopArg {
  ExprPtr expr;
  std::optional<ArgKind> kind;      ///< empty until sema resolves it
  KernelParamDecl *param = nullptr; ///< the kernel parameter it binds to
  DatDecl *dat = nullptr;           ///< Direct, Indirect, Stencil
  MapDecl *map = nullptr;           ///< Indirect, MapDirect
  int64_t mapIndex = -1;            ///< Indirect
  StencilDecl *stencil = nullptr;   ///< Stencil
  Decl *var = nullptr;              ///< Reduction: the host VarDecl
};

struct KernelDecl;

struct LoopStmt : Stmt {
  NameRef kernel;          ///< decl: KernelDecl
  NameRef space;           ///< decl: SetDecl or BlockDecl
  bool hasRanges = false;  ///< `over grid[...]` was written
  std::vector<RangeExpr> ranges; ///< one per block dimension
  std::vector<LoopArg> args;
  LoopStmt(SourceRange r) : Stmt(StmtKind::Loop, r) {}
  static bool classof(const Stmt *s) { return s->kind == StmtKind::Loop; }
};

struct SwapStmt : Stmt {
  NameRef a, b; ///< decl: DatDecl
  SwapStmt(SourceRange r, NameRef x, NameRef y)
      : Stmt(StmtKind::Swap, r), a(std::move(x)), b(std::move(y)) {}
  static bool classof(const Stmt *s) { return s->kind == StmtKind::Swap; }
};

/// `write a, b to "f.h5"` / `read a from f`. Dats are expressions so that
/// derivative results (`dJ.x`) can be written. `write a over s[lo .. hi]
/// to "a.csv"` writes a range of the dats' set or block (CSV only).
struct WriteStmt : Stmt {
  std::vector<ExprPtr> dats;
  ExprPtr file;
  NameRef space;                 ///< `over SPACE`: decl SetDecl or BlockDecl
  bool hasRanges = false;        ///< `over space[...]` was written
  std::vector<RangeExpr> ranges; ///< one per dimension (sets: one)
  WriteStmt(SourceRange r, std::vector<ExprPtr> d, ExprPtr f)
      : Stmt(StmtKind::Write, r), dats(std::move(d)), file(std::move(f)) {}
  static bool classof(const Stmt *s) { return s->kind == StmtKind::Write; }
};

struct ReadStmt : Stmt {
  std::vector<ExprPtr> dats;
  ExprPtr file;
  ReadStmt(SourceRange r, std::vector<ExprPtr> d, ExprPtr f)
      : Stmt(StmtKind::Read, r), dats(std::move(d)), file(std::move(f)) {}
  static bool classof(const Stmt *s) { return s->kind == StmtKind::Read; }
};

/// `print(a, b)` (formatted == false) or `printf(fmt, a, b)`; for printf the
/// first element of `args` is the format string literal. `fail(fmt, a, b)`
/// is a printf to stderr that ends the program with status 1 (fails).
struct PrintStmt : Stmt {
  bool formatted;
  bool fails = false;
  std::vector<ExprPtr> args;
  PrintStmt(SourceRange r, bool f, std::vector<ExprPtr> a)
      : Stmt(StmtKind::Print, r), formatted(f), args(std::move(a)) {}
  static bool classof(const Stmt *s) { return s->kind == StmtKind::Print; }
};

/// `solve tridiagonal(a, b, c, d) along 0 over grid[...]`, or
/// `let (iters, res) = solve cg(apply, p -> Ap, b, x, tol: 1e-10)`.
struct SolveStmt : Stmt {
  NameRef solver;             ///< "tridiagonal" or "cg" (sema checks it)
  /// The positional arguments in order; `p -> q` contributes p and q.
  /// decl: DatDecl (cg: args[0] is the operator's ProcDecl).
  std::vector<NameRef> args;
  std::vector<size_t> arrows; ///< i: `args[i] -> args[i + 1]` was written
  /// `name: value` options (cg: tol, maxiter, precond), with the number of
  /// positional arguments written before each.
  struct Option {
    NameRef name;
    ExprPtr value;
    size_t position = 0;
  };
  std::vector<Option> options;
  ExprPtr along;              ///< null for cg
  int64_t alongDim = -1;      ///< sema
  NameRef space;              ///< decl: BlockDecl; empty name for cg
  bool hasRanges = false;
  std::vector<RangeExpr> ranges;
  /// `let (iters, res) = solve ...`: the two variables defined, else null.
  std::unique_ptr<VarDecl> iters, residual;
  DatDecl *precond = nullptr; ///< sema: cg's `precond:` dat, if any
  SolveStmt(SourceRange r);
  ~SolveStmt() override;
  static bool classof(const Stmt *s) { return s->kind == StmtKind::Solve; }
};

struct ProcDecl;
struct GradientDecl;

/// What adjoint and tangent requests share: the differentiated proc, its
/// call arguments, the targets (one NameRef each) and the variable the
/// request defines.
struct DerivativeStmt : Stmt {
  NameRef proc;                  ///< decl: ProcDecl
  std::vector<ExprPtr> callArgs;
  bool isAdjoint() const { return kind == StmtKind::Adjoint; }
  /// "adjoint" or "tangent".
  const char *keyword() const { return isAdjoint() ? "adjoint" : "tangent"; }
  /// "wrt" or "along": the list the targets are written in.
  const char *targetListName() const { return isAdjoint() ? "wrt" : "along"; }
  /// The targets in source order: AdjointStmt::wrt, or the targets of
  /// TangentStmt::along.
  size_t numTargets() const;
  NameRef &target(size_t i);
  const NameRef &target(size_t i) const {
    return const_cast<DerivativeStmt *>(this)->target(i);
  }
  /// AdjointStmt::value or TangentStmt::result; may be null.
  VarDecl *resultDecl() const;
  static bool classof(const Stmt *s) {
    return s->kind == StmtKind::Adjoint || s->kind == StmtKind::Tangent;
  }

protected:
  DerivativeStmt(StmtKind k, SourceRange r) : Stmt(k, r) {}
};

/// `let (J, dJ) = adjoint objective(alpha) wrt (x, alpha) checkpoints 10`
struct AdjointStmt : DerivativeStmt {
  std::unique_ptr<VarDecl> value;       ///< J: the proc's result
  std::unique_ptr<GradientDecl> grad;   ///< dJ: fields named after wrt
  std::vector<NameRef> wrt;   ///< decl: DatDecl or the proc's parameter VarDecl
  ExprPtr checkpoints;        ///< may be null
  AdjointStmt(SourceRange r);
  ~AdjointStmt() override;
  static bool classof(const Stmt *s) { return s->kind == StmtKind::Adjoint; }
};

/// `let d = tangent objective(alpha) along (x: dx, alpha: 1.0)`
struct TangentStmt : DerivativeStmt {
  std::unique_ptr<VarDecl> result; ///< directional derivative (a float)
  struct Seed {
    NameRef target;  ///< decl: DatDecl or the proc's parameter VarDecl
    ExprPtr value;   ///< a dat name (for a dat) or a scalar expression
  };
  std::vector<Seed> along;
  TangentStmt(SourceRange r);
  ~TangentStmt() override;
  static bool classof(const Stmt *s) { return s->kind == StmtKind::Tangent; }
};

//===----------------------------------------------------------------------===//
// Declarations
//===----------------------------------------------------------------------===//

enum class DeclKind : uint8_t {
  Const, Param, Set, Map, Dat, Block, Stencil, Kernel, KernelParam, Fn, Proc,
  Main,
  Var,      ///< let/var, for induction, fn/proc parameter
  Gradient, ///< the dJ of an adjoint statement
};
/// "const", "param", "set", ... as used in messages ("'x' is a set").
const char *declKindName(DeclKind k);

struct Decl {
  const DeclKind kind;
  std::string name;
  SourceRange nameRange; ///< where the name is written (notes point here)
  SourceRange range;     ///< the whole declaration
  Module *module = nullptr;
  Decl(DeclKind k, std::string n, SourceRange nr, SourceRange r)
      : kind(k), name(std::move(n)), nameRange(nr), range(r) {}
  virtual ~Decl() = default;
};
using DeclPtr = std::unique_ptr<Decl>;

struct ConstDecl : Decl {
  std::optional<TypeRef> declaredType;
  ExprPtr init;
  ConstValue value; ///< sema: the folded value (its type is the const's type)
  ConstDecl(std::string n, SourceRange nr, SourceRange r)
      : Decl(DeclKind::Const, std::move(n), nr, r) {}
  static bool classof(const Decl *d) { return d->kind == DeclKind::Const; }
};

struct ParamDecl : Decl {
  TypeRef type;
  ExprPtr init;
  /// The `//` comment lines right above the declaration, without the
  /// slashes (the generated program's --help shows them).
  std::string doc;
  ConstValue defaultValue; ///< sema
  ParamDecl(std::string n, SourceRange nr, SourceRange r)
      : Decl(DeclKind::Param, std::move(n), nr, r) {}
  static bool classof(const Decl *d) { return d->kind == DeclKind::Param; }
};

struct SetDecl : Decl {
  ExprPtr fromFile; ///< `from EXPR`, or null
  ExprPtr size;     ///< `size EXPR`, or null (exactly one of the two is set)
  SetDecl(std::string n, SourceRange nr, SourceRange r)
      : Decl(DeclKind::Set, std::move(n), nr, r) {}
  static bool classof(const Decl *d) { return d->kind == DeclKind::Set; }
};

struct SetDecl;
struct BlockDecl;

struct MapDecl : Decl {
  NameRef from, to; ///< decl: SetDecl
  ExprPtr arityExpr;
  int64_t arity = 0; ///< sema
  ExprPtr fromFile;  ///< may be null: filled by the program
  MapDecl(std::string n, SourceRange nr, SourceRange r)
      : Decl(DeclKind::Map, std::move(n), nr, r) {}
  static bool classof(const Decl *d) { return d->kind == DeclKind::Map; }
};

struct DatDecl : Decl {
  NameRef on; ///< decl: SetDecl or BlockDecl
  TypeRef elemType;
  // Structured dats only (on a block):
  bool hasSize = false;
  std::vector<ExprPtr> size;     ///< one per block dimension
  ExprPtr haloMinus, haloPlus;   ///< `halo H` sets both to H; null: depth 0
  ExprPtr base;                  ///< `base [..]`, may be null
  DatInit init = DatInit::Zero;
  ExprPtr initExpr;              ///< Fill: the value; File: the file name
  // sema:
  bool structured = false;
  std::vector<int64_t> haloM, haloP, baseOffset; ///< per dimension
  /// Set when sema synthesises the dat (a gradient field `dJ.x`): the primal
  /// dat it mirrors.
  DatDecl *adjointOf = nullptr;
  DatDecl(std::string n, SourceRange nr, SourceRange r)
      : Decl(DeclKind::Dat, std::move(n), nr, r) {}
  static bool classof(const Decl *d) { return d->kind == DeclKind::Dat; }
};

struct BlockDecl : Decl {
  ExprPtr dimsExpr;
  int64_t dims = 0; ///< sema, 1..3
  BlockDecl(std::string n, SourceRange nr, SourceRange r)
      : Decl(DeclKind::Block, std::move(n), nr, r) {}
  static bool classof(const Decl *d) { return d->kind == DeclKind::Block; }
};

struct StencilDecl : Decl {
  struct Point {
    SourceRange range;
    std::vector<ExprPtr> offsets;
  };
  std::vector<Point> points;
  std::vector<std::vector<int64_t>> offsets; ///< sema, folded, in source order
  int64_t dims = 0;                          ///< sema
  StencilDecl(std::string n, SourceRange nr, SourceRange r)
      : Decl(DeclKind::Stencil, std::move(n), nr, r) {}
  static bool classof(const Decl *d) { return d->kind == DeclKind::Stencil; }
};

struct KernelParamDecl : Decl {
  AccessMode mode = AccessMode::Read;
  SourceRange modeRange; ///< the mode keyword, invalid for Read
  TypeRef type;
  std::optional<NameRef> stencil; ///< `@ S`; decl: StencilDecl
  KernelDecl *kernel = nullptr;
  unsigned index = 0; ///< position in the kernel's parameter list
  KernelParamDecl(std::string n, SourceRange nr, SourceRange r)
      : Decl(DeclKind::KernelParam, std::move(n), nr, r) {}
  static bool classof(const Decl *d) { return d->kind == DeclKind::KernelParam; }
};

struct KernelDecl : Decl {
  std::vector<std::unique_ptr<KernelParamDecl>> params;
  std::unique_ptr<Block> body;
  KernelDecl(std::string n, SourceRange nr, SourceRange r)
      : Decl(DeclKind::Kernel, std::move(n), nr, r) {}
  static bool classof(const Decl *d) { return d->kind == DeclKind::Kernel; }
};

/// let/var locals, for induction variables and fn/proc parameters.
struct VarDecl : Decl {
  bool isMutable = false; ///< var (true) or let / parameter / induction
  std::optional<TypeRef> declaredType;
  ExprPtr init; ///< may be null (var without initialiser, parameters)
  Type type;    ///< sema
  VarDecl(std::string n, SourceRange nr, SourceRange r)
      : Decl(DeclKind::Var, std::move(n), nr, r) {}
  static bool classof(const Decl *d) { return d->kind == DeclKind::Var; }
};

struct FnDecl : Decl {
  std::vector<std::unique_ptr<VarDecl>> params;
  std::optional<TypeRef> returnType; ///< none: void
  std::unique_ptr<Block> body;
  FnDecl(std::string n, SourceRange nr, SourceRange r)
      : Decl(DeclKind::Fn, std::move(n), nr, r) {}
  static bool classof(const Decl *d) { return d->kind == DeclKind::Fn; }
};

struct ProcDecl : Decl {
  std::vector<std::unique_ptr<VarDecl>> params;
  std::optional<TypeRef> returnType;
  std::unique_ptr<Block> body;
  ProcDecl(std::string n, SourceRange nr, SourceRange r)
      : Decl(DeclKind::Proc, std::move(n), nr, r) {}
  static bool classof(const Decl *d) { return d->kind == DeclKind::Proc; }
};

struct MainDecl : Decl {
  std::unique_ptr<Block> body;
  MainDecl(SourceRange nr, SourceRange r)
      : Decl(DeclKind::Main, "main", nr, r) {}
  static bool classof(const Decl *d) { return d->kind == DeclKind::Main; }
};

/// The `dJ` of `let (J, dJ) = adjoint ...`: one field per `wrt` name, a
/// synthesised dat (for dats) or a float VarDecl (for proc parameters).
struct GradientDecl : Decl {
  std::vector<std::unique_ptr<Decl>> fields; ///< sema
  Decl *field(const std::string &n) const {
    for (auto &f : fields)
      if (f->name == n)
        return f.get();
    return nullptr;
  }
  GradientDecl(std::string n, SourceRange nr, SourceRange r)
      : Decl(DeclKind::Gradient, std::move(n), nr, r) {}
  static bool classof(const Decl *d) { return d->kind == DeclKind::Gradient; }
};

//===----------------------------------------------------------------------===//
// Modules and the program
//===----------------------------------------------------------------------===//

/// `import M`, `import M as m` or `import M (a, b)`.
struct ImportDecl {
  SourceRange range;
  std::string name;    ///< "std.math" or the quoted path as written
  bool isPath = false; ///< written as a string literal
  std::string alias;   ///< `as m`: M's names only as `m.x`; empty if none
  SourceRange aliasRange;
  bool selective = false;     ///< `(a, b)`: only these names, unqualified
  std::vector<NameRef> names; ///< the selected names; decl is sema's
  Module *resolved = nullptr; ///< sema
};

/// One parsed file.
struct Module {
  std::string path;          ///< as opened (messages use the buffer name)
  unsigned bufferId = 0;     ///< in the SourceManager
  bool isProgram = false;    ///< starts with `program NAME`
  std::string programName;
  SourceRange programRange;
  std::vector<ImportDecl> imports;
  std::vector<DeclPtr> decls; ///< in source order
};

/// The root module and everything it imports, in a deterministic order
/// (imports before importers, root last).
struct Program {
  std::vector<std::unique_ptr<Module>> modules;
  Module *root = nullptr;
  /// sema: the global declarations by name; where several modules declare
  /// one name, the first in load order (each module resolves names in its
  /// own scope: see sema/NameResolution.cpp).
  std::map<std::string, Decl *> globals;
  MainDecl *main = nullptr; ///< sema
};

} // namespace opdc::ast
#endif
