"""Write every generated kernel as a standalone module for NumPy or CuPy.

The modules need only the array library (and its special-function module where a kernel
uses one); they do not import SymPy or this project.  A README in the folder lists each
kernel's signature and formula.
"""

from __future__ import annotations


NAME = "export-kernels"
HELP = "write the generated kernels as standalone NumPy or CuPy modules"


def add_arguments(parser):
    from emergence.cli.commands._checks import output_folder

    parser.add_argument("--backend", default="numpy", help="numpy or cupy (default: numpy)")
    parser.add_argument("--out", required=True, type=output_folder, help="folder to write the modules into")


def run(args) -> int:
    from emergence.base.io import atomic_path, ensure_writable_directory
    from emergence.theory.codegen import BACKENDS
    from emergence.base.errors import EmergenceError
    from emergence.theory.kernel_registry import all_kernel_modules
    from emergence.theory.kernel_export import export_readme, exported_sources

    if args.backend not in BACKENDS:
        raise EmergenceError(f"unknown backend {args.backend!r}; choose {' or '.join(BACKENDS)}")
    folder = ensure_writable_directory(args.out)
    modules = all_kernel_modules()
    files = exported_sources(modules, args.backend)
    files["README.md"] = export_readme(modules, args.backend)
    for filename, text in files.items():
        with atomic_path(folder / filename) as temporary:
            temporary.write_text(text, encoding="utf-8")
    kernels = sum(len(m.kernels) for m in modules)
    print(f"wrote {len(modules)} modules ({kernels} kernels) for {args.backend} to {folder}")
    return 0
