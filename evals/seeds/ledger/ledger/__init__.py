"""ledger: exact money arithmetic with integer cents."""

from ledger.book import InsufficientFunds, Ledger
from ledger.money import apply_rate, format_amount, parse_amount, round_half_even, round_half_up
from ledger.split import allocate, cash_round, split_evenly

__all__ = [
    "InsufficientFunds",
    "Ledger",
    "allocate",
    "apply_rate",
    "cash_round",
    "format_amount",
    "parse_amount",
    "round_half_even",
    "round_half_up",
    "split_evenly",
]
