import pytest

from textkit import closest_match, hamming, levenshtein, similarity


@pytest.mark.parametrize(
    "a, b, expected",
    [
        ("kitten", "sitting", 3),
        ("flaw", "lawn", 2),
        ("", "abc", 3),
        ("abc", "", 3),
        ("same", "same", 0),
        ("ab", "ba", 2),
        ("abc", "abd", 1),
        ("abc", "abxc", 1),
        ("sunday", "saturday", 3),
    ],
)
def test_levenshtein_distance(a, b, expected):
    assert levenshtein(a, b) == expected


def test_levenshtein_is_symmetric():
    assert levenshtein("intention", "execution") == 5
    assert levenshtein("execution", "intention") == 5


def test_hamming_counts_differing_positions():
    assert hamming("karolin", "kathrin") == 3
    assert hamming("abc", "abd") == 1
    assert hamming("", "") == 0


def test_hamming_unequal_lengths_raise():
    with pytest.raises(ValueError):
        hamming("abc", "ab")


def test_similarity_ratio():
    assert similarity("kitten", "sitting") == 0.5714
    assert similarity("abcd", "abce") == 0.75
    assert similarity("abc", "xyz") == 0.0


def test_similarity_of_empty_strings_is_one():
    assert similarity("", "") == 1.0
    assert similarity("", "ab") == 0.0


def test_closest_match_picks_smallest_distance():
    assert closest_match("helo", ["world", "hello", "help"]) == "hello"


def test_closest_match_ties_go_to_first_candidate():
    assert closest_match("appel", ["apple", "apply", "ape"]) == "apple"


def test_closest_match_respects_max_distance():
    assert closest_match("cat", ["dog"], max_distance=3) == "dog"
    assert closest_match("cat", ["dog"], max_distance=2) is None
    assert closest_match("cat", []) is None
