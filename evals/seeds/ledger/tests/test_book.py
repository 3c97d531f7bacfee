import pytest

from ledger import InsufficientFunds, Ledger


@pytest.fixture
def book():
    ledger = Ledger()
    ledger.post("cash", 1000, "opening")
    return ledger


def test_balance_sums_postings(book):
    book.post("cash", -250, "groceries")
    assert book.balance("cash") == 750
    assert book.balance("unknown") == 0


def test_post_rejects_zero_amount(book):
    with pytest.raises(ValueError):
        book.post("cash", 0)


def test_post_returns_posting(book):
    posting = book.post("fees", -30, "bank fee")
    assert (posting.account, posting.amount, posting.memo) == ("fees", -30, "bank fee")


def test_accounts_are_sorted_and_unique():
    ledger = Ledger()
    ledger.post("b", 1)
    ledger.post("a", 2)
    ledger.post("b", 3)
    assert ledger.accounts() == ["a", "b"]


def test_transfer_moves_money(book):
    book.transfer("cash", "savings", 400)
    assert book.balance("cash") == 600
    assert book.balance("savings") == 400
    assert book.total() == 1000


def test_transfer_of_whole_balance_is_allowed(book):
    book.transfer("cash", "savings", 1000)
    assert book.balance("cash") == 0


def test_transfer_beyond_balance_raises_and_posts_nothing(book):
    with pytest.raises(InsufficientFunds):
        book.transfer("cash", "savings", 1001)
    assert book.balance("cash") == 1000
    assert len(book.postings) == 1


def test_overdraft_limit_allows_going_negative_up_to_limit():
    ledger = Ledger(overdraft_limit=500)
    ledger.post("cash", 100)
    ledger.transfer("cash", "rent", 600)
    assert ledger.balance("cash") == -500
    with pytest.raises(InsufficientFunds):
        ledger.transfer("cash", "rent", 1)


@pytest.mark.parametrize("amount", [0, -5])
def test_transfer_rejects_non_positive_amount(book, amount):
    with pytest.raises(ValueError):
        book.transfer("cash", "savings", amount)


def test_transfer_rejects_same_account(book):
    with pytest.raises(ValueError):
        book.transfer("cash", "cash", 10)


def test_insufficient_funds_is_a_value_error():
    assert issubclass(InsufficientFunds, ValueError)


def test_statement_running_balance(book):
    book.post("cash", -600, "rent")
    book.post("other", 5, "ignored")
    book.transfer("cash", "savings", 100)
    assert book.statement("cash") == [("opening", 1000, 1000), ("rent", -600, 400), ("transfer", -100, 300)]
    assert book.statement("nobody") == []


def test_total_over_all_accounts(book):
    book.post("card", -300)
    assert book.total() == 700


def test_largest_balance_ties_go_to_first_name():
    ledger = Ledger()
    assert ledger.largest_balance() is None
    ledger.post("c", 300)
    ledger.post("a", 100)
    ledger.post("b", 300)
    assert ledger.largest_balance() == ("b", 300)


def test_largest_balance_with_only_negative_balances():
    ledger = Ledger()
    ledger.post("a", -5)
    ledger.post("b", -3)
    assert ledger.largest_balance() == ("b", -3)
