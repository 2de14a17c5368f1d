"""What flows through the environment: sequence items (stimulus, no pins) and
observed transactions (what the monitor saw on the pins)."""

from dataclasses import dataclass, field

from pyuvm import uvm_sequence_item

from tensorsoc.spec.host_protocol import Cmd, decode_command


class HostItem(uvm_sequence_item):
    """One request to the SPI/QPI agent.

    ``kind``: ``"frame"`` (one CS_N-low period: ``cmd``, ``write``,
    ``read_len``, optional ``dummy_clocks`` / ``clocks`` / ``bits`` for error
    injection), ``"reset"`` (pulse the SoC reset and wait for the server
    firmware), ``"reset_in_frame"`` (a frame during which, ``reset_after``
    SCLK cycles in, the SoC reset is pulsed while CS_N stays low; then wait
    for the server firmware), ``"server_ready"`` (wait until a server
    firmware started by WServer is ready), ``"wait"`` (let ``wait_ns`` of
    simulated time pass) or ``"host_path"`` (the following frames on the
    host path ``path``: ``"pins"`` or ``"fast"``; None: the test's own).  After the driver is done, ``data`` holds the
    bytes read."""

    def __init__(self, name="host_item", kind="frame", cmd=0, write=b"", read_len=0, dummy_clocks=None,
                 clocks=None, bits=None, wait_ns=0, tag="", reset_after=None, path=None):
        super().__init__(name)
        self.kind = kind
        self.cmd = int(cmd)
        self.write = bytes(write)
        self.read_len = read_len
        self.dummy_clocks = dummy_clocks
        self.clocks = clocks
        self.bits = bits          # partial(): CS_N released after this many bits
        self.wait_ns = wait_ns
        self.tag = tag            # which sequence step (for logs and coverage)
        self.reset_after = reset_after
        self.path = path
        self.data = b""

    def __str__(self):
        if self.kind not in ("frame", "reset_in_frame"):
            return (f"{self.kind}{f' {self.wait_ns} ns' if self.kind == 'wait' else ''}"
                    f"{f' {self.path}' if self.kind == 'host_path' else ''}")
        cmd = decode_command(self.cmd)
        name = cmd.name if cmd is not None else f"0x{self.cmd:02x}"
        extra = "".join(f" {k}={v}" for k, v in (("clocks", self.clocks), ("bits", self.bits),
                                                  ("dummy", self.dummy_clocks),
                                                  ("reset after", self.reset_after)) if v is not None)
        return f"{name} w={len(self.write)} r={self.read_len}{extra} [{self.tag}]"


class SensorItem(uvm_sequence_item):
    """A frame for the sensor port (valid/ready byte stream)."""

    def __init__(self, name="sensor_item", data=b""):
        super().__init__(name)
        self.data = bytes(data)


@dataclass
class Observed:
    """One CS_N-low period as the monitor reconstructed it from the pins:
    per byte slot, the byte the host drove and the byte the device drove
    (None where it did not drive); ``clocks`` SCLK cycles; ``time_ps`` when
    CS_N rose.  ``reset`` marks an SoC reset instead of a transaction;
    ``reset_inside``: the SoC was reset while this transaction's CS_N was
    low, ``reset_clock`` SCLK cycles into it.  ``server_ready``: a server
    firmware started by WServer announced itself (console), no
    transaction."""
    qpi: bool
    clocks: int
    host: bytes
    device: list
    time_ps: int = 0
    reset: bool = False
    tag: str = ""
    reset_inside: bool = False
    reset_clock: int = 0
    server_ready: bool = False

    @property
    def cpb(self):
        return 2 if self.qpi else 8

    @property
    def code(self):
        return self.host[0] if self.clocks >= self.cpb else None

    @property
    def cmd(self) -> Cmd | None:
        return decode_command(self.code) if self.code is not None else None


@dataclass
class SensorFrame:
    """Bytes the sensor port took (monitor side)."""
    data: bytes
    time_ps: int = 0
    extra: dict = field(default_factory=dict)
