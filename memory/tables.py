"""Arrow schemas of the four tables, derived from the pydantic models, and the row codec.

Deriving (rather than writing the schemas twice) keeps model and table from drifting apart. Two
things are added on the way to Arrow: `id` carries LanceDB's primary-key field metadata (without
it, concurrent `merge_insert`s of new keys can both insert), and `items` gets a `doc` column that
the full-text index reads.
"""

from __future__ import annotations

import types
import typing
from datetime import datetime
from typing import Any, Literal

import pyarrow as pa
from pydantic import BaseModel

from sage_npu.memory.models import TABLES, Item

PRIMARY_KEY = {b"lance-schema:unenforced-primary-key": b"true"}
DOC_COLUMN = "doc"


def _arrow_type(annotation: Any, dim: int, name: str) -> tuple[pa.DataType, bool]:
    """(type, nullable) for one model field."""
    nullable = False
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        nullable = len(args) != len(typing.get_args(annotation))
        if len(args) != 1:
            raise TypeError(f"field {name}: unions other than X | None are not storable")
        annotation = args[0]
        origin = typing.get_origin(annotation)
    if name == "vector":
        return pa.list_(pa.float32(), dim), True
    if origin is list:
        (inner,) = typing.get_args(annotation)
        return pa.list_(_arrow_type(inner, dim, name)[0]), nullable
    if origin is Literal:
        return pa.string(), nullable
    simple = {str: pa.string(), int: pa.int64(), float: pa.float64(), bool: pa.bool_(),
              datetime: pa.timestamp("us", tz="UTC")}
    if annotation in simple:
        return simple[annotation], nullable
    raise TypeError(f"field {name}: type {annotation!r} has no Arrow mapping")


def arrow_schema(model: type[BaseModel], dim: int) -> pa.Schema:
    fields = []
    for name, info in model.model_fields.items():
        typ, nullable = _arrow_type(info.annotation, dim, name)
        if name == "id":
            fields.append(pa.field("id", pa.string(), nullable=False, metadata=PRIMARY_KEY))
        else:
            fields.append(pa.field(name, typ, nullable=nullable))
    if model is Item:
        fields.append(pa.field(DOC_COLUMN, pa.string()))
    return pa.schema(fields)


def schemas(dim: int) -> dict[str, pa.Schema]:
    return {name: arrow_schema(model, dim) for name, model in TABLES.items()}


def to_arrow(rows: list[BaseModel], schema: pa.Schema) -> pa.Table:
    dicts = []
    for r in rows:
        d = r.model_dump()
        if isinstance(r, Item):
            d[DOC_COLUMN] = r.search_text()
        dicts.append(d)
    return pa.Table.from_pylist(dicts, schema=schema)


def from_arrow(table: pa.Table, model: type[BaseModel]) -> list:
    known = set(model.model_fields)
    out = []
    for d in table.to_pylist():
        out.append(model.model_validate({k: v for k, v in d.items() if k in known}))
    return out
