"""``emergence demo``: the resumable step framework (:mod:`~emergence.demo.framework`), the steps that run
every part of the engine on its built-in default (:mod:`~emergence.demo.steps`), the registry of the
report's stored figures (:mod:`~emergence.demo.figures`) and each step's measured seconds
(``step_seconds.json``, read by :func:`~emergence.demo.framework.expected_step_seconds`).
"""
