"""The preprocessor benchmark.

Wall-clock time on a shared machine is not a figure a test may assert (a CI
run took 1.02 s where a quiet one takes 0.84 s), so the timing test checks a
ratio measured in one run: the preprocessor is linear in the file's length.
"""

from tensorsoc.cli import main as tsoc
from tensorsoc.sw.mcore import bench


def test_generated_file_has_tensor_lines():
    text = bench.generate(1000)
    assert len(text.splitlines()) == 1000
    assert sum(line.startswith(">") for line in text.splitlines()) > 300


def test_bench_reports_lines_per_second(capsys):
    assert tsoc(["bench", "mcore", "--lines", "2000", "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    assert "2000 lines in" in out and "lines/s" in out and "fastest of 1 runs" in out


def test_bench_max_seconds_fails_when_exceeded(capsys):
    assert tsoc(["bench", "mcore", "--lines", "500", "--repeat", "1", "--max-seconds", "0"]) == 1
    assert "more than --max-seconds" in capsys.readouterr().err


def test_preprocessor_time_is_linear_in_file_length():
    # Ten times the lines must cost about ten times the time, not a hundred
    # (a quadratic pass, e.g. re-scanning the text per statement, gives ~100x).
    # Fastest of 3 each, measured in this one run; the bound leaves 2.5x slack.
    _, small = bench.run(1000, 3)
    _, large = bench.run(10000, 3)
    assert large / small < 25, f"10x lines took {large / small:.1f}x the time"
