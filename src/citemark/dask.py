"""Strip or extract the citation markers of a Dask DataFrame column (`pip install citemark[dask]`).

    import dask.dataframe as dd
    from dask.dataframe.utils import clear_known_categories
    import citemark.dask

    logs = dd.read_json("logs/*.jsonl", lines=True, blocksize="64MB")
    clean = citemark.dask.strip(logs, "output_text")                  # the column cleaned
    found = citemark.dask.extract(logs, "output_text", into="citations")
    clean.to_parquet("clean/")

Each partition goes through `citemark.arrow` on the worker that holds it: the column becomes an
Arrow array (zero-copy for pyarrow-backed strings, Dask's default), the compiled kernel strips
or extracts without a Python `str` per row, and the result goes back into the partition.  Run
it on a `distributed` cluster of several machines as it is; `citemark.arrow.IMPLEMENTATION` on
the workers says which path they run (`client.run(lambda: citemark.arrow.IMPLEMENTATION)`).

* `strip(df, column)`: the same frame, `column` cleaned (or written to a new column `into`),
  with the column's dtype kept; missing values stay missing.
* `extract(df, column, into="citations")`: a new column of lists of citation structs (pandas
  `ArrowDtype(citemark.arrow.citation_type(large=True))`; `.tolist()` on a row gives the
  `Citation` dicts), a missing text giving a missing list.
* Both also take a Dask Series (no `column`), and return a Series.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

try:
    import dask.dataframe as dd
    import pandas as pd
    import pyarrow as pa
    from dask.dataframe.utils import UNKNOWN_CATEGORIES
except ImportError as error:  # the optional extra is missing: say what to install
    raise ImportError(
        f"citemark.dask needs dask's DataFrame and pyarrow ({error}): "
        'pip install "dask[dataframe]" distributed pyarrow  (or: pip install "citemark[dask]")',
        name=error.name,
    ) from error

from . import arrow
from ._core.grammar import DEFAULT_FAMILIES, check_families

__all__ = ["extract", "extract_partition", "strip", "strip_partition"]


def strip(
    frame: Any,
    column: str | None = None,
    *,
    families: Iterable[str] = DEFAULT_FAMILIES,
    into: str | None = None,
) -> Any:
    """`frame` with the valid citations of `column` stripped (see the module's doc)."""
    checked = check_families(families) if families else ()
    if isinstance(frame, dd.Series):
        return frame.map_partitions(_strip_series, checked, meta=_stripped_meta(frame._meta))
    _check_column(frame, column)
    assert column is not None
    target = into or column
    meta = frame._meta.assign(**{target: _stripped_meta(frame._meta[column])})
    return frame.map_partitions(strip_partition, column, checked, target, meta=meta)


def _stripped_meta(meta: pd.Series) -> pd.Series:
    """What a stripped column holds: the column's type; for a categorical one, its categories
    unknown (stripping may merge two of them, and each partition finds its own), of the type
    its categories have."""
    if isinstance(meta.dtype, pd.CategoricalDtype):
        # (dask's clear_known_categories would make them str, whatever they were)
        unknown = pd.Index([UNKNOWN_CATEGORIES], dtype=meta.dtype.categories.dtype)
        return meta.cat.set_categories(unknown)
    return meta


def extract(
    frame: Any,
    column: str | None = None,
    *,
    families: Iterable[str] = DEFAULT_FAMILIES,
    into: str = "citations",
) -> Any:
    """`frame` with a new column `into` of the citations of `column` (see the module's doc)."""
    checked = check_families(families) if families else ()
    kind = pd.ArrowDtype(arrow.citation_type(large=True))
    if isinstance(frame, dd.Series):
        meta = pd.Series([], dtype=kind, name=frame._meta.name)
        return frame.map_partitions(_extract_series, checked, meta=meta)
    _check_column(frame, column)
    meta = frame._meta.assign(**{into: pd.Series([], dtype=kind)})
    return frame.map_partitions(extract_partition, column, checked, into, meta=meta)


def strip_partition(
    part: pd.DataFrame, column: str, families: tuple[str, ...], into: str
) -> pd.DataFrame:
    """One pandas partition with `column` stripped into `into` (what `strip` maps)."""
    return part.assign(**{into: _strip_series(part[column], families)})


def extract_partition(
    part: pd.DataFrame, column: str, families: tuple[str, ...], into: str
) -> pd.DataFrame:
    """One pandas partition with the citations of `column` in `into` (what `extract` maps)."""
    return part.assign(**{into: _extract_series(part[column], families)})


def _strip_series(series: pd.Series, families: tuple[str, ...]) -> pd.Series:
    """`series` stripped, of its dtype (a categorical one: of its categories' dtype)."""
    cleaned = arrow.strip(_to_arrow(series), families=families)
    kind = series.dtype
    if isinstance(kind, pd.CategoricalDtype):
        # (a category whose texts stripping made equal is one: pandas wants them unique)
        decoded = cleaned.dictionary_decode() if pa.types.is_dictionary(cleaned.type) else cleaned
        texts = _texts(decoded, kind.categories.dtype)
        # Given, not inferred: a partition of missing texts alone has none to infer them from.
        categories = pd.Index(texts, dtype=kind.categories.dtype).dropna().unique().sort_values()
        values: Any = pd.Categorical(texts, categories=categories, ordered=kind.ordered)
    else:
        values = _texts(cleaned, kind)
    # (the dtype is given: pandas 3 would infer str from an object array of texts)
    return pd.Series(values, index=series.index, name=series.name, dtype=values.dtype)


def _texts(values: Any, kind: Any) -> Any:
    """The pyarrow string array `values` as a pandas array of dtype `kind` (object: str values,
    None for nulls)."""
    if isinstance(kind, (pd.StringDtype, pd.ArrowDtype)):
        return pd.array(values, dtype=kind)
    return values.to_numpy(zero_copy_only=False)


def _extract_series(series: pd.Series, families: tuple[str, ...]) -> pd.Series:
    found = arrow.extract(_to_arrow(series), families=families)
    large = arrow.citation_type(large=True)
    if found.type != large:
        found = found.cast(large)
    return pd.Series(pd.arrays.ArrowExtensionArray(found), index=series.index, name=series.name)


def _to_arrow(series: pd.Series) -> Any:
    """The column as a pyarrow string array; zero-copy when pandas keeps it in Arrow."""
    try:
        values = pa.array(series, from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as error:
        raise TypeError(f"column {series.name!r} does not hold strings: {error}") from None
    except UnicodeEncodeError as error:  # a lone surrogate, which UTF-8 cannot hold
        raise ValueError(
            f"column {series.name!r} holds a text that is not valid Unicode ({error.reason} at "
            f"{error.start}: {error.object[error.start : error.end]!r})"
        ) from None
    if pa.types.is_null(values.type):  # all missing (or empty): no type to infer
        values = pa.array([None] * len(series), pa.large_string())
    return values


def _check_column(frame: Any, column: str | None) -> None:
    if not isinstance(frame, dd.DataFrame):
        raise TypeError(f"frame must be a dask DataFrame or Series, not {type(frame).__name__}")
    if column is None or column not in frame.columns:
        raise KeyError(f"no column {column!r} (columns: {', '.join(map(str, frame.columns))})")
