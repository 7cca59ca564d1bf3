"""``durak schema``: the JSON Schema of every protocol message, as committed in protocol/schema.json."""

from __future__ import annotations

import msgspec
import typer

from referee.cli.app import app


@app.command()
def schema() -> None:
    """Print the JSON Schema of every protocol message (the committed protocol/schema.json)."""
    from protocol.messages import json_schema

    typer.echo(schema_text(json_schema()))


def schema_text(schema: dict[str, object]) -> str:
    """``schema`` as protocol/schema.json holds it: JSON indented by two spaces."""
    return msgspec.json.format(msgspec.json.encode(schema), indent=2).decode()
