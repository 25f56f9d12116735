// CodeGenModule.h - Module-wide state of the LLVM CPU backend.
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_CODEGEN_LLVM_CODEGENMODULE_H
#define OPDC_CODEGEN_LLVM_CODEGENMODULE_H

#include "codegen/llvm/LLVMCodeGen.h"
#include "codegen/llvm/RuntimeABI.h"

#include "ast/Type.h"
#include "support/SourceRange.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/Module.h"

#include <string>

namespace opdc {
class DiagnosticEngine;

namespace ir {
struct Program;
struct Param;
struct Set;
struct Map;
struct Block;
struct Dat;
struct Function;
} // namespace ir

/// Everything shared by the emitters of one program: the module, the
/// runtime declarations, value types, the globals holding params and mesh
/// handles, the LLVM functions of fns and procs, and the TBAA tags.
class CodeGenModule {
public:
  CodeGenModule(const ir::Program &program, llvm::Module &module,
                llvm::TargetMachine &tm, const CPUCodeGenOptions &options,
                DiagnosticEngine &diags);

  /// Emits the whole program. Returns false if an error was reported.
  bool emitProgram();

  const ir::Program &program;
  llvm::Module &module;
  llvm::LLVMContext &context;
  llvm::TargetMachine &targetMachine;
  const CPUCodeGenOptions &options;
  DiagnosticEngine &diags;
  RuntimeABI rt;

  llvm::PointerType *ptrTy;
  llvm::IntegerType *i1Ty, *i8Ty, *i32Ty, *i64Ty;

  /// The type of a scalar in memory (bool: i8) and in a register (bool: i1).
  llvm::Type *memType(ScalarKind k) const;
  llvm::Type *regType(ScalarKind k) const;
  /// Storage of a value of type \p t: a scalar's memory type, [N x memType]
  /// for arrays, ptr for strings.
  llvm::Type *storageType(const Type &t) const;
  /// How a value of type \p t is passed to and returned from functions: a
  /// scalar's register type, [N x memType] for arrays, ptr for strings, void.
  llvm::Type *valueType(const Type &t) const;
  /// The constant \p v in memory form (bool as i8; arrays as arrays; a
  /// string as a pointer to its characters).
  llvm::Constant *memConstant(const ConstValue &v);
  /// A pointer to a NUL-terminated private copy of \p s (one per string).
  llvm::Constant *string(llvm::StringRef s);

  llvm::GlobalVariable *paramStorage(const ir::Param *p) const;
  /// Internal globals holding the runtime's handle of each mesh object,
  /// stored once by main's start-up code.
  llvm::GlobalVariable *handle(const ir::Set *s) const;
  llvm::GlobalVariable *handle(const ir::Map *m) const;
  llvm::GlobalVariable *handle(const ir::Block *b) const;
  llvm::GlobalVariable *handle(const ir::Dat *d) const;
  /// The LLVM function of a fn or proc.
  llvm::Function *function(const ir::Function *f) const;

  /// "file:line:col" of \p r (file by its base name), or the program name
  /// when \p r is invalid: the prefix of run-time error messages.
  std::string location(SourceRange r) const;

  /// Target CPU and features of the TargetMachine, nounwind, and the
  /// floating-point attributes every generated function carries.
  void addFunctionAttributes(llvm::Function &f) const;

  /// TBAA tags separating the kinds of memory generated code touches
  /// through pointers: dat storage, map storage, params and the column
  /// tables of loop bodies (ColumnTables.cpp). They never alias, so a
  /// param, map or table load can stay in a register across stores to dats.
  llvm::MDNode *tbaaDat = nullptr, *tbaaMap = nullptr, *tbaaParam = nullptr,
               *tbaaTable = nullptr;

  /// A fresh number for the globals and functions of one parallel loop.
  unsigned newLoopId() { return loopCount++; }

private:
  void emitParams();
  void emitHandles();
  void declareFunctions();
  void emitFunctionBodies();
  void emitMain();

  llvm::DenseMap<const void *, llvm::GlobalVariable *> globals;
  llvm::DenseMap<const ir::Function *, llvm::Function *> functions;
  llvm::StringMap<llvm::Constant *> strings;
  llvm::GlobalVariable *paramTable = nullptr;
  unsigned loopCount = 0;
};

} // namespace opdc
#endif
