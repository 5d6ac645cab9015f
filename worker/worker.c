/*
 * worker.c — tessel-worker's entry point. `profile`: measure this node's GPUs (or
 * simulate them from a device file) and print the profile as a table or as JSON
 * (docs/profile-format.md). `run` (the default where the RPC stack is built):
 * the agent — registration, heartbeats, reports to tesseld (agent.h).
 *
 * Exit status: 0 done, 1 the backend failed (device error), 2 bad usage.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "prof.h"

static void usage(FILE *f)
{
    fputs("usage: tessel-worker profile --backend cuda|sim [--device-file FILE] [--json]\n"
          "                             [--out FILE] [--quick] [--shape SHAPE]... [--mb LIST]\n"
          "                             [--tp LIST] [--iters N] [--warmup N] [--device N]\n"
          "                             [--unfused-attn] [--soak SECONDS]\n"
          "\n"
          "  --backend B       cuda: measure this node's GPUs (CUDA, cuBLAS, NCCL);\n"
          "                    sim: compute a profile from --device-file (marked simulated)\n"
          "  --device-file F   sim backend: device description (deploy/sim/*.json)\n"
          "  --json            print the profile as JSON (docs/profile-format.md)\n"
          "  --out FILE        write to FILE instead of standard output\n"
          "  --quick           fewer micro-batch sizes and TP splits, shorter loops\n"
          "  --shape SHAPE     a layer shape to time, h=HIDDEN,s=SEQ,a=HEADS[,d=HEAD_DIM]\n"
          "                    [,f=FFN][,gated]; repeatable; default the GPT2-345M and\n"
          "                    GPT2-1.3B layers (h=1024,s=1024,a=16 and h=2048,s=1024,a=32)\n"
          "  --mb LIST         micro-batch sizes, e.g. 1,2,4,8,16 (the default)\n"
          "  --tp LIST         TP splits, e.g. 1,2,4,8 (the default)\n"
          "  --iters N         timed runs per figure, the median is kept (default 10)\n"
          "  --warmup N        untimed runs first (default 3)\n"
          "  --device N        CUDA device for the one-device figures (default 0)\n"
          "  --unfused-attn    cuda: time the executor's unfused attention (the s x s\n"
          "                    softmax stashed until backward, the model's unfused_attn)\n"
          "                    instead of its fused one (query chunks, masked key blocks\n"
          "                    skipped), as a trial of such a model runs it\n"
          "  --soak SECONDS    before the GEMM table, large GEMMs in 1 s windows until the\n"
          "                    rate settles (5 windows within 1 %) or SECONDS pass, so\n"
          "                    that figures are at the clock a training step sustains,\n"
          "                    not the boost clock; 0: none (default 60, 15 with --quick)\n",
          f);
}

static int parse_count(const char *name, const char *text, uint32_t lo, uint32_t hi, uint32_t *out)
{
    char *end;
    long v = strtol(text, &end, 10);
    if (end == text || *end != '\0' || v < (long)lo || v > (long)hi) {
        fprintf(stderr, "tessel-worker: %s: '%s' is not an integer in %u..%u\n", name, text, lo,
                hi);
        return -1;
    }
    *out = (uint32_t)v;
    return 0;
}

static int cmd_profile(int argc, char **argv)
{
    enum {
        O_BACKEND = 256,
        O_DEVFILE,
        O_JSON,
        O_OUT,
        O_QUICK,
        O_SHAPE,
        O_MB,
        O_TP,
        O_ITERS,
        O_WARMUP,
        O_DEVICE,
        O_UNFUSED,
        O_SOAK,
        O_HELP
    };
    static const struct option opts[] = {
        {"backend", required_argument, NULL, O_BACKEND},
        {"device-file", required_argument, NULL, O_DEVFILE},
        {"json", no_argument, NULL, O_JSON},
        {"out", required_argument, NULL, O_OUT},
        {"quick", no_argument, NULL, O_QUICK},
        {"shape", required_argument, NULL, O_SHAPE},
        {"mb", required_argument, NULL, O_MB},
        {"tp", required_argument, NULL, O_TP},
        {"iters", required_argument, NULL, O_ITERS},
        {"warmup", required_argument, NULL, O_WARMUP},
        {"device", required_argument, NULL, O_DEVICE},
        {"unfused-attn", no_argument, NULL, O_UNFUSED},
        {"soak", required_argument, NULL, O_SOAK},
        {"help", no_argument, NULL, O_HELP},
        {NULL, 0, NULL, 0},
    };
    const char *backend = NULL, *devfile = NULL, *outpath = NULL;
    const char *mb = NULL, *tp = NULL, *iters = NULL, *warmup = NULL, *device = NULL;
    const char *soak = NULL;
    const char *shapes[TSL_PROF_MAX_SHAPES];
    uint32_t n_shapes = 0;
    bool json = false, quick = false, unfused = false;
    int opt;
    optind = 1;
    opterr = 0; /* one line of ours below, not getopt's "profile: invalid option" */
    while ((opt = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (opt) {
        case O_BACKEND: backend = optarg; break;
        case O_DEVFILE: devfile = optarg; break;
        case O_JSON: json = true; break;
        case O_OUT: outpath = optarg; break;
        case O_QUICK: quick = true; break;
        case O_SHAPE:
            if (n_shapes >= TSL_PROF_MAX_SHAPES) {
                fprintf(stderr, "tessel-worker: --shape: at most %u shapes\n", TSL_PROF_MAX_SHAPES);
                return 2;
            }
            shapes[n_shapes++] = optarg;
            break;
        case O_MB: mb = optarg; break;
        case O_TP: tp = optarg; break;
        case O_ITERS: iters = optarg; break;
        case O_WARMUP: warmup = optarg; break;
        case O_DEVICE: device = optarg; break;
        case O_UNFUSED: unfused = true; break;
        case O_SOAK: soak = optarg; break;
        case 'h':
        case O_HELP: usage(stdout); return 0;
        case ':':
            fprintf(stderr,
                    "tessel-worker: profile: option '%s' needs a value; see "
                    "tessel-worker profile --help\n",
                    argv[optind - 1]);
            return 2;
        default:
            fprintf(stderr,
                    "tessel-worker: profile: unknown option '%s'; see "
                    "tessel-worker profile --help\n",
                    argv[optind - 1]);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr,
                "tessel-worker: profile: unexpected argument '%s'; see tessel-worker profile "
                "--help\n",
                argv[optind]);
        return 2;
    }
    if (backend == NULL) {
        fprintf(stderr, "tessel-worker: profile: --backend cuda|sim is required\n");
        return 2;
    }
    const tsl_prof_backend_t *be = tsl_prof_backend_find(backend);
    if (be == NULL) {
        fprintf(stderr, "tessel-worker: --backend: '%s' is not cuda or sim\n", backend);
        return 2;
    }
    if (be->run == NULL) {
        fprintf(stderr, "tessel-worker: --backend %s: %s\n", be->name, be->why_absent);
        return 2;
    }
    tsl_prof_opts_t o;
    tsl_err_t err = {0};
    uint32_t v;
    tsl_prof_opts_default(&o, quick);
    o.device_file = devfile;
    o.unfused_attn = unfused;
    if (n_shapes > 0) {
        o.n_shapes = n_shapes;
        for (uint32_t i = 0; i < n_shapes; i++)
            if (tsl_prof_parse_shape(shapes[i], &o.shapes[i], &err) != 0)
                goto bad;
    }
    if ((mb != NULL && tsl_prof_parse_list(mb, o.mb, &o.n_mb, "--mb", &err) != 0) ||
        (tp != NULL && tsl_prof_parse_list(tp, o.tp, &o.n_tp, "--tp", &err) != 0) ||
        tsl_prof_opts_check(&o, "--mb", "--tp", &err) != 0)
        goto bad;
    if (iters != NULL) {
        if (parse_count("--iters", iters, 1, 64, &v) != 0)
            return 2;
        o.iters = v;
    }
    if (warmup != NULL) {
        if (parse_count("--warmup", warmup, 0, 100, &v) != 0)
            return 2;
        o.warmup = v;
    }
    if (device != NULL) {
        if (parse_count("--device", device, 0, 63, &v) != 0)
            return 2;
        o.device = (int)v;
    }
    if (soak != NULL) {
        if (parse_count("--soak", soak, 0, 3600, &v) != 0)
            return 2;
        o.soak_max_s = v;
    }

    tsl_prof_t *p = calloc(1, sizeof(*p));
    if (p == NULL) {
        fprintf(stderr, "tessel-worker: out of memory\n");
        return 1;
    }
    /* the command, as given, and the time it started */
    size_t len = 0;
    for (int i = 0; i < argc && len < sizeof(p->command) - 1; i++)
        len += (size_t)snprintf(p->command + len, sizeof(p->command) - len, "%s%s",
                                i ? " " : "tessel-worker ", argv[i]);
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(p->created, sizeof(p->created), "%Y-%m-%dT%H:%M:%SZ", &tm);
    int status = 0;
    if (be->run(&o, p, &err) != 0) {
        fprintf(stderr, "tessel-worker: profile (%s): %s\n", be->name, err.msg);
        status = tsl_err_code(&err) == TSL_E_INVALID ? 2 : 1;
        goto done;
    }
    FILE *f = stdout;
    const char *where = outpath ? outpath : "standard output";
    if (outpath != NULL && (f = fopen(outpath, "w")) == NULL) {
        fprintf(stderr, "tessel-worker: profile: cannot open %s: %s\n", where, strerror(errno));
        status = 1;
        goto done;
    }
    if (json)
        tsl_prof_write_json(f, p);
    else
        tsl_prof_print_table(f, p);
    /* every write checked at the end (a full disk left an empty profile behind exit 0
     * on standard output) */
    errno = 0;
    bool bad_write = fflush(f) != 0 || ferror(f);
    int saved = errno;
    if (f != stdout && fclose(f) != 0 && !bad_write) {
        bad_write = true;
        saved = errno;
    }
    if (bad_write) {
        fprintf(stderr, "tessel-worker: profile: cannot write %s: %s\n", where,
                saved ? strerror(saved) : "write error");
        status = 1;
    }
done:
    free(p);
    return status;
bad:
    fprintf(stderr, "tessel-worker: %s\n", err.msg);
    return 2;
}

#ifdef TSL_HAVE_AGENT
#include "agent.h"

/* With the agent built in, `run` (or no subcommand: options only) is the agent. */
int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "profile") == 0)
        return cmd_profile(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "run") == 0)
        return tsl_agent_main(argc - 1, argv + 1);
    if (argc > 1 && argv[1][0] != '-') {
        fprintf(stderr, "tessel-worker: '%s': unknown command (run, profile; see --help)\n",
                argv[1]);
        return 2;
    }
    return tsl_agent_main(argc, argv);
}
#else
int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "profile") == 0)
        return cmd_profile(argc - 1, argv + 1);
    if (argv[1][0] == '-') {
        fprintf(stderr, "tessel-worker: unknown option '%s'; see tessel-worker --help\n", argv[1]);
        return 2;
    }
    fprintf(stderr,
            "tessel-worker: '%s': unknown command (this build has 'profile'; the agent mode "
            "comes with the api/ library)\n",
            argv[1]);
    return 2;
}
#endif
