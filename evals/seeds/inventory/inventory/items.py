"""Stock items and reorder arithmetic."""

from dataclasses import dataclass


def round_up_to_pack(quantity, pack_size):
    """Round ``quantity`` up to a whole number of packs of ``pack_size``.

    Non-positive quantities give 0.
    """
    if pack_size < 1:
        raise ValueError("pack_size must be at least 1")
    if quantity <= 0:
        return 0
    packs = (quantity + pack_size - 1) // pack_size
    return packs * pack_size


def days_of_cover(available, daily_demand):
    """Return how many whole days ``available`` units last at ``daily_demand``.

    Returns None when there is no demand.
    """
    if daily_demand <= 0:
        return None
    if available <= 0:
        return 0
    return available // daily_demand


@dataclass
class StockItem:
    """One SKU: units physically ``on_hand`` and units ``reserved`` for orders.

    When the available quantity falls to ``reorder_point`` or below, the
    item should be reordered up to ``reorder_point + reorder_qty`` units,
    in whole packs of ``pack_size``.
    """

    sku: str
    on_hand: int = 0
    reserved: int = 0
    reorder_point: int = 0
    reorder_qty: int = 0
    pack_size: int = 1

    @property
    def available(self):
        """Units on hand that are not reserved."""
        return self.on_hand - self.reserved

    def needs_reorder(self, incoming=0):
        """Return True if available plus ``incoming`` is at or below the reorder point."""
        return self.available + incoming <= self.reorder_point

    def suggested_order(self, incoming=0):
        """Return how many units to order now (a multiple of ``pack_size``).

        Zero if no reorder is needed; otherwise the shortfall up to
        ``reorder_point + reorder_qty``, counting ``incoming`` units that are
        already on order, rounded up to whole packs.
        """
        if not self.needs_reorder(incoming):
            return 0
        target = self.reorder_point + self.reorder_qty
        shortfall = target - (self.available + incoming)
        return round_up_to_pack(shortfall, self.pack_size)
