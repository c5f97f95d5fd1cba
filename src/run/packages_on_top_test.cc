#include "run/packages_on_top.h"

#include <gtest/gtest.h>

namespace canrun::run {
namespace {

using Names = std::vector<std::string>;

struct Case {
  std::string_view name;
  std::string_view error;
  Names distributions;
  Names unreviewed;
};

// Error texts as transformers 5.18 and Python print them.
const Case kCases[] = {
    {"a tiktoken file without tiktoken (chained)",
     "Traceback (most recent call last):\n"
     "  File \".../convert_slow_tokenizer.py\", line 1937, in load_tiktoken_bpe\n"
     "ModuleNotFoundError: No module named 'tiktoken'\n\n"
     "During handling of the above exception, another exception occurred:\n\n"
     "ValueError: `tiktoken` is required to read a `tiktoken` file. Install it with `pip install "
     "tiktoken`.\n",
     {"tiktoken"},
     {}},
    {"requires_backends",
     "ImportError: \nLlamaTokenizer requires the SentencePiece library but it "
     "was not found in your environment. Check out the instructions",
     {"sentencepiece"},
     {}},
    {"a submodule of a reviewed package",
     "ModuleNotFoundError: No module named 'google.protobuf'",
     {"protobuf"},
     {}},
    {"a submodule's top level is what the map knows",
     "No module named 'einops.layers.torch'",
     {"einops"},
     {}},
    {"remote code's imports, reviewed and not",
     "ImportError: This modeling file requires the following packages that were not found in "
     "your environment: einops, timm, flash_attn. Run `pip install einops timm flash_attn`",
     {"einops", "timm"},
     {"flash_attn"}},
    {"a name of the repository's choosing is never installed",
     "ModuleNotFoundError: No module named 'evil_package'",
     {},
     {"evil_package"}},
    {"each once, in order",
     "No module named 'timm'\nNo module named 'sentencepiece'\nNo module named 'timm'",
     {"timm", "sentencepiece"},
     {}},
    {"not a missing module", "RuntimeError: shape mismatch", {}, {}},
};

TEST(PackagesOnTop, ReadsWhatATracebackSaysIsMissing) {
  for (const Case& c : kCases) {
    const PackageRequest request = packages_for(c.error);
    EXPECT_EQ(request.distributions, c.distributions) << c.name;
    EXPECT_EQ(request.unreviewed, c.unreviewed) << c.name;
  }
}

TEST(PackagesOnTop, OnlyReviewedDistributions) {
  EXPECT_EQ(reviewed_distribution("google.protobuf"), "protobuf");
  EXPECT_EQ(reviewed_distribution("tiktoken.load"), "tiktoken");
  EXPECT_FALSE(reviewed_distribution("google"));
  EXPECT_FALSE(reviewed_distribution("torch"));
}

}  // namespace
}  // namespace canrun::run
