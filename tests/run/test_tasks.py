"""The tasks beyond generation end to end on the CPU (TorchInductor), through canrun test:
text-classification, fill-mask and token-classification (logits against the CPU reference),
text-ranking (a reranker's scores and orders), automatic-speech-recognition (a CTC model's
logits per frame, a Whisper-style model's tokens), translation and text2text-generation (encoder-decoders, tokens) and text-to-image (diffusers:
the image against the CPU reference's). A perturbing backend fails
an encoder and a pipeline with their comparison's mismatch, and the rendered run.py runs alone; a crash and a timeout
still get their verdicts. That every fixture family of each task passes, on both stacks, and
that a text-to-image verdict keeps both images in the dataset, is read from the demo's campaign
(tests/demo/test_demo.py)."""
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from conftest import fault_profile, run_rendered_alone

def perturbing(tmp_path, dims):
    """A backend that negates the compiled graphs' floating outputs of these dimensions."""
    return fault_profile(tmp_path, "perturbing", {"CANRUN_FAULT_GOOD_CALLS": "0",
                                                  "CANRUN_FAULT_DIMS": dims})


# The logits rule itself, each task's row word in its message and its thresholds are unit tests
# (src/trial/verdict_rules_test.cc, src/task/task_test.cc); these are the real path from a
# corrupting backend to that verdict, for 2-D logits (a row per sentence) and 3-D (a row per
# token; fill-mask's are 3-D too, masked tokens picked from them as token-classification's are).
@pytest.mark.parametrize("task,model,dims,row_noun", [
    ("text-classification", "canrun-fixtures/tiny-distilbert-classifier", "2", "sentence"),
    ("token-classification", "canrun-fixtures/tiny-electra-ner", "3", "token"),
    ("image-classification", "canrun-fixtures/tiny-vit-classifier", "2", "image"),
    ("zero-shot-image-classification", "canrun-fixtures/tiny-clip", "2", "image"),
    ("automatic-speech-recognition", "canrun-fixtures/tiny-wav2vec2-ctc", "3", "frame"),
])
def test_a_backend_that_corrupts_the_logits_fails_by_the_comparison(canrun_test, tmp_path, task, model,
                                                                    dims, row_noun):
    code, row, err = canrun_test(model, "--task", task, "--backend", perturbing(tmp_path, dims))
    assert code == 1, err
    assert row["result"] == "FAIL_MISMATCH", row["error"]
    assert row["error"].startswith(f"{row_noun} "), row["error"]
    assert ": the logits pick class " in row["error"] and "the CPU reference's class" in row["error"]
    assert row["error_signature"] == "FAIL_MISMATCH | logits differ from the CPU reference"


# A backend whose kernels compute NaN: every task's comparison fails the run and names what it
# computed, never a PASS, never a CRASH (sentence-similarity's case: test_sentence_similarity.py).
@pytest.mark.parametrize("task,model,dims,words", [
    ("text-generation", "canrun-fixtures/tiny-gpt2", "3", "token 1 "),
    ("image-text-to-text", "canrun-fixtures/tiny-llava", "3", "token 1 "),
    ("feature-extraction", "canrun-fixtures/tiny-bge-features", "3", "holds NaN or infinite values"),
    ("text-classification", "canrun-fixtures/tiny-distilbert-classifier", "2", "hold NaN or infinite values"),
    ("fill-mask", "canrun-fixtures/tiny-bert-mlm", "3", "hold NaN or infinite values"),
    ("token-classification", "canrun-fixtures/tiny-electra-ner", "3", "hold NaN or infinite values"),
    ("image-classification", "canrun-fixtures/tiny-vit-classifier", "2", "hold NaN or infinite values"),
    ("zero-shot-image-classification", "canrun-fixtures/tiny-clip", "2", "hold NaN or infinite values"),
    ("translation", "canrun-fixtures/tiny-t5-translator", "3", "token 1 "),
    ("text2text-generation", "canrun-fixtures/tiny-bart-text2text", "3", "token 2 "),
    ("text-ranking", "canrun-fixtures/tiny-bert-reranker", "2", "hold NaN or infinite values"),
    # A CTC model's logits; a Whisper-style model fails by its tokens as a translator does (its
    # compile takes four times a CTC model's, and the demo runs it on both stacks).
    ("automatic-speech-recognition", "canrun-fixtures/tiny-wav2vec2-ctc", "3", "hold NaN or infinite values"),
    ("text-to-image", "canrun-fixtures/tiny-sd", "4", "NaN values"),
])
def test_a_backend_that_computes_nan_fails_every_task_by_its_comparison(canrun_test, tmp_path, task, model,
                                                                         dims, words):
    code, row, err = canrun_test(model, "--task", task, "--backend", fault_profile(
        tmp_path, "poisoning", {"CANRUN_FAULT_GOOD_CALLS": "0", "CANRUN_FAULT_DIMS": dims}))
    assert row is not None, err
    assert (code, row["result"]) == (1, "FAIL_MISMATCH"), row["error"]
    assert words in row["error"], row["error"]


# A reranker's scores negated: each query's documents rank backwards. The row shows the queries,
# the documents and both orders.
def test_a_backend_that_corrupts_a_reranker_fails_by_the_order(canrun_test, tmp_path):
    code, row, err = canrun_test("canrun-fixtures/tiny-bert-reranker", "--task", "text-ranking",
                                 "--backend", perturbing(tmp_path, "2"))
    assert row is not None, err
    assert (code, row["result"]) == (1, "FAIL_MISMATCH"), row["error"]
    got, reference = re.fullmatch(r"query 1: the documents rank (.+), the CPU reference's (.+)", row["error"]).groups()
    assert got.split(" > ") == reference.split(" > ")[::-1]
    assert row["error_signature"] == "FAIL_MISMATCH | scores differ from the CPU reference"
    lines = row["output_text"].split("\n")
    assert lines[0] == "source: q1: Where is the Eiffel Tower?" and "d1: The Eiffel Tower stands in Paris" in lines[3]
    ran = next(line for line in lines if line.startswith("this run: "))
    assert ran.startswith(f"this run: q1: {got};")


# Encoder-decoders: the decoder's logits negated, greedy decoding parts from the reference's
# tokens. The row still shows the source and both texts.
@pytest.mark.parametrize("task,model", [
    ("translation", "canrun-fixtures/tiny-t5-translator"),
    ("text2text-generation", "canrun-fixtures/tiny-bart-text2text"),
])
def test_a_backend_that_corrupts_the_decoder_fails_by_the_tokens(canrun_test, tmp_path, task, model):
    code, row, err = canrun_test(model, "--task", task, "--backend", perturbing(tmp_path, "3"))
    assert row is not None, err
    assert (code, row["result"]) == (1, "FAIL_MISMATCH"), row["error"]
    assert re.match(r"token \d+ of 32 differs from the CPU reference\n", row["error"]), row["error"]
    source, ran, reference = row["output_text"].split("\n")[:3]
    assert source.startswith("source: ") and ran.startswith("this run: ")
    assert reference.startswith("CPU reference: ") and reference[15:] != ran[10:]


def test_a_backend_that_corrupts_the_denoiser_fails_by_the_image(canrun_test, tmp_path):
    code, row, err = canrun_test("canrun-fixtures/tiny-sd", "--task", "text-to-image",
                                 "--backend", perturbing(tmp_path, "4"))
    assert code == 1, err
    assert row["result"] == "FAIL_MISMATCH", row["error"]
    assert row["error_signature"] == "FAIL_MISMATCH | image differ from the CPU reference"
    assert row["error"].startswith(("the image differs from the CPU reference's: PSNR ",
                                    "the image is blank")), row["error"]


# The crash's limit is far past the load (a loaded CI machine took over 20 s to import torch and
# load the model, so a 20 s limit turned the crash into a timeout); the sleep's is short, as it
# is never reached otherwise.
@pytest.mark.parametrize("function,result,limit", [("killing", "CRASH", "300"), ("sleeping", "TIMEOUT", "20")])
def test_a_crash_and_a_timeout_of_an_encoder_get_their_verdicts(canrun_test, tmp_path, function, result, limit):
    code, row, err = canrun_test("canrun-fixtures/tiny-distilbert-classifier", "--task", "text-classification",
                                 "--backend", fault_profile(tmp_path, function), "--timeout", limit)
    assert row is not None, err
    assert row["result"] == result, row["error"]


def test_the_printed_verdict_of_an_encoder_gives_its_own_throughput(canrun_test):
    # What a user reads after canrun test (no --json): one pass over the inputs, not "generate",
    # and sentences/s. Eager (the reference backend): the words are checked, not the compiler.
    code, printed, err = canrun_test("canrun-fixtures/tiny-distilbert-classifier", "--task", "text-classification",
                                     "--backend", "reference", printed=True)
    assert code == 0, err
    lines = {line[:10].strip(): line[10:] for line in printed.splitlines()}
    assert lines["result"] == "PASS"
    assert ", run " in lines["time"] and "generate" not in lines["time"], lines["time"]
    assert lines["time"].endswith(" sentences/s"), lines["time"]


@pytest.mark.parametrize("task,model", [("fill-mask", "canrun-fixtures/tiny-bert-mlm"),
                                        ("text-to-image", "canrun-fixtures/tiny-sd")])
def test_the_rendered_run_py_runs_alone(canrun_bin, hf_home, tmp_path, task, model):
    # Eager (the reference backend): what is checked here is the script, not the compiler.
    answer = run_rendered_alone(canrun_bin, hf_home, tmp_path, model, task, "reference")
    assert answer["ok"] and answer["outputs_file"] == "outputs.safetensors"
    from safetensors.numpy import load_file
    arrays = load_file(tmp_path / "outputs.safetensors")
    if task == "fill-mask":  # one row per masked token, over the vocabulary
        assert arrays["logits"].shape[0] == 4 and answer["logits_shape"] == list(arrays["logits"].shape)
        assert answer["throughput_unit"] == "sentences/s"
    else:
        assert arrays["image"].shape == (32, 32, 3) and str(arrays["image"].dtype) == "uint8"
        assert answer["image_file"] == "image.png" and (tmp_path / "image.png").exists()
        assert answer["nan_values"] == 0 and answer["throughput_unit"] == "steps/s"
        assert answer["versions"]["diffusers"]


def test_a_campaign_excludes_pipelines_of_custom_code_or_pickled_weights(canrun_bin, canrun_test, hf_home,
                                                                          tmp_path):
    import pandas as pd

    (tmp_path / "models.txt").write_text("canrun-fixtures/tiny-sd-custom-unet text-to-image\n"
                                         "canrun-fixtures/tiny-sd-pickle text-to-image\n")
    env = dict(os.environ, HF_HOME=str(hf_home), HF_HUB_OFFLINE="1", NO_COLOR="1")
    env.pop("HF_HUB_CACHE", None)
    result = subprocess.run([str(canrun_bin), "campaign", "--tasks", "text-to-image", "--models",
                             tmp_path / "models.txt", "--out", tmp_path / "dataset", "--cache",
                             tmp_path / "cache"], capture_output=True, text=True, env=env, timeout=600)
    assert result.returncode == 0, result.stderr
    rows = pd.read_parquet(tmp_path / "dataset" / "data").set_index("model_id")
    custom = rows.loc["canrun-fixtures/tiny-sd-custom-unet"]
    assert (custom.result, custom.exclusion_reason, custom.library) == ("EXCLUDED", "remote_code", "diffusers")
    assert custom.error.startswith("model_index.json names unet: my_unet.MyUNet2DConditionModel (a "
                                   "component): code from the repo;")
    # canrun test alone never runs it either (diffusers 0.35 would import the repo's module).
    code, row, err = canrun_test("canrun-fixtures/tiny-sd-custom-unet", "--task", "text-to-image")
    assert (code, row["result"], row["exclusion_reason"]) == (1, "EXCLUDED", "remote_code"), err
    pickled = rows.loc["canrun-fixtures/tiny-sd-pickle"]
    assert (pickled.result, pickled.exclusion_reason) == ("EXCLUDED", "no_safetensors")
    assert "the pipeline's unet (UNet2DConditionModel) has no safetensors weights in unet/" in pickled.error
