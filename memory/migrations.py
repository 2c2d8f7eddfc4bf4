"""Schema migrations: `MIGRATIONS[n]` upgrades a store from schema n to n+1, under the store's lock.

A store with an older `schema_version` is migrated step by step when opened. Most steps only add
the column a new model field needs; `add_field_column` adds the one it names, filled with the
field's default.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from pydantic import BaseModel

from sage_npu.memory.models import TABLES, Calibration

if TYPE_CHECKING:
    from sage_npu.memory.store import Store


def add_missing_tables(store: Store) -> None:
    """Create every table the models have and the store lacks (empty)."""
    have = set(store._table_names())
    for name, schema in store._schemas.items():
        if name not in have:
            store._db.create_table(name, schema=schema)


def add_field_column(store: Store, model: type[BaseModel], *, field: str) -> None:
    """Add the column of `model`'s `field` to the model's table when it lacks it, every stored row
    given the field's default. A step names its own column: one that derived its columns from the
    model as it is now (say, its bool fields) would change meaning when a later field is added."""
    table = next(name for name, m in TABLES.items() if m is model)
    info = model.model_fields.get(field)
    if info is None:
        raise KeyError(f"the migration adds {model.__name__}.{field}, a field the model does not have")
    t = store.table(table)
    if field not in t.schema.names:  # a store created after the field existed already has it
        t.add_columns({field: _sql_literal(info.default)})


def _sql_literal(value: object) -> str:
    """A field's default as a SQL literal: bool, int, float or str."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    raise TypeError(f"no SQL literal for the default {value!r}; give the migration a default of its own")


def add_calibration_measured(store: Store) -> None:
    """Records written before the device flag existed were all the CPU model's deliveries: the
    field's default, false."""
    add_field_column(store, Calibration, field="measured")


# 1 -> 2: the calibration table (advisor findings' estimated against verified savings).
# 2 -> 3: calibration's `measured` (a delivery measured on the device).
MIGRATIONS: dict[int, Callable[[Store], None]] = {1: add_missing_tables, 2: add_calibration_measured}
