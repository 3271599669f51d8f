"""The copy-task models are one logits module per architecture plus one readout head:
no branch on the architecture inside them; the factory :data:`LOGITS` is the one place that reads it."""

import ast
import inspect

import pytest

from emergence.validation.copy_task import models, positional_logits, readout_head, token_position_logits, training
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
