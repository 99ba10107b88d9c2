"""Tests for the keras-transformer command (keras_transformer.cli)."""

import io
import json
import os
import subprocess
import sys

import keras
import pytest

from keras_transformer.cli.main import build_parser
from keras_transformer.training.config import TrainConfig
from keras_transformer.cli import commands
from keras_transformer.cli.main import main

COMMANDS = (
    "train", "preprocess", "translate", "evaluate", "average-checkpoints", "export",
    "info", "score",
)

# A few-second default-task run (see test_training_loop.TINY).
TINY_SETS = [
    "model_overrides.num_layers=1",
    "model_overrides.d_model=32",
    "model_overrides.num_heads=2",
    "model_overrides.d_ff=64",
    "warmup_steps=10",
    "verbose=0",
]


@pytest.mark.parametrize("command", COMMANDS)
def test_help_of_each_subcommand(command, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert f"keras-transformer {command}" in out and "--backend" in out
    if command == "train":
        for flag in ("--config", "--set", "--train-src", "--output-dir", "--time-budget",
                     "--overwrite", "--debug"):  # fmt: skip
            assert flag in out


def test_unknown_keys_are_rejected_by_name(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["train", "--output-dir", str(tmp_path), "--set", "epochz=3"])
    assert exit_info.value.code == 2
    assert "epochz" in capsys.readouterr().err
    config = tmp_path / "run.yaml"
    config.write_text("epochs: 2\nbatch_sise: 8\n")
    with pytest.raises(SystemExit):
        main(["train", "--config", str(config)])
    err = capsys.readouterr().err
    assert "batch_sise" in err and "Valid keys" in err
    with pytest.raises(SystemExit):
        main(["train", "--set", "epochs=many"])
    assert "'epochs' must be int" in capsys.readouterr().err
    # Nothing was trained or written: only the config file of this test is here.
    assert os.listdir(tmp_path) == ["run.yaml"]


def test_flags_file_and_set_combine_in_order(tmp_path):
    from keras_transformer.cli.main import _train_config

    config = tmp_path / "run.json"
    config.write_text('{"epochs": 2, "seed": 5, "preset": "tiny"}')
    args = build_parser().parse_args(
        ["train", "--config", str(config), "--epochs", "3", "--set", "epochs=4",
         "--train-src", "a.en", "--train-tgt", "a.de", "--lr-scale", "0.5"]
    )  # fmt: skip
    resolved = _train_config(args)
    assert resolved.epochs == 4 and resolved.seed == 5
    assert (resolved.train_src, resolved.learning_rate_scale) == ("a.en", 0.5)


@pytest.fixture(scope="module")
def trained_run(tmp_path_factory):
    """`keras-transformer train` on the default task, a few steps."""
    keras.utils.set_random_seed(0)
    run = tmp_path_factory.mktemp("cli") / "run"
    code = main(
        ["train", "--output-dir", str(run), "--vocabulary-size", "128",
         "--max-length", "8", "--tokens-per-batch", "256", "--epochs", "2",
         "--steps-per-epoch", "3", "--eval-sentences", "4", "--beam-size", "1",
         "--backend", keras.config.backend()]
        + [arg for value in TINY_SETS for arg in ("--set", value)]
    )  # fmt: skip
    assert code == 0
    return run


def test_train_then_translate_from_the_run_directory(
    trained_run, tmp_path, capsys, monkeypatch
):
    for name in ("model.weights.h5", "vocab.spm", "train_config.json"):
        assert (trained_run / name).is_file(), name
    # The final model's weights once, in the preset's file: no model.keras.
    weights = [p.name for p in trained_run.iterdir() if p.suffix in (".h5", ".keras")]
    assert weights == ["model.weights.h5"]
    source = tmp_path / "input.en"
    source.write_text("twenty-one\n\nthree hundred forty-five\n")
    output = tmp_path / "output.de"
    code = main(
        ["translate", "--model-dir", str(trained_run), "--input", str(source),
         "--output", str(output), "--beam-size", "2", "--max-extra-length", "8"]
    )  # fmt: skip
    assert code == 0
    lines = output.read_text(encoding="utf-8").split("\n")
    assert len(lines) == 4 and lines[3] == ""  # Three lines, newline-terminated.
    assert lines[1] == ""  # Empty input lines stay empty (alignment).

    # stdin -> stdout, one line per input line and nothing else on stdout.
    capsys.readouterr()
    monkeypatch.setattr(sys, "stdin", io.StringIO("twenty-one\nseven\n"))
    assert main(["translate", "--model-dir", str(trained_run), "--beam-size", "1"]) == 0
    plain = capsys.readouterr().out
    assert len(plain.split("\n")) == 3
    # The repetition controls and min_length: flags generated from the
    # option definitions, the same translations as the Translator's.
    from keras_transformer.models.transformer.translator import Translator

    flags = {"min_length": 12, "no_repeat_ngram_size": 1, "repetition_penalty": 1.5}
    monkeypatch.setattr(sys, "stdin", io.StringIO("twenty-one\nseven\n"))
    argv = ["translate", "--model-dir", str(trained_run), "--beam-size", "1"]
    for name, value in flags.items():
        argv += ["--" + name.replace("_", "-"), str(value)]
    assert main(argv) == 0
    controlled = capsys.readouterr().out
    expected = Translator.from_directory(str(trained_run)).translate(
        ["twenty-one", "seven"], beam_size=1, **flags
    )
    assert controlled.split("\n")[:2] == expected and controlled != plain


def test_translate_n_best_alignment_and_score_lines(trained_run, tmp_path, capsys):
    from keras_transformer.models.transformer.translator import Translator

    sentences = ["twenty-one", "", "three hundred forty-five"]
    source = tmp_path / "input.en"
    source.write_text("\n".join(sentences) + "\n")
    base = ["translate", "--model-dir", str(trained_run), "--input", str(source),
            "--beam-size", "3", "--max-extra-length", "8"]  # fmt: skip
    capsys.readouterr()
    assert main(base + ["--n-best", "2", "--print-alignment"]) == 0
    lines = capsys.readouterr().out.splitlines()
    translator = Translator.from_directory(str(trained_run))
    kept = [sentences[0], sentences[2]]
    texts, scores, aligned = translator.translate(
        kept, beam_size=3, num_return=2, max_extra_length=8,
        return_scores=True, return_alignments=True,
    )
    expected = []
    for i, row in zip((0, 2), range(2)):
        for j in range(2):
            expected.append(f"H-{i}\t{scores[row][j]:.6f}\t{texts[row][j]}")
            pairs = [f"{s}-{t}" for t, s in enumerate(aligned[row][j][:-1])]
            expected.append(f"A-{i}\t" + " ".join(pairs))
    assert lines == expected  # the empty line 1 gets no hypothesis

    assert main(base + ["--n-best", "2", "--format", "jsonl"]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["id"] for r in records] == [0, 1, 2] and records[1]["hypotheses"] == []
    assert [h["text"] for h in records[2]["hypotheses"]] == texts[1]

    targets = tmp_path / "targets.de"
    targets.write_text(f"{texts[0][0]}\n\n{texts[1][0]}\n")
    assert main(["score", "--model-dir", str(trained_run), "--src", str(source),
                 "--tgt", str(targets), "--token-scores"]) == 0  # fmt: skip
    rows = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    assert len(rows) == 3
    totals, tokens = translator.score(
        sentences, [texts[0][0], "", texts[1][0]], return_token_scores=True
    )
    for row, total, token_scores in zip(rows, totals, tokens):
        assert float(row[0]) == pytest.approx(total, abs=1e-5)
        assert len(row[1].split()) == len(token_scores)


def test_translate_sampling_and_target_prefix(trained_run, tmp_path, capsys):
    source = tmp_path / "input.en"
    source.write_text("twenty-one\nseven\n")
    prefixes = tmp_path / "prefix.de"
    prefixes.write_text("sieben\n\n")
    base = ["translate", "--model-dir", str(trained_run), "--input", str(source),
            "--max-extra-length", "6"]  # fmt: skip
    sampled = base + ["--sampling", "--n-best", "3", "--seed", "4", "--top-p", "0.9"]
    capsys.readouterr()
    assert main(sampled) == 0
    first = capsys.readouterr().out
    assert main(sampled) == 0
    assert capsys.readouterr().out == first  # the seed reproduces the samples
    assert [line.split("\t")[0] for line in first.splitlines()] == ["H-0"] * 3 + ["H-1"] * 3
    assert main(base + ["--beam-size", "2", "--target-prefix", str(prefixes)]) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith("sieben")
    prefixes.write_text("sieben\n")
    with pytest.raises(SystemExit):
        main(base + ["--target-prefix", str(prefixes)])
    assert "one prefix per input line" in capsys.readouterr().err


def test_translate_constraints_in_fairseqs_tab_separated_form(trained_run, tmp_path, capsys):
    source = tmp_path / "input.en"
    source.write_text("twenty-one\tsieben\tacht\n\nseven\n")
    base = ["translate", "--model-dir", str(trained_run), "--input", str(source),
            "--max-extra-length", "6", "--constraints"]  # fmt: skip
    capsys.readouterr()
    assert main(base + ["--beam-size", "2", "--n-best", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split("\t")[0] for line in lines] == ["H-0"] * 2 + ["H-2"] * 2
    for line in lines[:2]:
        if line.split("\t")[1] != "-inf":
            assert "sieben" in line.split("\t")[2] and "acht" in line.split("\t")[2]
    source.write_text("seven\t\tsieben\n")
    with pytest.raises(SystemExit):
        main(base)
    assert "empty phrase" in capsys.readouterr().err


@pytest.mark.parametrize(
    "flags, message, code",
    [
        # Rules between options: `DecodeOptions`, exit status 1.
        (["--n-best", "5", "--beam-size", "2"], "num_return", 1),
        (["--top-k", "5"], "sampling=True", 1),
        (["--sampling", "--beam-size", "4"], "beam_size", 1),
        # A value out of its option's range: a usage error (status 2) at
        # parsing, naming the flag and the option.
        (["--sampling", "--top-p", "1.5"], "top_p", 2),
        (["--sampling", "--temperature", "0"], "temperature", 2),
        (["--sampling", "--top-k", "0"], "top_k", 2),
        (["--repetition-penalty", "0"], "repetition_penalty", 2),
        (["--no-repeat-ngram-size", "-1"], "no_repeat_ngram_size", 2),
    ],
)
def test_bad_search_flags_fail_before_loading_the_model(
    tmp_path, capsys, flags, message, code
):
    # tmp_path holds no model: the options are refused before loading one.
    with pytest.raises(SystemExit) as exit_info:
        main(["translate", "--model-dir", str(tmp_path), "--input", "-"] + flags)
    assert exit_info.value.code == code
    err = capsys.readouterr().err
    assert message in err and "model.keras" not in err


def test_evaluate_and_average_from_the_run_directory(trained_run, tmp_path, capsys):
    code = main(
        ["evaluate", "--model-dir", str(trained_run), "--max-sentences", "4",
         "--beam-size", "1", "--max-extra-length", "8"]
    )  # fmt: skip
    assert code == 0
    out = capsys.readouterr().out
    assert "Exact match on the default task test" in out
    assert "cased detokenized sacreBLEU" in out and "case:mixed" in out
    assert "lowercased tokenized BLEU" in out and "case:lc" in out

    averaged = tmp_path / "averaged"
    code = main(
        ["average-checkpoints", str(trained_run / "checkpoints"), "--last-n", "2",
         "--output", str(averaged)]
    )  # fmt: skip
    assert code == 0
    assert "epoch_002.weights.h5" in capsys.readouterr().out
    assert (averaged / "model.weights.h5").is_file() and (averaged / "vocab.spm").is_file()
    assert not (averaged / "model.keras").exists()


def test_export_passes_the_options_and_the_runs_decoding_settings(
    tmp_path, monkeypatch, capsys
):
    calls = []

    def fake_export(*args, **kwargs):
        calls.append((args, kwargs))
        return str(tmp_path / "exported" / "2")

    monkeypatch.setattr(commands, "export_saved_model", fake_export)
    TrainConfig(beam_size=6).resolved().save(tmp_path / "config.json")
    code = main(
        ["export", "--model-dir", str(tmp_path), "--export-dir",
         str(tmp_path / "exported"), "--version", "2", "--alpha", "1.0"]
    )  # fmt: skip
    assert code == 0
    [(args, kwargs)] = calls
    assert args == (str(tmp_path), str(tmp_path / "exported"))
    # The run's decoding defaults (every option a run keeps), then the flags.
    assert kwargs == dict(
        version=2, max_source_length=256, warmup=True,
        beam_size=6, alpha=1.0, max_extra_length=50, min_length=0,
        no_repeat_ngram_size=0, repetition_penalty=1.0,
    )  # fmt: skip
    TrainConfig(beam_size=6, min_length=2, repetition_penalty=1.3).resolved().save(
        tmp_path / "config.json"
    )
    assert main(
        ["export", "--model-dir", str(tmp_path), "--export-dir", str(tmp_path / "exported"),
         "--no-repeat-ngram-size", "3"]
    ) == 0  # fmt: skip
    assert calls[-1][1]["min_length"] == 2 and calls[-1][1]["repetition_penalty"] == 1.3
    assert calls[-1][1]["no_repeat_ngram_size"] == 3
    assert "exported/2" in capsys.readouterr().out
    # --temperature/--top-k/--top-p: the translate_sample signature's filters.
    assert main(
        ["export", "--model-dir", str(tmp_path), "--export-dir", str(tmp_path / "exported"),
         "--top-p", "0.9", "--temperature", "0.7"]
    ) == 0  # fmt: skip
    assert calls[-1][1]["sampling"] == {"temperature": 0.7, "top_p": 0.9}
    for flags, message in ((["--top-p", "1.5"], "top_p"), (["--seed", "3"], "unrecognized")):
        with pytest.raises(SystemExit):
            main(["export", "--model-dir", str(tmp_path), "--export-dir", str(tmp_path / "e")] + flags)
        assert message in capsys.readouterr().err


def test_export_ctranslate2_and_n_best_flags(tmp_path, monkeypatch, capsys):
    calls = []
    monkeypatch.setattr(
        commands, "export_run_directory_to_ctranslate2",
        lambda *args, **kwargs: calls.append(("ct2", args, kwargs)),
    )
    monkeypatch.setattr(
        commands, "export_saved_model",
        lambda *args, **kwargs: calls.append(("saved_model", args, kwargs)) or "x/1",
    )
    base = ["export", "--model-dir", str(tmp_path), "--export-dir", str(tmp_path / "e")]
    assert main(base + ["--format", "ctranslate2", "--quantize", "int8"]) == 0
    assert calls.pop() == (
        "ct2", (str(tmp_path), os.path.join(str(tmp_path / "e"), "1")),
        {"quantization": "int8"},
    )
    assert main(base + ["--n-best", "3", "--beam-size", "4", "--quantize", "int8"]) == 0
    _, _, kwargs = calls.pop()
    assert kwargs["n_best"] == 3 and kwargs["quantize"] == "int8"
    # n-best above the beam size is refused before any export.
    with pytest.raises(SystemExit):
        main(base + ["--n-best", "5", "--beam-size", "4"])
    assert "num_return" in capsys.readouterr().err and not calls
    # --parallel-searches reaches the SavedModel export, and only it.
    assert main(base + ["--parallel-searches", "1"]) == 0
    assert calls.pop()[2]["parallel_searches"] == 1
    assert main(base) == 0 and "parallel_searches" not in calls.pop()[2]
    with pytest.raises(SystemExit):
        main(base + ["--format", "ctranslate2", "--parallel-searches", "2"])
    assert "--parallel-searches applies to --format saved_model" in capsys.readouterr().err
    assert not calls


def test_backend_flag_switches_backend_in_a_new_process():
    """`python -m keras_transformer --backend X` runs on X whatever KERAS_BACKEND says."""
    if keras.config.backend() != "torch":
        # The child process is the same whatever this one's backend: the
        # check runs once per suite, with the shortest backend's tests.
        pytest.skip("run once per suite, under the torch backend")
    current = keras.config.backend()
    other = "jax" if current != "jax" else "tensorflow"
    env = dict(os.environ, KERAS_BACKEND=current, TF_CPP_MIN_LOG_LEVEL="3")
    done = subprocess.run(
        [sys.executable, "-m", "keras_transformer", "--backend", other, "info"],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"backend: {other}" in done.stdout
    assert "presets:" in done.stdout and "tiny:" in done.stdout
