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


class FakeClock:
    """Seconds that move only when the test says so: no timing in the tests."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_log_line_says_unknown_until_a_point_has_finished_then_uses_the_measured_rate():
    from emergence.base.progress import LogProgress

    clock = FakeClock()
    bar = LogProgress(4, "sweep", "run", initial=1, clock=clock)  # one point stored by an earlier run
    clock.now = 20.0
    assert bar._line() == "sweep: 1/4 run (25%) after 20 s, time left unknown"
    bar.update(1)  # 20 s for the one point finished in this process
    assert bar._line().endswith("about 40 s left")
    bar.update(2)
    assert "left" not in bar._line()


def _finish(time_left, clock, seconds_and_costs):
    for seconds, cost in seconds_and_costs:
        clock.now += seconds
        time_left.finished(1, cost)


def test_launch_bound_points_of_uneven_estimated_cost_are_counted_as_they_run():
    """A GPU waiting on launches: 20 s a point whatever its P, handed out costliest first.  Weighting by the
    cost estimate (the old bar) would say 13 s left after two points; the points' measured rate says 100 s."""
    from emergence.base.time_left import TimeLeft

    clock = FakeClock()
    costs = [64.0, 32.0, 16.0, 8.0, 4.0, 2.0, 1.0]
    left = TimeLeft(len(costs), sum(costs), clock)
    _finish(left, clock, [(20.0, 64.0), (20.0, 32.0)])
    assert abs(left.seconds() - 100.0) < 1e-9  # 5 points x 20 s; float rounding of the fit only


def test_cost_bound_points_are_estimated_by_their_cost():
    """A CPU doing the arithmetic the estimate counts: 1 s per unit of cost."""
    from emergence.base.time_left import TimeLeft

    clock = FakeClock()
    left = TimeLeft(4, 15.0, clock)
    _finish(left, clock, [(8.0, 8.0), (4.0, 4.0)])
    assert abs(left.seconds() - 3.0) < 1e-9  # points of cost 2 and 1 left
    clock.now += 1.0  # the next point has run 1 s of its 2
    assert abs(left.seconds() - 2.0) < 1e-9
    clock.now += 5.0  # far past the estimate: no number is honest any more
    assert left.seconds() is None and left.text() == "time left unknown"


def test_steps_of_the_running_point_give_an_estimate_before_any_point_finishes():
    from emergence.base.time_left import TimeLeft

    clock = FakeClock()
    left = TimeLeft(3, clock=clock)
    clock.now = 5.0
    left.steps(100, 1000)
    assert left.seconds() is None  # one report: no rate yet
    clock.now = 15.0
    left.steps(200, 1000)  # 0.1 s a step: 80 s left of this point, 100 s for each of the other two
    assert abs(left.seconds() - 280.0) < 1e-9
    clock.now = 105.0
    left.finished(1)  # the first point took 105 s; the next has reported no steps
    assert abs(left.seconds() - 210.0) < 1e-9


def test_a_sweep_in_this_process_passes_its_points_steps_to_the_bar(monkeypatch, tmp_path):
    import emergence.base.sweeps as sweeps
    from emergence.base.progress import report_steps

    received = []

    class Recorder:
        def update(self, count, cost=None):
            received.append(("finished", count, cost))

        def steps(self, done, total):
            received.append(("steps", done, total))

        def close(self):
            pass

    def work(config):
        report_steps(5, 10)
        return {"x": config["x"]}

    monkeypatch.setattr(sweeps, "progress_bar", lambda *arguments, **options: Recorder())
    sweeps.run_sweep(work, [{"x": 1}, {"x": 2}], tmp_path, executor=sweeps.InProcessExecutor(),
                     cost=lambda config: 3.0 * config["x"])
    assert received == [("steps", 5, 10), ("finished", 1, 6.0), ("steps", 5, 10), ("finished", 1, 3.0)]
    report_steps(1, 2)  # outside a sweep: reaches nothing
    assert len(received) == 4


def test_the_terminal_bar_shows_the_measured_time_left():
    from emergence.base.progress import TerminalProgress

    clock = FakeClock()
    bar = TerminalProgress(3, "sweep", "run", 0, None, clock)
    assert bar.bar.postfix == "time left unknown"
    bar.set_postfix(loss="0.5")
    assert bar.bar.postfix == "loss=0.5, time left unknown"
    clock.now = 10.0
    bar.update(1)
    assert bar.bar.postfix == "loss=0.5, about 20 s left"
    bar.close()


def test_reference_seconds_keep_the_demos_time_left_within_2x_where_counting_steps_was_10x_off():
    """The demo's steps: a copy-task step of most of the run after three short ones.  Counting steps says each
    step left takes the mean time of those done (6x too long after the copy-task step and more); the steps'
    reference seconds, scaled by this machine's measured rate, stay within 2x at every step on a machine 3x
    faster or 2x slower than the reference, its first step 1.5x slower still."""
    from emergence.base.time_left import TimeLeft

    reference = [9.0, 1.8, 8.3, 51.6, 6.1, 0.3]
    for factor in (1 / 3, 2.0):
        actual = [1.5 * factor * reference[0]] + [factor * seconds for seconds in reference[1:]]
        for cost_in_seconds in (True, False):
            clock = FakeClock()
            left = TimeLeft(len(reference), sum(reference) if cost_in_seconds else None, clock, cost_in_seconds)
            ratios = []
            for k, (seconds, cost) in enumerate(zip(actual[:-1], reference)):
                clock.now += seconds
                left.finished(1, cost if cost_in_seconds else 1)
                ratios.append(left.seconds() / sum(actual[k + 1:]))
            if cost_in_seconds:
                assert all(0.5 <= ratio <= 2 for ratio in ratios), (factor, ratios)
            else:
                assert max(ratios) > 6, ratios  # the estimate this replaces


def test_reference_seconds_give_an_estimate_before_the_first_step_finishes():
    from emergence.base.time_left import TimeLeft

    clock = FakeClock()
    left = TimeLeft(2, 30.0, clock, cost_in_seconds=True)
    assert left.seconds() == 30.0
    clock.now = 10.0
    assert left.seconds() == 20.0


def test_the_demos_reference_seconds_follow_the_gradient_path_it_trains_with():
    """The copy-task step trains softmax model T 2-2.5x faster with the compiled action (Numba) than with autograd;
    the reference seconds are those measured on the same path, so the other steps' share is not underestimated."""
    from emergence.demo.framework import expected_step_seconds
    from emergence.demo.steps import demo_steps

    steps = demo_steps()
    for quick in (True, False):
        autograd = dict(zip((s.key for s in steps), expected_step_seconds(steps, quick, compiled=False)))
        compiled = dict(zip((s.key for s in steps), expected_step_seconds(steps, quick, compiled=True)))
        assert autograd != compiled
        share = {name: seconds["copy_task"] / sum(seconds.values()) for name, seconds in
                 (("autograd", autograd), ("compiled", compiled))}
        assert share["compiled"] < share["autograd"], (quick, share)
