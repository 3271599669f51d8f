"""Validation layer: torch models, samplers, experiments, and the testing kit.

:mod:`emergence.validation.strategies` is the public Hypothesis kit; :mod:`emergence.validation.golden` stores
and re-checks the project's headline numbers.
"""
