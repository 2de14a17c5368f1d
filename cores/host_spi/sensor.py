"""Sensor port: on Acquire, captures one frame from a byte stream into the
input tensor window."""

from migen import Cat, If, Mux, Signal
from migen.genlib.fsm import FSM, NextState, NextValue

from litex.gen import LiteXModule
from litex.soc.cores.dma import WishboneDMAWriter
from litex.soc.interconnect import wishbone


class SensorDMA(LiteXModule):
    """Captures ``length_in`` bytes (at most the window size) from the sensor
    stream (pads: ``valid``, ``data[8]`` in, ``ready`` out) into the window,
    bytes in stream order from its base; a last partial word is zero-padded.
    ``done`` holds (with the captured ``length``) until ``done_ack``."""

    def __init__(self, pads, window, bus_data_width=32, bus_adr_width=30):
        base, size = window
        self.bus = wishbone.Interface(data_width=bus_data_width, adr_width=bus_adr_width)
        self.start = Signal()
        self.length_in = Signal(32)
        self.done = Signal()
        self.done_ack = Signal()
        self.length = Signal(32)

        # # #

        self.dma = dma = WishboneDMAWriter(self.bus, endianness="big")  # "big": no byte swap
        count = Signal(32)
        acc = Signal(32)
        word = Signal(30)
        self.fsm = fsm = FSM(reset_state="IDLE")
        fsm.act("IDLE",
            If(self.start,
                NextValue(self.length, Mux(self.length_in > size, size, self.length_in)),
                NextValue(count, 0),
                NextValue(acc, 0),
                NextValue(word, base >> 2),
                NextState("CAPTURE"),
            ),
        )
        fsm.act("CAPTURE",
            If(count == self.length,
                NextState("DONE"),
            ).Else(
                pads.ready.eq(1),
                If(pads.valid,
                    NextValue(acc, Cat(acc[8:], pads.data)),
                    NextValue(count, count + 1),
                    If((count[:2] == 3) | (count + 1 == self.length), NextState("WRITE")),
                ),
            ),
        )
        # Align a last partial word: shift the bytes down to their lanes.
        aligned = Signal(32)
        self.comb += aligned.eq(Mux(count[:2] == 0, acc, acc >> (8 * (4 - count[:2]))))
        fsm.act("WRITE",
            dma.sink.valid.eq(1),
            dma.sink.address.eq(word),
            dma.sink.data.eq(aligned),
            If(dma.sink.ready,
                NextValue(word, word + 1),
                NextValue(acc, 0),
                NextState("CAPTURE"),
            ),
        )
        fsm.act("DONE",
            self.done.eq(1),
            If(self.done_ack, NextState("IDLE")),
        )
