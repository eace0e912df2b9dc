"""Measured figures in the docs are the ones in benchmarks/results/*.json: each doc is exactly
what benchmarks/render_readme.py renders from them, so a figure is written once. The README keeps
one headline figure; the tables live on the docs site's pages (docs/benchmarks.md and others)."""

from __future__ import annotations

import copy
import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS_PAGE = ROOT / "docs" / "benchmarks.md"
render_readme = importlib.import_module("benchmarks.render_readme")


@pytest.fixture(scope="module")
def results() -> dict:
    return render_readme.load_results()


@pytest.mark.parametrize("doc", render_readme.DOCS)
def test_doc_figures_are_the_rendered_benchmark_results(doc, results):
    text = (ROOT / doc).read_text()
    assert render_readme.MARKER.search(text), f"{doc} has no benchmark figure block"
    rendered = render_readme.render(text, results, source=doc)
    assert rendered == text, (
        f"{doc} differs from benchmarks/results/*.json; run python -m benchmarks.render_readme"
    )


def test_every_rendered_block_appears_in_the_docs():
    used = {m["name"] for doc in render_readme.DOCS for m in render_readme.MARKER.finditer((ROOT / doc).read_text())}
    assert used == set(render_readme.BLOCKS)


def test_the_idle_cost_of_pypaimons_poll_is_one_measured_figure_everywhere(results):
    measured = results["s3"]["latency"]["idle_tables"]["idle_pypaimon"]["s3_requests_per_hour"]
    figure = f"{round(measured):,}"
    marked = re.compile(r"<!-- bench:idle-pypaimon-s3 -->(.*?)<!-- /bench:idle-pypaimon-s3 -->")
    for doc in ("README.md", "docs/s3.md", "infra/terraform/examples/complete/README.md"):
        text = (ROOT / doc).read_text()
        assert figure in text, doc
        assert set(marked.findall(text)) <= {figure}, doc
        # The figures the docs used to disagree on.
        for stale in ("36,000 storage requests", "39,000", "11 storage calls per second"):
            assert stale not in text, (doc, stale)
    readme = (ROOT / "README.md").read_text()
    assert marked.search(readme) and "benchmarks/results/s3.json" in readme


def test_a_changed_result_changes_the_rendered_readme(results):
    readme = (ROOT / "README.md").read_text()
    changed = copy.deepcopy(results)
    changed["s3"]["latency"]["idle_tables"]["idle_pypaimon"]["s3_requests_per_hour"] = 12345.4
    changed["core"]["latency"]["local"]["p50_ms"] = 3.2
    rendered = render_readme.render(readme, changed)
    assert rendered != readme
    assert "<!-- bench:idle-pypaimon-s3 -->12,345<!-- /bench:idle-pypaimon-s3 -->" in rendered
    assert "A local commit reaches the consumer in 3 ms at the median" in rendered


def test_the_readme_keeps_one_headline_figure_and_links_the_benchmarks_page():
    readme = (ROOT / "README.md").read_text()
    blocks = {m["name"] for m in render_readme.MARKER.finditer(readme)}
    assert blocks == {"headline", "idle-pypaimon-s3"}
    assert "(docs/benchmarks.md)" in readme


def test_a_changed_result_changes_the_reliability_table(results):
    concepts = (ROOT / "docs" / "concepts.md").read_text()
    changed = copy.deepcopy(results)
    changed["reliability"]["outcomes"][0]["lost"] = 7
    assert "| 44 | 675 | 2928 | 7 | 4 (yes) |" in render_readme.render(concepts, changed)


def test_an_unknown_block_name_is_an_error(results):
    with pytest.raises(KeyError, match="bench:nope|'nope'"):
        render_readme.render("<!-- bench:nope -->1<!-- /bench:nope -->", results)


def test_the_catch_up_figures_come_from_catchup_json(results):
    readme = BENCHMARKS_PAGE.read_text()
    changed = copy.deepcopy(results)
    changed["catchup"]["local"]["ratio"] = 0.123
    changed["catchup"]["sqs"]["p99_ms"] = 98.76
    rendered = render_readme.render(readme, changed)
    assert "| 0.12× | ≤ 0.5× |" in rendered and "/ 98.8 |" in rendered
    assert "| 0.12× | ≤ 0.5× |" not in readme


def test_the_java_connectors_figures_come_from_spark_json(results):
    readme = BENCHMARKS_PAGE.read_text()
    assert results["spark"]["java_connector"].get("jars"), "spark.json holds a run with the Java connector"
    changed = copy.deepcopy(results)
    changed["spark"]["latency"]["1 second"]["java_connector"]["p50_ms"] = 4321.0
    changed["spark"]["idle_s3"]["modes"]["java_connector"]["s3_requests_per_minute"] = 98765.4
    changed["spark"]["throughput_pk"]["reads_compared"]["stream_equal"] = False
    rendered = render_readme.render(readme, changed)
    assert "| `1 second` | Paimon's Java connector (0.9.0 on Spark 3.5.9; it checks storage on every trigger) | 4321 |" in rendered
    assert "98,765.4" in rendered
    assert "Their reads differ on: primary key (stream)" in " ".join(rendered.split())
    assert "Their reads differ" not in " ".join(readme.split())


def test_without_the_java_connector_the_docs_say_why_and_measure_no_target_against_it(results):
    changed = copy.deepcopy(results)
    spark = changed["spark"]
    spark["java_connector"] = {"artifact": "org.apache.paimon:paimon-spark-3.5:0.9.0", "error": "mvn is not on PATH"}
    for trigger in ("0 seconds", "1 second"):
        spark["latency"][trigger].pop("java_connector", None)
    spark["idle_s3"]["modes"].pop("java_connector", None)
    spark["targets"].update(parquet_sink_vs_java=None, parquet_sink_batch_vs_java=None,
                            latency_p50_vs_java=None, idle_requests_java_over_push=None)
    status = render_readme.spark_java_status(changed)
    assert "is not in this table" in status and "mvn is not on PATH" in status
    targets = render_readme.spark_targets(changed)
    assert targets.count("not measured (no Java connector)") == 5
    assert "Paimon's Java connector" not in render_readme.spark_vs_java(changed).splitlines()[0]
