// ASTPrinterTest.cpp - Unit tests of the AST text dump (--emit=ast).
// SPDX-License-Identifier: Apache-2.0
#include "ast/ASTPrinter.h"
#include "ast/AST.h"
#include "frontend/Parser.h"
#include "support/Diagnostics.h"
#include "support/SourceManager.h"

#include "llvm/Support/Casting.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <string>

using namespace opdc;
using namespace opdc::ast;
using llvm::cast;

namespace {

struct Printed {
  SourceManager sm;
  std::string diagText;
  llvm::raw_string_ostream diagOs{diagText};
  DiagnosticEngine diags{sm, diagOs};
  std::unique_ptr<Module> module;

  explicit Printed(llvm::StringRef text) {
    module = parseModule(sm, sm.addBuffer(text, "dir/print.opd"), diags);
  }
  std::string print(bool withLocations) {
    std::string out;
    llvm::raw_string_ostream os(out);
    printModule(*module, os, withLocations ? &sm : nullptr);
    return out;
  }
};

const char *Program = R"(program heat
import std.math
const k: f64 = 0.5
set cells size 8
dat t: cells f64 = 1.0
kernel scale(x: inout f64, s: sum f64) {
  x *= k
  s += x
}
main {
  var total = 0.0
  loop scale over cells (t, total)
  print(total)
}
)";

TEST(ASTPrinter, PrintsParsedProgram) {
  Printed p(Program);
  ASSERT_FALSE(p.diags.hasErrors()) << p.diagText;
  EXPECT_EQ(p.print(false), R"(program heat
  import std.math
  const k: f64
    init: float 0.5
  set cells
    size: int 8
  dat t: cells f64
    fill: float 1.0
  kernel scale
    param x: inout f64
    param s: sum f64
    block
      assign *=
        name x
        name k
      assign +=
        name s
        name x
  main
    block
      var total
        init: float 0.0
      loop scale over cells
        arg
          name t
        arg
          name total
      print
        name total
)");
}

TEST(ASTPrinter, LocationsOnDeclarationsAndStatements) {
  Printed p(Program);
  ASSERT_FALSE(p.diags.hasErrors()) << p.diagText;
  std::string out = p.print(true);
  EXPECT_NE(out.find("  import std.math <2:1>\n"), std::string::npos) << out;
  EXPECT_NE(out.find("  kernel scale <6:1>\n"), std::string::npos) << out;
  EXPECT_NE(out.find("    param s: sum f64 <6:28>\n"), std::string::npos)
      << out;
  EXPECT_NE(out.find("      assign *= <7:3>\n        name x\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("      loop scale over cells <12:3>\n        arg\n"),
            std::string::npos)
      << out;
}

TEST(ASTPrinter, ModuleUsesBaseName) {
  Printed p("const a = 1");
  EXPECT_EQ(p.print(false), "module print.opd\n  const a\n    init: int 1\n");
}

TEST(ASTPrinter, StatementsAndExpressions) {
  Printed p(R"(proc f(a: f64) -> f64 {
  let x: f64[2] = [a, -a]
  if x[0] < 1.0 && !b { return f64(2) } else if c { } else { }
  for i in 0..=n { u(-1, 0)[1] = min(i, 2) }
  while false { break }
  swap(u, v)
  write q, dJ.x to "o.h5"
  printf("%d\n", 1i64)
  solve tridiagonal(a, b, c, d) along 0 over g[1..n]
  let (J, dJ) = adjoint obj(a) wrt (x) checkpoints 3
  let t = tangent obj(a) along (x: dx)
  return 1.4f
}
)");
  ASSERT_FALSE(p.diags.hasErrors()) << p.diagText;
  EXPECT_EQ(p.print(false), R"(module print.opd
  proc f -> f64
    param a: f64
    block
      let x: f64[2]
        init: array
          name a
          unary -
            name a
      if
        cond: binary &&
          binary <
            index
              name x
              int 0
            float 1.0
          unary !
            name b
        then: block
          return
            cast f64
              int 2
        else: if
          cond: name c
          then: block
          else: block
      for i in ..=
        lo: int 0
        hi: name n
        block
          assign =
            index
              call u
                unary -
                  int 1
                int 0
              int 1
            call min
              name i
              int 2
      while
        cond: bool false
        block
          break
      swap u v
      write
        dat: name q
        dat: member .x
          name dJ
        file: string "o.h5"
      printf
        string "%d\n"
        int 1i64
      solve tridiagonal(a, b, c, d) over g
        along: int 0
        range ..
          int 1
          name n
      adjoint (J, dJ) = obj wrt (x)
        arg: name a
        checkpoints: int 3
      tangent t = obj
        arg: name a
        along x: name dx
      return
        float 1.4f
)");
}

TEST(ASTPrinter, StructuredDeclarations) {
  Printed p("block grid[2]\nstencil s = [(0, 0), (1, -1)]\n"
            "dat u: grid f64[2] size [nx, 4] halo 1 : [0, 2] base [0, 0] "
            "from \"u.h5\"\nmap m: a -> b[2]\nparam n: i32 = 3\n");
  ASSERT_FALSE(p.diags.hasErrors()) << p.diagText;
  EXPECT_EQ(p.print(false), R"(module print.opd
  block grid
    dims: int 2
  stencil s
    point
      int 0
      int 0
    point
      int 1
      unary -
        int 1
  dat u: grid f64[2]
    size: name nx
    size: int 4
    halo-: int 1
    halo+: array
      int 0
      int 2
    base: array
      int 0
      int 0
    from: string "u.h5"
  map m: a -> b
    arity: int 2
  param n: i32
    init: int 3
)");
}

TEST(ASTPrinter, PrintsSemaAnnotations) {
  Printed p("const k = 2 * 3\nset cells size 4\ndat t: cells f64\n"
            "kernel inc1(x: inout f64) { x += 1.0 }\n"
            "main { loop inc1 over cells (t) }\n");
  ASSERT_FALSE(p.diags.hasErrors()) << p.diagText;
  // Annotate by hand what sema would.
  auto *k = cast<ConstDecl>(p.module->decls[0].get());
  k->value = ConstValue::ofInt(ScalarKind::I32, 6);
  k->init->type = Type::scalarOf(ScalarKind::I32);
  auto *t = cast<DatDecl>(p.module->decls[2].get());
  t->elemType.resolved = Type::scalarOf(ScalarKind::F64);
  auto *kern = cast<KernelDecl>(p.module->decls[3].get());
  auto *m = cast<MainDecl>(p.module->decls[4].get());
  auto *loop = cast<LoopStmt>(m->body->stmts[0].get());
  LoopArg &arg = loop->args[0];
  arg.kind = ArgKind::Direct;
  arg.param = kern->params[0].get();
  arg.dat = t;
  auto *name = cast<NameExpr>(arg.expr.get());
  name->decl = t;
  name->type = Type::scalarOf(ScalarKind::F64);
  std::string out = p.print(false);
  EXPECT_NE(out.find("  const k = 6\n    init: binary * : i32\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("        arg direct inout\n"
                     "          name t -> dat : f64\n"),
            std::string::npos)
      << out;
}

} // namespace
