"""Breadth-first and depth-first traversals."""

from collections import deque


def _check_start(graph, start):
    if not graph.has_node(start):
        raise KeyError(start)


def bfs_order(graph, start):
    """Return nodes reachable from ``start`` in breadth-first order.

    Neighbours are visited in ascending order.
    """
    _check_start(graph, start)
    seen = {start}
    order = []
    queue = deque([start])
    while queue:
        node = queue.popleft()
        order.append(node)
        for nxt in graph.neighbors(node):
            if nxt not in seen:
                seen.add(nxt)
                queue.append(nxt)
    return order


def dfs_order(graph, start):
    """Return nodes reachable from ``start`` in depth-first preorder.

    The smallest unvisited neighbour is always explored first, which is the
    same order a recursive DFS over sorted neighbours would produce.
    """
    _check_start(graph, start)
    seen = set()
    order = []
    stack = [start]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        order.append(node)
        for nxt in reversed(graph.neighbors(node)):
            if nxt not in seen:
                stack.append(nxt)
    return order


def hop_distances(graph, start, max_hops=None):
    """Return ``{node: number_of_edges}`` for nodes reachable from ``start``.

    If ``max_hops`` is given, nodes farther than ``max_hops`` edges away are
    left out.
    """
    _check_start(graph, start)
    dist = {start: 0}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        if max_hops is not None and dist[node] >= max_hops:
            continue
        for nxt in graph.neighbors(node):
            if nxt not in dist:
                dist[nxt] = dist[node] + 1
                queue.append(nxt)
    return dist


def has_path(graph, source, target):
    """Return True if ``target`` is reachable from ``source``."""
    if not graph.has_node(source) or not graph.has_node(target):
        return False
    if source == target:
        return True
    return target in hop_distances(graph, source)
