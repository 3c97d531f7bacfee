import pytest

from graphlib2 import Graph


def make_directed():
    g = Graph(directed=True)
    g.add_edge("a", "b", 3)
    g.add_edge("a", "c", 1)
    g.add_edge("c", "b", 1)
    g.add_edge("b", "d", 2)
    return g


def test_add_edge_creates_both_nodes():
    g = Graph()
    g.add_edge(1, 2)
    assert g.nodes() == [1, 2]
    assert len(g) == 2
    assert 1 in g and 3 not in g


def test_undirected_edge_is_symmetric():
    g = Graph()
    g.add_edge(1, 2, 5)
    assert g.has_edge(2, 1)
    assert g.weight(2, 1) == 5


def test_directed_edge_is_one_way():
    g = make_directed()
    assert g.has_edge("a", "b")
    assert not g.has_edge("b", "a")


def test_re_adding_edge_replaces_weight():
    g = Graph()
    g.add_edge(1, 2, 5)
    g.add_edge(1, 2, 7)
    assert g.edges() == [(1, 2, 7)]


def test_weight_must_be_int():
    g = Graph()
    with pytest.raises(TypeError):
        g.add_edge(1, 2, 1.5)
    with pytest.raises(TypeError):
        g.add_edge(1, 2, True)


def test_remove_edge_undirected_removes_both_directions():
    g = Graph()
    g.add_edge(1, 2)
    g.add_edge(2, 3)
    g.remove_edge(2, 1)
    assert not g.has_edge(1, 2)
    assert not g.has_edge(2, 1)
    assert g.edges() == [(2, 3, 1)]


def test_remove_missing_edge_raises():
    g = make_directed()
    with pytest.raises(KeyError):
        g.remove_edge("b", "a")


def test_neighbors_sorted_and_predecessors():
    g = make_directed()
    assert g.neighbors("a") == ["b", "c"]
    assert g.predecessors("b") == ["a", "c"]
    assert g.predecessors("a") == []


def test_neighbors_of_unknown_node_raises():
    g = Graph()
    with pytest.raises(KeyError):
        g.neighbors("x")


def test_edges_listed_once_for_undirected():
    g = Graph()
    g.add_edge(3, 1, 4)
    g.add_edge(2, 3, 6)
    assert g.edges() == [(1, 3, 4), (2, 3, 6)]


def test_edges_directed_keep_orientation():
    g = make_directed()
    assert g.edges() == [("a", "b", 3), ("a", "c", 1), ("b", "d", 2), ("c", "b", 1)]


def test_degrees_directed():
    g = make_directed()
    assert g.out_degree("a") == 2
    assert g.in_degree("b") == 2
    assert g.degree("b") == 3
    assert g.degree("d") == 1


def test_degree_undirected_counts_self_loop_twice():
    g = Graph()
    g.add_edge(1, 2)
    g.add_edge(1, 1)
    assert g.degree(1) == 3
    assert g.degree(2) == 1


def test_weight_of_missing_edge_raises():
    g = make_directed()
    with pytest.raises(KeyError):
        g.weight("d", "a")


def test_undirected_self_loop_listed_in_edges():
    g = Graph()
    g.add_edge(2, 2, 9)
    g.add_edge(1, 2, 3)
    assert g.edges() == [(1, 2, 3), (2, 2, 9)]


def test_predecessors_of_unknown_node_raises():
    g = make_directed()
    with pytest.raises(KeyError):
        g.predecessors("zzz")
    with pytest.raises(KeyError):
        g.in_degree("zzz")
