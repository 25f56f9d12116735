// RandomCodeGen.cpp - rng_uniform and rng_normal: Philox4x32-10 inline.
// SPDX-License-Identifier: Apache-2.0
//
// Counter-based random numbers: a number is a pure function of (seed,
// element, n), never of a generator state, so it cannot depend on how the
// elements are split over threads, ranks or vector lanes. The generator is
// Philox4x32-10 (Salmon, Moraes, Dror, Shaw, "Parallel random numbers: as
// easy as 1, 2, 3", SC'11; Random123's philox.h): a 128-bit counter
// (c0, c1, c2, c3) and a 64-bit key (k0, k1), ten rounds of
//
//   (hi0, lo0) = M0 * c0,  (hi1, lo1) = M1 * c2        32 x 32 -> 64 bits
//   (c0, c1, c2, c3) = (hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0)
//
// with (k0, k1) += (W0, W1) between rounds. The products are `mul i64` of
// zero-extended words, which vectorises on every target.
//
// The words (docs/language.md, "Random numbers"; tests/e2e/reference/
// philox.py computes the same):
//   key     = (seed mod 2^32, seed div 2^32)
//   counter = (n mod 2^32, n div 2^32, e0, e1)
//   (e0, e1) = set loops and 1-D block loops: the global index as 64 bits;
//              2-D block loops: (x, y) as 32-bit words; 3-D block loops:
//              (x, y), and z replaces n's high word.
// Conversions of the output block (w0, w1, w2, w3):
//   uniform = ((w1 << 32 | w0) >> 11) * 2^-53                  in [0, 1)
//   normal  = sqrt(-2 log(u1)) cos(2 pi u2)                      Box-Muller
//             u1 = (((w1 << 32 | w0) >> 11) + 1) * 2^-53         in (0, 1]
//             u2 = ((w3 << 32 | w2) >> 11) * 2^-53               in [0, 1)
// Each step is exact but log and cos, which are the C library's scalar
// functions, called as such (nobuiltin): no constant folding, no vector
// variant whose last bits could differ from the scalar one, so a normal is
// the same bits at every vector width and -O level (a loop drawing normals
// therefore does not vectorise; one drawing uniforms does).
#include "codegen/llvm/RandomCodeGen.h"

#include "codegen/llvm/CodeGenModule.h"

#include "support/Assert.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/Module.h"

#include <numbers>

namespace opdc {

namespace {

constexpr uint64_t M0 = 0xD2511F53, M1 = 0xCD9E8D57;
constexpr uint64_t W0 = 0x9E3779B9, W1 = 0xBB67AE85;
constexpr unsigned Rounds = 10;

class PhiloxEmitter {
public:
  PhiloxEmitter(CodeGenModule &cgm, llvm::IRBuilder<> &b) : cgm(cgm), b(b) {}

  /// The output block for counter \p c and key \p k (i32 words).
  std::array<llvm::Value *, 4> block(std::array<llvm::Value *, 4> c,
                                     std::array<llvm::Value *, 2> k) {
    for (unsigned r = 0; r < Rounds; ++r) {
      if (r > 0) {
        k[0] = b.CreateAdd(k[0], i32(W0), "philox.k0");
        k[1] = b.CreateAdd(k[1], i32(W1), "philox.k1");
      }
      auto [hi0, lo0] = mulhilo(M0, c[0]);
      auto [hi1, lo1] = mulhilo(M1, c[2]);
      c = {b.CreateXor(b.CreateXor(hi1, c[1]), k[0]), lo1,
           b.CreateXor(b.CreateXor(hi0, c[3]), k[1]), lo0};
    }
    return c;
  }

  /// (lo, hi) words of an i64.
  std::pair<llvm::Value *, llvm::Value *> split(llvm::Value *v) {
    return {b.CreateTrunc(v, cgm.i32Ty),
            b.CreateTrunc(b.CreateLShr(v, 32), cgm.i32Ty)};
  }

  /// The top 53 bits of hi:lo as an i64 in [0, 2^53).
  llvm::Value *bits53(llvm::Value *lo, llvm::Value *hi) {
    llvm::Value *w = b.CreateOr(b.CreateShl(b.CreateZExt(hi, cgm.i64Ty), 32),
                                b.CreateZExt(lo, cgm.i64Ty));
    return b.CreateLShr(w, 11);
  }

  /// \p v (an i64 below 2^53 + 1) times 2^-53, exactly.
  llvm::Value *toUnit(llvm::Value *v) {
    llvm::Value *f = b.CreateSIToFP(v, b.getDoubleTy());
    return b.CreateFMul(f, llvm::ConstantFP::get(b.getDoubleTy(), 0x1p-53));
  }

  /// A call of the C library's scalar \p name (f64 -> f64), which LLVM may
  /// neither fold nor replace by a vector variant.
  llvm::Value *libm(const char *name, llvm::Value *x) {
    llvm::Type *d = b.getDoubleTy();
    auto callee = cgm.module.getOrInsertFunction(
        name, llvm::FunctionType::get(d, {d}, false));
    llvm::CallInst *call = b.CreateCall(callee, {x});
    call->addFnAttr(llvm::Attribute::NoBuiltin);
    call->addFnAttr(llvm::Attribute::NoUnwind);
    call->addFnAttr(llvm::Attribute::WillReturn);
    // The arguments never reach a domain error: errno is left alone.
    call->setDoesNotAccessMemory();
    return call;
  }

private:
  llvm::Value *i32(uint64_t v) { return llvm::ConstantInt::get(cgm.i32Ty, v); }

  /// (hi, lo) words of the 64-bit product \p m * \p x.
  std::pair<llvm::Value *, llvm::Value *> mulhilo(uint64_t m, llvm::Value *x) {
    llvm::Value *p =
        b.CreateMul(b.CreateZExt(x, cgm.i64Ty),
                    llvm::ConstantInt::get(cgm.i64Ty, m), "philox.p",
                    /*HasNUW=*/true);
    auto [lo, hi] = split(p);
    return {hi, lo};
  }

  CodeGenModule &cgm;
  llvm::IRBuilder<> &b;
};

} // namespace

llvm::Value *emitRandom(CodeGenModule &cgm, llvm::IRBuilder<> &b, Intrinsic id,
                        llvm::Value *seed, llvm::Value *n,
                        llvm::ArrayRef<llvm::Value *> coords) {
  OPDC_ASSERT(isRandomIntrinsic(id), "emitRandom of another intrinsic");
  OPDC_ASSERT(!coords.empty() && coords.size() <= 3,
              "random numbers for an element of 1 to 3 coordinates");
  PhiloxEmitter p(cgm, b);
  auto [k0, k1] = p.split(seed);
  auto [n0, n1] = p.split(n);
  llvm::Value *e0, *e1;
  if (coords.size() == 1) {
    std::tie(e0, e1) = p.split(coords[0]);
  } else {
    e0 = b.CreateTrunc(coords[0], cgm.i32Ty);
    e1 = b.CreateTrunc(coords[1], cgm.i32Ty);
    if (coords.size() == 3)
      n1 = b.CreateTrunc(coords[2], cgm.i32Ty);
  }
  std::array<llvm::Value *, 4> w = p.block({n0, n1, e0, e1}, {k0, k1});
  llvm::Value *x = p.bits53(w[0], w[1]);
  if (id == Intrinsic::RngUniform)
    return p.toUnit(x);
  llvm::Type *d = b.getDoubleTy();
  llvm::Value *u1 = p.toUnit(b.CreateAdd(x, b.getInt64(1)));
  llvm::Value *u2 = p.toUnit(p.bits53(w[2], w[3]));
  llvm::Value *r = b.CreateUnaryIntrinsic(
      llvm::Intrinsic::sqrt,
      b.CreateFMul(llvm::ConstantFP::get(d, -2.0), p.libm("log", u1)));
  llvm::Value *angle =
      b.CreateFMul(llvm::ConstantFP::get(d, 2.0 * std::numbers::pi), u2);
  return b.CreateFMul(r, p.libm("cos", angle));
}

} // namespace opdc
