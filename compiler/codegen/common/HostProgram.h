// HostProgram.h - The host-program form: host statements as runtime calls,
// built once for every backend and printed by each.
// SPDX-License-Identifier: Apache-2.0
//
// What a host statement does at run time is a protocol with the runtime
// (lib/include/opd_rt.h): which functions it calls, in which order, with
// which arguments, under which conditions. Before this form each backend
// wrote the protocol itself (codegen/llvm as IR, codegen/cuda as C++), and
// the two had drifted: the CUDA backend copied tape entries where the CPU
// handed storage over, and never used the snapshots' overwritten flags.
// Now lowerHostStmt (HostLowering.cpp) writes the protocol once, as data;
// a backend's printer (llvm/HostPrinter.cpp, cuda/CUDAHostStmts.cpp)
// turns each operation into IR or C++ and decides nothing. What differs
// between backends is a fact of the target (HostTraits), asked in one
// place, and the form says it explicitly: residency operations (the host
// copy of a dat must be current; the host copy changed) that a backend
// without device copies prints as nothing.
//
// The form is small on purpose: runtime calls, locals (i64/i32 scalars
// and i64 arrays, tables of C structs), stores, the IR variables' values
// as 64-bit words, IR expressions and bodies (printed by the backend's own
// statement emitter), `if`, a counted loop, the checkpoint plan's dispatch
// loop, a reduction's combine, and a loop's Phase (the backend's own part).
// dump() prints it for tests (tests/unit/HostLoweringTest.cpp).
#ifndef OPDC_CODEGEN_COMMON_HOSTPROGRAM_H
#define OPDC_CODEGEN_COMMON_HOSTPROGRAM_H

#include "analysis/LoopAccess.h"
#include "ir/IR.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace opdc {
class DiagnosticEngine;
} // namespace opdc

namespace opdc::host {

/// Types of locals, constants and converted expressions.
/// W64: a 64-bit word of a host variable's bits (the tape's and the
/// snapshots' unit; uint64_t in C).
enum class Ty : uint8_t { I32, I64, W64, Ptr };

/// A value passed to a runtime call or stored.
struct Operand {
  enum class Kind : uint8_t {
    /// `value` as `ty` (I32 or I64); `text`, when not empty, names the C
    /// enum type of the parameter it is passed to (opd_scalar, opd_access)
    Int,
    Str,       ///< the string constant `text`
    Null,      ///< a null pointer
    Handle,    ///< the handle of `dat`, `set`, `map` or `block` (one is set)
    Dats,      ///< an array of the handles of `dats`; a null pointer if empty
    Bytes,     ///< a constant array of the bytes `bytes` (`text`: a name hint)
    Local,     ///< the value of scalar local `local`
    LocalAt,   ///< element `value` of array local `local`
    LocalAddr, ///< the address of local `local` (its first element)
    Diff,      ///< local `local` minus local `other` (I64)
    Expr,      ///< IR expression `expr`, converted by `conv`
    VarBits,   ///< element `value` of IR variable slot `var` as 64 bits
    VarAddr,   ///< the address of IR variable slot `var` (its first element)
    Plus,      ///< parts[0] + `value` (I64)
    I64s,      ///< a constant array of the int64_t `ints` (`text`: a name hint)
    /// A constant array of C structs `text`, each of fields `fields` (Ptr
    /// fields null), the values `ints` (row-major, fields.size() a row);
    /// `names`: the fields' C names, for a table's StoreField.
    Rows,
  };
  /// Conversions of an IR expression's value.
  enum class Conv : uint8_t {
    None,  ///< as it is (strings, floats)
    ToI64, ///< integers sign-extended, bool zero-extended, to int64_t
    ToI32, ///< to int32_t (bool zero-extended)
    ToF64, ///< a float widened to double (C variadic arguments)
  };
  Kind kind = Kind::Int;
  Ty ty = Ty::I64;
  Conv conv = Conv::None;
  int64_t value = 0;
  int local = -1, other = -1;
  unsigned var = 0;
  std::string text;
  const ir::Dat *dat = nullptr;
  const ir::Set *set = nullptr;
  const ir::Map *map = nullptr;
  const ir::Block *block = nullptr;
  std::vector<const ir::Dat *> dats;
  std::vector<uint8_t> bytes;
  const ir::Expr *expr = nullptr;
  std::vector<Operand> parts;
  std::vector<int64_t> ints;
  std::vector<Ty> fields;
  std::vector<std::string> names;

  static Operand i32(int64_t v);
  static Operand i64(int64_t v);
  static Operand str(std::string s);
  static Operand null();
  static Operand enumValue(std::string ctype, int64_t v);
  static Operand handle(const ir::Dat *d);
  static Operand handle(const ir::Set *s);
  static Operand handle(const ir::Map *m);
  static Operand handle(const ir::Block *b);
  static Operand datList(const std::vector<ir::Dat *> &ds);
  static Operand byteTable(std::string hint, std::vector<uint8_t> b);
  static Operand read(int l);
  static Operand at(int l, int64_t index);
  static Operand addr(int l);
  static Operand diff(int l, int minus);
  static Operand ir(const ir::Expr &e, Conv c = Conv::None);
  static Operand varBits(unsigned slot, unsigned element);
  static Operand varAddr(unsigned slot);
  static Operand plus(Operand x, int64_t c);
  static Operand table(std::string hint, std::vector<int64_t> v);
  static Operand rows(std::string ctype, std::vector<Ty> fields,
                      std::vector<int64_t> values);
};

/// Signed comparisons of an `If`.
enum class Pred : uint8_t { Eq, Ne, Lt, Gt, Ge };

struct Op {
  enum class Kind : uint8_t {
    Call,       ///< [local `result` =] `fn`(`args`)
    Store,      ///< element `index` of local `local` (0 for a scalar) = args[0]
    StoreField, ///< field `field` of row `index` of table local `local` =
                ///< args[0]
    SetVar,     ///< IR variable slot `var` = args[0] (an integer, converted)
    SetVarBits, ///< element `index` of IR variable `var` from 64 bits args[0]
    Run,        ///< the IR statements `body`
    If,         ///< if (args[0] `pred` args[1]) `then` else `otherwise`
    For,        ///< for (local = args[0]; local < args[1]; ++local) `then`
    /// for (;;) { local `result` = `fn`(`args`); the case whose value it
    /// is runs, and the loop goes on; any other value leaves the loop }
    Dispatch,
    NeedHost,  ///< residency: the host copy of `dat` must be current
    HostWrote, ///< residency: the host copy of `dat` changed
    /// A reduction's partial combined: element `index` of IR variable
    /// `var` = itself (`mode`) element args[1] * `dim` + `index` of the
    /// partials at args[0] (values of the variable's scalar type), in the
    /// arithmetic of the language.
    Combine,
    /// The backend's own phase of a loop (the context, the run or the
    /// launches). A printer prints the operations up to it and resumes
    /// after it when the backend has printed its phase.
    Phase,
  };
  Kind kind = Kind::Call;
  std::string fn;
  std::vector<Operand> args;
  int result = -1;
  int local = -1;
  int64_t index = 0;
  int field = -1;
  unsigned var = 0;
  ir::AccessMode mode = ir::AccessMode::Sum;
  unsigned dim = 1;
  Pred pred = Pred::Eq;
  const ir::Body *body = nullptr;
  const ir::Dat *dat = nullptr;
  std::vector<Op> then, otherwise;
  std::vector<std::pair<int32_t, std::vector<Op>>> cases;
};

/// Where each field of a Rows operand is in the C struct: flat field f is
/// struct field at[f].first, element at[f].second of an array there (-1:
/// not in an array). Fields named `x[0]`, `x[1]`, ... form array `x`.
std::vector<std::pair<unsigned, int>> rowFields(const Operand &rows);

/// The IR name of a Handle operand's dat, set, map or block.
std::string handleName(const Operand &o);

/// Builders of operations.
Op call(std::string fn, std::vector<Operand> args, int result = -1);
Op residency(Op::Kind k, const ir::Dat *d);
Op store(int local, int64_t index, Operand v);
Op run(const ir::Body &b);
Op setVar(unsigned var, Operand v);
Op setVarBits(unsigned var, unsigned element, Operand bits);
Op ifThen(Operand l, Pred p, Operand r, std::vector<Op> then,
          std::vector<Op> otherwise = {});
/// for (local = lo; local < hi; ++local) body
Op forRange(int local, Operand lo, Operand hi, std::vector<Op> body);
Op storeField(int table, int64_t row, int field, Operand v);

/// A local of the program: a scalar (`length` 0) or an array of `length`.
struct Local {
  Ty ty = Ty::I64;
  unsigned length = 0;
  std::string name; ///< a hint for the printer
  /// Kept from one run of the statement to the next (a cache the runtime
  /// fills on the first call), starting at zero.
  bool persistent = false;
  /// Code the backend writes itself after the program refers to this
  /// local by its name: a printer must print `name` as it is, prefixed.
  bool exactName = false;
  /// Ptr locals: the C type pointed to ("opd_loop"); void when empty.
  std::string pointee;
  /// A table (Kind::Rows, `length` its rows): persistent, starting as
  /// these rows; its fields written with StoreField.
  Operand table;
  bool isTable() const { return table.kind == Operand::Kind::Rows; }
};

/// One host statement in the form: its locals and operations.
struct Program {
  std::vector<Local> locals;
  std::vector<Op> ops;
  int addLocal(Ty ty, unsigned length, std::string name) {
    Local l;
    l.ty = ty;
    l.length = length;
    l.name = std::move(name);
    locals.push_back(std::move(l));
    return int(locals.size() - 1);
  }
};

/// What the protocol asks of the target (one rule each, decided here for
/// every backend).
struct HostTraits {
  /// Dats have device copies keyed by their host storage (the CUDA
  /// backend): residency operations matter, and the runtime keeps the
  /// adjoint's saved dats in the backend's device store
  /// (opd_rt_adjoint_store), which saves by copy (no take at a later
  /// loop's prepare) and reads and writes the device copies itself.
  bool deviceCopies = false;
  /// The target solves `solve tridiagonal` on the device copies
  /// (lib/cuda/opd_cuda_tridiag.cuh): the solve is one call of
  /// opd::solve_tridiagonal, with no residency operations around it.
  bool deviceSolves = false;
};

/// The 64-bit words a host variable takes on the tape or in a snapshot (an
/// array's length, else 1), and those of a list of variables.
unsigned varWords(const ir::Function &fn, unsigned slot);
unsigned varWords(const ir::Function &fn, const std::vector<unsigned> &vars);

/// Whether lowerHostStmt writes \p s (every host statement but loops).
bool isProtocolStmt(const ir::Stmt &s);
/// Whether main calls opd_rt_mesh_ready once it has created the mesh: the
/// program has a loop over a set, and no loop that fills a map (such a
/// loop runs on the whole set before the sets are distributed, so the
/// runtime distributes them at the first loop after it, as before).
bool meshReadyAtStart(const ir::Program &p);
/// -frepro-sum (\p reproSum): argument \p a is a float sum summed exactly
/// (OPD_XSUM_WORDS words a component and chunk, opd_reduce_sum_exact).
bool exactSum(const ir::AccessDescriptor &a, bool reproSum);
/// -frepro-sum on a set loop whose only cross-element writes are
/// increments through maps: each element's increments go to its row of a
/// runtime buffer (opd_loop_gather) that the runtime adds in element order.
bool gatherIncrements(const ir::ParLoopStmt &loop, const LoopAccess &access,
                      bool reproSum);

/// What a backend decides about a parallel loop, for lowerLoop.
struct LoopTraits {
  /// Over a block: the length of the range arrays lo/hi (>= the block's
  /// dimensions; the rest 0 .. 1).
  unsigned rangeLength = 3;
  std::string location; ///< "file.opd:L:C", for messages
  std::string name;     ///< the loop's name in profiles and errors
  /// When not empty: the name while the runtime's `stagingCall` says the
  /// loop's increments are staged (a CUDA strategy the runtime picks).
  std::string stagedName, stagingCall;
  /// The backend adds indirect increments atomically (OPD_ARG_ATOMIC).
  bool atomicIncrements = false;
  bool reproSum = false; ///< -frepro-sum
};

/// The locals of a loop's program the backend's phase uses.
struct LoopProgram {
  int lo = -1, hi = -1; ///< over a block: "lo", "hi" (exact names)
  int loop = -1;        ///< the prepared opd_loop * ("l", an exact name)
  /// Set by the phase: per reduction argument (else -1), a pointer to its
  /// partials in host memory (exact sums: the accumulators), `chunks` of
  /// them, in the order of combination.
  std::vector<int> partials;
  int chunks = -1;
};

/// A parallel loop in the form: over a block its range and the checks that
/// the range stays within every dat's halo; the chain's grouped halo
/// exchange and the loop's extension (passes/loops/CommAvoid.cpp); the
/// argument table and the runtime's prepare; the backend's Phase; then
/// each reduction combined, across ranks too (LoopLowering.cpp).
LoopProgram lowerLoop(const ir::ParLoopStmt &loop, const LoopAccess &access,
                      const LoopTraits &traits, Program &out);

/// \p s of \p fn in the form. False after an error reported to \p diags (a
/// statement the pipeline should have expanded).
bool lowerHostStmt(const ir::Function &fn, const ir::Stmt &s,
                   const HostTraits &traits, DiagnosticEngine &diags,
                   Program &out);

/// The program as text, an operation a line (tests and debugging).
std::string dump(const Program &p);

} // namespace opdc::host
#endif
