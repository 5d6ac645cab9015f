# torchtitan's own Llama 3 70B configuration in the form torchtitan reads since
# 2026-02-23 (pytorch/torchtitan b5bcd76c6, torchtitan/models/llama3/config_registry.py
# llama3_70b), trimmed to what Tessel reads and a few lines it skips; written for
# Tessel's tests. Tessel reads it without running it.
from torchtitan.config import ParallelismConfig, TrainingConfig
from torchtitan.distributed.activation_checkpoint import FullAC
from torchtitan.trainer import Trainer

from . import model_registry


def llama3_70b() -> Trainer.Config:
    model_spec = model_registry("70B")
    return Trainer.Config(
        hf_assets_path="./assets/hf/Llama-3.1-70B",
        model_spec=model_spec,
        training=TrainingConfig(
            num_tokens_per_microbatch_per_dp_rank=8 * 8192,
            max_context_length=8192,
            steps=1000,
        ),
        parallelism=ParallelismConfig(
            tensor_parallel_degree=8,
        ),
        activation_checkpoint=FullAC.Config(),
    )
