// The result-line protocol between run.py and canrun: run.py prints exactly one line
//   CANRUN_RESULT {json}
// on stdout (rank 0). canrun takes the last such line of the captured stdout.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace canrun::run {

//! Graphs the compiler found in its cache, and compiled anew, by the compiler's own count.
struct CompileCacheCounts {
  std::int64_t hits = 0;
  std::int64_t misses = 0;
  friend bool operator==(const CompileCacheCounts&, const CompileCacheCounts&) = default;
};

struct RunReport {
  bool ok = false;
  std::string stage;  //!< load, compile, generate (failure) or done
  std::vector<std::int64_t> tokens;
  std::string text;
  std::optional<double> load_s, compile_s, generate_s, ttft_s, decode_tokens_per_s;
  std::optional<std::int64_t> peak_device_memory_bytes;
  std::map<std::string, std::string> versions;
  std::string error;                     //!< traceback text
  std::vector<std::string> error_types;  //!< exception class names, outermost first
  //! Set when the backend counts its compile cache's hits (inductor's FX graph cache).
  std::optional<CompileCacheCounts> compile_cache;
  //! The teacher-forced pass, run when canrun gave run.py the CPU reference's tokens (see
  //! kReferenceTokensVariable): the share of positions where the model's argmax was the
  //! reference's next token, how many positions were compared, the pass's seconds and the
  //! graphs torch.compile compiled during it (0 when it reused the compiled steps, as it must).
  std::optional<double> agreement;
  std::optional<std::int64_t> agreement_positions;
  std::optional<double> agreement_s;
  std::optional<std::int64_t> agreement_compiled_graphs;
  //! Whether each position of the teacher-forced pass agreed (true) — over all the reference's
  //! tokens, the long generation's included; `agreement` is over the first new_tokens of them.
  std::vector<bool> agreed;
  //! The long generation (--long-tokens): the compiled model's free-running tokens (the CPU
  //! reference's: all it generated, its first new_tokens being `tokens`), their decode speed,
  //! and the graphs compiled during it (0 when it reused the first call's, as it should).
  std::vector<std::int64_t> long_tokens;
  std::optional<double> long_decode_tokens_per_s;
  std::optional<std::int64_t> long_compiled_graphs;
  //! The eager baseline (the same model in the same process, before it was compiled): the
  //! measured call's seconds, first-token time and decode speed (generation) or the task's
  //! throughput in throughput_unit, its peak memory, and a note when it was cut or failed.
  std::optional<double> eager_generate_s, eager_ttft_s, eager_decode_tokens_per_s, eager_throughput;
  std::optional<std::int64_t> eager_peak_memory_bytes;
  std::string eager_note;
  //! Eager runs (the CPU reference): at each generated position, the gap between the two best
  //! logits as a share of the position's largest logit magnitude (verify::logits_tie_tolerance
  //! tells a near-tie).
  std::vector<double> margins;
  //! Embedding tasks: the embeddings of the recipe's sentences encoded in batches, and one at
  //! a time; the first `queries` sentences are the queries of a retrieval set over the rest.
  std::vector<std::vector<double>> embeddings, embeddings_one_at_a_time;
  std::int64_t queries = 0;
  //! feature-extraction: how the token states became one vector ("cls pooling, normalized") and
  //! where the recipe read it ("from 1_Pooling/config.json", or the default mean's reason).
  std::string pooling, pooling_source;
  //! Encoder-decoder generation: the text the encoder read and, in brackets, what the recipe
  //! added to the prompt for the model's family ("translate English to French: The house …
  //! (T5 task prefix … from the config's task_specific_params)").
  std::string source;
  //! The task's throughput figure and its unit ("sentences/s"), when the recipe measures one.
  std::optional<double> throughput;
  std::string throughput_unit;
  //! Files run.py wrote in its folder, named relative to it: the arrays its task compares
  //! (outputs.safetensors: "logits", or "image") and the image it generated (image.png).
  std::string outputs_file, image_file;
  //! The image the recipe drew and gave the model (image classification), kept beside the row.
  std::string input_image_file;
  //! The clip run.py gave a speech recognizer (a WAV in its folder), when it says.
  std::string input_audio_file;
  //! Text-to-image: NaN values in the generated image before its conversion to 8 bits, and the
  //! seconds to the first image, compile included.
  std::optional<std::int64_t> nan_values;
  std::optional<double> time_to_first_image_s;
};

//! The variable that gives run.py the CPU reference's tokens: the path of a JSON file
//! {"tokens": [...]}. Unset (a run.py run alone), run.py skips the teacher-forced pass.
inline constexpr std::string_view kReferenceTokensVariable = "CANRUN_REFERENCE_TOKENS";

inline constexpr std::string_view kResultMarker = "CANRUN_RESULT ";

//! The last result line of `stdout_text`; nullopt when there is none; kCorrupt when the line
//! is there but is not the JSON object the protocol says.
Result<std::optional<RunReport>> parse_result_line(std::string_view stdout_text);

}  // namespace canrun::run
