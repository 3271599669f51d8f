"""Atomic result files and provenance records."""

import json

import numpy as np
import pytest

from emergence.base.io import atomic_path, ensure_writable_directory, provenance, write_json_atomic, write_npz_atomic
from emergence.base.errors import EmergenceError


def test_failed_write_leaves_previous_file_and_no_temporary(tmp_path):
    target = write_json_atomic(tmp_path / "r.json", {"value": 1})
    with pytest.raises(RuntimeError):
        with atomic_path(target) as temporary:
            temporary.write_text("{half")
            raise RuntimeError("interrupted")
    assert json.loads(target.read_text()) == {"value": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_npz_round_trip_and_numpy_values_in_json(tmp_path):
    path = write_npz_atomic(tmp_path / "a.npz", B=np.eye(2))
    np.testing.assert_array_equal(np.load(path)["B"], np.eye(2))  # exact by design: a byte round trip
    write_json_atomic(tmp_path / "b.json", {"x": np.float64(0.5), "v": np.arange(3)})
    assert json.loads((tmp_path / "b.json").read_text()) == {"x": 0.5, "v": [0, 1, 2]}  # exact by design: repr


def test_provenance_records_seed_config_and_versions():
    record = provenance({"L": 32}, seed=7)
    assert record["seed"] == 7 and record["config"] == {"L": 32}
    assert {"python", "sympy", "numpy", "torch"} <= set(record["versions"])


def test_unwritable_directory_is_a_one_line_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(EmergenceError) as error:
        ensure_writable_directory(blocker / "sub")
    assert "\n" not in str(error.value)


def test_result_files_get_ordinary_permissions(tmp_path):
    import os

    mask = os.umask(0o022)
    try:
        path = write_json_atomic(tmp_path / "r.json", {})
    finally:
        os.umask(mask)
    assert path.stat().st_mode & 0o777 == 0o644
