#!/usr/bin/env python3
"""canrun's judge: what a small language model and cheap checks say of a generated text, as
numbers that canrun combines into one fluency score.

usage: python3 judge.py MODEL REQUEST.json > answer.json
  request: {"items": [{"prompt": "...", "text": "..."}, ...], "progress": "progress.json"}
  answer:  {"features": [{name: float, ...}, ...], "model": MODEL, "versions": {...}}  (one line)
  progress (optional): a file rewritten (atomically) once the model is loaded and after each
  batch: {"texts": done, "of": all, "work": done, "of_work": all, "elapsed": seconds}, where work
  counts the token positions of the padded batches (what a batch costs) and elapsed is the time
  since the first batch began; canrun reads it to show how far the judge is and its time left.

The features of a text (every one a plain number, the same names for every text):
  likelihood       the model's mean log-likelihood (nats per token) of the text after its prompt
                   over the tokens that make a transition not seen before in the text, plus the
                   log of the share of such new transitions (loops lose for repeating);
  letters          share of letters among the characters that are not whitespace;
  latin            share of Latin-script letters among the letters;
  words            share of the whitespace-separated words that look like words (letters, with
                   an apostrophe or hyphen inside and punctuation around);
  distinct_tokens  distinct tokens over tokens (of the model's tokenizer);
  token_run        the longest run of one token, over the tokens;
  char_run         the longest run of one character, over the characters;
  repeated_trigrams share of the word trigrams already seen earlier in the text;
  whitespace       share of whitespace characters;
  digits           share of digits among the characters that are not whitespace;
  tokens           log(1 + number of tokens);
  duplicate_sentences share of the sentences (or lines) that already came earlier in the text;
  distinct_words   distinct words over words (lower case, punctuation around them dropped);
  repeated_4grams  share of the token 4-grams already seen earlier in the text;
  distinct_long_words the same as distinct_words over the words longer than 3 letters;
  doubled_words    share of the words equal to the word before them;
  digit_run        the longest run of digits, over 8 (at most 1);
  tail_letters, tail_words  `letters` and `words` over the last third of the text;
  window           the lowest mean log-likelihood of WINDOW tokens in a row (degeneration
                   anywhere in the text shows there, however fluent the rest);
  tail_likelihood  the mean log-likelihood of the last third of the tokens;
  repeated_span    the longest run of tokens that comes twice in the text, over the tokens (a
                   loop that has only begun, a half repeated answer).
An empty text has 0 for every feature but the three likelihoods, which are at their floor.
(Asking the model whether the text is fluent — log P(yes) - log P(no) — was measured on the
labelled set and left out: with SmolLM2-135M-Instruct it separates fluent from not no better
than chance (AUC 0.47) and cost half the judge's time.)
canrun fits how these combine on a labelled set (judge/labelled.jsonl) and calibrates the
threshold of the combined score; see src/judge/judge.h.

Runs eagerly on the CPU in float32, BATCH texts of similar length at a time; never
trust_remote_code.
"""
import json
import math
import os
import re
import sys
import time
import unicodedata

BATCH = 16  # texts per forward pass
WINDOW = 4  # tokens in the window of `window`
FLOOR = -20.0  # the floor of `likelihood` (an empty text)
SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")
WORD = re.compile(r"^[\"'(\[*_`]*[A-Za-z\u00c0-\u024f]+(?:['\u2019-][A-Za-z\u00c0-\u024f]+)*"
                  r"[\"')\]*_`.,;:!?]*$")


class Progress:
    """Writes how far forward() is to `path` (nothing when path is None)."""

    def __init__(self, path, batches):
        self.path = path
        self.texts = self.work = 0
        self.of = sum(len(batch) for batch, _ in batches)
        self.of_work = sum(len(batch) * width for batch, width in batches)
        self.start = time.monotonic()
        self.write()

    def batch_done(self, batch, width):
        self.texts += len(batch)
        self.work += len(batch) * width
        self.write()

    def write(self):
        if self.path is None:
            return
        record = {"texts": self.texts, "of": self.of, "work": self.work, "of_work": self.of_work,
                  "elapsed": time.monotonic() - self.start}
        with open(self.path + ".tmp", "w", encoding="utf-8") as file:
            json.dump(record, file)
        os.replace(self.path + ".tmp", self.path)


def forward(torch, model, sequences, pad, reduce, progress_path=None):
    """reduce(at, log_probs) for every sequence, its log-probabilities at every position;
    batched by length (right padding, so a sequence's positions are those it has alone)."""
    out = [None] * len(sequences)
    order = sorted(range(len(sequences)), key=lambda at: len(sequences[at]))
    batches = [order[start:start + BATCH] for start in range(0, len(order), BATCH)]
    widths = [max(len(sequences[at]) for at in batch) for batch in batches]
    progress = Progress(progress_path, list(zip(batches, widths)))
    for batch, width in zip(batches, widths):
        ids = torch.full((len(batch), width), pad, dtype=torch.long)
        mask = torch.zeros((len(batch), width), dtype=torch.long)
        for row, at in enumerate(batch):
            ids[row, :len(sequences[at])] = torch.tensor(sequences[at])
            mask[row, :len(sequences[at])] = 1
        with torch.inference_mode():
            logits = model(input_ids=ids, attention_mask=mask).logits.float()
        for row, at in enumerate(batch):
            out[at] = reduce(at, torch.log_softmax(logits[row, :len(sequences[at])], dim=-1))
        progress.batch_done(batch, width)
    return out


def context_of(tokenizer, prompt):
    context = tokenizer(prompt, add_special_tokens=True)["input_ids"] if prompt else []
    if not context:
        context = [tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id]
    return context


def likelihood(each, context, tokens):
    """Mean log-likelihood over the new transitions (`each`: every token's), plus the log of
    their share."""
    if not tokens:
        return FLOOR
    seen, total, count = set(), 0.0, 0
    previous = context[-1]
    for position, token in enumerate(tokens):
        if (previous, token) not in seen:
            seen.add((previous, token))
            total += each[position]
            count += 1
        previous = token
    return max(FLOOR, total / count + math.log(count / len(tokens)))


def token_log_likelihoods(log_probs, context, tokens):
    return [log_probs[len(context) - 1 + position, token].item() for position, token in enumerate(tokens)]


def read_likelihoods(log_probs, context, tokens):
    """likelihood, window and tail_likelihood of a text."""
    each = token_log_likelihoods(log_probs, context, tokens)
    mean = lambda values: max(FLOOR, sum(values) / len(values)) if values else FLOOR
    windows = [each[at:at + WINDOW] for at in range(max(1, len(each) - WINDOW + 1))]
    return {
        "likelihood": likelihood(each, context, tokens),
        "window": min(mean(window) for window in windows),
        "tail_likelihood": mean(each[len(each) * 2 // 3:]),
    }


def repeated_span(tokens):
    """The longest run of tokens found twice (the two may overlap), over the tokens."""
    def repeats(length):
        seen = set()
        for at in range(len(tokens) - length + 1):
            gram = tuple(tokens[at:at + length])
            if gram in seen:
                return True
            seen.add(gram)
        return False
    low, high = 0, max(0, len(tokens) - 1)  # repeats(low) holds; the answer is at most high
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if repeats(middle) else (low, middle - 1)
    return low / len(tokens) if tokens else 0.0


def longest_run(items):
    best, run, previous = 0, 0, object()
    for item in items:
        run = run + 1 if item == previous else 1
        previous = item
        best = max(best, run)
    return best


def cheap(text, tokens):
    """The features that need no model."""
    visible = [c for c in text if not c.isspace()]
    letters = [c for c in visible if c.isalpha()]
    latin = [c for c in letters if unicodedata.name(c, "").startswith("LATIN")]
    words = text.split()
    lowered = [w.strip(".,;:!?\"'()[]*_`").lower() for w in words]
    trigrams = [tuple(lowered[i:i + 3]) for i in range(len(lowered) - 2)]
    seen, repeated = set(), 0
    for trigram in trigrams:
        repeated += trigram in seen
        seen.add(trigram)
    sentences = [s.strip().lower() for s in SENTENCE.findall(text) if len(s.strip()) > 3]
    seen_sentences, duplicates = set(), 0
    for sentence in sentences:
        duplicates += sentence in seen_sentences
        seen_sentences.add(sentence)
    grams = [tuple(tokens[i:i + 4]) for i in range(len(tokens) - 3)]
    present = [w for w in lowered if w]
    long = [w for w in present if len(w) > 3]
    share = lambda part, whole: len(part) / len(whole) if whole else 0.0
    return {
        "letters": share(letters, visible),
        "latin": share(latin, letters),
        "words": share([w for w in words if WORD.match(w)], words),
        "distinct_tokens": len(set(tokens)) / len(tokens) if tokens else 0.0,
        "token_run": longest_run(tokens) / len(tokens) if tokens else 0.0,
        "char_run": longest_run(text) / len(text) if text else 0.0,
        "repeated_trigrams": repeated / len(trigrams) if trigrams else 0.0,
        "whitespace": share([c for c in text if c.isspace()], text),
        "digits": share([c for c in visible if c.isdigit()], visible),
        "tokens": math.log1p(len(tokens)),
        "duplicate_sentences": duplicates / len(sentences) if sentences else 0.0,
        "distinct_words": len(set(present)) / len(present) if present else 0.0,
        "repeated_4grams": (len(grams) - len(set(grams))) / len(grams) if grams else 0.0,
        "distinct_long_words": len(set(long)) / len(long) if long else 0.0,
        "doubled_words": sum(a == b for a, b in zip(present, present[1:])) / len(present) if present else 0.0,
        "digit_run": min(max((len(run) for run in re.findall(r"\d+", text)), default=0) / 8, 1.0),
        "repeated_span": repeated_span(tokens),
        **tail(text),
    }


def tail(text):
    """Letters and word-like words in the last third of the text: degeneration shows at the end."""
    end = text[len(text) * 2 // 3:]
    visible = [c for c in end if not c.isspace()]
    words = end.split()[1:]  # the first may be cut in two
    return {
        "tail_letters": len([c for c in visible if c.isalpha()]) / len(visible) if visible else 0.0,
        "tail_words": len([w for w in words if WORD.match(w)]) / len(words) if words else 0.0,
    }


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
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    items = [(item.get("prompt", ""), item["text"]) for item in request["items"]]
    tokens = [tokenizer(text, add_special_tokens=False)["input_ids"] if text else [] for _, text in items]
    contexts = [context_of(tokenizer, prompt) for prompt, _ in items]
    read = forward(torch, model, [c + t for c, t in zip(contexts, tokens)], pad,
                   lambda at, log_probs: read_likelihoods(log_probs, contexts[at], tokens[at]),
                   request.get("progress"))
    features = []
    for at, (prompt, text) in enumerate(items):
        features.append({**read[at], **cheap(text, tokens[at])})
    versions = {name: importlib.metadata.version(name) for name in ("torch", "transformers")}
    json.dump({"features": features, "model": sys.argv[1], "versions": versions}, sys.stdout)
    print()


if __name__ == "__main__":
    main()
