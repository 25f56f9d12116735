#!/usr/bin/env python3
# difftest.py - Differential testing of opdc's optimiser (issue 56).
# SPDX-License-Identifier: Apache-2.0
#
# Each program (opdgen.py SEED, or --file) is built in a matrix of
# configurations and run at 1 and 2 threads; every run's output is held to
# what man/opdc.1 promises against the default build's run at 1 thread:
#   bits   --threads, -fno-fuse, -fno-skew, -fno-swap-copy-back,
#          -f(no-)unroll-steps(=N), -O0/-O3,
#          --passes= (no pass), the program's --plan=colour where no loop
#          increments through a map ("the same bits")
#   1e-12  -frepro-sum (sums exact), --plan=colour with increments (their
#          order), the emulated CUDA build, --mpi on 1-4 ranks (round-off);
#          each of these is also held to its own bits at 2 threads
# Lines are `CLASS name value` (opdgen.py): class P as above, C (after solve
# cg) 1e-8 where not bits, D (derivatives, promised to round-off) 1e-10
# always. In every run each functional's tangent, adjoint dot product and
# central finite difference must agree (dot-product identity 1e-8, finite
# difference 1e-5). Every build runs with --verify-each (invalid IR after a
# pass is an internal compiler error, status 70).
#
# Findings: a valid program rejected, status 70, a compiler or program crash
# or timeout, a mismatch, a failed derivative check. Each is written to
# --findings (the program and what failed); with --minimise the program is
# first cut down (statements, loops, kernels removed while the same
# configuration still fails the same way). Known, already filed bugs are
# counted apart (KNOWN below) and do not fail the run.
import argparse
import json
import os
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import opdgen  # noqa: E402

# (name, opdc options, promise against the reference)
CONFIGS = [
    ("default", [], "bits"),
    ("no-passes", ["--passes="], "bits"),
    ("no-fuse", ["-fno-fuse"], "bits"),
    ("no-skew", ["-fno-skew"], "bits"),
    ("no-swap-copy-back", ["-fno-swap-copy-back"], "bits"),
    ("unroll-1", ["-fno-unroll-steps"], "bits"),
    ("unroll-2", ["-funroll-steps=2"], "bits"),
    ("unroll-8", ["-funroll-steps=8"], "bits"),
    ("repro-sum", ["-frepro-sum"], "tol"),
    ("O0", ["-O0"], "bits"),
    ("O3", ["-O3"], "bits"),
]
TOL = {"P": 1e-12, "C": 1e-8, "D": 1e-10}
FD_TOL = 1e-6  # finite-difference lines ("D fd ...") between configs
# Known bugs, filed: (regular expression on the compiler's output, issue).
KNOWN = [(re.compile(r"outside the scope of its declaration"), "issue 49"),
         ]
# A --passes= list without the passes these statements need is rejected
# by design (man/opdc.1): such a program skips the configuration.
NEEDS_PASSES = re.compile(r"tangent|adjoint|solve cg|expand-cg")


class Finding(Exception):
    def __init__(self, kind, config, detail):
        super().__init__(f"{kind} [{config}]: {detail}")
        self.kind, self.config, self.detail = kind, config, detail


def sh(cmd, cwd, cpu):
    """Runs cmd with at most `cpu` seconds of processor time (RLIMIT_CPU, so
    that a loaded machine does not make timeouts) and ten times as long on
    the clock; None as the status when either ran out."""
    def limit():
        resource.setrlimit(resource.RLIMIT_CPU, (int(cpu), int(cpu) + 5))
    try:
        r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True,
                           timeout=10 * cpu, preexec_fn=limit)
    except subprocess.TimeoutExpired:
        return None, "", ""
    if r.returncode in (-signal.SIGXCPU, -signal.SIGKILL, 128 + signal.SIGXCPU):
        return None, r.stdout + r.stderr, r.stdout
    return r.returncode, r.stdout + r.stderr, r.stdout


class Driver:
    def __init__(self, a):
        self.a = a
        self.stats = {"programs": 0, "builds": 0, "runs": 0, "checks": 0,
                      "findings": {}, "known": {}, "features": {},
                      "skipped-configs": 0}
        self.mpirun = a.mpirun if os.path.exists(a.mpirun) else ""

    # ------------------------------------------------------------ building
    def build(self, src, work, name, opts, mpi=False):
        exe = os.path.join(work, name)
        cmd = [self.a.opdc, "build", "--verify-each", *opts,
               *(["--mpi"] if mpi else []), src, "-o", exe]
        rc, out, _ = sh(cmd, work, self.a.build_timeout)
        self.stats["builds"] += 1
        if rc == 0:
            return exe
        if rc is None:
            raise Finding("compile-timeout", name, " ".join(cmd))
        for rx, issue in KNOWN:
            if rx.search(out):
                raise Finding("known", name, issue)
        if name == "no-passes" and rc == 1 and NEEDS_PASSES.search(out):
            return None
        if rc == 70:
            raise Finding("ice", name, out[-2000:])
        if rc < 0 or rc > 100:
            raise Finding("compiler-crash", name, f"status {rc}\n{out[-2000:]}")
        raise Finding("compile-error", name, out[-2000:])

    def build_cuda(self, src, work):
        """The emulated CUDA build (tests/cuda/emulate.py's launches)."""
        sys.path.insert(0, os.path.join(self.a.source_dir, "tests/cuda"))
        from emulate import copy_runtime_headers, launches, read_link
        profile = os.path.join(self.a.source_dir, "tests/cuda/emu/emu-gpu.yaml")
        rc, out, cu = sh([self.a.opdc, "--emit=cuda", "--verify-each",
                          "--cuda-indirect=" + random.choice(["atomics", "colouring"]),
                          f"--target={profile}", src], work, self.a.build_timeout)
        self.stats["builds"] += 1
        if rc != 0:
            if rc is None:
                raise Finding("compile-timeout", "cuda", "--emit=cuda")
            for rx, issue in KNOWN:
                if rx.search(out):
                    raise Finding("known", "cuda", issue)
            raise Finding("ice" if rc == 70 else "compile-error", "cuda", out[-2000:])
        hdr = os.path.join(work, "include")
        os.makedirs(hdr, exist_ok=True)
        copy_runtime_headers(self.a.source_dir, hdr)
        cpp = os.path.join(work, "cuda.cpp")
        with open(cpp, "w") as f:
            f.write(launches(cu))
        exe = os.path.join(work, "cuda")
        inc = [os.path.join(self.a.source_dir, "tests/cuda/emu"), hdr,
               os.path.join(self.a.source_dir, "lib/include")]
        rc, out, _ = sh([self.a.cxx, "-std=c++20", "-O1", "-ffp-contract=off",
                         "-DOPD_CUDA_COPY_THREADS=32", *[f"-I{d}" for d in inc],
                         cpp, "-o", exe, *read_link(self.a.link_file), "-pthread"],
                        work, 600)
        if rc != 0:
            raise Finding("cuda-compile-error", "cuda", out[-2000:])
        return exe

    # ------------------------------------------------------------- running
    def run(self, cmd, work, config):
        rc, out, stdout = sh(cmd, work, self.a.run_timeout)
        self.stats["runs"] += 1
        if rc is None:
            raise Finding("run-timeout", config, " ".join(cmd))
        if rc != 0:
            raise Finding("run-crash" if rc < 0 or rc >= 128 else "run-fail",
                          config, f"{' '.join(cmd)}: status {rc}\n{out[-2000:]}")
        return parse(stdout, config)

    # ----------------------------------------------------------- comparing
    def compare(self, ref, got, config, bits):
        self.stats["checks"] += 1
        if [l[:2] for l in ref] != [l[:2] for l in got]:
            raise Finding("mismatch", config,
                          f"{len(got)} result lines, the reference has {len(ref)}"
                          f" (first difference: {first_diff(ref, got)})")
        for (cls, name, u), (_, _, v) in zip(ref, got):
            if u == v:
                continue
            fu, fv = float(u), float(v)
            if fu != fu and fv != fv:
                continue
            if bits and cls != "D":
                raise Finding("mismatch", config,
                              f"{cls} {name}: {v} instead of the same bits {u}")
            tol = TOL[cls]
            if cls == "D" and name.startswith("fd "):
                # A central difference divides round-off in the functional
                # by its step: a config that sums in another order moves it
                # by far more than 1e-10 (seed 200002 under -frepro-sum:
                # 3.7e-10). It is held to the tangent at 1e-5 anyway.
                tol = FD_TOL
            if abs(fu - fv) > tol * max(abs(fu), abs(fv), 1.0):
                raise Finding("mismatch", config,
                              f"{cls} {name}: {v} against {u}, more than {tol} relative")

    def derivatives(self, res, config):
        """tangent, adjoint dot product, finite difference of each functional."""
        vals = {}
        for cls, name, v in res:
            if cls == "D":
                kind, fn = name.split(" ", 1)
                vals.setdefault(fn, {})[kind] = float(v)
        for fn, d in vals.items():
            self.stats["checks"] += 1
            t, a, fd, J = d["tangent"], d["adjoint"], d["fd"], d["value"]
            if abs(t - a) > 1e-8 * max(abs(t), abs(a), 1e-3):
                raise Finding("derivative", config,
                              f"{fn}: tangent {t!r} but adjoint dot product {a!r}")
            if abs(t - fd) > 1e-5 * max(abs(t), abs(fd)) + 1e-8 * (1 + abs(J)):
                raise Finding("derivative", config,
                              f"{fn}: tangent {t!r} but finite difference {fd!r}")

    # ------------------------------------------------------------- program
    def check(self, src, work, rnd, configs=None, extras=True):
        """Builds and runs one program; raises Finding."""
        text = open(src).read()
        has_inc = bool(re.search(r":\s*inc\b", text))
        results = {}
        ref = None
        chosen = CONFIGS
        if self.a.sample and not configs:
            chosen = [CONFIGS[0]] + rnd.sample(CONFIGS[1:], min(self.a.sample, len(CONFIGS) - 1))
        for name, opts, promise in chosen:
            if configs and name not in configs and name != "default":
                continue
            exe = self.build(src, work, name, opts)
            if exe is None:
                self.stats["skipped-configs"] += 1
                continue
            bits = promise == "bits" or (promise == "bits-unless-inc" and not has_inc)
            r1 = self.run([exe, "--threads=1"], work, name)
            self.derivatives(r1, name)
            if ref is None:
                ref = r1
            else:
                self.compare(ref, r1, name, bits)
            if configs and not any(c.startswith(name + "@") for c in configs) and name != "default":
                continue
            r2 = self.run([exe, "--threads=2"], work, name + "@2")
            self.compare(r1, r2, name + "@2", True)
            results[name] = r1
            if name == "default" and (not configs or "colour" in configs):
                # --plan is the program's option: colour against super.
                for t in (1, 2):
                    got = self.run([exe, f"--threads={t}", "--plan=colour"], work,
                                   f"colour@{t}")
                    self.compare(ref, got, f"colour@{t}", not has_inc)
        if not extras:
            return
        if self.a.cuda_share and rnd.random() < self.a.cuda_share and \
                (not configs or "cuda" in configs):
            exe = self.build_cuda(src, work)
            got = self.run([exe], work, "cuda")
            self.derivatives(got, "cuda")
            self.compare(ref, got, "cuda", False)
        if self.mpirun and self.a.mpi_share and rnd.random() < self.a.mpi_share and \
                (not configs or any(c.startswith("mpi") for c in configs)):
            exe = self.build(src, work, "mpi", [], mpi=True)
            flags = ["--oversubscribe"]
            if hasattr(os, "geteuid") and os.geteuid() == 0:
                flags.append("--allow-run-as-root")
            for np_ in sorted(rnd.sample([1, 2, 3, 4], 2)):
                cfg = f"mpi-{np_}"
                got = self.run([self.mpirun, *flags, "-np", str(np_), exe,
                                "--threads=1"], work, cfg)
                self.derivatives(got, cfg)
                self.compare(ref, got, cfg, False)

    def one(self, seed, text=None):
        work = tempfile.mkdtemp(prefix=f"seed{seed}-", dir=self.a.work)
        src = os.path.join(work, f"fuzz{seed}.opd")
        if text is None:
            g = opdgen.Gen(seed)
            text = g.program()
            for f in g.features:
                self.stats["features"][f] = self.stats["features"].get(f, 0) + 1
        with open(src, "w") as f:
            f.write(text)
        self.stats["programs"] += 1
        rnd = random.Random(seed * 7 + 1)
        try:
            self.check(src, work, rnd)
        except Finding as e:
            if e.kind == "known":
                self.stats["known"][e.detail] = self.stats["known"].get(e.detail, 0) + 1
                print(f"seed {seed}: known bug ({e.detail}), skipped", flush=True)
            else:
                self.report(seed, text, e)
                shutil.rmtree(work, ignore_errors=True)
                return False
        else:
            s = self.stats
            print(f"seed {seed}: ok ({s['builds']} builds, {s['runs']} runs so far)",
                  flush=True)
        shutil.rmtree(work, ignore_errors=True)
        return True

    def report(self, seed, text, e):
        key = f"{e.kind} [{e.config}]"
        self.stats["findings"][key] = self.stats["findings"].get(key, 0) + 1
        print(f"seed {seed}: FINDING {e}", flush=True)
        if not self.a.findings:
            return
        os.makedirs(self.a.findings, exist_ok=True)
        base = os.path.join(self.a.findings, f"seed{seed}")
        with open(base + ".opd", "w") as f:
            f.write(text)
        with open(base + ".txt", "w") as f:
            f.write(f"{e}\n")
        if self.a.minimise:
            small = self.minimise(text, e)
            with open(base + ".min.opd", "w") as f:
                f.write(small)
            print(f"seed {seed}: minimised to {len(small.splitlines())} lines: {base}.min.opd",
                  flush=True)

    # ---------------------------------------------------------- minimising
    def minimise(self, text, finding):
        """Greedy delta debugging over brace-balanced groups of lines (a
        declaration, a kernel, a statement, a loop with its body), largest
        first, until no single group can go: a candidate is kept when the
        same configuration still fails with the same kind of finding."""
        base = finding.config.split("@")[0]
        want = {base, finding.config, "default"}
        if base.startswith("mpi"):
            want |= {"mpi"}

        def interesting(t):
            work = tempfile.mkdtemp(prefix="min-", dir=self.a.work)
            src = os.path.join(work, "m.opd")
            with open(src, "w") as f:
                f.write(t)
            try:
                self.check(src, work, random.Random(0) if base not in ("cuda",) and
                           not base.startswith("mpi") else AlwaysRandom(),
                           configs=want, extras=base == "cuda" or base.startswith("mpi"))
                return False
            except Finding as e:
                return e.kind == finding.kind and e.config.split("@")[0] == base
            finally:
                shutil.rmtree(work, ignore_errors=True)

        lines = text.splitlines()
        changed = True
        while changed:
            changed = False
            for lo, hi in sorted(groups(lines), key=lambda g: g[0] - g[1]):
                if hi > len(lines):
                    continue
                cand = lines[:lo] + lines[hi:]
                if interesting("\n".join(cand) + "\n"):
                    lines = cand
                    changed = True
                    break
        return "\n".join(lines) + "\n"


class AlwaysRandom(random.Random):
    def random(self):
        return 0.0


def groups(lines):
    """(first, end) of every removable group: a line with balanced braces, or
    a line opening a brace with every line to the one closing it. Not the
    program line, nor main's own braces."""
    out = []
    for i, l in enumerate(lines):
        s = l.strip()
        if not s or s.startswith("program") or s.startswith("main {") or s == "}":
            continue
        depth = s.count("{") - s.count("}")
        if depth <= 0:
            out.append((i, i + 1))
            continue
        j = i + 1
        while j < len(lines) and depth > 0:
            depth += lines[j].count("{") - lines[j].count("}")
            j += 1
        out.append((i, j))
    return out


def parse(stdout, config):
    res = []
    for l in stdout.splitlines():
        p = l.split()
        if len(p) >= 3 and p[0] in ("P", "C", "D"):
            res.append((p[0], " ".join(p[1:-1]), p[-1]))
    return res


def first_diff(a, b):
    for x, y in zip(a, b):
        if x[:2] != y[:2]:
            return f"{x[0]} {x[1]} / {y[0]} {y[1]}"
    return "one is a prefix of the other"


def main():
    ap = argparse.ArgumentParser(description="differential testing of opdc")
    ap.add_argument("--opdc", required=True)
    ap.add_argument("--work", default=tempfile.gettempdir())
    ap.add_argument("--seeds", default="1..10", help="A..B (B excluded)")
    ap.add_argument("--seconds", type=float, default=0,
                    help="run seeds from the first for this long instead")
    ap.add_argument("--file", help="check this program (seed 0) instead")
    ap.add_argument("--findings", default="")
    ap.add_argument("--minimise", action="store_true")
    ap.add_argument("--sample", type=int, default=0,
                    help="build only this many configurations besides the "
                         "default, chosen at random per program (campaigns)")
    ap.add_argument("--mpirun", default=shutil.which("mpirun") or "",
                    help="mpirun for the MPI share (none: no MPI runs)")
    ap.add_argument("--mpi-share", type=float, default=0.0)
    ap.add_argument("--cuda-share", type=float, default=0.0)
    ap.add_argument("--source-dir", default=os.path.dirname(os.path.dirname(HERE)))
    ap.add_argument("--cxx", default="c++")
    ap.add_argument("--link-file", default="")
    ap.add_argument("--build-timeout", type=float, default=120,
                    help="processor seconds a build may take")
    ap.add_argument("--run-timeout", type=float, default=60,
                    help="processor seconds a run may take")
    ap.add_argument("--stats", default="", help="write the counts here (JSON)")
    ap.add_argument("--keep-going", action="store_true",
                    help="exit 0 even with findings (campaigns)")
    a = ap.parse_args()
    a.work = os.path.abspath(a.work)
    a.opdc = os.path.abspath(a.opdc)
    if a.link_file:
        a.link_file = os.path.abspath(a.link_file)
    if a.findings:
        a.findings = os.path.abspath(a.findings)
    os.makedirs(a.work, exist_ok=True)
    if a.cuda_share and not a.link_file:
        a.cuda_share = 0
    d = Driver(a)
    t0 = time.time()
    ok = True
    if a.file:
        ok = d.one(0, open(a.file).read())
    else:
        lo, hi = (int(x) for x in a.seeds.split(".."))
        seed = lo
        while (seed < hi) if not a.seconds else (time.time() - t0 < a.seconds):
            ok &= d.one(seed)
            seed += 1
    d.stats["seconds"] = round(time.time() - t0, 1)
    s = d.stats
    print(f"{s['programs']} programs, {s['builds']} builds, {s['runs']} runs, "
          f"{s['checks']} comparisons, {sum(s['findings'].values())} findings "
          f"{s['findings']}, known {s['known']}, {s['seconds']} s")
    if a.stats:
        with open(a.stats, "w") as f:
            json.dump(s, f, indent=1, sort_keys=True)
    return 0 if ok or a.keep_going else 1


if __name__ == "__main__":
    sys.exit(main())
