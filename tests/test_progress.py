"""Progress off a terminal: periodic log lines through the ``emergence`` logger, never a bar."""

import logging

import emergence.base.progress as progress_module
from emergence.base.progress import heartbeat, progress, progress_over


def test_counted_progress_logs_lines_off_a_terminal(monkeypatch, caplog):
    monkeypatch.setattr(progress_module, "LOG_INTERVAL", 0.0)
    with caplog.at_level(logging.INFO, logger="emergence"):
        bar = progress(4, "points", unit="run", file_is_terminal=False)
        for _ in range(4):
            bar.update(1)
        bar.close()
    lines = [record.getMessage() for record in caplog.records]
    assert lines[0].startswith("points: 1/4 run (25%) after") and lines[-1].endswith("(done)")


def test_an_interrupted_loop_reports_stopped_and_a_heartbeat_reports_running(monkeypatch, caplog):
    monkeypatch.setattr(progress_module, "LOG_INTERVAL", 0.0)
    monkeypatch.setattr(progress_module, "_terminal", lambda: False)
    with caplog.at_level(logging.INFO, logger="emergence"):
        for item in progress_over(range(3), "steps", unit="step"):
            if item == 1:
                break
        with heartbeat("solver"):
            pass
    lines = [record.getMessage() for record in caplog.records]
    assert any(line.startswith("steps: 1/3 step") and line.endswith("(stopped)") for line in lines)
    assert any(line.startswith("solver: still running after") for line in lines)


def test_log_line_estimates_the_time_left_from_the_rate_so_far():
    from emergence.base.progress import LogProgress

    bar = LogProgress(4, "sweep", "run", initial=1)
    bar.started -= 20.0  # 20 s for one weighted run done in this process
    bar.n = 2.0
    assert "about 40 s left" in bar._line()
    bar.n = sum([4 / 3] * 3)  # 3.9999999999999996: weighted counts are float sums
    assert "left" not in bar._line()
