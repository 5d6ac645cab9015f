/*
 * prof_cuda.c — the cuda backend: this node's GPUs measured with the executor's cuda
 * device ops and nccl comm ops (worker/exec; the measuring code is prof_dev.c's and
 * prof_coll.c's, prof_dev.h says what each figure is). This file keeps what is the
 * CUDA runtime's alone: the device facts (model, memory, versions, UUIDs, link) and
 * how a rank of the collectives is made (GPU r, NCCL rank r, one thread each).
 *
 * A failed CUDA, cuBLAS or NCCL call returns -1 with TSL_E_DEVICE naming the call.
 */
#include "prof.h"
#include "prof_dev.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nccl.h>
#include <stdlib.h>
#include <string.h>
#ifdef TSL_HAVE_NVML
#include <nvml.h>
#endif

/* A failed CUDA, cuBLAS or NCCL call: TSL_E_DEVICE naming the call and the
 * library's error string, then `goto out`. */
#define DEVICE_CHECK(type, ok, strerror_fn, call)                                                  \
    do {                                                                                           \
        type r_ = (call);                                                                          \
        if (r_ != (ok)) {                                                                          \
            tsl_err_setc(err, TSL_E_DEVICE, "%s: %s (%s:%d)", #call, strerror_fn(r_), __FILE__,    \
                         __LINE__);                                                                \
            goto out;                                                                              \
        }                                                                                          \
    } while (0)
#define CU(call) DEVICE_CHECK(cudaError_t, cudaSuccess, cudaGetErrorString, call)
#define CB(call) DEVICE_CHECK(cublasStatus_t, CUBLAS_STATUS_SUCCESS, cublasGetStatusString, call)
#define NC(call) DEVICE_CHECK(ncclResult_t, ncclSuccess, ncclGetErrorString, call)

/* ---- device facts ---- */

static void version3(char *out, size_t cap, int v, int major_div, int minor_div)
{
    snprintf(out, cap, "%d.%d.%d", v / major_div, v % major_div / minor_div, v % minor_div);
}

/* nvidia-smi -L's form: "GPU-8f2c1a3e-…" (8-4-4-4-12 hex digits of the 16 bytes). */
static void format_uuid(const struct cudaDeviceProp *prop, char *out, size_t cap)
{
    const unsigned char *u = (const unsigned char *)prop->uuid.bytes;
    snprintf(out, cap, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
             u[14], u[15]);
}

static int device_facts(tsl_prof_t *p, int dev, int n_gpus, tsl_err_t *err)
{
    int rc = -1, v;
    struct cudaDeviceProp prop;
    CU(cudaGetDeviceProperties(&prop, dev));
    snprintf(p->model, sizeof(p->model), "%.95s", prop.name);
    format_uuid(&prop, p->uuid, sizeof(p->uuid));
    for (int g = 0; g < n_gpus && g < (int)TSL_PROF_MAX_GPUS; g++) {
        struct cudaDeviceProp pg;
        CU(cudaGetDeviceProperties(&pg, g));
        format_uuid(&pg, p->gpu_uuids[g], sizeof(p->gpu_uuids[g]));
    }
    size_t fr, tot;
    CU(cudaMemGetInfo(&fr, &tot));
    p->mem_total_bytes = tot;
    p->mem_free_bytes = fr;
    p->sm_count = (uint32_t)prop.multiProcessorCount;
    p->cc_major = (uint32_t)prop.major;
    p->cc_minor = (uint32_t)prop.minor;
    CU(cudaDriverGetVersion(&v));
    snprintf(p->driver_version, sizeof(p->driver_version), "%d.%d", v / 1000, v % 1000 / 10);
    CU(cudaRuntimeGetVersion(&v));
    snprintf(p->runtime_version, sizeof(p->runtime_version), "%d.%d", v / 1000, v % 1000 / 10);
    int maj, min, patch;
    CB(cublasGetProperty(MAJOR_VERSION, &maj));
    CB(cublasGetProperty(MINOR_VERSION, &min));
    CB(cublasGetProperty(PATCH_LEVEL, &patch));
    snprintf(p->cublas_version, sizeof(p->cublas_version), "%d.%d.%d", maj, min, patch);
    NC(ncclGetVersion(&v));
    version3(p->nccl_version, sizeof(p->nccl_version), v, 10000, 100);
    tsl_prof_hw_name(p->model, p->mem_total_bytes, p->hw_gpu, sizeof(p->hw_gpu));
    p->gpus = (uint32_t)n_gpus;
    snprintf(p->hw_link, sizeof(p->hw_link), "single");
    if (n_gpus > 1) {
        int access = 0;
        CU(cudaDeviceCanAccessPeer(&access, 0, 1));
        snprintf(p->hw_link, sizeof(p->hw_link), "%s", access ? "p2p" : "pcie");
    }
#ifdef TSL_HAVE_NVML
    /* optional: clocks and power limit where NVML answers */
    if (nvmlInit_v2() == NVML_SUCCESS) {
        nvmlDevice_t nd;
        unsigned int mhz, mw;
        if (nvmlDeviceGetHandleByIndex_v2((unsigned)dev, &nd) == NVML_SUCCESS) {
            if (nvmlDeviceGetClockInfo(nd, NVML_CLOCK_SM, &mhz) == NVML_SUCCESS)
                p->sm_clock_mhz = mhz;
            if (nvmlDeviceGetClockInfo(nd, NVML_CLOCK_MEM, &mhz) == NVML_SUCCESS)
                p->mem_clock_mhz = mhz;
            if (nvmlDeviceGetPowerManagementLimit(nd, &mw) == NVML_SUCCESS)
                p->power_limit_w = mw / 1000;
            if (n_gpus > 1) {
                nvmlEnableState_t on;
                if (nvmlDeviceGetNvLinkState(nd, 0, &on) == NVML_SUCCESS &&
                    on == NVML_FEATURE_ENABLED)
                    snprintf(p->hw_link, sizeof(p->hw_link), "nvlink");
            }
        }
        nvmlShutdown();
    }
#endif
    rc = 0;
out:
    return rc;
}

/* ---- ranks: GPU r with NCCL rank r of a world that rank 0's id names ---- */

static int ranks_open(void *ud, int size, void **world, tsl_err_t *err)
{
    (void)ud, (void)size;
    uint8_t *id = malloc(TSL_NCCL_ID_BYTES);
    if (!id)
        return tsl_err_setc(err, TSL_E_NOMEM, "profile: out of host memory");
    if (tsl_comm_nccl_unique_id(id, err)) {
        free(id);
        return -1;
    }
    *world = id;
    return 0;
}

static int ranks_rank(void *ud, void *world, int rank, int size, tsl_devops_t **dev,
                      tsl_commops_t **comm, tsl_err_t *err)
{
    (void)ud;
    *dev = NULL, *comm = NULL;
    return tsl_devops_cuda_create(rank, 0, dev, err) ||
                   tsl_comm_nccl_create(world, rank, size, rank, comm, err)
               ? -1
               : 0;
}

static void ranks_close(void *ud, void *world)
{
    (void)ud;
    free(world);
}

/* No device to measure: a node without NVIDIA GPUs or their driver, a driver
 * older than this build's CUDA, or none visible (CUDA_VISIBLE_DEVICES). Says which
 * (tsl_prof_no_gpu_reason) and what such a node runs instead (docs/worker.md). */
static int no_gpu(cudaError_t e, tsl_err_t *err)
{
    char why[TSL_ERR_MAX / 2];
    int driver = 0;
    if (cudaDriverGetVersion(&driver) != cudaSuccess) /* 0 without a driver */
        driver = 0;
    tsl_prof_no_gpu_reason(e == cudaErrorInsufficientDriver, driver, CUDART_VERSION,
                           e == cudaSuccess ? "no device visible" : cudaGetErrorString(e), why,
                           sizeof why);
    return tsl_err_setc(err, TSL_E_DEVICE,
                        "no CUDA GPU on this node: %s; a node without GPUs runs the sim "
                        "backend: --backend sim --device-file deploy/sim/<gpu>.json "
                        "(docs/worker.md)",
                        why);
}

int tsl_prof_run_cuda(const tsl_prof_opts_t *o, tsl_prof_t *p, tsl_err_t *err)
{
    int rc = -1, n_gpus = 0;
    tsl_devops_t *dev = NULL;
    tsl_prof_dev_t c = {0};
    tsl_prof_sizes_t sz;
    tsl_prof_ranks_t ranks = {ranks_open, ranks_rank, ranks_close, NULL};
    snprintf(p->backend, sizeof(p->backend), "cuda");
    p->simulated = false;
    p->warmup = o->warmup;
    p->iters = o->iters;
    cudaError_t count = cudaGetDeviceCount(&n_gpus);
    if (count == cudaErrorInsufficientDriver || count == cudaErrorNoDevice ||
        (count == cudaSuccess && n_gpus == 0)) {
        no_gpu(count, err);
        goto out;
    }
    CU(count);
    if (o->device < 0 || o->device >= n_gpus) {
        tsl_err_setc(err, TSL_E_DEVICE, "device %d: %d CUDA device(s) visible", o->device, n_gpus);
        goto out;
    }
    if (tsl_devops_cuda_create(o->device, 0, &dev, err) || device_facts(p, o->device, n_gpus, err))
        goto out;
    tsl_prof_sizes_default(&sz, o->quick);
    if (tsl_prof_dev_open(&c, o, &sz, dev, p, err) || tsl_prof_dev_run(&c, &ranks, n_gpus, err))
        goto out;
    rc = 0;
out:
    if (dev)
        tsl_prof_dev_close(&c), dev->destroy(dev);
    return rc;
}
