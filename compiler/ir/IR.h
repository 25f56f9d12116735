// IR.h - The Program IR: globals, kernels, host functions and loop nodes.
// SPDX-License-Identifier: Apache-2.0
//
// The IR is what lowering produces and what passes and backends consume. It
// owns all of its data (it never points into the AST) and is structured, not
// SSA:
//
//   Program
//     consts, params, sets, maps, blocks, stencils, dats   (globals, by kind)
//     fns, kernels, procs, main                            (Functions)
//   Function
//     kernel parameters (kernels) or parameter slots (fns, procs)
//     vars: local variable slots (name, type), numbered from 0
//     body: a Body (list of statements)
//   Stmt: Decl Assign Eval If For While Break Continue Return (kernels and
//     host), ParLoop Swap Write Read Print Solve Adjoint Tangent (host only)
//   Expr: explicitly typed; both operands of a binary operator have the same
//     type, every conversion is a Cast, literals are typed Constants.
//
// Cross references (a dat's set, a loop's kernel, ...) are plain pointers to
// objects owned by the same Program; they stay valid while the Program lives
// because every global and function is held through a unique_ptr. Variables
// are referred to by slot number in their Function, so a Body cloned into
// another Function of the same shape stays valid. Every node keeps the
// SourceRange of the source it came from (invalid for synthesised nodes).
//
// The enumerations and expressions are declared in IRExprs.h (included
// here); this header holds statements, globals, functions and the Program.
#ifndef OPDC_IR_IR_H
#define OPDC_IR_IR_H

#include "ir/IRExprs.h"

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace opdc::ir {

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

enum class StmtKind : uint8_t {
  Decl, ///< defines a local variable slot with its initial value
  Assign,
  Eval, ///< evaluates a call for its effect
  If,
  For,
  While,
  Break,
  Continue,
  Return,
  // Host only:
  ParLoop,
  Swap,
  Write,
  Read,
  Print,
  Solve,
  Adjoint,
  Tangent,
  // Host only, made by the adjoint pass:
  Tape,
  Checkpoint,
};

struct Stmt {
  const StmtKind kind;
  SourceRange range;
  Stmt(StmtKind k, SourceRange r) : kind(k), range(r) {}
  virtual ~Stmt() = default;
  /// Deep copy; cross references and slots are kept as they are.
  virtual std::unique_ptr<Stmt> clone() const = 0;
};
using StmtPtr = std::unique_ptr<Stmt>;

/// A sequence of statements; a variable declared in it is visible until the
/// end of the sequence.
struct Body {
  std::vector<StmtPtr> stmts;
  Body clone() const;
  bool empty() const { return stmts.empty(); }
};

/// `let %x: T = init` / `var %x: T = init`. The initial value is always
/// present (lowering gives a `var` without one the zero of its type).
struct DeclStmt : Stmt {
  unsigned slot;
  ExprPtr init;
  DeclStmt(unsigned s, ExprPtr i, SourceRange r = {})
      : Stmt(StmtKind::Decl, r), slot(s), init(std::move(i)) {}
  static bool classof(const Stmt *s) { return s->kind == StmtKind::Decl; }
  StmtPtr clone() const override;
};

/// `target op value`. The target is an lvalue: a VarRef, a KernelArg (at the
/// centre for stencil parameters) or an Index of an lvalue.
struct AssignStmt : Stmt {
  AssignOp op;
  ExprPtr target, value;
  AssignStmt(AssignOp o, ExprPtr t, ExprPtr v, SourceRange r = {})
      : Stmt(StmtKind::Assign, r), op(o), target(std::move(t)),
        value(std::move(v)) {}
  static bool classof(const Stmt *s) { return s->kind == StmtKind::Assign; }
  StmtPtr clone() const override;
};

/// A call evaluated for its effect (a void fn or proc, or any call whose
/// result is dropped).
struct EvalStmt : Stmt {
  ExprPtr expr;
  explicit EvalStmt(ExprPtr e, SourceRange r = {})
      : Stmt(StmtKind::Eval, r), expr(std::move(e)) {}
  static bool classof(const Stmt *s) { return s->kind == StmtKind::Eval; }
  StmtPtr clone() const override;
};

/// `if cond {then} else {otherwise}`; `else if` is an else Body holding one
/// IfStmt.
struct IfStmt : Stmt {
  ExprPtr cond;
  Body thenBody, elseBody;
  IfStmt(ExprPtr c, Body t, Body e, SourceRange r = {})
      : Stmt(StmtKind::If, r), cond(std::move(c)), thenBody(std::move(t)),
        elseBody(std::move(e)) {}
  static bool classof(const Stmt *s) { return s->kind == StmtKind::If; }
  StmtPtr clone() const override;
};

/// `for %i in lo .. hi`: half-open, step 1, lo and hi evaluated once, both of
/// the induction variable's integer type. The induction slot is defined in
/// the body only and not assigned there.
struct ForStmt : Stmt {
  unsigned slot;
  ExprPtr lo, hi;
  Body body;
  ForStmt(unsigned s, ExprPtr l, ExprPtr h, Body b, SourceRange r = {})
      : Stmt(StmtKind::For, r), slot(s), lo(std::move(l)), hi(std::move(h)),
        body(std::move(b)) {}
  static bool classof(const Stmt *s) { return s->kind == StmtKind::For; }
  StmtPtr clone() const override;
};

struct WhileStmt : Stmt {
  ExprPtr cond;
  Body body;
  WhileStmt(ExprPtr c, Body b, SourceRange r = {})
      : Stmt(StmtKind::While, r), cond(std::move(c)), body(std::move(b)) {}
  static bool classof(const Stmt *s) { return s->kind == StmtKind::While; }
  StmtPtr clone() const override;
};

struct BreakStmt : Stmt {
  explicit BreakStmt(SourceRange r = {}) : Stmt(StmtKind::Break, r) {}
  static bool classof(const Stmt *s) { return s->kind == StmtKind::Break; }
  StmtPtr clone() const override;
};

struct ContinueStmt : Stmt {
  explicit ContinueStmt(SourceRange r = {}) : Stmt(StmtKind::Continue, r) {}
  static bool classof(const Stmt *s) { return s->kind == StmtKind::Continue; }
  StmtPtr clone() const override;
};

struct ReturnStmt : Stmt {
  ExprPtr value; ///< null in void functions
  explicit ReturnStmt(ExprPtr v, SourceRange r = {})
      : Stmt(StmtKind::Return, r), value(std::move(v)) {}
  static bool classof(const Stmt *s) { return s->kind == StmtKind::Return; }
  StmtPtr clone() const override;
};

/// Everything a backend needs to know about one loop argument; backends never
/// look into the kernel to re-derive it.
struct AccessDescriptor {
  ArgKind kind = ArgKind::Direct;
  AccessMode mode = AccessMode::Read; ///< the kernel parameter's mode
  ScalarKind scalar = ScalarKind::F64;
  unsigned dim = 1;           ///< components per element
  unsigned bytes = 8;         ///< scalarBytes(scalar) * dim
  Dat *dat = nullptr;         ///< Direct, Indirect, Stencil
  Map *map = nullptr;         ///< Indirect, MapDirect
  int mapIndex = -1;          ///< Indirect: 0 <= mapIndex < map->arity
  Stencil *stencil = nullptr; ///< Stencil
  ExprPtr value;              ///< GlobalRead: host expression
  int var = -1;               ///< Reduction: host variable slot
  SourceRange range;          ///< the argument as written

  AccessDescriptor clone() const;
  bool usesDat() const {
    return kind == ArgKind::Direct || kind == ArgKind::Indirect ||
           kind == ArgKind::Stencil;
  }
};

/// A per-dimension half-open iteration range [lo, hi) of host expressions.
struct LoopRange {
  ExprPtr lo, hi;
  LoopRange clone() const { return {cloneExpr(lo), cloneExpr(hi)}; }
};

/// `loop kernel over space (args)`: args[i] binds kernel parameter i.
/// Communication avoidance's plan for one loop chain
/// (passes/loops/CommAvoid.cpp).
struct HaloGroup {
  /// Whether the runtime may decide (Auto: OP2-CA's cost model per chain
  /// at run time) or must run the chain this way (On).
  enum class Mode : uint8_t { Auto, On } mode = Mode::Auto;
  /// A dat the chain reads beyond the rank's points before writing it:
  /// exchanged before the chain this deep (blocks: points per dimension;
  /// sets: depth[0] layers).
  struct Entry {
    Dat *dat = nullptr;
    std::array<int64_t, 3> depth{};
  };
  std::vector<Entry> dats;
  /// Per loop of the chain, for the cost model: the bytes one iteration
  /// moves, its extension (deepest, points or layers), the exchanges it
  /// would make as a plain loop (dats, and the deepest of their reaches),
  /// and the bytes of dats an earlier loop of its skewed sweep reaches,
  /// which stay in cache when that sweep runs as one in the avoiding chain
  /// only (SkewSchedule::needsExtension; 0 for other loops).
  struct LoopCost {
    int64_t bytes = 0;
    int64_t extension = 0;
    int32_t exchanges = 0;
    int32_t depth = 0;
    int64_t cached = 0;
  };
  std::vector<LoopCost> loops;
};

/// Skewed fusion (passes/loops/Fuse.cpp, lib/exec/Skew.cpp): the first loop of
/// a sweep has count > 1, and the next count - 1 statements of its Body are
/// the sweep's other loops, over the same block (`member` on all of them).
/// The sweep runs along the outermost dimension: loop k handles row
/// r - lag while the first handles row r; rows of loop k within `lead`
/// rows after or `trail` rows before a cut between two threads' parts run
/// after every thread finished its part. Only the schedule changes: each
/// loop computes what it computed alone. `cached`: another loop of the
/// sweep reaches a dat this one writes, so it stores plainly, its lines
/// staying in (or already in) the cache, never with streaming stores.
struct SkewSchedule {
  unsigned count = 0;
  bool member = false;
  bool cached = false;
  /// Under MPI the loop reads beyond the rank's points (at stencil offsets)
  /// what an earlier loop of the sweep writes: the sweep runs as one only
  /// when the earlier loop computes those points too (a communication-
  /// avoiding chain's extensions), else as separate loops (the runtime
  /// decides per run, lib/exec/Skew.cpp).
  bool needsExtension = false;
  int64_t lag = 0, lead = 0, trail = 0;
};

struct ParLoopStmt : Stmt {
  Function *kernel = nullptr;
  Set *set = nullptr;     ///< set loops
  Block *block = nullptr; ///< block loops
  /// Block loops: one range per dimension, or empty for the whole block
  /// (the extent of the loop's dats without halos). Set loops: empty.
  std::vector<LoopRange> ranges;
  std::vector<AccessDescriptor> args;
  /// Communication avoidance (passes/loops/CommAvoid.cpp): how far beyond the
  /// points a rank owns the loop runs, redundantly, under MPI. Blocks: per
  /// dimension, points below (extendLo) and above (extendHi) the rank's
  /// part, clipped to the loop's range; sets: extendLo[0] exec-halo layers.
  /// All zero: the rank's own points only (owner computes).
  std::array<int64_t, 3> extendLo{}, extendHi{};
  /// Set on the first loop of a chain that communication avoidance
  /// rewrote: the halos the chain needs, exchanged together before the
  /// loop, and what the runtime's cost model needs to decide whether the
  /// chain runs that way (auto) or as plain loops.
  std::shared_ptr<const HaloGroup> haloGroup;
  /// Skewed fusion (passes/loops/Fuse.cpp): the loop's place in a skewed sweep.
  SkewSchedule skew;
  bool extended() const {
    for (int d = 0; d < 3; ++d)
      if (extendLo[size_t(d)] || extendHi[size_t(d)])
        return true;
    return false;
  }
  explicit ParLoopStmt(SourceRange r = {}) : Stmt(StmtKind::ParLoop, r) {}
  static bool classof(const Stmt *s) { return s->kind == StmtKind::ParLoop; }
  StmtPtr clone() const override;
};

/// `swap(a, b)`: exchanges the storage of two dats of the same shape.
struct SwapStmt : Stmt {
  Dat *a, *b;
  SwapStmt(Dat *x, Dat *y, SourceRange r = {})
      : Stmt(StmtKind::Swap, r), a(x), b(y) {}
  static bool classof(const Stmt *s) { return s->kind == StmtKind::Swap; }
  StmtPtr clone() const override;
};

/// `write dats to file` (isRead false) or `read dats from file` (true).
/// A write over a range (CSV only) has one range per dimension of the
/// dats' block, or one for their set; empty: the whole dats.
struct DatIOStmt : Stmt {
  std::vector<Dat *> dats;
  ExprPtr file; ///< str host expression
  std::vector<LoopRange> ranges;
  DatIOStmt(bool read, std::vector<Dat *> d, ExprPtr f, SourceRange r = {})
      : Stmt(read ? StmtKind::Read : StmtKind::Write, r), dats(std::move(d)),
        file(std::move(f)) {}
  bool isRead() const { return kind == StmtKind::Read; }
  static bool classof(const Stmt *s) {
    return s->kind == StmtKind::Write || s->kind == StmtKind::Read;
  }
  StmtPtr clone() const override;
};

/// `print(args)` (values separated by one space, then a newline), or
/// `printf(format, args)` when formatted.
/// Where a formatted print goes: the program's output (rank 0), or
/// stderr as a warning, or stderr as an error that ends the program with
/// status 1. Only passes make the last two (`warnf`, `failf` in --emit=ir).
enum class PrintTo : uint8_t { Out, Warning, Error };

struct PrintStmt : Stmt {
  PrintTo to = PrintTo::Out; ///< Warning and Error: formatted only
  bool formatted = false;
  std::string format; ///< formatted only, escapes decoded
  std::vector<ExprPtr> args;
  PrintStmt(bool f, std::string fmt, std::vector<ExprPtr> a, SourceRange r = {})
      : Stmt(StmtKind::Print, r), formatted(f), format(std::move(fmt)),
        args(std::move(a)) {}
  static bool classof(const Stmt *s) { return s->kind == StmtKind::Print; }
  StmtPtr clone() const override;
};

/// `solve tridiagonal(a, b, c, d) along dim over block[ranges]`: for every
/// line along `along`, solves the tridiagonal system with sub-diagonal a,
/// diagonal b, super-diagonal c and right-hand side d; d holds the solution
/// afterwards.
///
/// `(iters, res) = solve cg(@op, p -> Ap, b, x) tol T maxiter M precond D`:
/// conjugate gradients for A x = b, where the proc `op` (no parameters)
/// applies A to the dat p and writes Ap; dats = {p, Ap, b, x}. The
/// `expand-cg` pass turns it into loops and a host while loop; backends
/// never see it.
struct SolveStmt : Stmt {
  SolverKind solver = SolverKind::Tridiagonal;
  std::vector<Dat *> dats;
  unsigned along = 0;
  Block *block = nullptr;
  std::vector<LoopRange> ranges; ///< empty: whole block
  // CG only:
  Function *op = nullptr;  ///< the operator proc
  Dat *precond = nullptr;  ///< Jacobi: the diagonal, or null
  ExprPtr tol, maxiter;    ///< f64 and i32 host expressions
  /// bool host expression: whether stopping at maxiter warns; null: it does
  ExprPtr warn;
  int itersVar = -1;       ///< slot defined (i32), or -1
  int residualVar = -1;    ///< slot defined (f64), or -1
  /// The result slots are declared elsewhere (the adjoint pass declares a
  /// differentiated proc's variables up front): the solve assigns them.
  bool resultsAssigned = false;
  explicit SolveStmt(SourceRange r = {}) : Stmt(StmtKind::Solve, r) {}
  static bool classof(const Stmt *s) { return s->kind == StmtKind::Solve; }
  StmtPtr clone() const override;
};

/// What a derivative is taken with respect to: a dat, or a parameter of the
/// differentiated proc (by position).
struct DerivTarget {
  Dat *dat = nullptr;
  int param = -1;
};

/// One target of a derivative request and what goes with it: for an
/// adjoint, where the gradient goes; for a tangent, the direction.
struct DerivEntry {
  DerivTarget of;
  /// of.dat: the gradient dat (adjoint; Dat::primal is of.dat) or the
  /// direction, a dat of the same shape (tangent).
  Dat *dat = nullptr;
  int var = -1;  ///< adjoint, of.param: the gradient's host variable slot
  ExprPtr value; ///< tangent, of.param: the direction, a host expression
  SourceRange range;
  DerivEntry clone() const {
    return {of, dat, var, cloneExpr(value), range};
  }
};

/// A derivative request on a proc, kept as one node for the adjoint pass to
/// expand: the proc called with `args`, one entry per target, the proc's
/// result (adjoint) or the directional derivative (tangent) in `resultVar`.
/// AdjointStmt and TangentStmt add what only they have.
struct DerivativeStmt : Stmt {
  Function *proc = nullptr;
  std::vector<ExprPtr> args;
  std::vector<DerivEntry> entries;
  int resultVar = -1;
  bool isAdjoint() const { return kind == StmtKind::Adjoint; }
  /// "adjoint" or "tangent".
  const char *keyword() const { return isAdjoint() ? "adjoint" : "tangent"; }
  static bool classof(const Stmt *s) {
    return s->kind == StmtKind::Adjoint || s->kind == StmtKind::Tangent;
  }

protected:
  DerivativeStmt(StmtKind k, SourceRange r) : Stmt(k, r) {}
  /// Copies the shared fields into \p c.
  void cloneInto(DerivativeStmt &c) const;
};

/// `let (J, dJ) = adjoint proc(args) wrt (...) checkpoints n`: defines
/// `resultVar` (the proc's result) and, per wrt entry, either a gradient dat
/// (entry.dat) or a gradient variable (entry.var).
struct AdjointStmt : DerivativeStmt {
  ExprPtr checkpoints; ///< null: the pass chooses
  explicit AdjointStmt(SourceRange r = {})
      : DerivativeStmt(StmtKind::Adjoint, r) {}
  static bool classof(const Stmt *s) { return s->kind == StmtKind::Adjoint; }
  StmtPtr clone() const override;
};

/// `let d = tangent proc(args) along (x: dx, alpha: 1.0)`: the directional
/// derivative of the proc's result along the seeds (entry.dat for a dat,
/// entry.value for a parameter), into `resultVar`.
struct TangentStmt : DerivativeStmt {
  explicit TangentStmt(SourceRange r = {})
      : DerivativeStmt(StmtKind::Tangent, r) {}
  static bool classof(const Stmt *s) { return s->kind == StmtKind::Tangent; }
  StmtPtr clone() const override;
};

/// `tape push (dats; vars)` / `tape pop (dats; vars)`: saves values on the
/// run-time tape (a stack) or restores them. Push saves the dats in order
/// (values, halos included, and their halo state), then the variables; pop
/// restores the variables in reverse order, then the dats in reverse order,
/// so a pop with the same lists undoes the matching push. Made by the
/// adjoint pass (the reverse sweep restores what the forward sweep
/// overwrote), never by lowering. Variables are host scalars or arrays (not
/// str); an array takes one tape word per element.
struct TapeStmt : Stmt {
  bool push = true;
  std::vector<Dat *> dats;
  std::vector<unsigned> vars;
  /// Push only; empty or one flag per dat: the first loop after the push
  /// that reaches the dat (only loops that do not and host declarations and
  /// assignments between: ir::firstLoopReaching) writes it at every point
  /// (block) or element (set) of its range and touches it no other way, so
  /// the runtime may hand the dat's storage to the tape at that loop's
  /// prepare and copy only the rest (opd_tape_push_dat_overwritten). Set by
  /// the adjoint pass; the verifier checks the loop.
  std::vector<bool> overwritten;
  /// The push and the pop the adjoint pass made together share a nonzero
  /// number (copies of a body keep it); 0: not paired. The adjoint-tape
  /// pass drops a dat from every statement of a pair when no pop of the
  /// pair restores a value that is read.
  unsigned pair = 0;
  TapeStmt(bool p, std::vector<Dat *> d, std::vector<unsigned> v,
           SourceRange r = {})
      : Stmt(StmtKind::Tape, r), push(p), dats(std::move(d)),
        vars(std::move(v)) {}
  static bool classof(const Stmt *s) { return s->kind == StmtKind::Tape; }
  StmtPtr clone() const override;
};

/// Binomial checkpointing of a host loop `for %i in lo..hi { body }` (made
/// by the adjoint pass). The state of one step is `dats` and `vars`.
///
/// Forward (`reverse` false): opens a checkpoint plan for hi - lo steps and
/// `snapshots` snapshots (null: the run-time default), then runs `body` for
/// %i = lo .. hi-1 as a for loop would, saving the state before the steps
/// the plan picks. %i is a mutable variable declared before the statement.
///
/// Reverse: takes the plan the matching forward statement opened (plans
/// form a stack), then follows it: restores snapshots, re-runs steps with
/// `body`, saves new snapshots, and for every step from the last to the
/// first runs `reverseBody` with %i set to that step and the state as it
/// was before the step; closes the plan. lo, hi and snapshots are null.
///
/// After `reverseBody` the runtime never runs `body` on the state it left:
/// it restores a snapshot first, or runs `tapedReverseBody` (step 0 taped
/// by the forward sweep), or the plan ends. So `reverseBody` only has to
/// leave the state from before its step in the dats that the reversal of
/// the earlier steps or the statements after this one read (the
/// adjoint-tape pass drops the other restores).
///
/// With as many snapshots as steps the plan stores every step on the tape
/// instead: the forward statement runs `tapedBody` (the step with its tape
/// pushes) for every step and the reverse statement `tapedReverseBody`
/// (the pops and adjoints only) from the last step to the first: no step
/// runs twice.
struct CheckpointStmt : Stmt {
  bool reverse = false;
  unsigned slot = 0;
  ExprPtr lo, hi, snapshots;
  std::vector<Dat *> dats;
  std::vector<unsigned> vars;
  Body body;
  Body reverseBody;
  Body tapedBody;        ///< forward only
  Body tapedReverseBody; ///< reverse only
  explicit CheckpointStmt(bool rev, SourceRange r = {})
      : Stmt(StmtKind::Checkpoint, r), reverse(rev) {}
  static bool classof(const Stmt *s) {
    return s->kind == StmtKind::Checkpoint;
  }
  StmtPtr clone() const override;
};

//===----------------------------------------------------------------------===//
// Globals
//===----------------------------------------------------------------------===//

/// A compile-time constant; uses were folded by lowering, this is kept for
/// printing and for backends that want the name.
struct Const {
  std::string name;
  ConstValue value;
  SourceRange range;
};

/// A run-time parameter: scalar or str, with a default overridable from the
/// command line (`--name=value`). Read-only everywhere.
struct Param {
  std::string name;
  Type type;
  ConstValue defaultValue;
  std::string doc; ///< the comment above the declaration, for --help
  SourceRange range;
};

/// An unstructured set. Its size comes from a file or from a host expression.
struct Set {
  std::string name;
  ExprPtr fromFile; ///< str host expression, or null
  ExprPtr size;     ///< integer host expression, or null (exactly one set)
  SourceRange range;
};

struct Map {
  std::string name;
  Set *from = nullptr, *to = nullptr;
  unsigned arity = 1;
  ExprPtr fromFile; ///< null: filled by the program (a map-direct out arg)
  SourceRange range;
};

/// A structured grid of 1..3 dimensions; its extents belong to its dats.
struct Block {
  std::string name;
  unsigned dims = 1;
  SourceRange range;
};

struct Stencil {
  std::string name;
  unsigned dims = 1;
  std::vector<std::vector<int64_t>> points; ///< in source order
  SourceRange range;
  bool contains(const std::vector<int64_t> &offset) const;
  /// True when the only point is the centre (writes are allowed through it).
  bool isCentreOnly() const;
};

/// Data on a set or a block; each element is elemType (a scalar or a fixed
/// array of scalars).
struct Dat {
  std::string name;
  Set *set = nullptr;     ///< unstructured dats
  Block *block = nullptr; ///< structured dats
  Type elemType;
  // Structured dats only, one entry per block dimension:
  std::vector<ExprPtr> size;                      ///< integer host exprs
  std::vector<int64_t> haloMinus, haloPlus, base; ///< depths, base index
  DatInit init = DatInit::Zero;
  ExprPtr initValue; ///< Fill: host expression of elemType or its scalar
  ExprPtr initFile;  ///< File: str host expression
  /// Derivative dats (created for adjoint/tangent results and by the
  /// adjoint pass): the primal dat they belong to.
  bool isDerivative = false;
  Dat *primal = nullptr;
  /// Made by a pass to hold values that only that pass's statements read
  /// (the adjoint's copies of P's final state): whatever it holds after
  /// the last of them is dead (passes/deriv/AdjointTape.cpp relies on it).
  bool scratch = false;
  SourceRange range;

  bool structured() const { return block != nullptr; }
  ScalarKind scalar() const { return elemType.scalar; }
  unsigned dim() const { return elemType.dim(); }
  unsigned bytesPerElement() const { return scalarBytes(scalar()) * dim(); }
};

//===----------------------------------------------------------------------===//
// Functions
//===----------------------------------------------------------------------===//

enum class FunctionKind : uint8_t {
  Kernel, ///< applied per element by ParLoops
  Fn,     ///< helper callable from kernels and fns
  Proc,   ///< host procedure
  Main,   ///< the host entry point
};
const char *functionKindName(FunctionKind k);

struct KernelParam {
  std::string name;
  AccessMode mode = AccessMode::Read;
  Type type;                  ///< scalar or array (element of the argument)
  Stencil *stencil = nullptr; ///< `@ S`
  SourceRange range;
};

/// A local variable slot: let/var, for induction, fn/proc parameter, or a
/// result defined by an Adjoint/Tangent statement.
struct Var {
  std::string name;
  Type type;
  bool isMutable = false;
  SourceRange range;
};

struct Function {
  FunctionKind kind = FunctionKind::Fn;
  std::string name;
  std::vector<KernelParam> kernelParams; ///< kernels only
  std::vector<unsigned> params;          ///< fns and procs: parameter slots
  Type returnType = Type::voidType();
  std::vector<Var> vars;
  Body body;
  SourceRange range;

  bool isKernel() const { return kind == FunctionKind::Kernel; }
  bool isHost() const {
    return kind == FunctionKind::Proc || kind == FunctionKind::Main;
  }
  /// Adds a variable slot and returns its number.
  unsigned addVar(std::string name, Type type, bool isMutable,
                  SourceRange r = {});
  /// Deep copy (a new kernel to rewrite, say); references to globals and
  /// other functions are kept. The copy is not added to any Program.
  std::unique_ptr<Function> clone() const;
};

//===----------------------------------------------------------------------===//
// Program
//===----------------------------------------------------------------------===//

/// A scalar gradient of an adjoint request (`wrt (alpha)`, alpha a float
/// parameter of the proc), as the adjoint pass left it: `let gradVar =
/// adjSlot` after the reverse sweep in \c host. adjoint-linear may take the
/// gradient from a tangent of the same call instead, where only alpha's
/// adjoint makes the reverse steps read their state
/// (passes/deriv/AdjointLinear.cpp); it clears the list.
struct ScalarGradient {
  Function *host = nullptr;
  Function *proc = nullptr;   ///< the proc the request differentiates
  std::vector<ExprPtr> args;  ///< the request's arguments, cloned
  unsigned param = 0;         ///< alpha's index among proc's parameters
  unsigned gradVar = 0;       ///< the gradient's variable in host
  unsigned adjSlot = 0;       ///< alpha's adjoint variable in host
  std::vector<Dat *> written; ///< the dats the proc writes
  unsigned request = 0;       ///< the same number for one request's entries
  /// The first statement of the request's expansion in host: a tangent
  /// goes before it, to start from the state the adjoint starts from.
  const Stmt *first = nullptr;
  /// The request's forward sweep, which a tangent may ride along instead:
  /// the statements after \c declsEnd (the expansion's last declaration)
  /// up to the declaration of \c valueSlot (J kept), in one body.
  const Stmt *declsEnd = nullptr;
  unsigned valueSlot = 0;
  unsigned paramSlot = 0;  ///< alpha in host
  unsigned resultSlot = 0; ///< P's result in host
  /// P's float variables in host, its parameters left out.
  std::vector<unsigned> floatVars;
  SourceRange range; ///< the wrt entry
};

struct Program {
  std::string name; ///< `program NAME`

  std::vector<std::unique_ptr<Const>> consts;
  std::vector<std::unique_ptr<Param>> params;
  std::vector<std::unique_ptr<Set>> sets;
  std::vector<std::unique_ptr<Map>> maps;
  std::vector<std::unique_ptr<Block>> blocks;
  std::vector<std::unique_ptr<Stencil>> stencils;
  std::vector<std::unique_ptr<Dat>> dats;

  std::vector<std::unique_ptr<Function>> fns;
  std::vector<std::unique_ptr<Function>> kernels;
  std::vector<std::unique_ptr<Function>> procs;
  std::unique_ptr<Function> main; ///< null only in hand-built test programs

  /// Halo sizes the program's communication-avoiding chains need
  /// (passes/loops/CommAvoid.cpp): exec-halo layers of sets and the minimum
  /// halo depth of block dats between ranks. The defaults are the runtime's.
  int64_t haloLayers = 1, blockHaloDepth = 2;
  /// The target profile's figures for the runtime's communication cost
  /// model (0: not given; the runtime's defaults apply).
  double netLatencyUs = 0, netBandwidthGBs = 0, memBandwidthGBs = 0;
  /// Made by the adjoint pass, used and cleared by adjoint-linear.
  std::vector<ScalarGradient> scalarGradients;

  /// Lookups by name; null when absent.
  Const *findConst(const std::string &n) const;
  Param *findParam(const std::string &n) const;
  Set *findSet(const std::string &n) const;
  Map *findMap(const std::string &n) const;
  Block *findBlock(const std::string &n) const;
  Stencil *findStencil(const std::string &n) const;
  Dat *findDat(const std::string &n) const;
  Function *findKernel(const std::string &n) const;
  Function *findFn(const std::string &n) const;
  Function *findProc(const std::string &n) const;

  /// Every function: fns, kernels, procs, then main.
  std::vector<Function *> functions() const;
};

//===----------------------------------------------------------------------===//
// Constant helpers
//===----------------------------------------------------------------------===//

/// \p v converted component-wise to \p to (a scalar or array type; a scalar
/// value is broadcast to an array type). Floats round to f32 when \p to is
/// f32; floats to integers truncate. Strings are returned as they are.
ConstValue convertConst(const ConstValue &v, Type to);
/// The zero value of a scalar or array type ("" for str).
ConstValue zeroOf(Type t);

} // namespace opdc::ir
#endif
