import pytest

from graphlib2 import Graph, bfs_order, dfs_order, hop_distances, has_path


def tree():
    #        1
    #      /   \
    #     2     3
    #    / \     \
    #   4   5     6
    g = Graph()
    for u, v in [(1, 2), (1, 3), (2, 4), (2, 5), (3, 6)]:
        g.add_edge(u, v)
    return g


def test_bfs_visits_level_by_level():
    assert bfs_order(tree(), 1) == [1, 2, 3, 4, 5, 6]


def test_dfs_goes_deep_first():
    assert dfs_order(tree(), 1) == [1, 2, 4, 5, 3, 6]


def test_dfs_from_leaf_in_undirected_tree():
    assert dfs_order(tree(), 5) == [5, 2, 1, 3, 6, 4]


def test_bfs_only_reachable_nodes_in_directed_graph():
    g = Graph(directed=True)
    g.add_edge(1, 2)
    g.add_edge(3, 1)
    g.add_node(9)
    assert bfs_order(g, 1) == [1, 2]
    assert dfs_order(g, 3) == [3, 1, 2]


def test_dfs_handles_cycles():
    g = Graph(directed=True)
    g.add_edge(1, 2)
    g.add_edge(2, 3)
    g.add_edge(3, 1)
    g.add_edge(2, 4)
    assert dfs_order(g, 1) == [1, 2, 3, 4]


def test_traversal_of_unknown_start_raises():
    with pytest.raises(KeyError):
        bfs_order(tree(), 42)
    with pytest.raises(KeyError):
        dfs_order(tree(), 42)


def test_hop_distances():
    assert hop_distances(tree(), 1) == {1: 0, 2: 1, 3: 1, 4: 2, 5: 2, 6: 2}


def test_hop_distances_with_limit():
    assert hop_distances(tree(), 4, max_hops=2) == {4: 0, 2: 1, 1: 2, 5: 2}
    assert hop_distances(tree(), 4, max_hops=0) == {4: 0}


def test_has_path_directed():
    g = Graph(directed=True)
    g.add_edge("x", "y")
    g.add_edge("y", "z")
    assert has_path(g, "x", "z")
    assert not has_path(g, "z", "x")
    assert has_path(g, "z", "z")
    assert not has_path(g, "x", "missing")


def test_has_path_with_unknown_source_is_false():
    g = tree()
    assert not has_path(g, 99, 1)
    assert not has_path(g, 99, 99)


def test_dfs_never_repeats_a_node_pushed_twice():
    g = Graph(directed=True)
    g.add_edge(1, 2)
    g.add_edge(1, 3)
    g.add_edge(2, 3)
    assert dfs_order(g, 1) == [1, 2, 3]


def test_has_path_returns_real_booleans():
    g = tree()
    assert has_path(g, 4, 4) is True
    assert has_path(g, 4, 6) is True
    assert has_path(g, 4, 7) is False
