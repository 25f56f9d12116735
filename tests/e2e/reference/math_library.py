#!/usr/bin/env python3
# math_library.py - What tests/e2e/math_library.opd prints, computed with
# the C library directly.
# SPDX-License-Identifier: Apache-2.0
#
# Plain Python 3 with ctypes: every value is the C library's own function
# (libm.so.6: asin for f64, asinf for f32, ...), called with the argument
# the program passes, and printed with C's %.17g / %.9g (Python's
# %-formatting of floats is correctly rounded, as glibc's printf is). It
# shares no code with opdc: a wrong function, a wrong type (sin for sinf), an
# argument converted differently or a constant folded with other arithmetic
# than the library's shows up as a difference. f32 literals are parsed with
# the C library's strtof, f64 ones with Python's float() (correctly rounded).
#
# Usage: math_library.py [--check FILE]
# prints the program's output; with --check FILE, exits 1 unless FILE holds
# exactly that output.

import argparse
import ctypes
import math
import sys

LIBM = ctypes.CDLL("libm.so.6")
LIBC = ctypes.CDLL("libc.so.6")
LIBC.strtof.restype = ctypes.c_float
LIBC.strtof.argtypes = [ctypes.c_char_p, ctypes.c_void_p]

UNARY = ["asin", "acos", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
         "cbrt", "log2", "log10", "log1p", "exp2", "expm1", "erf", "erfc",
         "trunc", "round"]
BINARY = ["hypot", "copysign", "fmod"]
XS = ["0.0", "-0.0", "0.5", "-0.5", "1.0", "-1.0", "0.75", "2.0", "-3.25",
      "10.0", "1.0e-310", "700.0", "1.0e300", "-1.0e300"]
YS = ["1.5", "-2.0", "0.0", "-0.0"]
FOLD = [("asin", ["0.5", "-1.0", "2.0"]), ("acos", ["0.5", "1.0"]),
        ("sinh", ["0.75", "-10.0"]), ("cosh", ["0.75", "100.0"]),
        ("tanh", ["0.5", "-20.0"]), ("asinh", ["0.5", "-3.0"]),
        ("acosh", ["1.5", "0.5"]), ("atanh", ["0.5", "1.0"]),
        ("cbrt", ["27.0", "-2.0"]), ("log2", ["10.0", "0.0"]),
        ("log10", ["2.0", "1000.0"]), ("log1p", ["1.0e-10", "-1.0"]),
        ("exp2", ["0.5", "-1074.5"]), ("expm1", ["1.0e-5", "-40.0"]),
        ("erf", ["0.5", "-3.0"]), ("erfc", ["0.5", "27.0"]),
        ("trunc", ["-2.5", "3.75"]), ("round", ["2.5", "-0.5"])]
FOLD2 = [("hypot", [("3.0", "4.0"), ("1.0e30", "3.0e30")]),
         ("copysign", [("2.0", "-0.0"), ("-1.5", "3.0")]),
         ("fmod", [("7.5", "2.0"), ("-7.5", "0.0")])]


def f32(x):
    """A double converted to float, as C converts it (round to nearest)."""
    return ctypes.c_float(x).value


def f32lit(text):
    return float(LIBC.strtof(text.encode(), None))


def call(name, args, single):
    """The C library's name (namef for single) on args."""
    ctype = ctypes.c_float if single else ctypes.c_double
    fn = getattr(LIBM, name + ("f" if single else ""))
    fn.restype = ctype
    fn.argtypes = [ctype] * len(args)
    return float(fn(*args))


def show(y):
    """The program's show(): a NaN without its sign."""
    return abs(y) if math.isnan(y) else y


def g(y, single):
    return ("%.9g" if single else "%.17g") % show(y)


def lines():
    out = []
    inf, nan = math.inf, math.nan
    specials = [inf, -inf, nan]

    def unary(x, single):
        t = "f32" if single else "f64"
        for f in UNARY:
            out.append(f"{t} {f}({g(x, single)}) = "
                       f"{g(call(f, [x], single), single)}")
        out.append(f"{t} isnan({g(x, single)}) = {int(math.isnan(x))}, "
                   f"isfinite = {int(math.isfinite(x))}")

    def binary(x, y, single):
        t = "f32" if single else "f64"
        for f in BINARY:
            out.append(f"{t} {f}({g(x, single)}, {g(y, single)}) = "
                       f"{g(call(f, [x, y], single), single)}")

    xs = [float(x) for x in XS]
    for x in xs:
        unary(x, False)
        unary(f32(x), True)
    for x in specials:
        unary(x, False)
        unary(f32(x), True)
    ys = [float(y) for y in YS] + [inf, nan]
    for x in xs + specials:
        for y in ys:
            binary(x, y, False)
            binary(f32(x), f32(y), True)
    m = -1.0e300
    for i in range(1000):
        x = i / 1000.0 - 0.5
        v = (call("asin", [x], False) +
             call("cbrt", [x], False) * call("erf", [x], False) +
             call("tanh", [f32(x)], True) +
             call("log1p", [x], False) / call("hypot", [x, 2.0], False))
        m = max(m, v)
    out.append("kernel max %.17g" % m)
    for f, args in FOLD:
        for a in args:
            v = g(call(f, [float(a)], False), False)
            out.append(f"fold f64 {f}({a}) {v} {v}")
            v = g(call(f, [f32lit(a)], True), True)
            out.append(f"fold f32 {f}({a}f) {v} {v}")
    for f, pairs in FOLD2:
        for a, b in pairs:
            v = g(call(f, [float(a), float(b)], False), False)
            out.append(f"fold f64 {f}({a}, {b}) {v} {v}")
            v = g(call(f, [f32lit(a), f32lit(b)], True), True)
            out.append(f"fold f32 {f}({a}f, {b}f) {v} {v}")
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--check", metavar="FILE")
    args = parser.parse_args()
    text = "".join(line + "\n" for line in lines())
    if args.check:
        with open(args.check) as f:
            if f.read() != text:
                print(f"{args.check} differs from the C library's values",
                      file=sys.stderr)
                return 1
        return 0
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
