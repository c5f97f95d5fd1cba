"""The judge's labelled set: judge/build_labelled.py rebuilds the committed judge/labelled.jsonl
byte for byte, and the set holds what issue 17 asks of it."""
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LABELLED = ROOT / "judge" / "labelled.jsonl"
KEYS = {"prompt", "text", "fluent", "class", "source", "split"}

REQUIRED_CLASSES = [
    # fluent answers of many shapes
    "fluent_short", "fluent_list", "fluent_markdown", "fluent_qa", "fluent_code_prose",
    "fluent_pattern_lines", "fluent_numbers", "fluent_cut", "fluent_newlines",
    "fluent_model_output",
    # the ways generation goes wrong
    "random_tokens", "one_token_loop", "phrase_loop", "doubled_words", "word_salad",
    "shuffled_sentences", "fluent_then_whitespace", "punctuation_run", "whitespace_only",
    "digit_salad", "mixed_script_symbols", "subword_fragments", "fluent_then_degeneration",
    "empty_output", "random_weights_output", "broken_sharded_output",
]

# Issue 17's texts (prompt "The capital of France is"): the judge must call them not fluent,
# and they test how it generalises, so they stay out of the set it is calibrated on.
ISSUE_TEXTS = [
    " Paris. It is the largest city in France and the ,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,",
    " \n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n",
    " 1 2 2 3 7 9 0 0 0 1 4 4 4 5 6 6 6 7 8 8 9 9 9",
    " Paris \u7684 \u57ce\u5e02 \u00f1 \u00df \u00f8 \u014b \u0137 \u0167 \u0259 \u0250 \u0281 "
    "\u0283 \u0272 \u0292 \u028e \u014b \u025b \u0254",
    " Paris. It is the capital of France. It is the capital of France. It is the capital of "
    "France. It is the capital of",
]


@pytest.fixture(scope="module")
def rows():
    return [json.loads(line) for line in LABELLED.read_text(encoding="utf-8").splitlines()]


def test_build_reproduces_the_committed_file(tmp_path):
    out = tmp_path / "labelled.jsonl"
    subprocess.run([sys.executable, str(ROOT / "judge" / "build_labelled.py"), "--out", str(out)],
                   check=True, timeout=60)
    assert out.read_bytes() == LABELLED.read_bytes(), \
        "judge/labelled.jsonl differs from what judge/build_labelled.py builds: rebuild it"


def test_a_fresh_seed_draws_new_texts_of_the_same_classes(tmp_path, rows):
    out = tmp_path / "fresh.jsonl"
    subprocess.run([sys.executable, str(ROOT / "judge" / "build_labelled.py"), "--fresh-seed", "29",
                    "--out", str(out)], check=True, timeout=60)
    fresh = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    known = {row["text"] for row in rows}
    assert len(fresh) >= 100 and all(row["split"] == "fresh" for row in fresh)
    assert not [row for row in fresh if row["text"] in known]
    assert {row["class"] for row in fresh} <= {row["class"] for row in rows}
    assert len({row["class"] for row in fresh}) >= 10


def test_size_and_keys(rows):
    assert len(rows) >= 300
    for row in rows:
        assert set(row) == KEYS, row
        assert isinstance(row["prompt"], str) and isinstance(row["text"], str)
        assert isinstance(row["fluent"], bool)
        assert row["split"] in ("calibrate", "held_out")
        assert row["class"] and row["class"].replace("_", "").isalnum() \
            and row["class"] == row["class"].lower()
        assert row["source"]


def test_every_required_class_in_both_splits(rows):
    per_class = Counter(row["class"] for row in rows)
    per_split = Counter((row["class"], row["split"]) for row in rows)
    for klass in REQUIRED_CLASSES:
        assert per_class[klass] >= 8, f"{klass}: {per_class[klass]} texts"
        assert per_split[klass, "calibrate"] and per_split[klass, "held_out"], klass


def test_each_class_has_one_label(rows):
    labels = {}
    for row in rows:
        labels.setdefault(row["class"], set()).add(row["fluent"])
    assert all(len(found) == 1 for found in labels.values()), labels


def test_held_out_share_per_class(rows):
    for klass in {row["class"] for row in rows}:
        members = [row for row in rows if row["class"] == klass]
        held = sum(row["split"] == "held_out" for row in members)
        assert abs(held - 0.3 * len(members)) <= 1, (klass, held, len(members))


def test_default_prompt_has_both_labels(rows):
    # canrun asks "The capital of France is" by default: its answers, fluent or not, are many.
    default = Counter(row["fluent"] for row in rows if row["prompt"] == "The capital of France is")
    assert default[True] >= 50 and default[False] >= 50, default
    assert len({row["prompt"] for row in rows}) >= 100


def test_no_duplicate_texts(rows):
    # The empty text recurs, once per prompt; every other text appears once.
    keys = Counter((row["prompt"], row["text"]) for row in rows)
    assert [key for key, count in keys.items() if count > 1] == []
    texts = Counter(row["text"] for row in rows if row["text"])
    assert [text for text, count in texts.items() if count > 1] == []


def test_issue_texts_kept_out(rows):
    assert len(ISSUE_TEXTS[1]) == 17  # a space and sixteen newlines
    texts = {row["text"] for row in rows}
    for text in ISSUE_TEXTS:
        assert text not in texts, text
