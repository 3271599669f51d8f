"""The import contracts of pyproject.toml break on a planted violation.

Contracts: cli -> demo -> api -> records -> report -> validation -> numerics -> theory -> base (every
module of ``emergence`` in a layer, so the figures of ``report`` import no record class), and no SymPy in
numerics, validation or base.  That they hold is checked by running ``lint-imports`` from the repository root (tests/test_static_tools.py).  Here the contracts of
pyproject.toml are checked against the import graph of the checkout with one import or one module
planted in the graph, so nothing is written into the checkout.
"""

import copy

import grimp
import pytest
from importlinter.api import read_configuration
from importlinter.contracts.forbidden import ForbiddenContract
from importlinter.contracts.layers import LayersContract

from package_layout import CHECKOUT

CONFIGURATION = read_configuration(str(CHECKOUT / "pyproject.toml"))
CONTRACT_TYPES = {"layers": LayersContract, "forbidden": ForbiddenContract}


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    session = CONFIGURATION["session_options"]
    return grimp.build_graph(*session["root_packages"], cache_dir=None,
                             include_external_packages=session["include_external_packages"] == "True",
                             exclude_type_checking_imports=session["exclude_type_checking_imports"] == "True")


def broken_contracts(graph: grimp.ImportGraph) -> list[str]:
    """Names of the contracts of pyproject.toml that ``graph`` breaks."""
    broken = []
    for options in CONFIGURATION["contracts_options"]:
        contract = CONTRACT_TYPES[options["type"]](name=options["name"], contract_options=options,
                                                   session_options=CONFIGURATION["session_options"])
        if not contract.check(copy.deepcopy(graph), verbose=False).kept:
            broken.append(contract.name)
    return broken


def test_every_contract_is_checked_here():
    assert {options["type"] for options in CONFIGURATION["contracts_options"]} <= set(CONTRACT_TYPES)


def test_the_checkout_keeps_every_contract(graph):
    assert broken_contracts(graph) == []


@pytest.mark.parametrize(
    "importer, imported, broken",
    [
        ("emergence.base.io", "emergence.numerics.backend", "Layers"),
        ("emergence.base.sweeps", "emergence.validation.golden", "Layers"),
        ("emergence.numerics.backend", "emergence.validation.golden", "Layers"),
        ("emergence.theory.codegen", "emergence.numerics.backend", "Layers"),
        ("emergence.validation.golden", "emergence.demo", "Layers"),
        ("emergence.api", "emergence.cli.commands.check", "Layers"),
        ("emergence.records", "emergence.api", "Layers"),
        ("emergence.report.writer", "emergence.demo.framework", "Layers"),
        ("emergence.validation.theory_status", "emergence.report.status_page", "Layers"),
        ("emergence.numerics.backend", "sympy", "No SymPy"),
        ("emergence.validation.golden", "sympy", "No SymPy"),
        ("emergence.base.errors", "sympy", "No SymPy"),
        ("emergence.report.figures", "emergence.records", "Layers"),
    ],
)
def test_a_planted_import_breaks_its_contract(graph, importer, imported, broken):
    planted = copy.deepcopy(graph)
    planted.add_import(importer=importer, imported=imported)
    (name,) = broken_contracts(planted)
    assert name.startswith(broken)


@pytest.mark.parametrize("importer", ["emergence.theory.codegen", "emergence.numerics.backend",
                                      "emergence.validation.golden", "emergence.cli.commands.check"])
def test_every_layer_may_import_the_ground_floor(graph, importer):
    planted = copy.deepcopy(graph)
    planted.add_import(importer=importer, imported="emergence.base.limits")
    assert broken_contracts(planted) == []


def test_a_module_outside_every_layer_breaks_the_layers_contract(graph):
    planted = copy.deepcopy(graph)
    planted.add_module("emergence.unplaced")
    (name,) = broken_contracts(planted)
    assert name.startswith("Layers")
