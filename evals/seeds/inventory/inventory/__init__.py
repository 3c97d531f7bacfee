"""inventory: stock items, reservations, reorder points and FIFO cost lots."""

from inventory.items import StockItem, days_of_cover, round_up_to_pack
from inventory.lots import Lot, LotQueue
from inventory.warehouse import OutOfStock, Warehouse

__all__ = [
    "Lot",
    "LotQueue",
    "OutOfStock",
    "StockItem",
    "Warehouse",
    "days_of_cover",
    "round_up_to_pack",
]
