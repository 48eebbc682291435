"""A tree export (ChatGPT's `mapping`, Open WebUI's `history.messages`) walked into paths.

Both apps keep a conversation as nodes linked to their parent; an edit or a regeneration adds a
sibling. Every leaf ends one root-to-leaf path, and every path becomes a branch of the imported
chat. The links are read from each node's parent (a `children` list can be stale); a loop or a
link to no node ends a walk, and nothing is lost by it. The shown path (to the app's current
node, or to the newest leaf below it) comes last, so that it is written last and stays the
one shown. Pure: parsed JSON in, node ids out.
"""

from __future__ import annotations

from typing import Any


def leaf_paths(nodes: dict[str, Any], parent_key: str, current: Any) -> list[list[str]]:
    """Every root-to-leaf path of `nodes` as node ids, in the tree's order, the shown one last."""
    children: dict[str, list[str]] = {key: [] for key in nodes}
    roots: list[str] = []
    for key, node in nodes.items():
        parent = (node or {}).get(parent_key) if isinstance(node, dict) else None
        if isinstance(parent, str) and parent in nodes and parent != key:
            children[parent].append(key)
        else:
            roots.append(key)
    order: list[str] = []  # the leaves, depth first
    seen: set[str] = set()
    stack = list(reversed(roots))
    while stack:
        key = stack.pop()
        if key in seen:
            continue
        seen.add(key)
        below = [c for c in children[key] if c not in seen]
        if not below:
            order.append(key)
        stack.extend(reversed(below))
    shown = _shown_leaf(current, children, order)
    paths = [_path(nodes, leaf, parent_key) for leaf in order if leaf != shown]
    if shown is not None:
        paths.append(_path(nodes, shown, parent_key))
    return paths


def _shown_leaf(current: Any, children: dict[str, list[str]], leaves: list[str]) -> str | None:
    """The leaf the app showed: `current` itself, the newest leaf below it, else the last."""
    if not leaves:
        return None
    if not isinstance(current, str) or current not in children:
        return leaves[-1]
    below, stack = set(), [current]
    while stack:
        key = stack.pop()
        if key not in below:
            below.add(key)
            stack.extend(children[key])
    return next((leaf for leaf in reversed(leaves) if leaf in below), leaves[-1])


def _path(nodes: dict[str, Any], leaf: str, parent_key: str) -> list[str]:
    path, seen = [], set()
    cursor: Any = leaf
    while isinstance(cursor, str) and cursor in nodes and cursor not in seen:
        seen.add(cursor)
        path.append(cursor)
        node = nodes[cursor]
        cursor = node.get(parent_key) if isinstance(node, dict) else None
    path.reverse()
    return path
