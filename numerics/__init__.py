"""Numerical layer: array backends, generated kernels, corpus statistics, solvers, asymptotics.

Nothing here imports SymPy at run time: derived formulas arrive as generated modules in
:mod:`emergence.numerics.kernels`.
"""
