"""graphlib2: a small, dependency-free graph library.

Nodes are any hashable, sortable values (ints or strings). Wherever a
traversal has to choose between several neighbours, the smallest one is
visited first, so every result is deterministic.
"""

from .graph import Graph
from .traversal import bfs_order, dfs_order, hop_distances, has_path
from .paths import dijkstra, shortest_path, path_weight
from .ordering import (
    CycleError,
    topological_sort,
    find_cycle,
    is_acyclic,
    connected_components,
    component_of,
)

__all__ = [
    "Graph",
    "bfs_order",
    "dfs_order",
    "hop_distances",
    "has_path",
    "dijkstra",
    "shortest_path",
    "path_weight",
    "CycleError",
    "topological_sort",
    "find_cycle",
    "is_acyclic",
    "connected_components",
    "component_of",
]
