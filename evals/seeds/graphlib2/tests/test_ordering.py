import pytest

from graphlib2 import (
    CycleError,
    Graph,
    component_of,
    connected_components,
    find_cycle,
    is_acyclic,
    topological_sort,
)


def dag():
    g = Graph(directed=True)
    for u, v in [(5, 11), (7, 11), (7, 8), (3, 8), (3, 10), (11, 2), (11, 9), (11, 10), (8, 9)]:
        g.add_edge(u, v)
    return g


def test_topological_sort_smallest_ready_first():
    assert topological_sort(dag()) == [3, 5, 7, 8, 11, 2, 9, 10]


def test_topological_sort_respects_every_edge():
    order = topological_sort(dag())
    pos = {node: i for i, node in enumerate(order)}
    assert all(pos[u] < pos[v] for u, v, _ in dag().edges())


def test_topological_sort_isolated_nodes():
    g = Graph(directed=True)
    g.add_node("b")
    g.add_node("a")
    assert topological_sort(g) == ["a", "b"]


def test_topological_sort_detects_cycle():
    g = dag()
    g.add_edge(9, 7)
    with pytest.raises(CycleError) as info:
        topological_sort(g)
    assert info.value.cycle == [8, 9, 7, 8]


def test_topological_sort_requires_directed_graph():
    with pytest.raises(ValueError):
        topological_sort(Graph())


def test_find_cycle_none_for_dag():
    assert find_cycle(dag()) is None
    assert is_acyclic(dag())


def test_find_cycle_self_loop():
    g = Graph(directed=True)
    g.add_edge(1, 2)
    g.add_edge(2, 2)
    assert find_cycle(g) == [2, 2]
    assert not is_acyclic(g)


def test_find_cycle_returns_only_cycle_part():
    g = Graph(directed=True)
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    g.add_edge("c", "d")
    g.add_edge("d", "b")
    assert find_cycle(g) == ["b", "c", "d", "b"]


def test_diamond_is_not_a_cycle():
    g = Graph(directed=True)
    g.add_edge(1, 2)
    g.add_edge(1, 3)
    g.add_edge(2, 4)
    g.add_edge(3, 4)
    assert find_cycle(g) is None


def test_connected_components_undirected():
    g = Graph()
    g.add_edge(4, 5)
    g.add_edge(1, 2)
    g.add_edge(2, 3)
    g.add_node(9)
    assert connected_components(g) == [[1, 2, 3], [4, 5], [9]]


def test_connected_components_directed_are_weak():
    g = Graph(directed=True)
    g.add_edge(2, 1)
    g.add_edge(3, 1)
    g.add_edge(5, 4)
    assert connected_components(g) == [[1, 2, 3], [4, 5]]


def test_connected_components_empty_graph():
    assert connected_components(Graph()) == []


def test_component_of():
    g = Graph()
    g.add_edge("x", "y")
    g.add_edge("p", "q")
    assert component_of(g, "y") == ["x", "y"]
    with pytest.raises(KeyError):
        component_of(g, "z")


def test_cycle_error_message_and_attribute():
    err = CycleError([1, 2, 1])
    assert str(err) == "graph contains a cycle: [1, 2, 1]"
    assert err.cycle == [1, 2, 1]
    assert isinstance(err, ValueError)


def test_find_cycle_skips_finished_branches():
    g = Graph(directed=True)
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    g.add_edge("b", "d")
    g.add_edge("d", "b")
    assert find_cycle(g) == ["b", "d", "b"]


def test_connected_components_directed_keeps_isolated_nodes():
    g = Graph(directed=True)
    g.add_edge(1, 2)
    g.add_node(0)
    assert connected_components(g) == [[0], [1, 2]]
