#include "dataset/card.h"

#include <fmt/format.h>

#include "core/verdict_result.h"
#include "dataset/schema.h"
#include "verify/verification.h"

namespace canrun::dataset {
namespace {

//! Text safe inside a Markdown table cell.
std::string cell(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

constexpr std::string_view kFrontMatter = R"(---
license: apache-2.0
pretty_name: canrun results
language:
- en
tags:
- canrun
- model-compatibility
- torch-compile
- trainium
- aws-neuron
- tabular
configs:
- config_name: default
  data_files: "data/*.parquet"
---
)";

constexpr std::string_view kQueries = R"(## How to query

Every file shares one schema, so the whole `data/` folder reads as one table.

pandas (pyarrow engine):

```python
import pandas as pd

df = pd.read_parquet("DATASET/data")
df[df.model_id == "Qwen/Qwen3-0.6B"][
    ["compiler_version", "library", "library_version", "cores", "result"]
]
```

The query the torch-neuronx model support Space publishes also works unchanged:
`neuronx_cc` and `neuron_cores` are `compiler_version` and `cores` under that Space's names,
set on rows of the `neuron` backend and null on every other, so they exist in every file
without tying the schema to one backend.

```python
df[df.model_id == "Qwen/Qwen3-0.6B"][["neuronx_cc", "library", "library_version", "neuron_cores", "result"]]
```

DuckDB:

```sql
SELECT model_id, compiler_version, library_version, cores, result
FROM 'DATASET/data/*.parquet'
WHERE model_id = 'Qwen/Qwen3-0.6B'
ORDER BY started_at DESC;
```

Regressions between two stacks from the command line:
`canrun dataset diff DATASET --from <stack> --to <stack>` (exit 1 when there are any).
)";

}  // namespace

//! What a census verdict means, and what it does not (src/census).
constexpr std::string_view kCensus = R"(
# An architecture census

This is a census dataset (`canrun census`): each row is one model type of a stack's
transformers, as a tiny checkpoint that canrun built from the type's own config class (shrunk:
hidden size 64, 2 to 4 layers, 4 heads, a few MiB) with random weights drawn from a fixed seed,
tested like any model. `canrun-census/<type>` is the type on one core, its tokens compared with
the CPU reference's; `canrun-census-sharded/<type>` is the same checkpoint over 2 cores with the
parallel plan the stack offers (tensor parallel, or expert parallel for a mixture of experts),
decided by teacher-forced agreement with the CPU reference (`verification` = `agreement`: random
weights write no English to judge). `model_type` names the type; `claims_fullgraph`,
`claims_tp_plan` and `claims_ep_plan` say what the stack's transformers claims for it. A type in
a task's mapping that belongs to another task is EXCLUDED `other_task`; one that could not be
built is EXCLUDED `build_failed`, its error saying at which step.

What a census verdict means: the type's modelling code path, under the stack's
`torch.compile` backend with a static cache, compiles, runs and computes what eager PyTorch on
the CPU computes (and, sharded, its parallel plan works). What it does not mean: that a real
checkpoint of that type runs: real configs use features a tiny one leaves at their defaults
(other attention kinds, rope scalings, sizes), real weights need the memory the planner plans
for, and random weights say nothing about the quality of the text.
)";

std::string render_card(const std::vector<StackSummary>& stacks, bool census) {
  std::string out(kFrontMatter);
  if (census) out += kCensus;
  out += R"(
# canrun results

Does a Hugging Face Hub model run, unmodified, on an ML accelerator, and how well? Each row
is one model (for one task) tested or excluded on one software stack by canrun: load
with `from_pretrained` (or `SentenceTransformer`, or diffusers' `DiffusionPipeline`), compile
with `torch.compile(backend=...)`, run the task's fixed inputs (32 greedy tokens for
generation, sentences for embeddings and encoders, one image for text-to-image), verify the
output. One Parquet file per stack:
`data/<backend>__<compiler>-<version>__<library>-<version>.parquet` (characters other than
letters, digits, `.` and `+` in a version are written `%XX`), where the library is
transformers, which every stack has: a row whose task's library runs on top of it
(`library` = `sentence-transformers` or `diffusers`) is in the file of its stack's
transformers version, so two stacks that differ only in transformers keep their own rows; two
that differ only in the library on top share a file, and `stack` says which ran. Each
failure's run log (what run.py printed, the end kept, at most 256 KiB) is beside the data:
`logs/<stack>/<model id>/<task>.log`, where `<stack>` is the file's name without `.parquet`;
a text-to-image row's images (PNG, at most 8 MiB each) are at
`images/<stack>/<model id>/<task>.image.png` and `.reference_image.png`, an image classifier's
input at `.input_image.png` and a speech recognizer's clip at `.input_audio.wav`, named by the
row's `output_files`.

## Stacks

)";
  if (stacks.empty()) {
    out += "No results yet.\n";
  } else {
    out += "| file | backend | compiler | library | rows | PASS | not PASS | EXCLUDED |\n";
    out += "|---|---|---|---|---:|---:|---:|---:|\n";
    for (const StackSummary& stack : stacks) {
      auto count = [&](std::string_view result) {
        const auto found = stack.results.find(std::string(result));
        return found == stack.results.end() ? std::int64_t{0} : found->second;
      };
      const std::int64_t pass = count("PASS");
      const std::int64_t excluded = count("EXCLUDED");
      out += fmt::format("| `{}` | {} | {} {} | {} {} | {} | {} | {} | {} |\n",
                         cell(stack.key.file_name()), cell(stack.key.backend),
                         cell(stack.key.compiler), cell(stack.key.compiler_version),
                         cell(stack.key.library), cell(stack.key.library_version), stack.rows, pass,
                         stack.rows - pass - excluded, excluded);
    }
  }
  out += fmt::format(
      "\n## Columns\n\nSchema version {0}, recorded in each file's Parquet key-value metadata "
      "under `{1}`. A column added after version 1 is null in rows recorded before it existed; "
      "`canrun dataset migrate DATASET` rewrites older files in version {0}, so the whole "
      "folder keeps one schema.\n\n",
      kCurrentSchemaVersion, kSchemaVersionKey);
  out += "| column | type | nullable | since version | meaning |\n|---|---|---|---:|---|\n";
  for (const ColumnSpec& column : verdict_columns()) {
    out +=
        fmt::format("| `{}` | `{}` | {} | {} | {} |\n", column.name, arrow_type_name(column),
                    is_nullable(column) ? "yes" : "no", column.since_version, cell(column.meaning));
  }
  out += "\n## Results\n\n| result | meaning |\n|---|---|\n";
  for (const auto& info : verdict_results()) {
    out += fmt::format("| `{}` | {} |\n", info.name, cell(info.meaning));
  }
  out += fmt::format("\nExclusion reasons: {}, or a curator's note.\n\n",
                     fmt::join(kExclusionReasons, ", "));
  out += fmt::format(
      "## Verification\n\n"
      "`verification` names the evidence that decided a verdict on a run that generated:\n\n"
      "| verification | evidence |\n|---|---|\n");
  for (const auto& info : verify::kVerifications) {
    out += fmt::format("| `{}` | {} |\n", info.name, cell(info.meaning));
  }
  out += fmt::format(
      "\n`agreement` is teacher-forced agreement with the CPU reference. canrun computes the "
      "reference before the run and gives run.py its tokens; after generating freely, run.py "
      "generates once more through the same compiled decode step (one token per step, so no new "
      "graph and no new compile), but at each step notes whether the model's own next token "
      "(argmax) is the reference's and then feeds the reference's token. `agreement` is the share "
      "of positions that agreed: it measures the backend at every position, even after one early "
      "token flip made the free-running text diverge (`match_tokens` counts only the tokens "
      "before the first difference). A sharded run needs at least {:.2f} to PASS. It is null when "
      "the run had no reference (the reference failed, or rows recorded before it existed). "
      "A `run.py` run alone skips this pass.\n\n",
      verify::kAgreementThreshold);
  out += kQueries;
  return out;
}

}  // namespace canrun::dataset
