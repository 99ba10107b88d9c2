"""CPU seconds of each test of the suite, its child processes included.

The README's test command runs the three backends' suites at once, in six
pytest processes on two cores, so a test's wall-clock duration measures how
many others ran beside it as much as the test. CPU seconds add up: the
suite's wall time is their sum over the two cores. As a pytest plugin this
module appends, for each test (setup and teardown included, so a module
fixture counts in the first test that uses it), the test process's CPU
seconds (user + system) and those of the child processes it waited for
(the CLI and example subprocesses, the SavedModel export's TensorFlow
process, Inductor's C++ compiler) to ``$SUITE_CPU_DIR/<pid>.jsonl``; run as
a script it reports them::

    SUITE_CPU_DIR=/tmp/suite_cpu CI=true bash tests/run_all_backends.sh -p benchmarks.suite_cpu
    python benchmarks/suite_cpu.py /tmp/suite_cpu > benchmarks/results/test_suite_cpu_<tag>.txt

(``python -m pytest`` puts the repository root on ``sys.path``, so the
plugin loads as ``benchmarks.suite_cpu``.) Collection and imports are not
in any test: the report gives each pytest process's total beside its tests'.
"""

import argparse
import collections
import glob
import json
import os
import resource
import sys

import pytest

BACKENDS = ("tensorflow", "jax", "torch")


def _cpu_seconds():
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime)


def _record(record):
    directory = os.environ.get("SUITE_CPU_DIR")
    if not directory:
        return
    record["pid"] = os.getpid()
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, f"{os.getpid()}.jsonl"), "a", encoding="utf-8") as f:
        f.write(json.dumps(record) + "\n")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    before = _cpu_seconds()
    yield
    after = _cpu_seconds()
    _record({
        "backend": os.environ.get("KERAS_BACKEND"), "test": item.nodeid,
        "own": after[0] - before[0], "children": after[1] - before[1],
    })  # fmt: skip


def pytest_unconfigure(config):
    own, children = _cpu_seconds()
    _record({
        "backend": os.environ.get("KERAS_BACKEND"), "process": " ".join(sys.argv[1:]),
        "own": own, "children": children,
    })  # fmt: skip


def _table(rows, key, limit):
    totals = collections.defaultdict(collections.Counter)
    for row in rows:
        totals[key(row)][row["backend"]] += row["own"] + row["children"]
    ordered = sorted(totals.items(), key=lambda item: -sum(item[1].values()))
    lines = [f"{'all':>7} {'tf':>6} {'jax':>6} {'torch':>6}"]
    for name, by_backend in ordered[:limit]:
        cells = " ".join(f"{by_backend.get(b, 0):6.1f}" for b in BACKENDS)
        lines.append(f"{sum(by_backend.values()):7.1f} {cells}  {name}")
    return lines


def report(directory, limit=60):
    records = []
    for path in sorted(glob.glob(os.path.join(directory, "*.jsonl"))):
        with open(path, encoding="utf-8") as f:
            records += [json.loads(line) for line in f if line.strip()]
    if not records:
        raise SystemExit(f"suite_cpu.py: no records in {directory} (was SUITE_CPU_DIR set?)")
    tests = [r for r in records if "test" in r]
    processes = [r for r in records if "process" in r]
    lines = ["# CPU seconds (user + system, child processes included) by backend"]
    lines.append("## pytest processes: all, in its tests, outside them (collection, imports)")
    for process in sorted(processes, key=lambda r: (r["backend"], r["process"])):
        total = process["own"] + process["children"]
        in_tests = sum(t["own"] + t["children"] for t in tests if t["pid"] == process["pid"])
        lines.append(
            f"{process['backend']:10s} {total:7.1f} {in_tests:7.1f} {total - in_tests:6.1f}"
            f"  {process['process']}"
        )
    per_backend = collections.Counter()
    for t in tests:
        per_backend[t["backend"]] += t["own"] + t["children"]
    lines.append(
        "tests: " + ", ".join(f"{b} {per_backend[b]:.0f}" for b in BACKENDS)
        + f"; all {sum(per_backend.values()):.0f} ({len(tests)} tests)"
    )
    lines.append(f"\n## files, the {limit} costliest")
    lines += _table(tests, lambda r: r["test"].split("::")[0], limit)
    lines.append(f"\n## tests (parameters merged), the {limit} costliest")
    lines += _table(tests, lambda r: r["test"].split("[")[0], limit)
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", help="SUITE_CPU_DIR of a suite run")
    parser.add_argument("--limit", type=int, default=60, help="rows per table")
    args = parser.parse_args(argv)
    if args.limit < 1:
        parser.error(f"--limit must be at least 1, got {args.limit}")
    print(report(args.directory, args.limit))


if __name__ == "__main__":
    main()
