#!/usr/bin/env python3
"""canrun's judge: how fluent English a generated text is, as a small causal LM sees it.

usage: python3 judge.py MODEL REQUEST.json > answer.json
  request: {"items": [{"prompt": "...", "text": "..."}, ...]}
  answer:  {"scores": [float, ...], "model": MODEL, "versions": {...}}  (one line)

The score of a text is the judge's mean log-likelihood (nats per token) of the text after its
prompt, counted over the tokens that make a transition not seen before in the text (a token
that follows the same token as an earlier occurrence of it is a repeat), plus the log of the
share of such new transitions. So loops of one word, which any LM finds easy to continue once
started, are judged by their few new transitions and lose for repeating; fluent English
scores high (around -2), random tokens low (below -8). A text with no tokens scores -100.
canrun compares the score with a threshold calibrated, for each judge model, on a labelled
set (judge/labelled.jsonl).

Runs eagerly on the CPU in float32, one text at a time; never trust_remote_code.
"""
import json
import math
import sys

EMPTY_SCORE = -100.0


def score(torch, model, tokenizer, prompt, text):
    context = tokenizer(prompt, add_special_tokens=True)["input_ids"] if prompt else []
    if not context:
        context = [tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id]
    tokens = tokenizer(text, add_special_tokens=False)["input_ids"]
    if not tokens:
        return EMPTY_SCORE
    ids = torch.tensor([context + tokens])
    with torch.inference_mode():
        logits = model(ids).logits[0, len(context) - 1:-1].float()
    log_probs = torch.log_softmax(logits, dim=-1)
    seen, total, count = set(), 0.0, 0
    previous = context[-1]
    for position, token in enumerate(tokens):
        if (previous, token) not in seen:
            seen.add((previous, token))
            total += log_probs[position, token].item()
            count += 1
        previous = token
    return total / count + math.log(count / len(tokens))


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    import importlib.metadata
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    with open(sys.argv[2], encoding="utf-8") as file:
        request = json.load(file)
    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(sys.argv[1])
    model = AutoModelForCausalLM.from_pretrained(sys.argv[1], dtype=torch.float32).eval()
    scores = [score(torch, model, tokenizer, item.get("prompt", ""), item["text"])
              for item in request["items"]]
    versions = {name: importlib.metadata.version(name) for name in ("torch", "transformers")}
    json.dump({"scores": scores, "model": sys.argv[1], "versions": versions}, sys.stdout)
    print()


if __name__ == "__main__":
    main()
