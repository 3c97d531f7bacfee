"""Weighted shortest paths (Dijkstra)."""

import heapq


def dijkstra(graph, source):
    """Return ``(dist, prev)`` for single-source shortest paths.

    ``dist`` maps every reachable node to its distance from ``source``;
    ``prev`` maps every reachable node except ``source`` to its predecessor
    on a shortest path. Negative edge weights raise ValueError. Ties are
    broken towards the smaller predecessor.
    """
    if not graph.has_node(source):
        raise KeyError(source)
    for _, _, w in graph.edges():
        if w < 0:
            raise ValueError("negative edge weight")
    dist = {source: 0}
    prev = {}
    done = set()
    heap = [(0, source)]
    while heap:
        d, node = heapq.heappop(heap)
        if node in done:
            continue
        done.add(node)
        for nxt in graph.neighbors(node):
            cand = d + graph.weight(node, nxt)
            old = dist.get(nxt)
            if old is None or cand < old or (cand == old and node < prev.get(nxt, node)):
                dist[nxt] = cand
                prev[nxt] = node
                heapq.heappush(heap, (cand, nxt))
    return dist, prev


def shortest_path(graph, source, target):
    """Return ``(cost, [source, ..., target])`` or None if unreachable."""
    if not graph.has_node(target):
        raise KeyError(target)
    dist, prev = dijkstra(graph, source)
    if target not in dist:
        return None
    path = [target]
    while path[-1] != source:
        path.append(prev[path[-1]])
    path.reverse()
    return dist[target], path


def path_weight(graph, path):
    """Return the total weight of the edges along ``path``.

    A path with fewer than two nodes has weight 0. A missing edge raises
    KeyError.
    """
    total = 0
    for i in range(len(path) - 1):
        total += graph.weight(path[i], path[i + 1])
    return total
