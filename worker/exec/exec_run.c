/*
 * tessel-exec-run — try the stage executor from flags: a GPT-style block stack
 * (causal attention or --not-causal, fused by query chunks or --unfused-attn; with
 * --vocab a token embedding, --positions, and an LM head, --tied), or Llama-family
 * blocks (--rms-norm, --no-bias, --gated, --kv-heads, --window; --llama), mixture-of-
 * experts blocks (--experts, --top-k, --shared-experts, --shared-ffn; --ep; the routers
 * --router, --router-bias, --router-groups, --norm-topk, --routed-scale, --shared-gate),
 * multi-head latent attention (--kv-lora, --q-lora, --qk-nope, --qk-rope, --v-head), a uniform
 * plan (pp stages of tp × dp devices, --interleave v chunks each), every rank run for
 * W + N iterations, one report per rank (docs/executor.md). Flags are checked here, a
 * bad value or combination named by its flags; what the executor refuses (a plan or
 * layer it does not run) is found before any rank starts and said once, exit 2.
 *
 *   loopback  all ranks as threads of this process;
 *   tcp       all ranks as forked processes on 127.0.0.1:--port.., or only --rank R
 *             (then start the other ranks yourself, e.g. on other machines with --host);
 *   nccl      one rank per process and GPU: --rank R, --device D, and --nccl-id FILE,
 *             which rank 0 writes and the others wait for.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exec.h"

typedef struct run_cfg {
    uint32_t layers, hidden, heads, seq, ffn, vocab;
    uint32_t positions;    /* learned position rows of the embedding; 0: none */
    bool tied, unfused;    /* tied head; attention keeps its s×s scores */
    bool attn_chunk_given; /* --attn-chunk was given (its value is opts.attn_chunk) */
    bool rms_norm, no_bias, gated, no_dropout, not_causal; /* the model layer's flags */
    bool kv_given, window_given, interleave_given;         /* the flags were given */
    uint32_t kv_heads, window, interleave;                 /* 0: as heads, no window, plain 1F1B */
    uint32_t experts, top_k, shared, shared_ffn, ep;       /* MoE blocks; 0: dense */
    bool top_k_given, ep_given;
    const char *capacity; /* --moe-capacity as given */
    /* latent attention (--kv-lora > 0) and the routers (model.h "Routing") */
    uint32_t q_lora, kv_lora, qk_nope, qk_rope, v_head;
    bool nope_given, rope_given, vhead_given;
    const char *router, *routed_scale; /* as given */
    bool router_bias, norm_topk, shared_gate;
    uint32_t router_groups, router_topk_groups;
    tsl_exec_plan_spec_t spec;
    tsl_exec_opts_t opts;
    const char *devops, *comm, *host, *nccl_id;
    int port, rank, device;
    uint64_t mem_limit;
    bool json;
    tsl_model_t model;
    tsl_plan_t plan;
    tsl_loopback_world_t *world;
} run_cfg_t;

/* Long options without a letter. */
enum {
    OPT_QLORA = 256,
    OPT_KVLORA,
    OPT_NOPE,
    OPT_ROPE,
    OPT_VHEAD,
    OPT_ROUTER,
    OPT_RBIAS,
    OPT_RGROUPS,
    OPT_RTOPKG,
    OPT_NORMTOPK,
    OPT_RSCALE,
    OPT_SGATE
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: tessel-exec-run [--layers N] [--hidden H] [--heads A] [--seq S] [--ffn F]\n"
            "         [--vocab V [--positions P] [--tied]] [--unfused-attn | --attn-chunk C]\n"
            "         [--llama] [--rms-norm] [--no-bias] [--gated] [--kv-heads K] [--window W]\n"
            "         [--not-causal] [--interleave V]\n"
            "         [--experts E [--top-k K] [--shared-experts S [--shared-ffn F]] [--ep N]\n"
            "          [--moe-capacity C] [--router softmax|sigmoid] [--router-bias]\n"
            "          [--router-groups G --router-topk-groups T] [--norm-topk]\n"
            "          [--routed-scale X] [--shared-gate]]\n"
            "         [--kv-lora C [--q-lora Q] [--qk-nope N] [--qk-rope R] [--v-head V]]\n"
            "         [--mbs B] [--micro M] [--pp P] [--dp D] [--sdp] [--tp T] [--ckpt]\n"
            "         [--devops cpu|cuda] [--comm loopback|tcp|nccl] [--warmup W] [--iters N]\n"
            "         [--seed S] [--sgd] [--lr X] [--no-overlap] [--mem-limit BYTES]\n"
            "         [--rank R] [--host ADDR] [--port P] [--device D] [--nccl-id FILE] [--json]\n"
            "  The layers are GPT blocks with causal attention. --mbs is the plan's micro-batch\n"
            "  (samples over the whole data group); --vocab > 0 adds a token embedding and an\n"
            "  LM head with cross-entropy (else MSE on the output). With --vocab: --positions P\n"
            "  adds a learned position table of P rows (P >= --seq; default none, as with\n"
            "  rotary positions; GPT-2 has 1024), --tied ties the head to the embedding.\n"
            "  --unfused-attn keeps each layer's s x s softmax output until backward (a\n"
            "  framework without a fused kernel); else attention is fused by query chunks and\n"
            "  --attn-chunk C forces C query rows per chunk (C >= 1; default: the engine's rule)\n"
            "  to trade the workspace (2 x heads x C x seq) against per-chunk launch overhead.\n"
            "  Llama-family layers: --rms-norm (RMSNorm, a scale only), --no-bias (linear\n"
            "  layers without biases), --gated (SwiGLU FFN: gate and up projections, each\n"
            "  --ffn wide, the planner's ffn_hidden; --ffn defaults to 4 x hidden either way),\n"
            "  --kv-heads K (grouped-query attention: K >= 1 K/V heads dividing --heads; --tp\n"
            "  must divide K), --window W (sliding window: query q sees keys (q - W, q];\n"
            "  W >= 1). --llama sets exactly --rms-norm --no-bias --gated and the model's\n"
            "  no-dropout (the executor runs no dropout in any case); it sets no --kv-heads,\n"
            "  --window or --ffn. --not-causal: every query sees every key (BERT, ViT); the\n"
            "  executor refuses it with a --window shorter than --seq. --interleave V: V model\n"
            "  chunks per stage, Megatron-LM's interleaved 1F1B (V >= 1, 1: plain 1F1B; V >= 2\n"
            "  needs --pp >= 2 and --micro a multiple of --pp, and a layer in every chunk).\n"
            "  Mixture of experts: --experts E makes every block's FFN E routed experts, each\n"
            "  --ffn wide (the planner's ffn_hidden of a MoE layer), gated as --gated; --top-k K\n"
            "  routes each token to K of them (1 <= K <= E; default 2, or E if fewer);\n"
            "  --shared-experts S adds S always-on experts of --shared-ffn F columns (default\n"
            "  --ffn), run as one dense FFN; --ep N splits the routed experts over the N\n"
            "  innermost ranks of each stage (the plan's ep: N divides E and --tp x --dp);\n"
            "  --moe-capacity C (> 0) keeps at most ceil(C x tokens x K / E) copies per expert\n"
            "  on each rank, dropping the rest (default 0: dropless, buffers for the worst\n"
            "  case; C bounds them to C times the mean). The router: --router sigmoid scores\n"
            "  each expert by a sigmoid (DeepSeek-V3; default softmax over the experts);\n"
            "  --router-bias adds a per-expert score-correction bias that chooses but does not\n"
            "  weigh (DeepSeek-V3's noaux_tc); --router-groups G --router-topk-groups T\n"
            "  choose from the best T of G equal groups of experts (a group scored by its best,\n"
            "  or with --router-bias its two best summed); --norm-topk divides the top-k\n"
            "  weights by their sum; --routed-scale X multiplies them (X > 0, default 1);\n"
            "  --shared-gate puts a sigmoid gate (h x 1) on the shared experts (Qwen2-MoE).\n"
            "  Multi-head latent attention (DeepSeek-V2/V3): --kv-lora C (a KV latent of C,\n"
            "  RMSNorm'd, up-projected to each head's key and value, and a rotary key shared by\n"
            "  the heads), --q-lora Q (a query latent of Q; default none: a full query\n"
            "  projection), --qk-nope N and --qk-rope R (per-head query/key widths without and\n"
            "  with RoPE; default hidden/heads and half of it, R even), --v-head V (value width;\n"
            "  default hidden/heads). It needs --no-bias (or --llama).\n");
}

/* A whole number for --flag, strictly: digits only, in range. */
static int num(const char *flag, const char *s, uint64_t max, uint64_t *out)
{
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (s[0] < '0' || s[0] > '9' || *end || errno || v > max) {
        fprintf(stderr, "tessel-exec-run: --%s '%s': give a whole number up to %llu\n", flag, s,
                (unsigned long long)max);
        return -1;
    }
    *out = v;
    return 0;
}

/* The flags that take no number. */
static void set_string(run_cfg_t *c, int ch, const char *arg)
{
    switch (ch) {
    case 'z': c->spec.sdp = true; break;
    case 'c': c->spec.ckpt = true; break;
    case 'o': c->devops = arg; break;
    case 'x': c->comm = arg; break;
    case 'g': c->opts.optim = TSL_EXEC_SGD; break;
    case 'l': c->opts.lr = strtof(arg, NULL); break;
    case 'y': c->capacity = arg; break;
    case 'O': c->opts.no_overlap = true; break;
    case 'h': c->host = arg; break;
    case 'I': c->nccl_id = arg; break;
    case 'j': c->json = true; break;
    case 'T': c->tied = true; break;
    case 'U': c->unfused = true; break;
    case 'N': c->rms_norm = true; break;
    case 'B': c->no_bias = true; break;
    case 'G': c->gated = true; break;
    case 'X': c->not_causal = true; break;
    case 'Y': c->rms_norm = c->no_bias = c->gated = c->no_dropout = true; break;
    case OPT_ROUTER: c->router = arg; break;
    case OPT_RSCALE: c->routed_scale = arg; break;
    case OPT_RBIAS: c->router_bias = true; break;
    case OPT_NORMTOPK: c->norm_topk = true; break;
    case OPT_SGATE: c->shared_gate = true; break;
    }
}

/* The flags that take a number; false when ch is not one of them. */
static bool set_number(run_cfg_t *c, int ch, uint64_t v)
{
    uint32_t u = (uint32_t)v;
    switch (ch) {
    case 'L': c->layers = u; break;
    case 'H': c->hidden = u; break;
    case 'A': c->heads = u; break;
    case 'S': c->seq = u; break;
    case 'F': c->ffn = u; break;
    case 'V': c->vocab = u; break;
    case 'Q': c->positions = u; break;
    case 'C': c->opts.attn_chunk = u, c->attn_chunk_given = true; break;
    case 'b': c->spec.micro_batch = u; break;
    case 'm': c->spec.n_micro = u; break;
    case 'p': c->spec.pp = u; break;
    case 'd': c->spec.dp = u; break;
    case 't': c->spec.tp = u; break;
    case 'w': c->opts.warmup = u; break;
    case 'n': c->opts.iters = u; break;
    case 's': c->opts.seed = v; break;
    case 'M': c->mem_limit = v; break;
    case 'r': c->rank = (int)u; break;
    case 'P': c->port = (int)u; break;
    case 'D': c->device = (int)u; break;
    case 'K': c->kv_heads = u, c->kv_given = true; break;
    case 'W': c->window = u, c->window_given = true; break;
    case 'v': c->interleave = u, c->interleave_given = true; break;
    case 'E': c->experts = u; break;
    case 'k': c->top_k = u, c->top_k_given = true; break;
    case 'R': c->shared = u; break;
    case 'f': c->shared_ffn = u; break;
    case 'e': c->ep = u, c->ep_given = true; break;
    case OPT_QLORA: c->q_lora = u; break;
    case OPT_KVLORA: c->kv_lora = u; break;
    case OPT_NOPE: c->qk_nope = u, c->nope_given = true; break;
    case OPT_ROPE: c->qk_rope = u, c->rope_given = true; break;
    case OPT_VHEAD: c->v_head = u, c->vhead_given = true; break;
    case OPT_RGROUPS: c->router_groups = u; break;
    case OPT_RTOPKG: c->router_topk_groups = u; break;
    default: return false;
    }
    return true;
}

static const struct option opts_long[] = {{"layers", 1, 0, 'L'},
                                          {"hidden", 1, 0, 'H'},
                                          {"heads", 1, 0, 'A'},
                                          {"seq", 1, 0, 'S'},
                                          {"ffn", 1, 0, 'F'},
                                          {"vocab", 1, 0, 'V'},
                                          {"positions", 1, 0, 'Q'},
                                          {"tied", 0, 0, 'T'},
                                          {"unfused-attn", 0, 0, 'U'},
                                          {"attn-chunk", 1, 0, 'C'},
                                          {"mbs", 1, 0, 'b'},
                                          {"micro", 1, 0, 'm'},
                                          {"pp", 1, 0, 'p'},
                                          {"dp", 1, 0, 'd'},
                                          {"sdp", 0, 0, 'z'},
                                          {"tp", 1, 0, 't'},
                                          {"ckpt", 0, 0, 'c'},
                                          {"devops", 1, 0, 'o'},
                                          {"comm", 1, 0, 'x'},
                                          {"warmup", 1, 0, 'w'},
                                          {"iters", 1, 0, 'n'},
                                          {"seed", 1, 0, 's'},
                                          {"sgd", 0, 0, 'g'},
                                          {"lr", 1, 0, 'l'},
                                          {"no-overlap", 0, 0, 'O'},
                                          {"mem-limit", 1, 0, 'M'},
                                          {"rank", 1, 0, 'r'},
                                          {"host", 1, 0, 'h'},
                                          {"port", 1, 0, 'P'},
                                          {"device", 1, 0, 'D'},
                                          {"nccl-id", 1, 0, 'I'},
                                          {"json", 0, 0, 'j'},
                                          {"rms-norm", 0, 0, 'N'},
                                          {"no-bias", 0, 0, 'B'},
                                          {"gated", 0, 0, 'G'},
                                          {"kv-heads", 1, 0, 'K'},
                                          {"window", 1, 0, 'W'},
                                          {"not-causal", 0, 0, 'X'},
                                          {"llama", 0, 0, 'Y'},
                                          {"interleave", 1, 0, 'v'},
                                          {"experts", 1, 0, 'E'},
                                          {"shared-experts", 1, 0, 'R'},
                                          {"shared-ffn", 1, 0, 'f'},
                                          {"top-k", 1, 0, 'k'},
                                          {"moe-capacity", 1, 0, 'y'},
                                          {"ep", 1, 0, 'e'},
                                          {"help", 0, 0, '?'},
                                          {"q-lora", 1, 0, OPT_QLORA},
                                          {"kv-lora", 1, 0, OPT_KVLORA},
                                          {"qk-nope", 1, 0, OPT_NOPE},
                                          {"qk-rope", 1, 0, OPT_ROPE},
                                          {"v-head", 1, 0, OPT_VHEAD},
                                          {"router", 1, 0, OPT_ROUTER},
                                          {"router-bias", 0, 0, OPT_RBIAS},
                                          {"router-groups", 1, 0, OPT_RGROUPS},
                                          {"router-topk-groups", 1, 0, OPT_RTOPKG},
                                          {"norm-topk", 0, 0, OPT_NORMTOPK},
                                          {"routed-scale", 1, 0, OPT_RSCALE},
                                          {"shared-gate", 0, 0, OPT_SGATE},
                                          {0, 0, 0, 0}};

/* A flag getopt refused: one line naming it as typed and where help is, as
 * tesselctl says it (getopt's own words and the whole usage buried the name). */
static int bad_flag(int ch, char **argv)
{
    if (ch == ':')
        fprintf(stderr, "tessel-exec-run: option '%s' needs a value; see tessel-exec-run --help\n",
                argv[optind - 1]);
    else
        fprintf(stderr, "tessel-exec-run: unknown option '%s'; see tessel-exec-run --help\n",
                argv[optind - 1]);
    return -1;
}

/* 0: run; 1: --help was answered; -1: a bad flag (said on stderr). */
static int parse(run_cfg_t *c, int argc, char **argv)
{
    int ch, at = -1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":", opts_long, &at)) != -1) {
        if (ch == ':' || (ch == '?' && (at < 0 || opts_long[at].val != '?')))
            return bad_flag(ch, argv);
        if (ch == '?') { /* --help */
            usage(stdout);
            return 1;
        }
        bool wide = ch == 's' || ch == 'M'; /* 64-bit: the seed and a byte count */
        uint64_t v = 0;
        if (optarg && ch != 'o' && ch != 'x' && ch != 'l' && ch != 'y' && ch != 'h' && ch != 'I' &&
            ch != OPT_ROUTER && ch != OPT_RSCALE &&
            num(opts_long[at].name, optarg, wide ? UINT64_MAX : INT32_MAX, &v))
            return -1;
        if (!set_number(c, ch, v))
            set_string(c, ch, optarg);
        at = -1;
    }
    if (optind < argc) {
        fprintf(stderr, "tessel-exec-run: unexpected argument '%s'; see tessel-exec-run --help\n",
                argv[optind]);
        return -1;
    }
    return 0;
}

/* The Llama-family and schedule flags' values; NULL when they are fine. What needs
 * the TP degree or the micro-batch count (K/V heads over --tp, micro-batches over the
 * stages) the executor checks: preflight() says its refusal. */
static const char *check_llama(const run_cfg_t *c, char *buf, size_t cap)
{
    if (c->kv_given && !c->kv_heads)
        return "--kv-heads 0: give at least 1 K/V head (leave it out for one per head)";
    if (c->kv_given && c->heads % c->kv_heads) {
        snprintf(buf, cap,
                 "--kv-heads %u does not divide --heads %u: each K/V head serves "
                 "a whole group of query heads",
                 c->kv_heads, c->heads);
        return buf;
    }
    if (c->window_given && !c->window)
        return "--window 0: give at least 1 key per query (leave it out for no window)";
    if (c->interleave_given && !c->interleave)
        return "--interleave 0: give at least 1 model chunk per stage (1: plain 1F1B)";
    if (c->interleave > 1 && c->spec.pp < 2) {
        snprintf(buf, cap,
                 "--interleave %u needs --pp 2 or more: the chunks of a stage "
                 "take turns with the other stages'",
                 c->interleave);
        return buf;
    }
    return NULL;
}

/* The mixture-of-experts flags' values; NULL when they are fine. What needs the
 * stage's devices (--ep over --tp × --dp) the executor checks. */
static const char *check_moe(const run_cfg_t *c, char *buf, size_t cap)
{
    if (!c->experts && (c->top_k_given || c->shared || c->shared_ffn || c->ep_given))
        return "--top-k, --shared-experts, --shared-ffn and --ep need --experts: they shape "
               "mixture-of-experts blocks";
    if (c->shared_ffn && !c->shared)
        return "--shared-ffn without --shared-experts: it is the shared experts' width";
    if (c->experts && c->top_k_given && (!c->top_k || c->top_k > c->experts)) {
        snprintf(buf, cap, "--top-k %u: give 1 to %u (--experts) experts per token", c->top_k,
                 c->experts);
        return buf;
    }
    if (c->ep_given && !c->ep)
        return "--ep 0: give at least 1 (1: every rank holds every expert)";
    if (c->capacity && !c->experts)
        return "--moe-capacity needs --experts: it bounds the routed experts' rows";
    char *end = NULL;
    double v = c->capacity ? strtod(c->capacity, &end) : 0;
    if (c->capacity && (end == c->capacity || *end || !(v >= 0 && v <= 1e6))) {
        snprintf(buf, cap, "--moe-capacity '%s': give a number from 0 (dropless) to 1e6",
                 c->capacity);
        return buf;
    }
    return NULL;
}

/* The latent-attention and router flags' values; NULL when they are fine. What needs
 * the experts or the TP degree (groups that do not split the experts, heads over --tp)
 * the executor checks. */
static const char *check_mla(const run_cfg_t *c, char *buf, size_t cap)
{
    bool mla_flag = c->q_lora || c->nope_given || c->rope_given || c->vhead_given;
    if (mla_flag && !c->kv_lora)
        return "--q-lora, --qk-nope, --qk-rope and --v-head need --kv-lora: they shape latent "
               "attention";
    if (c->kv_lora && !c->no_bias)
        return "--kv-lora needs --no-bias (or --llama): latent attention has no biases";
    if (c->kv_lora && ((c->rope_given && c->qk_rope % 2) || (c->vhead_given && !c->v_head) ||
                       (c->nope_given && c->rope_given && !c->qk_nope && !c->qk_rope)))
        return "--qk-rope must be even (its rotations take pairs), --v-head at least 1, and "
               "--qk-nope + --qk-rope at least 1";
    bool route = c->router || c->router_bias || c->router_groups || c->router_topk_groups ||
                 c->norm_topk || c->routed_scale || c->shared_gate;
    if (route && !c->experts)
        return "--router, --router-bias, --router-groups, --router-topk-groups, --norm-topk, "
               "--routed-scale and --shared-gate need --experts: they shape its router";
    if (c->router && strcmp(c->router, "softmax") && strcmp(c->router, "sigmoid")) {
        snprintf(buf, cap, "--router '%s': give softmax or sigmoid", c->router);
        return buf;
    }
    if ((c->router_groups > 1) != (c->router_topk_groups > 0))
        return "--router-groups G (G >= 2) and --router-topk-groups T (T >= 1) go together";
    char *end = NULL;
    double v = c->routed_scale ? strtod(c->routed_scale, &end) : 1;
    if (c->routed_scale && (end == c->routed_scale || *end || !(v > 0 && v <= 1e6))) {
        snprintf(buf, cap, "--routed-scale '%s': give a number above 0 (at most 1e6)",
                 c->routed_scale);
        return buf;
    }
    if (c->shared_gate && !c->shared)
        return "--shared-gate needs --shared-experts: it gates their output";
    return NULL;
}

/* Combinations the model cannot have, named by their flags. */
static int check(const run_cfg_t *c)
{
    const char *why = NULL;
    char buf[160];
    if (c->tied && !c->vocab)
        why = "--tied without --vocab: a tied head shares the token embedding's table";
    else if (c->positions && !c->vocab)
        why = "--positions without --vocab: the position table is part of the token embedding";
    else if (c->positions && c->positions < c->seq) {
        snprintf(buf, sizeof(buf), "--positions %u is fewer than --seq %u: a row per position",
                 c->positions, c->seq);
        why = buf;
    } else if (c->attn_chunk_given && c->unfused)
        why = "--attn-chunk with --unfused-attn: unfused attention is one chunk of the sequence";
    else if (c->attn_chunk_given && !c->opts.attn_chunk)
        why = "--attn-chunk 0: give at least 1 query row (leave it out for the engine's rule)";
    else if (!(why = check_llama(c, buf, sizeof(buf))) && !(why = check_moe(c, buf, sizeof(buf))))
        why = check_mla(c, buf, sizeof(buf));
    if (why)
        fprintf(stderr, "tessel-exec-run: %s\n", why);
    return why ? -1 : 0;
}

static int build(run_cfg_t *c, tsl_err_t *err)
{
    tsl_layer_t l = {.kind = TSL_LAYER_ENCODER,
                     .seq_len = c->seq,
                     .hidden = c->hidden,
                     .ffn_hidden = c->ffn ? c->ffn : 4 * c->hidden,
                     .heads = c->heads,
                     .causal = !c->not_causal,
                     .unfused_attn = c->unfused,
                     .rms_norm = c->rms_norm,
                     .no_bias = c->no_bias,
                     .gated_ffn = c->gated,
                     .no_dropout = c->no_dropout,
                     .kv_heads = c->kv_heads,
                     .attn_window = c->window,
                     .experts = c->experts,
                     .experts_per_tok = !c->experts      ? 0
                                        : c->top_k_given ? c->top_k
                                        : c->experts < 2 ? c->experts
                                                         : 2,
                     .shared_experts = c->shared,
                     .shared_ffn_hidden = c->shared_ffn,
                     .router_score = c->router && !strcmp(c->router, "sigmoid")
                                         ? TSL_ROUTER_SIGMOID
                                         : TSL_ROUTER_SOFTMAX,
                     .router_bias = c->router_bias ? TSL_ROUTER_BIAS_CHOICE : TSL_ROUTER_BIAS_NONE,
                     .router_norm = c->norm_topk,
                     .router_scale = c->routed_scale ? strtod(c->routed_scale, NULL) : 0,
                     .router_groups = (uint16_t)c->router_groups,
                     .router_topk_groups = (uint16_t)c->router_topk_groups,
                     .shared_expert_gate = c->shared_gate};
    if (c->kv_lora) { /* latent attention: per-head widths default from hidden / heads */
        uint32_t hd = c->heads ? c->hidden / c->heads : 0;
        l.q_lora_rank = c->q_lora;
        l.kv_lora_rank = c->kv_lora;
        l.qk_nope_dim = c->nope_given ? c->qk_nope : hd;
        l.qk_rope_dim = c->rope_given ? c->qk_rope : hd / 2 / 2 * 2;
        l.v_head_dim = c->vhead_given ? c->v_head : hd;
        l.kv_heads = 0;
    }
    tsl_model_init(&c->model, "exec-gpt");
    if (c->vocab) {
        tsl_layer_t emb = {.kind = TSL_LAYER_EMBEDDING,
                           .seq_len = c->seq,
                           .hidden = c->hidden,
                           .vocab = c->vocab,
                           .positions = c->positions};
        if (tsl_model_add(&c->model, &emb, err))
            return -1;
    }
    if (tsl_model_add_n(&c->model, &l, c->layers, err))
        return -1;
    if (c->vocab) {
        tsl_layer_t head = {.kind = TSL_LAYER_HEAD,
                            .seq_len = c->seq,
                            .hidden = c->hidden,
                            .vocab = c->vocab,
                            .tied_head = c->tied};
        if (tsl_model_add(&c->model, &head, err))
            return -1;
    }
    if (tsl_exec_uniform_plan(&c->model, &c->spec, &c->plan, err))
        return -1;
    c->plan.interleave = c->interleave; /* the uniform plan is plain 1F1B */
    c->plan.ep = c->ep;                 /* and without expert parallelism */
    c->opts.moe_capacity = c->capacity ? strtof(c->capacity, NULL) : 0.0f; /* checked */
    return 0;
}

/* Every rank's work made and dropped before any rank starts, so that what the
 * executor refuses (heads or K/V heads --tp does not split, a non-causal window,
 * micro-batches not a multiple of --pp under --interleave, ...) is said once, by the
 * executor, rather than by every rank or after the others wait on it. */
static int preflight(const run_cfg_t *c, tsl_err_t *err)
{
    for (uint32_t r = 0; r < c->plan.n_devices; r++) {
        tsl_exec_rank_t rk;
        if (tsl_exec_rank_from_plan(&c->plan, &c->model, r, &rk, err))
            return -1;
        tsl_exec_rank_free(&rk);
    }
    return 0;
}

static tsl_devops_t *make_dev(run_cfg_t *c, tsl_err_t *err)
{
    tsl_devops_t *d = NULL;
    return tsl_devops_create(c->devops, c->device, c->mem_limit, &d, err) ? NULL : d;
}

/* nccl: rank 0 writes the id to the file (atomically, by rename); the others poll it. */
static int nccl_comm(run_cfg_t *c, int rank, tsl_commops_t **out, tsl_err_t *err)
{
    uint8_t id[TSL_NCCL_ID_BYTES];
    char tmp[4096];
    if (c->plan.n_devices == 1) { /* nobody to tell */
        if (tsl_comm_nccl_unique_id(id, err))
            return -1;
        return tsl_comm_nccl_create(id, 0, 1, c->device, out, err);
    }
    if (!c->nccl_id)
        return tsl_err_set(err, "--comm nccl needs --nccl-id FILE");
    if (rank == 0) {
        snprintf(tmp, sizeof(tmp), "%s.tmp", c->nccl_id);
        FILE *f = NULL;
        if (tsl_comm_nccl_unique_id(id, err) || !(f = fopen(tmp, "wb")) ||
            fwrite(id, 1, sizeof(id), f) != sizeof(id) || fclose(f) || rename(tmp, c->nccl_id))
            return tsl_err_set(err, "nccl: cannot write the id to %s", c->nccl_id);
    } else {
        FILE *f = NULL;
        for (int i = 0; i < 6000 && !(f = fopen(c->nccl_id, "rb")); i++)
            usleep(10000);
        size_t got = f ? fread(id, 1, sizeof(id), f) : 0;
        if (f)
            fclose(f);
        if (got != sizeof(id))
            return tsl_err_set(err, "nccl: no id in %s after 60 s", c->nccl_id);
    }
    return tsl_comm_nccl_create(id, rank, (int)c->plan.n_devices, c->device, out, err);
}

static int make_comm(run_cfg_t *c, int rank, tsl_commops_t **out, tsl_err_t *err)
{
    if (!strcmp(c->comm, "loopback"))
        return tsl_comm_loopback_rank(c->world, rank, out, err);
    if (!strcmp(c->comm, "tcp"))
        return tsl_comm_tcp_create(c->host, c->port, rank, (int)c->plan.n_devices, 60.0, out, err);
    if (!strcmp(c->comm, "nccl"))
        return nccl_comm(c, rank, out, err);
    return tsl_err_set(err, "--comm '%s': give loopback, tcp or nccl", c->comm);
}

static void print_report(const run_cfg_t *c, const tsl_exec_report_t *r)
{
    char buf[1024];
    if (c->json) {
        tsl_exec_report_json(r, buf, sizeof(buf));
        printf("%s\n", buf);
    } else {
        /* A rank off the last stage computes no loss (NaN; null in the JSON): "-",
           not "nan", which reads as a diverged run. */
        char loss[32] = "-";
        if (!isnan(r->loss))
            snprintf(loss, sizeof loss, "%.6g", r->loss);
        printf("rank %-3u stage %-2u iter %.4f s (min %.4f max %.4f)  fwd %.4f  bwd %.4f  "
               "comm %.4f  bubble %.4f  opt %.4f  peak %.1f MiB%s  loss %s\n",
               r->rank, r->stage, r->iter_median_s, r->iter_min_s, r->iter_max_s, r->fwd_s,
               r->bwd_s, r->comm_s, r->bubble_s, r->opt_s, r->peak_bytes / 1048576.0,
               r->oom ? "  OOM" : "", loss);
    }
    fflush(stdout);
}

/* One rank, start to end; 0 on success (an OOM included: it is reported). */
static int run_rank(run_cfg_t *c, int rank)
{
    tsl_err_t err = {0};
    tsl_exec_env_t e = {0};
    tsl_exec_report_t rep;
    int rc = -1;
    if (tsl_exec_rank_from_plan(&c->plan, &c->model, (uint32_t)rank, &e.rank, &err) ||
        !(e.dev = make_dev(c, &err)) || make_comm(c, rank, &e.comm, &err) ||
        tsl_exec_run(&e.rank, &c->opts, e.dev, e.comm, &rep, &err))
        goto out;
    print_report(c, &rep);
    rc = 0;
out:
    if (rc)
        fprintf(stderr, "tessel-exec-run: rank %d: %s\n", rank, err.msg);
    tsl_exec_env_end(&e);
    return rc;
}

typedef struct thread_arg {
    run_cfg_t *c;
    int rank, rc;
} thread_arg_t;

static void *rank_thread(void *p)
{
    thread_arg_t *a = p;
    a->rc = run_rank(a->c, a->rank);
    return NULL;
}

static int run_threads(run_cfg_t *c)
{
    int n = (int)c->plan.n_devices, rc = 0;
    tsl_err_t err = {0};
    thread_arg_t *a = calloc((size_t)n, sizeof(*a));
    pthread_t *th = calloc((size_t)n, sizeof(*th));
    if (!a || !th || tsl_comm_loopback_world(n, &c->world, &err)) {
        fprintf(stderr, "tessel-exec-run: %s\n", err.msg[0] ? err.msg : "out of memory");
        free(a), free(th);
        return 1;
    }
    for (int i = 0; i < n; i++) {
        a[i] = (thread_arg_t){c, i, 0};
        pthread_create(&th[i], NULL, rank_thread, &a[i]);
    }
    for (int i = 0; i < n; i++) {
        pthread_join(th[i], NULL);
        rc |= a[i].rc;
    }
    tsl_comm_loopback_world_free(c->world);
    free(a), free(th);
    return rc ? 1 : 0;
}

static int run_forked(run_cfg_t *c)
{
    int n = (int)c->plan.n_devices, rc = 0;
    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid == 0)
            _exit(run_rank(c, i) ? 1 : 0);
        if (pid < 0)
            return 1;
    }
    for (int i = 0; i < n; i++) {
        int st = 0;
        if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
            rc = 1;
    }
    return rc;
}

int main(int argc, char **argv)
{
    run_cfg_t c = {.layers = 4,
                   .hidden = 64,
                   .heads = 4,
                   .seq = 32,
                   .spec = {.pp = 1, .tp = 1, .dp = 1, .micro_batch = 2, .n_micro = 2},
                   .devops = "cpu",
                   .comm = "loopback",
                   .host = "127.0.0.1",
                   .port = 29500,
                   .rank = -1};
    tsl_err_t err = {0};
    tsl_exec_opts_default(&c.opts);
    int pr = parse(&c, argc, argv);
    if (pr)
        return pr > 0 ? 0 : 2;
    if (check(&c))
        return 2;
    if (build(&c, &err) || preflight(&c, &err)) {
        fprintf(stderr, "tessel-exec-run: %s\n", err.msg);
        tsl_model_free(&c.model);
        return 2;
    }
    int rc;
    if (c.rank >= 0)
        rc = run_rank(&c, c.rank) ? 1 : 0;
    else if (!strcmp(c.comm, "loopback"))
        rc = run_threads(&c);
    else if (!strcmp(c.comm, "tcp"))
        rc = run_forked(&c);
    else if (c.plan.n_devices == 1)
        rc = run_rank(&c, 0) ? 1 : 0;
    else {
        fprintf(stderr, "tessel-exec-run: --comm %s with %u ranks: give --rank\n", c.comm,
                c.plan.n_devices);
        rc = 2;
    }
    tsl_model_free(&c.model);
    return rc;
}
