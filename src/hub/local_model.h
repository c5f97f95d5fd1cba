// Where a model's files are on this machine: a local folder, or the local Hugging Face cache
// (HfCache: the layout huggingface_hub and transformers share). For models canrun runs
// without asking the Hub, like the judge; a test resolves its MODEL with trial/checkpoint.h.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"

namespace canrun::hub {

struct LocalModel {
  std::string model_id;   //!< Hub id, or "local/<folder name>" for a folder
  std::string load_from;  //!< what from_pretrained gets: the Hub id, or the folder's path
  std::string revision;   //!< commit when known, else the branch or tag asked for
  std::optional<std::string> commit;
  std::filesystem::path folder;  //!< the files on disk
  bool from_hf_cache = false;    //!< run with HF_HUB_OFFLINE=1: the cache has it all
};

//! Whether MODEL names a local folder rather than a Hub id: it looks like a path (it starts
//! with "./", "../", "/" or "~", or is "." or "..") or names a directory that exists. One rule
//! for every command that takes a MODEL.
bool names_folder(std::string_view model);

//! The folder MODEL names (names_folder), with a leading "~" or "~/" read as $HOME; kNotFound
//! "no such folder: MODEL" when it is not a directory.
Result<std::filesystem::path> model_folder(std::string_view model);

//! `model` is a folder (holding config.json) or a Hub id found in the HF cache at `revision`.
//! kNotFound says where it looked; kInvalidArgument for a malformed id or revision.
Result<LocalModel> find_local_model(std::string_view model, std::string_view revision);

//! "local/<folder name>", the name canrun gives a model in a folder (sanitised, at most 96
//! characters of name).
std::string local_model_id(const std::filesystem::path& folder);

//! The folder absolute and normal, without a trailing separator.
std::filesystem::path normal_folder(const std::filesystem::path& folder);

}  // namespace canrun::hub
