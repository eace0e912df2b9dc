"""Static checks of the Terraform in ``infra/terraform``.

There is no ``terraform`` binary where these tests run, so they stand in for ``terraform
validate`` and for a reviewer: every file parses; the modules are wired consistently (variables
used and declared, module arguments and outputs exist); IAM grants stay inside the warehouse
prefix; the queue admits only its source; the S3 filters and the EventBridge pattern select
snapshot commits and nothing else; and checkov reports no failed check.

The HCL is read with the ``hcl2`` module, which two distributions provide: checkov's fork
``bc-python-hcl2`` (0.4) and ``python-hcl2`` (8.x). They install files of the same names over each
other and return different layouts, so ``load_tf`` accepts both and returns bc's: every attribute
value wrapped in a one-element list, nested blocks as lists of dicts, labels as dict keys.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import json
import os
import re
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
TERRAFORM_DIR = REPO_ROOT / "infra" / "terraform"
QUEUE_MODULE = TERRAFORM_DIR / "modules" / "feed_queue"
LAMBDA_MODULE = TERRAFORM_DIR / "modules" / "feed_lambda"
EXAMPLE = TERRAFORM_DIR / "examples" / "complete"
MODULE_DIRS = (QUEUE_MODULE, LAMBDA_MODULE)
ALL_DIRS = (QUEUE_MODULE, LAMBDA_MODULE, EXAMPLE)

DEV_EXTRA_HINT = "install the dev extra: pip install -e '.[dev]'"

# Arguments of a module block that are Terraform's, not the module's variables.
MODULE_META_ARGUMENTS = {"source", "version", "providers", "count", "for_each", "depends_on"}

# Sample values used to render templates: a warehouse at s3://acme-lake/wh/.
SAMPLE = {
    "data.aws_partition.current.partition": "aws",
    "var.bucket_name": "acme-lake",
    "var.warehouse_bucket": "acme-lake",
    "var.warehouse_prefix": "wh/",
    "var.consumer_id": "orders-etl",
    "var.queue_arn": "arn:aws:sqs:eu-west-1:123456789012:orders-feed",
    "aws_cloudwatch_log_group.this.arn": (
        "arn:aws:logs:eu-west-1:123456789012:log-group:/aws/lambda/orders-feed"
    ),
}

_MISSING = object()


def _tf_files() -> list[Path]:
    return sorted(p for p in TERRAFORM_DIR.rglob("*.tf") if ".terraform" not in p.parts)


# --- reading HCL ---------------------------------------------------------------------------------


def _hcl2() -> Any:
    try:
        return importlib.import_module("hcl2")
    except ImportError as exc:
        pytest.fail(
            f"cannot import hcl2 (from bc-python-hcl2, which checkov installs, or python-hcl2): "
            f"{exc}; {DEV_EXTRA_HINT}"
        )


def _is_meta(key: str) -> bool:
    return key.startswith("__") and key.endswith("__")


def _unquote(text: str) -> str:
    return text[1:-1] if len(text) >= 2 and text[0] == text[-1] == '"' else text


def _contains_key(node: Any, key: str) -> bool:
    if isinstance(node, dict):
        return key in node or any(_contains_key(v, key) for v in node.values())
    if isinstance(node, list):
        return any(_contains_key(v, key) for v in node)
    return False


def _strip_meta(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _strip_meta(v) for k, v in node.items() if not _is_meta(k)}
    if isinstance(node, list):
        return [_strip_meta(v) for v in node]
    return node


def _is_block(node: Any) -> bool:
    return isinstance(node, dict) and node.get("__is_block__") is True


def _is_labelled(node: Any) -> bool:
    """``{'"label"': block}`` (``resource "t" "n"``, ``dynamic "x"``), possibly nested."""
    if not isinstance(node, dict) or _is_block(node):
        return False
    values = [v for k, v in node.items() if not _is_meta(k)]
    return bool(values) and all(_is_block(v) or _is_labelled(v) for v in values)


def _literal(value: Any) -> Any:
    """python-hcl2 8 keeps the quotes of string literals and quoted object keys."""
    if isinstance(value, str):
        return _unquote(value)
    if isinstance(value, list):
        return [_literal(v) for v in value]
    if isinstance(value, dict):
        return {_unquote(k): _literal(v) for k, v in value.items() if not _is_meta(k)}
    return value


def _from_marked(node: dict) -> dict:
    """Convert python-hcl2 8 output (blocks marked ``__is_block__``) to bc's layout."""
    body: dict = {}
    for key, value in node.items():
        if _is_meta(key):
            continue
        if isinstance(value, list) and value and all(_is_block(v) or _is_labelled(v) for v in value):
            body[_unquote(key)] = [_from_marked_nested(v) for v in value]
        else:
            body[_unquote(key)] = [_literal(value)]
    return body


def _from_marked_nested(node: dict) -> dict:
    if _is_block(node):
        return _from_marked(node)
    return {_unquote(k): _from_marked_nested(v) for k, v in node.items() if not _is_meta(k)}


@functools.cache
def load_tf(path: Path) -> dict:
    """Parse one .tf file into bc-python-hcl2's layout, whichever hcl2 is installed."""
    hcl2 = _hcl2()
    with path.open(encoding="utf-8") as handle:
        raw = hcl2.load(handle)
    if _contains_key(raw, "__is_block__"):
        return _from_marked({**raw, "__is_block__": True})
    if hasattr(hcl2, "START_LINE"):  # exported only by checkov's fork, whose layout this is
        return _strip_meta(raw)
    pytest.fail(
        f"hcl2 {getattr(hcl2, '__version__', '?')} at {hcl2.__file__} returns a layout these tests "
        f"do not know (expected bc-python-hcl2 0.4 or python-hcl2 8); {DEV_EXTRA_HINT}"
    )


def attr(body: dict, name: str, default: Any = _MISSING) -> Any:
    """An attribute's value (bc's layout wraps it in a one-element list)."""
    if name not in body:
        if default is _MISSING:
            raise AssertionError(f"attribute {name!r} missing; present: {sorted(body)}")
        return default
    value = body[name]
    assert isinstance(value, list) and len(value) == 1, f"{name!r} is not an attribute: {value!r}"
    return value[0]


def blocks(body: dict, name: str) -> list[dict]:
    """The nested blocks called ``name`` (possibly none)."""
    found = body.get(name, [])
    assert isinstance(found, list) and all(isinstance(b, dict) for b in found), (
        f"{name!r} is not a block: {found!r}"
    )
    return found


def _labelled(doc: dict, kind: str, depth: int) -> Iterator[tuple[tuple[str, ...], dict]]:
    def walk(node: dict, left: int, labels: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], dict]]:
        if left == 0:
            yield labels, node
            return
        for key, value in node.items():
            yield from walk(value, left - 1, labels + (key,))

    for entry in doc.get(kind, []):
        yield from walk(entry, depth, ())


@dataclass(frozen=True)
class TfDir:
    """All .tf files of one Terraform root or module directory."""

    path: Path

    @functools.cached_property
    def docs(self) -> dict[str, dict]:
        files = sorted(self.path.glob("*.tf"))
        assert files, f"no .tf files in {self.path}"
        return {f.name: load_tf(f) for f in files}

    def _collect(self, kind: str, depth: int) -> dict:
        found: dict = {}
        for name, doc in self.docs.items():
            for labels, body in _labelled(doc, kind, depth):
                key = labels[0] if depth == 1 else labels
                assert key not in found, f"{kind} {key} declared twice in {self.path} ({name})"
                found[key] = body
        return found

    @functools.cached_property
    def variables(self) -> dict[str, dict]:
        return self._collect("variable", 1)

    @functools.cached_property
    def outputs(self) -> dict[str, dict]:
        return self._collect("output", 1)

    @functools.cached_property
    def modules(self) -> dict[str, dict]:
        return self._collect("module", 1)

    @functools.cached_property
    def resources(self) -> dict[tuple[str, str], dict]:
        return self._collect("resource", 2)

    @functools.cached_property
    def data(self) -> dict[tuple[str, str], dict]:
        return self._collect("data", 2)

    @functools.cached_property
    def locals(self) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for doc in self.docs.values():
            for body in doc.get("locals", []):
                for key in body:
                    assert key not in found, f"local {key} declared twice in {self.path}"
                    found[key] = attr(body, key)
        return found

    def resource(self, type_: str, name: str) -> dict:
        assert (type_, name) in self.resources, f"{self.path.name} has no resource {type_}.{name}"
        return self.resources[(type_, name)]

    def strings(self, *, skip_kinds: tuple[str, ...] = ()) -> Iterator[str]:
        for doc in self.docs.values():
            for kind, entries in doc.items():
                if kind not in skip_kinds:
                    yield from _strings(entries)


def _strings(node: Any) -> Iterator[str]:
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for value in node.values():
            yield from _strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from _strings(value)


def tf_dir(path: Path) -> TfDir:
    return _tf_dir(path.resolve())


@functools.cache
def _tf_dir(path: Path) -> TfDir:
    return TfDir(path)


def interpolations(text: str) -> Iterator[str]:
    """The expressions inside ``${...}`` (balanced braces) of a string."""
    start = text.find("${")
    while start != -1:
        depth, i = 0, start + 1
        while i < len(text):
            if text[i] == "{":
                depth += 1
            elif text[i] == "}":
                depth -= 1
                if depth == 0:
                    break
            i += 1
        yield text[start + 2 : i]
        start = text.find("${", i)


def expressions(d: TfDir, **kwargs: Any) -> list[str]:
    return [e for s in d.strings(**kwargs) for e in interpolations(s)]


def squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _preconditions(body: dict) -> list[str]:
    """The conditions of a resource's lifecycle preconditions, without whitespace."""
    return [
        squash(attr(p, "condition")) for lc in blocks(body, "lifecycle") for p in blocks(lc, "precondition")
    ]


def _conditions(statement: dict) -> dict[str, tuple[str, list[str]]]:
    """A policy statement's conditions: variable -> (test, values)."""
    return {attr(c, "variable"): (attr(c, "test"), attr(c, "values")) for c in blocks(statement, "condition")}


def render(template: str, values: dict[str, str], local_values: dict[str, Any]) -> str:
    """Substitute ``${var.x}``, ``${local.y}`` and other simple interpolations by sample values."""
    def replace(match: re.Match) -> str:
        expr = squash(match.group(1))
        if expr in values:
            return values[expr]
        local = re.fullmatch(r"local\.(\w+)", expr)
        if local and isinstance(local_values.get(local.group(1)), str):
            return render(local_values[local.group(1)], values, local_values)
        raise AssertionError(f"cannot render ${{{expr}}} in {template!r}")

    return re.sub(r"\$\{([^{}]*)\}", replace, template)


def iam_glob(pattern: str) -> re.Pattern:
    """IAM/S3 ARN wildcards: '*' any characters (including '/'), '?' one character."""
    return re.compile("".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern))


def _string_list(text: str) -> list[str]:
    """The items of a list literal inside an expression (bc renders them with single quotes)."""
    return re.findall(r"""["']([^"']*)["']""", text)


def hcl_unescape(text: str) -> str:
    return re.sub(r'\\(["\\])', r"\1", text)


# --- every file, every directory ------------------------------------------------------------------


def test_terraform_tree_has_both_modules_and_the_example() -> None:
    dirs = {p.parent.relative_to(TERRAFORM_DIR).as_posix() for p in _tf_files()}
    assert {"modules/feed_queue", "modules/feed_lambda", "examples/complete"} <= dirs
    assert (EXAMPLE / "README.md").is_file()


@pytest.mark.parametrize("path", _tf_files(), ids=lambda p: p.relative_to(TERRAFORM_DIR).as_posix())
def test_every_tf_file_parses(path: Path) -> None:
    doc = load_tf(path)
    assert doc, f"{path} parsed to nothing"


@pytest.mark.parametrize("path", ALL_DIRS, ids=lambda p: p.name)
def test_every_directory_requires_aws_provider_5_or_newer(path: Path) -> None:
    doc = load_tf(path / "versions.tf")
    (terraform,) = doc["terraform"]
    (providers,) = blocks(terraform, "required_providers")
    aws = attr(providers, "aws")
    assert aws["source"] == "hashicorp/aws"
    lower = re.search(r">=\s*(\d+)(?:\.\d+)*", aws["version"])
    assert lower and int(lower.group(1)) >= 5, f"aws provider constraint {aws['version']!r} allows < 5"
    assert re.search(r">=\s*1\.(\d+)", attr(terraform, "required_version"))


@pytest.mark.parametrize("path", ALL_DIRS, ids=lambda p: p.name)
def test_every_variable_has_a_description_and_a_type(path: Path) -> None:
    variables = tf_dir(path).variables
    assert variables
    for name, body in variables.items():
        where = f"variable {name} in {path.name}"
        assert str(attr(body, "description", "")).strip(), f"{where} has no description"
        assert attr(body, "type", None), f"{where} has no type"


@pytest.mark.parametrize("path", ALL_DIRS, ids=lambda p: p.name)
def test_every_output_has_a_description(path: Path) -> None:
    outputs = tf_dir(path).outputs
    assert outputs
    for name, body in outputs.items():
        assert str(attr(body, "description", "")).strip(), f"output {name} in {path.name} has no description"


# --- wiring ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", MODULE_DIRS, ids=lambda p: p.name)
def test_every_module_variable_is_used_by_the_module(path: Path) -> None:
    d = tf_dir(path)
    # A variable's own validation block mentions it, so variable blocks do not count as use.
    used = {
        name
        for expr in expressions(d, skip_kinds=("variable",))
        for name in re.findall(r"(?<![\w.])var\.(\w+)", expr)
    }
    unused = sorted(set(d.variables) - used)
    assert not unused, f"{path.name} declares variables it never uses: {unused}"


@pytest.mark.parametrize("path", ALL_DIRS, ids=lambda p: p.name)
def test_every_reference_points_at_something_declared(path: Path) -> None:
    d = tf_dir(path)
    exprs = expressions(d)
    problems: list[str] = []
    for expr in exprs:
        for name in re.findall(r"(?<![\w.])var\.(\w+)", expr):
            if name not in d.variables:
                problems.append(f"var.{name}")
        for name in re.findall(r"(?<![\w.])local\.(\w+)", expr):
            if name not in d.locals:
                problems.append(f"local.{name}")
        for type_, name in re.findall(r"(?<![\w.])data\.(\w+)\.(\w+)", expr):
            if (type_, name) not in d.data:
                problems.append(f"data.{type_}.{name}")
        for type_, name in re.findall(r"(?<![\w.])(aws_\w+)\.(\w+)", expr):
            if (type_, name) not in d.resources:
                problems.append(f"{type_}.{name}")
        for module, output in re.findall(r"(?<![\w.])module\.(\w+)\.(\w+)", expr):
            if module not in d.modules:
                problems.append(f"module.{module}")
                continue
            target = tf_dir(path / attr(d.modules[module], "source"))
            if output not in target.outputs:
                problems.append(f"module.{module}.{output} (not an output of {target.path.name})")
    assert exprs
    assert not problems, f"{path.name} references undeclared names: {sorted(set(problems))}"


def test_example_passes_only_declared_and_all_required_module_variables() -> None:
    example = tf_dir(EXAMPLE)
    assert set(example.modules) == {"queue", "lambda"}
    for name, body in example.modules.items():
        module = tf_dir(EXAMPLE / attr(body, "source"))
        assert module.path in {QUEUE_MODULE.resolve(), LAMBDA_MODULE.resolve()}
        passed = set(body) - MODULE_META_ARGUMENTS
        required = {v for v, b in module.variables.items() if "default" not in b}
        undeclared = sorted(passed - set(module.variables))
        assert not undeclared, f"module {name} gets undeclared {undeclared}"
        assert required <= passed, f"module {name} misses required {sorted(required - passed)}"


def test_example_outputs_reference_existing_module_outputs() -> None:
    example = tf_dir(EXAMPLE)
    referenced = set()
    for name, body in example.outputs.items():
        for module, output in re.findall(r"module\.(\w+)\.(\w+)", attr(body, "value")):
            target = tf_dir(EXAMPLE / attr(example.modules[module], "source"))
            assert output in target.outputs, f"output {name} reads missing module.{module}.{output}"
            referenced.add((module, output))
    assert {("queue", "queue_url"), ("queue", "queue_arn"), ("queue", "dlq_arn")} <= referenced


def test_queue_module_outputs_queue_url_queue_arn_and_dlq_arn() -> None:
    outputs = tf_dir(QUEUE_MODULE).outputs
    assert attr(outputs["queue_url"], "value") == "${aws_sqs_queue.this.id}"
    assert attr(outputs["queue_arn"], "value") == "${aws_sqs_queue.this.arn}"
    assert attr(outputs["dlq_arn"], "value") == "${aws_sqs_queue.dlq.arn}"


def test_example_feeds_the_queue_arn_to_the_lambda_and_sizes_visibility_from_its_timeout() -> None:
    example = tf_dir(EXAMPLE)
    assert attr(example.modules["lambda"], "queue_arn") == "${module.queue.queue_arn}"
    assert squash(attr(example.modules["queue"], "visibility_timeout_seconds")) == "${6*var.lambda_timeout}"
    assert attr(example.modules["lambda"], "timeout") == "${var.lambda_timeout}"


# --- the Lambda -----------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ALL_DIRS, ids=lambda p: p.name)
def test_every_event_source_mapping_reports_batch_item_failures(path: Path) -> None:
    for (type_, name), body in tf_dir(path).resources.items():
        if type_ == "aws_lambda_event_source_mapping":
            assert attr(body, "function_response_types") == ["ReportBatchItemFailures"], name


def test_event_source_mapping_batches_and_caps_concurrency_from_variables() -> None:
    d = tf_dir(LAMBDA_MODULE)
    mappings = [b for (t, _), b in d.resources.items() if t == "aws_lambda_event_source_mapping"]
    assert len(mappings) == 1
    (mapping,) = mappings
    assert attr(mapping, "function_response_types") == ["ReportBatchItemFailures"]
    assert attr(mapping, "event_source_arn") == "${var.queue_arn}"
    assert attr(mapping, "batch_size") == "${var.batch_size}"
    assert attr(mapping, "maximum_batching_window_in_seconds") == "${var.maximum_batching_window_in_seconds}"
    (scaling,) = blocks(mapping, "scaling_config")
    assert attr(scaling, "maximum_concurrency") == "${var.maximum_concurrency}"


def test_concurrency_is_limited_by_maximum_concurrency_and_a_reservation_is_optional() -> None:
    """As the READMEs advise: the event source's maximum_concurrency is the limit (small by
    default), a reserved concurrency (which throttles) is unset unless chosen, and when chosen
    it must not be below maximum_concurrency."""
    lam = tf_dir(LAMBDA_MODULE)
    assert attr(lam.variables["reserved_concurrent_executions"], "default") is None
    assert 2 <= attr(lam.variables["maximum_concurrency"], "default") <= 5
    function = lam.resource("aws_lambda_function", "this")
    assert attr(function, "reserved_concurrent_executions") == "${var.reserved_concurrent_executions}"
    conditions = [squash(c) for c in _preconditions(function)]
    assert any(
        "var.reserved_concurrent_executions==null" in c
        and "var.maximum_concurrency<=var.reserved_concurrent_executions" in c
        for c in conditions
    ), conditions

    example = tf_dir(EXAMPLE)
    assert attr(example.variables["reserved_concurrency"], "default") is None
    assert 2 <= attr(example.variables["maximum_concurrency"], "default") <= 5
    # The handler's docstring is the Lambda page's reference (docs/lambda.md renders it).
    from paimon_feed.aws import lambda_handler

    for text in (lambda_handler.__doc__, (EXAMPLE / "README.md").read_text()):
        assert "maximum_concurrency" in text and "reserved concurrency" in text
    assert "rather than reserved concurrency" in lambda_handler.__doc__


def test_replacing_the_buckets_notification_configuration_is_an_explicit_choice() -> None:
    """aws_s3_bucket_notification replaces the bucket's whole configuration: no default may
    choose that for a shared warehouse bucket."""
    for directory in (QUEUE_MODULE, EXAMPLE):
        variable = tf_dir(directory).variables["manage_bucket_notification"]
        assert attr(variable, "default", None) is None and attr(variable, "nullable") is False
    assert "manage_bucket_notification = true" in (EXAMPLE / "README.md").read_text()


def test_lambda_runs_the_paimon_feed_handler_on_python_311_or_312() -> None:
    lam = tf_dir(LAMBDA_MODULE)
    assert attr(lam.variables["handler"], "default") == "paimon_feed.aws.lambda_handler.handler"
    assert attr(lam.variables["runtime"], "default") in {"python3.11", "python3.12"}
    (validation,) = blocks(lam.variables["runtime"], "validation")
    allowed = _string_list(re.search(r"contains\(\[(.*?)\]", attr(validation, "condition")).group(1))
    assert set(allowed) == {"python3.11", "python3.12"}
    function = lam.resource("aws_lambda_function", "this")
    assert "var.handler" in attr(function, "handler")
    assert "var.runtime" in attr(function, "runtime")


def test_lambda_environment_carries_the_handler_contract() -> None:
    lam = tf_dir(LAMBDA_MODULE)
    function = lam.resource("aws_lambda_function", "this")
    (environment,) = blocks(function, "environment")
    assert "local.feed_environment" in attr(environment, "variables")
    # The module's variables win over extra_environment_variables (merge: last wins).
    assert squash(attr(environment, "variables")) == (
        "${merge(var.extra_environment_variables,local.feed_environment)}"
    )

    env = squash(lam.locals["feed_environment"])
    expected = {
        "PAIMON_FEED_WAREHOUSE": "local.warehouse_uri",
        "PAIMON_FEED_CATALOG_OPTIONS": "jsonencode(var.catalog_options)",
        "PAIMON_FEED_CONSUMER_ID": "var.consumer_id",
        "PAIMON_FEED_PROCESSOR": "var.processor",
        "PAIMON_FEED_TABLES": 'join(",",var.tables)',
        "PAIMON_FEED_START": "var.start",
    }
    for name, value in expected.items():
        pattern = rf"""['"]?{name}['"]?[:=]['"]?(\$\{{)?{re.escape(value)}"""
        assert re.search(pattern, env), f"{name} is not set to {value} in {env}"
    # Optional ones only when given.
    assert re.search(r"length\(var\.tables\)>0\?\{['\"]?PAIMON_FEED_TABLES", env)
    assert re.search(r"var\.start!=(null|None)\?\{['\"]?PAIMON_FEED_START", env)
    warehouse = squash(lam.locals["warehouse_uri"])
    assert warehouse == '${trimsuffix("s3://${var.warehouse_bucket}/${var.warehouse_prefix}","/")}'


def test_lambda_package_comes_from_exactly_one_variable_source() -> None:
    lam = tf_dir(LAMBDA_MODULE)
    function = lam.resource("aws_lambda_function", "this")
    assert attr(function, "filename") == "${var.package_filename}"
    assert attr(function, "s3_key") == "${var.package_s3_key}"
    assert attr(function, "image_uri") == "${var.package_image_uri}"
    conditions = _preconditions(function)
    assert "${local.package_sources==1}" in conditions


def test_log_group_is_the_functions_own_with_retention() -> None:
    lam = tf_dir(LAMBDA_MODULE)
    group = lam.resource("aws_cloudwatch_log_group", "this")
    assert attr(group, "name") == "${local.log_group_name}"
    assert lam.locals["log_group_name"] == "/aws/lambda/${var.function_name}"
    assert attr(group, "retention_in_days") == "${var.log_retention_in_days}"
    assert attr(lam.variables["log_retention_in_days"], "default") >= 30


# --- IAM ------------------------------------------------------------------------------------------

# A '*' in a resource is allowed only after a concrete anchor, each for a stated reason.
JUSTIFIED_WILDCARD_RESOURCES = {
    r"\$\{local\.bucket_arn\}/\$\{var\.warehouse_prefix\}\*": "objects under the warehouse prefix",
    r"\$\{local\.bucket_arn\}/\$\{var\.warehouse_prefix\}\*/consumer/consumer-\$\{var\.consumer_id\}": (
        "this consumer's checkpoint, in any table of the warehouse"
    ),
    r"\$\{local\.bucket_arn\}/\$\{var\.warehouse_prefix\}\*/consumer/": (
        "a table's consumer/ directory marker"
    ),
    r"\$\{aws_cloudwatch_log_group\.this\.arn\}:\*": "log streams of the function's own log group",
}


def _policy_documents() -> list[tuple[str, TfDir, dict]]:
    found = []
    for path in ALL_DIRS:
        d = tf_dir(path)
        for (type_, name), body in d.data.items():
            if type_ == "aws_iam_policy_document":
                found.append((f"{path.name}:{name}", d, body))
    return found


def _resolve_resources(values: Any, d: TfDir) -> list[str]:
    """Expand resources given as ``${local.x}`` (a string or a list) into their templates."""
    if isinstance(values, str):
        values = [values]
    resolved: list[str] = []
    for value in values:
        local = re.fullmatch(r"\$\{local\.(\w+)\}", value)
        if local and local.group(1) in d.locals:
            resolved.extend(_resolve_resources(d.locals[local.group(1)], d))
        else:
            resolved.append(value)
    return resolved


def _statements(body: dict) -> list[dict]:
    statements = blocks(body, "statement")
    assert statements, "policy document without statements"
    return statements


def test_there_are_policy_documents_for_the_queue_and_the_function() -> None:
    names = {name for name, _, _ in _policy_documents()}
    assert {
        "feed_queue:queue_from_bucket",
        "feed_queue:queue_from_rule",
        "feed_lambda:assume_role",
        "feed_lambda:permissions",
        "feed_lambda:queue_kms",
    } <= names


def test_policy_documents_grant_no_wildcard_action_or_resource() -> None:
    problems: list[str] = []
    wildcard_resources = 0
    for name, d, body in _policy_documents():
        for statement in _statements(body):
            where = f"{name}/{attr(statement, 'sid', '?')}"
            if "not_actions" in statement or "not_resources" in statement:
                problems.append(f"{where}: not_actions/not_resources grant everything else")
            actions = attr(statement, "actions", [])
            if not actions:
                problems.append(f"{where}: no actions")
            problems += [f"{where}: wildcard action {a!r}" for a in actions if "*" in a]
            for resource in _resolve_resources(attr(statement, "resources", []), d):
                if resource == "*":
                    problems.append(f"{where}: resource '*'")
                elif "*" in resource:
                    wildcard_resources += 1
                    if not any(re.fullmatch(p, resource) for p in JUSTIFIED_WILDCARD_RESOURCES):
                        problems.append(f"{where}: unjustified wildcard resource {resource!r}")
            for principals in blocks(statement, "principals"):
                if "*" in attr(principals, "identifiers"):
                    problems.append(f"{where}: principal '*'")
    assert not problems, "\n".join(problems)
    assert wildcard_resources == len(JUSTIFIED_WILDCARD_RESOURCES)


@functools.cache
def _lambda_grants() -> list[tuple[str, list[re.Pattern], dict]]:
    """(action, rendered resource patterns, conditions) for every statement of the function role."""
    lam = tf_dir(LAMBDA_MODULE)
    grants = []
    for statement in _statements(lam.data[("aws_iam_policy_document", "permissions")]):
        assert attr(statement, "effect", "Allow") == "Allow"
        resources = [
            render(r, SAMPLE, lam.locals) for r in _resolve_resources(attr(statement, "resources"), lam)
        ]
        conditions = _conditions(statement)
        for action in attr(statement, "actions"):
            grants.append((action, [iam_glob(r) for r in resources], conditions))
    return grants


def _allowed(action: str, arn: str) -> bool:
    return any(a == action and any(p.fullmatch(arn) for p in patterns) for a, patterns, _ in _lambda_grants())


def test_function_role_reads_only_the_warehouse_prefix() -> None:
    obj = "arn:aws:s3:::acme-lake/"
    assert _allowed("s3:GetObject", obj + "wh/sales.db/orders/snapshot/snapshot-3")
    assert _allowed("s3:GetObject", obj + "wh/sales.db/orders/manifest/manifest-list-1")
    assert not _allowed("s3:GetObject", obj + "elsewhere/sales.db/orders/snapshot/snapshot-3")
    assert not _allowed("s3:GetObject", "arn:aws:s3:::other-bucket/wh/sales.db/orders/snapshot/snapshot-3")

    (listing,) = [(p, c) for a, p, c in _lambda_grants() if a == "s3:ListBucket"]
    patterns, conditions = listing
    assert [p.pattern for p in patterns] == [iam_glob("arn:aws:s3:::acme-lake").pattern]
    test, values = conditions["s3:prefix"]
    assert test == "StringLike"
    assert [render(v, SAMPLE, {}) for v in values] == ["wh/*"]


def test_function_role_writes_only_its_own_checkpoints() -> None:
    obj = "arn:aws:s3:::acme-lake/"
    assert _allowed("s3:PutObject", obj + "wh/sales.db/orders/consumer/consumer-orders-etl")
    assert _allowed("s3:PutObject", obj + "wh/sales.db/orders/branch/branch-dev/consumer/consumer-orders-etl")
    assert _allowed("s3:PutObject", obj + "wh/sales.db/orders/consumer/")
    assert not _allowed("s3:PutObject", obj + "wh/sales.db/orders/consumer/consumer-orders-etl2")
    assert not _allowed("s3:PutObject", obj + "wh/sales.db/orders/consumer/consumer-billing")
    assert not _allowed("s3:PutObject", obj + "wh/sales.db/orders/snapshot/snapshot-4")
    assert not _allowed("s3:PutObject", obj + "wh/sales.db/orders/bucket-0/data-0.parquet")
    assert not _allowed("s3:PutObject", obj + "elsewhere/t/consumer/consumer-orders-etl")

    s3_actions = {a for a, _, _ in _lambda_grants() if a.startswith("s3:")}
    assert s3_actions == {"s3:GetObject", "s3:ListBucket", "s3:PutObject"}


def test_function_role_consumes_only_the_feed_queue_and_writes_only_its_logs() -> None:
    lam = tf_dir(LAMBDA_MODULE)
    by_sid = {attr(s, "sid"): s for s in _statements(lam.data[("aws_iam_policy_document", "permissions")])}
    sqs = by_sid["ConsumeFeedQueue"]
    assert set(attr(sqs, "actions")) == {
        "sqs:ReceiveMessage",
        "sqs:DeleteMessage",
        "sqs:GetQueueAttributes",
        "sqs:ChangeMessageVisibility",
    }
    assert attr(sqs, "resources") == ["${var.queue_arn}"]
    logs = by_sid["WriteOwnLogs"]
    assert set(attr(logs, "actions")) == {"logs:CreateLogStream", "logs:PutLogEvents"}
    assert attr(logs, "resources") == ["${aws_cloudwatch_log_group.this.arn}:*"]
    all_actions = {a for s in by_sid.values() for a in attr(s, "actions")}
    assert all_actions <= {
        "s3:GetObject", "s3:ListBucket", "s3:PutObject", "logs:CreateLogStream", "logs:PutLogEvents",
    } | set(attr(sqs, "actions"))


# --- the queue ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "document,service,source_arn,source_account",
    [
        ("queue_from_bucket", "s3.amazonaws.com", "${local.bucket_arn}", "${local.bucket_account}"),
        (
            "queue_from_rule",
            "events.amazonaws.com",
            "${aws_cloudwatch_event_rule.snapshots[0].arn}",
            "${data.aws_caller_identity.current.account_id}",
        ),
    ],
    ids=["direct", "eventbridge"],
)
def test_queue_policy_admits_only_its_source_with_source_arn_and_account(
    document: str, service: str, source_arn: str, source_account: str
) -> None:
    q = tf_dir(QUEUE_MODULE)
    (statement,) = _statements(q.data[("aws_iam_policy_document", document)])
    assert attr(statement, "effect") == "Allow"
    assert attr(statement, "actions") == ["sqs:SendMessage"]
    assert attr(statement, "resources") == ["${aws_sqs_queue.this.arn}"]
    (principals,) = blocks(statement, "principals")
    assert attr(principals, "type") == "Service"
    assert attr(principals, "identifiers") == [service]
    conditions = _conditions(statement)
    assert conditions["aws:SourceArn"][0] in {"ArnEquals", "ArnLike"}
    assert conditions["aws:SourceArn"][1] == [source_arn]
    assert conditions["aws:SourceAccount"] == ("StringEquals", [source_account])


def test_queue_policy_source_arn_is_the_warehouse_bucket() -> None:
    q = tf_dir(QUEUE_MODULE)
    assert render("${local.bucket_arn}", SAMPLE, q.locals) == "arn:aws:s3:::acme-lake"


def test_queue_policy_uses_the_document_of_the_chosen_mode() -> None:
    q = tf_dir(QUEUE_MODULE)
    policy = attr(q.resource("aws_sqs_queue_policy", "this"), "policy")
    assert "data.aws_iam_policy_document.queue_from_bucket" in policy
    assert "data.aws_iam_policy_document.queue_from_rule" in policy
    assert "local.direct" in attr(q.data[("aws_iam_policy_document", "queue_from_bucket")], "count")
    assert "local.eventbridge" in attr(q.data[("aws_iam_policy_document", "queue_from_rule")], "count")


def test_queues_are_encrypted_and_failures_go_to_the_dead_letter_queue() -> None:
    q = tf_dir(QUEUE_MODULE)
    for name in ("this", "dlq"):
        queue = q.resource("aws_sqs_queue", name)
        assert "local.sqs_managed_sse" in attr(queue, "sqs_managed_sse_enabled")
        assert attr(queue, "kms_master_key_id") == "${var.kms_master_key_id}"
    assert re.fullmatch(r"\$\{var\.kms_master_key_id==(null|None)\}", squash(q.locals["sqs_managed_sse"]))
    redrive = squash(attr(q.resource("aws_sqs_queue", "this"), "redrive_policy"))
    assert re.search(r"deadLetterTargetArn['\"]?[:=]['\"]?(\$\{)?aws_sqs_queue\.dlq\.arn", redrive)
    assert re.search(r"maxReceiveCount['\"]?[:=]['\"]?(\$\{)?var\.max_receive_count", redrive)
    allow = squash(attr(q.resource("aws_sqs_queue_redrive_allow_policy", "dlq"), "redrive_allow_policy"))
    assert "byQueue" in allow and "aws_sqs_queue.this.arn" in allow


# --- notifications --------------------------------------------------------------------------------


def _direct_prefix(database: str, table: str) -> str:
    q = tf_dir(QUEUE_MODULE)
    comprehension = q.locals["table_snapshot_prefixes"]
    match = re.fullmatch(
        r'\$\{\{\s*for\s+(\w+)\s+in\s+var\.tables\s*:\s*\1\s*=>\s*"(.*)"\s*\}\}', comprehension
    )
    assert match, f"table_snapshot_prefixes is not a for over var.tables: {comprehension}"
    loop = match.group(1)
    values = {
        **SAMPLE,
        f'split(".",{loop})[0]': database,
        f'split(".",{loop})[1]': table,
    }
    return render(match.group(2), values, q.locals)


def test_direct_mode_filters_each_table_on_its_snapshot_files() -> None:
    prefix = _direct_prefix("sales", "orders")
    assert prefix == "wh/sales.db/orders/snapshot/snapshot-"
    assert "wh/sales.db/orders/snapshot/snapshot-17".startswith(prefix)
    for key in (
        "wh/sales.db/orders/snapshot/.snapshot-17.3f2a.tmp",
        "wh/sales.db/orders/snapshot/LATEST",
        "wh/sales.db/orders/snapshot/EARLIEST",
        "wh/sales.db/orders/manifest/manifest-list-9",
        "wh/sales.db/orders/bucket-0/data-1.parquet",
        "wh/sales.db/orders_v2/snapshot/snapshot-1",
        "other/sales.db/orders/snapshot/snapshot-1",
    ):
        assert not key.startswith(prefix), key


def test_direct_notification_sends_one_filter_per_table_to_the_queue() -> None:
    q = tf_dir(QUEUE_MODULE)
    notification = q.resource("aws_s3_bucket_notification", "direct")
    assert attr(notification, "bucket") == "${var.bucket_name}"
    assert "local.direct" in attr(notification, "count")
    (dynamic,) = blocks(notification, "dynamic")
    queue = dynamic["queue"]
    assert attr(queue, "for_each") == "${local.table_snapshot_prefixes}"
    (content,) = blocks(queue, "content")
    assert attr(content, "queue_arn") == "${aws_sqs_queue.this.arn}"
    assert attr(content, "events") == ["s3:ObjectCreated:*"]
    assert attr(content, "filter_prefix") == "${queue.value}"
    assert attr(notification, "depends_on") == ["${aws_sqs_queue_policy.this}"]


def _eventbridge_wildcard_regex(wildcard: str) -> re.Pattern:
    # EventBridge wildcard: '*' matches any characters, '/' included; '\' escapes.
    return re.compile("".join(".*" if c == "*" else re.escape(c) for c in wildcard))


def test_eventbridge_rule_matches_every_snapshot_commit_of_the_warehouse_and_nothing_else() -> None:
    q = tf_dir(QUEUE_MODULE)
    rule = q.resource("aws_cloudwatch_event_rule", "snapshots")
    assert "local.eventbridge" in attr(rule, "count")
    assert attr(rule, "event_pattern") == "${jsonencode(local.snapshot_event_pattern)}"

    pattern = q.locals["snapshot_event_pattern"]
    assert pattern["source"] == ["aws.s3"]
    assert pattern["detail-type"] == ["Object Created"]
    assert pattern["detail"]["bucket"]["name"] == ["${var.bucket_name}"]
    (key_filter,) = pattern["detail"]["object"]["key"]
    wildcard = render(key_filter["wildcard"], SAMPLE, q.locals)
    assert wildcard == "wh/*/snapshot/snapshot-*"

    matches = _eventbridge_wildcard_regex(wildcard)
    for key in (
        "wh/sales.db/orders/snapshot/snapshot-17",
        "wh/billing.db/invoices/snapshot/snapshot-1",
        "wh/sales.db/orders/branch/branch-dev/snapshot/snapshot-3",
    ):
        assert matches.fullmatch(key), key
    for key in (
        "wh/sales.db/orders/snapshot/.snapshot-17.3f2a.tmp",
        "wh/sales.db/orders/snapshot/LATEST",
        "wh/sales.db/orders/manifest/manifest-list-9",
        "wh/sales.db/orders/bucket-0/data-1.parquet",
        "other/sales.db/orders/snapshot/snapshot-1",
    ):
        assert not matches.fullmatch(key), key


def test_eventbridge_mode_enables_bucket_events_and_targets_the_queue() -> None:
    q = tf_dir(QUEUE_MODULE)
    notification = q.resource("aws_s3_bucket_notification", "eventbridge")
    assert attr(notification, "eventbridge") is True
    assert "local.eventbridge" in attr(notification, "count")
    target = q.resource("aws_cloudwatch_event_target", "queue")
    assert attr(target, "arn") == "${aws_sqs_queue.this.arn}"
    assert attr(target, "rule") == "${aws_cloudwatch_event_rule.snapshots[0].name}"


# --- input validation in the example ---------------------------------------------------------------


def _validation_patterns(body: dict, subject: str) -> tuple[list[str], list[str]]:
    """Regexes a variable must match (``can(regex(..))``) and must not match (``!can(regex(..))``)."""
    must, must_not = [], []
    for validation in blocks(body, "validation"):
        condition = attr(validation, "condition")
        call = r'(!?)can\(regex\("((?:[^"\\]|\\.)*)",\s*' + re.escape(subject) + r"\)\)"
        for negated, pattern in re.findall(call, condition):
            (must_not if negated else must).append(hcl_unescape(pattern))
    return must, must_not


def _accepts(body: dict, subject: str) -> Callable[[str], bool]:
    must, must_not = _validation_patterns(body, subject)
    assert must or must_not, f"no regex validation on {subject}"

    def accepts(value: str) -> bool:
        return all(re.search(p, value) for p in must) and not any(re.search(p, value) for p in must_not)

    return accepts


def test_example_validates_the_bucket_name() -> None:
    accepts = _accepts(tf_dir(EXAMPLE).variables["warehouse_bucket"], "var.warehouse_bucket")
    for good in ("acme-lake", "my.bucket-01", "abc"):
        assert accepts(good), good
    for bad in ("Acme-Lake", "ab", "-acme", "acme_lake", "acme..lake", "192.168.0.1", "s3://acme"):
        assert not accepts(bad), bad


def test_example_validates_that_the_prefix_ends_with_a_slash() -> None:
    body = tf_dir(EXAMPLE).variables["warehouse_prefix"]
    conditions = [squash(attr(v, "condition")) for v in blocks(body, "validation")]
    assert any(
        'endswith(var.warehouse_prefix,"/")' in c and 'var.warehouse_prefix==""' in c for c in conditions
    )
    accepts = _accepts(body, "var.warehouse_prefix")
    assert accepts("wh/") and accepts("lake/wh/")
    assert not accepts("wh*/") and not accepts("w?h/")


def test_example_validates_the_notification_mode() -> None:
    body = tf_dir(EXAMPLE).variables["notification_mode"]
    (validation,) = blocks(body, "validation")
    listed = re.search(r"contains\(\[(.*?)\],\s*var\.notification_mode\)", attr(validation, "condition"))
    assert listed
    assert set(_string_list(listed.group(1))) == {"direct", "eventbridge"}
    assert attr(body, "default") == "direct"


def test_example_and_module_accept_exactly_the_consumer_ids_the_library_accepts() -> None:
    from paimon_feed.checkpoint import validate_consumer_id
    from paimon_feed.errors import FeedError

    def library_accepts(value: str) -> bool:
        try:
            validate_consumer_id(value)
        except FeedError:
            return False
        return True

    samples = [
        "orders-etl", "a", "A.b_c-9", "_x", "x" * 200,
        ".hidden", "-x", "orders etl", "a/b", "..", "", "é", "x" * 201,
    ]
    for path in (EXAMPLE, LAMBDA_MODULE):
        accepts = _accepts(tf_dir(path).variables["consumer_id"], "var.consumer_id")
        for sample in samples:
            assert accepts(sample) == library_accepts(sample), f"{path.name}: consumer id {sample!r}"
        assert all(re.fullmatch(r"[A-Za-z0-9._-]+", s) for s in samples if accepts(s))


def test_example_accepts_every_start_spec_the_library_accepts() -> None:
    from paimon_feed.errors import FeedError
    from paimon_feed.start import parse_start

    def library_accepts(value: str) -> bool:
        try:
            parse_start(value)
        except FeedError:
            return False
        return True

    accepts = _accepts(tf_dir(EXAMPLE).variables["start"], "var.start")
    valid = [
        "latest-full", "latest", "LATEST", "earliest", "42", "snapshot:42",
        "time:2026-11-20T08:00:00Z", "time:-1h", "-30m",
    ]
    invalid = ["newest", "snapshot:", "snapshot:x", "", "latest full", "-1y"]
    for spec in valid:
        assert library_accepts(spec) and accepts(spec), spec
    for spec in invalid:
        assert not library_accepts(spec) and not accepts(spec), spec


def test_example_validates_the_processor_and_tables() -> None:
    example = tf_dir(EXAMPLE)
    processor = _accepts(example.variables["processor"], "var.processor")
    for good in ("acme_feed.process:handle_batch", "mod:fn", "a.b.c:_f"):
        assert processor(good), good
    for bad in ("acme_feed.process", "acme-feed:fn", "mod:fn:x", "mod.:fn", ":fn"):
        assert not processor(bad), bad

    tables = _accepts(example.variables["tables"], "t")
    assert tables("sales.orders")
    for bad in ("sales", "sales.orders.x", "sales/orders", "sales.orders,billing.x", "sales.*"):
        assert not tables(bad), bad


# --- checkov --------------------------------------------------------------------------------------

INLINE_SKIP = re.compile(r"^\s*#\s*checkov:skip=(CKV2?_[A-Z0-9]+_\d+):(.*)$")


def _inline_skips() -> dict[str, set[str]]:
    """check id -> reasons, from ``#checkov:skip=ID:reason`` comments; every skip must give one."""
    skips: dict[str, set[str]] = {}
    for path in _tf_files():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if "checkov:skip" not in line:
                continue
            match = INLINE_SKIP.match(line)
            assert match, f"{path}:{number}: want #checkov:skip=CKV_..:reason, got {line.strip()}"
            reason = match.group(2).strip()
            assert len(reason.split()) >= 8, f"{path}:{number}: skip {match.group(1)} needs a written reason"
            skips.setdefault(match.group(1), set()).add(reason)
    return skips


def test_checkov_skips_are_inline_and_give_a_reason() -> None:
    skips = _inline_skips()
    assert skips, "expected the documented inline skips"
    configs = [REPO_ROOT / ".checkov.yaml", REPO_ROOT / ".checkov.yml", *TERRAFORM_DIR.rglob(".checkov.y*ml")]
    for config in configs:
        if config.is_file():
            text = config.read_text(encoding="utf-8")
            assert "skip" not in text, f"{config}: skip checks inline, next to the resource, with a reason"


CHECKOV_VENV = REPO_ROOT / ".venv-tools" / "checkov"
INSTALL_CHECKOV = REPO_ROOT / ".ci" / "install-checkov"


def _checkov_executable() -> Path:
    """checkov, from its own virtualenv: it pins boto3, packaging and its own hcl2 fork at versions
    that conflict with the project's, so it cannot share the project's environment.

    ``$PAIMON_FEED_CHECKOV`` names an executable; otherwise ``.ci/install-checkov`` (which CI runs
    before the tests) has put one under ``.venv-tools/checkov``. The suite installs nothing itself.
    """
    configured = os.environ.get("PAIMON_FEED_CHECKOV")
    if configured:
        return Path(configured)
    executable = CHECKOV_VENV / "bin" / "checkov"
    if not executable.exists():
        pytest.fail(
            f"checkov is not installed: run {INSTALL_CHECKOV.relative_to(REPO_ROOT)} first "
            f"(it makes {CHECKOV_VENV.relative_to(REPO_ROOT)}), or set PAIMON_FEED_CHECKOV"
        )
    return executable


def _checkov_command() -> list[str]:
    # The brief's command is `checkov -d infra/terraform --framework terraform --compact --quiet`.
    # --quiet only changes the display, and in JSON it drops the skipped checks whose reasons
    # are checked below, so it is left out.
    return [
        str(_checkov_executable()),
        "-d", str(TERRAFORM_DIR),
        "--framework", "terraform",
        "--compact",
        "--skip-download",  # no guideline download: runs offline
        "-o", "json",
    ]


def test_checkov_reports_no_failed_checks() -> None:
    env = {k: v for k, v in os.environ.items() if k not in {"BC_API_KEY", "PRISMA_API_URL"}}
    env["LOG_LEVEL"] = "WARNING"
    proc = subprocess.run(
        _checkov_command(), cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=600,
    )
    if "cannot import name 'START_LINE'" in proc.stderr:
        pytest.fail(
            "checkov's hcl2 module (bc-python-hcl2) was overwritten by python-hcl2, which installs "
            "a module of the same name; reinstall it: pip install --force-reinstall --no-deps "
            "bc-python-hcl2"
        )
    start = min((i for i in (proc.stdout.find("{"), proc.stdout.find("[")) if i != -1), default=-1)
    assert proc.returncode in (0, 1) and start != -1, (
        f"checkov did not run (exit {proc.returncode}):\n{proc.stderr[-3000:]}"
    )
    report = json.loads(proc.stdout[start:])
    reports = report if isinstance(report, list) else [report]
    (terraform,) = [r for r in reports if r.get("check_type") == "terraform"]
    summary, results = terraform["summary"], terraform["results"]

    assert summary["parsing_errors"] == 0, f"checkov could not parse: {results.get('parsing_errors')}"
    assert summary["resource_count"] >= 10 and summary["passed"] >= 20, f"scanned too little: {summary}"
    failed = [
        f"{c['check_id']} {c['check_name']} on {c['resource']} ({c['file_path']}:{c['file_line_range']})"
        for c in results.get("failed_checks", [])
    ]
    assert summary["failed"] == 0 and not failed, "checkov failed checks:\n" + "\n".join(failed)

    inline = _inline_skips()
    for check in results.get("skipped_checks", []):
        comment = (check.get("check_result") or {}).get("suppress_comment") or ""
        assert check["check_id"] in inline, f"{check['check_id']} skipped without an inline #checkov:skip"
        where = f"{check['check_id']} on {check['resource']}"
        assert len(comment.split()) >= 8, f"{where} skipped without a reason"
    assert summary["skipped"] == len(results.get("skipped_checks", []))
