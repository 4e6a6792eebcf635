"""GE graphs as Graphviz DOT text, and rendered to SVG/PNG where Graphviz is installed."""

from pathlib import Path

from .ge_accounting import node_kind

_STYLE = {
    "data": 'shape=ellipse, style=filled, fillcolor="#e0e0e0"',
    "const": 'shape=ellipse, style=filled, fillcolor="#f4f4f4", fontsize=8',
    "output": 'shape=ellipse, style=filled, fillcolor="#e0e0e0"',
    "matmul": 'style=filled, fillcolor="#9ecae1"',
    "airfuse": 'style=filled, fillcolor="#fdae6b"',
    "other": "",
}


def _quote(text: str) -> str:
    """A DOT string literal; a newline in ``text`` becomes DOT's line break escape."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def to_dot(graphs, consts=False) -> str:
    """One digraph with a cluster per GE graph: a box per op node (its type, then its name), data
    edges solid and labelled with the output index when it is not 0, control edges dashed. Const
    nodes are left out unless ``consts``: they are most nodes and carry shapes, not dataflow."""
    lines = ["digraph ge {", "  rankdir=TB;", '  node [shape=box, fontname="Helvetica", fontsize=10];']
    for index, graph in enumerate(graphs):
        prefix = f"g{index}/"
        kept = {op.name for op in graph.op if consts or op.type != "Const"}
        lines.append(f"  subgraph cluster_{index} {{")
        lines.append(f"    label={_quote(graph.name)};")
        for op in graph.op:
            if op.name in kept:
                style = _STYLE[node_kind(op.type)]
                lines.append(f"    {_quote(prefix + op.name)} [label={_quote(op.type + chr(10) + op.name)}{', ' + style if style else ''}];")
        for op in graph.op:
            if op.name not in kept:
                continue
            for edge in op.input:
                if not edge:
                    continue
                source, output = edge.rsplit(":", 1)
                if source not in kept:
                    continue
                attrs = " [style=dashed]" if output == "-1" else (f" [label={_quote(output)}]" if output != "0" else "")
                lines.append(f"    {_quote(prefix + source)} -> {_quote(prefix + op.name)}{attrs};")
        lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def render(dot_text: str, path, formats=("svg",)) -> list:
    """Write ``path`` with suffix .dot, and each of ``formats`` beside it when the graphviz Python
    package and its ``dot`` program are installed. Returns the paths written."""
    path = Path(path)
    dot_path = path.with_suffix(".dot")
    dot_path.write_text(dot_text)
    written = [dot_path]
    try:
        import graphviz
    except ImportError:
        return written
    for fmt in formats:
        try:
            graphviz.Source(dot_text).render(outfile=str(path.with_suffix("." + fmt)), format=fmt, cleanup=True)
        except graphviz.ExecutableNotFound:
            return written
        written.append(path.with_suffix("." + fmt))
    return written
