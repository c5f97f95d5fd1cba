"""The judge of sharded runs, as a user meets it: `canrun judge calibrate` fits it on the labelled
set and says how it does on texts it was not fitted on; `canrun judge score` judges texts. canrun
ships the calibration of its labelled set on the project's stack (judge/calibrations/), which a
fresh cache uses instead of calibrating; a calibration computed here on a small labelled set is
held to the one kept for it (tests/judge/calibrations/)."""
import json
import os
import re
import subprocess

from pathlib import Path

import pytest

SOURCE = Path(os.environ.get("CANRUN_SOURCE_DIR", Path(__file__).resolve().parents[2]))
FIXTURES = SOURCE / ".cache" / "fixtures"
PROMPT = "The capital of France is"

# Outputs a broken sharded model really produced, which the judge of before called fluent
# (issue 17); none of them is in the labelled set.
BROKEN = [
    " Paris. It is the largest city in France and the ,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,",
    " \n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n",
    " 1 2 2 3 7 9 0 0 0 1 4 4 4 5 6 6 6 7 8 8 9 9 9",
    " Paris \u7684 \u57ce\u5e02 \u00f1 \u00df \u00f8 \u014b \u0137 \u0167 \u0259 \u0250 \u0281 \u0283"
    " \u0272 \u0292 \u028e \u014b \u025b \u0254",
    " Paris. It is the capital of France. It is the capital of France. It is the capital of"
    " France. It is the capital of",
]


@pytest.fixture(scope="module")
def canrun(canrun_bin, tmp_path_factory):
    cache = tmp_path_factory.mktemp("canrun-cache")

    def run(*args, env=None):
        full = dict(os.environ, HF_HOME=str(FIXTURES), NO_COLOR="1", CANRUN_CACHE=str(cache))
        full.pop("HF_HUB_CACHE", None)
        full.update(env or {})
        return subprocess.run([str(canrun_bin), *map(str, args)], capture_output=True, text=True,
                              env=full, timeout=3600)

    return run


@pytest.fixture(scope="module")
def calibration(canrun):
    result = canrun("judge", "calibrate", "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def labelled():
    with open(SOURCE / "judge" / "labelled.jsonl", encoding="utf-8") as file:
        return [json.loads(line) for line in file if line.strip()]


def test_held_out_figures(calibration):
    texts = labelled()
    held_out = [t for t in texts if t["split"] == "held_out"]
    figures = calibration["held_out"]
    assert figures["texts"] == len(held_out) and len(texts) >= 300
    assert figures["fluent"] == sum(t["fluent"] for t in held_out)
    assert calibration["calibrate"]["texts"] + figures["texts"] == len(texts)
    # Issue 17's target: no non-fluent held-out text passes, at most 2 % of the fluent ones fail.
    assert figures["false_pass"] == 0, calibration["classes"]
    assert figures["false_fail"] <= 0.02 * figures["fluent"], calibration["classes"]


def test_folds_judge_every_text_once_per_class(calibration):
    texts = labelled()
    assert calibration["k"] == 5 and calibration["folds"]["texts"] == len(texts)
    by_class = {c["class"]: c for c in calibration["classes"]}
    assert set(by_class) == {t["class"] for t in texts}
    for name, figures in by_class.items():
        members = [t for t in texts if t["class"] == name]
        assert figures["folds"]["texts"] == len(members)
        assert figures["fluent"] == members[0]["fluent"]
    folds = calibration["folds"]
    assert sum(c["folds"]["false_pass"] for c in by_class.values()) == folds["false_pass"]
    # Folds fit on four fifths of the set: a few mistakes, far from chance.
    assert folds["correct"] >= 0.98 * folds["texts"], by_class


def test_calibrate_prints_held_out_folds_and_classes(canrun, calibration):
    result = canrun("judge", "calibrate")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    held = next(line for line in lines if line.startswith("held out"))
    assert held.split()[2:6] == [str(calibration["held_out"][k]) for k in
                                 ("texts", "fluent", "false_pass", "false_fail")]
    assert any(line.startswith("5-fold") for line in lines)
    for figures in calibration["classes"]:
        assert any(line.startswith(figures["class"] + " ") for line in lines), figures["class"]
    assert f"threshold  {calibration['threshold']:.3f}" in result.stdout


def test_the_five_broken_outputs_are_not_fluent(canrun, calibration):
    assert not set(BROKEN) & {t["text"] for t in labelled()}
    result = canrun("judge", "score", "--json", "--prompt", PROMPT, *BROKEN)
    assert result.returncode == 1, result.stderr  # one text or more is not fluent
    answer = json.loads(result.stdout)
    assert answer["threshold"] == pytest.approx(calibration["threshold"])
    assert [t["fluent"] for t in answer["texts"]] == [False] * 5, answer["texts"]
    for text in answer["texts"]:
        assert text["score"] < answer["threshold"]
        parts = text["parts"]
        # The score is its parts: the bias and what each feature adds.
        assert text["score"] == pytest.approx(
            parts["bias"] + sum(p["adds"] for k, p in parts.items() if k != "bias"))


def shipped_calibration(calibration):
    shipped = SOURCE / "judge" / "calibrations" / Path(calibration["file"]).name
    assert shipped.is_file(), f"canrun ships no calibration for this judge and stack ({shipped.name})"
    return json.loads(shipped.read_text(encoding="utf-8"))["calibration"]


def test_a_fresh_cache_judges_by_the_shipped_calibration_without_calibrating(canrun, calibration,
                                                                             tmp_path):
    fluent = [
        " Paris, which is also the largest city of the country.",
        " Paris. Located on the Seine, it has been the centre of French political life since the"
        " Middle Ages.",
        " Paris.\n\nParis is known for the Eiffel Tower, the Louvre and its many caf\u00e9s.",
    ]
    fresh = tmp_path / "judge-cache"
    result = canrun("judge", "score", "--json", "--prompt", PROMPT, *fluent,
                    env={"CANRUN_JUDGE_CACHE": str(fresh)})
    assert result.returncode == 0, result.stdout + result.stderr
    assert all(t["fluent"] for t in json.loads(result.stdout)["texts"])
    assert json.loads(result.stdout)["threshold"] == shipped_calibration(calibration)["threshold"]
    assert "calibrat" not in result.stderr  # no calibration, no message
    assert not fresh.exists() or not any(fresh.iterdir())


def test_a_calibration_shows_its_progress_and_is_kept(canrun, tmp_path):
    # A labelled set of its own (every 30th text: 24, two batches) has no shipped calibration.
    small = tmp_path / "labelled.jsonl"
    small.write_text("".join(json.dumps(t) + "\n" for t in labelled()[::30]), encoding="utf-8")
    env = {"CANRUN_JUDGE_CACHE": str(tmp_path / "judge-cache"), "CANRUN_JUDGE_LABELLED": str(small)}
    first = canrun("judge", "calibrate", "--json", env=env)
    assert first.returncode == 0, first.stderr
    computed = json.loads(first.stdout)
    assert computed["source"] == "computed" and computed["folds"]["texts"] == 24
    # What calibrating computes here is what it computed where the kept one was made (the code
    # that computed the shipped calibration of the whole set): the same figures, the threshold
    # to well within what could change a verdict (another CPU may round the judge model's sums
    # differently).
    kept = SOURCE / "tests" / "judge" / "calibrations" / Path(computed["file"]).name
    assert kept.is_file(), f"no calibration kept for this set, judge and stack ({kept.name})"
    kept = json.loads(kept.read_text(encoding="utf-8"))["calibration"]
    assert computed["threshold"] == pytest.approx(kept["threshold"], abs=1e-4)
    for part in ("calibrate", "held_out", "folds", "classes"):
        assert computed[part] == kept[part], part
    assert re.search(r"calibrating the judge \S+ \(transformers [\d.]+\) on 24 labelled texts",
                     first.stderr), first.stderr
    # After the first batch of 16: how far, and the time left.
    assert re.search(r"judge calibration: 16/24 texts, about \d+ (s|min) left\n", first.stderr), \
        first.stderr
    assert re.search(r"judge calibration: 24 texts measured in \d+ (s|min)\n", first.stderr)
    again = canrun("judge", "calibrate", "--json", env=env)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["source"] == "cache" and "calibrat" not in again.stderr


def test_the_judge_runs_in_canruns_own_python_not_the_stacks(canrun, calibration):
    # A stack whose Python cannot even start: the judge does not use it.
    result = canrun("judge", "score", "--json", "--prompt", PROMPT, " Paris.",
                    env={"CANRUN_PYTHON": "/nonexistent/python-of-a-stack"})
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["threshold"] == pytest.approx(calibration["threshold"])
