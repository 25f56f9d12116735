#!/usr/bin/env python3
"""check_viz.py - builds viz_fields.opd, runs it (serially, and under MPI on
2 ranks when --mpirun is given), and reads every output with VTK's own
vtkHDFReader (Debian's python3-vtk9), comparing each value with the closed
form the program computed (see viz_fields.opd); the CSV dumps are parsed
and compared too. Under MPI every output file must hold the bytes of the
serial run's. With --emulate-cuda, the CUDA backend's build of the program
runs on the CPU (tests/cuda/emulate.py's emulation) and must write the
serial run's bytes too: the mesh comes from device copies there. Exit
status 77 (skipped) when VTK's Python module is absent.
"""
import argparse
import filecmp
import math
import os
import shlex
import shutil
import subprocess
import sys

try:
    from vtkmodules.vtkIOHDF import vtkHDFReader
    from vtkmodules.util.numpy_support import vtk_to_numpy
except ImportError as e:  # pragma: no cover
    print(f"check_viz: skipped: VTK's Python module is missing ({e}); "
          "install python3-vtk9 (scripts/setup-deps.sh)")
    sys.exit(77)

NX, NY = 4, 3          # quad mesh cells
HX, HY, HZ = 2, 2, 1   # hex mesh cells
STEPS = 3
ARGS = [f"--quad_nx={NX}", f"--quad_ny={NY}", "--quad_lx=2.0", "--quad_ly=1.5",
        f"--hex_nx={HX}", f"--hex_ny={HY}", f"--hex_nz={HZ}",
        f"--steps={STEPS}"]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def close(a, b, tol=1e-12):
    return abs(a - b) <= tol * max(1.0, abs(a), abs(b))


def read(path):
    check(os.path.exists(path), f"{path} exists")
    r = vtkHDFReader()
    check(r.CanReadFile(path), f"vtkHDFReader can read {path}")
    r.SetFileName(path)
    r.Update()
    out = r.GetOutput()
    check(out is not None and out.GetNumberOfPoints() > 0,
          f"{path} has points")
    return out


def array(data, name, where):
    arr = (data.GetPointData() if where == "point" else
           data.GetCellData()).GetArray(name)
    check(arr is not None, f"{where} array {name}")
    return vtk_to_numpy(arr) if arr is not None else None


def cell_points(grid, c):
    ids = grid.GetCell(c).GetPointIds()
    return [grid.GetPoint(ids.GetId(k)) for k in range(ids.GetNumberOfIds())]


def check_quad(path, step):
    g = read(path)
    check(g.GetNumberOfPoints() == (NX + 1) * (NY + 1), f"{path}: points")
    check(g.GetNumberOfCells() == NX * NY, f"{path}: cells")
    check(all(g.GetCellType(c) == 9 for c in range(g.GetNumberOfCells())),
          f"{path}: quadrilaterals")
    t = array(g, "T", "point")
    for p in range(g.GetNumberOfPoints()):
        x, y, _ = g.GetPoint(p)
        check(close(t[p], step + x * x + 3.0 * y), f"{path}: T at {p}")
    c = array(g, "C", "cell")
    for k in range(g.GetNumberOfCells()):
        pts = cell_points(g, k)
        cx = sum(p[0] for p in pts) / 4
        cy = sum(p[1] for p in pts) / 4
        check(close(c[k][0], cx) and close(c[k][1], cy), f"{path}: C at {k}")
        # Counter-clockwise, as VTK expects: a positive shoelace area.
        area = sum(pts[i][0] * pts[(i + 1) % 4][1] -
                   pts[(i + 1) % 4][0] * pts[i][1] for i in range(4))
        check(area > 0, f"{path}: cell {k} counter-clockwise")


def check_hex(path):
    g = read(path)
    check(g.GetNumberOfPoints() == (HX + 1) * (HY + 1) * (HZ + 1),
          f"{path}: points")
    check(g.GetNumberOfCells() == HX * HY * HZ, f"{path}: cells")
    check(all(g.GetCellType(c) == 12 for c in range(g.GetNumberOfCells())),
          f"{path}: hexahedra")
    h = array(g, "H", "point")
    for p in range(g.GetNumberOfPoints()):
        x, y, z = g.GetPoint(p)
        check(close(h[p], x + 10.0 * y + 100.0 * z, 1e-6), f"{path}: H at {p}")
    v = array(g, "V", "cell")
    for k in range(g.GetNumberOfCells()):
        pts = cell_points(g, k)
        for d in range(3):
            check(close(v[k][d], (pts[0][d] + pts[6][d]) / 2),
                  f"{path}: V at {k}")


def check_blocks(workdir):
    # 2D blocks are quadrilaterals between the points (VTK 9.1's reader
    # fails on 2D ImageData), 3D ones ImageData.
    b = read(os.path.join(workdir, "blocks_grid_6x4.vtkhdf"))
    check(b.GetNumberOfPoints() == 24 and b.GetNumberOfCells() == 15,
          "b: 6 x 4 points, 5 x 3 quadrilaterals")
    arr = array(b, "b", "point")
    for p in range(b.GetNumberOfPoints()):
        x, y, _ = b.GetPoint(p)
        check(close(arr[p], x + 10.0 * y), f"b at {p}")
    c = read(os.path.join(workdir, "blocks_cube_3x4x2.vtkhdf"))
    check(c.GetDimensions() == (3, 4, 2), "c3: image dimensions")
    arr = array(c, "c3", "point")
    for p in range(c.GetNumberOfPoints()):
        x, y, z = c.GetPoint(p)
        check(arr[p] == x + 10 * y + 100 * z, f"c3 at {p}")
    w = read(os.path.join(workdir, "blocks_grid_5x3.vtkhdf"))
    check(w.GetNumberOfCells() == 4 * 2, "w: quadrilaterals")
    arr = array(w, "w", "point")
    for p in range(w.GetNumberOfPoints()):
        x, y, _ = w.GetPoint(p)
        j = y / 2.0
        i = x - 0.25 * j
        check(close(arr[p], i * j), f"w at {p}")
    # 'tag' lives on a set without coordinates: in no VTKHDF file.
    names = sorted(f for f in os.listdir(workdir)
                   if f.startswith("blocks") and f.endswith(".vtkhdf"))
    check(names == ["blocks_cube_3x4x2.vtkhdf", "blocks_grid_5x3.vtkhdf",
                    "blocks_grid_6x4.vtkhdf"], f"block files {names}")


def check_csv(workdir):
    row = NX + 1

    def rows(name):
        with open(os.path.join(workdir, name)) as f:
            return [line.rstrip("\n").split(",") for line in f]

    t = rows("T.csv")
    check(t[0] == ["index", "T"], f"T.csv header {t[0]}")
    check(len(t) == 1 + (NX + 1) * (NY + 1), "T.csv rows")
    for r in t[1:]:
        n = int(r[0])
        x = 2.0 * float(n % row) / float(NX)
        y = 1.5 * float(n // row) / float(NY)
        check(close(float(r[1]), (STEPS - 1) + x * x + 3.0 * y),
              f"T.csv row {n}")
    c = rows("C.csv")
    check(c[0] == ["index", "C[0]", "C[1]"], f"C.csv header {c[0]}")
    check(len(c) == 1 + NX * NY, "C.csv rows")
    for r in c[1:]:
        k = int(r[0])
        i, j = k % NX, k // NX
        check(close(float(r[1]), 2.0 * (i + 0.5) / NX) and
              close(float(r[2]), 1.5 * (j + 0.5) / NY), f"C.csv row {k}")
    b = rows("b.csv")
    check(b[0] == ["i", "j", "b"], f"b.csv header {b[0]}")
    check(len(b) == 1 + 6 * 4, "b.csv rows")
    for r in b[1:]:
        check(float(r[2]) == int(r[0]) + 10.0 * int(r[1]), f"b.csv {r}")
    # Dimension 0 varies fastest, as in the HDF5 file.
    check([r[:2] for r in b[1:3]] == [["0", "0"], ["1", "0"]], "b.csv order")


def check_all(workdir):
    for s in range(STEPS):
        check_quad(os.path.join(workdir, f"quad_{s:02d}.vtkhdf"), s)
        check(os.path.exists(os.path.join(workdir, f"quad_{s:02d}.h5")),
              f"quad_{s:02d}.h5")
    check(not os.path.exists(os.path.join(workdir, "quad_03.h5")),
          "three numbered writes")
    check_hex(os.path.join(workdir, "hex.vtkhdf"))
    check_blocks(workdir)
    check_csv(workdir)
    left = [f for f in os.listdir(workdir) if ".tmp." in f]
    check(not left, f"temporary files left: {left}")


def emulated(a, serial):
    """The CUDA backend's program, emulated as tests/cuda/emulate.py does,
    run in its own folder: every file the serial run's bytes."""
    sys.path.insert(0, os.path.join(a.source_dir, "tests", "cuda"))
    import emulate
    work = os.path.join(a.work, "cuda")
    os.makedirs(os.path.join(work, "include"))
    emulate.copy_runtime_headers(a.source_dir, os.path.join(work, "include"))
    profile = os.path.join(a.source_dir, "tests/cuda/emu/emu-gpu.yaml")
    cu = subprocess.run([a.opdc, "--emit=cuda", f"--target={profile}",
                         a.source], capture_output=True, text=True)
    check(cu.returncode == 0, f"opdc --emit=cuda: {cu.stderr}")
    cpp = os.path.join(work, "viz.cpp")
    with open(cpp, "w") as f:
        f.write(emulate.launches(cu.stdout))
    includes = [os.path.join(a.source_dir, "tests/cuda/emu"),
                os.path.join(work, "include"),
                os.path.join(a.source_dir, "lib/include")]
    exe = os.path.join(work, "viz")
    run([a.cxx, "-std=c++20", "-O1", "-ffp-contract=off",
         "-DOPD_CUDA_COPY_THREADS=32", *[f"-I{d}" for d in includes], cpp,
         "-o", exe, *emulate.read_link(a.link_file), "-pthread"], work)
    out = os.path.join(work, "run")
    os.makedirs(out)
    run([exe] + ARGS, out)
    for f in sorted(os.listdir(serial)):
        path = os.path.join(out, f)
        check(os.path.exists(path) and
              filecmp.cmp(os.path.join(serial, f), path, shallow=False),
              f"{f}: emulated CUDA bytes = serial bytes")


def run(cmd, cwd):
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if p.returncode != 0:
        print(" ".join(cmd), "failed:", p.returncode, p.stdout, p.stderr)
        sys.exit(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--opdc", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--mpirun", default=None,
                    help="mpirun and its flags, one string (MPI run on 2 "
                    "ranks)")
    ap.add_argument("--emulate-cuda", action="store_true",
                    help="also the CUDA build, emulated on the CPU")
    ap.add_argument("--source-dir", help="the source tree (--emulate-cuda)")
    ap.add_argument("--link-file", help="opd_rt_link.txt (--emulate-cuda)")
    ap.add_argument("--cxx", default="c++", help="C++ compiler "
                    "(--emulate-cuda)")
    a = ap.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    serial = os.path.join(a.work, "serial")
    os.makedirs(serial)
    exe = os.path.join(a.work, "viz")
    run([a.opdc, "build", a.source, "-o", exe], a.work)
    run([exe, "--threads=2"] + ARGS, serial)
    check_all(serial)
    if a.mpirun:
        mpi = os.path.join(a.work, "mpi")
        os.makedirs(mpi)
        exe_mpi = os.path.join(a.work, "viz_mpi")
        run([a.opdc, "build", "--mpi", a.source, "-o", exe_mpi], a.work)
        run(shlex.split(a.mpirun) + ["-np", "2", exe_mpi, "--threads=1"] + ARGS, mpi)
        check_all(mpi)
        for f in sorted(os.listdir(serial)):
            check(filecmp.cmp(os.path.join(serial, f), os.path.join(mpi, f),
                              shallow=False), f"{f}: MPI bytes = serial bytes")
    if a.emulate_cuda:
        emulated(a, serial)
    if failures:
        print(f"check_viz: {len(failures)} failures")
        return 1
    print("check_viz: all outputs read back with the values computed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
