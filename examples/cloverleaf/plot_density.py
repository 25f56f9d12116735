#!/usr/bin/env python3
"""plot_density.py - renders CloverLeaf's density field as a PNG.

    python3 plot_density.py clover_0087_grid_20x20.vtkhdf density.png

Reads a VTKHDF file of the dumps cloverleaf.opd writes every
visit_frequency steps (clover_####.h5; the cell fields' grid is the file
named after the cell counts, docs/io.md) with VTK's vtkHDFReader (Debian:
python3-vtk9) and draws density0 with matplotlib (python3-matplotlib),
each cell a pixel, x to the right and y up.
"""
import argparse

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from vtkmodules.util.numpy_support import vtk_to_numpy  # noqa: E402
from vtkmodules.vtkIOHDF import vtkHDFReader  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("vtkhdf")
    ap.add_argument("png")
    ap.add_argument("--field", default="density0")
    a = ap.parse_args()
    r = vtkHDFReader()
    r.SetFileName(a.vtkhdf)
    r.Update()
    grid = r.GetOutput()
    # A 2D block's points in its order: i fastest, then j (docs/io.md).
    pts = vtk_to_numpy(grid.GetPoints().GetData())
    nx = len(np.unique(pts[:, 0]))
    ny = len(pts) // nx
    values = vtk_to_numpy(grid.GetPointData().GetArray(a.field))
    field = values.reshape(ny, nx)
    fig, ax = plt.subplots(figsize=(5.2, 4.2), dpi=100)
    im = ax.imshow(field, origin="lower", cmap="magma",
                   interpolation="nearest")
    ax.set_title(f"CloverLeaf: {a.field} ({nx} x {ny} cells)")
    ax.set_xlabel("cell i")
    ax.set_ylabel("cell j")
    fig.colorbar(im, ax=ax, label=a.field)
    fig.tight_layout()
    fig.savefig(a.png)
    print(f"plot_density: {a.png}: {a.field} {field.min():.4g} .. "
          f"{field.max():.4g}")


if __name__ == "__main__":
    main()
