"""A layered drawing of a dataflow graph (Sugiyama style), in pure Python: small, deterministic, no dependencies.

The graph is given as boxes (operations, in topological order) and wires (values: made by one box, read by
others). Each wire gets a label box of its own (its type, ``f64[4,16]``) just below its producer, so labels are
placed like nodes and can never overlap one another. The steps:

    1. layers   longest path from the graph's sources; a box with no operands (an input, a parameter, a
                constant) is then pulled down to just above its first reader, so a constant sits beside
                the op that uses it. Boxes go on even rows, wire labels on the odd row below their producer.
    2. dummies  a wire that reaches further than the next row runs down a trunk of invisible dummy nodes,
                one per row, shared by all its readers; afterwards every edge joins two adjacent rows
    3. order    a few barycenter sweeps (down, then up) reorder each row to reduce edge crossings; the order
                with the fewest crossings seen is kept
    4. x        each node moves toward the mean x of its neighbours in the row above (or below), then the
                row is spread so that nodes keep their order and do not overlap (least squares, solved
                exactly by pool-adjacent-violators)
    5. y        rows are stacked a fixed gap apart

Ties are broken by creation order (boxes, then labels, then dummies), so the same graph always gets the same
picture.
"""

from __future__ import annotations

from dataclasses import dataclass

Point = tuple[float, float]

ARRIVAL_STEP = 14.0  # distance between the ends of edges entering the same box
DUMMY_WEIGHT = 8.0  # how much more a dummy (a bend of a long edge) resists being moved than a box


@dataclass
class Wire:
    """One value of the graph, as the layout sees it."""

    producer: int
    """Index of the box that makes the value."""
    users: list[int]
    """Indices of the boxes that read it, each once; every one comes after ``producer``."""
    label_size: tuple[float, float]
    """Width and height of the value's label."""


@dataclass
class Layout:
    """Where everything goes. Coordinates are centres, in pixels, y pointing down."""

    boxes: list[Point]
    """Centre of each box."""
    labels: list[Point]
    """Centre of each wire's label."""
    routes: list[list[list[Point]]]
    """``routes[w][k]``: the polyline of wire ``w`` to its ``k``-th user, from the producer's bottom edge
    through the label to the user's top edge."""
    width: float
    """Width of the whole drawing, margins included."""
    height: float
    """Height of the whole drawing, margins included."""


def layered_layout(box_sizes: list[tuple[float, float]], wires: list[Wire], *, row_gap: float = 16.0,
                   node_gap: float = 20.0, margin: float = 12.0, sweeps: int = 4) -> Layout:
    """Lay out boxes (in topological order) and the wires between them, top to bottom."""
    n_boxes = len(box_sizes)
    for w in wires:
        if any(u <= w.producer for u in w.users):
            raise ValueError(f"wire from box {w.producer} reads back to {w.users}: boxes must be in topological order")

    # 1. layers. Every node of the drawing (boxes, labels, dummies) is an index into these lists.
    sizes = list(box_sizes) + [w.label_size for w in wires]
    box_row = [2 * layer for layer in _box_layers(n_boxes, wires)]
    row = box_row + [box_row[w.producer] + 1 for w in wires]
    preds: list[list[int]] = [[] for _ in sizes]
    succs: list[list[int]] = [[] for _ in sizes]

    def add_node(r: int) -> int:
        sizes.append((0.0, 0.0))
        row.append(r)
        preds.append([])
        succs.append([])
        return len(sizes) - 1

    def link(a: int, b: int) -> None:
        succs[a].append(b)
        preds[b].append(a)

    # 2. dummies
    paths: list[list[list[int]]] = []  # node path of each (wire, user), as `routes` is
    for i, w in enumerate(wires):
        label = n_boxes + i
        link(w.producer, label)
        trunk = {row[label]: label}  # row -> the node the wire passes through on that row
        last_row = max((row[u] for u in w.users), default=row[label]) - 1
        for r in range(row[label] + 1, last_row + 1):
            trunk[r] = add_node(r)
            link(trunk[r - 1], trunk[r])
        wire_paths = []
        for u in w.users:
            link(trunk[row[u] - 1], u)
            wire_paths.append([w.producer] + [trunk[r] for r in range(row[label], row[u])] + [u])
        paths.append(wire_paths)

    # 3. order, 4. x
    rows: list[list[int]] = [[] for _ in range(max(row, default=-1) + 1)]
    for v, r in enumerate(row):
        rows[r].append(v)
    rows = _reduce_crossings(rows, preds, succs, sweeps)
    x = _assign_x(rows, preds, succs, [s[0] for s in sizes], node_gap, sweeps)

    # 5. y, with x shifted so that the leftmost node touches the margin
    left = min((x[v] - sizes[v][0] / 2 for v in range(len(sizes))), default=0.0)
    x = [xv - left + margin for xv in x]
    y = [0.0] * len(sizes)
    top = margin
    for r in rows:
        height = max((sizes[v][1] for v in r), default=0.0)
        for v in r:
            y[v] = top + height / 2
        top += height + row_gap
    width = max((x[v] + sizes[v][0] / 2 for v in range(len(sizes))), default=0.0) + margin

    def route(path: list[int]) -> list[Point]:
        producer, label, *rest = path
        points = [(x[producer], y[producer] + sizes[producer][1] / 2),
                  (x[label], y[label] - sizes[label][1] / 2), (x[label], y[label] + sizes[label][1] / 2)]
        points += [(x[v], y[v]) for v in rest[:-1]]
        user = rest[-1]
        points.append((x[user], y[user] - sizes[user][1] / 2))
        return points

    routes = [[route(p) for p in wire_paths] for wire_paths in paths]
    _spread_arrivals(routes, paths, sizes)
    return Layout(boxes=[(x[v], y[v]) for v in range(n_boxes)],
                  labels=[(x[n_boxes + i], y[n_boxes + i]) for i in range(len(wires))],
                  routes=routes, width=width, height=top - row_gap + margin)


def _spread_arrivals(routes: list[list[list[Point]]], paths: list[list[list[int]]], sizes) -> None:
    """Edges entering the same box end at distinct points along its top, in the left-to-right order they come
    from, so each arrowhead can be told apart."""
    arriving: dict[int, list[list[Point]]] = {}
    for wire_routes, wire_paths in zip(routes, paths):
        for points, path in zip(wire_routes, wire_paths):
            arriving.setdefault(path[-1], []).append(points)
    for user, group in arriving.items():
        group.sort(key=lambda points: points[-2][0])
        step = min(ARRIVAL_STEP, sizes[user][0] / (len(group) + 1))
        for i, points in enumerate(group):
            x, y = points[-1]
            points[-1] = (x + (i - (len(group) - 1) / 2) * step, y)


def _box_layers(n_boxes: int, wires: list[Wire]) -> list[int]:
    """Longest-path layering, then boxes with no operands pulled down to just above their first reader."""
    operands: list[list[int]] = [[] for _ in range(n_boxes)]
    readers: list[list[int]] = [[] for _ in range(n_boxes)]
    for w in wires:
        for u in w.users:
            operands[u].append(w.producer)
            readers[w.producer].append(u)
    layer = [0] * n_boxes
    for v in range(n_boxes):
        if operands[v]:
            layer[v] = 1 + max(layer[p] for p in operands[v])
    for v in range(n_boxes):
        if not operands[v] and readers[v]:
            layer[v] = min(layer[u] for u in readers[v]) - 1
    return layer


def _reduce_crossings(rows: list[list[int]], preds, succs, sweeps: int) -> list[list[int]]:
    """Barycenter sweeps: sort each row by the mean position of its neighbours in the row just fixed."""
    position = {v: i for r in rows for i, v in enumerate(r)}
    best, best_crossings = [list(r) for r in rows], _count_crossings(rows, succs, position)
    for _ in range(sweeps):
        for r in rows[1:]:
            _sort_by_barycenter(r, preds, position)
        for r in reversed(rows[:-1]):
            _sort_by_barycenter(r, succs, position)
        crossings = _count_crossings(rows, succs, position)
        if crossings < best_crossings:
            best, best_crossings = [list(r) for r in rows], crossings
    return best


def _sort_by_barycenter(r: list[int], neighbours, position: dict[int, int]) -> None:
    def key(v: int) -> tuple[float, int]:
        around = neighbours[v]
        centre = sum(position[u] for u in around) / len(around) if around else position[v]
        return centre, position[v]  # ties keep the current order
    r.sort(key=key)
    for i, v in enumerate(r):
        position[v] = i


def _count_crossings(rows: list[list[int]], succs, position: dict[int, int]) -> int:
    """Pairs of edges between adjacent rows whose ends are in opposite orders."""
    total = 0
    for r in rows[:-1]:
        ends = [(position[a], position[b]) for a in r for b in succs[a]]
        for i, (a1, b1) in enumerate(ends):
            for a2, b2 in ends[i + 1:]:
                if (a1 - a2) * (b1 - b2) < 0:
                    total += 1
    return total


def _assign_x(rows: list[list[int]], preds, succs, widths: list[float], gap: float, sweeps: int) -> list[float]:
    """x of every node's centre: pulled toward its neighbours, spread so that nodes in a row never overlap.

    Dummies weigh more than boxes when a row is spread, so long edges stay straight and boxes step aside.
    """
    x = [0.0] * len(widths)
    weight = [DUMMY_WEIGHT if w == 0 else 1.0 for w in widths]

    def place(r: list[int], wanted: list[float]) -> None:
        min_gaps = [(widths[a] + widths[b]) / 2 + gap for a, b in zip(r, r[1:])]
        for v, xv in zip(r, fit_in_order(wanted, min_gaps, [weight[v] for v in r])):
            x[v] = xv

    def toward(r: list[int], near, far) -> list[float]:
        """Mean x of each node's neighbours on the `near` side (the row just placed), else on the `far` side."""
        wanted = []
        for v in r:
            around = near[v] or far[v]
            wanted.append(sum(x[u] for u in around) / len(around) if around else x[v])
        return wanted

    for r in rows:
        place(r, [0.0] * len(r))
    for _ in range(sweeps):
        for r in rows[1:]:
            place(r, toward(r, preds, succs))
        for r in reversed(rows[:-1]):
            place(r, toward(r, succs, preds))
    for r in rows[1:]:  # end going down, so each label sits right under its producer
        place(r, toward(r, preds, succs))
    return x


def fit_in_order(wanted: list[float], min_gaps: list[float], weights: list[float]) -> list[float]:
    """Positions closest to ``wanted`` (weighted least squares) with ``x[i+1] - x[i] >= min_gaps[i]``.

    Substituting ``y[i] = x[i] - offset[i]`` (offset: the sum of the gaps before i) turns the constraint into
    ``y`` non-decreasing: isotonic regression, which pool-adjacent-violators solves exactly. Each block is a
    run of nodes pushed together, placed at the weighted mean of what they want.
    """
    offsets = [0.0]
    for g in min_gaps:
        offsets.append(offsets[-1] + g)
    blocks: list[tuple[float, float, int]] = []  # (mean, total weight, count)
    for target, w in zip((x - o for x, o in zip(wanted, offsets)), weights):
        blocks.append((target, w, 1))
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            mean, total, count = blocks.pop()
            before_mean, before_total, before_count = blocks.pop()
            merged = before_total + total
            blocks.append(((before_mean * before_total + mean * total) / merged, merged, before_count + count))
    ys = [mean for mean, _, count in blocks for _ in range(count)]
    return [y + o for y, o in zip(ys, offsets)]
