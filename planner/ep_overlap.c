/*
 * ep_overlap.c — Megatron-LM's combined 1F1B step, node by node (ep_overlap.h).
 */
#include "ep_overlap.h"

#include "minmax.h"

/* The two streams and the two micro-batches' events, as times. */
typedef struct streams {
    double comp, comm; /* when each stream is free */
    double ev_f, ev_b; /* when the forward's and the backward's last node ended */
} streams_t;

/* A node of d seconds on *stream after the event *ev; it records *ev. A node of 0
 * is Megatron-LM's NoopScheduleNode: nothing issued, nothing waited on. */
static void node(double *stream, double *ev, double d)
{
    if (!(d > 0))
        return;
    *stream = tsl_max(*stream, *ev) + d;
    *ev = *stream;
}

/* A weight-gradient node (backward_dw): the compute stream's next work, no event. */
static void dw(streams_t *s, double d)
{
    s->comp += d > 0 ? d : 0.0;
}

/* TransformerLayerSchedulePlan.run for forward layer f and backward layer b (either
 * NULL), b_last: b is the backward's last layer (its attention dW waits for the
 * step's end). Returns the compute issued. */
static double pair(streams_t *s, const tsl_ep_layer_t *f, const tsl_ep_layer_t *b, bool delay,
                   bool b_last)
{
    double c = 0.0;
    if (b)
        node(&s->comm, &s->ev_b, b->comb_b);
    if (f) {
        node(&s->comp, &s->ev_f, f->attn_f);
        c += f->attn_f;
    }
    if (b) {
        node(&s->comp, &s->ev_b, b->mlp_b + (delay ? 0.0 : b->mlp_w));
        c += b->mlp_b + b->mlp_w;
    }
    if (f)
        node(&s->comm, &s->ev_f, f->disp_f);
    if (b && delay)
        dw(s, b->mlp_w);
    if (b)
        node(&s->comm, &s->ev_b, b->disp_b);
    if (f) {
        node(&s->comp, &s->ev_f, f->mlp_f);
        node(&s->comm, &s->ev_f, f->comb_f);
        c += f->mlp_f;
    }
    if (b) {
        node(&s->comp, &s->ev_b, b->attn_b + (delay ? 0.0 : b->attn_w));
        c += b->attn_b + b->attn_w;
        if (delay && !b_last)
            dw(s, b->attn_w);
    }
    return c;
}

double tsl_ep_merged_s(const tsl_ep_layer_t *layers, uint32_t n, bool delay_wgrad, double *exposed)
{
    streams_t s = {0};
    double c = 0.0;
    for (uint32_t i = 0; i < n; i++)
        c += pair(&s, &layers[i], &layers[n - 1 - i], delay_wgrad, i == n - 1);
    /* the backward's last layer's attention dW after the loop (beside the stage's p2p),
     * on the compute stream; the step ends when both streams have (the closing waits
     * on both events) */
    if (n > 0 && delay_wgrad)
        dw(&s, layers[0].attn_w);
    double t = tsl_max(tsl_max(s.comp, s.comm), tsl_max(s.ev_f, s.ev_b));
    if (exposed)
        *exposed = t > c ? t - c : 0.0;
    return t;
}

double tsl_ep_merged_k_s(const tsl_ep_layer_t *layers, uint32_t n, bool delay_wgrad, double k)
{
    double e, a = 0.0;
    for (uint32_t i = 0; i < n; i++)
        a += layers[i].disp_f + layers[i].comb_f + layers[i].disp_b + layers[i].comb_b;
    double t = tsl_ep_merged_s(layers, n, delay_wgrad, &e);
    double hidden = a > e ? a - e : 0.0;
    return t + (k > 1.0 ? k - 1.0 : 0.0) * hidden;
}
