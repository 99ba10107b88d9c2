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

Plain file checks and one import of `keras_transformer.TrainConfig`: they
run in well under a second under every backend.
"""

import dataclasses
import fnmatch
import glob
import importlib.util
import os
import re

from conftest import REPO_ROOT

from keras_transformer import TrainConfig

RESULTS = os.path.join(REPO_ROOT, "benchmarks", "results")
DOCUMENTS = (
    ["README.md", "CHANGELOG.md", os.path.join("benchmarks", "README.md")]
    + sorted(os.path.relpath(p, REPO_ROOT) for p in glob.glob(os.path.join(REPO_ROOT, "docs", "*.md")))
)
RESULT_PREFIXES = (
    "cpu_parallelism_", "ctranslate2_decode_", "data_scale_", "decode_", "default_task_",
    "multi30k_", "wmt14_",
    "padding_", "test_suite_time_", "token_check_cost_", "train_step_profile_",
    "train_throughput_",
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


def test_every_cited_result_file_exists():
    files = os.listdir(RESULTS)
    missing = [
        f"{name} (cited in {document})"
        for name, document in sorted(_all_citations(backends=False).items())
        if not fnmatch.filter(files, name)
        and not name.startswith(("ctranslate2_decode_", "multi30k_gpu_"))  # no results yet
    ]
    assert not missing, "cited but not in benchmarks/results/: " + ", ".join(missing)


def test_every_result_file_is_cited():
    patterns = list(_all_citations())
    uncited = [
        name for name in sorted(os.listdir(RESULTS))
        if not any(fnmatch.fnmatch(name, pattern) for pattern in patterns)
    ]
    assert not uncited, "in benchmarks/results/ but cited nowhere: " + ", ".join(uncited)


def test_result_files_are_not_named_after_rounds_of_work():
    bad = [n for n in os.listdir(RESULTS) if re.search(r"session|_s\d+[._]|round|before|after", n)]
    assert not bad, bad


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


def test_no_document_tells_the_history_of_its_own_work():
    pattern = re.compile(r"session|\bround\b(?! trip)|this machine|earlier run|previous run|\blent\b", re.I)
    found = [
        f"{document}:{number}: {line.strip()}"
        for document in DOCUMENTS
        for number, line in enumerate(_read(document).splitlines(), 1)
        if pattern.search(line)
    ]
    assert not found, "\n".join(found)
