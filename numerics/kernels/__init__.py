"""Generated array kernels.  Every module here is rendered by :mod:`emergence.theory.kernel_registry`.

Never edit these files by hand: ``python tools/regenerate.py kernels`` rewrites them and a
test fails when the committed text differs from a fresh regeneration.  Each kernel takes
``xp=`` (NumPy when omitted) so the same source serves NumPy, CuPy and array-API arrays.
"""
