#!/usr/bin/env python3
"""Does {{MODEL_ID}} run, unmodified, on {{BACKEND_DESCRIPTION}}?

Rendered by canrun {{CANRUN_VERSION}}. Self-contained: run it with `python3 run.py`.
It loads the reranker (a cross-encoder) with transformers'
AutoModelForSequenceClassification.from_pretrained (never trust_remote_code), which is what
sentence-transformers' CrossEncoder loads and runs, compiles the forward pass with
torch.compile(backend=COMPILE_BACKEND) and scores every (query, document) pair of a small
retrieval set as one padded batch (the last document is longer than the model's maximum
length, so truncation is exercised). A pair's score is its logit (one label) or the log
probability of the last label ("relevant"). It writes the [queries, documents] scores to
outputs.safetensors and prints one line `CANRUN_RESULT {json}` with each query's order of the
documents, pairs per second, the timings, the peak memory and the versions of the stack. On
failure the line says in which stage (load, compile, generate) and why, and the exit status is 1.
"""
{{INCLUDE _settings}}

{{INCLUDE _sentences}}
DOCUMENTS = SENTENCES[QUERIES:]
QUERY_TEXTS = SENTENCES[:QUERIES]


def main():
    """Loads the reranker and its tokenizer, then scores the pairs; returns the result."""
    started = time.perf_counter()
    torch = import_torch()
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(MODEL, revision=REVISION)
    model = load(torch, AutoModelForSequenceClassification)
    timings = {"load_s": time.perf_counter() - started}
    pairs = [(query, document) for query in QUERY_TEXTS for document in DOCUMENTS]
    inputs = tokenizer([q for q, _ in pairs], [d for _, d in pairs], padding=True,
                       truncation=True, return_tensors="pt").to(DEVICE)
    logits = forward_twice(torch, model, inputs, timings).logits.float().cpu()
    scores = (logits[:, 0] if logits.shape[-1] == 1 else logits.log_softmax(-1)[:, -1])
    scores = scores.reshape(len(QUERY_TEXTS), len(DOCUMENTS))
    return {"ok": True, "stage": "done", **save_logits(scores, "scores"),
            "text": orders(scores), "source": source(),
            **throughput_fields(len(pairs), "pairs/s", timings),
            "peak_device_memory_bytes": peak_memory_bytes(torch),
            "compile_cache": compile_cache_counts(), **timings}


def orders(scores):
    """Each query's documents, best first: "q1: d1 > d3 > …; q2: …"."""
    ranked = scores.argsort(dim=-1, descending=True, stable=True).tolist()
    return "; ".join(f"q{q + 1}: " + " > ".join(f"d{d + 1}" for d in row) for q, row in enumerate(ranked))


def source():
    """The queries and documents, numbered as orders() names them (long ones shortened)."""
    def short(text):
        return text if len(text) <= 80 else text[:77] + "…"
    return "\n".join([f"q{i + 1}: {short(q)}" for i, q in enumerate(QUERY_TEXTS)]
                     + [f"d{i + 1}: {short(d)}" for i, d in enumerate(DOCUMENTS)])


{{INCLUDE _forward}}


{{INCLUDE _helpers}}


{{INCLUDE _one_core IF CORES == 1}}
