# SPDX-License-Identifier: BSD-3-Clause
"""What operations did, summed from struct optireduce_status."""
from typing import Any, Dict

from . import _library as L

_COUNTERS = ("operations", "bounded_operations", "fell_back", "incomplete", "deadlines_fired",
             "hard_bounds", "elements_expected", "elements_received", "contributions_expected",
             "contributions_missing", "blocks_fallback", "packets_sent", "packets_received",
             "packets_invalid", "packets_stale", "packets_duplicate", "packets_parked")


class Stats:
    """Totals over a number of operations (a training step, or a communicator's life).

    elements_* and contributions_* are as this rank saw them (both phases of a
    bounded operation); in exact mode nothing is lost and the loss fields stay 0.
    The share of gradient entries lost is fraction_lost (elements); a block
    contribution counts in contributions_missing only when none of it arrived,
    which random loss of a few percent almost never causes.  ops_in_flight_max
    is the most operations of the communicator that ran at once when one of
    these started (more than 1: they overlapped).
    """

    __slots__ = _COUNTERS + ("elapsed_us", "elapsed_us_max", "deadline_us_max",
                             "ops_in_flight_max")

    def __init__(self) -> None:
        for name in self.__slots__:
            setattr(self, name, 0)

    def add(self, st: "L.Status") -> None:
        """Add one struct optireduce_status."""
        self.operations += 1
        self.bounded_operations += bool(st.flags & L.STATUS_BOUNDED)
        self.fell_back += bool(st.flags & L.STATUS_FELL_BACK)
        self.incomplete += bool(st.flags & L.STATUS_INCOMPLETE)
        self.deadlines_fired += bool(st.flags & L.STATUS_DEADLINE_FIRED)
        self.hard_bounds += sum(1 for e in st.phase_end if e == L.PHASE_END.index("hard_bound"))
        self.elements_expected += sum(st.elements_expected)
        self.elements_received += sum(st.elements_received)
        for name in ("contributions_expected", "contributions_missing", "blocks_fallback",
                     "packets_sent", "packets_received", "packets_invalid", "packets_stale",
                     "packets_duplicate", "packets_parked"):
            setattr(self, name, getattr(self, name) + getattr(st, name))
        self.elapsed_us += st.elapsed_us
        self.elapsed_us_max = max(self.elapsed_us_max, st.elapsed_us)
        self.deadline_us_max = max(self.deadline_us_max, *st.deadline_us)
        self.ops_in_flight_max = max(self.ops_in_flight_max, st.ops_in_flight)

    def merge(self, other: "Stats") -> None:
        for name in _COUNTERS + ("elapsed_us",):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.elapsed_us_max = max(self.elapsed_us_max, other.elapsed_us_max)
        self.deadline_us_max = max(self.deadline_us_max, other.deadline_us_max)
        self.ops_in_flight_max = max(self.ops_in_flight_max, other.ops_in_flight_max)

    @property
    def elements_lost(self) -> int:
        """Elements this rank expected and did not receive (estimated instead)."""
        return self.elements_expected - self.elements_received

    @property
    def fraction_lost(self) -> float:
        """Share of the expected elements that were lost, 0 when nothing was expected."""
        return self.elements_lost / self.elements_expected if self.elements_expected else 0.0

    @property
    def fraction_estimated(self) -> float:
        """Share of block contributions of which nothing arrived (estimated whole)."""
        if not self.contributions_expected:
            return 0.0
        return self.contributions_missing / self.contributions_expected

    def as_dict(self) -> Dict[str, Any]:
        d = {name: getattr(self, name) for name in self.__slots__}
        d.update(elements_lost=self.elements_lost, fraction_lost=self.fraction_lost,
                 fraction_estimated=self.fraction_estimated)
        return d

    def __repr__(self) -> str:
        return ("Stats(operations=%d, elements_lost=%d/%d, contributions_missing=%d/%d, "
                "deadline_us_max=%d, hard_bounds=%d, elapsed_ms=%.1f)"
                % (self.operations, self.elements_lost, self.elements_expected,
                   self.contributions_missing, self.contributions_expected,
                   self.deadline_us_max, self.hard_bounds, self.elapsed_us / 1e3))
