/*
 * model_request.c — a request's model switches applied to a copy of the model
 * (model.h tsl_model_for_request): attention kind, dropout, MTP depths (mtp.h), the
 * blocks kept bf16.
 */
#include "model.h"
#include "mtp.h"
#include "target.h"

int tsl_model_for_request(const tsl_model_t *m, const tsl_model_switches_t *sw, tsl_model_t *own,
                          const tsl_model_t **out, tsl_err_t *err)
{
    *out = m;
    uint32_t have = tsl_mtp_depths(m),
             want = tsl_target_mtp_depths(sw->target, have, sw->mtp_layers, sw->no_mtp);
    bool bf16 = sw->bf16_layers_start || sw->bf16_layers_end;
    if (!sw->unfused_attn && !sw->no_dropout && !sw->fp32 && want == have && !bf16)
        return 0;
    if (tsl_model_copy(own, m, err) != 0)
        return -1;
    if (want != have && tsl_model_set_mtp(own, want, err) != 0)
        return -1;
    if (sw->unfused_attn && tsl_model_set_unfused_attn(own, true, err) != 0)
        return -1;
    if (sw->no_dropout && tsl_model_set_no_dropout(own, err) != 0)
        return -1;
    if (sw->fp32 && tsl_model_set_fp32(own, err) != 0)
        return -1;
    if (bf16 &&
        tsl_model_set_bf16_layers(own, sw->bf16_layers_start, sw->bf16_layers_end, err) != 0)
        return -1;
    *out = own;
    return 0;
}
