"""A tiny ledger of postings to named accounts."""

from dataclasses import dataclass


class InsufficientFunds(ValueError):
    """Raised when a transfer would take an account below its limit."""


@dataclass(frozen=True)
class Posting:
    """One movement of ``amount`` cents into (positive) or out of an account."""

    account: str
    amount: int
    memo: str = ""


class Ledger:
    """An append-only list of postings with per-account balances.

    ``overdraft_limit`` is how far (in cents) transfers may take an account
    below zero; the default 0 means no overdraft.
    """

    def __init__(self, overdraft_limit=0):
        self.overdraft_limit = overdraft_limit
        self.postings = []

    def post(self, account, amount, memo=""):
        """Record ``amount`` cents against ``account`` and return the posting."""
        if amount == 0:
            raise ValueError("cannot post a zero amount")
        posting = Posting(account, amount, memo)
        self.postings.append(posting)
        return posting

    def balance(self, account):
        """Return the sum of all postings of ``account`` (0 if unknown)."""
        return sum(p.amount for p in self.postings if p.account == account)

    def accounts(self):
        """Return the sorted names of all accounts that have postings."""
        return sorted({p.account for p in self.postings})

    def transfer(self, source, target, amount, memo="transfer"):
        """Move ``amount`` (> 0) cents from ``source`` to ``target``.

        Raises InsufficientFunds if the source balance would drop below
        ``-overdraft_limit``; nothing is posted in that case.
        """
        if amount <= 0:
            raise ValueError("transfer amount must be positive")
        if source == target:
            raise ValueError("source and target must differ")
        if self.balance(source) - amount < -self.overdraft_limit:
            raise InsufficientFunds(f"{source} cannot pay {amount}")
        self.post(source, -amount, memo)
        self.post(target, amount, memo)

    def statement(self, account):
        """Return ``(memo, amount, running_balance)`` rows for ``account``."""
        rows = []
        running = 0
        for p in self.postings:
            if p.account != account:
                continue
            running += p.amount
            rows.append((p.memo, p.amount, running))
        return rows

    def total(self):
        """Return the sum over all accounts (0 when only transfers were made)."""
        return sum(p.amount for p in self.postings)

    def largest_balance(self):
        """Return ``(account, balance)`` with the highest balance, or None.

        Ties go to the alphabetically first account.
        """
        best = None
        for name in self.accounts():
            bal = self.balance(name)
            if best is None or bal > best[1]:
                best = (name, bal)
        return best
