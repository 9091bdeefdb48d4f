"""The search tree's picture: where each node is drawn, and that a PNG comes out."""

from kernelwright.report.tree_plot import layout, search_tree_png


def node(i, parent=None, status="correct", ms=1.0):
    return {"id": i, "parent": parent, "note": "", "status": status, "correct": status == "correct",
            "ms": ms, "speedup_vs_eager": 1.5, "evaluated": True, "reused": False}


def test_leaves_take_rows_in_order_and_a_parent_sits_between_its_children():
    nodes = [node(1), node(2, 1), node(3, 1), node(4, 3), node(5, 3), node(6)]
    where = layout(nodes)
    assert where[2] == (1.0, 0.0)
    assert where[4] == (2.0, 1.0) and where[5] == (2.0, 2.0)
    assert where[3] == (1.0, 1.5)
    assert where[1] == (0.0, 0.75)
    assert where[6] == (0.0, 3.0)  # a second root below the first tree


def test_a_parent_from_another_run_makes_a_root_and_cycles_end():
    where = layout([node(7, parent=99), node(8, 9), node(9, 8)])
    assert where[7] == (0.0, 0.0)
    assert set(where) == {7, 8, 9}


def test_the_picture_is_a_png():
    png = search_tree_png([node(1), node(2, 1, "incorrect", None), node(3, 1)], "t")
    assert png.startswith(b"\x89PNG")
