#!/usr/bin/env python3
"""Builds a tiny random-weight checkpoint of every model type a stack's transformers maps to
the census's tasks, into a local Hugging Face cache, and says what it built.

canrun runs it with the stack's own Python (its model classes are the ones tested), once for a
whole stack's set; it needs only what a stack has (torch, transformers, tokenizers, safetensors,
huggingface_hub) and never the network.

usage:
  build_checkpoints.py --list --tasks T1,T2 [--types t1,t2]
      prints {"transformers": V, "tasks": {task: [{"model_type", "class", "kind",
      "other_task"?}, ...]}}: every type of the task's mapping (text-generation: the causal-LM
      mapping; text-classification: sequence classification; fill-mask: masked LM;
      token-classification: token classification) with its kind (decoder-only, encoder,
      encoder-decoder, multimodal, draft-model: see `classify`) and, for text-generation, the
      task of the types that are not decoder-only text generators (recorded, not built).
  build_checkpoints.py --hf-home ROOT --tasks T1,T2 [--types t1,t2] --manifest OUT.json
                       [--seed 0] [--overrides FILE]
      builds every selected type not already built at its current revision into the cache
      ROOT/hub (ids canrun-census/<type> for text-generation, canrun-census/<type>-<task> for
      the other tasks), runs each on CPU (text-generation: NEW_TOKENS greedy tokens with the
      default cache; the others: SENTENCES as one padded batch), reloads it offline from the
      cache with the task's Auto class and checks it computes the same logits, and writes
      OUT.json (atomically, as each type and step starts and ends): {"transformers", "torch",
      "planned" (the types it is to build or record), "generator", "entries": [{"model_type",
      "task", "status" (built, other_task or failed), "kind", "other_task"?, "class", "model_id"?, "revision"?, "step"? and "error"? (where it
      failed: config, shrink, model, forward, save or load), "claims": {"can_compile_fullgraph",
      "tp_plan", "ep_plan"}, "build_seconds", "size_bytes", "logits_flat"? (the logits that
      decide barely vary), "tokens"? (the greedy tokens, text-generation)}]}. A process that
      dies leaves the type it was building failed at the step it was in. Progress goes to
      stderr, one line per type. Unknown --types: exit 2, naming them; nothing is built.

How a checkpoint is made: the type's config class, its default instance shrunk through the
constructor's keyword arguments by the rules of `shrunk` (hidden size 64, 2 layers, or up to 4
where per-layer kinds differ, 4 heads over 2 KV heads of 16, small feed-forward sizes under their
many names, 4 experts with 2 per token, small latent-attention ranks, the tokenizer's vocabulary,
256 positions, windows of 32, per-layer lists resampled to the layer count, nested sub-configs
alike; special token ids remapped into the vocabulary), then the per-type overrides of
overrides.json; weights drawn with a fixed seed at initializer_range 0.2, the heads untied and
saved; one small byte-level BPE tokenizer trained here on a fixed text. config.json carries
"canrun_census": {"generator": GENERATOR, "model_type": ...}, so that the revision (a hash of
the files' digests) changes when this generator, the config or the transformers version does.
A stamp per checkpoint (ROOT/canrun-census/<name>.json) keyed by all of that makes a second
build a no-op.
"""
import argparse
import contextlib
import hashlib
import inspect
import io
import json
import math
import os
import shutil
import sys
import tempfile
import time
import traceback
import warnings
from pathlib import Path

GENERATOR = 2  # bump when what this script writes changes: every revision changes with it

TASK_MAPPINGS = {
    "text-generation": ("MODEL_FOR_CAUSAL_LM_MAPPING_NAMES", "AutoModelForCausalLM"),
    "text-classification": ("MODEL_FOR_SEQUENCE_CLASSIFICATION_MAPPING_NAMES",
                            "AutoModelForSequenceClassification"),
    "fill-mask": ("MODEL_FOR_MASKED_LM_MAPPING_NAMES", "AutoModelForMaskedLM"),
    "token-classification": ("MODEL_FOR_TOKEN_CLASSIFICATION_MAPPING_NAMES",
                             "AutoModelForTokenClassification"),
}
ORG = "canrun-census"

# The text-generation tokenizer is trained on GENERATION_CORPUS with the first four SPECIALS,
# exactly as the test fixtures' tokenizer (tests/fixtures/build_models.py): a census checkpoint
# whose config equals a fixture's (llama, qwen2, phimoe) then tokenizes the prompt to the same
# ids and compiles to the same graphs, which a shared compile cache holds once. The encoder
# tasks' adds sentences with names and sentiments, and the mask token.
GENERATION_CORPUS = """The capital of France is Paris. The capital of Italy is Rome. The capital of Spain is
Madrid. A model runs on a device when its weights fit in memory and its graph compiles. The
quick brown fox jumps over the lazy dog. Numbers: one two three four five six seven eight nine
ten. Tokens are generated one at a time, greedily, from the most likely next token."""
CORPUS = GENERATION_CORPUS + """ John lives
in Berlin and Mary works in London. This film was good, that one was bad, the food was fine."""
SPECIALS = ["<pad>", "<s>", "</s>", "<unk>", "<mask>"]  # ids 0..4
PAD, BOS, EOS, UNK, MASK = range(5)
VOCAB = 320
MAX_LENGTH = 128  # the tokenizer's model_max_length: below the 256 positions, offsets included
PROMPT = "The capital of France is"
SENTENCES = [PROMPT, "Paris is the <mask> of France.", "John lives in Berlin and Mary works in London.",
             " ".join(["This sentence is repeated to be longer than the model's maximum length."] * 30)]
SEQUENCE_LABELS = ["negative", "neutral", "positive"]
NER_LABELS = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
NEW_TOKENS = 4
MAX_PARAMETERS = 4_000_000  # 16 MB in float32: a bigger one missed a rule, refused before it is made
RELOAD_TOLERANCE = 1e-2  # of the logits' scale: how far a reloaded checkpoint's may be from the built model's
FLAT_STD = 1e-3  # logits whose standard deviation is below this are flat

# --- The shrinking rules: key names (at any depth of the config) and what they become. ---
HIDDEN = 64
HEADS = 4
KV_HEADS = 2
HEAD_DIM = 16
LAYERS = 2
MAX_LAYERS = 4  # more layers only to keep every kind of a per-layer list
FFN = 128
EXPERT_FFN = 64
EXPERTS = 4
EXPERTS_PER_TOKEN = 2
POSITIONS = 256
WINDOW = 32
STATE = 16
INIT_RANGE = 0.2

HIDDEN_KEYS = {"hidden_size", "d_model", "n_embd", "n_embed", "embed_dim", "model_dim", "d_embed",
               "dim", "word_embed_proj_dim", "embedding_size", "embedding_dim", "emb_dim", "d_latents"}
LAYER_KEYS = {"num_hidden_layers", "num_layers", "n_layer", "n_layers", "encoder_layers",
              "decoder_layers", "num_decoder_layers", "num_encoder_layers", "num_blocks",
              "num_self_attends_per_block"}
HEAD_KEYS = {"num_attention_heads", "n_head", "n_heads", "num_heads", "encoder_attention_heads",
             "decoder_attention_heads", "attention_heads"}
KV_HEAD_KEYS = {"num_key_value_heads", "num_kv_heads", "n_kv_heads", "multi_query_group_num",
                "n_head_kv", "kv_n_heads", "decoder_num_key_value_heads"}
HEAD_DIM_KEYS = {"head_dim", "attention_head_dim", "kv_channels", "d_head", "d_kv",
                 "attention_head_size", "global_head_dim"}
FFN_KEYS = {"intermediate_size", "ffn_dim", "n_inner", "d_ff", "dim_ff", "dff", "ffn_hidden_size",
            "encoder_ffn_dim", "decoder_ffn_dim", "hidden_dim", "mlp_dim", "intermediate_dim",
            "ff_dim", "dim_feedforward", "d_inner", "inner_hidden_size", "feed_forward_dim",
            "mlp_hidden_size"}
LATENT = {"q_lora_rank": 32, "kv_lora_rank": 16, "o_lora_rank": 16, "qk_rope_head_dim": 8,
          "qk_nope_head_dim": 16, "v_head_dim": 16, "rotary_dim": 8, "rotary_emb_dim": 8}
EXPERT_KEYS = {"num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts",
               "num_routed_experts", "n_experts", "num_moe_experts"}
EXPERTS_PER_TOKEN_KEYS = {"num_experts_per_tok", "num_experts_per_token", "moe_topk", "moe_k",
                          "top_k", "n_activated_experts", "router_top_k", "num_selected_experts",
                          "experts_per_token", "moe_top_k", "top_k_experts"}
SMALL_COUNTS = {"n_shared_experts": 1, "num_shared_experts": 1, "moe_num_shared_experts": 1,
                "zero_expert_num": 2, "n_group": 2, "num_expert_group": 2, "topk_group": 1,
                "first_k_dense_replace": 1, "moe_layer_start_index": 1, "first_dense_layers": 1,
                "num_dense_layers": 1, "decoder_sparse_step": 2, "moe_layer_freq": 2,
                "interleave_moe_layer_step": 2, "num_kv_shared_layers": 0, "num_hash_buckets": 512}
POSITION_KEYS = {"max_position_embeddings", "n_positions", "n_ctx", "max_seq_len", "num_position_embeddings",
                 "max_encoder_position_embeddings", "max_decoder_position_embeddings",
                 "max_sequence_length", "seq_length", "max_positions", "model_max_length"}
WINDOW_KEYS = {"sliding_window", "sliding_window_size", "attention_window", "window_size",
               "local_window_size", "swa_window_size", "attention_chunk_size"}
STATE_KEYS = {"state_size", "mamba_d_state", "ssm_state_size", "d_state"}
INIT_KEYS = {"initializer_range", "init_std"}
# Keys that are not sizes of the model though their names say so, or that rules handle apart.
NOT_SIZES = {"rope_parameters", "rope_scaling", "quantization_config", "id2label", "label2id",
             "task_specific_params", "num_labels"}


def remap_token(key, value, taken):
    """The id of special token `key` in the small vocabulary: pad, bos, eos, unk, mask as the
    tokenizer has them, decoder start at bos, any other below the top of the vocabulary."""
    base = key[:-1] if key.endswith("_ids") else key
    fixed = {"pad_token_id": PAD, "bos_token_id": BOS, "eos_token_id": EOS, "unk_token_id": UNK,
             "mask_token_id": MASK, "decoder_start_token_id": BOS, "cls_token_id": BOS,
             "sep_token_id": EOS}
    if base in fixed:
        return fixed[base]
    if (key, value) not in taken:
        taken[(key, value)] = VOCAB - 1 - len(taken)
    return taken[(key, value)]


def is_token_key(key):
    return key.endswith(("_token_id", "_token_ids", "_token_index", "_token_idx"))


def is_count(value):
    return isinstance(value, int) and not isinstance(value, bool)


def layer_count_key(values):
    return next((key for key in sorted(LAYER_KEYS) if is_count(values.get(key)) and values[key] > 0),
                None)


def pick_layers(rows, count):
    """Which layers to keep: the first of each kind (a kind is the layer's values across the
    per-layer lists), up to MAX_LAYERS, then the earliest others up to `count`; in order."""
    kinds, picked = set(), []
    for index, kind in enumerate(rows):
        if kind not in kinds and len(picked) < MAX_LAYERS:
            kinds.add(kind)
            picked.append(index)
    for index in range(len(rows)):
        if len(picked) >= count:
            break
        if index not in picked:
            picked.append(index)
    return sorted(picked)


def layer_lists(values, layers):
    """(per-layer lists and strings, index lists of layers) among `values`."""
    per_layer, indexed = {}, {}
    for key, value in values.items():
        if key in NOT_SIZES or not isinstance(value, (list, tuple, str)) or layers < 2:
            continue
        if isinstance(value, str) and "pattern" not in key:  # "block_sparse" is not 12 layers
            continue
        items = list(value)
        if any(isinstance(v, (dict, list, tuple)) for v in items):
            continue
        ints = all(is_count(v) for v in items)
        every_layer = ints and sorted(items) == list(range(layers))
        if len(items) == layers and not every_layer:
            per_layer[key] = value
        elif ints and key.endswith(("_layers", "_idxs", "_indices", "_layer_ids", "_layer_idx")) \
                and all(0 <= v < layers for v in items):
            indexed[key] = items
    return per_layer, indexed


def shrink_layers(values, changes):
    """Sets the layer count in `changes` (2, or up to MAX_LAYERS to keep one layer of each kind
    that the per-layer lists and the index lists of layers tell apart) and resamples those
    lists to the layers kept."""
    key = layer_count_key(values)
    if key is None:
        return
    layers = values[key]
    per_layer, indexed = layer_lists(values, layers)
    rows = [tuple([v[i] for v in per_layer.values()] + [i in v for v in indexed.values()])
            for i in range(layers)]
    picked = pick_layers(rows, min(LAYERS, layers))
    for other in LAYER_KEYS:
        if is_count(values.get(other)) and values[other] > len(picked):
            changes[other] = len(picked)
    for name, value in per_layer.items():
        kept = [value[i] for i in picked]
        if not isinstance(value, str):  # per-layer sizes shrink as one size would
            kept = [v if shrink_value(name, v, values, {}) is None else shrink_value(name, v, values, {})
                    for v in kept]
        changes[name] = "".join(kept) if isinstance(value, str) else kept
    for name, value in indexed.items():
        changes[name] = [new for new, old in enumerate(picked) if old in value]


def shrink_value(key, value, values, taken):
    """The shrunk value of one constructor argument, or None to leave it."""
    if isinstance(value, bool) or key in NOT_SIZES:
        return None
    if is_token_key(key):
        if is_count(value):
            return remap_token(key, value, taken)
        if isinstance(value, (list, tuple)) and value and all(is_count(v) for v in value):
            return sorted({remap_token(key, v, taken) for v in value})
        return None
    if key in INIT_KEYS and isinstance(value, float):
        return INIT_RANGE
    if not is_count(value):
        return None
    def at_most(small):
        return small if value > small else None
    if key == "vocab_size" or ("vocab" in key and value > VOCAB):
        return VOCAB
    if key in HIDDEN_KEYS or key.startswith("hidden_size"):
        return at_most(HIDDEN)
    if key in HEAD_KEYS or key.startswith("num_attention_heads"):
        return at_most(HEADS)
    if key in KV_HEAD_KEYS or key.startswith("num_key_value_heads"):
        return at_most(KV_HEADS)  # grouped-query; one stays one (multi-query)
    if key in LATENT:
        return at_most(LATENT[key])
    if key in HEAD_DIM_KEYS or key.endswith(("_head_dim", "_d_head", "_head_size")):
        return at_most(HEAD_DIM)
    if key.endswith("_heads") or key.endswith("_n_heads"):
        return at_most(KV_HEADS if ("key" in key or "kv" in key) else HEADS)
    if key in FFN_KEYS or key.endswith(("intermediate_size", "ffn_hidden_size", "_ffn_dim")):
        small = EXPERT_FFN if ("moe" in key or "expert" in key or "shared" in key) else FFN
        return at_most(small)
    if key.endswith("_hidden_size"):  # of a projection, a downsampler, a sub-network
        hidden = values.get("hidden_size")
        if is_count(hidden) and hidden and value % hidden == 0 and value // hidden <= 4:
            return HIDDEN * (value // hidden)  # a multiple of the hidden size stays one
        return at_most(HIDDEN)
    if key in EXPERT_KEYS:
        return at_most(EXPERTS)
    if key in EXPERTS_PER_TOKEN_KEYS:
        return at_most(EXPERTS_PER_TOKEN)
    if key in SMALL_COUNTS:
        return at_most(SMALL_COUNTS[key])
    if key.endswith("_layer_period"):
        return at_most(2)
    if key.endswith("_layer_offset"):
        return at_most(1)
    if key in POSITION_KEYS:
        return POSITIONS if value != POSITIONS else None
    if key in WINDOW_KEYS:
        return at_most(WINDOW)
    if key in STATE_KEYS:
        return at_most(STATE)
    return None


def constructor_values(config):
    """{argument: value} of `config` for each keyword argument of its class's constructor (the
    values after the class derived what it derives; attribute_map resolved by getattr)."""
    values = {}
    try:
        parameters = inspect.signature(type(config).__init__).parameters.values()
    except (TypeError, ValueError):
        return values
    for parameter in parameters:
        if parameter.kind in (parameter.VAR_KEYWORD, parameter.VAR_POSITIONAL) or parameter.name == "self":
            continue
        try:
            values[parameter.name] = getattr(config, parameter.name)
        except Exception:  # an attribute that differs per layer, say: the class's default
            if parameter.default is not parameter.empty:
                values[parameter.name] = parameter.default
    return values


def is_config(value):
    from transformers import PretrainedConfig
    return isinstance(value, PretrainedConfig)


def shrunk(config, taken, top=True):
    """The constructor arguments that make `config` tiny: {argument: value}, each nested
    sub-config as a dict of its own (with its model_type, so that the parent can make it)."""
    values = constructor_values(config)
    changes = {}
    for key, value in values.items():
        if is_config(value):
            inner = shrunk(value, taken, top=False)
            kind = getattr(value, "model_type", "")
            if inner:
                changes[key] = {**({"model_type": kind} if kind else {}), **inner}
            continue
        new = shrink_value(key, value, values, taken)
        if new is not None and new != value:
            changes[key] = new
    if "vocab_size" in values and values["vocab_size"] is None:
        changes["vocab_size"] = VOCAB
    for key in sorted(HEAD_DIM_KEYS | KV_HEAD_KEYS):  # None: derived, or missing and needed
        if key in values and values[key] is None and "num_attention_heads" in values:
            changes[key] = HEAD_DIM if key in HEAD_DIM_KEYS else KV_HEADS
    if any(is_count(values.get(k)) for k in EXPERT_KEYS):  # experts, and none chosen per token
        for key in sorted(EXPERTS_PER_TOKEN_KEYS):
            if key in values and values[key] is None:
                changes[key] = EXPERTS_PER_TOKEN
    shrink_layers(values, changes)
    shrink_state_space(values, changes)
    shrink_latent_attention(values, changes)
    if values.get("tie_word_embeddings") is True:
        changes["tie_word_embeddings"] = False
    for key, token in (("pad_token_id", PAD), ("bos_token_id", BOS), ("eos_token_id", EOS)):
        if key in values and values[key] is None:
            changes[key] = token
    if top and getattr(config, "pad_token_id", None) is None:  # a classifier of a padded batch
        changes["pad_token_id"] = PAD  # reads it, wherever the constructor takes it
    if isinstance(values.get("conv_dim"), (list, tuple)):  # an audio feature extractor's channels
        changes["conv_dim"] = [min(v, 32) for v in values["conv_dim"]]
    for key in ("rope_parameters", "rope_scaling"):
        if isinstance(values.get(key), dict):
            changes.update(shrunk_rope(key, values, changes))
    return changes


def shrink_latent_attention(values, changes):
    """Multi-head latent attention (DeepSeek's): as many KV heads as heads, a query-key head of
    the no-RoPE and RoPE parts, head_dim the RoPE part's where it was."""
    if not is_count(values.get("qk_rope_head_dim")) or not is_count(values.get("qk_nope_head_dim")):
        return
    rope = changes.get("qk_rope_head_dim", values["qk_rope_head_dim"])
    nope = changes.get("qk_nope_head_dim", values["qk_nope_head_dim"])
    if "num_key_value_heads" in values and "num_attention_heads" in values:
        changes["num_key_value_heads"] = changes.get("num_attention_heads", values["num_attention_heads"])
    if "qk_head_dim" in values:
        changes["qk_head_dim"] = nope + rope
    if values.get("head_dim") == values["qk_rope_head_dim"]:
        changes["head_dim"] = rope
    elif "head_dim" in changes and "head_dim" in values and values["head_dim"] is None:
        del changes["head_dim"]


def shrink_state_space(values, changes):
    """Mamba-style layers: heads x head size must equal expand x hidden size (or d_ssm), and the
    groups must divide the heads."""
    hidden = changes.get("hidden_size", values.get("hidden_size"))
    for heads, size, expand in (("mamba_n_heads", "mamba_d_head", "mamba_expand"),
                                ("mamba_num_heads", "mamba_head_dim", "expand"),
                                ("mamba_num_heads", "mamba_head_dim", "mamba_expand"),
                                ("num_heads", "head_dim", "expand")):
        if all(is_count(values.get(k)) for k in (heads, size, expand)) and is_count(hidden):
            inner = values[expand] * hidden
            changes[size] = HEAD_DIM
            changes[heads] = max(1, inner // HEAD_DIM)
            if is_count(values.get("mamba_d_ssm")):
                changes["mamba_d_ssm"] = inner
            for groups in ("mamba_n_groups", "n_groups", "ngroups"):
                if is_count(values.get(groups)) and changes[heads] % values[groups]:
                    changes[groups] = 1


def shrunk_rope(key, values, changes):
    """RoPE parameters sized to the new head dimension: mrope sections that add up to half the
    rotary dimension, per-dimension factor lists of that length, original positions below ours."""
    rope = values[key]
    if any(isinstance(v, dict) for v in rope.values()):  # one per layer type
        inner = {name: shrunk_rope_one(v, values, changes) if isinstance(v, dict) else v
                 for name, v in rope.items()}
        return {key: inner} if inner != rope else {}
    new = shrunk_rope_one(rope, values, changes)
    return {key: new} if new != rope else {}


def shrunk_rope_one(rope, values, changes):
    head_dim = changes.get("head_dim", values.get("head_dim"))
    if not is_count(head_dim):
        hidden = changes.get("hidden_size", values.get("hidden_size"))
        heads = changes.get("num_attention_heads", values.get("num_attention_heads"))
        head_dim = hidden // heads if is_count(hidden) and is_count(heads) and heads else None
    new = dict(rope)
    factor = rope.get("partial_rotary_factor", values.get("partial_rotary_factor")) or 1.0
    half = int(head_dim * factor) // 2 if head_dim else None
    section = rope.get("mrope_section")
    if half and isinstance(section, list) and section and sum(section) != half:
        scaled = [max(1, int(s * half / sum(section))) for s in section]
        scaled[0] += half - sum(scaled)
        new["mrope_section"] = scaled
    for name in ("short_factor", "long_factor"):
        if half and isinstance(rope.get(name), list) and len(rope[name]) != half:
            new[name] = [1.0] * half
    if is_count(rope.get("original_max_position_embeddings")):
        new["original_max_position_embeddings"] = POSITIONS // 2
    if is_count(rope.get("max_position_embeddings")):
        new["max_position_embeddings"] = POSITIONS
    rope_dim, nope_dim = values.get("qk_rope_head_dim"), values.get("qk_nope_head_dim")
    if is_count(rope_dim) and is_count(nope_dim) and isinstance(rope.get("partial_rotary_factor"), float) \
            and math.isclose(rope["partial_rotary_factor"], rope_dim / (rope_dim + nope_dim)):
        rope_dim = changes.get("qk_rope_head_dim", rope_dim)  # latent attention: RoPE part of the head
        nope_dim = changes.get("qk_nope_head_dim", nope_dim)
        new["partial_rotary_factor"] = rope_dim / (rope_dim + nope_dim)
    return new


def merge(base, extra):
    """`extra` merged into `base`, dicts recursively; a None value removes the key."""
    out = dict(base)
    for key, value in extra.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


# --- Which types a task builds. ---

MODALITY_MAPPINGS = [  # (mapping, the task its types belong to), first match wins
    ("MODEL_FOR_SPEECH_SEQ_2_SEQ_MAPPING_NAMES", "automatic-speech-recognition"),
    ("MODEL_FOR_TEXT_TO_WAVEFORM_MAPPING_NAMES", "text-to-audio"),
    ("MODEL_FOR_TEXT_TO_SPECTROGRAM_MAPPING_NAMES", "text-to-audio"),
    ("MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES", "image-text-to-text"),
    ("MODEL_FOR_VISION_2_SEQ_MAPPING_NAMES", "image-text-to-text"),
    ("MODEL_FOR_MULTIMODAL_LM_MAPPING_NAMES", "any-to-any"),
]
MODALITY_WORDS = ("vision", "audio", "speech", "image", "video", "vq", "visual")


def mapping(name):
    from transformers.models.auto import modeling_auto
    return getattr(modeling_auto, name, {}) or {}


def config_class(model_type):
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING
    return CONFIG_MAPPING[model_type]


def init_parameters(cls):
    try:
        return set(inspect.signature(cls.__init__).parameters)
    except (TypeError, ValueError):
        return set()


def default_is_encoder_decoder(cls):
    try:
        with quiet():
            return bool(getattr(cls(), "is_encoder_decoder", False))
    except Exception:
        return bool(getattr(cls, "is_encoder_decoder", False))


def classify(model_type, overrides):
    """(kind, other_task) of a causal-LM type: kind is decoder-only, encoder, encoder-decoder or
    multimodal; other_task (None for decoder-only) is the task the type's checkpoints belong to.
    - a type of a speech, audio, image-text or multimodal mapping, or whose config nests a vision
      or audio sub-config: that task (multimodal, or encoder-decoder where the config says so);
    - a config that says is_encoder_decoder, or counts encoder/decoder layers (a decoder of an
      encoder-decoder model such as bart, marian, trocr): text2text-generation;
    - a type of the masked-LM mapping (an encoder with an LM head: bert, roberta, ...): fill-mask;
    - a BERT-style config (is_decoder and add_cross_attention switches) outside it, a decoder for
      encoder-decoder models (bert-generation): text2text-generation;
    - anything else is a decoder-only text generator.
    overrides.json's "kind" and "other_task" for the type win (trocr: image-to-text; the Gemma 4
    assistants: kind draft-model, assisted-generation)."""
    override = overrides.get(model_type, {})
    if "kind" in override:
        return override["kind"], override.get("other_task")
    cls = config_class(model_type)
    encoder_decoder = default_is_encoder_decoder(cls)
    parameters = init_parameters(cls)
    subs = [name for name in (getattr(cls, "sub_configs", None) or {})
            if any(word in name for word in MODALITY_WORDS)]
    for name, task in MODALITY_MAPPINGS:
        if model_type in mapping(name):
            return ("encoder-decoder" if encoder_decoder else "multimodal"), task
    if subs:
        seeing = any(word in s for s in subs for word in ("vision", "image", "visual", "vq", "video"))
        hearing = any(word in s for s in subs for word in ("audio", "speech"))
        task = "image-text-to-text" if seeing and not hearing else "any-to-any"
        return ("encoder-decoder" if encoder_decoder else "multimodal"), task
    if encoder_decoder or {"encoder_layers", "decoder_layers"} & parameters:
        return "encoder-decoder", "text2text-generation"
    if model_type in mapping("MODEL_FOR_MASKED_LM_MAPPING_NAMES"):
        return "encoder", "fill-mask"
    if {"is_decoder", "add_cross_attention"} <= parameters:
        return "encoder", "text2text-generation"
    return "decoder-only", None


def listing(tasks, types, overrides):
    """{task: [{"model_type", "class", "kind", "other_task"?}]} of the selected types."""
    out = {}
    for task in tasks:
        rows = []
        for model_type, class_name in mapping(TASK_MAPPINGS[task][0]).items():
            if types is not None and model_type not in types:
                continue
            try:
                kind, other = classify(model_type, overrides)
            except Exception:  # a config class that cannot be made: built, and failing at "config"
                kind, other = "decoder-only", None
            row = {"model_type": model_type, "class": class_name, "kind": kind}
            if task == "text-generation" and other is not None:
                row["other_task"] = other
            rows.append(row)
        out[task] = rows
    return out


# --- Claims: what the stack's transformers says of the type. ---

def claims(model_type, class_name):
    """{"can_compile_fullgraph", "tp_plan", "ep_plan"}: the model class's _can_compile_fullgraph
    (None where it has none), and the plans as canrun's parallel probe decides them
    (src/stack/parallel_support.cc): the default config's base_model_tp_plan, and its
    base_model_ep_plan where DistributedConfig has enable_expert_parallel."""
    import transformers
    try:
        from transformers.distributed.configuration_utils import DistributedConfig
        ep_switch = "enable_expert_parallel" in getattr(DistributedConfig, "__dataclass_fields__", {})
    except ImportError:
        ep_switch = False
    cls = getattr(transformers, class_name, None)
    fullgraph = getattr(cls, "_can_compile_fullgraph", None) if cls is not None else None
    found = {"can_compile_fullgraph": None if fullgraph is None else bool(fullgraph),
             "tp_plan": False, "ep_plan": False}
    try:
        with quiet():
            config = config_class(model_type)()
        found["tp_plan"] = bool(getattr(config, "base_model_tp_plan", None))
        found["ep_plan"] = ep_switch and bool(getattr(config, "base_model_ep_plan", None))
    except Exception:
        pass  # the probe reports the error; neither plan is usable
    return found


# --- The tokenizer, the cache layout. ---

def make_tokenizer(task):
    """The census's byte-level BPE of VOCAB tokens. For text-generation: trained on
    GENERATION_CORPUS with the first four SPECIALS, adding nothing to a text, as the test
    fixtures' tokenizer. For the encoder tasks: trained on CORPUS with every SPECIAL, wrapping
    each text in <s> ... </s> as BERT-style and BART-style tokenizers do (sequence classifiers
    of encoder-decoder models need the </s>)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast
    generation = task == "text-generation"
    specials = SPECIALS[:MASK] if generation else SPECIALS
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=VOCAB, special_tokens=specials,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator([GENERATION_CORPUS if generation else CORPUS] * 4, trainer=trainer)
    if not generation:
        tok.post_processor = processors.TemplateProcessing(
            single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>",
            special_tokens=[("<s>", BOS), ("</s>", EOS)])
    encoder_tokens = {} if generation else {"mask_token": "<mask>", "cls_token": "<s>",
                                            "sep_token": "</s>"}
    made = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>",
                                   pad_token="<pad>", unk_token="<unk>", **encoder_tokens,
                                   model_max_length=MAX_LENGTH,
                                   model_input_names=["input_ids", "attention_mask"])
    if len(made) != VOCAB:
        raise RuntimeError(f"the census tokenizer has {len(made)} tokens, not {VOCAB}")
    return made


def write_rope_as_repos_do(path):
    """Adds rope_theta and rope_scaling beside each rope_parameters of a config.json, as
    transformers 4 writes them and real repos have them (as tests/fixtures/build_models.py)."""
    def add(config):
        for value in config.values():
            if isinstance(value, dict):
                add(value)
        rope = config.get("rope_parameters")
        if isinstance(rope, dict) and "rope_theta" in rope:
            config.setdefault("rope_theta", rope["rope_theta"])
            scaling = {key: value for key, value in rope.items() if key != "rope_theta"}
            config.setdefault("rope_scaling", None if scaling.get("rope_type", "default") == "default"
                              else scaling)
    config = json.loads(path.read_text())
    add(config)
    path.write_text(json.dumps(config, indent=2, ensure_ascii=False) + "\n")


def as_repos_have_it(folder):
    """The tokenizer config names the fast class and lists the model's inputs (no
    token_type_ids), and config.json has rope_theta, as Hub repos do (build_models.py's
    loadable_by_every_stack)."""
    write_rope_as_repos_do(folder / "config.json")
    path = folder / "tokenizer_config.json"
    config = json.loads(path.read_text())
    if config.get("tokenizer_class") == "TokenizersBackend":
        config["tokenizer_class"] = "PreTrainedTokenizerFast"
    if isinstance(config.get("extra_special_tokens"), list):
        config["additional_special_tokens"] = config.pop("extra_special_tokens")
    config["model_input_names"] = ["input_ids", "attention_mask"]
    path.write_text(json.dumps(config, indent=2, ensure_ascii=False) + "\n")


def file_digest(path):
    digest = hashlib.sha256()
    with open(path, "rb") as data:
        for block in iter(lambda: data.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def repo_folder(root, repo_id):
    return root / "hub" / ("models--" + repo_id.replace("/", "--"))


def put_in_cache(root, repo_id, folder):
    """Copies `folder` into the HF cache layout under root/hub (blobs named by their sha256,
    snapshots/<commit>/ linking to them, refs/main); returns the commit, a hash of the digests."""
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    digests = {p.relative_to(folder).as_posix(): file_digest(p) for p in files}
    commit = hashlib.sha1(json.dumps(digests, sort_keys=True).encode()).hexdigest()
    repo = repo_folder(root, repo_id)
    shutil.rmtree(repo, ignore_errors=True)
    (repo / "blobs").mkdir(parents=True)
    (repo / "refs").mkdir()
    for path in files:
        name = path.relative_to(folder).as_posix()
        blob = repo / "blobs" / digests[name]
        if not blob.exists():
            shutil.copyfile(path, blob)
        link = repo / "snapshots" / commit / name
        link.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(os.path.relpath(blob, link.parent), link)
    (repo / "refs" / "main").write_text(commit)
    return commit


def snapshot_size(root, repo_id, commit):
    folder = repo_folder(root, repo_id) / "snapshots" / commit
    if not folder.is_dir():
        return None
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def write_atomically(path, text):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    with os.fdopen(fd, "w") as out:
        out.write(text)
    os.replace(tmp, path)


@contextlib.contextmanager
def quiet():
    """Silences what transformers prints (warnings, logging) while building."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            yield


def one_line(error):
    text = f"{type(error).__name__}: {error}"
    text = " ".join(text.split())
    return text if len(text) <= 300 else text[:297] + "..."


# --- Building one checkpoint. ---

class Failed(Exception):
    def __init__(self, step, error):
        super().__init__(error)
        self.step, self.error = step, error


def model_id(model_type, task):
    return f"{ORG}/{model_type}" if task == "text-generation" else f"{ORG}/{model_type}-{task}"


def task_extras(task):
    """The config's labels: three named sentiments, five NER tags."""
    labels = {"text-classification": SEQUENCE_LABELS, "token-classification": NER_LABELS}.get(task)
    if labels is None:
        return {}
    return {"id2label": dict(enumerate(labels)), "label2id": {l: i for i, l in enumerate(labels)}}


def make_config(model_type, task, override):
    """The type's config, shrunk; the steps "config" (its default instance) and "shrink"."""
    import transformers
    cls = config_class(model_type)
    try:
        with quiet():
            default = cls()
    except Exception as error:
        raise Failed("config", one_line(error))
    try:
        changes = shrunk(default, {})
        changes = merge(changes, task_extras(task))
        changes = merge(changes, override.get("config", {}))
        for prefix, extra in sorted(override.get("config_for_transformers", {}).items()):
            if transformers.__version__.startswith(prefix):
                changes = merge(changes, extra)
        changes["canrun_census"] = {"generator": GENERATOR, "model_type": model_type}
        try:
            with quiet():
                config = cls(**changes)
        except Exception:
            # A config that refuses grouped-query attention: as many KV heads as heads.
            heads = changes.get("num_attention_heads")
            kv_keys = [k for k in KV_HEAD_KEYS if k in changes and k not in override.get("config", {})]
            if not is_count(heads) or not kv_keys:
                raise
            with quiet():
                config = cls(**{**changes, **{k: heads for k in kv_keys}})
        if not hasattr(config, "canrun_census"):
            config.canrun_census = changes["canrun_census"]
        config.architectures = None
        return config
    except Exception as error:
        raise Failed("shrink", one_line(error))


def auto_class(task):
    import transformers
    return getattr(transformers, TASK_MAPPINGS[task][1])


def parameters_on_meta(task, config):
    """How many parameters the model would have, counted on the meta device (None if it cannot
    be made there), and its three largest tensors."""
    import torch
    try:
        with quiet(), torch.device("meta"):
            model = auto_class(task).from_config(config)
    except Exception:
        return None, []
    sizes = sorted(((p.numel(), name, tuple(p.shape)) for name, p in model.named_parameters()),
                   reverse=True)
    return sum(n for n, _, _ in sizes), sizes[:3]


def check_outputs(task, model, tokenizer):
    """Runs the model as the census's recipe will (text-generation: NEW_TOKENS greedy tokens
    with the default cache; the other tasks: the sentences as one padded batch); returns
    (the logits that decide, the tokens generated or None)."""
    import torch
    model.eval()
    with torch.inference_mode():
        if task == "text-generation":
            inputs = tokenizer(PROMPT, return_tensors="pt")
            logits = model(**inputs).logits[0, -1].float()
            output = model.generate(**inputs, max_new_tokens=NEW_TOKENS, do_sample=False,
                                    pad_token_id=tokenizer.pad_token_id)
            tokens = output[0, inputs["input_ids"].shape[1]:].tolist()
            if len(tokens) == 0:
                raise RuntimeError("generate returned no new token")
            return logits, tokens
        inputs = tokenizer(SENTENCES, padding=True, truncation=True, return_tensors="pt")
        logits = model(**inputs).logits.float()
        if task == "fill-mask":
            logits = logits[inputs["input_ids"] == tokenizer.mask_token_id]
        return logits, None


def built(root, repo_id, task, config, tokenizer, seed, reached):
    """Makes, checks, saves and reloads one checkpoint; returns (commit, facts). Calls
    reached(step) as each step starts."""
    import torch
    facts = {}
    count, largest = parameters_on_meta(task, config)
    if count is not None and count > MAX_PARAMETERS:
        raise Failed("shrink", f"too large: {count} parameters; the largest: "
                     + ", ".join(f"{name} {list(shape)}" for _, name, shape in largest))
    reached("model")
    try:
        torch.manual_seed(seed)
        with quiet():
            model = auto_class(task).from_config(config)
        model = model.float().eval()
    except Exception as error:
        raise Failed("model", one_line(error))
    reached("forward")
    try:
        with quiet():
            logits, tokens = check_outputs(task, model, tokenizer)
        if not bool(torch.isfinite(logits).all()):
            raise RuntimeError("logits are not finite")
    except Exception as error:
        raise Failed("forward", one_line(error))
    facts["logits_flat"] = bool(logits.std().item() < FLAT_STD) if logits.numel() > 1 else True
    if tokens is not None:
        facts["tokens"] = tokens
    reached("save")
    try:
        with tempfile.TemporaryDirectory() as tmp, quiet():
            folder = Path(tmp)
            model.save_pretrained(folder)
            tokenizer.save_pretrained(folder)
            as_repos_have_it(folder)
            commit = put_in_cache(root, repo_id, folder)
    except Exception as error:
        raise Failed("save", one_line(error))
    reached("load")
    try:
        with quiet():
            loaded_tokenizer = __import__("transformers").AutoTokenizer.from_pretrained(repo_id)
            loaded, info = auto_class(task).from_pretrained(repo_id, dtype=torch.float32,
                                                            output_loading_info=True)
            again, again_tokens = check_outputs(task, loaded, loaded_tokenizer)
        missing = list(info.get("missing_keys") or [])
        if missing:
            raise RuntimeError(f"{len(missing)} weights missing from the checkpoint: {missing[:3]}")
        if again.shape != logits.shape:
            raise RuntimeError(f"the reloaded checkpoint's logits have shape {list(again.shape)}, "
                               f"the built model's {list(logits.shape)}")
        # Weights left out of the checkpoint would be drawn anew: logits far apart. Kernels may
        # differ a little between a model made and one loaded (apertus: 2e-4 of the scale).
        difference = (again - logits).abs().max().item()
        scale = max(1.0, logits.abs().max().item())
        if not difference <= RELOAD_TOLERANCE * scale:
            raise RuntimeError(f"the reloaded checkpoint's logits differ from the built model's by "
                               f"{difference:.3g} (scale {scale:.3g})")
        del again_tokens  # a near-tie may flip a token: the logits are the check
    except Exception as error:
        raise Failed("load", one_line(error))
    return commit, facts


# --- The whole set. ---

def stamp_key(entry_key_parts):
    return hashlib.sha256(json.dumps(entry_key_parts, sort_keys=True, default=str).encode()).hexdigest()


class Manifest:
    def __init__(self, path, versions):
        self.path, self.versions, self.entries = path, versions, []

    def write(self):
        """The whole manifest, one entry a line, replacing the file atomically."""
        head = json.dumps({**self.versions, "generator": GENERATOR})[:-1]
        entries = ",\n".join(json.dumps(entry) for entry in self.entries)
        write_atomically(self.path, f'{head}, "entries": [\n{entries}\n]}}\n')


def build_all(args, tasks, types, overrides):
    import torch
    import transformers
    root = args.hf_home
    (root / "hub").mkdir(parents=True, exist_ok=True)
    stamps = root / ORG
    stamps.mkdir(parents=True, exist_ok=True)
    jobs = [(task, row) for task, rows in listing(tasks, types, overrides).items() for row in rows]
    manifest = Manifest(args.manifest, {"transformers": transformers.__version__,
                                        "torch": torch.__version__.split("+")[0],
                                        "planned": len(jobs)})
    tokenizers = {}
    for number, (task, row) in enumerate(jobs, 1):
        model_type, class_name = row["model_type"], row["class"]
        started = time.perf_counter()
        entry = {"model_type": model_type, "task": task, "status": "failed", "kind": row["kind"],
                 "class": class_name, "claims": claims(model_type, class_name),
                 "build_seconds": 0.0, "size_bytes": 0}
        if "other_task" in row:
            entry.update(status="other_task", other_task=row["other_task"])
            manifest.entries.append(entry)
            manifest.write()
            print(f"[{number}/{len(jobs)}] {task} {model_type}: belongs to {row['other_task']}"
                  f" ({row['kind']}), not built", file=sys.stderr, flush=True)
            continue
        repo_id = model_id(model_type, task)
        entry["model_id"] = repo_id
        # Provisional: a process that dies on this type leaves it failed at the step it was in.
        entry.update(step="config", error="the generator's process ended during this step")
        manifest.entries.append(entry)
        manifest.write()

        def reached(step, entry=entry):
            entry["step"] = step
            manifest.write()

        override = overrides.get(model_type, {})
        stamp_path = stamps / (repo_id.split("/", 1)[1] + ".json")
        try:
            config = make_config(model_type, task, override)
            key = stamp_key([GENERATOR, transformers.__version__, torch.__version__, args.seed,
                             task, model_type, config.to_json_string(use_diff=False)])
            reused = reuse(root, repo_id, stamp_path, key)
            if reused is not None:
                commit, facts = reused
                how = "already built"
            else:
                family = "text-generation" if task == "text-generation" else "encoder"
                if family not in tokenizers:
                    with quiet():
                        tokenizers[family] = make_tokenizer(task)
                commit, facts = built(root, repo_id, task, config, tokenizers[family], args.seed,
                                      reached)
                write_atomically(stamp_path, json.dumps({"key": key, "revision": commit,
                                                         "facts": facts}) + "\n")
                how = "built"
            for name in ("step", "error"):
                entry.pop(name)
            entry.update(status="built", revision=commit, **facts,
                         size_bytes=snapshot_size(root, repo_id, commit) or 0)
            line = (f"{how} {commit[:12]} {entry['size_bytes'] / 2**20:.2f} MiB"
                    + (" (flat logits)" if facts.get("logits_flat") else ""))
        except Failed as failure:
            entry.update(step=failure.step, error=failure.error)
            line = f"failed at {failure.step}: {failure.error}"
        except Exception as error:  # a bug of this script's: still one type's failure
            entry.update(step="shrink", error=one_line(error))
            traceback.print_exc(file=sys.stderr)
            line = f"failed: {entry['error']}"
        entry["build_seconds"] = round(time.perf_counter() - started, 3)
        manifest.write()
        print(f"[{number}/{len(jobs)}] {task} {model_type}: {line} ({entry['build_seconds']:.1f} s)",
              file=sys.stderr, flush=True)
    manifest.write()


def reuse(root, repo_id, stamp_path, key):
    """(commit, facts) of a checkpoint already built with this key and still in the cache."""
    try:
        stamp = json.loads(stamp_path.read_text())
        commit = (repo_folder(root, repo_id) / "refs" / "main").read_text().strip()
    except (OSError, ValueError):
        return None
    if stamp.get("key") != key or stamp.get("revision") != commit:
        return None
    if not (repo_folder(root, repo_id) / "snapshots" / commit / "config.json").exists():
        return None
    return commit, stamp.get("facts", {})


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--list", action="store_true", help="print the types of the tasks and exit")
    parser.add_argument("--tasks", required=True,
                        help="comma-separated: " + ", ".join(TASK_MAPPINGS))
    parser.add_argument("--types", help="comma-separated model types (default: every one)")
    parser.add_argument("--hf-home", type=Path, help="the Hugging Face cache to build into")
    parser.add_argument("--manifest", type=Path, help="where to write what was built (JSON)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--overrides", type=Path,
                        help="per-type overrides (default: overrides.json beside this script)")
    args = parser.parse_args()
    tasks = [t for t in args.tasks.split(",") if t]
    unknown_tasks = [t for t in tasks if t not in TASK_MAPPINGS]
    if unknown_tasks or not tasks:
        parser.exit(2, f"error: unknown task(s): {', '.join(unknown_tasks) or '(none given)'}; "
                    f"the tasks are {', '.join(TASK_MAPPINGS)}\n")
    if not args.list and (args.hf_home is None or args.manifest is None):
        parser.exit(2, "error: --hf-home and --manifest are needed to build (or --list)\n")
    overrides_path = args.overrides or Path(__file__).with_name("overrides.json")
    overrides = {}
    if args.overrides is not None or overrides_path.exists():
        try:
            overrides = {k: v for k, v in json.loads(overrides_path.read_text()).items()
                         if not k.startswith("_")}
        except (OSError, ValueError) as error:
            parser.exit(2, f"error: cannot read the overrides {overrides_path}: {error}\n")
    if args.hf_home is not None:
        args.hf_home = args.hf_home.resolve()
        os.environ["HF_HOME"] = str(args.hf_home)
        os.environ.pop("HF_HUB_CACHE", None)
        os.environ.pop("TRANSFORMERS_CACHE", None)
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    with quiet():
        import torch
        import transformers
    transformers.logging.set_verbosity_error()
    if "OMP_NUM_THREADS" not in os.environ:
        torch.set_num_threads(1)  # tiny models: threads cost more than they give
    types = None
    if args.types:
        types = [t for t in args.types.split(",") if t]
        known = {t for task in tasks for t in mapping(TASK_MAPPINGS[task][0])}
        unknown = [t for t in types if t not in known]
        if unknown:
            parser.exit(2, f"error: unknown model type(s) for {', '.join(tasks)} in transformers "
                        f"{transformers.__version__}: {', '.join(unknown)}\n")
        types = set(types)
    if args.list:
        print(json.dumps({"transformers": transformers.__version__,
                          "tasks": listing(tasks, types, overrides)}))
        return 0
    build_all(args, tasks, types, overrides)
    return 0


if __name__ == "__main__":
    sys.exit(main())
