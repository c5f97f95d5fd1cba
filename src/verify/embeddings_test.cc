#include "verify/embeddings.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace canrun::verify {
namespace {

const Embeddings kReference = {{1, 0, 0},       {0, 1, 0},  // two queries
                               {0.9, 0.1, 0},   {0.1, 0.9, 0.1},
                               {0.5, 0.5, 0.5}, {0, 0, 1}};  // four documents

TEST(EmbeddingsTest, SameEmbeddingsAgreeFully) {
  const EmbeddingComparison same = compare_embeddings(kReference, kReference, 2);
  EXPECT_TRUE(same.shape_error.empty());
  EXPECT_NEAR(same.min_cosine, 1.0, 1e-12);
  EXPECT_FALSE(same.query_differs.has_value());
}

TEST(EmbeddingsTest, ScaleDoesNotMatterDirectionDoes) {
  Embeddings got = kReference;
  for (double& value : got[4]) value *= 3;  // same direction
  EXPECT_NEAR(compare_embeddings(got, kReference, 2).min_cosine, 1.0, 1e-12);
  got[5] = {0, 0.2, 1};
  const EmbeddingComparison turned = compare_embeddings(got, kReference, 2);
  EXPECT_EQ(turned.worst, 5u);
  EXPECT_NEAR(turned.min_cosine, 1 / std::sqrt(1.04), 1e-12);
  for (double& value : got[0]) value = -value;  // a negated embedding: the opposite way
  EXPECT_NEAR(compare_embeddings(got, kReference, 2).min_cosine, -1.0, 1e-12);
}

TEST(EmbeddingsTest, NeighboursInAnotherOrderAreFound) {
  Embeddings got = kReference;
  got[3] = {0.95, 0.05, 0};  // now nearer to query 0 than document 2 is
  const EmbeddingComparison swapped = compare_embeddings(got, kReference, 2);
  ASSERT_TRUE(swapped.query_differs.has_value());
  EXPECT_EQ(*swapped.query_differs, 0u);
}

TEST(EmbeddingsTest, ShapesAndNonFiniteValuesCannotBeCompared) {
  EXPECT_NE(compare_embeddings({{1, 0}}, kReference, 2).shape_error, "");
  Embeddings shorter = kReference;
  shorter[2].pop_back();
  EXPECT_NE(compare_embeddings(shorter, kReference, 2).shape_error.find("sentence 3"),
            std::string::npos);
  Embeddings nan = kReference;
  nan[1][0] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(compare_embeddings(nan, kReference, 2).shape_error,
            "sentence 2's embedding holds NaN or infinite values (1 of 3)");
}

TEST(EmbeddingsTest, ThresholdsPerDtype) {
  EXPECT_GT(embedding_cosine_threshold("float32"), embedding_cosine_threshold("bfloat16"));
  EXPECT_EQ(embedding_cosine_threshold("bfloat16"), embedding_cosine_threshold("float16"));
}

}  // namespace
}  // namespace canrun::verify
