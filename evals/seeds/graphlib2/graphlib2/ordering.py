"""Topological sorting, cycle detection and connected components."""

import heapq

from .traversal import bfs_order


class CycleError(ValueError):
    """Raised by topological_sort when the graph contains a cycle."""

    def __init__(self, cycle):
        super().__init__("graph contains a cycle: %r" % (cycle,))
        self.cycle = cycle


def topological_sort(graph):
    """Return the nodes of a directed graph in topological order.

    Kahn's algorithm; among the nodes that are ready, the smallest comes
    first, so the result is the lexicographically smallest valid order.
    Raises ValueError for undirected graphs and CycleError on a cycle.
    """
    if not graph.directed:
        raise ValueError("topological sort needs a directed graph")
    indeg = {node: graph.in_degree(node) for node in graph.nodes()}
    ready = [node for node, d in indeg.items() if d == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        node = heapq.heappop(ready)
        order.append(node)
        for nxt in graph.neighbors(node):
            indeg[nxt] -= 1
            if indeg[nxt] == 0:
                heapq.heappush(ready, nxt)
    if len(order) < len(indeg):
        raise CycleError(find_cycle(graph))
    return order


def find_cycle(graph):
    """Return one directed cycle as a node list ``[a, b, ..., a]``, or None.

    Nodes are explored in sorted order, so the cycle found is deterministic.
    """
    WHITE, GREY, BLACK = 0, 1, 2
    color = {node: WHITE for node in graph.nodes()}
    stack_path = []

    def visit(node):
        color[node] = GREY
        stack_path.append(node)
        for nxt in graph.neighbors(node):
            if color[nxt] == GREY:
                start = stack_path.index(nxt)
                return stack_path[start:] + [nxt]
            if color[nxt] == WHITE:
                found = visit(nxt)
                if found is not None:
                    return found
        stack_path.pop()
        color[node] = BLACK
        return None

    for node in graph.nodes():
        if color[node] == WHITE:
            found = visit(node)
            if found is not None:
                return found
    return None


def is_acyclic(graph):
    """Return True if the directed graph has no cycle."""
    return find_cycle(graph) is None


def _undirected_view(graph):
    from .graph import Graph

    view = Graph(directed=False)
    for node in graph.nodes():
        view.add_node(node)
    for u, v, w in graph.edges():
        view.add_edge(u, v, w)
    return view


def connected_components(graph):
    """Return the connected components as a list of sorted node lists.

    Directed graphs are treated as undirected (weak components). Components
    are ordered by their smallest node; larger components do not come first.
    """
    view = graph if not graph.directed else _undirected_view(graph)
    seen = set()
    components = []
    for node in view.nodes():
        if node in seen:
            continue
        comp = bfs_order(view, node)
        seen.update(comp)
        components.append(sorted(comp))
    return components


def component_of(graph, node):
    """Return the sorted component containing ``node``."""
    for comp in connected_components(graph):
        if node in comp:
            return comp
    raise KeyError(node)
