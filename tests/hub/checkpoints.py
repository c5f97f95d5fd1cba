"""Small real safetensors checkpoints for the Hub tests, and what Python computes from them."""
import json
from pathlib import Path


def moe_state_dict():
    """A tiny Mixtral-like state dict: BF16 attention and experts, F32 router and norms,
    shared expert, I64 buffer — several dtypes, expert and non-expert tensors."""
    import torch

    torch.manual_seed(0)
    tensors = {"model.embed_tokens.weight": torch.randn(64, 16, dtype=torch.bfloat16),
               "model.norm.weight": torch.ones(16, dtype=torch.float32),
               "lm_head.weight": torch.randn(64, 16, dtype=torch.bfloat16),
               "model.rotary.inv_freq_index": torch.arange(8, dtype=torch.int64)}
    for layer in range(2):
        prefix = f"model.layers.{layer}"
        tensors[f"{prefix}.self_attn.q_proj.weight"] = torch.randn(16, 16, dtype=torch.bfloat16)
        tensors[f"{prefix}.self_attn.k_proj.weight"] = torch.randn(8, 16, dtype=torch.bfloat16)
        tensors[f"{prefix}.block_sparse_moe.gate.weight"] = torch.randn(4, 16, dtype=torch.float32)
        tensors[f"{prefix}.mlp.shared_experts.down_proj.weight"] = torch.randn(
            16, 24, dtype=torch.bfloat16)
        for expert in range(4):
            for name, shape in (("w1", (24, 16)), ("w2", (16, 24)), ("w3", (24, 16))):
                tensors[f"{prefix}.block_sparse_moe.experts.{expert}.{name}.weight"] = torch.randn(
                    *shape, dtype=torch.bfloat16)
    return tensors


MOE_CONFIG = {"architectures": ["MixtralForCausalLM"], "model_type": "mixtral",
              "num_attention_heads": 4, "num_key_value_heads": 2, "num_local_experts": 4,
              "hidden_size": 16}


def write_sharded_checkpoint(folder: Path, tensors: dict, max_shard_size: int = 8_000) -> Path:
    """save_torch_state_dict, as transformers' save_pretrained shards: index.json + shards."""
    from huggingface_hub import save_torch_state_dict

    folder.mkdir(parents=True, exist_ok=True)
    save_torch_state_dict(tensors, folder, max_shard_size=max_shard_size)
    (folder / "config.json").write_text(json.dumps(MOE_CONFIG))
    return folder


def expected_facts(folder: Path) -> dict:
    """What Python computes from the checkpoint: bytes of each tensor as loaded by safetensors."""
    from safetensors.torch import load_file

    per_tensor = {}
    for shard in sorted(folder.glob("*.safetensors")):
        for name, tensor in load_file(shard).items():
            per_tensor[name] = {"bytes": tensor.numel() * tensor.element_size(),
                                "dtype": str(tensor.dtype), "shape": list(tensor.shape),
                                "file": shard.name}
    return per_tensor


def repo_files(folder: Path) -> dict:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}
