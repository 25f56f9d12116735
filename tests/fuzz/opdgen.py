#!/usr/bin/env python3
# opdgen.py - Random valid .opd programs for differential testing (issue 56).
# SPDX-License-Identifier: Apache-2.0
#
# `opdgen.py SEED` prints one program; the same seed gives the same program
# (Python's random.Random(seed), no other input). A program is a handful of
# independent parts, each chosen at random:
#   - a block of 1-3 dimensions, dats with halo 2, random stencils (offsets
#     within the halo); a time loop of stencil steps (loops writing the
#     partner dat, swaps), pointwise and boundary loops over sub-ranges,
#     sum/min/max reductions, reports `if k % m == 0 { printf }` that run
#     loops of their own or print values the step computed (the idiom of
#     issue 49), loops over random sub-ranges;
#   - an unstructured part: nodes and edges, an edge -> node map filled by
#     the program (a ring, a hash or a Philox-random mesh), indirect reads
#     and increments, node updates, reductions;
#   - procs (a step wrapped in a proc, a proc returning a reduction);
#   - batched tridiagonal solves along a random dimension, solve cg on the
#     unstructured operator;
#   - a scalar functional with a tangent and an adjoint request, checked by
#     the dot-product identity and a central finite difference.
# Kernels compute bounded expressions of their inputs (coefficients summing
# to less than one, math intrinsics on arguments guarded to their domain), so
# values stay O(1) over the time loop and round-off comparisons are
# meaningful.
#
# Every result line is `CLASS name value` printed with %.17g; CLASS says what
# the driver (difftest.py) may expect of it across configurations:
#   P  primal: the same bits where opdc promises bits, else 1e-12 relative
#   C  a value after solve cg (round-off of an iteration to tolerance)
#   D  a derivative (round-off: gradients are promised to round-off)
# and `D tangent|adjoint|fd` lines of one functional are checked against
# each other in every configuration.
#
# The main body is a list of independent statements groups ("units"); the
# minimiser (difftest.py --minimise) drops units, kernels and procs.
import argparse
import random

SMOOTH = ["sin({})", "cos({})", "tanh({})", "atan({})", "({0} / (1.0 + {0} * {0}))",
          "exp(-({0}) * ({0}))", "(sqrt({0} * {0} + 1.0) - 1.0)",
          "log(1.0 + {0} * {0})", "erf({})", "({0} * {0} * 0.25)"]
ROUGH = ["abs({})", "floor({})", "cbrt({})", "fmod({}, 1.5)", "round({})",
         "sqrt(abs({}))", "pow(abs({}) + 0.5, 0.75)", "trunc({})",
         "copysign({}, -1.0)", "expm1(-abs({}))", "log1p(abs({}))",
         "asinh({})", "atan2({}, 1.25)", "hypot({}, 0.5)", "sinh(0.5 * tanh({}))"]
ROUGH2 = ["min({}, {})", "max({}, {})", "select({0} > {1}, {0}, {1})",
          "hypot({}, {})", "atan2({}, abs({}) + 1.0)"]


class Gen:
    def __init__(self, seed, issue49=True):
        self.r = random.Random(seed)
        self.seed = seed
        self.issue49 = issue49
        self.top = []       # declarations (strings)
        self.kernels = []   # kernel / proc texts
        self.units = []     # main's units
        self.n = 0
        self.stencils = {}  # tuple of offsets -> name
        self.features = set()

    def name(self, base):
        self.n += 1
        return f"{base}{self.n}"

    def coef(self, lo=0.05, hi=0.3):
        return f"{self.r.uniform(lo, hi) * self.r.choice([1, -1]):.6f}"

    def fn(self, x, smooth):
        r = self.r
        if smooth or r.random() < 0.5:
            return r.choice(SMOOTH).format(x)
        if r.random() < 0.25:
            return r.choice(ROUGH2).format(x, f"{r.uniform(-1, 1):.4f}")
        return r.choice(ROUGH).format(x)

    def mix(self, leaves, centre, smooth=False):
        """a0 * centre + sum c_i * f(leaf_i), |a0| + sum |c_i| < 1."""
        r = self.r
        budget = r.uniform(0.6, 0.95)
        a0 = r.uniform(0.2, 0.6) * budget
        rest = budget - a0
        terms = [f"{a0:.6f} * {centre}"] if centre else []
        k = max(1, len(leaves))
        for leaf in leaves:
            c = rest / k * r.uniform(0.3, 1.0) * r.choice([1, -1])
            f = self.fn(leaf, smooth) if r.random() < 0.7 else leaf
            terms.append(f"{c:.6f} * {f}")
        if not smooth and r.random() < 0.2 and len(leaves) >= 2:
            terms.append(f"{rest / k * 0.3:.6f} * " +
                         r.choice(ROUGH2).format(leaves[0], leaves[1]))
        return " + ".join(terms).replace("+ -", "- ")

    def stencil(self, dims, radius, size):
        cands = []
        for d in range(dims):
            for o in range(-radius, radius + 1):
                if o:
                    cands.append(tuple(o if e == d else 0 for e in range(dims)))
        if dims > 1 and radius > 0:
            cands += [tuple(self.r.choice([-1, 1]) if e in (d, (d + 1) % dims) else 0
                            for e in range(dims)) for d in range(dims)]
        cands = sorted(set(cands))
        pts = {(0,) * dims} | set(self.r.sample(cands, min(len(cands), size - 1)))
        key = tuple(sorted(pts))
        if key not in self.stencils:
            nm = self.name("st")
            body = ", ".join("(" + ", ".join(map(str, p)) + ")" for p in key)
            self.top.append(f"stencil {nm} = [{body}]")
            self.stencils[key] = nm
        return self.stencils[key], list(key)

    def at(self, d, off):
        return f"{d}(" + ", ".join(map(str, off)) + ")"

    def coords(self, dims, sizes):
        return [f"(f64(idx({d})) / f64({sizes[d]}))" for d in range(dims)]

    def rng(self, dims, sizes, kind):
        """A range over the block: [lo..hi] per dimension."""
        r = self.r
        parts = []
        face = r.randrange(dims) if kind == "boundary" else -1
        for d in range(dims):
            n = sizes[d]
            if kind == "full":
                lo, hi = "0", n
            elif kind == "interior":
                lo, hi = "1", f"{n} - 1"
            elif kind == "boundary" and d == face:
                if r.random() < 0.5:
                    lo, hi = "0", r.choice(["1", "2"])
                else:
                    lo, hi = f"{n} - " + r.choice(["1", "2"]), n
            elif kind == "boundary":
                lo, hi = "0", n
            else:  # sub (every extent is at least 4)
                lo = str(r.randint(0, 1))
                hi = f"{n} - {r.randint(0, 2)}"
            parts.append(f"{lo}..{hi}")
        return "[" + ", ".join(parts) + "]"

    # ---------------------------------------------------------------- block
    def block_part(self):
        r = self.r
        dims = r.choice([1, 1, 2, 2, 2, 3])
        self.features.add(f"block{dims}d")
        g = self.name("g")
        if dims == 1:
            ext = [r.randint(40, 400)]
        elif dims == 2:
            ext = [r.randint(6, 40), r.randint(6, 60)]
        else:
            ext = [r.randint(4, 10), r.randint(4, 10), r.randint(4, 14)]
        sizes = []
        for d in range(dims):
            p = self.name("n")
            self.top.append(f"param {p}: i32 = {ext[d]}")
            sizes.append(p)
        self.top.append(f"block {g}[{dims}]")
        pt, _ = self.stencil(dims, 0, 1)
        ndat = r.randint(2, 4)
        dats = [self.name("u") for _ in range(ndat)]
        partner = {d: d + "n" for d in dats}
        sz = ", ".join(sizes)
        allds = dats + list(partner.values())
        self.top.append(f"dat {', '.join(allds)}: {g} f64 size [{sz}] halo 2")
        # init
        params = ", ".join(f"{d}: out f64 @ {pt}" for d in allds)
        xs = self.coords(dims, sizes)
        body = []
        for d in allds:
            a = r.uniform(0.5, 4.0)
            terms = [f"{r.choice(['sin', 'cos'])}({a:.4f} * {x} + {r.uniform(0, 2):.4f})"
                     for x in xs]
            body.append(f"  {self.at(d, [0] * dims)} = " + " * ".join(terms))
        ki = self.name("init")
        self.kernels.append(f"kernel {ki}({params}) {{\n" + "\n".join(body) + "\n}")
        init = f"loop {ki} over {g} ({', '.join(allds)})"
        self.units.append(init)
        B = dict(g=g, dims=dims, sizes=sizes, dats=dats, partner=partner, pt=pt,
                 init=init, allds=allds)
        # Time loop of steps, or a straight chain.
        if r.random() < 0.75:
            self.time_loop(B)
        else:
            for _ in range(r.randint(1, 4)):
                self.units.append(self.chain_loop(B, r.choice(
                    ["full", "interior", "sub", "boundary"])))
        if r.random() < 0.3:
            self.tridiagonal(B)
        self.reductions(B, allds[:ndat])
        return B

    def step_kernel(self, B, src_count, smooth=False, kind="interior"):
        """kernel reading src dats at random stencils, writing one out."""
        r = self.r
        dims = B["dims"]
        srcs = r.sample(B["dats"], min(src_count, len(B["dats"])))
        dst = B["partner"][srcs[0]]
        params, args, leaves = [], [], []
        for s in srcs:
            st, offs = self.stencil(dims, r.choice([1, 1, 2]), r.randint(2, 5))
            params.append(f"{s}: f64 @ {st}")
            args.append(s)
            for o in r.sample(offs, min(len(offs), r.randint(1, 3))):
                leaves.append(self.at(s, o))
        extra = ""
        if r.random() < 0.3:
            leaves.append(f"f64(idx({r.randrange(dims)}) % 3)")
        params.append(f"{dst}: out f64 @ {B['pt']}")
        args.append(dst)
        centre = self.at(srcs[0], [0] * dims)
        if centre not in " ".join(leaves) and not params[0].endswith(B["pt"]):
            # the centre must be in the stencil; every stencil has it
            pass
        body = f"  {self.at(dst, [0] * dims)} = {self.mix(leaves, centre, smooth)}{extra}"
        kn = self.name("step")
        self.kernels.append(f"kernel {kn}({', '.join(params)}) {{\n{body}\n}}")
        return kn, args, srcs[0], dst

    def point_kernel(self, B, srcs, dst, mode="inout"):
        r = self.r
        dims = B["dims"]
        z = [0] * dims
        params = [f"{s}: f64 @ {B['pt']}" for s in srcs if s != dst]
        params.append(f"{dst}: {mode} f64 @ {B['pt']}")
        leaves = [self.at(s, z) for s in srcs if s != dst]
        centre = self.at(dst, z) if mode == "inout" else None
        if not leaves:
            leaves = [f"f64(idx(0) % 5) * 0.1"]
        kn = self.name("pw")
        self.kernels.append(f"kernel {kn}({', '.join(params)}) {{\n  "
                            f"{self.at(dst, z)} = {self.mix(leaves, centre)}\n}}")
        return kn, [s for s in srcs if s != dst] + [dst]

    def chain_loop(self, B, kind, smooth=False):
        r = self.r
        if r.random() < 0.5 or kind == "boundary":
            dst = r.choice(B["dats"])
            srcs = r.sample(B["dats"], r.randint(1, len(B["dats"])))
            kn, args = self.point_kernel(B, srcs, dst,
                                         r.choice(["inout", "inout", "out"]))
            self.features.add("pointwise")
            if kind == "boundary":
                self.features.add("boundary-loop")
        else:
            kn, args, a, b = self.step_kernel(B, r.randint(1, 3), smooth)
            self.features.add("stencil")
            args_s = ", ".join(args)
            return (f"loop {kn} over {B['g']}{self.rng(B['dims'], B['sizes'], kind)} "
                    f"({args_s})\nswap({a}, {b})")
        return f"loop {kn} over {B['g']}{self.rng(B['dims'], B['sizes'], kind)} ({', '.join(args)})"

    def red_kernel(self, B, d, smooth=False):
        """sum/min/max of an expression of d."""
        r = self.r
        z = [0] * B["dims"]
        kinds = ["sum"] if smooth else r.sample(["sum", "min", "max"], r.randint(1, 3))
        params = [f"{d}: f64 @ {B['pt']}"]
        body = []
        for k in kinds:
            e = self.fn(self.at(d, z), smooth) if r.random() < 0.5 else self.at(d, z)
            if k == "sum":
                body.append(f"  s_sum += {e}")
            else:
                body.append(f"  s_{k} = {k}(s_{k}, {e})")
            params.append(f"s_{k}: {k} f64")
        kn = self.name("red")
        self.kernels.append(f"kernel {kn}({', '.join(params)}) {{\n" +
                            "\n".join(body) + "\n}")
        return kn, kinds

    def red_call(self, B, d, rng="", prefix="", smooth=False):
        kn, kinds = self.red_kernel(B, d, smooth)
        init = {"sum": "0.0", "min": "1.0e300", "max": "-1.0e300"}
        vs = {k: self.name("r" + k) for k in kinds}
        lines = [f"var {vs[k]} = {init[k]}" for k in kinds]
        lines.append(f"loop {kn} over {B['g']}{rng} ({d}, {', '.join(vs[k] for k in kinds)})")
        self.features.update(f"reduce-{k}" for k in kinds)
        return lines, vs

    def reductions(self, B, dats):
        r = self.r
        for d in dats:
            kind = r.choice(["full", "full", "sub", "interior"])
            lines, vs = self.red_call(B, d, self.rng(B["dims"], B["sizes"], kind))
            for k, v in vs.items():
                lines.append(f'printf("P {v} %.17g\\n", {v})')
            self.units.append("\n".join(lines))

    def time_loop(self, B):
        r = self.r
        k = self.name("k")
        niter = r.randint(2, 12)
        body = []
        pure = r.random() < 0.6   # only stencil steps and swaps (unroll-steps)
        nsteps = r.randint(1, 3)
        for _ in range(nsteps):
            kn, args, a, b = self.step_kernel(B, r.randint(1, 3))
            kind = r.choice(["interior", "interior", "full", "sub"])
            body.append(f"loop {kn} over {B['g']}{self.rng(B['dims'], B['sizes'], kind)} "
                        f"({', '.join(args)})")
            body.append(f"swap({a}, {b})")
            if not pure and r.random() < 0.5:
                body.append(self.chain_loop(B, r.choice(["boundary", "sub", "full"])))
        self.features.add("time-loop")
        if pure:
            self.features.add("time-loop-pure")
        # reports
        m = r.randint(1, 4)
        if r.random() < 0.7:
            d = r.choice(B["dats"])
            lines, vs = self.red_call(B, d)
            rep = lines + [f'printf("P rep{v} %d %.17g\\n", {k}, {v})' for v in vs.values()]
            cond = f"{k} % {m} == 0" if r.random() < 0.7 else f"{k} % {m} == 0 || {k} == {niter - 1}"
            body.append(f"if {cond} {{\n" + "\n".join(rep) + "\n}")
            self.features.add("report")
        if self.issue49 and r.random() < 0.3:
            # A report reading a value declared in the step (issue 49).
            t = self.name("t")
            body.insert(0, f"let {t} = f64({k}) * {r.uniform(0.1, 2):.4f}")
            body.append(f"if {k} % {m} == 0 {{\nprintf(\"P {t} %d %.17g\\n\", {k}, {t})\n}}")
            self.features.add("report-step-value")
        if not pure and r.random() < 0.4:
            lines, vs = self.red_call(B, r.choice(B["dats"]))
            v = next(iter(vs.values()))
            acc = self.name("acc")
            body.extend(lines)
            body.append(f"{acc} = {acc} + {v}")
            self.units.append(f"var {acc} = 0.0\n" +
                              f"for {k} in 0..{niter} {{\n" + "\n".join(body) + "\n}\n" +
                              f'printf("P {acc} %.17g\\n", {acc})')
            return
        self.units.append(f"for {k} in 0..{niter} {{\n" + "\n".join(body) + "\n}")

    def tridiagonal(self, B):
        r = self.r
        g, dims, sizes = B["g"], B["dims"], B["sizes"]
        ta, tb, tc = self.name("ta"), self.name("tb"), self.name("tc")
        td = r.choice(B["dats"])
        self.top.append(f"dat {ta}, {tb}, {tc}: {g} f64 size [{', '.join(sizes)}] halo 2")
        z = [0] * dims
        pt = B["pt"]
        kn = self.name("coef")
        xs = self.coords(dims, sizes)
        self.kernels.append(
            f"kernel {kn}({ta}: out f64 @ {pt}, {tb}: out f64 @ {pt}, {tc}: out f64 @ {pt}) {{\n"
            f"  {self.at(ta, z)} = -0.3 - 0.2 * sin({xs[0]} * 3.0)\n"
            f"  {self.at(tb, z)} = 2.0 + cos({xs[-1]} * 2.0) * 0.5\n"
            f"  {self.at(tc, z)} = -0.4 + 0.1 * {xs[0]}\n}}")
        along = r.randrange(dims)
        rng = "" if r.random() < 0.5 else self.rng(dims, sizes, "sub")
        self.units.append(f"loop {kn} over {g} ({ta}, {tb}, {tc})\n"
                          f"solve tridiagonal({ta}, {tb}, {tc}, {td}) along {along} over {g}{rng}")
        self.features.add("solve-tridiagonal")

    # --------------------------------------------------------- unstructured
    def mesh_part(self):
        r = self.r
        nn = r.randint(30, 3000)
        ne = nn if r.random() < 0.4 else r.randint(20, 4000)
        nodes, edges, m = self.name("nodes"), self.name("edges"), self.name("e2n")
        pn, pe = self.name("nn"), self.name("ne")
        arity = r.choice([2, 2, 2, 3])
        self.top += [f"param {pn}: i32 = {nn}", f"param {pe}: i32 = {ne}",
                     f"set {nodes} size {pn}", f"set {edges} size {pe}",
                     f"map {m}: {edges} -> {nodes}[{arity}]"]
        x, res, w = self.name("x"), self.name("res"), self.name("w")
        self.top += [f"dat {x}, {res}: {nodes} f64", f"dat {w}: {edges} f64"]
        kind = r.choice(["ring", "hash", "random"])
        self.features.add(f"mesh-{kind}")
        body = ["  let i = idx(0)"]
        for j in range(arity):
            if kind == "ring":
                body.append(f"  e[{j}] = (i + {j * r.randint(1, 5)}) % {pn}")
            elif kind == "hash":
                p, q = r.choice([7, 31, 101, 997, 7919]), r.randint(0, 1000)
                body.append(f"  e[{j}] = (i * {p} + {q + j * 17}) % {pn}")
            else:
                body.append(f"  e[{j}] = min(i32(rng_uniform({self.seed % 100000}, {j}) "
                            f"* f64({pn})), {pn} - 1)")
        mk = self.name("mkmap")
        self.kernels.append(f"kernel {mk}(e: out i32[{arity}]) {{\n" + "\n".join(body) + "\n}")
        ki = self.name("ninit")
        a, b = r.uniform(1, 8), r.uniform(0, 2)
        self.kernels.append(
            f"kernel {ki}({x}: out f64, {res}: out f64) {{\n"
            f"  {x} = sin({a:.4f} * f64(idx(0)) / f64({pn}) + {b:.4f})\n  {res} = 0.0\n}}")
        ke = self.name("einit")
        self.kernels.append(f"kernel {ke}({w}: out f64) {{\n"
                            f"  {w} = 0.2 + 0.1 * cos(f64(idx(0)) * {r.uniform(0.01, 1):.4f})\n}}")
        init = (f"loop {mk} over {edges} ({m})\nloop {ki} over {nodes} ({x}, {res})\n"
                f"loop {ke} over {edges} ({w})")
        self.units.append(init)
        M = dict(nodes=nodes, edges=edges, m=m, x=x, res=res, w=w, arity=arity,
                 init=init, pn=pn)
        flux, upd = self.flux_kernels(M)
        k = self.name("k")
        niter = r.randint(1, 8)
        steps = [flux, upd]
        if r.random() < 0.4:
            # an edge update reading nodes indirectly
            ku = self.name("eupd")
            self.kernels.append(
                f"kernel {ku}(a: f64, b: f64, {w}: inout f64) {{\n"
                f"  {w} = {self.mix(['a', 'b'], w)}\n}}")
            steps.append(f"loop {ku} over {edges} ({x}[{m}[0]], {x}[{m}[1]], {w})")
            self.features.add("indirect-read")
        if r.random() < 0.3:
            # the step as a proc
            pr = self.name("mstep")
            self.kernels.append(f"proc {pr}() {{\n" + "\n".join(steps) + "\n}")
            steps = [f"{pr}()"]
            self.features.add("proc")
        body = list(steps)
        if r.random() < 0.5:
            lines, vs = self.mesh_red(M)
            m_ = r.randint(1, 3)
            body.append(f"if {k} % {m_} == 0 {{\n" + "\n".join(lines) + "\n" +
                        "\n".join(f'printf("P rep{v} %d %.17g\\n", {k}, {v})' for v in vs) + "\n}")
        self.units.append(f"for {k} in 0..{niter} {{\n" + "\n".join(body) + "\n}")
        lines, vs = self.mesh_red(M)
        self.units.append("\n".join(lines + [f'printf("P {v} %.17g\\n", {v})' for v in vs]))
        if r.random() < 0.3:
            self.cg(M)
        return M

    def flux_kernels(self, M, smooth=False):
        r = self.r
        x, res, w, m, arity = M["x"], M["res"], M["w"], M["m"], M["arity"]
        kf = self.name("flux")
        reads = ", ".join(f"x{j}: f64" for j in range(arity))
        incs = ", ".join(f"r{j}: inc f64" for j in range(arity))
        f = self.mix(["(x1 - x0)", f"x{arity - 1}"], None, smooth)
        body = [f"  let f = w * ({f})", "  r0 += f", "  r1 -= f"]
        if arity == 3:
            body.append(f"  r2 += {self.coef()} * f")
        self.kernels.append(f"kernel {kf}({reads}, w: f64, {incs}) {{\n" + "\n".join(body) + "\n}")
        args = [f"{x}[{m}[{j}]]" for j in range(arity)] + [w] + \
               [f"{res}[{m}[{j}]]" for j in range(arity)]
        flux = f"loop {kf} over {M['edges']} ({', '.join(args)})"
        ku = self.name("nupd")
        self.kernels.append(f"kernel {ku}({res}: inout f64, {x}: inout f64) {{\n"
                            f"  {x} = {self.mix([res], x, smooth)}\n  {res} = 0.0\n}}")
        upd = f"loop {ku} over {M['nodes']} ({res}, {x})"
        self.features.update(["indirect-inc", "indirect-read"])
        return flux, upd

    def mesh_red(self, M, smooth=False):
        r = self.r
        kinds = ["sum"] if smooth else r.sample(["sum", "min", "max"], r.randint(1, 3))
        kn = self.name("mred")
        init = {"sum": "0.0", "min": "1.0e300", "max": "-1.0e300"}
        vs = {k: self.name("m" + k) for k in kinds}
        body = []
        if r.random() < 0.5:
            # over edges, reading nodes through the map
            params = ["a: f64", "b: f64"]
            e = self.fn("(a - b)", smooth)
            args = [f"{M['x']}[{M['m']}[0]]", f"{M['x']}[{M['m']}[1]]"]
            over = M["edges"]
        else:
            params = ["a: f64"]
            e = self.fn("a", smooth)
            args = [M["x"]]
            over = M["nodes"]
        for k in kinds:
            params.append(f"s_{k}: {k} f64")
            body.append(f"  s_sum += {e}" if k == "sum" else f"  s_{k} = {k}(s_{k}, {e})")
        self.kernels.append(f"kernel {kn}({', '.join(params)}) {{\n" + "\n".join(body) + "\n}")
        lines = [f"var {vs[k]} = {init[k]}" for k in kinds]
        lines.append(f"loop {kn} over {over} ({', '.join(args + [vs[k] for k in kinds])})")
        self.features.update(f"reduce-{k}" for k in kinds)
        return lines, list(vs.values())

    def cg(self, M):
        r = self.r
        nodes, edges, m = M["nodes"], M["edges"], M["m"]
        p, ap, rhs, sol, dg = (self.name(s) for s in ("p", "ap", "rhs", "sol", "dg"))
        self.top.append(f"dat {p}, {ap}, {rhs}, {sol}, {dg}: {nodes} f64")
        kd, ke, ki = self.name("cgdiag"), self.name("cgedge"), self.name("cginit")
        self.kernels.append(f"kernel {kd}({dg}: f64, {p}: f64, {ap}: out f64) {{ {ap} = {dg} * {p} }}")
        self.kernels.append(f"kernel {ke}(p0: f64, p1: f64, w: f64, a0: inc f64, a1: inc f64) {{\n"
                            f"  let ww = 0.1 + w * w\n  a0 += ww * (p0 - p1)\n  a1 += ww * (p1 - p0)\n}}")
        self.kernels.append(f"kernel {ki}(x: f64, {rhs}: out f64, {sol}: out f64, {dg}: out f64) {{\n"
                            f"  {rhs} = x + 0.1\n  {sol} = 0.0\n"
                            f"  {dg} = {r.uniform(0.5, 2):.4f} + 0.5 * x * x\n}}")
        ap_ = self.name("apply")
        self.kernels.append(f"proc {ap_}() {{\n  loop {kd} over {nodes} ({dg}, {p}, {ap})\n"
                            f"  loop {ke} over {edges} ({p}[{m}[0]], {p}[{m}[1]], {M['w']}, "
                            f"{ap}[{m}[0]], {ap}[{m}[1]])\n}}")
        kr = self.name("cgred")
        self.kernels.append(f"kernel {kr}(x: f64, s: sum f64) {{ s += x * x }}")
        s = self.name("cgs")
        self.units.append(
            f"loop {ki} over {nodes} ({M['x']}, {rhs}, {sol}, {dg})\n"
            f"solve cg({ap_}, {p} -> {ap}, {rhs}, {sol}, tol: 1e-13, maxiter: 400)\n"
            f"var {s} = 0.0\nloop {kr} over {nodes} ({sol}, {s})\n"
            f'printf("C {s} %.17g\\n", {s})')
        self.features.add("solve-cg")

    # ---------------------------------------------------------- derivatives
    def functional(self, B, M):
        """A scalar functional of a dat and a parameter: tangent, adjoint,
        dot-product identity and a central finite difference."""
        r = self.r
        use_block = B is not None and (M is None or r.random() < 0.6)
        c = "c"
        J = self.name("cost")
        ns = r.randint(1, 4)
        if use_block:
            g, dims, sizes, pt = B["g"], B["dims"], B["sizes"], B["pt"]
            q, qn, dq = self.name("q"), None, self.name("dq")
            qn = q + "n"
            self.top.append(f"dat {q}, {qn}, {dq}: {g} f64 size [{', '.join(sizes)}] halo 2")
            z = [0] * dims
            xs = self.coords(dims, sizes)
            ki = self.name("qinit")
            self.kernels.append(
                f"kernel {ki}({q}: out f64 @ {pt}, {qn}: out f64 @ {pt}, {dq}: out f64 @ {pt}) {{\n"
                f"  {self.at(q, z)} = sin({r.uniform(1, 4):.4f} * {xs[0]}) + 0.3\n"
                f"  {self.at(qn, z)} = 0.0\n"
                f"  {self.at(dq, z)} = cos({r.uniform(1, 4):.4f} * {xs[-1]})\n}}")
            init = f"loop {ki} over {g} ({q}, {qn}, {dq})"
            st, offs = self.stencil(dims, 1, r.randint(2, 5))
            leaves = [self.at(q, o) for o in offs]
            ks = self.name("qstep")
            self.kernels.append(
                f"kernel {ks}({q}: f64 @ {st}, cc: f64, {qn}: out f64 @ {pt}) {{\n"
                f"  {self.at(qn, z)} = {self.mix(leaves, self.at(q, z), True)} + "
                f"0.1 * cc * {self.fn(self.at(q, z), True)}\n}}")
            kr = self.name("qred")
            self.kernels.append(f"kernel {kr}({q}: f64 @ {pt}, s: sum f64) {{\n"
                                f"  s += {self.at(q, z)} * {self.at(q, z)}\n}}")
            kd = self.name("qdot")
            self.kernels.append(f"kernel {kd}(a: f64 @ {pt}, b: f64 @ {pt}, s: sum f64) {{\n"
                                f"  s += {self.at('a', z)} * {self.at('b', z)}\n}}")
            ka = self.name("qaxpy")
            self.kernels.append(f"kernel {ka}(h: f64, a: f64 @ {pt}, b: inout f64 @ {pt}) {{\n"
                                f"  {self.at('b', z)} += h * {self.at('a', z)}\n}}")
            rng = self.rng(dims, sizes, r.choice(["interior", "sub"]))
            body = [f"for s in 0..{ns} {{",
                    f"loop {ks} over {g}{rng} ({q}, {c}, {qn})", f"swap({q}, {qn})", "}"]
            if r.random() < 0.3 and dims >= 1:
                # a tridiagonal solve in the functional
                ta, tb, tc = self.name("fa"), self.name("fb"), self.name("fc")
                self.top.append(f"dat {ta}, {tb}, {tc}: {g} f64 size [{', '.join(sizes)}] halo 2")
                kc = self.name("fcoef")
                self.kernels.append(
                    f"kernel {kc}({q}: f64 @ {pt}, {ta}: out f64 @ {pt}, {tb}: out f64 @ {pt}, "
                    f"{tc}: out f64 @ {pt}) {{\n"
                    f"  {self.at(ta, z)} = -0.3\n"
                    f"  {self.at(tb, z)} = 2.0 + 0.5 * tanh({self.at(q, z)})\n"
                    f"  {self.at(tc, z)} = -0.4\n}}")
                body.append(f"loop {kc} over {g} ({q}, {ta}, {tb}, {tc})")
                body.append(f"solve tridiagonal({ta}, {tb}, {tc}, {q}) along "
                            f"{r.randrange(dims)} over {g}")
                self.features.add("derivative-tridiagonal")
            body += ["var J = 0.0", f"loop {kr} over {g} ({q}, J)", "return J"]
            dot = lambda a, b, v: f"loop {kd} over {g} ({a}, {b}, {v})"
            axpy = lambda h: f"loop {ka} over {g} ({h}, {dq}, {q})"
        else:
            nodes, edges, m = M["nodes"], M["edges"], M["m"]
            q, qr, dq = self.name("q"), self.name("qr"), self.name("dq")
            self.top.append(f"dat {q}, {qr}, {dq}: {nodes} f64")
            ki = self.name("qinit")
            self.kernels.append(
                f"kernel {ki}({q}: out f64, {qr}: out f64, {dq}: out f64) {{\n"
                f"  let t = f64(idx(0)) / f64({M['pn']})\n"
                f"  {q} = sin({r.uniform(1, 6):.4f} * t) + 0.2\n  {qr} = 0.0\n"
                f"  {dq} = cos({r.uniform(1, 6):.4f} * t)\n}}")
            init = f"loop {ki} over {nodes} ({q}, {qr}, {dq})"
            kf = self.name("qflux")
            self.kernels.append(
                f"kernel {kf}(a: f64, b: f64, cc: f64, ra: inc f64, rb: inc f64) {{\n"
                f"  let f = cc * ({self.mix(['(b - a)'], None, True)})\n"
                f"  ra += f\n  rb -= f\n}}")
            ku = self.name("qupd")
            self.kernels.append(f"kernel {ku}(r: inout f64, y: inout f64) {{\n"
                                f"  y = {self.mix(['r'], 'y', True)}\n  r = 0.0\n}}")
            kr = self.name("qred")
            self.kernels.append(f"kernel {kr}(y: f64, s: sum f64) {{ s += y * y }}")
            kd = self.name("qdot")
            self.kernels.append(f"kernel {kd}(a: f64, b: f64, s: sum f64) {{ s += a * b }}")
            ka = self.name("qaxpy")
            self.kernels.append(f"kernel {ka}(h: f64, a: f64, b: inout f64) {{ b += h * a }}")
            body = [f"for s in 0..{ns} {{",
                    f"loop {kf} over {edges} ({q}[{m}[0]], {q}[{m}[1]], {c}, {qr}[{m}[0]], {qr}[{m}[1]])",
                    f"loop {ku} over {nodes} ({qr}, {q})", "}",
                    "var J = 0.0", f"loop {kr} over {nodes} ({q}, J)", "return J"]
            dot = lambda a, b, v: f"loop {kd} over {nodes} ({a}, {b}, {v})"
            axpy = lambda h: f"loop {ka} over {nodes} ({h}, {dq}, {q})"
        self.kernels.append(f"proc {J}({c}: f64) -> f64 {{\n" + "\n".join(body) + "\n}")
        c0 = f"{r.uniform(0.2, 0.9):.4f}"
        t, a, gr, dd = (self.name(s) for s in ("tan", "jv", "gr", "dd"))
        h = "1.0e-6"
        ck = f" checkpoints {r.randint(1, 3)}" if r.random() < 0.4 else ""
        jp, jm = self.name("jp"), self.name("jm")
        self.units.append("\n".join([
            init,
            f"let {t} = tangent {J}({c0}) along ({q}: {dq}, {c}: 1.0)",
            init,
            f"let ({a}, {gr}) = adjoint {J}({c0}) wrt ({q}, {c}){ck}",
            f"var {dd} = 0.0", dot(f"{gr}.{q}", dq, dd),
            f'printf("D tangent {J} %.17g\\n", {t})',
            f'printf("D adjoint {J} %.17g\\n", {dd} + {gr}.{c})',
            f'printf("D value {J} %.17g\\n", {a})',
            init, axpy(h), f"let {jp} = {J}({c0} + {h})",
            init, axpy(f"-{h}"), f"let {jm} = {J}({c0} - {h})",
            f'printf("D fd {J} %.17g\\n", ({jp} - {jm}) / (2.0 * {h}))']))
        self.features.update(["tangent", "adjoint", "proc"])

    def proc_norm(self, B):
        """A proc returning a reduction, called from main."""
        r = self.r
        d = r.choice(B["dats"])
        lines, vs = self.red_call(B, d, self.rng(B["dims"], B["sizes"], "sub"))
        v = next(iter(vs.values()))
        pr = self.name("norm")
        self.kernels.append(f"proc {pr}(scale: f64) -> f64 {{\n" + "\n".join(lines) +
                            f"\nreturn scale * {v}\n}}")
        res = self.name("pn")
        self.units.append(f"let {res} = {pr}({r.uniform(0.5, 2):.3f})\n"
                          f'printf("P {res} %.17g\\n", {res})')
        self.features.add("proc")

    def program(self):
        r = self.r
        B = M = None
        if r.random() < 0.8:
            B = self.block_part()
        if B is None or r.random() < 0.5:
            M = self.mesh_part()
        if B is not None and r.random() < 0.4:
            self.proc_norm(B)
        if r.random() < 0.35:
            self.functional(B, M)
        out = [f"// opdgen.py seed {self.seed}: {', '.join(sorted(self.features))}",
               f"program fuzz{self.seed}", ""]
        out += self.top + [""] + self.kernels + ["", "main {"]
        for u in self.units:
            out.append(u)
        out.append("}")
        return indent("\n".join(out)) + "\n"


def indent(text):
    """Indent by brace depth (the generator writes flat lines)."""
    out, depth = [], 0
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("}"):
            depth -= 1
        out.append(("  " * depth + s) if s else "")
        depth += s.count("{") - s.count("}") + (1 if s.startswith("}") else 0)
        depth = max(depth, 0)
    return "\n".join(out)


def generate(seed, issue49=True):
    return Gen(seed, issue49).program()


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("seed", type=int)
    ap.add_argument("--no-issue49", action="store_true",
                    help="no reports of values declared in the step")
    a = ap.parse_args()
    print(generate(a.seed, not a.no_issue49), end="")


if __name__ == "__main__":
    main()
