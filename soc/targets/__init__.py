"""FPGA board targets of tensorsoc: one module per board, each defining a
``TARGET`` (soc.targets.board.BoardTarget).  ``tsoc bitstream --list``
shows them; docs/fpga.md documents them."""

from tensorsoc.soc.targets import colorlight_i5, ulx3s
from tensorsoc.soc.targets.board import BoardTarget, TargetError

TARGETS = {t.name: t for t in (ulx3s.TARGET, colorlight_i5.TARGET)}


def get(name) -> BoardTarget:
    try:
        return TARGETS[name]
    except KeyError:
        raise TargetError(f"unknown board {name!r}; boards: {', '.join(sorted(TARGETS))}") from None
