"""citemark.dask on a real distributed cluster: two worker processes on the loopback, started
here.  A generated JSONL log is read, a column cleaned and written as Parquet, and every row
compared with the single-process result; the workers must have run the compiled kernel."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import dask
import dask.dataframe as dd  # a missing dask fails these tests, it does not skip them
import distributed
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import citemark.arrow
import citemark.dask
from citemark import extract_citations, strip_citations

pytestmark = pytest.mark.slow  # a cluster of two worker processes

S, D, E = "\ue200", "\ue202", "\ue201"
ROWS = 3000


def text_of(i: int) -> str | None:
    if i % 97 == 0:
        return None
    kinds = ["search", "file", "news", "view"]
    text = f"Answer {i} é: claim {S}cite{D}turn{i % 4}{kinds[i % 4]}{i % 9}{E} and more"
    if i % 3 == 0:
        text += f" {S}cite{D}turn0search1{D} turn2news0 {D}L{i}-L{i + 2}{E}."
    if i % 10 == 0:
        text += f" broken {S}cite{D}no good{E} {S}cite{D}turn9search9"  # unclosed at the end
    if i % 29 == 0:
        text = f"\U0001f600 {S}cit" + f"e{D}turn0search5{D}turn0search15{E} split, then prose"
    return text


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("dask") / "log.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        for i in range(ROWS):
            handle.write(json.dumps({"id": i, "output_text": text_of(i), "n": i * 0.5}) + "\n")
    return path


@pytest.fixture(scope="module")
def client() -> Any:
    # Generous timeouts: on a loaded 2-core machine the workers may take a while to come up.
    timeouts = {
        "distributed.comm.timeouts.connect": "120s",
        "distributed.comm.timeouts.tcp": "120s",
    }
    with dask.config.set(timeouts):
        cluster = distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=":0",  # any free port: never collide with another cluster
            death_timeout=120,
        )
        with cluster, distributed.Client(cluster, timeout=120) as session:
            session.wait_for_workers(2, timeout=120)
            yield session


def expected_strip(text: str | None) -> str | None:
    return None if text is None else strip_citations(text, extract_citations(text))


def test_workers_run_the_compiled_kernel(client) -> None:
    found = client.run(lambda: citemark.arrow.IMPLEMENTATION)
    assert len(found) == 2
    wanted = "python" if os.environ.get("CITEMARK_IMPLEMENTATION") == "python" else "cython"
    assert set(found.values()) == {wanted}


def test_strip_a_jsonl_log_to_parquet_on_the_cluster(client, log: Path, tmp_path: Path) -> None:
    frame = dd.read_json(str(log), lines=True, blocksize=64_000)
    assert frame.npartitions > 2  # the work really is spread
    cleaned = citemark.dask.strip(frame, "output_text")
    out = tmp_path / "clean"
    cleaned.to_parquet(str(out), write_index=False)
    table = pq.read_table(out).sort_by("id")
    assert table.num_rows == ROWS
    assert table.column("id").to_pylist() == list(range(ROWS))
    assert table.column("n").to_pylist() == [i * 0.5 for i in range(ROWS)]
    assert table.column("output_text").to_pylist() == [
        expected_strip(text_of(i)) for i in range(ROWS)
    ]


def test_extract_on_the_cluster(client, log: Path) -> None:
    frame = dd.read_json(str(log), lines=True, blocksize=64_000)
    found = citemark.dask.extract(frame, "output_text", into="citations").compute()
    found = found.sort_values("id")
    assert list(found.columns) == ["id", "output_text", "n", "citations"]
    got = [None if value is pd.NA else value for value in found["citations"].tolist()]
    assert got == [None if t is None else extract_citations(t) for t in map(text_of, range(ROWS))]
    series = citemark.dask.strip(frame["output_text"]).compute()
    assert series.dropna().tolist() == [
        expected_strip(text_of(i)) for i in range(ROWS) if text_of(i) is not None
    ]


def test_bad_arguments() -> None:
    frame = dd.from_pandas(pd.DataFrame({"t": ["x", None], "k": [1, 2]}), npartitions=1)
    with pytest.raises(KeyError, match="no column 'missing'"):
        citemark.dask.strip(frame, "missing")
    with pytest.raises(TypeError, match="dask DataFrame"):
        citemark.dask.extract(pd.DataFrame({"t": ["x"]}), "t")
    with pytest.raises(TypeError, match="must hold string"):
        citemark.dask.strip(frame, "k").compute(scheduler="sync")
    with dask.config.set({"dataframe.convert-string": False}):  # (else dask's own cast fails)
        texts = pd.Series(["ok", "x\ud800"], dtype=object)
        lone = dd.from_pandas(pd.DataFrame({"t": texts}), 1)
        with pytest.raises(ValueError, match="column 't' holds a text that is not valid Unicode"):
            citemark.dask.strip(lone, "t").compute(scheduler="sync")
    empty = dd.from_pandas(pd.DataFrame({"t": pd.Series([None, None], dtype=object)}), 1)
    assert citemark.dask.extract(empty, "t").compute(scheduler="sync")["citations"].isna().all()


def test_a_categorical_column_stays_categorical_with_its_categories_unknown() -> None:
    """Stripping may make two categories one ("a<marker>" and "a"), and each partition finds
    its own: the result is categorical, its meta says its categories are unknown, as dask
    says of a column whose categories it has not read."""
    texts = [
        "a" + S + "cite" + D + "turn0search0" + E,
        None,
        "b" + S + "cite" + D + "turn1news2" + E,
        "a",
    ]
    frame = dd.from_pandas(pd.DataFrame({"t": pd.Categorical(texts), "k": [1, 2, 3, 4]}), 2)
    for result in (citemark.dask.strip(frame, "t"), citemark.dask.strip(frame["t"])):
        done = result.compute(scheduler="sync")
        column = done["t"] if isinstance(done, pd.DataFrame) else done
        meta = result._meta["t"] if isinstance(done, pd.DataFrame) else result._meta
        assert isinstance(column.dtype, pd.CategoricalDtype)
        assert isinstance(meta.dtype, pd.CategoricalDtype)
        assert column.tolist()[0::2] == ["a", "b"]
        assert pd.isna(column.tolist()[1])
        assert sorted(column.cat.categories) == ["a", "b"]
        assert not (result["t"] if isinstance(done, pd.DataFrame) else result).cat.known


# The dtypes a text column may have: object (dask's convert-string off), pandas' StringDtype
# variants (pandas 3's default "str" among them), and Arrow's strings.
TEXT_DTYPES = [
    pytest.param(object, id="object"),
    pytest.param("string[python]", id="string[python]"),
    pytest.param("string[pyarrow]", id="string[pyarrow]"),
    pytest.param("str", id="str"),
    pytest.param(pd.ArrowDtype(pa.string()), id="arrow-string"),
    pytest.param(pd.ArrowDtype(pa.large_string()), id="arrow-large_string"),
]
CITED = "a" + S + "cite" + D + "turn0search3" + E


def kind_of(dtype: Any) -> Any:
    """What must be kept of a column's dtype: all of it; of a categorical one, its categories'
    dtype and order (its categories are each partition's own)."""
    if isinstance(dtype, pd.CategoricalDtype):
        return ("category", dtype.categories.dtype, dtype.ordered)
    return dtype


def partition_dtypes(result: Any) -> list[Any]:
    """The dtype of the text in each computed partition of `result` (a frame's column "t")."""
    parts = [part.compute(scheduler="sync") for part in result.to_delayed()]
    return [
        kind_of((part["t"] if isinstance(part, pd.DataFrame) else part).dtype) for part in parts
    ]


def frame_of(dtype: Any) -> Any:
    """Three partitions of a column of `dtype`: texts, only missing texts, and none."""
    texts = pd.Series([CITED, "b", None, None, "c", "d"], dtype=dtype)
    frame = dd.from_pandas(pd.DataFrame({"t": texts, "k": [1, 1, 2, 2, 3, 3]}), npartitions=3)
    kept = frame[frame["k"] != 3]
    assert kept.map_partitions(len).compute(scheduler="sync").tolist() == [2, 2, 0]
    return kept


@pytest.mark.parametrize("dtype", TEXT_DTYPES)
def test_a_stripped_text_column_keeps_its_dtype_in_its_meta_and_in_every_partition(
    dtype: Any,
) -> None:
    with dask.config.set({"dataframe.convert-string": False}):  # (else object becomes str)
        frame = frame_of(dtype)
        assert frame["t"].dtype == pd.Series([], dtype=dtype).dtype
        for result in (
            citemark.dask.strip(frame, "t"),
            citemark.dask.strip(frame, "t", into="u").assign(t=lambda f: f["u"]),
            citemark.dask.strip(frame["t"]),
        ):
            meta = result._meta["t"] if isinstance(result, dd.DataFrame) else result._meta
            assert meta.dtype == frame["t"].dtype
            assert partition_dtypes(result) == [frame["t"].dtype] * 3
            done = result.compute(scheduler="sync")
            column = done["t"] if isinstance(done, pd.DataFrame) else done
            assert column.dtype == frame["t"].dtype
            assert [None if pd.isna(t) else t for t in column] == ["a", "b", None, None]


@pytest.mark.parametrize("dtype", TEXT_DTYPES)
def test_strip_partition_keeps_the_dtype_of_a_pandas_column(dtype: Any) -> None:
    part = pd.DataFrame({"t": pd.Series([CITED, None], dtype=dtype)})
    for rows in (part, part.iloc[1:], part.iloc[:0]):
        done = citemark.dask.strip_partition(rows, "t", ("cite",), "t")
        assert done["t"].dtype == part["t"].dtype


@pytest.mark.parametrize("dtype", TEXT_DTYPES)
@pytest.mark.parametrize("ordered", [False, True], ids=["unordered", "ordered"])
def test_a_categorical_column_with_a_partition_of_missing_texts_alone_is_stripped(
    dtype: Any, ordered: bool
) -> None:
    """Every partition's categories have the dtype of the input's categories, which the meta
    says too, though a partition of missing texts alone (or of none) has none to infer it
    from: dask concatenates the partitions only if their categories have one dtype."""
    categories = pd.Index([CITED, "b", "c", "d"], dtype=dtype)
    with dask.config.set({"dataframe.convert-string": False}):
        frame = frame_of(pd.CategoricalDtype(categories, ordered=ordered))
        wanted = ("category", categories.dtype, ordered)
        for result in (citemark.dask.strip(frame, "t"), citemark.dask.strip(frame["t"])):
            meta = result._meta["t"] if isinstance(result, dd.DataFrame) else result._meta
            assert kind_of(meta.dtype) == wanted
            assert partition_dtypes(result) == [wanted] * 3
            if not ordered:  # (pandas unites ordered categoricals only if their categories match)
                done = result.compute(scheduler="sync")
                column = done["t"] if isinstance(done, pd.DataFrame) else done
                assert [None if pd.isna(t) else t for t in column] == ["a", "b", None, None]
