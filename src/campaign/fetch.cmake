# canrun_campaign_fetch: a campaign's checkpoints fetched into the HF cache ahead of their runs,
# within a disk budget (disk_budget: accounting and eviction; fetch: the prefetch thread).
# Included from src/campaign/CMakeLists.txt.
add_library(canrun_campaign_fetch STATIC
  ${CMAKE_CURRENT_LIST_DIR}/disk_budget.cc
  ${CMAKE_CURRENT_LIST_DIR}/fetch.cc)
target_link_libraries(canrun_campaign_fetch PUBLIC canrun_hub canrun_core)

canrun_unit_test(disk_budget_test ${CMAKE_CURRENT_LIST_DIR}/disk_budget_test.cc)
target_link_libraries(disk_budget_test PRIVATE canrun_campaign_fetch)
