from intervals import Interval as I
from intervals import complement, gaps, intersect, merge, subtract, total_length, union


def test_merge_sorts_and_merges_overlaps():
    assert merge([I(5, 7), I(1, 3), I(2, 4)]) == [I(1, 4), I(5, 7)]


def test_merge_adjacent_intervals_touching_endpoints():
    assert merge([I(1, 3), I(3, 5)]) == [I(1, 5)]


def test_merge_compares_with_last_merged_interval():
    assert merge([I(0, 1), I(3, 5), I(4, 6)]) == [I(0, 1), I(3, 6)]


def test_merge_keeps_outer_end_of_contained_intervals():
    assert merge([I(1, 10), I(2, 3), I(4, 5)]) == [I(1, 10)]


def test_merge_keeps_separate_intervals_apart():
    assert merge([I(1, 2), I(2.5, 3)]) == [I(1, 2), I(2.5, 3)]


def test_merge_drops_empty_intervals_and_handles_empty_input():
    assert merge([I(2, 2), I(4, 6)]) == [I(4, 6)]
    assert merge([]) == []


def test_union_of_two_lists():
    assert union([I(1, 3)], [I(2, 6), I(8, 9)]) == [I(1, 6), I(8, 9)]


def test_intersect_sweeps_both_lists():
    assert intersect([I(0, 5), I(10, 15)], [I(3, 12)]) == [I(3, 5), I(10, 12)]


def test_intersect_many_small_inside_one_large():
    assert intersect([I(0, 10)], [I(1, 2), I(4, 5), I(8, 12)]) == [I(1, 2), I(4, 5), I(8, 10)]
    assert intersect([I(1, 2), I(4, 5), I(8, 12)], [I(0, 10)]) == [I(1, 2), I(4, 5), I(8, 10)]


def test_intersect_adjacent_or_empty_gives_nothing():
    assert intersect([I(0, 3)], [I(3, 6)]) == []
    assert intersect([I(0, 3)], []) == []


def test_subtract_punches_holes():
    assert subtract([I(0, 10)], [I(2, 4), I(6, 8)]) == [I(0, 2), I(4, 6), I(8, 10)]


def test_subtract_hole_over_start_or_end():
    assert subtract([I(0, 10)], [I(-5, 3)]) == [I(3, 10)]
    assert subtract([I(0, 10)], [I(7, 15)]) == [I(0, 7)]


def test_subtract_everything_leaves_nothing():
    assert subtract([I(0, 10)], [I(-1, 11)]) == []
    assert subtract([I(0, 10)], [I(0, 10)]) == []


def test_subtract_adjacent_holes_change_nothing():
    assert subtract([I(0, 5)], [I(5, 8)]) == [I(0, 5)]
    assert subtract([I(5, 8)], [I(0, 5)]) == [I(5, 8)]
    assert subtract([I(0, 5), I(7, 9)], []) == [I(0, 5), I(7, 9)]


def test_subtract_hole_spanning_two_intervals():
    assert subtract([I(0, 4), I(6, 10)], [I(3, 7)]) == [I(0, 3), I(7, 10)]


def test_total_length_counts_overlap_once():
    assert total_length([I(0, 5), I(3, 8), I(10, 11)]) == 9
    assert total_length([]) == 0
    assert total_length([I(0.5, 1.0), I(2.0, 2.25)]) == 0.75


def test_gaps_between_merged_intervals():
    assert gaps([I(5, 7), I(0, 2), I(1, 3), I(9, 10)]) == [I(3, 5), I(7, 9)]


def test_gaps_none_for_single_or_adjacent():
    assert gaps([I(0, 2)]) == []
    assert gaps([I(0, 2), I(2, 4)]) == []
    assert gaps([]) == []


def test_complement_within_bounds():
    assert complement([I(2, 3), I(5, 6)], I(0, 10)) == [I(0, 2), I(3, 5), I(6, 10)]
    assert complement([], I(0, 1)) == [I(0, 1)]
    assert complement([I(-3, 20)], I(0, 10)) == []
