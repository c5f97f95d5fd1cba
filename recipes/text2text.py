#!/usr/bin/env python3
"""Does {{MODEL_ID}} run, unmodified, on {{BACKEND_DESCRIPTION}}?

Rendered by canrun {{CANRUN_VERSION}}. Self-contained: run it with `python3 run.py`.
It loads the encoder-decoder checkpoint (Marian, T5, BART, M2M100, NLLB and the like) and its
tokenizer with from_pretrained (never trust_remote_code), compiles the encoder and the decoder
step with torch.compile(backend=COMPILE_BACKEND), and generates NEW_TOKENS greedy tokens from
PROMPT with a static cache, with the inputs the model's family asks for (a T5 task prefix, the
source and target languages of a many-to-many translator; `source` in the result says which).
It prints one line `CANRUN_RESULT {json}` with the tokens, the timings, the peak memory and the
versions of the stack. On failure the line says in which stage (load, compile, generate) and
why, and the exit status is 1.
"""
{{INCLUDE _settings}}
TASK = {{TASK}}
# Many-to-many translators (M2M100, NLLB, mBART-50) translate English to French: the source
# language as their tokenizer names it, and the target's token, which generation starts with.
LANGUAGES = [("en", "__fr__"), ("eng_Latn", "fra_Latn"), ("en_XX", "fr_XX")]
# A T5 checkpoint's prefix for TASK when its config names none (task_specific_params); a
# text2text-generation prompt is an instruction already.
T5_PREFIXES = {"translation": "translate English to French: ", "text2text-generation": ""}


def main():
    """Loads the model and its tokenizer, then generates; returns the result."""
    started = time.perf_counter()
    torch = import_torch()
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(MODEL, revision=REVISION)
    model = load(torch, AutoModelForSeq2SeqLM)
    timings = {"load_s": time.perf_counter() - started}
    text, settings, added = family_inputs(model.config, tokenizer)
    inputs = tokenizer(text, return_tensors="pt").to(DEVICE)
    result = generate(torch, model, inputs, tokenizer, timings, **settings)
    # What the model was given: the text encoded and, in brackets, what its family added.
    return {**result, "source": f"{text} ({added})" if added else text} if result["ok"] else result


def family_inputs(config, tokenizer):
    """What the model's family needs beside PROMPT: (the text to encode, generate()'s extra
    settings, what was added and where it came from, or "")."""
    if hasattr(tokenizer, "src_lang"):
        for source, target in LANGUAGES:
            # A language token may be no entry of get_vocab() (M2M100's come after it).
            target_id = tokenizer.convert_tokens_to_ids(target)
            if target_id is not None and target_id != tokenizer.unk_token_id:
                tokenizer.src_lang = source
                return PROMPT, {"forced_bos_token_id": target_id}, (
                    f"source language {source}; target {target}, its token forced first")
    if config.model_type in ("t5", "mt5", "umt5", "longt5"):
        # The config's own translation prefix (English to French first), if it names one.
        params = getattr(config, "task_specific_params", None) or {}
        named = [params[k]["prefix"] for k in sorted(params, key=lambda k: (k != "translation_en_to_fr", k))
                 if TASK == "translation" and k.startswith("translation") and params[k].get("prefix")]
        prefix = named[0] if named else T5_PREFIXES.get(TASK, "")
        where = "from the config's task_specific_params" if named else "canrun's default for T5"
        return prefix + PROMPT, {}, f"a T5 task prefix, {where}" if prefix else ""
    return PROMPT, {}, ""


{{INCLUDE _helpers}}


{{INCLUDE _one_core}}
