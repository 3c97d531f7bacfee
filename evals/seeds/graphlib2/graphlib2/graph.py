"""The Graph container: adjacency maps with integer edge weights."""


class Graph:
    """A directed or undirected graph with integer edge weights.

    Internally ``_adj[u][v]`` holds the weight of the edge ``u -> v``. For an
    undirected graph every edge is stored in both directions.
    """

    def __init__(self, directed=False):
        self.directed = directed
        self._adj = {}

    def add_node(self, node):
        """Add ``node`` if it is not already present."""
        if node not in self._adj:
            self._adj[node] = {}

    def add_edge(self, u, v, weight=1):
        """Add an edge from ``u`` to ``v`` with an integer ``weight``.

        Both endpoints are created if needed. Adding an existing edge again
        replaces its weight. Weights must be integers (bools are rejected).
        """
        if not isinstance(weight, int) or isinstance(weight, bool):
            raise TypeError("edge weight must be an int")
        self.add_node(u)
        self.add_node(v)
        self._adj[u][v] = weight
        if not self.directed:
            self._adj[v][u] = weight

    def remove_edge(self, u, v):
        """Remove the edge ``u -> v``; raise KeyError if it does not exist."""
        if not self.has_edge(u, v):
            raise KeyError((u, v))
        del self._adj[u][v]
        if not self.directed:
            del self._adj[v][u]

    def has_node(self, node):
        """Return True if ``node`` is in the graph."""
        return node in self._adj

    def has_edge(self, u, v):
        """Return True if there is an edge from ``u`` to ``v``."""
        return u in self._adj and v in self._adj[u]

    def weight(self, u, v):
        """Return the weight of edge ``u -> v``; KeyError if it is missing."""
        if not self.has_edge(u, v):
            raise KeyError((u, v))
        return self._adj[u][v]

    def nodes(self):
        """Return all nodes in sorted order."""
        return sorted(self._adj)

    def neighbors(self, node):
        """Return the successors of ``node`` in sorted order."""
        if node not in self._adj:
            raise KeyError(node)
        return sorted(self._adj[node])

    def predecessors(self, node):
        """Return the nodes with an edge into ``node``, in sorted order."""
        if node not in self._adj:
            raise KeyError(node)
        return sorted(u for u in self._adj if node in self._adj[u])

    def edges(self):
        """Return edges as sorted ``(u, v, weight)`` triples.

        For an undirected graph each edge is listed once, with ``u <= v``.
        """
        result = []
        for u in self._adj:
            for v, w in self._adj[u].items():
                if self.directed or u <= v:
                    result.append((u, v, w))
        return sorted(result)

    def out_degree(self, node):
        """Number of edges leaving ``node``."""
        return len(self.neighbors(node))

    def in_degree(self, node):
        """Number of edges entering ``node``."""
        return len(self.predecessors(node))

    def degree(self, node):
        """Total degree: in + out for directed graphs, neighbour count otherwise.

        A self-loop in an undirected graph counts twice.
        """
        if self.directed:
            return self.out_degree(node) + self.in_degree(node)
        loops = 1 if node in self._adj.get(node, {}) else 0
        return self.out_degree(node) + loops

    def __len__(self):
        return len(self._adj)

    def __contains__(self, node):
        return node in self._adj
