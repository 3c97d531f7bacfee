import pytest

from graphlib2 import Graph, dijkstra, shortest_path, path_weight


def roads():
    g = Graph(directed=True)
    g.add_edge("A", "B", 4)
    g.add_edge("A", "C", 1)
    g.add_edge("C", "B", 2)
    g.add_edge("B", "D", 1)
    g.add_edge("C", "D", 5)
    g.add_edge("D", "E", 3)
    return g


def test_dijkstra_distances():
    dist, _ = dijkstra(roads(), "A")
    assert dist == {"A": 0, "B": 3, "C": 1, "D": 4, "E": 7}


def test_dijkstra_predecessors():
    _, prev = dijkstra(roads(), "A")
    assert prev == {"B": "C", "C": "A", "D": "B", "E": "D"}


def test_shortest_path_prefers_cheaper_longer_route():
    assert shortest_path(roads(), "A", "E") == (7, ["A", "C", "B", "D", "E"])


def test_shortest_path_to_self():
    assert shortest_path(roads(), "B", "B") == (0, ["B"])


def test_shortest_path_unreachable_is_none():
    assert shortest_path(roads(), "E", "A") is None


def test_shortest_path_unknown_target_raises():
    with pytest.raises(KeyError):
        shortest_path(roads(), "A", "Z")


def test_dijkstra_rejects_negative_weights():
    g = Graph(directed=True)
    g.add_edge(1, 2, -1)
    with pytest.raises(ValueError):
        dijkstra(g, 1)


def test_dijkstra_allows_zero_weights():
    g = Graph(directed=True)
    g.add_edge(1, 2, 0)
    g.add_edge(2, 3, 0)
    assert dijkstra(g, 1)[0] == {1: 0, 2: 0, 3: 0}


def test_dijkstra_tie_breaks_to_smaller_predecessor():
    g = Graph(directed=True)
    g.add_edge(1, 3, 1)
    g.add_edge(1, 2, 1)
    g.add_edge(3, 4, 1)
    g.add_edge(2, 4, 1)
    assert shortest_path(g, 1, 4) == (2, [1, 2, 4])


def test_undirected_shortest_path():
    g = Graph()
    g.add_edge(1, 2, 7)
    g.add_edge(2, 3, 1)
    g.add_edge(1, 3, 10)
    assert shortest_path(g, 3, 1) == (8, [3, 2, 1])


def test_path_weight():
    g = roads()
    assert path_weight(g, ["A", "C", "B", "D"]) == 4
    assert path_weight(g, ["A"]) == 0
    assert path_weight(g, []) == 0
    with pytest.raises(KeyError):
        path_weight(g, ["A", "E"])


def test_source_never_gets_a_predecessor():
    g = Graph()
    g.add_edge(1, 2, 0)
    g.add_edge(2, 3, 4)
    dist, prev = dijkstra(g, 1)
    assert dist == {1: 0, 2: 0, 3: 4}
    assert prev == {2: 1, 3: 2}


def test_tie_found_later_still_prefers_smaller_predecessor():
    g = Graph(directed=True)
    g.add_edge(0, 5, 1)
    g.add_edge(0, 1, 1)
    g.add_edge(1, 2, 1)
    g.add_edge(5, 9, 2)
    g.add_edge(2, 9, 1)
    assert shortest_path(g, 0, 9) == (3, [0, 1, 2, 9])
