"""The preprocessor benchmark: 10,000 lines in under a second."""

from sw.cli import main as tsoc
from sw.mcore import bench


def test_generated_file_has_tensor_lines():
    text = bench.generate(1000)
    assert len(text.splitlines()) == 1000
    assert sum(line.startswith(">") for line in text.splitlines()) > 300


def test_bench_under_one_second(capsys):
    assert tsoc(["bench", "mcore", "--lines", "10000"]) == 0
    out = capsys.readouterr().out
    assert "10000 lines in" in out and "lines/s" in out and "fastest of 3 runs" in out
    seconds = float(out.split(" lines in ")[1].split(" s ")[0])
    assert seconds < 1.0
