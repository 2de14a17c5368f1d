"""The accelerator in a clock domain of its own (``accel``).

With ``SoCConfig.accel_clk_freq`` nonzero, ``TensorSoC.add_accelerator``
builds the TensorEngine, its instruction fetch and the PCORE array inside an
``AcceleratorDomain`` clocked by ``accel``, and joins it to the SoC (in
``sys``) through crossings made of LiteX asynchronous FIFOs
(cores/wishbone_cdc.py, ``WishboneCDC``):

* each bus master of the accelerator (the engine's DMA, the fetch) reaches
  the SoC bus through a crossing accel -> sys, with posted writes and read
  ahead on bursts; the engine's callbacks and IDLE wait for its posted writes
  (``TensorEngine.wr_issued`` / ``wr_landed``);
* the accelerator's CSRs (banks ``tensor_engine``, ``pcore``,
  ``tensor_engine_fetch``) sit in a CSR bank array of their own in ``accel``,
  behind a Wishbone-to-CSR bridge, in the bus region ``accel_csr``;
* that bridge and each bus slave (the PCORE instruction memory) are reached
  from the SoC bus through one crossing sys -> accel (an arbiter in front, an
  address decoder behind).  The accel banks are registered as CSR regions of
  the SoC at their addresses in ``accel_csr``, so the firmware's generated csr.h reaches them
  with the same accessors as in ``sys`` (``tensor_engine_queue_write()``...).
  Every access goes through the one FIFO in program order, so a status read
  after a write sees it, and a START after an instruction-memory write finds
  the instruction there.

The cores are the same modules, built by the same functions, as with the
accelerator in ``sys``: ``AcceleratorCores`` stands in for the SoC in their
``add_core`` calls, and the whole joins the SoC as one core ``accel``
through ``TensorSoC.add_core`` (bus masters ``accel_master0`` (the engine)
and ``accel_master1`` (the fetch), slave regions ``pcore`` and
``accel_csr``).
"""

from migen import ClockDomainsRenamer

from litex.gen import LiteXModule
from litex.soc.integration.soc import SoCCSRRegion
from litex.soc.interconnect import csr_bus, wishbone

from tensorsoc.cores.wishbone_cdc import WishboneCDC

CSR_REGION = "accel_csr"


def _wishbone_like(bus):
    return wishbone.Interface(data_width=len(bus.dat_w), adr_width=len(bus.adr), addressing=bus.addressing,
                              bursting=True)


class AcceleratorCores(LiteXModule):
    """Collects the accelerator's cores in place of the SoC (``add_core``,
    ``comb``, ``mem_map``, ``tsoc_config``).  Its CSRs go to the accel
    domain's bank array (``AcceleratorDomain``, which hides them from the
    SoC's scan)."""

    def __init__(self, soc):
        self.mem_map = soc.mem_map
        self.tsoc_config = soc.tsoc_config
        self._platform = soc.platform
        self._slaves = []       # (region name, bus, origin, size, mode)
        self._masters = []      # (name, bus)

    def add_core(self, name, module, *, slaves=(), masters=(), irq=False, sources=()):
        if irq:
            raise ValueError(f"core {name}: interrupts from the accel clock domain are not crossed")
        setattr(self, name, module)      # (a LiteXModule attribute: a submodule)
        self._slaves += list(slaves)
        self._masters += [(f"{name}_master{i}", bus) for i, bus in enumerate(masters)]
        for src in sources:
            self._platform.add_source(str(src))
        return module


class AcceleratorDomain(LiteXModule):
    """The cores of ``cores`` (an ``AcceleratorCores``) in clock domain
    ``domain`` with their crossings, joined to ``soc`` (a TensorSoC whose CRG
    has that domain) as one core ``accel`` through ``soc.add_core``: its bus
    masters are the ``sys`` sides of the masters' crossings, its bus slaves
    the regions ``pcore`` and ``accel_csr``.  Its CSRs are in the accel
    domain's bank, registered as the SoC's CSR regions by ``add_to``."""

    def __init__(self, soc, cores, domain="accel"):
        self.cdcs = {}
        self.cores = ClockDomainsRenamer(domain)(cores)

        # Bus masters: accel -> sys.
        self._masters = []
        for name, bus in cores._masters:
            down = _wishbone_like(bus)
            # (reads ahead only on incrementing bursts: the masters read main RAM)
            cdc = WishboneCDC(bus, down, cd_up=domain, cd_down="sys")
            setattr(self, f"{name}_cdc", cdc)
            self._masters.append(down)
            self.cdcs[name] = cdc
            if hasattr(cores, "tensor_engine") and bus is cores.tensor_engine.bus:
                self.comb += [cores.tensor_engine.wr_issued.eq(cdc.wr_issued),
                              cores.tensor_engine.wr_landed.eq(cdc.wr_landed)]

        # CSRs: a bank array of the accel domain behind a Wishbone-to-CSR bridge.
        csr = soc.csr
        banks = {}

        def address_map(name, memory):
            if memory is not None:
                raise ValueError(f"core {name}: CSR memories in the accel clock domain are not supported")
            return banks.setdefault(name, len(banks))

        bankarray = csr_bus.CSRBankArray(cores, address_map, data_width=csr.data_width,
                                         address_width=csr.address_width, alignment=csr.alignment,
                                         paging=csr.paging, ordering=csr.ordering)
        bridge_bus = wishbone.Interface(data_width=csr.data_width, adr_width=30, addressing="word")
        bridge = wishbone.Wishbone2CSR(bridge_bus, csr_bus.Interface(address_width=csr.address_width,
                                                                      data_width=csr.data_width))
        cores.csr_bankarray = bankarray
        cores.csr_bridge = bridge
        cores.csr_interconnect = csr_bus.InterconnectShared(masters=[bridge.csr], slaves=bankarray.get_buses())
        region_size = 2 ** (csr.address_width + 2)
        csr_origin = soc.mem_map[CSR_REGION]
        if csr_origin < soc.mem_map["csr"] + region_size:
            raise ValueError(f"MEM_MAP[{CSR_REGION!r}] must lie above LiteX's CSR region (csr.h counts from it)")
        self.bankarray = bankarray

        # Bus slaves (the PCORE instruction memory, the CSR bridge): one
        # crossing sys -> accel for all of them, so the CPU's accesses keep
        # their order across regions (a kernel written to the instruction
        # memory is there before a START written to a CSR after it).
        self._slaves = []        # (region, sys-side interface, origin, size, mode, accel-side bus)
        for region, bus, origin, size, mode in cores._slaves + [(CSR_REGION, bridge_bus, csr_origin,
                                                                 region_size, "rw")]:
            self._slaves.append((region, _wishbone_like(bus), origin, size, mode, bus))
        self.sys_side = wishbone.Interface(data_width=32, adr_width=30, addressing="word", bursting=True)
        self.accel_side = wishbone.Interface(data_width=32, adr_width=30, addressing="word", bursting=True)
        self.arbiter = wishbone.Arbiter([up for _, up, *_ in self._slaves], self.sys_side)
        self.slaves_cdc = cdc = WishboneCDC(self.sys_side, self.accel_side, cd_up="sys", cd_down=domain,
                                            bursts=False)
        self.cdcs["slaves"] = cdc
        self._cores = cores

    # Hidden from the SoC's CSR scan (which reaches the cores only through
    # this module): the CSRs live in the accel domain's bank.
    def get_csrs(self, sort=False):
        return []

    def get_memories(self):
        return []

    def get_constants(self, sort=False):
        return []

    def add_to(self, soc, name="accel"):
        """Joins the SoC through ``soc.add_core``, then decodes the placed
        slave regions behind the crossing and registers the accel banks as
        the SoC's CSR regions (csr.h, csr.json) at their addresses in
        ``accel_csr``."""
        soc.add_core(name, self, masters=self._masters,
                     slaves=[(region, up, origin, size, mode) for region, up, origin, size, mode, _ in self._slaves])
        decoded = []
        for region, _, _, _, _, bus in self._slaves:
            placed = soc.bus.regions[region]
            base, words = placed.origin >> 2, placed.size >> 2
            decoded.append((lambda adr, base=base, words=words: (adr >= base) & (adr < base + words), bus))
        self._cores.slave_decoder = wishbone.Decoder(self.accel_side, decoded)
        origin = soc.bus.regions[CSR_REGION].origin
        for bank, csrs, mapaddr, rmap in self.bankarray.banks:
            soc.csr.add_region(bank, SoCCSRRegion(origin=origin + soc.csr.paging * mapaddr,
                                                  busword=soc.csr.data_width, obj=csrs))
