"""``unifab parse FORMAT FILE``: how unifab reads one raw artifact, as JSON or a table."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from unifab.cli.common import FormatOption, OutputFormat, console, fail
from unifab.parse.registry import help_listing

__all__ = ["PARSE_HELP", "parse"]

PARSE_HELP = (
    "Print one raw artifact as normalized JSON (or a path/value table), to debug how unifab reads it.\n\n"
    "Example: unifab parse mlnx-qos hosts/gpu001/cmd/mlnx_qos/eth3.txt\n\n"
    "Example: cat config_db.json | unifab parse sonic-qos - --format table\n\n"
    "Names are accepted with - or _ (mlnx-qos = mlnx_qos) and in any case. Formats:\n\n"
    # \b keeps the lines as they are; [ is escaped for Rich markup (summaries hold option syntax such as [-d|-l])
    + "\b\n"
    + help_listing().replace("[", "\\[")
)


def parse(
    fmt: Annotated[str, typer.Argument(metavar="FORMAT", help="Format name (listed below).")],
    file: Annotated[Path, typer.Argument(help="Raw artifact (or directory, for tree formats); - for stdin.")],
    output: FormatOption = OutputFormat.JSON,
) -> None:
    from unifab.errors import ParseError
    from unifab.parse.registry import closest, lookup

    spec = lookup(fmt)
    if spec is None:
        near = closest(fmt)
        hint = f"did you mean {' or '.join(near)}?" if near else "run unifab parse --help for the list"
        fail(f"unknown format {fmt!r}; {hint}")
    try:
        if str(file) == "-":
            record = spec.parser()(sys.stdin.read(), "<stdin>")
        elif file.is_dir():
            if not spec.tree:
                fail(f"{file} is a directory; format {spec.name} reads a file")
            files = {p.relative_to(file).as_posix(): p.read_text() for p in sorted(file.rglob("*")) if p.is_file()}
            record = spec.tree_parser()(files, str(file))
        else:
            record = spec.parser()(file.read_text(encoding="utf-8"), str(file))
    except ParseError as exc:
        fail(str(exc))
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"{file}: cannot read: {getattr(exc, 'strerror', None) or exc}")
    if output is OutputFormat.JSON:
        from unifab.jsonify import dumps

        sys.stdout.write(dumps(record) + "\n")
        return
    _print_table(spec.name, str(file), record)


def _print_table(fmt: str, source: str, record: Any) -> None:
    """Every leaf value with its JSON path, for reading a record by eye."""
    from rich.table import Table

    from unifab.jsonify import to_jsonable
    from unifab.report.text import cell

    table = Table(title=cell(f"{fmt}: {source}"))
    table.add_column("path", overflow="fold")
    table.add_column("value", overflow="fold")
    for path, value in _leaves(to_jsonable(record), ""):
        table.add_row(cell(path or "."), cell(value))
    console().print(table)


def _leaves(value: Any, path: str) -> list[tuple[str, str]]:
    if isinstance(value, dict):
        if not value:
            return [(path, "{}")]
        return [leaf for key, v in value.items() for leaf in _leaves(v, f"{path}.{key}" if path else str(key))]
    if isinstance(value, list):
        if not value:
            return [(path, "[]")]
        return [leaf for i, v in enumerate(value) for leaf in _leaves(v, f"{path}[{i}]")]
    return [(path, "null" if value is None else str(value))]
