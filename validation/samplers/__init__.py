"""Posterior samplers and their diagnostics, in one shape: frozen settings, ``init()`` and ``step(state) -> (state,
info)``, the state carrying the positions, the potential and its gradient.  HMC (its leapfrog integrator in a module
of its own, the step-size adaptation that drives it in another), SGLD (the update, its kernel, and a
``torch.optim.Optimizer`` adapter for training), replica exchange, umbrella windows with MBAR, window exchange and
placement."""
