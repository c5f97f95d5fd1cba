// DiskBudget on a real HF cache folder in a temp dir, no network: the bytes held never pass the
// budget (and neither do the bytes on disk), the user's blobs are never evicted, blobs a
// pending test shares are kept, eviction leaves no dangling link or ref, and the ledger carries
// the campaign's blobs across a restart.
#include "campaign/disk_budget.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <thread>

#include "core/atomic_file.h"
#include "core/test_temp_dir.h"

namespace canrun::campaign {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const std::string kCommitA(40, 'a');
const std::string kCommitB(40, 'b');
const std::string kCommitC(40, 'c');

ModelId model(std::string_view text) { return *ModelId::parse(text); }

//! A blob name unique to `tag` (64 hex digits, as an LFS sha256).
std::string blob(char tag) { return std::string(64, tag); }

struct Cache {
  testing::TempDir dir{"disk-budget"};
  hub::HfCache cache{dir.path() / "hub"};

  //! What a download would do: the blob written, the snapshot linked.
  void put(const ModelId& id, const std::string& commit, const std::string& file,
           const std::string& blob_name, std::uint64_t bytes) {
    const fs::path path = cache.blob_path(id, blob_name);
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << std::string(bytes, 'x');
    ASSERT_TRUE(cache.link(id, *Revision::parse(commit), commit, file, blob_name).ok());
  }
  bool has_blob(const ModelId& id, const std::string& blob_name) const {
    return fs::is_regular_file(cache.blob_path(id, blob_name));
  }
  fs::path snapshot(const ModelId& id, const std::string& commit) const {
    return cache.repo_dir(id) / "snapshots" / commit;
  }
  //! Bytes of every blob and partial file in the cache.
  std::uint64_t bytes_on_disk() const {
    std::uint64_t total = 0;
    if (!fs::exists(cache.root())) return 0;
    for (const auto& entry : fs::recursive_directory_iterator(cache.root())) {
      if (entry.is_regular_file() && !entry.is_symlink() &&
          entry.path().parent_path().filename() == "blobs") {
        total += entry.file_size();
      }
    }
    return total;
  }
  //! Symlinks under snapshots/ whose blob is gone: what scan_cache_dir warns about.
  int dangling_links() const {
    int count = 0;
    for (const auto& entry : fs::recursive_directory_iterator(cache.root())) {
      if (entry.is_symlink() && !fs::exists(entry.path())) ++count;
    }
    return count;
  }
  std::unique_ptr<DiskBudget> open(std::uint64_t budget,
                                   std::optional<fs::path> ledger = std::nullopt) {
    auto opened = DiskBudget::open(cache, {budget, std::move(ledger)});
    EXPECT_TRUE(opened.ok()) << opened.error().message();
    return std::move(opened).value();
  }
};

CheckpointNeed need(const ModelId& id, const std::string& commit,
                    std::vector<std::pair<char, std::uint64_t>> blobs) {
  CheckpointNeed out{id, commit, {}};
  for (const auto& [tag, bytes] : blobs) out.blobs.push_back({blob(tag), bytes});
  return out;
}

TEST(DiskBudget, FetchesOneAfterAnotherEvictingReleasedOnesAndNeverPassesTheBudget) {
  Cache cache;
  auto budget = cache.open(100);
  const ModelId a = model("org/a"), b = model("org/b"), c = model("org/c");

  auto ticket_a = budget->acquire(need(a, kCommitA, {{'1', 40}, {'2', 20}}));
  ASSERT_TRUE(ticket_a.ok()) << ticket_a.error().message();
  EXPECT_EQ(ticket_a->bytes_reserved, 60u);
  cache.put(a, kCommitA, "model.safetensors", blob('1'), 40);
  cache.put(a, kCommitA, "config.json", blob('2'), 20);

  // B does not fit beside A while A's test runs.
  auto early = budget->try_acquire(need(b, kCommitB, {{'3', 50}}));
  ASSERT_TRUE(early.ok());
  EXPECT_FALSE(early->has_value());
  EXPECT_TRUE(cache.has_blob(a, blob('1')));

  budget->release(*ticket_a);
  // Released, not deleted: A stays until its room is needed.
  EXPECT_TRUE(cache.has_blob(a, blob('1')));
  auto ticket_b = budget->try_acquire(need(b, kCommitB, {{'3', 50}}));
  ASSERT_TRUE(ticket_b.ok() && ticket_b->has_value());
  cache.put(b, kCommitB, "model.safetensors", blob('3'), 50);
  // A's weights went (released first, and enough); its config stays until room is needed.
  EXPECT_FALSE(cache.has_blob(a, blob('1')));
  EXPECT_FALSE(fs::is_symlink(cache.snapshot(a, kCommitA) / "model.safetensors"));
  EXPECT_TRUE(fs::exists(cache.snapshot(a, kCommitA) / "config.json"));
  EXPECT_LE(cache.bytes_on_disk(), 100u);

  auto ticket_c = budget->acquire(need(c, kCommitC, {{'4', 30}}));
  ASSERT_TRUE(ticket_c.ok());
  cache.put(c, kCommitC, "model.safetensors", blob('4'), 30);
  EXPECT_EQ(budget->bytes_held(), 100u);
  EXPECT_EQ(cache.bytes_on_disk(), 100u);
  EXPECT_EQ(budget->peak_bytes_held(), 100u);
  EXPECT_EQ(cache.dangling_links(), 0);

  // At the end nothing the campaign brought is left: the repos it made are gone whole.
  budget->release(**ticket_b);
  budget->release(*ticket_c);
  ASSERT_TRUE(budget->evict_released().ok());
  EXPECT_EQ(budget->bytes_held(), 0u);
  EXPECT_FALSE(fs::exists(cache.cache.repo_dir(a)));
  EXPECT_FALSE(fs::exists(cache.cache.repo_dir(b)));
  EXPECT_FALSE(fs::exists(cache.cache.repo_dir(c)));
}

TEST(DiskBudget, AcquireWaitsForARelease) {
  Cache cache;
  auto budget = cache.open(100);
  const ModelId a = model("org/a"), b = model("org/b");
  auto ticket_a = budget->acquire(need(a, kCommitA, {{'1', 70}}));
  ASSERT_TRUE(ticket_a.ok());
  cache.put(a, kCommitA, "model.safetensors", blob('1'), 70);

  std::atomic<bool> acquired = false;
  std::thread fetcher([&] {
    auto ticket_b = budget->acquire(need(b, kCommitB, {{'2', 70}}));
    EXPECT_TRUE(ticket_b.ok());
    acquired = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(acquired);  // A is still held: there cannot be room
  budget->release(*ticket_a);
  fetcher.join();
  EXPECT_TRUE(acquired);
  EXPECT_EQ(budget->bytes_held(), 70u);
  EXPECT_EQ(budget->peak_bytes_held(), 70u);
}

TEST(DiskBudget, CancelEndsAWait) {
  Cache cache;
  auto budget = cache.open(100);
  auto ticket_a = budget->acquire(need(model("org/a"), kCommitA, {{'1', 70}}));
  ASSERT_TRUE(ticket_a.ok());
  std::thread fetcher([&] {
    auto ticket_b = budget->acquire(need(model("org/b"), kCommitB, {{'2', 70}}));
    ASSERT_FALSE(ticket_b.ok());
    EXPECT_EQ(ticket_b.error().code(), ErrorCode::kUnavailable);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  budget->cancel();
  fetcher.join();
}

TEST(DiskBudget, AStopTokenEndsAWait) {
  Cache cache;
  auto budget = cache.open(100);
  auto ticket_a = budget->acquire(need(model("org/a"), kCommitA, {{'1', 70}}));
  ASSERT_TRUE(ticket_a.ok());
  std::stop_source stop;
  std::thread fetcher([&] {
    auto ticket_b = budget->acquire(need(model("org/b"), kCommitB, {{'2', 70}}), stop.get_token());
    ASSERT_FALSE(ticket_b.ok());
    EXPECT_THAT(ticket_b.error().message(), HasSubstr("stopped"));
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  stop.request_stop();
  fetcher.join();
}

TEST(DiskBudget, ACheckpointLargerThanTheBudgetIsRefusedAtOnce) {
  Cache cache;
  auto budget = cache.open(100);
  auto ticket = budget->try_acquire(need(model("org/huge"), kCommitA, {{'1', 60}, {'2', 41}}));
  ASSERT_FALSE(ticket.ok());
  EXPECT_EQ(ticket.error().code(), ErrorCode::kFailedCheck);
  EXPECT_TRUE(ticket.error().has_reason(kOverDiskBudget));
  EXPECT_THAT(ticket.error().message(), HasSubstr("org/huge"));
  EXPECT_EQ(budget->bytes_held(), 0u);
}

TEST(DiskBudget, TheUsersBlobsCostNothingAndAreNeverEvicted) {
  Cache cache;
  const ModelId user = model("org/user-model");
  // The user's own download, before the campaign: a blob, a snapshot link, refs/main.
  cache.put(user, kCommitA, "model.safetensors", blob('u'), 80);
  ASSERT_TRUE(cache.cache.write_ref(user, Revision::main_branch(), kCommitA).ok());
  auto budget = cache.open(100);

  // A checkpoint that shares the user's blob and adds one.
  auto ticket = budget->acquire(need(user, kCommitB, {{'u', 80}, {'n', 30}}));
  ASSERT_TRUE(ticket.ok());
  EXPECT_EQ(ticket->bytes_reserved, 30u);
  cache.put(user, kCommitB, "model.safetensors", blob('u'), 80);
  cache.put(user, kCommitB, "extra.json", blob('n'), 30);
  ASSERT_TRUE(cache.cache.write_ref(user, Revision::main_branch(), kCommitB).ok());
  budget->release(*ticket);

  // Room for 90 more: only the campaign's blob may go.
  auto other = budget->acquire(need(model("org/other"), kCommitC, {{'o', 90}}));
  ASSERT_TRUE(other.ok()) << other.error().message();
  EXPECT_TRUE(cache.has_blob(user, blob('u')));
  EXPECT_TRUE(fs::is_symlink(cache.snapshot(user, kCommitA) / "model.safetensors"));
  EXPECT_FALSE(cache.has_blob(user, blob('n')));
  // Commit B still links the user's blob, so its folder stays, less the evicted file.
  EXPECT_TRUE(fs::exists(cache.snapshot(user, kCommitB) / "model.safetensors"));
  EXPECT_FALSE(fs::is_symlink(cache.snapshot(user, kCommitB) / "extra.json"));
  EXPECT_EQ(cache.dangling_links(), 0);
  EXPECT_EQ(cache.cache.commit_of(user, Revision::main_branch()), kCommitB);

  // evict_released() never touches the user's files either.
  budget->release(*other);
  ASSERT_TRUE(budget->evict_released().ok());
  EXPECT_TRUE(cache.has_blob(user, blob('u')));
  EXPECT_EQ(budget->bytes_held(), 0u);
}

TEST(DiskBudget, ARefToAnEvictedSnapshotGoesBackToItsValueAtOpening) {
  Cache cache;
  const ModelId id = model("org/m");
  cache.put(id, kCommitA, "config.json", blob('u'), 10);
  ASSERT_TRUE(cache.cache.write_ref(id, Revision::main_branch(), kCommitA).ok());
  auto budget = cache.open(100);
  auto ticket = budget->acquire(need(id, kCommitB, {{'n', 50}}));
  ASSERT_TRUE(ticket.ok());
  cache.put(id, kCommitB, "model.safetensors", blob('n'), 50);
  ASSERT_TRUE(cache.cache.write_ref(id, Revision::main_branch(), kCommitB).ok());
  budget->release(*ticket);
  ASSERT_TRUE(budget->evict_released().ok());
  EXPECT_FALSE(fs::exists(cache.snapshot(id, kCommitB)));
  EXPECT_EQ(cache.cache.commit_of(id, Revision::main_branch()), kCommitA);
  EXPECT_TRUE(cache.has_blob(id, blob('u')));
}

TEST(DiskBudget, ABlobAPendingTestSharesIsKept) {
  Cache cache;
  auto budget = cache.open(100);
  const ModelId id = model("org/shared");
  // Two commits of one repo share the 40-byte weights; each adds a small file.
  auto first = budget->acquire(need(id, kCommitA, {{'s', 40}, {'1', 30}}));
  ASSERT_TRUE(first.ok());
  cache.put(id, kCommitA, "model.safetensors", blob('s'), 40);
  cache.put(id, kCommitA, "config.json", blob('1'), 30);
  auto second = budget->acquire(need(id, kCommitB, {{'s', 40}, {'2', 20}}));
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->bytes_reserved, 20u);  // the shared blob is held once
  cache.put(id, kCommitB, "model.safetensors", blob('s'), 40);
  cache.put(id, kCommitB, "config.json", blob('2'), 20);
  EXPECT_EQ(budget->bytes_held(), 90u);

  budget->release(*first);
  auto third = budget->acquire(need(model("org/next"), kCommitC, {{'3', 40}}));
  ASSERT_TRUE(third.ok()) << third.error().message();
  EXPECT_TRUE(cache.has_blob(id, blob('s')));  // commit B's test still needs it
  EXPECT_TRUE(cache.has_blob(id, blob('2')));
  EXPECT_FALSE(cache.has_blob(id, blob('1')));  // only commit A's own file went
  EXPECT_TRUE(fs::exists(cache.snapshot(id, kCommitB) / "model.safetensors"));
  EXPECT_EQ(cache.dangling_links(), 0);
  EXPECT_EQ(budget->bytes_held(), 100u);
  EXPECT_LE(budget->peak_bytes_held(), 100u);
}

TEST(DiskBudget, ASameCheckpointTwiceIsHeldOnceAndKeptUntilBothAreReleased) {
  Cache cache;
  auto budget = cache.open(100);
  const ModelId id = model("org/twice");
  auto first = budget->acquire(need(id, kCommitA, {{'1', 60}}));
  auto second = budget->acquire(need(id, kCommitA, {{'1', 60}}));
  ASSERT_TRUE(first.ok() && second.ok());
  cache.put(id, kCommitA, "model.safetensors", blob('1'), 60);
  EXPECT_EQ(budget->bytes_held(), 60u);
  budget->release(*first);
  auto other = budget->try_acquire(need(model("org/other"), kCommitB, {{'2', 50}}));
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(other->has_value());  // the second test still holds it
  EXPECT_TRUE(cache.has_blob(id, blob('1')));
  budget->release(*second);
  budget->release(*second);  // twice: ignored
  other = budget->try_acquire(need(model("org/other"), kCommitB, {{'2', 50}}));
  ASSERT_TRUE(other.ok() && other->has_value());
  EXPECT_EQ(budget->bytes_held(), 50u);
}

TEST(DiskBudget, RoomReservedButNeverWrittenIsGivenBackAtRelease) {
  Cache cache;
  auto budget = cache.open(100);
  auto ticket = budget->acquire(need(model("org/failed"), kCommitA, {{'1', 70}}));
  ASSERT_TRUE(ticket.ok());
  EXPECT_EQ(budget->bytes_held(), 70u);
  budget->release(*ticket);  // the download failed before writing anything
  EXPECT_EQ(budget->bytes_held(), 0u);
  EXPECT_TRUE(budget->campaign_blobs().empty());
}

TEST(DiskBudget, TheLedgerKeepsTheCampaignsBlobsAcrossARestart) {
  Cache cache;
  const fs::path ledger = cache.dir.path() / "campaign" / "fetched-blobs";
  const ModelId id = model("org/m");
  {
    auto budget = cache.open(100, ledger);
    auto ticket = budget->acquire(need(id, kCommitA, {{'1', 60}}));
    ASSERT_TRUE(ticket.ok());
    cache.put(id, kCommitA, "model.safetensors", blob('1'), 60);
    auto partial = budget->acquire(need(id, kCommitB, {{'2', 30}}));
    ASSERT_TRUE(partial.ok());
    // Killed mid-download: 10 of 30 bytes in the .incomplete.
    std::ofstream(cache.cache.blob_path(id, blob('2')).string() + ".incomplete") << "0123456789";
  }
  auto text = read_file(ledger);
  ASSERT_TRUE(text.ok());
  EXPECT_THAT(*text, HasSubstr("models--org--m/" + blob('1')));
  EXPECT_THAT(*text, HasSubstr("models--org--m/" + blob('2')));

  // Resumed: both count as the campaign's, held by no ticket, so they may be evicted.
  auto budget = cache.open(100, ledger);
  EXPECT_EQ(budget->bytes_held(), 70u);
  auto big = budget->acquire(need(model("org/big"), kCommitC, {{'3', 95}}));
  ASSERT_TRUE(big.ok()) << big.error().message();
  EXPECT_FALSE(cache.has_blob(id, blob('1')));
  EXPECT_FALSE(fs::exists(cache.cache.blob_path(id, blob('2')).string() + ".incomplete"));

  // Without the ledger they would have been the user's.
  Cache other;
  other.put(id, kCommitA, "model.safetensors", blob('1'), 60);
  auto fresh = other.open(100);
  EXPECT_EQ(fresh->bytes_held(), 0u);
}

TEST(DiskBudget, AMalformedLedgerLineIsAnErrorNamingIt) {
  Cache cache;
  const fs::path ledger = cache.dir.path() / "ledger";
  ASSERT_TRUE(write_file_atomically(ledger, "models--org--m/../../etc\n").ok());
  auto budget = DiskBudget::open(cache.cache, {100, ledger});
  ASSERT_FALSE(budget.ok());
  EXPECT_EQ(budget.error().code(), ErrorCode::kCorrupt);
  EXPECT_THAT(budget.error().message(), HasSubstr("line 1"));
}

TEST(DiskBudget, AZeroBudgetIsBadInput) {
  Cache cache;
  auto budget = DiskBudget::open(cache.cache, {0, std::nullopt});
  ASSERT_FALSE(budget.ok());
  EXPECT_EQ(budget.error().code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace canrun::campaign
