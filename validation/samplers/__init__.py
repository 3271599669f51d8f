"""Posterior samplers (torch optimisers) and their diagnostics."""
