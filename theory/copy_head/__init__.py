r"""Copy-head emergence as a phase transition: the model and every derivation step (SymPy).

This is a *reconstruction* inside the framework of Lavie et al., arXiv 2606.12058 (only the
abstract is available).  Modules, in derivation order:

- :mod:`.conventions`: the explicit knobs (:class:`Convention`);
- :mod:`.symbols`: the shared SymPy symbols;
- :mod:`.token_algebra`, :mod:`.patterns`: the V x V and L x L matrix algebras the steps use;
- :mod:`.model`: the task, the architectures (T and M) and their scales;
- :mod:`.marginal`: step 1, the exact Gaussian marginal over the readout W;
- :mod:`.population`: step 2, the average over i.i.d. one-hot tokens;
- :mod:`.order_parameters`: step 3, the architecture prior on the symmetric family and the
  reduced linear action;
- :mod:`.bulk`: model M with its bulk (row-sum and bulk norms, radial entropy);
- :mod:`.landau`: step 4, the Landau expansion of the linear action;
- :mod:`.softmax`: step 5, the softmax pushforward and the reduced softmax action;
- :mod:`.loss`: step 6, predicted losses;
- :mod:`.logit_gauge`: the flat directions of model T's attention (softmax gauge and logit null);
- :mod:`.row_trial`: the row trial's copy span (Gram matrix, copy boost, KL from the prior);
- :mod:`.block_trial`: the block trial's KL from the prior (the flat subspace in six symmetry sectors);
- :mod:`.posterior`: step 7, the posterior level (bulk as Gaussian logit noise; softmax model T);
  its default trial keeps the prior along the flat directions;
- :mod:`.linear_posterior`: step 8, the posterior level for linear attention (model T; the bulk
  noise shifts q and r in closed form);
- :mod:`.isotropic_bound`, :mod:`.asymptotics`: the convention-study bound and the leading P*;
- :mod:`.steps`: the derivation as printable steps (``emergence derive copy-head``);
- :mod:`.kernels`: the generated kernels; :mod:`.document`: the generated derivation document.
"""
