"""Posterior samplers and their diagnostics: HMC (``step(state) -> (state, info)``, its leapfrog integrator and
step-size adaptation in modules of their own), SGLD (a ``torch.optim.Optimizer``), replica exchange, umbrella
windows with MBAR, window exchange and placement."""
