/*
 * devops_nocuda.c — what a build without CUDA answers for the cuda device ops and
 * the nccl comm ops: unsupported, with the reason.
 */
#include "commops.h"
#include "devops.h"

int tsl_devops_cuda_create(int device, uint64_t limit_bytes, tsl_devops_t **out, tsl_err_t *err)
{
    (void)device, (void)limit_bytes, (void)out;
    return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                        "devops: cuda: this build has no CUDA (meson found no cudart/cuBLAS/NCCL)");
}

int tsl_comm_nccl_unique_id(uint8_t id[TSL_NCCL_ID_BYTES], tsl_err_t *err)
{
    (void)id;
    return tsl_err_setc(err, TSL_E_UNSUPPORTED, "comm: nccl: this build has no NCCL");
}

int tsl_comm_nccl_create(const uint8_t id[TSL_NCCL_ID_BYTES], int rank, int size, int device,
                         tsl_commops_t **out, tsl_err_t *err)
{
    (void)id, (void)rank, (void)size, (void)device, (void)out;
    return tsl_err_setc(err, TSL_E_UNSUPPORTED, "comm: nccl: this build has no NCCL");
}
