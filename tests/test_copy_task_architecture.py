"""The copy-task models are one logits module per architecture plus one readout head:
no branch on the architecture inside them; the factory :data:`LOGITS` is the one place that reads it."""

import ast
import inspect

import pytest
import torch

from emergence.validation.copy_task import models, positional_logits, readout_head, token_position_logits, training
from emergence.base.errors import EmergenceError
from emergence.validation.copy_task.config import CopyTaskConvention

MODEL_MODULES = (models, positional_logits, token_position_logits, readout_head, training)


def branches_on_architecture(source: str) -> list[int]:
    """Line numbers of every ``if`` (statement, expression or comprehension filter) whose test mentions ``architecture``."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        tests = [node.test] if isinstance(node, (ast.If, ast.IfExp, ast.While)) else []
        tests += list(node.ifs) if isinstance(node, ast.comprehension) else []
        lines += [test.lineno for test in tests if "architecture" in ast.unparse(test)]
    return sorted(lines)


@pytest.mark.parametrize("module", MODEL_MODULES, ids=lambda module: module.__name__.rsplit(".", 1)[-1])
def test_no_branch_on_the_architecture(module):
    assert branches_on_architecture(inspect.getsource(module)) == []


def test_a_planted_branch_is_found():
    planted = "def f(self):\n    x = 1\n    if self.convention.architecture == 'M':\n        return x\n"
    assert branches_on_architecture(planted) == [3]
    assert branches_on_architecture("y = [a for a in b if a.architecture]\nz = 1 if c.architecture else 2\n") == [1, 2]


@pytest.mark.parametrize("architecture, logits", [("M", positional_logits.PositionalLogits),
                                                   ("T", token_position_logits.TokenPositionLogits)])
def test_the_factory_picks_the_logits_module_of_the_architecture(architecture, logits):
    model = models.CopyAttentionModel(2, 4, 3, CopyTaskConvention(architecture=architecture))
    assert type(model.attention_logits) is logits
    assert model.logit_weights is model.attention_logits.weights and model.readout is model.head.readout
    assert [name for name, _ in model.named_parameters()] == ["attention_logits.weights", "head.readout"]



@pytest.mark.parametrize("held", [("tt",), ("tt", "tp", "pt")], ids=["W_tt", "token-blocks"])
@pytest.mark.parametrize("compiled", [False, None], ids=["autograd", "default-path"])
def test_held_blocks_stay_at_zero_through_adam_and_the_others_train(held, compiled):
    from emergence.validation.copy_task.data import copy_task_batch

    V = 3
    convention = CopyTaskConvention(architecture="T", attention="softmax")
    model = models.CopyAttentionModel(2, 4, V, convention, dtype=torch.float32, compiled_action=compiled)
    model.initialise(["uniform", "copy"], [0, 1], noise=0.1)
    before = model.logit_weights.detach().clone()
    logits = model.attention_logits
    logits.hold_blocks_at_zero(held)
    batch = copy_task_batch([8, 8], 4, V, [0, 1], dtype=torch.float32)
    training.train_map(model, batch, steps=5, objective="marginal", stop_when_converged=False)
    after = model.logit_weights.detach()
    for name in token_position_logits.BLOCKS:
        block = (slice(None), *logits.block_slices(name))
        if name in held:
            assert torch.count_nonzero(after[block]) == 0  # exactly zero, not merely small
        else:
            assert bool(((after[block] - before[block]).abs().amax(dim=(1, 2)) > 1e-3).all())


def test_an_unknown_block_is_refused():
    model = models.CopyAttentionModel(1, 4, 3, CopyTaskConvention(architecture="T", attention="softmax"))
    with pytest.raises(EmergenceError, match="unknown block 'qq'"):
        model.attention_logits.hold_blocks_at_zero(("qq",))
