import contextlib
import importlib
import importlib.metadata
import json
import math
import os
import platform
import resource
import sys
import time
import traceback

# What is tested and how; canrun filled these in.
MODEL = {{MODEL}}  # Hub id, or a local folder
REVISION = {{REVISION}}
DTYPE = {{DTYPE}}  # torch dtype of the weights
DEVICE = {{TORCH_DEVICE}}
# torch.compile backend: a registered name or "module:function"; None runs eagerly.
COMPILE_BACKEND = {{COMPILE_BACKEND}}
COMPILE_OPTIONS = {{COMPILE_OPTIONS}}
IMPORTS = {{IMPORTS}}  # modules that register the device or the backend
PEAK_MEMORY = {{PEAK_MEMORY}}  # how peak memory is read: rss, cuda or neuron
PACKAGES = {{PACKAGES}}  # packages whose versions are reported
# The compiler's cache: canrun sets CACHE_ENV to a folder of its own; run alone, the script uses
# CACHE_DIR (the backend's own default), the folder the model page's prefetch command fills.
CACHE_ENV, CACHE_DIR = {{CACHE_ENV}}, {{CACHE_DIR}}
if CACHE_ENV and CACHE_DIR and not os.environ.get(CACHE_ENV):
    os.environ[CACHE_ENV] = CACHE_DIR
PROMPT = {{PROMPT}}
NEW_TOKENS = {{NEW_TOKENS}}
# How well (canrun's --no-perf and --long-tokens): PERF runs the model eagerly first, on the same
# device and inputs, as the baseline of the compiled run's speed and memory, each eager call cut
# at EAGER_MAX_S seconds; LONG_TOKENS > 0 (generation) generates that many more greedy tokens
# with the compiled model, after the NEW_TOKENS check, on the same compiled graphs.
PERF = {{PERF}}
EAGER_MAX_S = {{EAGER_MAX_S}}
LONG_TOKENS = {{LONG_TOKENS}}
