"""FIFO cost lots: units received together at one unit cost (in cents)."""

from dataclasses import dataclass


@dataclass
class Lot:
    """``quantity`` units received on ``day`` at ``unit_cost`` cents each."""

    day: int
    quantity: int
    unit_cost: int


class LotQueue:
    """Lots of one SKU, consumed oldest first (first in, first out)."""

    def __init__(self):
        self.lots = []

    def receive(self, day, quantity, unit_cost):
        """Add a lot; days must not go backwards and quantity must be positive."""
        if quantity <= 0:
            raise ValueError("quantity must be positive")
        if unit_cost < 0:
            raise ValueError("unit_cost must not be negative")
        if self.lots and day < self.lots[-1].day:
            raise ValueError("lots must be received in day order")
        self.lots.append(Lot(day, quantity, unit_cost))

    @property
    def quantity(self):
        """Total units over all lots."""
        return sum(lot.quantity for lot in self.lots)

    def value(self):
        """Total cost in cents of the units still held."""
        return sum(lot.quantity * lot.unit_cost for lot in self.lots)

    def peek_cost(self, quantity):
        """Return the FIFO cost of ``quantity`` units without consuming them."""
        if quantity > self.quantity:
            raise ValueError("not enough units in stock")
        cost = 0
        remaining = quantity
        for lot in self.lots:
            take = min(remaining, lot.quantity)
            cost += take * lot.unit_cost
            remaining -= take
        return cost

    def consume(self, quantity):
        """Remove ``quantity`` units oldest first and return their cost in cents.

        Fully used lots are dropped; a partly used lot keeps its remainder.
        """
        cost = self.peek_cost(quantity)
        remaining = quantity
        kept = []
        for lot in self.lots:
            take = min(remaining, lot.quantity)
            remaining -= take
            if take < lot.quantity:
                kept.append(Lot(lot.day, lot.quantity - take, lot.unit_cost))
        self.lots = kept
        return cost

    def average_cost(self):
        """Weighted average unit cost, rounded half up to whole cents (None if empty)."""
        total = self.quantity
        if total == 0:
            return None
        return (2 * self.value() + total) // (2 * total)

    def expire(self, today, shelf_life):
        """Drop lots at least ``shelf_life`` days old on ``today``; return units dropped."""
        kept = [lot for lot in self.lots if today - lot.day < shelf_life]
        dropped = self.quantity - sum(lot.quantity for lot in kept)
        self.lots = kept
        return dropped

    def oldest_age(self, today):
        """Age in days of the oldest lot on ``today``, or None if there are no lots."""
        if not self.lots:
            return None
        return today - self.lots[0].day
