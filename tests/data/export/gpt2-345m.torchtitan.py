# GPT2-345M, 2 stages cut before block 10 on 4 GPUs each (tp2-sdp2), micro-batch 4
# (2 per data-parallel rank) x 8, every block checkpointed; torchtitan main's
# Python configuration (torchtitan/config/configs.py at b5bcd76c6, 2026-08-21).
from torchtitan.distributed.activation_checkpoint import FullAC
from torchtitan.trainer import Trainer

def base_config() -> Trainer.Config:
    # EDIT: return the torchtitan configuration of GPT2-345M (model, optimizer,
    # data); this plan changes only its batch and parallelism
    raise NotImplementedError("tessel: base_config() names no model")

def tessel_plan() -> Trainer.Config:
    config = base_config()
    config.training.max_context_length = 1024
    # 2 samples per data-parallel rank per micro-batch, 32 in all
    config.training.num_tokens_per_microbatch_per_dp_rank = 2048
    config.training.num_tokens_per_train_step = 32768
    par = config.parallelism
    par.data_parallel_replicate_degree = 1
    par.data_parallel_shard_degree = 2
    par.tensor_parallel_degree = 2
    par.enable_sequence_parallel = True
    par.context_parallel_degree = 1
    par.pipeline_parallel_degree = 2
    par.pipeline_parallel_schedule = "1F1B"
    par.num_pp_microbatches = 8
    par.module_fqns_per_model_part = [
        ["tok_embeddings", "layers.0", "layers.1", "layers.2", "layers.3", "layers.4", "layers.5", "layers.6", "layers.7", "layers.8", "layers.9"],
        ["layers.10", "layers.11", "layers.12", "layers.13", "layers.14", "layers.15", "layers.16", "layers.17", "layers.18", "layers.19", "layers.20", "layers.21", "layers.22", "layers.23", "norm", "lm_head"],
    ]
    # each block unsharded between micro-batches, its gradients
    # reduce-scattered on the last backward (as priced: torchtitan's default under PP)
    par.fsdp_reshard_after_forward = "default"
    config.compile.enable = True
    config.activation_checkpoint = FullAC.Config()
    return config
