// The judge's files (judge/judge.py, judge/labelled.jsonl, judge/calibrations/*.json), embedded at
// build time by src/recipe/embed_templates.cmake so the binary is self-contained.
#pragma once

#include <map>
#include <string_view>

namespace canrun::judge {

//! "judge" → judge/judge.py, "labelled" → judge/labelled.jsonl, "calibration-<key>" →
//! judge/calibrations/calibration-<key>.json
const std::map<std::string_view, std::string_view>& judge_files();

}  // namespace canrun::judge
