"""A warehouse of stock items with reservations and FIFO costing."""

from inventory.items import StockItem
from inventory.lots import LotQueue


class OutOfStock(ValueError):
    """Raised when a reservation or shipment asks for more than is possible."""


class Warehouse:
    """Items by SKU, each with its FIFO lots."""

    def __init__(self):
        self.items = {}
        self.lots = {}

    def add_item(self, sku, reorder_point=0, reorder_qty=0, pack_size=1):
        """Register a new SKU with no stock; duplicates raise ValueError."""
        if sku in self.items:
            raise ValueError(f"duplicate sku {sku!r}")
        self.items[sku] = StockItem(sku, 0, 0, reorder_point, reorder_qty, pack_size)
        self.lots[sku] = LotQueue()
        return self.items[sku]

    def _item(self, sku):
        if sku not in self.items:
            raise KeyError(f"unknown sku {sku!r}")
        return self.items[sku]

    def receive(self, sku, day, quantity, unit_cost):
        """Book ``quantity`` units received on ``day`` at ``unit_cost`` cents."""
        item = self._item(sku)
        self.lots[sku].receive(day, quantity, unit_cost)
        item.on_hand += quantity

    def reserve(self, sku, quantity):
        """Reserve ``quantity`` available units for an order."""
        item = self._item(sku)
        if quantity <= 0:
            raise ValueError("quantity must be positive")
        if quantity > item.available:
            raise OutOfStock(f"only {item.available} of {sku} available")
        item.reserved += quantity

    def release(self, sku, quantity):
        """Cancel part of a reservation."""
        item = self._item(sku)
        if quantity <= 0 or quantity > item.reserved:
            raise ValueError("can only release reserved units")
        item.reserved -= quantity

    def ship(self, sku, quantity):
        """Ship reserved units; consumes lots FIFO and returns their cost in cents."""
        item = self._item(sku)
        if quantity <= 0:
            raise ValueError("quantity must be positive")
        if quantity > item.reserved:
            raise OutOfStock(f"only {item.reserved} of {sku} reserved")
        cost = self.lots[sku].consume(quantity)
        item.reserved -= quantity
        item.on_hand -= quantity
        return cost

    def expire(self, sku, today, shelf_life):
        """Write off expired lots; reservations shrink if stock no longer covers them."""
        item = self._item(sku)
        dropped = self.lots[sku].expire(today, shelf_life)
        item.on_hand -= dropped
        item.reserved = min(item.reserved, item.on_hand)
        return dropped

    def reorder_report(self, incoming=None):
        """Return ``[(sku, units_to_order)]`` for items needing a reorder.

        ``incoming`` maps SKUs to units already on order. Largest orders
        come first; equal orders are sorted by SKU.
        """
        incoming = incoming or {}
        report = []
        for sku, item in self.items.items():
            qty = item.suggested_order(incoming.get(sku, 0))
            if qty > 0:
                report.append((sku, qty))
        return sorted(report, key=lambda row: (-row[1], row[0]))

    def stock_value(self):
        """Total FIFO value in cents of everything on hand."""
        return sum(queue.value() for queue in self.lots.values())
