"""tools/regenerate.py: it writes generated files atomically, reports stale ones, and refuses an installed copy."""

from pathlib import Path

import pytest

from generated_files import regenerate


def test_write_creates_files_and_differing_sees_stale_ones(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(regenerate, "CHECKOUT", tmp_path)
    page = tmp_path / "docs" / "page.md"
    files = {page: "fresh\n"}
    assert regenerate.differing(files) == [page]
    regenerate.write(files)
    assert page.read_text(encoding="utf-8") == "fresh\n" and regenerate.differing(files) == []
    assert capsys.readouterr().out == "wrote docs/page.md\n"
    page.write_text("edited by hand\n", encoding="utf-8")
    assert regenerate.differing(files) == [page]


def test_renders_from_an_installed_copy_are_refused(monkeypatch):
    regenerate._require_checkout_install()
    monkeypatch.setattr(regenerate, "CHECKOUT", Path("/nonexistent/checkout"))
    with pytest.raises(SystemExit, match="not from this checkout"):
        regenerate._require_checkout_install()


@pytest.mark.parametrize("content", [None, "{truncated", b"\xff\xfe"])
def test_status_from_a_missing_or_corrupt_results_file_is_one_line_and_exit_2(tmp_path, capsys, content):
    results = tmp_path / "results.json"
    if isinstance(content, str):
        results.write_text(content, encoding="utf-8")
    elif content is not None:
        results.write_bytes(content)
    with pytest.raises(SystemExit) as stopped:
        regenerate.main(["status", str(results)])
    assert stopped.value.code == 2
    message = capsys.readouterr().err
    assert message.startswith("regenerate: error: cannot read the demo results") and message.count("\n") == 1
