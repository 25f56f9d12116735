#!/usr/bin/env python3
"""plot_mach.py - renders Airfoil's Mach number field as a PNG.

    python3 plot_mach.py q_final.vtkhdf mach.png [--zoom X0 X1 Y0 Y1]

Reads the VTKHDF file that `write p_q to "q_final.h5"` leaves beside the
HDF5 file (docs/io.md) with VTK's vtkHDFReader (Debian: python3-vtk9) and
draws each quadrilateral cell coloured by its Mach number, computed from
the conserved variables q = (rho, rho u, rho v, rho E) with gamma = 1.4,
using matplotlib (Debian: python3-matplotlib).
"""
import argparse

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.collections import PolyCollection  # noqa: E402
from vtkmodules.util.numpy_support import vtk_to_numpy  # noqa: E402
from vtkmodules.vtkIOHDF import vtkHDFReader  # noqa: E402

GAMMA = 1.4


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("vtkhdf")
    ap.add_argument("png")
    ap.add_argument("--zoom", nargs=4, type=float,
                    default=[-0.6, 1.6, -0.8, 0.8],
                    metavar=("X0", "X1", "Y0", "Y1"))
    a = ap.parse_args()
    r = vtkHDFReader()
    r.SetFileName(a.vtkhdf)
    r.Update()
    grid = r.GetOutput()
    pts = vtk_to_numpy(grid.GetPoints().GetData())[:, :2]
    conn = vtk_to_numpy(grid.GetCells().GetConnectivityArray())
    offs = vtk_to_numpy(grid.GetCells().GetOffsetsArray())
    q = vtk_to_numpy(grid.GetCellData().GetArray("p_q"))
    rho = q[:, 0]
    speed2 = (q[:, 1] ** 2 + q[:, 2] ** 2) / rho ** 2
    p = (GAMMA - 1.0) * (q[:, 3] - 0.5 * rho * speed2)
    mach = np.sqrt(speed2 / (GAMMA * p / rho))
    polys = [pts[conn[offs[c]:offs[c + 1]]] for c in range(len(offs) - 1)]
    fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=100)
    coll = PolyCollection(polys, array=mach, cmap="viridis",
                          edgecolors="face", linewidths=0.2)
    ax.add_collection(coll)
    ax.set_xlim(a.zoom[0], a.zoom[1])
    ax.set_ylim(a.zoom[2], a.zoom[3])
    ax.set_aspect("equal")
    ax.set_title(f"Airfoil: Mach number ({len(polys)} cells)")
    fig.colorbar(coll, ax=ax, label="Mach")
    fig.tight_layout()
    fig.savefig(a.png)
    print(f"plot_mach: {a.png}: Mach {mach.min():.3f} .. {mach.max():.3f}")


if __name__ == "__main__":
    main()
