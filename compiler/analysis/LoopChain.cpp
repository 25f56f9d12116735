// LoopChain.cpp - Loop chains: runs of parallel loops with no host dependence.
// SPDX-License-Identifier: Apache-2.0
//
// The rules are in LoopChain.h. A host statement may stay inside a chain
// only when nothing it does can observe or change what the chain's loops
// do: it computes host values from params, constants, sizes and host
// variables the loops do not produce. Anything the walk cannot see through
// (a proc call may run loops and print) ends the chain.
#include "analysis/LoopChain.h"

#include "ir/IR.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"

#include "llvm/Support/Casting.h"

#include <algorithm>
#include <set>

namespace opdc {

using namespace ir;
using llvm::dyn_cast;

namespace {

/// Variable slots, proc calls and clock reads of host code.
struct HostUses : IRVisitor {
  std::set<unsigned> slots;
  bool procCall = false, clock = false;
  void visitVarRef(const VarRefExpr &e) override { slots.insert(e.slot); }
  void visitDecl(const DeclStmt &s) override {
    slots.insert(s.slot);
    IRVisitor::visitDecl(s);
  }
  void visitFor(const ForStmt &s) override {
    slots.insert(s.slot);
    IRVisitor::visitFor(s);
  }
  void visitParLoop(const ParLoopStmt &s) override {
    for (const AccessDescriptor &a : s.args)
      if (a.var >= 0)
        slots.insert(unsigned(a.var));
    IRVisitor::visitParLoop(s);
  }
  void visitCall(const CallExpr &e) override {
    if (e.callee && e.callee->kind != FunctionKind::Fn)
      procCall = true;
    IRVisitor::visitCall(e);
  }
  void visitIntrinsic(const IntrinsicExpr &e) override {
    if (e.id == Intrinsic::Wtime)
      clock = true;
    IRVisitor::visitIntrinsic(e);
  }
};

std::vector<unsigned> sorted(const std::set<unsigned> &s) {
  return {s.begin(), s.end()};
}

ChainEnd endOf(const Stmt &s) {
  switch (s.kind) {
  case StmtKind::Swap:
    return ChainEnd::Swap;
  case StmtKind::Write:
  case StmtKind::Read:
    return ChainEnd::DatIO;
  case StmtKind::Print:
    return ChainEnd::Print;
  case StmtKind::Solve:
    return ChainEnd::Solve;
  case StmtKind::Adjoint:
  case StmtKind::Tangent:
  case StmtKind::Tape:       // a tape push must see the dats as the loops
  case StmtKind::Checkpoint: // before it left them
    return ChainEnd::Derivative;
  case StmtKind::Eval:
    return ChainEnd::ProcCall;
  case StmtKind::If:
  case StmtKind::For:
  case StmtKind::While:
  case StmtKind::Break:
  case StmtKind::Continue:
  case StmtKind::Return:
  case StmtKind::Decl:
  case StmtKind::Assign:
  case StmtKind::ParLoop:
    break;
  }
  return ChainEnd::ControlFlow;
}

void addAccesses(LoopChain &c, unsigned loopIndex) {
  const ParLoopStmt &l = *c.loops[loopIndex];
  for (unsigned i = 0; i < l.args.size(); ++i) {
    const AccessDescriptor &a = l.args[i];
    if (!a.usesDat())
      continue;
    ChainAccess acc;
    acc.loop = loopIndex;
    acc.arg = i;
    acc.mode = a.mode;
    acc.kind = a.kind;
    acc.map = a.map;
    acc.mapIndex = a.mapIndex;
    acc.stencil = a.stencil;
    if (a.kind == ArgKind::Indirect) {
      acc.centre = false;
    } else if (a.kind == ArgKind::Stencil && a.stencil &&
               !a.stencil->isCentreOnly()) {
      acc.centre = false;
      for (const std::vector<int64_t> &p : a.stencil->points)
        if (std::any_of(p.begin(), p.end(), [](int64_t v) { return v != 0; })) {
          acc.offset = p;
          break;
        }
    }
    auto it = std::find_if(c.dats.begin(), c.dats.end(),
                           [&](const ChainDat &d) { return d.dat == a.dat; });
    if (it == c.dats.end()) {
      c.dats.push_back({a.dat, {}});
      it = c.dats.end() - 1;
    }
    it->accesses.push_back(std::move(acc));
  }
}

void collect(const Body &body, std::vector<LoopChain> &out, bool nested);

void collectNested(const Stmt &s, std::vector<LoopChain> &out) {
  if (auto *i = dyn_cast<IfStmt>(&s)) {
    collect(i->thenBody, out, true);
    collect(i->elseBody, out, true);
  } else if (auto *f = dyn_cast<ForStmt>(&s)) {
    collect(f->body, out, true);
  } else if (auto *w = dyn_cast<WhileStmt>(&s)) {
    collect(w->body, out, true);
  } else if (auto *c = dyn_cast<CheckpointStmt>(&s)) {
    collect(c->body, out, true);
    collect(c->reverseBody, out, true);
    collect(c->tapedBody, out, true);
    collect(c->tapedReverseBody, out, true);
  }
}

// Chains of `body` in order, with those of nested bodies placed where
// their statement is, so that the result is in source order.
void collect(const Body &body, std::vector<LoopChain> &out, bool nested) {
  std::vector<LoopChain> here = findLoopChains(body);
  size_t next = 0;
  for (size_t i = 0; i < body.stmts.size(); ++i) {
    while (next < here.size() && here[next].loopStmts.front() <= i)
      out.push_back(std::move(here[next++]));
    if (nested)
      collectNested(*body.stmts[i], out);
  }
  while (next < here.size())
    out.push_back(std::move(here[next++]));
}

} // namespace

bool ChainDat::written() const {
  return std::any_of(accesses.begin(), accesses.end(),
                     [](const ChainAccess &a) { return modeWrites(a.mode); });
}

const char *chainEndText(ChainEnd e) {
  switch (e) {
  case ChainEnd::EndOfBody:
    return "end of the block";
  case ChainEnd::Swap:
    return "swap";
  case ChainEnd::DatIO:
    return "file I/O";
  case ChainEnd::Print:
    return "print";
  case ChainEnd::Solve:
    return "solve";
  case ChainEnd::Derivative:
    return "derivative request or its tape";
  case ChainEnd::ControlFlow:
    return "control flow";
  case ChainEnd::ProcCall:
    return "proc call";
  case ChainEnd::ReductionUse:
    return "host use of a reduction result";
  case ChainEnd::Clock:
    return "wtime()";
  }
  return "";
}

const ChainDat *LoopChain::find(const Dat *dat) const {
  for (const ChainDat &d : dats)
    if (d.dat == dat)
      return &d;
  return nullptr;
}

std::vector<unsigned> hostSlotsUsed(const Stmt &s) {
  HostUses u;
  u.visitStmt(s);
  return sorted(u.slots);
}

std::vector<unsigned> loopSlotsUsed(const ParLoopStmt &loop) {
  HostUses u;
  u.visitStmt(loop);
  return sorted(u.slots);
}

std::vector<LoopChain> findLoopChains(const Body &body) {
  std::vector<LoopChain> chains;
  LoopChain cur;
  std::set<unsigned> reductionVars; // of the current chain's loops
  std::vector<size_t> pendingHost;  // after the current chain's last loop
  auto finish = [&](size_t at, ChainEnd why, int var) {
    if (!cur.loops.empty()) {
      cur.endStmt = at;
      cur.end = why;
      cur.endVar = var;
      chains.push_back(std::move(cur));
    }
    cur = LoopChain();
    cur.body = &body;
    reductionVars.clear();
    pendingHost.clear();
  };
  cur.body = &body;
  for (size_t i = 0; i < body.stmts.size(); ++i) {
    const Stmt &s = *body.stmts[i];
    if (auto *l = dyn_cast<ParLoopStmt>(&s)) {
      cur.hostStmts.insert(cur.hostStmts.end(), pendingHost.begin(),
                           pendingHost.end());
      pendingHost.clear();
      cur.loopStmts.push_back(i);
      cur.loops.push_back(l);
      cur.access.push_back(analyzeLoopAccess(*l));
      addAccesses(cur, unsigned(cur.loops.size() - 1));
      for (const AccessDescriptor &a : l->args)
        if (a.kind == ArgKind::Reduction && a.var >= 0)
          reductionVars.insert(unsigned(a.var));
      continue;
    }
    if (s.kind == StmtKind::Decl || s.kind == StmtKind::Assign) {
      if (cur.loops.empty())
        continue;
      HostUses u;
      u.visitStmt(s);
      if (u.procCall) {
        finish(i, ChainEnd::ProcCall, -1);
        continue;
      }
      if (u.clock) {
        finish(i, ChainEnd::Clock, -1);
        continue;
      }
      int used = -1;
      for (unsigned v : u.slots)
        if (reductionVars.count(v)) {
          used = int(v);
          break;
        }
      if (used >= 0) {
        finish(i, ChainEnd::ReductionUse, used);
        continue;
      }
      pendingHost.push_back(i);
      continue;
    }
    finish(i, endOf(s), -1);
  }
  finish(body.stmts.size(), ChainEnd::EndOfBody, -1);
  return chains;
}

LoopChain subChain(const LoopChain &chain, size_t first, size_t last) {
  LoopChain c;
  c.body = chain.body;
  for (size_t k = first; k < last; ++k) {
    c.loopStmts.push_back(chain.loopStmts[k]);
    c.loops.push_back(chain.loops[k]);
    c.access.push_back(chain.access[k]);
    addAccesses(c, unsigned(k - first));
  }
  if (!c.loopStmts.empty())
    for (size_t h : chain.hostStmts)
      if (h > c.loopStmts.front() && h < c.loopStmts.back())
        c.hostStmts.push_back(h);
  c.endStmt = last < chain.loops.size() ? chain.loopStmts[last] : chain.endStmt;
  c.end = chain.end;
  c.endVar = chain.endVar;
  return c;
}

std::vector<LoopChain> findAllLoopChains(const Function &f) {
  std::vector<LoopChain> out;
  collect(f.body, out, true);
  return out;
}

ChainHaloDepths chainHaloDepths(const LoopChain &c) {
  ChainHaloDepths r;
  const size_t n = c.loops.size();
  // One iteration space: the same block and the same range (bounds printed
  // alike, or whole-block loops over the same extent dat).
  auto rangeText = [](const ParLoopStmt &l) {
    std::string s;
    for (const LoopRange &rg : l.ranges)
      s += exprToString(*rg.lo) + ".." + exprToString(*rg.hi) + ";";
    return s;
  };
  for (size_t k = 0; k < n; ++k) {
    const ParLoopStmt &l = *c.loops[k];
    if (!l.block) {
      r.notApplicable = "loop '" + l.kernel->name + "' runs over a set";
      return r;
    }
    if (l.block != c.loops[0]->block ||
        rangeText(l) != rangeText(*c.loops[0]) ||
        (l.ranges.empty() && c.access[k].extentDat != c.access[0].extentDat)) {
      r.notApplicable = "loops '" + c.loops[0]->kernel->name + "' and '" +
                        l.kernel->name + "' run over different ranges";
      return r;
    }
  }
  r.lo.assign(n, {});
  r.hi.assign(n, {});
  // Backward: what later loops read of a dat widens its writers' ranges.
  for (size_t l = n; l-- > 0;) {
    for (const ChainDat &d : c.dats) {
      bool writes = false;
      for (const ChainAccess &a : d.accesses)
        writes = writes || (a.loop == l && modeWrites(a.mode));
      if (!writes)
        continue;
      for (const ChainAccess &a : d.accesses) {
        if (a.loop <= l || !modeReads(a.mode))
          continue;
        const ArgAccess &ext = c.access[a.loop].args[a.arg];
        for (unsigned dim = 0; dim < MaxLoopDims; ++dim) {
          r.lo[l][dim] =
              std::max(r.lo[l][dim], r.lo[a.loop][dim] - ext.lo[dim]);
          r.hi[l][dim] =
              std::max(r.hi[l][dim], r.hi[a.loop][dim] + ext.hi[dim]);
        }
      }
    }
  }
  // Forward: reads of a dat before the chain's first write of it need the
  // dat's values from before the chain, exchanged once.
  for (const ChainDat &d : c.dats) {
    ChainHaloDepths::Exchange e;
    e.dat = d.dat;
    bool needed = false;
    for (const ChainAccess &a : d.accesses) {
      if (modeReads(a.mode) &&
          (a.kind == ArgKind::Stencil || a.kind == ArgKind::Direct)) {
        const ArgAccess &ext = c.access[a.loop].args[a.arg];
        for (unsigned dim = 0; dim < MaxLoopDims; ++dim) {
          e.lo[dim] = std::max(e.lo[dim], r.lo[a.loop][dim] - ext.lo[dim]);
          e.hi[dim] = std::max(e.hi[dim], r.hi[a.loop][dim] + ext.hi[dim]);
        }
        needed = true;
      }
      // Later readers see what this loop writes, computed in place.
      if (modeWrites(a.mode))
        break;
    }
    bool deep = false;
    for (unsigned dim = 0; dim < MaxLoopDims; ++dim)
      deep = deep || e.lo[dim] > 0 || e.hi[dim] > 0;
    if (needed && deep)
      r.exchanges.push_back(e);
  }
  return r;
}

int64_t setAccessNeed(ArgKind kind, AccessMode mode, int64_t layers) {
  if (kind == ArgKind::Indirect)
    return mode == AccessMode::Read || mode == AccessMode::ReadWrite
               ? std::max<int64_t>(layers + 1, 2)
               : std::max<int64_t>(layers - 1, 0);
  if (kind == ArgKind::Direct && modeReads(mode))
    return layers;
  return 0;
}

int64_t setWriteValid(ArgKind kind, int64_t layers) {
  return kind == ArgKind::Indirect ? std::max<int64_t>(layers - 1, 0)
                                   : layers;
}

ChainSetLayers chainSetHaloLayers(const LoopChain &c) {
  ChainSetLayers r;
  const size_t n = c.loops.size();
  std::vector<int64_t> base(n, 0);
  std::vector<bool> reduces(n, false);
  for (size_t k = 0; k < n; ++k) {
    const ParLoopStmt &l = *c.loops[k];
    if (!l.set) {
      r.notApplicable = "loop '" + l.kernel->name + "' runs over a block";
      return r;
    }
    for (const AccessDescriptor &a : l.args) {
      if (a.kind == ArgKind::Indirect && modeWrites(a.mode))
        base[k] = 1; // the exec halo, as without communication avoidance
      reduces[k] = reduces[k] || a.kind == ArgKind::Reduction;
      if (a.kind == ArgKind::MapDirect && modeWrites(a.mode)) {
        r.notApplicable = "loop '" + l.kernel->name + "' writes map '" +
                          a.map->name + "'";
        return r;
      }
    }
  }
  r.layers = base;
  // Backward: each writer of a dat runs as deep as the readers up to the
  // next writer need (loops after it are final by then).
  for (size_t l = n; l-- > 0;) {
    for (const ChainDat &d : c.dats) {
      int64_t extra = -1; // 1: written through a map, 0: only directly
      for (const ChainAccess &a : d.accesses)
        if (a.loop == l && modeWrites(a.mode))
          extra = std::max<int64_t>(extra, a.kind == ArgKind::Indirect);
      if (extra < 0)
        continue;
      size_t next = l; // the loop after l that writes d again
      for (const ChainAccess &a : d.accesses) {
        if (a.loop <= l)
          continue;
        if (next != l && a.loop > next)
          break;
        r.layers[l] = std::max(
            r.layers[l],
            setAccessNeed(a.kind, a.mode, r.layers[a.loop]) + extra);
        if (modeWrites(a.mode))
          next = a.loop;
      }
    }
    if (reduces[l] && r.layers[l] > base[l]) {
      r.reducingLoop = int(l);
      r.notApplicable = "loop '" + c.loops[l]->kernel->name +
                        "' has a reduction and would have to run " +
                        std::to_string(r.layers[l]) + " halo layers";
      return r;
    }
  }
  // Forward: reads before (and by) the first loop that writes a dat need
  // its values from before the chain.
  for (const ChainDat &d : c.dats) {
    ChainSetLayers::Exchange e;
    e.dat = d.dat;
    size_t writer = n;
    for (const ChainAccess &a : d.accesses) {
      if (a.loop > writer)
        break;
      e.depth = std::max(e.depth,
                         setAccessNeed(a.kind, a.mode, r.layers[a.loop]));
      if (modeWrites(a.mode))
        writer = a.loop;
    }
    if (e.depth > 0)
      r.exchanges.push_back(e);
  }
  for (int64_t x : r.layers)
    r.setLayers = std::max(r.setLayers, x);
  return r;
}

ChainExtensions chainExtensions(const LoopChain &c) {
  auto reads = [](AccessMode m) { return modeReads(m) && !isReduction(m); };
  auto writes = [](AccessMode m) { return modeWrites(m) && !isReduction(m); };
  auto reachOf = [](const ArgAccess &a) {
    int64_t r = 0;
    for (unsigned d = 0; d < MaxLoopDims; ++d)
      r = std::max({r, -a.lo[d], a.hi[d]});
    return r;
  };
  ChainExtensions r;
  const size_t n = c.loops.size();
  r.ext.assign(n, 0);
  for (size_t l = n; l-- > 0;)
    for (const ChainDat &d : c.dats) {
      bool lWrites = false;
      for (const ChainAccess &a : d.accesses)
        lWrites = lWrites || (a.loop == l && writes(a.mode));
      if (!lWrites)
        continue;
      for (const ChainAccess &a : d.accesses)
        if (a.loop > l && reads(a.mode))
          r.ext[l] = std::max(r.ext[l], r.ext[a.loop] +
                                            reachOf(c.access[a.loop].args[a.arg]));
    }
  for (const ChainDat &d : c.dats) {
    int64_t need = 0;
    for (const ChainAccess &a : d.accesses)
      if (reads(a.mode))
        need = std::max(need, r.ext[a.loop] +
                                  reachOf(c.access[a.loop].args[a.arg]));
    if (need > 0)
      r.needs.push_back({d.dat, need});
  }
  return r;
}

std::string describeChainDats(const LoopChain &chain) {
  std::string s;
  for (const ChainDat &d : chain.dats) {
    if (!s.empty())
      s += "; ";
    s += "'" + d.dat->name + "':";
    bool first = true;
    for (const ChainAccess &a : d.accesses) {
      s += first ? " " : ", ";
      first = false;
      s += "'" + chain.loops[a.loop]->kernel->name + "' " +
           accessModeName(a.mode);
      if (a.kind == ArgKind::Indirect)
        s += " via " + a.map->name + "[" + std::to_string(a.mapIndex) + "]";
      else if (a.kind == ArgKind::Stencil && a.stencil)
        s += " @" + a.stencil->name;
    }
  }
  return s;
}

} // namespace opdc
