#include "dataset/schema.h"

#include <array>

namespace canrun::dataset {
namespace {

using R = VerdictRow;

const std::array<ColumnSpec, 61> kColumns = {{
    {"model_id", &R::model_id, "Hub model id, `namespace/name`."},
    {"revision", &R::revision, "Commit sha of the checkpoint tested (null when not resolved)."},
    {"task", &R::task, "Hub `pipeline_tag` the model was tested for, e.g. `text-generation`."},
    {"backend", &R::backend, "Backend profile: `neuron`, `cuda`, `cpu`."},
    {"device", &R::device, "Device the test ran on, e.g. `trn2`, `cuda`, `cpu`."},
    {"compiler", &R::compiler,
     "The `torch.compile` backend's compiler, e.g. `neuronx-cc`, `inductor`."},
    {"compiler_version", &R::compiler_version, "Its exact version, e.g. `2.16.372.0+4a9b2326`."},
    {"library", &R::library,
     "The library that loads the model for the task: `transformers`, `sentence-transformers`, "
     "`diffusers`; the others are in `stack`."},
    {"library_version", &R::library_version, "Its exact version."},
    {"result", &R::result, "The verdict; see the table of results below."},
    {"error", &R::error,
     "Useful tail of the error (at most 64 KiB; a longer text keeps its end after a line "
     "`[canrun: N bytes cut from the start]`)."},
    {"error_signature", &R::error_signature,
     "The error normalised (addresses, numbers, paths stripped) so equal failures group."},
    {"exclusion_reason", &R::exclusion_reason,
     "Why an EXCLUDED model was not run: a category or a curator's note."},
    {"cores", &R::cores, "Cores the plan used."},
    {"parallelism", &R::parallelism, "`none`, `tp` (tensor parallel) or `ep` (expert parallel)."},
    {"weights_bytes", &R::weights_bytes, "Size of the weights from the safetensors headers."},
    {"runtime_s", &R::runtime_s, "Wall time of the whole test in seconds, compile included."},
    {"load_s", &R::load_s, "Seconds to load (and shard) the model."},
    {"compile_s", &R::compile_s, "Seconds of the first call, which compiles."},
    {"generate_s", &R::generate_s,
     "Seconds of the measured call after compiling: generating the new tokens, encoding the "
     "sentences, running the batch, generating the image."},
    {"ttft_s", &R::ttft_s, "Time to first token in seconds."},
    {"decode_tokens_per_s", &R::decode_tokens_per_s, "Decode speed after the first token."},
    {"throughput", &R::throughput,
     "The task's throughput after compiling, in `throughput_unit`: decode speed for generation, "
     "sentences per second for embeddings and encoders, denoising steps per second for images.",
     6},
    {"throughput_unit", &R::throughput_unit, "`tokens/s`, `sentences/s` or `steps/s`.", 6},
    {"peak_device_memory_bytes", &R::peak_device_memory_bytes,
     "Peak device memory (host RSS of the process tree on `cpu`)."},
    {"new_tokens", &R::new_tokens, "Tokens generated (greedy)."},
    {"output_text", &R::output_text, "The generated text (at most 64 KiB)."},
    {"verification", &R::verification,
     "Which evidence decided: `reference` (one core: tokens equal to the CPU reference), "
     "`judge+agreement` (sharded: the judge and teacher-forced agreement), `judge` (sharded, "
     "no reference) or `agreement` (sharded, random weights: the agreement alone); see "
     "Verification below."},
    {"match_tokens", &R::match_tokens, "Leading generated tokens equal to the CPU reference."},
    {"judge_score", &R::judge_score,
     "The judge model's fluency score of `output_text` (sharded runs); PASS needs at least "
     "`judge_threshold`."},
    {"judge_threshold", &R::judge_threshold,
     "The judge's threshold, calibrated on canrun's labelled set for that judge model.", 2},
    {"judge_model", &R::judge_model, "The judge model (Hub id or folder) and its commit.", 2},
    {"agreement", &R::agreement,
     "Teacher-forced agreement with the CPU reference: fed the reference's tokens one at a "
     "time through its compiled decode step, the share of positions where the backend's "
     "argmax is the reference's next token (null when the run had no reference).",
     5},
    {"judge_parts", &R::judge_parts,
     "JSON object: the parts the judge combined into `judge_score` (sharded runs).", 5},
    {"flaky", &R::flaky,
     "Set when a campaign ran the test again (--retry): true when the verdict changed from the "
     "one before (the row keeps the new one), false when it held; null when run once.",
     3},
    {"output_files", &R::output_files,
     "JSON object: the task's kept files, by role (`image`, `reference_image`: the output and "
     "the CPU reference's; `input_image`: the image run.py drew and gave the model; PNG; "
     "`input_audio`: the clip a speech recognizer heard, WAV), as paths relative to the dataset "
     "folder (`images/...`); null when there is none.",
     6},
    {"neuronx_cc", &R::neuronx_cc,
     "The neuronx-cc version when `compiler` is `neuronx-cc`, else null: `compiler_version` "
     "under the name the torch-neuronx model support Space's published query reads.",
     4},
    {"neuron_cores", &R::neuron_cores,
     "The NeuronCores used when `backend` is `neuron`, else null: `cores` under the name that "
     "query reads.",
     4},
    {"isolation", &R::isolation,
     "How the run (run.py, and its CPU reference) was boxed: the parts of canrun's box this "
     "machine allowed, `user,net,mount,pid,pids` at most (namespaces: user, network with "
     "loopback only, mounts read-only but its own folders and the compile cache, PID; a pids "
     "cgroup capping its processes), or `none` (no box: the OS allowed none, or "
     "`--isolation none`). Whatever it says, the run got an allow-list of canrun's environment "
     "and no secret. Null on EXCLUDED rows and rows recorded before version 7.",
     7},
    {"model_type", &R::model_type,
     "The checkpoint's `model_type` (its config.json), the architecture whose modelling code ran: "
     "`llama`, `phimoe`. Null when the config names none, and on rows recorded before version 8.",
     8},
    {"claims_fullgraph", &R::claims_fullgraph,
     "What the stack's transformers claims for `model_type`: whether its model classes declare "
     "`_can_compile_fullgraph` (that they compile as one graph with a static cache). Null when "
     "it was not asked (the model type is unknown to the stack, or the row predates version 8).",
     8},
    {"claims_tp_plan", &R::claims_tp_plan,
     "Whether the stack's transformers defines a tensor-parallel plan for `model_type` "
     "(`base_model_tp_plan`). Null when it was not asked.",
     8},
    {"claims_ep_plan", &R::claims_ep_plan,
     "Whether the stack's transformers offers an expert-parallel plan for `model_type` "
     "(`base_model_ep_plan`, with DistributedConfig's `enable_expert_parallel`). Null when it "
     "was not asked.",
     8},
    {"near_tie", &R::near_tie,
     "One core, text generation, tokens that differ from the CPU reference's: true when the first "
     "differing token is one where the reference's two best logits were nearly tied (closer than "
     "1e-4 of the position's largest logit in float32, 5 % in bfloat16 or float16), so rounding "
     "decided it. Such a run PASSes when its teacher-forced `agreement` reaches the sharded "
     "threshold (fed the reference's tokens, it predicts them); else it is FAIL_MISMATCH, the "
     "near-tie noted. Null otherwise, and when the reference predates version 8.",
     8},
    {"eager_throughput", &R::eager_throughput,
     "The eager baseline's throughput, in `throughput_unit`: the same model in the same run.py "
     "process, on the same device and inputs, without `torch.compile`, run before it is compiled "
     "and measured as the compiled run is (a first call warms up, the second is measured; "
     "generation: decode speed). Null with `--no-perf` (the census runs without it), when the "
     "eager run failed (`eager_note`), and on rows recorded before version 9.",
     9},
    {"eager_ttft_s", &R::eager_ttft_s, "The eager baseline's time to first token (generation).", 9},
    {"eager_peak_memory_bytes", &R::eager_peak_memory_bytes,
     "Peak memory of the eager baseline, read as `memory_measure` says.", 9},
    {"eager_note", &R::eager_note,
     "Set when the eager baseline was cut (each eager call stops at the backend profile's "
     "`eager_max_s`, for a backend whose eager mode is slow: its figures are then over what it "
     "made) or failed (why; the compiled run went on). Null otherwise.",
     9},
    {"speedup", &R::speedup,
     "`throughput` ÷ `eager_throughput`: how many times faster the compiled model is than the same "
     "model eager, on the same device (above 1: faster).",
     9},
    {"memory_ratio", &R::memory_ratio,
     "Eager peak ÷ compiled peak (`eager_peak_memory_bytes` ÷ `peak_device_memory_bytes`), the "
     "compiler dashboard's compression ratio (above 1: the compiled model needs less).",
     9},
    {"memory_measure", &R::memory_measure,
     "How both peaks were read: `cuda` or `neuron`, the device allocator's peak, reset between "
     "the eager and the compiled run; `rss` (the `cpu` backend), the maximum resident size of "
     "run.py's process and its finished children (the compile workers), which only grows: the "
     "compiled peak includes the eager run's and the compiler's own memory, so `memory_ratio` "
     "is at most about 1 there and says how much compiling added.",
     9},
    {"long_tokens", &R::long_tokens,
     "Tokens of the long generation (`--long-tokens`, text-generation and image-text-to-text): "
     "after the 32-token check, the compiled model generates this many on the same compiled "
     "graphs (the static cache is sized once for the longest run). Null when off.",
     9},
    {"long_decode_tokens_per_s", &R::long_decode_tokens_per_s,
     "Decode speed of the long generation: the teacher-forced pass over the reference's tokens, "
     "which is the long generation when canrun gives run.py the reference (the compiled steps "
     "fed, and generating, the reference's tokens).",
     9},
    {"long_agreement", &R::long_agreement,
     "Teacher-forced agreement with the CPU reference over all `long_tokens` positions (one "
     "reference of that length, whose first tokens serve the 32-token check).",
     9},
    {"drifts_after", &R::drifts_after,
     "Set when `long_agreement` is below the agreement threshold (0.90): the model drifts from "
     "the reference after this many tokens (the start of the first 16-position window whose "
     "agreement is below the threshold, moved to its first disagreement). A row may PASS the "
     "32-token check and drift: the Space and `canrun test` say so beside the verdict.",
     9},
    {"stack", &R::stack, "JSON object of every package of the stack: name → version."},
    {"packages", &R::packages, "Packages to install on top of the base stack (pip specifiers)."},
    {"run_py", &R::run_py, "The self-contained script that reproduces the result."},
    {"started_at", &R::started_at, "When the test started (UTC)."},
    {"host", &R::host, "Host name the test ran on."},
    {"canrun_version", &R::canrun_version, "Version of canrun that recorded the row."},
}};

}  // namespace

std::span<const ColumnSpec> verdict_columns() { return kColumns; }

std::string_view arrow_type_name(const ColumnSpec& column) {
  static constexpr std::array<std::string_view, 9> kNames = {
      "string", "string", "int32", "int64", "double", "list<string>", "timestamp[us, tz=UTC]",
      "string", "bool"};
  static_assert(kNames.size() == std::variant_size_v<ColumnMember>);
  return kNames[column.member.index()];
}

bool is_nullable(const ColumnSpec& column) {
  return std::visit(
      [](auto member) {
        using Member = std::remove_cvref_t<decltype(std::declval<VerdictRow>().*member)>;
        return !std::is_same_v<Member, std::string> &&
               !std::is_same_v<Member, std::vector<std::string>> &&
               !std::is_same_v<Member, Timestamp> && !std::is_same_v<Member, VerdictResult>;
      },
      column.member);
}

}  // namespace canrun::dataset
