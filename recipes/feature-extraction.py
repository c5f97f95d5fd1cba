#!/usr/bin/env python3
"""Does {{MODEL_ID}} run, unmodified, on {{BACKEND_DESCRIPTION}}?

Rendered by canrun {{CANRUN_VERSION}}. Self-contained: run it with `python3 run.py`.
It loads the checkpoint with transformers' AutoModel.from_pretrained (never trust_remote_code),
compiles its forward pass with torch.compile(backend=COMPILE_BACKEND), runs SENTENCES in
batches of 8 and one at a time (the last sentence is longer than the model's maximum length,
so truncation is exercised), pools each sentence's hidden states into one vector as the repo
says (the pooling of its sentence-transformers files, 1_Pooling/config.json, normalized when
it has a Normalize module; else the mean over the sentence's tokens) and prints one line
`CANRUN_RESULT {json}` with the vectors, the pooling and where it came from, sentences per
second, the timings, the peak memory and the versions of the stack. On failure the line says
in which stage (load, compile, encode) and why, and the exit status is 1.
"""
{{INCLUDE _settings}}

{{INCLUDE _sentences}}
# sentence-transformers' pooling modes (1_Pooling/config.json's pooling_mode_<mode>), in the
# order it applies them; the first one set is used.
POOLING_MODES = ["cls_token", "mean_tokens", "max_tokens", "mean_sqrt_len_tokens",
                 "weightedmean_tokens", "lasttoken"]


def repo_json(name):
    """A JSON file of the repo, or None when it has none."""
    from transformers.utils import cached_file
    path = cached_file(MODEL, name, revision=REVISION, _raise_exceptions_for_missing_entries=False,
                       _raise_exceptions_for_connection_errors=False)
    if not path:
        return None
    with open(path) as file:
        return json.load(file)


def pooling():
    """(mode, normalize, max_seq_length or None, where they come from): the repo's
    sentence-transformers modules when it has them, else mean pooling."""
    modules = repo_json("modules.json") or []
    kinds = {module.get("type", "").rsplit(".", 1)[-1]: module.get("path", "") for module in modules}
    if "Pooling" not in kinds:
        return "mean_tokens", False, None, "the default: no sentence-transformers pooling in the repo"
    folder = kinds["Pooling"]
    config = repo_json(f"{folder}/config.json" if folder else "config.json") or {}
    mode = next((m for m in POOLING_MODES if config.get(f"pooling_mode_{m}")), "mean_tokens")
    normalize = "Normalize" in kinds
    bert_config = repo_json("sentence_bert_config.json") or {}
    source = f"from {folder}/config.json" + (" and its Normalize module" if normalize else "")
    return mode, normalize, bert_config.get("max_seq_length"), source


def pool(torch, hidden, mask, mode):
    """One vector per sentence from its token states (`mask`: 1 for its tokens)."""
    mask = mask.unsqueeze(-1).to(hidden.dtype)
    if mode == "cls_token":
        return hidden[:, 0]
    if mode == "max_tokens":
        return hidden.masked_fill(mask == 0, torch.finfo(hidden.dtype).min).max(1).values
    if mode == "lasttoken":  # the last token of each sentence, whichever side pads
        last = mask.shape[1] - 1 - mask.squeeze(-1).flip(1).argmax(1)
        return hidden[torch.arange(hidden.shape[0]), last]
    if mode == "weightedmean_tokens":  # later tokens weigh more
        weights = torch.arange(1, mask.shape[1] + 1, dtype=hidden.dtype).view(1, -1, 1) * mask
        return (hidden * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
    summed, counts = (hidden * mask).sum(1), mask.sum(1).clamp(min=1e-9)
    return summed / counts.sqrt() if mode == "mean_sqrt_len_tokens" else summed / counts


def main():
    """Loads the model and its tokenizer, then encodes; returns the result."""
    started = time.perf_counter()
    torch = import_torch()
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(MODEL, revision=REVISION)
    model = load(torch, AutoModel)
    timings = {"load_s": time.perf_counter() - started}
    return encode(torch, model, tokenizer, timings)


def max_length(model, tokenizer, configured):
    """The longest input: the repo's max_seq_length, else the tokenizer's, else the model's
    positions (less the padding offset of the RoBERTa family)."""
    if configured:
        return int(configured)
    if tokenizer.model_max_length < 1_000_000:
        return tokenizer.model_max_length
    positions = getattr(model.config, "max_position_embeddings", 512)
    offset = (model.config.pad_token_id or 0) + 1 if "roberta" in model.config.model_type else 0
    return positions - offset


def encode(torch, model, tokenizer, timings):
    """Compiles the forward pass, encodes SENTENCES in batches of BATCH and one at a time (the
    first pass compiles, the second is measured) and returns the result."""
    global stage
    mode, normalize, configured, source = pooling()
    longest = max_length(model, tokenizer, configured)

    def vectors(sentences):
        inputs = tokenizer(sentences, padding=True, truncation=True, max_length=longest,
                           return_tensors="pt").to(DEVICE)
        hidden = model(**inputs).last_hidden_state
        pooled = pool(torch, hidden, inputs["attention_mask"], mode).float()
        if normalize:
            pooled = torch.nn.functional.normalize(pooled, p=2, dim=1)
        return pooled.cpu().tolist()

    def both():
        with torch.inference_mode():
            batched = [v for i in range(0, len(SENTENCES), BATCH) for v in vectors(SENTENCES[i:i + BATCH])]
            alone = [vectors([s])[0] for s in SENTENCES]
        return batched, alone

    def warm_up():  # one sentence: the eager kernels' first use, not the measure
        with torch.inference_mode():
            vectors(SENTENCES[:1])

    eager_baseline(torch, both, timings, "encode_s", warm_up)
    if COMPILE_BACKEND:
        compile_forward(torch, model)
        timings["compile_s"] = compiling_call(both)
    stage = "encode"
    start = time.perf_counter()
    batched, alone = both()
    timings["encode_s"] = time.perf_counter() - start
    return {"ok": True, "stage": "done", "embeddings": batched, "embeddings_one_at_a_time": alone,
            "queries": QUERIES, "max_seq_length": longest,
            "pooling": mode.removesuffix("_tokens").removesuffix("_token") + " pooling"
                       + (", normalized" if normalize else ""),
            "pooling_source": source,
            **throughput_fields(2 * len(SENTENCES), "sentences/s", timings, "encode_s"),
            "peak_device_memory_bytes": peak_memory_bytes(torch),
            "compile_cache": compile_cache_counts(), **timings}


{{INCLUDE _helpers}}


{{INCLUDE _one_core IF CORES == 1}}
