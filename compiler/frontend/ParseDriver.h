// ParseDriver.h - State of one parse: buffer, scanner, locations, AST building.
// SPDX-License-Identifier: Apache-2.0
//
// The Flex scanner (grammar/opd.ll) and the Bison parser (grammar/opd.yy)
// share one ParseDriver per parse and no global state. The scanner reports
// raw tokens with byte offsets; the driver turns them into SourceRanges
// pointing into the SourceManager's buffer, tracks bracket nesting, and
// implements statement- and declaration-level error recovery (see
// nextToken()). Grammar actions are one-liners calling the make*/add*
// methods below (ASTBuilder.cpp), which build AST nodes; they check syntax
// only.
#ifndef OPDC_FRONTEND_PARSEDRIVER_H
#define OPDC_FRONTEND_PARSEDRIVER_H

#include "ast/AST.h"
#include "support/SourceRange.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace opdc {
class DiagnosticEngine;
class SourceManager;

/// Value of an integer literal token.
struct IntToken {
  int64_t value = 0;
  bool forceI64 = false; ///< written with the i64 suffix
};

/// Value of a floating-point literal token.
struct FloatToken {
  double value = 0; ///< rounded to single precision when isF32
  bool isF32 = false;
  std::string spelling; ///< as written
};

/// A token as the scanner produced it; the parser's yylex turns it into a
/// Bison symbol. `kind` is a token kind of the generated parser.
struct RawToken {
  int kind = 0;
  SourceRange range;
  std::string text; ///< identifiers and (decoded) strings
  IntToken intValue;
  FloatToken floatValue;
  // Bookkeeping for error recovery.
  uint64_t seq = 0;         ///< position in the token stream
  unsigned braceBefore = 0; ///< unclosed '{' before this token
  unsigned parenBefore = 0; ///< unclosed '(' / '[' (since the last brace)
  bool firstOnLine = false; ///< no other token before it on its line
};

/// `out`, `inc`, ... of a kernel parameter (Read when none was written).
struct ParsedMode {
  ast::AccessMode mode = ast::AccessMode::Read;
  SourceRange range;
};

/// `halo M : P` (both the same expression when written once).
struct ParsedHalo {
  ast::ExprPtr minus, plus;
};

/// `= EXPR` or `from EXPR` of a dat.
struct ParsedDatInit {
  ast::DatInit kind = ast::DatInit::Zero;
  ast::ExprPtr expr;
};

/// One argument of `solve NAME(...)`: a name, `name -> to` or
/// `name: value`.
struct ParsedSolveArg {
  ast::NameRef name;
  std::optional<ast::NameRef> to;
  ast::ExprPtr value;
  SourceRange range;
};

/// `solve NAME(ARG, ...)` before what follows it.
struct ParsedSolve {
  ast::NameRef solver;
  std::vector<ParsedSolveArg> args;
  SourceRange range;
};

class ParseDriver {
public:
  /// Deepest bracket nesting ('(', '[' and '{' together) the scanner accepts.
  static constexpr unsigned MaxBracketNesting = 256;
  /// Deepest AST (expressions and statements) the parser builds; deeper
  /// trees (long operator chains, `else if` chains) are reported and cut.
  static constexpr unsigned MaxTreeDepth = 1024;
  /// Largest source file the scanner accepts (Flex counts bytes in int).
  static constexpr size_t MaxBufferSize = size_t(1) << 30;

  ParseDriver(SourceManager &sm, unsigned bufferId, DiagnosticEngine &diags);
  ~ParseDriver();
  ParseDriver(const ParseDriver &) = delete;
  ParseDriver &operator=(const ParseDriver &) = delete;

  /// Runs the parser over the whole buffer. Never returns null.
  std::unique_ptr<ast::Module> parse();

  //===--------------------------------------------------------------------===//
  // Scanner interface (grammar/opd.ll)
  //===--------------------------------------------------------------------===//

  /// Called for every match (YY_USER_ACTION): the token spans the next
  /// \p length bytes.
  void advance(size_t length) {
    tokenOffset = offset;
    offset += length;
  }
  /// Range of the current match.
  SourceRange tokenRange() const { return rangeAt(tokenOffset, offset); }
  SourceRange rangeAt(size_t begin, size_t end) const;
  llvm::StringRef tokenText() const;

  /// Fill \p tok from the current match and return its kind. Number and
  /// string conversion report their own errors and still produce a token,
  /// so that the parser goes on.
  int scanInt(RawToken &tok);
  int scanFloat(RawToken &tok);
  int scanString(RawToken &tok, bool terminated);
  /// `12abc`, `0x`: reported; an integer literal 0 for the parser.
  int scanBadNumber(RawToken &tok);
  /// Returns the token kind: a keyword's, or that of identifiers.
  int scanIdentifier(RawToken &tok);
  /// The language's reserved words, in the scanner's order.
  static std::vector<std::string> keywords();
  /// Reports a lexical error at the current match.
  void lexError(const std::string &message);
  void badCharacters();
  void unterminatedComment();

  //===--------------------------------------------------------------------===//
  // Parser interface (grammar/opd.yy)
  //===--------------------------------------------------------------------===//

  /// The next token for the parser, after error-recovery filtering.
  RawToken nextToken();
  /// Printable name of token kind \p kind, as syntax errors show it:
  /// "identifier", "'kernel'", "'('", "end of file".
  static std::string tokenName(int kind);
  /// The location the parse starts at (empty, at the buffer's start).
  SourceRange startRange() const { return rangeAt(0, 0); }
  /// A syntax error at the lookahead \p where of symbol kind \p unexpected;
  /// \p expected lists the symbol kinds that would have been accepted.
  void syntaxError(SourceRange where, int unexpected,
                   const std::vector<int> &expected);
  void error(SourceRange where, const std::string &message);
  /// Error recovery: the parser shifted `error` in a statement list
  /// (\p topLevel false) or in the declaration list (true); the driver will
  /// skip tokens up to a synchronisation point and emit a SYNC token.
  void startRecovery(bool topLevel);
  /// Text of \p r (for "unexpected identifier 'x'").
  llvm::StringRef textOf(SourceRange r) const;
  /// The `//` comment lines right above the line \p r starts on (no blank
  /// line between), without the slashes, joined by spaces; "" if none or
  /// if \p r does not start its line.
  std::string commentAbove(SourceRange r) const;

  // Module structure.
  void setProgram(const std::string &name, SourceRange range);
  /// `import M` or, with \p alias, `import M as alias`.
  void addImport(const std::string &name, bool isPath, SourceRange range,
                 std::optional<ast::NameRef> alias = std::nullopt);
  /// `import M (a, b)`.
  void addSelectiveImport(const std::string &name, bool isPath,
                          std::vector<ast::NameRef> names, SourceRange range);
  ast::NameRef makeName(const std::string &name, SourceRange range) const;
  ast::NameRef joinDotted(ast::NameRef prefix, const std::string &part,
                          SourceRange range) const;
  /// `alias.member` outside expressions: one name spelled "alias.member".
  ast::NameRef qualify(ast::NameRef alias, ast::NameRef member,
                       SourceRange range) const;

  // Types.
  ast::TypeRef makeType(ScalarKind k, ast::ExprPtr length, SourceRange r);
  ast::TypeRef makeStringType(SourceRange r);

  // Declarations (added to the module in source order).
  void addConst(ast::NameRef name, std::optional<ast::TypeRef> type,
                ast::ExprPtr init, SourceRange range);
  void addParam(ast::NameRef name, ast::TypeRef type, ast::ExprPtr init,
                SourceRange range);
  void addSets(std::vector<ast::NameRef> names, ast::ExprPtr fromFile,
               ast::ExprPtr size, SourceRange range);
  void addMap(ast::NameRef name, ast::NameRef from, ast::NameRef to,
              ast::ExprPtr arity, ast::ExprPtr fromFile, SourceRange range);
  void addDats(std::vector<ast::NameRef> names, ast::NameRef on,
               ast::TypeRef type, std::optional<std::vector<ast::ExprPtr>> size,
               ParsedHalo halo, ast::ExprPtr base, ParsedDatInit init,
               SourceRange range);
  void addBlock(ast::NameRef name, ast::ExprPtr dims, SourceRange range);
  void addStencil(ast::NameRef name,
                  std::vector<ast::StencilDecl::Point> points,
                  SourceRange range);
  ast::StencilDecl::Point makeStencilPoint(std::vector<ast::ExprPtr> offsets,
                                           SourceRange range);
  void addKernel(ast::NameRef name,
                 std::vector<std::unique_ptr<ast::KernelParamDecl>> params,
                 std::unique_ptr<ast::Block> body, SourceRange range);
  std::unique_ptr<ast::KernelParamDecl>
  makeKernelParam(ast::NameRef name, ParsedMode mode, ast::TypeRef type,
                  std::optional<ast::NameRef> stencil, SourceRange range);
  ParsedMode makeMode(ast::AccessMode mode, SourceRange range) const;
  std::unique_ptr<ast::VarDecl> makeParam(ast::NameRef name, ast::TypeRef type,
                                          SourceRange range);
  void addFn(ast::NameRef name,
             std::vector<std::unique_ptr<ast::VarDecl>> params,
             std::optional<ast::TypeRef> ret, std::unique_ptr<ast::Block> body,
             SourceRange range);
  void addProc(ast::NameRef name,
               std::vector<std::unique_ptr<ast::VarDecl>> params,
               std::optional<ast::TypeRef> ret,
               std::unique_ptr<ast::Block> body, SourceRange range);
  void addMain(SourceRange keyword, std::unique_ptr<ast::Block> body,
               SourceRange range);
  ParsedHalo makeHalo(ast::ExprPtr minus, ast::ExprPtr plus) const;
  ParsedDatInit makeDatInit(ast::DatInit kind, ast::ExprPtr e) const;

  // Statements.
  std::unique_ptr<ast::Block> makeBlock(SourceRange range);
  std::unique_ptr<ast::Block> appendStmt(std::unique_ptr<ast::Block> block,
                                         ast::StmtPtr stmt);
  /// Appends the value-less `return` that ends \p block at \p range.
  std::unique_ptr<ast::Block> appendReturn(std::unique_ptr<ast::Block> block,
                                           SourceRange range);
  /// Closes a block: sets its range to the braces.
  std::unique_ptr<ast::Block> finishBlock(std::unique_ptr<ast::Block> block,
                                          SourceRange range);
  ast::StmtPtr makeLet(ast::NameRef name, std::optional<ast::TypeRef> type,
                       ast::ExprPtr init, bool isMutable, SourceRange range);
  ast::StmtPtr makeAssign(ast::AssignOp op, ast::ExprPtr target,
                          ast::ExprPtr value, SourceRange range);
  ast::StmtPtr makeExprStmt(ast::ExprPtr e, SourceRange range);
  ast::StmtPtr makeIf(ast::ExprPtr cond, std::unique_ptr<ast::Block> then,
                      ast::StmtPtr elseStmt, SourceRange range);
  ast::StmtPtr makeFor(ast::NameRef var, ast::RangeExpr bounds,
                       std::unique_ptr<ast::Block> body, SourceRange range);
  ast::StmtPtr makeWhile(ast::ExprPtr cond, std::unique_ptr<ast::Block> body,
                         SourceRange range);
  ast::StmtPtr makeBreak(SourceRange range);
  ast::StmtPtr makeContinue(SourceRange range);
  ast::StmtPtr makeReturn(ast::ExprPtr value, SourceRange range);
  ast::StmtPtr makeLoop(ast::NameRef kernel, ast::NameRef space,
                        std::optional<std::vector<ast::RangeExpr>> ranges,
                        std::vector<ast::ExprPtr> args, SourceRange range);
  ast::StmtPtr makeSwap(ast::NameRef a, ast::NameRef b, SourceRange range);
  ast::StmtPtr makeWriteRange(std::vector<ast::ExprPtr> dats,
                              ast::NameRef space,
                              std::optional<std::vector<ast::RangeExpr>> ranges,
                              ast::ExprPtr file, SourceRange range);
  ast::StmtPtr makeWrite(std::vector<ast::ExprPtr> dats, ast::ExprPtr file,
                         SourceRange range);
  ast::StmtPtr makeRead(std::vector<ast::ExprPtr> dats, ast::ExprPtr file,
                        SourceRange range);
  /// print / printf, or fail (formatted, \p fails).
  ast::StmtPtr makePrint(bool formatted, std::vector<ast::ExprPtr> args,
                         SourceRange range, bool fails = false);
  ParsedSolveArg makeSolveArg(ast::NameRef name, std::optional<ast::NameRef> to,
                              ast::ExprPtr value, SourceRange range);
  ParsedSolve makeSolveCall(ast::NameRef solver,
                            std::vector<ParsedSolveArg> args,
                            SourceRange range);
  /// `solve ... [along E over B[...]]` (\p along null: no `along` clause).
  ast::StmtPtr makeSolve(ParsedSolve call, ast::ExprPtr along,
                         ast::NameRef space,
                         std::optional<std::vector<ast::RangeExpr>> ranges,
                         SourceRange range);
  /// `let (iters, res) = solve ...`.
  ast::StmtPtr makeSolveLet(ast::NameRef iters, ast::NameRef residual,
                            ParsedSolve call, SourceRange range);
  ast::StmtPtr makeAdjoint(ast::NameRef value, ast::NameRef grad,
                           ast::NameRef proc, std::vector<ast::ExprPtr> args,
                           std::vector<ast::NameRef> wrt,
                           ast::ExprPtr checkpoints, SourceRange range);
  ast::StmtPtr makeTangent(ast::NameRef result, ast::NameRef proc,
                           std::vector<ast::ExprPtr> args,
                           std::vector<ast::TangentStmt::Seed> along,
                           SourceRange range);
  ast::TangentStmt::Seed makeSeed(ast::NameRef target, ast::ExprPtr value);
  ast::RangeExpr makeRange(ast::ExprPtr lo, ast::ExprPtr hi, bool inclusive,
                           SourceRange range);
  /// A statement the parser recovered from: an empty block, dropped by
  /// appendStmt.
  ast::StmtPtr makeErrorStmt(SourceRange range);

  // Expressions.
  ast::ExprPtr makeInt(IntToken v, SourceRange r);
  ast::ExprPtr makeFloat(FloatToken v, SourceRange r);
  ast::ExprPtr makeBool(bool v, SourceRange r);
  ast::ExprPtr makeString(const std::string &v, SourceRange r);
  ast::ExprPtr makeNameExpr(ast::NameRef name);
  ast::ExprPtr makeUnary(ast::UnaryOp op, ast::ExprPtr e, SourceRange r);
  ast::ExprPtr makeBinary(ast::BinaryOp op, SourceRange opRange,
                          ast::ExprPtr lhs, ast::ExprPtr rhs, SourceRange r);
  ast::ExprPtr makeCall(ast::NameRef callee, std::vector<ast::ExprPtr> args,
                        SourceRange r);
  ast::ExprPtr makeCast(ScalarKind to, ast::ExprPtr e, SourceRange r);
  ast::ExprPtr makeIndex(ast::ExprPtr base, ast::ExprPtr index, SourceRange r);
  /// `base.field`: a module member ("alias.field" name) when \p base names
  /// an alias imported earlier in the file, else a derivative field.
  ast::ExprPtr makeMember(ast::ExprPtr base, ast::NameRef field, SourceRange r);
  /// `base.f(args)`: only module members can be called.
  ast::ExprPtr makeMemberCall(ast::ExprPtr base, ast::NameRef member,
                              std::vector<ast::ExprPtr> args, SourceRange r);
  ast::ExprPtr makeArray(std::vector<ast::ExprPtr> elements, SourceRange r);

  // Lists (the grammar's left-recursive lists use these).
  template <typename T> std::vector<T> list(T first) const {
    std::vector<T> v;
    v.push_back(std::move(first));
    return v;
  }
  template <typename T> std::vector<T> append(std::vector<T> v, T x) const {
    v.push_back(std::move(x));
    return v;
  }

  DiagnosticEngine &diagnostics() { return diags; }

private:
  struct Scanner;
  RawToken scan();
  bool isRestartToken(const RawToken &t) const;
  /// Depth of the expression tree rooted at \p node (1 for leaves, 0 for
  /// null); forgets it, since the node is being attached to a parent.
  unsigned takeDepth(const void *node);
  /// Records \p e's depth, or replaces a too deep \p e by a leaf (reported
  /// once).
  ast::ExprPtr checked(ast::ExprPtr e, unsigned depth);
  template <typename D> D *own(std::unique_ptr<D> d);

  SourceManager &sm;
  unsigned bufferId;
  DiagnosticEngine &diags;
  llvm::StringRef buffer;
  std::unique_ptr<Scanner> scanner;
  std::unique_ptr<ast::Module> module;

  // Scanner position.
  size_t offset = 0, tokenOffset = 0;

  // Token stream state.
  uint64_t nextSeq = 1;
  unsigned braceDepth = 0, parenDepth = 0;
  std::vector<unsigned> chains; ///< `else if` chain length per brace depth
  int lastKind = 0;             ///< kind of the previous scanned token
  size_t lastEnd = 0;           ///< end offset of the previous token
  RawToken last; ///< the token most recently handed to the parser
  std::optional<RawToken> pending;
  bool fatal = false;

  // Error recovery.
  enum class Recovery { None, Statement, TopLevel };
  Recovery recovery = Recovery::None;
  unsigned recoveryBrace = 0;
  bool recoveryRedeliver = false;
  uint64_t lastRecoverySeq = 0, lastRedeliveredSeq = 0;

  // Depth of expressions built but not yet attached to a parent. Statement
  // nesting is bounded by the scanner (braces and `else if` chains).
  std::unordered_map<const void *, unsigned> depths;
  bool reportedTooDeep = false;
};

} // namespace opdc
#endif
