"""The documentation stays true to the code and to the committed results.

- docs/training.md's `TrainConfig` reference is what
  docs/generate_config_reference.py generates from the dataclass' field
  metadata (run the script to refresh it).
- Every benchmark result file that the README, docs/, the CHANGELOG or
  benchmarks/README.md cites exists, and every file in benchmarks/results/
  is cited somewhere (benchmarks/multi30k.yaml counts).
- The README's first command installs exactly as .ci/run does, and its second
  is the test command .ci/run runs.
- No document talks about the project's own history of work.

Plain file checks and one import of `keras_transformer.TrainConfig`, marked
backend_independent (they run in the PyTorch suite only), except the two that
need the TensorFlow backend (the signature table, the API reference build).
"""

import dataclasses
import fnmatch
import glob
import importlib.util
import os
import re
import warnings

import keras
import pytest
from conftest import REPO_ROOT

from keras_transformer import TrainConfig

RESULTS = os.path.join(REPO_ROOT, "benchmarks", "results")
DOCUMENTS = (
    ["README.md", "CHANGELOG.md", os.path.join("benchmarks", "README.md")]
    + sorted(os.path.relpath(p, REPO_ROOT) for p in glob.glob(os.path.join(REPO_ROOT, "docs", "*.md")))
)
RESULT_PREFIXES = (
    "cpu_parallelism_", "ctranslate2_decode_", "data_scale_", "decode_", "default_task_",
    "saved_model_profile_", "serving_speed_", "onnx_decode_",
    "export_time_", "finished_rows_",
    "gpu_product_", "input_wait_", "loss_buffers_", "loss_formulations_",
    "multi30k_", "wmt14_",
    "padding_", "relative_positions_", "startup_", "test_suite_cpu_", "test_suite_time_", "test_time_", "token_check_cost_", "train_op_launches_",
    "train_step_profile_",
    "train_throughput_", "warmup_time_",
)
BACKENDS = ("tensorflow", "jax", "torch")


def _read(path):
    with open(os.path.join(REPO_ROOT, path), encoding="utf-8") as f:
        return f.read()


def _generator():
    path = os.path.join(REPO_ROOT, "docs", "generate_config_reference.py")
    spec = importlib.util.spec_from_file_location("generate_config_reference", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.backend_independent
def test_train_config_reference_is_generated_from_the_field_metadata():
    generator = _generator()
    text = _read(os.path.join("docs", "training.md"))
    expected = generator.reference(TrainConfig)
    assert generator.rewrite(text, expected) == text, (
        "docs/training.md's TrainConfig reference is stale: run "
        "python docs/generate_config_reference.py"
    )
    # The block documents every field, each with its doc metadata.
    for field in dataclasses.fields(TrainConfig):
        assert field.metadata.get("doc"), f"TrainConfig.{field.name} has no doc metadata"
        assert f"| `{field.name}` |" in expected


def _expand(name, backends=True):
    """Brace alternatives expanded; ``<backend>`` -> each backend (or a glob
    star with ``backends=False``), any other ``<...>`` -> a glob star."""
    match = re.search(r"\{([^{}]*)\}", name)
    if match:
        return [
            expanded
            for choice in match.group(1).split(",")
            for expanded in _expand(name[: match.start()] + choice + name[match.end():], backends)
        ]
    if backends and "<backend>" in name:
        return [n for b in BACKENDS for n in _expand(name.replace("<backend>", b))]
    return [re.sub(r"<[^<>]*>", "*", name)]


def _cited_result_names(text, backends=True):
    names = set()
    for token in re.findall(r"[\w.{},<>*-]+\.(?:json|md|png|csv|txt|hyp\.de)\b|[\w.{},<>*-]+\.\{[\w,.]+\}", text):
        token = token.split("/")[-1]
        for name in _expand(token, backends):
            if name.startswith(RESULT_PREFIXES):
                names.add(name)
    return names


def _all_citations(backends=True):
    """``{file name or glob: the first document citing it}``. With
    ``backends=False`` a ``<backend>`` template is one glob (at least one
    backend's file must exist), else one name per backend."""
    cited = {}
    for document in DOCUMENTS + [os.path.join("benchmarks", "multi30k.yaml")]:
        for name in _cited_result_names(_read(document), backends):
            cited.setdefault(name, document)
    return cited


@pytest.mark.backend_independent
def test_every_cited_result_file_exists():
    files = os.listdir(RESULTS)
    missing = [
        f"{name} (cited in {document})"
        for name, document in sorted(_all_citations(backends=False).items())
        if not fnmatch.filter(files, name)
        and not name.startswith(("ctranslate2_decode_", "multi30k_gpu_"))  # no results yet
    ]
    assert not missing, "cited but not in benchmarks/results/: " + ", ".join(missing)


@pytest.mark.backend_independent
def test_every_result_file_is_cited():
    patterns = list(_all_citations())
    uncited = [
        name for name in sorted(os.listdir(RESULTS))
        if not any(fnmatch.fnmatch(name, pattern) for pattern in patterns)
    ]
    assert not uncited, "in benchmarks/results/ but cited nowhere: " + ", ".join(uncited)


@pytest.mark.backend_independent
def test_result_files_are_not_named_after_rounds_of_work():
    bad = [n for n in os.listdir(RESULTS) if re.search(r"session|_s\d+[._]|round|before|after", n)]
    assert not bad, bad


@pytest.mark.backend_independent
def test_readme_two_commands_are_what_ci_runs():
    readme = _read("README.md")
    section = readme.split("## Two commands", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)```", section, flags=re.DOTALL)
    assert len(blocks) == 2, "the README's 'Two commands' section holds exactly two commands"
    install, tests = (block.strip() for block in blocks)
    assert "\n" not in install and "\n" not in tests
    ci = _read(os.path.join(".ci", "run"))
    steps = [step.strip() for step in install.split("&&")]
    assert steps[:2] == ["python3 -m venv .venv", ". .venv/bin/activate"]
    pip_steps = [s for s in steps if s.startswith("pip install")]
    ci_pip = [
        re.sub(r"\s--quiet\b", "", line.strip())
        for line in ci.splitlines()
        if line.strip().startswith("pip install")
    ]
    assert pip_steps == ci_pip, (pip_steps, ci_pip)
    assert steps[-1] == "keras-transformer train"
    assert tests == "bash tests/run_all_backends.sh"
    assert tests in ci.splitlines()


@pytest.mark.backend_independent
def test_no_document_tells_the_history_of_its_own_work():
    pattern = re.compile(r"session|\bround\b(?! trip)|this machine|earlier run|previous run|\blent\b", re.I)
    found = [
        f"{document}:{number}: {line.strip()}"
        for document in DOCUMENTS
        for number, line in enumerate(_read(document).splitlines(), 1)
        if pattern.search(line)
    ]
    assert not found, "\n".join(found)


# --- Every shell and Python block is run by a test or says why not ---------

NOT_RUN = re.compile(r"<!-- not run: (\S.*?) -->")
RUN_BY = re.compile(r"<!-- run by: (\S+?) -->")
STORY = re.compile(r"<!-- readme-story:(python|bash) -->")
CODE_FENCE = re.compile(r"^```(python|bash|sh|shell|console)\s*$")
CHECKED_DOCUMENTS = ["README.md"] + sorted(
    os.path.relpath(p, REPO_ROOT) for p in glob.glob(os.path.join(REPO_ROOT, "docs", "*.md"))
)


def code_blocks(text):
    """``(line number, marker line)`` of each Python or shell block: the
    marker is the nearest non-blank line above the opening fence."""
    lines = text.splitlines()
    blocks, inside = [], False
    for number, line in enumerate(lines):
        if line.startswith("```"):
            if not inside and CODE_FENCE.match(line):
                above = [previous for previous in lines[:number] if previous.strip()]
                blocks.append((number + 1, above[-1].strip() if above else ""))
            inside = not inside
    return blocks


def unmarked_blocks(document, text):
    problems = []
    for number, marker in code_blocks(text):
        run_by = RUN_BY.fullmatch(marker)
        if NOT_RUN.fullmatch(marker) or STORY.fullmatch(marker):
            continue
        if run_by and os.path.exists(os.path.join(REPO_ROOT, run_by.group(1))):
            continue
        problems.append(f"{document}:{number}")
    return problems


@pytest.mark.backend_independent
def test_every_code_block_is_run_or_says_why_not():
    """Before each ```python/```bash block of README.md and docs/*.md:
    ``<!-- run by: PATH -->`` (an existing test or CI file that runs it) or
    ``<!-- not run: REASON -->``."""
    problems = [
        problem
        for document in CHECKED_DOCUMENTS
        for problem in unmarked_blocks(document, _read(document))
    ]
    assert not problems, (
        "code blocks without <!-- run by: PATH --> or <!-- not run: REASON --> above "
        "them: " + ", ".join(problems)
    )


@pytest.mark.backend_independent
def test_the_block_check_catches_an_unmarked_block():
    text = "text\n\n```bash\nls\n```\n\n<!-- not run: needs a GPU -->\n```python\nx\n```\n"
    assert unmarked_blocks("page.md", text) == ["page.md:3"]
    assert unmarked_blocks("page.md", "<!-- run by: tests/nowhere.py -->\n```sh\nls\n```\n") == [
        "page.md:2"
    ]
    assert unmarked_blocks("page.md", "<!-- not run: -->\n```sh\nls\n```\n") == ["page.md:2"]


# --- One signature table, generated from the export's list ----------------


def _module(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(REPO_ROOT, "docs", f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_signature_table_is_generated_from_the_exports_signatures():
    # Imports the export's signature list, hence TensorFlow: once per suite.
    if keras.config.backend() != "tensorflow":
        pytest.skip("the signature table is checked once per suite, under tensorflow")
    from keras_transformer.export.saved_model_signatures import SIGNATURES

    generator = _module("generate_signature_table")
    block = generator.table()
    for document in ("README.md", os.path.join("docs", "serving.md")):
        text = _read(document)
        assert generator.rewrite(text, block) == text, (
            f"{document}'s signature table is stale: run python docs/generate_signature_table.py"
        )
    for name in SIGNATURES:
        assert f"| `{name}` |" in block
    described = dict(generator.DESCRIPTIONS)
    described.pop("translate_constrained")
    generator.DESCRIPTIONS = described
    with pytest.raises(ValueError, match="translate_constrained"):
        generator.table()


@pytest.mark.backend_independent
def test_option_table_is_generated_from_the_option_definitions():
    from keras_transformer import options

    generator = _module("generate_option_table")
    block = generator.table()
    text = _read(os.path.join("docs", "decoding.md"))
    assert generator.rewrite(text, block) == text, (
        "docs/decoding.md's option table is stale: run python docs/generate_option_table.py"
    )
    for option in options.OPTIONS:
        assert f"| `{option.name}` | `{option.default}` |" in block


@pytest.mark.backend_independent
def test_the_multi30k_recipe_leaves_the_backend_to_the_user():
    config = TrainConfig.from_file(os.path.join(REPO_ROOT, "benchmarks", "multi30k.yaml"))
    assert config.backend is None, "benchmarks/multi30k.yaml must not override KERAS_BACKEND"


# --- The API reference ------------------------------------------------------


def test_api_reference_builds_without_warnings(tmp_path, monkeypatch):
    """pdoc renders every public module of the package (docs/api.md); any
    warning (a module that fails to import, an unparsable annotation or
    docstring) fails the build. Once per suite, under TensorFlow (the
    export modules import it)."""
    if keras.config.backend() != "tensorflow":
        pytest.skip("the API reference is built once per suite, under tensorflow")
    pdoc = pytest.importorskip("pdoc", reason="pdoc is the `docs` extra")
    monkeypatch.setenv("PDOC_ALLOW_EXEC", "1")
    api = _module("build_api_reference")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        api.build(str(tmp_path))
    from_pdoc = [
        f"{w.category.__name__}: {w.message}"
        for w in caught
        if os.path.dirname(pdoc.__file__) in w.filename or "keras_transformer" in str(w.message)
    ]
    assert not from_pdoc, "\n".join(from_pdoc)
    for module in api.MODULES:
        assert (tmp_path / (module.replace(".", "/") + ".html")).stat().st_size > 1000, module
    assert "TransformerSeq2SeqLM" in (tmp_path / "keras_transformer.html").read_text()
