"""Schema migrations: `MIGRATIONS[n]` upgrades a store from schema n to n+1, under the store's lock.

A store with an older `schema_version` is migrated step by step when opened. Most steps only add
the columns a new model field needs; `add_missing_columns` does that from the models themselves.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from sage_npu.memory.models import Calibration

if TYPE_CHECKING:
    from sage_npu.memory.store import Store


def add_missing_columns(store: Store, defaults: dict[str, str] | None = None) -> None:
    """Add every column the models have and the tables lack, filled by a SQL expression
    (`defaults[column]`, else NULL cast to the column's type)."""
    defaults = defaults or {}
    for name, schema in store._schemas.items():
        t = store.table(name)
        have = set(t.schema.names)
        for field in schema:
            if field.name not in have:
                expr = defaults.get(field.name, f"CAST(NULL AS {_sql_type(field.type)})")
                t.add_columns({field.name: expr})


def _sql_type(arrow_type) -> str:
    import pyarrow as pa

    mapping = {pa.string(): "STRING", pa.int64(): "BIGINT", pa.float64(): "DOUBLE", pa.bool_(): "BOOLEAN"}
    if arrow_type not in mapping:
        raise TypeError(f"no SQL default for a column of type {arrow_type}; give the migration a default")
    return mapping[arrow_type]


def add_missing_tables(store: Store) -> None:
    """Create every table the models have and the store lacks (empty)."""
    have = set(store._table_names())
    for name, schema in store._schemas.items():
        if name not in have:
            store._db.create_table(name, schema=schema)


def add_calibration_measured(store: Store) -> None:
    """Records written before the device flag existed were all the CPU model's deliveries: the
    calibration's flags (its one bool field, `measured`, named through the model) start false."""
    flags = [name for name, f in Calibration.model_fields.items() if f.annotation is bool]
    add_missing_columns(store, dict.fromkeys(flags, "false"))


# 1 -> 2: the calibration table (advisor findings' estimated against verified savings).
# 2 -> 3: calibration's `measured` (a delivery measured on the device).
MIGRATIONS: dict[int, Callable[[Store], None]] = {1: add_missing_tables, 2: add_calibration_measured}
