import importlib
import importlib.metadata
import json
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
PROMPT = {{PROMPT}}
NEW_TOKENS = {{NEW_TOKENS}}
