# Sharded: this script starts CORES ranks of torch.distributed itself (no torchrun), one per
# core, each pinned to its share of the cores through PIN_ENV and loading its shard.
CORES = {{CORES}}
PARALLELISM = {{PARALLELISM}}  # "tp" (tensor parallel) or "ep" (expert parallel)
DISTRIBUTED_BACKEND = {{DISTRIBUTED_BACKEND}}
PIN_ENV, PIN_SYNTAX = {{PIN_ENV}}, {{PIN_SYNTAX}}  # how a rank is given its cores
