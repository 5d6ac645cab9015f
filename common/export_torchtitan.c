/*
 * export_torchtitan.c — a plan as a torchtitan job TOML ([training],
 * [parallelism], [activation_checkpoint]; torchtitan's config_manager names).
 *
 * torchtitan's space (planner/target_rules.c; tsl_export checks it first): one strategy for the whole model on its device mesh
 * [pp, dp_replicate, dp_shard, tp] (tp innermost, on consecutive GPUs, then the
 * FSDP shard group, then the replicas); pipeline stages cut before a Transformer
 * block ("layers.N"), with the embedding in the first stage and the norm and
 * output in the last; activation checkpointing of every block or none.
 */
#include "export.h"

int tsl_export_torchtitan(const tsl_export_view_t *v, FILE *out, tsl_err_t *err)
{
    tsl_export_uniform_t u;
    if (tsl_target_uniform(v, &u, err) != 0)
        return -1;
    const tsl_plan_t *p = v->plan;
    /* Pipelined: the rank's batch is cut into micro-batches; otherwise the
     * micro-batches are gradient-accumulation steps (global > local × dp). */
    uint32_t local = v->pp > 1 ? u.micro_per_rank * p->n_micro : u.micro_per_rank;
    fprintf(out,
            "# torchtitan job config for %s, plan \"%s\" from Tessel (docs/exports.md)\n"
            "# %u GPUs; predicted %.4f s/iteration, %.2f samples/s\n"
            "# add [model], [optimizer] and the rest of your job as usual\n\n",
            v->model->name, p->label, u.stage_devices * v->pp, p->iter_time_s, p->samples_per_s);
    fprintf(out, "[training]\nlocal_batch_size = %u\nglobal_batch_size = %u\nseq_len = %u\n\n",
            local, p->global_batch, v->model->layers[1].seq_len);
    fprintf(out,
            "[parallelism]\ndata_parallel_replicate_degree = %u\n"
            "data_parallel_shard_degree = %u\ntensor_parallel_degree = %u\n"
            "pipeline_parallel_degree = %u\n",
            u.dp, u.sdp, u.tp, v->pp);
    if (v->pp > 1) {
        fputs("pipeline_parallel_split_points = [", out);
        for (uint32_t s = 1; s < v->pp; s++)
            fprintf(out, "%s\"layers.%u\"", s > 1 ? ", " : "", v->stage_first[s] - 1);
        fprintf(out,
                "]\npipeline_parallel_schedule = \"1F1B\"\n"
                "pipeline_parallel_microbatch_size = %u\n",
                u.micro_per_rank);
    }
    fprintf(out, "\n[activation_checkpoint]\nmode = \"%s\"\n", u.ckpt_blocks ? "full" : "none");
    return 0;
}
