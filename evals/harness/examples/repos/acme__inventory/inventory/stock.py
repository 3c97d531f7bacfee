"""A tiny stock ledger."""


class Stock:
    def __init__(self) -> None:
        self._counts: dict[str, int] = {}

    def add(self, sku: str, qty: int) -> None:
        if qty <= 0:
            raise ValueError(f"qty must be positive, got {qty}")
        self._counts[sku] = self._counts.get(sku, 0) + qty

    def remove(self, sku: str, qty: int) -> None:
        if qty <= 0:
            raise ValueError(f"qty must be positive, got {qty}")
        self._counts[sku] = self._counts.get(sku, 0) - qty

    def count(self, sku: str) -> int:
        return self._counts.get(sku, 0)
