"""The shift-by-one copy task: data, batched attention models, MAP training and SGLD sampling.

Everything follows the copy-head reconstruction (``shared/theory/copy_head.md``): the
potential minimised by Adam and sampled by SGLD is exactly the theory's
:math:`U = \\tfrac{\\beta}{2}\\sum_\\mu\\|Y^\\mu - A^\\mu X^\\mu W\\|^2 + \\|\\theta\\|^2/(2s) + \\|W\\|^2/(2\\lambda)`.
"""
