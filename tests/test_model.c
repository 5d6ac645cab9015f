/*
 * test_model.c — planner/model: the formulas of model.h on known shapes, the
 * presets against their published parameter counts, shape errors, the builder.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "model.h"
#include "roofline.h"

static tsl_layer_t encoder(uint32_t s, uint32_t h, uint32_t a)
{
    tsl_layer_t l = {0};
    l.kind = TSL_LAYER_ENCODER;
    l.seq_len = s;
    l.hidden = h;
    l.ffn_hidden = 4 * h;
    l.heads = a;
    return l;
}

static bool has(const tsl_err_t *e, const char *needle)
{
    return strstr(e->msg, needle) != NULL;
}

static void test_presets(void)
{
    size_t n = tsl_model_preset_count();
    CHECK(n >= 25, "only %zu presets", n);
    printf("%-16s %6s %16s %16s %8s\n", "preset", "layers", "computed", "published", "diff");
    for (size_t i = 0; i < n; i++) {
        const tsl_model_preset_t *p = tsl_model_preset_at(i);
        tsl_model_t m;
        tsl_err_t err = {0};
        int rc = tsl_model_preset(p->name, &m, &err);
        CHECK(rc == 0, "preset %s: %s", p->name, err.msg);
        if (rc != 0)
            continue;
        uint64_t got = tsl_model_params(&m);
        printf("%-16s %6u %16llu %16llu %+7.2f%%%s\n", p->name, m.n_layers, (unsigned long long)got,
               (unsigned long long)p->published_params,
               100.0 * ((double)got - (double)p->published_params) / (double)p->published_params,
               p->params_are_ours ? "  (ours: the source gives no count)" : "");
        CHECK_NEAR(got, p->published_params, 0.03, "%s: %llu vs published %llu", p->name,
                   (unsigned long long)got, (unsigned long long)p->published_params);
        CHECK(tsl_model_validate(&m, &err) == 0, "%s: %s", p->name, err.msg);
        CHECK(m.layers[0].kind == TSL_LAYER_EMBEDDING, "%s: first layer is not embedding", p->name);
        CHECK(m.layers[m.n_layers - 1].kind == TSL_LAYER_HEAD, "%s: last layer is not head",
              p->name);
        CHECK(strcmp(m.name, p->name) == 0, "%s: model named %s", p->name, m.name);
        CHECK(p->source != NULL && strlen(p->source) > 10, "%s: no source", p->name);
        CHECK(m.tokens_per_sample > 0 && tsl_model_fwd_flops(&m) > 0 && tsl_model_act_bytes(&m) > 0,
              "%s: empty figures", p->name);
        tsl_model_free(&m);
    }
    CHECK(tsl_model_preset_at(n) == NULL, "preset_at past the end");
    const tsl_model_preset_t *p = tsl_model_preset_find("bert-huge-32");
    CHECK(p && strcmp(p->name, "BERT-Huge-32") == 0, "case-insensitive find");
    CHECK(tsl_model_preset_find("LLAMA2-7b") != NULL, "case-insensitive find");
    CHECK(tsl_model_preset_find("BERT-Huge") == NULL, "prefix must not match");
    CHECK(tsl_model_preset_find(NULL) == NULL, "NULL name");
}

static void test_encoder_formulas(void)
{
    const uint32_t shapes[][3] = {{512, 1024, 16}, {2048, 5120, 40}, {1024, 1280, 20}, {7, 64, 1}};
    for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
        double s = shapes[i][0], h = shapes[i][1], a = shapes[i][2];
        tsl_layer_t l = encoder(shapes[i][0], shapes[i][1], shapes[i][2]);
        tsl_err_t err = {0};
        CHECK(tsl_layer_derive(&l, &err) == 0, "derive: %s", err.msg);
        CHECK(l.params == (uint64_t)(12 * h * h + 13 * h), "params %llu for h=%g",
              (unsigned long long)l.params, h);
        CHECK(l.fwd_flops == 24 * s * h * h + 4 * s * s * h, "flops %g for s=%g h=%g", l.fwd_flops,
              s, h);
        /* fused attention (the default) keeps no scores: Korthikanti's 34·s·h */
        double act = (double)(l.act_repl_bytes + l.act_shard_bytes);
        CHECK(act == 34 * s * h && l.act_score_bytes == 0, "fused act %g vs %g", act, 34 * s * h);
        CHECK(l.core_fwd_flops == 4 * s * s * h, "core flops %g", l.core_fwd_flops);
        /* unfused: sbh(34 + 5as/h), and sbh(10 + 24/t + 5as/(ht)) under TP t */
        l.unfused_attn = true;
        CHECK(tsl_layer_derive(&l, &err) == 0, "derive: %s", err.msg);
        act = (double)(l.act_repl_bytes + l.act_shard_bytes);
        CHECK(act == 34 * s * h + 5 * a * s * s, "act %g vs %g", act, 34 * s * h + 5 * a * s * s);
        CHECK(l.act_score_bytes == (uint64_t)(5 * a * s * s), "scores %llu",
              (unsigned long long)l.act_score_bytes);
        for (uint32_t t = 1; t <= 8; t *= 2) {
            double got = (double)l.act_repl_bytes + (double)l.act_shard_bytes / t;
            double want = s * h * (10.0 + 24.0 / t) + 5 * a * s * s / t;
            CHECK(got == want, "TP %u: %g vs %g", t, got, want);
        }
        CHECK(l.bnd_act_bytes == (uint64_t)(2 * s * h), "boundary %llu",
              (unsigned long long)l.bnd_act_bytes);
        CHECK(l.tp_allreduces == 2, "encoder all-reduces %u", l.tp_allreduces);
    }
}

/* An attention block plus an FFN block is an encoder layer (AutoPipe's split). */
static void test_sublayers(void)
{
    tsl_layer_t enc = encoder(1024, 1024, 16), at = enc, ff = enc;
    at.kind = TSL_LAYER_ATTENTION;
    ff.kind = TSL_LAYER_FFN;
    tsl_err_t err = {0};
    CHECK(tsl_layer_derive(&enc, &err) == 0 && tsl_layer_derive(&at, &err) == 0 &&
              tsl_layer_derive(&ff, &err) == 0,
          "derive: %s", err.msg);
    CHECK(at.params + ff.params == enc.params, "params split");
    CHECK(at.fwd_flops + ff.fwd_flops == enc.fwd_flops, "flops split");
    CHECK(at.act_repl_bytes + ff.act_repl_bytes == enc.act_repl_bytes, "repl split");
    CHECK(at.act_shard_bytes + ff.act_shard_bytes == enc.act_shard_bytes, "shard split");
    CHECK(at.tp_allreduces == 1 && ff.tp_allreduces == 1, "block all-reduces");
    /* the attention-only block needs no FFN size */
    at.ffn_hidden = 0;
    CHECK(tsl_layer_derive(&at, &err) == 0, "attention without ffn: %s", err.msg);
}

static void test_extensions(void)
{
    tsl_err_t err = {0};
    /* gated FFN: 3·h·f weights, 6·s·h·f FLOPs */
    tsl_layer_t f = {0};
    f.kind = TSL_LAYER_FFN;
    f.seq_len = 16;
    f.hidden = 64;
    f.ffn_hidden = 96;
    f.gated_ffn = true;
    f.no_bias = true;
    f.rms_norm = true;
    CHECK(tsl_layer_derive(&f, &err) == 0, "%s", err.msg);
    CHECK(f.params == 3 * 64 * 96 + 64, "gated params %llu", (unsigned long long)f.params);
    CHECK(f.fwd_flops == 6.0 * 16 * 64 * 96, "gated flops %g", f.fwd_flops);

    /* GQA: kv_heads = heads changes nothing; fewer shrink K and V */
    tsl_layer_t a = encoder(128, 512, 8), b = a, c = a;
    b.kv_heads = 8;
    c.kv_heads = 2;
    CHECK(tsl_layer_derive(&a, &err) == 0 && tsl_layer_derive(&b, &err) == 0 &&
              tsl_layer_derive(&c, &err) == 0,
          "%s", err.msg);
    CHECK(a.params == b.params && a.fwd_flops == b.fwd_flops, "kv_heads = heads");
    CHECK(a.params - c.params == 2ull * (512 * 512 - 512 * 128) + 2 * (512 - 128),
          "GQA params %llu vs %llu", (unsigned long long)a.params, (unsigned long long)c.params);

    /* windowed attention: the s² terms become s·w */
    tsl_layer_t w = encoder(3136, 320, 10);
    w.attn_window = 49;
    w.unfused_attn = true; /* the score stash is what the window shrinks */
    CHECK(tsl_layer_derive(&w, &err) == 0, "%s", err.msg);
    double s = 3136, h = 320;
    CHECK(w.fwd_flops == 24 * s * h * h + 4 * s * 49 * h, "window flops %g", w.fwd_flops);
    CHECK(w.act_repl_bytes + w.act_shard_bytes == (uint64_t)(34 * s * h + 5 * 10 * s * 49),
          "window act");
    /* a sliding (causal) window: unfused, it computes all s × s scores and masks those
     * outside the window, keeping the s × s softmax output (+ dropout): 5 · a · s · s
     * = 5 · 16 · 1024² = 83,886,080 B; the counted FLOPs stay s·w. Fused: no scores. */
    tsl_layer_t sw = encoder(1024, 1024, 16), swf;
    sw.attn_window = 256;
    sw.causal = true;
    swf = sw;
    sw.unfused_attn = true;
    CHECK(tsl_layer_derive(&sw, &err) == 0 && tsl_layer_derive(&swf, &err) == 0, "%s", err.msg);
    CHECK(sw.act_score_bytes == 83886080ull, "sliding window scores %llu",
          (unsigned long long)sw.act_score_bytes);
    CHECK(sw.fwd_flops == 24.0 * 1024 * 1024 * 1024 + 4.0 * 1024 * 256 * 1024 &&
              sw.core_fwd_flops == 4.0 * 1024 * 256 * 1024,
          "sliding window flops %g", sw.fwd_flops);
    CHECK(swf.act_score_bytes == 0 && swf.fwd_flops == sw.fwd_flops, "fused sliding window");
    tsl_layer_t big = encoder(49, 320, 10);
    big.attn_window = 4096; /* wider than the sequence: the whole sequence */
    tsl_layer_t plain = encoder(49, 320, 10);
    CHECK(tsl_layer_derive(&big, &err) == 0 && tsl_layer_derive(&plain, &err) == 0, "%s", err.msg);
    CHECK(big.fwd_flops == plain.fwd_flops, "window wider than s");

    /* decoder: self + cross + FFN, 3 norms, 3 all-reduces */
    tsl_layer_t d = encoder(4, 1024, 16);
    d.kind = TSL_LAYER_DECODER;
    d.cross_seq_len = 512;
    CHECK(tsl_layer_derive(&d, &err) == 0, "%s", err.msg);
    double dh = 1024, ds = 4, dt = 512;
    CHECK(d.params == (uint64_t)(16 * dh * dh + 19 * dh), "decoder params %llu",
          (unsigned long long)d.params);
    double want = 8 * ds * dh * dh + 4 * ds * ds * dh + 4 * ds * dh * dh + 4 * dt * dh * dh +
                  4 * ds * dt * dh + 16 * ds * dh * dh;
    CHECK(d.fwd_flops == want, "decoder flops %g vs %g", d.fwd_flops, want);
    CHECK(d.tp_allreduces == 3, "decoder all-reduces %u", d.tp_allreduces);

    /* embedding and head */
    tsl_layer_t e = {0};
    e.kind = TSL_LAYER_EMBEDDING;
    e.seq_len = 1024;
    e.hidden = 768;
    e.vocab = 50257;
    e.positions = 1024;
    CHECK(tsl_layer_derive(&e, &err) == 0, "%s", err.msg);
    CHECK(e.params == (50257ull + 1024) * 768 && e.fwd_flops == 0 && e.tp_allreduces == 1,
          "token embedding");
    tsl_layer_t hd = {0};
    hd.kind = TSL_LAYER_HEAD;
    hd.seq_len = 1024;
    hd.hidden = 768;
    hd.vocab = 50257;
    hd.tied_head = true;
    CHECK(tsl_layer_derive(&hd, &err) == 0, "%s", err.msg);
    CHECK(hd.params == 0 && hd.fwd_flops == 2.0 * 1024 * 768 * 50257 && hd.tp_allreduces == 0,
          "tied head");
    hd.tied_head = false;
    hd.head_tokens = 1;
    CHECK(tsl_layer_derive(&hd, &err) == 0, "%s", err.msg);
    CHECK(hd.params == 50257ull * 768 && hd.fwd_flops == 2.0 * 768 * 50257, "classifier head");
    tsl_layer_t pe = {0};
    pe.kind = TSL_LAYER_EMBEDDING;
    pe.patch_embed = true;
    pe.seq_len = 196;
    pe.hidden = 768;
    pe.vocab = 3 * 16 * 16;
    CHECK(tsl_layer_derive(&pe, &err) == 0, "%s", err.msg);
    CHECK(pe.params == 768ull * 768 + 768 && pe.fwd_flops == 2.0 * 196 * 768 * 768 &&
              pe.tp_allreduces == 0,
          "patch embedding");

    /* extras are added verbatim */
    tsl_layer_t x = encoder(8, 64, 1), y = x;
    y.extra_params = 5;
    y.extra_fwd_flops = 7;
    y.extra_act_bytes = 11;
    CHECK(tsl_layer_derive(&x, &err) == 0 && tsl_layer_derive(&y, &err) == 0, "%s", err.msg);
    CHECK(y.params == x.params + 5 && y.fwd_flops == x.fwd_flops + 7 &&
              y.act_repl_bytes == x.act_repl_bytes + 11 && y.act_shard_bytes == x.act_shard_bytes,
          "extras");
}

static void test_t5_512_4(void)
{
    tsl_model_t m;
    tsl_err_t err = {0};
    CHECK(tsl_model_preset("t5-512/4-32", &m, &err) == 0, "%s", err.msg);
    uint32_t enc = 0, dec = 0;
    bool ok = true;
    for (uint32_t i = 0; i < m.n_layers; i++) {
        const tsl_layer_t *l = &m.layers[i];
        if (l->kind == TSL_LAYER_ENCODER) {
            enc++;
            ok = ok && l->seq_len == 512 && l->cross_seq_len == 0;
        } else if (l->kind == TSL_LAYER_DECODER) {
            dec++;
            ok = ok && l->seq_len == 4 && l->cross_seq_len == 512;
        }
    }
    CHECK(enc == 16 && dec == 16, "T5-512/4-32: %u encoder, %u decoder layers", enc, dec);
    CHECK(ok, "T5-512/4-32: encoder seq 512, decoder seq 4 with cross_seq 512");
    CHECK(m.tokens_per_sample == 512, "tokens_per_sample %u", m.tokens_per_sample);
    CHECK(m.layers[m.n_layers - 1].seq_len == 4, "the head works on decoder tokens");
    /* shorter decoders stash far less than encoders (Galvatron's imbalance, with
     * the unfused attention of its time) */
    CHECK(tsl_model_set_unfused_attn(&m, true, NULL) == 0, "unfused");
    CHECK(m.layers[20].act_repl_bytes + m.layers[20].act_shard_bytes <
              (m.layers[1].act_repl_bytes + m.layers[1].act_shard_bytes) / 10,
          "decoder activations not smaller");
    CHECK(m.layers[20].params > m.layers[2].params, "decoder has the extra attention block");
    tsl_model_free(&m);
}

static void test_swin(void)
{
    tsl_model_t m;
    tsl_err_t err = {0};
    CHECK(tsl_model_preset("Swin-Huge-32", &m, &err) == 0, "%s", err.msg);
    const uint32_t hid[4] = {320, 640, 1280, 2560}, seq[4] = {3136, 784, 196, 49},
                   depth[4] = {2, 2, 26, 2};
    uint32_t i = 1;
    for (int k = 0; k < 4; k++) {
        for (uint32_t j = 0; j < depth[k]; j++, i++) {
            const tsl_layer_t *l = &m.layers[i];
            CHECK(l->kind == TSL_LAYER_ENCODER && l->hidden == hid[k] && l->seq_len == seq[k] &&
                      l->attn_window == 49 && l->heads == hid[k] / 40,
                  "Swin layer %u: h %u s %u w %u heads %u", i, l->hidden, l->seq_len,
                  l->attn_window, l->heads);
        }
    }
    CHECK(i == m.n_layers - 1, "Swin-Huge-32 has %u layers", m.n_layers);
    /* patch merging sits on the last layer of stages 1-3 */
    CHECK(m.layers[2].params > m.layers[1].params, "merge params on stage 1's last layer");
    CHECK(m.layers[2].params - m.layers[1].params == 8ull * 320 * 320 + 8 * 320, "merge params");
    tsl_model_free(&m);
}

/* Galvatron's ViT (PKU-DAIR/Hetu df32daa, vit/scripts/train_vit_huge_hp_layerwise.sh):
 * image 224, patch 16 → 196 patches and the class token, 197 tokens in every layer;
 * the patch embedding is a 3·16² → h projection. */
static void test_vit(void)
{
    tsl_model_t m;
    tsl_err_t err = {0};
    CHECK(tsl_model_preset("ViT-Huge-32", &m, &err) == 0, "%s", err.msg);
    CHECK(m.tokens_per_sample == 197, "tokens_per_sample %u", m.tokens_per_sample);
    CHECK(m.layers[0].patch_embed && m.layers[0].vocab == 3 * 16 * 16, "patch %u",
          m.layers[0].vocab);
    for (uint32_t i = 1; i + 1 < m.n_layers; i++)
        CHECK(m.layers[i].seq_len == 197, "ViT layer %u: s %u", i, m.layers[i].seq_len);
    tsl_model_free(&m);
}

static void test_errors(void)
{
    tsl_err_t err = {0};
    tsl_layer_t l = encoder(512, 0, 16);
    CHECK(tsl_layer_derive(&l, &err) != 0 && has(&err, "hidden"), "hidden 0: %s", err.msg);
    l = encoder(512, 1024, 16);
    l.kind = TSL_LAYER_FFN;
    l.ffn_hidden = 0;
    CHECK(tsl_layer_derive(&l, &err) != 0 && has(&err, "ffn_hidden"), "ffn 0: %s", err.msg);
    l = encoder(512, 1024, 0);
    CHECK(tsl_layer_derive(&l, &err) != 0 && has(&err, "heads"), "heads 0: %s", err.msg);
    l = encoder(0, 1024, 16);
    CHECK(tsl_layer_derive(&l, &err) != 0 && has(&err, "seq_len"), "seq 0: %s", err.msg);
    l = encoder(512, 1024, 16);
    l.kind = TSL_LAYER_DECODER;
    CHECK(tsl_layer_derive(&l, &err) != 0 && has(&err, "cross_seq_len"), "cross: %s", err.msg);
    l = encoder(512, 1000, 16);
    CHECK(tsl_layer_derive(&l, &err) != 0 && has(&err, "attn_dim"), "d %% a: %s", err.msg);
    l = encoder(512, 1024, 16);
    l.kv_heads = 3;
    CHECK(tsl_layer_derive(&l, &err) != 0 && has(&err, "kv_heads"), "kv: %s", err.msg);
    l = encoder(512, 1024, 16);
    l.kind = TSL_LAYER_HEAD;
    CHECK(tsl_layer_derive(&l, &err) != 0 && has(&err, "vocab"), "head vocab: %s", err.msg);
    l.kind = (tsl_layer_kind_t)99;
    CHECK(tsl_layer_derive(&l, &err) != 0 && has(&err, "kind"), "kind: %s", err.msg);
    l = encoder(4000000000u, 4000000000u, 1);
    CHECK(tsl_layer_derive(&l, &err) != 0 && has(&err, "too large"), "huge: %s", err.msg);

    /* the model names the layer */
    tsl_model_t m;
    tsl_model_init(&m, "bad");
    tsl_layer_t ok = encoder(8, 64, 1), bad = ok;
    bad.ffn_hidden = 0;
    CHECK(tsl_model_add(&m, &ok, &err) == 0, "%s", err.msg);
    CHECK(tsl_model_add(&m, &bad, &err) != 0 && has(&err, "layer 1") && has(&err, "ffn_hidden"),
          "model add: %s", err.msg);
    CHECK(m.n_layers == 1, "a failed add leaves the model unchanged");
    tsl_model_free(&m);

    /* unknown presets */
    CHECK(tsl_model_preset("GPT-5", &m, &err) != 0 && has(&err, "\"GPT-5\"") &&
              has(&err, "BERT-Huge-32"),
          "unknown: %s", err.msg);
    CHECK(m.n_layers == 0 && m.layers == NULL, "unknown preset leaves an empty model");
    /* the nearest presets (nearest.h): case and punctuation slips, a family without
     * its size; none when nothing is near */
    CHECK(tsl_model_preset("Llama-3-8B", &m, &err) != 0 &&
              has(&err, "unknown preset \"Llama-3-8B\" (did you mean Llama3-8B?); known presets: "),
          "Llama-3-8B: %s", err.msg);
    CHECK(tsl_model_preset("mixtral", &m, &err) != 0 && has(&err, "(did you mean Mixtral-8x7B?)"),
          "mixtral: %s", err.msg);
    CHECK(tsl_model_preset("gpt-oss", &m, &err) != 0 &&
              has(&err, "(did you mean GPT-OSS-120B or GPT-OSS-20B?)"),
          "gpt-oss: %s", err.msg);
    CHECK(tsl_model_preset("GPT-5", &m, &err) != 0 && !has(&err, "did you mean"), "GPT-5: %s",
          err.msg);
    char longname[2000];
    memset(longname, 'x', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    CHECK(tsl_model_preset(longname, &m, &err) != 0 && has(&err, "unknown preset"),
          "long name: %.80s", err.msg);
    CHECK(tsl_model_preset(NULL, &m, &err) != 0 && has(&err, "no preset"), "NULL: %s", err.msg);
    /* a name with a newline or another control character echoed escaped, on one line:
     * "GPT2\nINFO forged" printed a line of its own in a log */
    CHECK(tsl_model_preset("GPT2\nINFO forged\x1b[2J\"q\\", &m, &err) != 0 &&
              has(&err, "unknown preset \"GPT2\\nINFO forged\\x1b[2J\\\"q\\\\\"") &&
              strchr(err.msg, '\n') == NULL && strchr(err.msg, '\x1b') == NULL,
          "control characters: %s", err.msg);
    char shown[TSL_ERR_SHOWN_MAX(5)];
    CHECK(strcmp(tsl_err_shown("a\tb\x7f\x01", 5, shown, sizeof shown), "a\\tb\\x7f\\x01") == 0,
          "shown: %s", shown);
    CHECK(strcmp(tsl_err_shown("ab\n", 8, shown, 4), "ab") == 0, "shown cut whole: %s", shown);

    /* family specs */
    tsl_arch_spec_t sp = {.arch = TSL_ARCH_GPT,
                          .layers = 0,
                          .hidden = 64,
                          .ffn_hidden = 256,
                          .heads = 4,
                          .seq_len = 32,
                          .vocab = 100};
    CHECK(tsl_model_build(&sp, "x", &m, &err) != 0 && has(&err, "layers"), "spec: %s", err.msg);
    sp.layers = 2;
    sp.kv_heads = 3;
    CHECK(tsl_model_build(&sp, "x", &m, &err) != 0 && has(&err, "kv_heads"), "spec: %s", err.msg);
    CHECK(m.n_layers == 0, "failed build leaves an empty model");
    sp.kv_heads = 0; /* transformers' GPT2Block: the gpt family's, layer scaling with it */
    sp.layer_scale = true;
    CHECK(tsl_model_build(&sp, "x", &m, &err) != 0 && has(&err, "layer_scale"), "spec: %s",
          err.msg);
    sp.hf_gpt2_eager = true;
    CHECK(tsl_model_build(&sp, "x", &m, &err) == 0 && m.layers[1].hf_gpt2_eager &&
              m.layers[1].layer_scale && !m.layers[0].hf_gpt2_eager,
          "spec: %s", err.msg);
    tsl_model_free(&m);
    sp.arch = TSL_ARCH_BERT;
    CHECK(tsl_model_build(&sp, "x", &m, &err) != 0 && has(&err, "hf_gpt2_eager"), "spec: %s",
          err.msg);
}

static void test_builder(void)
{
    tsl_err_t err = {0};
    tsl_model_t a, b;
    CHECK(tsl_model_preset("GPT2-345M", &a, &err) == 0, "%s", err.msg);
    CHECK(tsl_model_copy(&b, &a, &err) == 0, "copy: %s", err.msg);
    CHECK(b.n_layers == a.n_layers && b.layers != a.layers && strcmp(a.name, b.name) == 0 &&
              a.tokens_per_sample == b.tokens_per_sample,
          "copy is equal and separate");
    for (uint32_t i = 0; i < a.n_layers && i < b.n_layers; i++) {
        const tsl_layer_t *x = &a.layers[i], *y = &b.layers[i];
        CHECK(x->kind == y->kind && x->seq_len == y->seq_len && x->hidden == y->hidden &&
                  x->params == y->params && x->fwd_flops == y->fwd_flops &&
                  x->act_repl_bytes == y->act_repl_bytes &&
                  x->act_shard_bytes == y->act_shard_bytes,
              "copied layer %u differs", i);
    }
    b.layers[1].params = 1;
    CHECK(a.layers[1].params != 1, "copy is deep");
    tsl_model_free(&b);
    CHECK(b.n_layers == 0 && b.layers == NULL, "free empties");
    tsl_model_free(&b); /* twice is fine */
    tsl_model_free(&a);

    tsl_model_t empty;
    tsl_model_init(&empty, "empty");
    CHECK(tsl_model_validate(&empty, &err) != 0 && has(&err, "no layers"), "%s", err.msg);
    CHECK(tsl_model_copy(&b, &empty, &err) == 0 && b.n_layers == 0, "copy of empty");

    /* names are cut, not overflowed */
    char longname[200];
    memset(longname, 'n', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    tsl_model_init(&a, longname);
    CHECK(strlen(a.name) == TSL_NAME_MAX - 1, "name cut to %zu", strlen(a.name));

    /* the layer limit */
    tsl_layer_t l = encoder(8, 64, 1);
    CHECK(tsl_model_add_n(&a, &l, TSL_MODEL_MAX_LAYERS + 1, &err) != 0 &&
              has(&err, "TSL_MODEL_MAX_LAYERS"),
          "limit: %s", err.msg);
    CHECK(a.n_layers == 0, "nothing added past the limit");
    CHECK(tsl_model_add_n(&a, &l, TSL_MODEL_MAX_LAYERS, &err) == 0, "%s", err.msg);
    CHECK(tsl_model_validate(&a, &err) == 0, "%s", err.msg);
    CHECK(tsl_model_add(&a, &l, &err) != 0 && has(&err, "limit"), "one more: %s", err.msg);
    CHECK(a.n_layers == TSL_MODEL_MAX_LAYERS, "n_layers %u", a.n_layers);
    a.n_layers = TSL_MODEL_MAX_LAYERS + 1; /* hand-made model over the limit */
    CHECK(tsl_model_validate(&a, &err) != 0 && has(&err, "TSL_MODEL_MAX_LAYERS"), "%s", err.msg);
    a.n_layers = TSL_MODEL_MAX_LAYERS;
    a.layers[7].hidden = 0;
    CHECK(tsl_model_validate(&a, &err) != 0 && has(&err, "layer 7") && has(&err, "hidden"),
          "validate: %s", err.msg);
    tsl_model_free(&a);

    CHECK(strcmp(tsl_layer_kind_name(TSL_LAYER_FFN), "ffn") == 0 &&
              strcmp(tsl_layer_kind_name(TSL_LAYER_KIND_COUNT), "unknown") == 0,
          "kind names");
}

static void test_llama(void)
{
    tsl_err_t err = {0};
    tsl_model_t m;
    CHECK(tsl_model_preset("Llama2-7B", &m, &err) == 0, "%s", err.msg);
    CHECK(m.layers[0].positions == 0, "RoPE: no position table");
    CHECK(m.layers[0].params == 32000ull * 4096, "embedding params");
    CHECK(m.layers[m.n_layers - 1].params == 32000ull * 4096 + 4096, "untied head + norm");
    CHECK(m.layers[1].params == 4ull * 4096 * 4096 + 3ull * 4096 * 11008 + 2 * 4096,
          "Llama layer params %llu", (unsigned long long)m.layers[1].params);
    CHECK(m.tokens_per_sample == 4096, "seq 4096");
    tsl_model_free(&m);
}

/* The LLAMA family's variants (model.h): per-layer windows, QK-norm, sandwich
 * norms, soft-capping, the embedding scale; and their refusal elsewhere. */
static void test_llama_variants(void)
{
    tsl_err_t err = {0};
    tsl_model_t m;
    tsl_arch_spec_t sp = {.arch = TSL_ARCH_LLAMA,
                          .layers = 6,
                          .hidden = 64,
                          .ffn_hidden = 128,
                          .heads = 4,
                          .kv_heads = 2,
                          .head_dim = 32,
                          .seq_len = 256,
                          .vocab = 1000,
                          .attn_window = 64,
                          .gated_ffn = true};
    sp.full_attn_layers[0] = 1u << 2 | 1u << 5; /* layers 2 and 5 global */
    CHECK(tsl_model_build(&sp, "w", &m, &err) == 0, "%s", err.msg);
    const uint32_t want[6] = {64, 64, 0, 64, 64, 0};
    for (uint32_t i = 0; i < 6; i++)
        CHECK(m.layers[1 + i].attn_window == want[i], "layer %u: window %u", i,
              m.layers[1 + i].attn_window);
    CHECK(m.layers[1].attn_dim == 128, "d = 4 x 32, wider than h = 64");
    /* q, o: 64 x 128; k, v: 64 x 64; gated FFN 3 x 64 x 128; 2 norms */
    uint64_t plain = 2ull * 64 * 128 + 2ull * 64 * 64 + 3ull * 64 * 128 + 2 * 64;
    CHECK(m.layers[1].params == plain, "plain layer %llu", (unsigned long long)m.layers[1].params);
    tsl_model_free(&m);

    sp.qk_norm = TSL_QK_NORM_PER_HEAD;
    sp.sandwich_norm = sp.embed_scale = sp.attn_softcap = sp.logit_softcap = true;
    CHECK(tsl_model_build(&sp, "g", &m, &err) == 0, "%s", err.msg);
    CHECK(m.layers[1].params == plain + 2 * 32 + 2 * 64, "QK-norm 2 x head_dim, 2 norms more");
    double norms = 2 * 4.0 * 256 * 64; /* the sandwich norms; the QK norms' are the layer's */
    CHECK(m.layers[1].extra_fwd_flops == norms + 3.0 * 4 * 256 * 64 &&
              m.layers[3].extra_fwd_flops == norms + 3.0 * 4 * 256 * 256 &&
              m.layers[1].qk_norm == TSL_QK_NORM_PER_HEAD,
          "soft-cap over the window's scores (%g, %g)", m.layers[1].extra_fwd_flops,
          m.layers[3].extra_fwd_flops);
    CHECK(m.layers[0].extra_fwd_flops == 256.0 * 64 &&
              m.layers[m.n_layers - 1].extra_fwd_flops == 3.0 * 256 * 1000,
          "embedding scale, logit soft-cap");
    tsl_model_free(&m);
    sp.qk_norm = TSL_QK_NORM_FULL;
    CHECK(tsl_model_build(&sp, "o", &m, &err) == 0, "%s", err.msg);
    CHECK(m.layers[1].params == plain + 128 + 64 + 2 * 64, "QK-norm d + e");
    tsl_model_free(&m);
    sp.qk_norm = TSL_QK_NORM_L2 + 1;
    CHECK(tsl_model_build(&sp, "bad", &m, &err) != 0 && strstr(err.msg, "qk_norm"), "%s", err.msg);
    sp.qk_norm = 0;
    sp.arch = TSL_ARCH_NEOX;
    CHECK(tsl_model_build(&sp, "bad", &m, &err) != 0 && strstr(err.msg, "llama family"), "%s",
          err.msg);
}

/* Whether layer 1 (the first transformer layer) of a preset is causal. */
static bool preset_causal(const char *name)
{
    tsl_err_t err = {0};
    tsl_model_t m;
    if (tsl_model_preset(name, &m, &err) != 0) {
        CHECK(0, "%s: %s", name, err.msg);
        return false;
    }
    bool c = m.layers[1].causal;
    tsl_model_free(&m);
    return c;
}

/* Decoder-only LMs causal; BERT, ViT, Swin, TransGAN not; T5's encoder not and
 * its decoder's self-attention yes. A spec may override; a bad value is named. */
static void test_causal(void)
{
    const char *yes[] = {"GPT3-15B", "GPT2-345M", "Llama2-7B"};
    const char *no[] = {"BERT-Huge-32", "ViT-Huge-32", "Swin-Huge-32", "TransGAN-Hetero",
                        "BERT-Large"};
    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
        CHECK(preset_causal(yes[i]), "%s is causal", yes[i]);
    for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
        CHECK(!preset_causal(no[i]), "%s sees every token", no[i]);
    tsl_err_t err = {0};
    tsl_model_t m;
    CHECK(tsl_model_preset("T5-Large-32", &m, &err) == 0, "%s", err.msg);
    uint32_t enc = 0, dec = 0;
    for (uint32_t i = 0; i < m.n_layers; i++) {
        enc += m.layers[i].kind == TSL_LAYER_ENCODER && m.layers[i].causal;
        dec += m.layers[i].kind == TSL_LAYER_DECODER && m.layers[i].causal;
    }
    CHECK(enc == 0 && dec == 16, "T5: %u causal encoder layers, %u causal decoder layers", enc,
          dec);
    tsl_model_free(&m);
    tsl_arch_spec_t sp = {.arch = TSL_ARCH_BERT,
                          .layers = 2,
                          .hidden = 64,
                          .ffn_hidden = 256,
                          .heads = 4,
                          .seq_len = 128,
                          .vocab = 1000,
                          .positions = 128,
                          .causal = TSL_CAUSAL_ON};
    CHECK(tsl_model_build(&sp, "bert-causal", &m, &err) == 0 && m.layers[1].causal, "on: %s",
          err.msg);
    uint64_t ka[TSL_LAYER_KEY_LEN], kb[TSL_LAYER_KEY_LEN];
    tsl_layer_t other = m.layers[1];
    other.causal = false;
    tsl_layer_key(&m.layers[1], ka);
    tsl_layer_key(&other, kb);
    CHECK(memcmp(ka, kb, sizeof ka) != 0, "causality is part of the layer key (it costs)");
    tsl_model_free(&m);
    sp.arch = TSL_ARCH_GPT;
    sp.causal = TSL_CAUSAL_OFF;
    CHECK(tsl_model_build(&sp, "gpt-bidir", &m, &err) == 0 && !m.layers[1].causal, "off: %s",
          err.msg);
    tsl_model_free(&m);
    sp.causal = 7;
    CHECK(tsl_model_build(&sp, "bad", &m, &err) != 0 && strstr(err.msg, "causal"), "7: %s",
          err.msg);
}

/* Llama 3 (Dubey et al. 2024, Table 3): GQA with 8 KV heads, vocabulary 128,256, no
 * position table, untied head; the model cards' counts 8.03B / 70.6B / 405B (the
 * 405B is 405.85B, as the Hugging Face card's "406B" rounds it). */
static void test_llama3(void)
{
    const struct {
        const char *name;
        uint32_t layers;
        uint64_t lo, hi; /* the published count's rounding range */
    } want[] = {
        {"Llama3-8B", 34, 8025000000ull, 8035000000ull},
        {"Llama3-70B", 82, 70550000000ull, 70650000000ull},
        {"Llama3-405B", 128, 405000000000ull, 406000000000ull},
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        tsl_model_t m;
        tsl_err_t err = {0};
        CHECK(tsl_model_preset(want[i].name, &m, &err) == 0, "%s: %s", want[i].name, err.msg);
        if (m.n_layers == 0)
            continue;
        uint64_t got = tsl_model_params(&m);
        CHECK(got >= want[i].lo && got < want[i].hi, "%s: %llu parameters", want[i].name,
              (unsigned long long)got);
        CHECK(m.n_layers == want[i].layers, "%s: %u layers", want[i].name, m.n_layers);
        CHECK(m.layers[1].kv_heads == 8 && m.layers[0].vocab == 128256 &&
                  m.layers[0].positions == 0 && m.tokens_per_sample == 8192,
              "%s: kv_heads %u vocab %u positions %u seq %u", want[i].name, m.layers[1].kv_heads,
              m.layers[0].vocab, m.layers[0].positions, m.tokens_per_sample);
        CHECK(!m.layers[m.n_layers - 1].tied_head, "%s: the head is tied", want[i].name);
        tsl_model_free(&m);
    }
}

/* One DeepSeek-V3 MLA + MoE layer by hand (model.h formulas), and every dense
 * preset keeps active = total and its 30-entry layer key. */
static void test_moe_mla(void)
{
    tsl_model_t m;
    tsl_err_t err = {0};
    CHECK(tsl_model_preset("DeepSeek-V3", &m, &err) == 0, "%s", err.msg);
    const tsl_layer_t *l = &m.layers[4]; /* layer 3: the first with experts */
    double h = 7168, a = 128, n = 128, r = 64, v = 128, q = 1536, c = 512;
    double attn = h * q + q + q * a * (n + r)         /* q_a, its norm, q_b */
                  + h * (c + r) + c + c * a * (n + v) /* kv_a (with the rope key), norm, kv_b */
                  + a * v * h /* o */ + h /* input norm */;
    double expert = 3.0 * h * 2048;
    double moe = 256 * expert + 1 * expert + h * 256 /* router */ + 256 /* its bias */ + h;
    CHECK(l->params == (uint64_t)(attn + moe), "mla+moe layer params %llu vs %.0f",
          (unsigned long long)l->params, attn + moe);
    CHECK(l->active_params == (uint64_t)(attn + moe - 248 * expert), "active: %llu",
          (unsigned long long)l->active_params);
    /* attention 187,114,496 = 1536·(7168 + 1 + 24576) + 7168·576 + 512 + 512·32768
     * + 16384·7168 + 7168 (the input norm) */
    CHECK(attn == 187114496.0, "mla parameters by hand: %.0f", attn);
    double s = 4096;
    double flops = 2 * s * (h * q + q * a * (n + r) + h * (c + r) + c * a * (n + v) + a * v * h) +
                   2 * s * s * a * (n + r) + 2 * s * s * a * v /* attention */
                   + 8 * 2 * 3 * s * h * 2048 + 2 * 3 * s * h * 2048 + 2 * s * h * 256;
    CHECK(l->fwd_flops == flops, "flops %.6g vs %.6g", l->fwd_flops, flops);
    /* top-k copies of each token's expert activations: k·(2·2·s·f + 2·s·f) + shared */
    double shard = 4 * s * a * (n + r) + 4 * s * a * v + 8 * 6 * s * 2048 + 6 * s * 2048;
    CHECK(l->act_shard_bytes == (uint64_t)shard, "shard %llu vs %.0f",
          (unsigned long long)l->act_shard_bytes, shard);
    CHECK(l->act_repl_bytes == (uint64_t)(4 * s * h + 4 * s * q + 4 * s * c + 2 * s * r +
                                          4 * s * h + 8 * 2 * s * h + 4 * s * 256),
          "repl %llu", (unsigned long long)l->act_repl_bytes);
    CHECK(m.layers[1].experts == 0 && m.layers[1].ffn_hidden == 18432, "first 3 layers dense");
    uint64_t key[TSL_LAYER_KEY_LEN];
    CHECK(tsl_layer_key(l, key) == 39 && key[30] == 256 && key[35] == 512,
          "the MoE/MLA shape is in the key (its length as before chunked attention)");
    CHECK(tsl_model_check_priced(&m, &err) == 0, "MoE and MLA are priced: %s", err.msg);
    const tsl_layer_t moe_layer = *l;
    tsl_model_free(&m);

    tsl_layer_t bad = moe_layer;
    bad.experts_per_tok = 300;
    CHECK(tsl_layer_derive(&bad, &err) == -1 && has(&err, "experts_per_tok"), "%s", err.msg);
    bad = moe_layer;
    bad.no_bias = false;
    CHECK(tsl_layer_derive(&bad, &err) == -1 && has(&err, "no_bias"), "%s", err.msg);

    for (size_t i = 0; i < tsl_model_preset_count(); i++) {
        const tsl_model_preset_t *p = tsl_model_preset_at(i);
        CHECK(tsl_model_preset(p->name, &m, &err) == 0, "%s", err.msg);
        if (tsl_model_moe_layers(&m) == 0) {
            /* TransGAN's, BLOOM's (ALiBi: model.h) and T5's (HF T5's eager norm and
               FFN dropout) blocks key longer */
            uint32_t kl = m.layers[1].transgan_eager ? 42u
                          : m.layers[1].alibi        ? 53u
                          : m.layers[1].eager_norm   ? 54u
                                                     : 30u;
            CHECK(
                tsl_model_active_params(&m) == tsl_model_params(&m) &&
                    tsl_layer_key(&m.layers[1], key) == kl && tsl_model_check_priced(&m, &err) == 0,
                "%s: dense: active = total, old key (TransGAN's, BLOOM's, T5's block: their own), "
                "priced",
                p->name);
        }
        /* every head but TransGAN's (its 1×1 convolution) ends the stack's final norm,
         * of the blocks' kind, and keys it (cost model 183) */
        const tsl_layer_t *hd = &m.layers[m.n_layers - 1], *b = &m.layers[1];
        bool gan = b->transgan_eager;
        CHECK(hd->kind == TSL_LAYER_HEAD && hd->final_norm == !gan &&
                  (gan || (hd->rms_norm == b->rms_norm && hd->eager_norm == b->eager_norm)) &&
                  tsl_layer_key(hd, key) == (gan ? 30u : TSL_LAYER_KEY_LEN),
              "%s: the head's final norm (%d, rms %d, eager %d)", p->name, hd->final_norm,
              hd->rms_norm, hd->eager_norm);
        tsl_model_free(&m);
    }
}

/*
 * Chunked attention (Llama 4; model.h attn_chunked): the keys a query sees by
 * hand, the counts equal to a sliding window's, a key of its own, and the fused
 * core timed over (w + 1)/2 keys where a sliding window visits about w.
 */
static void test_chunked(void)
{
    /* s 8, chunks of 4, causal: queries see 1, 2, 3, 4, 1, 2, 3, 4 keys: 20/8 */
    CHECK(tsl_attn_chunk_keys(8, 4, true) == 2.5 && tsl_attn_keys(8, 4, true) == 3.25,
          "chunk 4 of 8: %g keys (a sliding window: %g)", tsl_attn_chunk_keys(8, 4, true),
          tsl_attn_keys(8, 4, true));
    /* s 10: two chunks of 4 and one of 2: (10 + 10 + 3)/10; not causal (16 + 16 + 4)/10 */
    CHECK(tsl_attn_chunk_keys(10, 4, true) == 2.3 && tsl_attn_chunk_keys(10, 4, false) == 3.6,
          "a short last chunk: %g, %g", tsl_attn_chunk_keys(10, 4, true),
          tsl_attn_chunk_keys(10, 4, false));
    CHECK(tsl_attn_chunk_keys(8, 0, true) == 4.5 && tsl_attn_chunk_keys(8, 16, true) == 4.5 &&
              tsl_attn_chunk_keys(8, 4, false) == 4 && tsl_attn_chunk_keys(1, 0, true) == 1,
          "no chunk, or one wider than s: the causal (s + 1)/2");
    CHECK(tsl_attn_chunk_keys(32768, 8192, true) == 4096.5, "Llama 4 at 32768: %g",
          tsl_attn_chunk_keys(32768, 8192, true));

    tsl_layer_t sl = encoder(1024, 1024, 16);
    sl.attn_window = 256;
    sl.causal = true;
    tsl_layer_t ch = sl;
    ch.attn_chunked = true;
    tsl_err_t err = {0};
    CHECK(tsl_layer_derive(&sl, &err) == 0 && tsl_layer_derive(&ch, &err) == 0, "%s", err.msg);
    CHECK(ch.params == sl.params && ch.fwd_flops == sl.fwd_flops &&
              ch.core_fwd_flops == sl.core_fwd_flops && ch.act_repl_bytes == sl.act_repl_bytes &&
              ch.act_shard_bytes == sl.act_shard_bytes,
          "a chunk counts as a window of the same size (s/w blocks of w^2 scores)");
    uint64_t ka[TSL_LAYER_KEY_LEN], kb[TSL_LAYER_KEY_LEN];
    CHECK(tsl_layer_key(&sl, ka) == 30 && tsl_layer_key(&ch, kb) == 40 && kb[39] == 1,
          "a chunked layer has a key of its own; a sliding one keeps the dense key");
    /* the kernel-level flags are keyed where set (a plan cache must not hand a clamped
     * gpt-oss layer's plan to an unclamped one), and only there */
    tsl_layer_t cl = sl, tg = sl;
    cl.glu_clamp = true;
    tg.transgan_eager = true;
    CHECK(tsl_layer_key(&cl, kb) == 42 && kb[40] == 1 && kb[41] == 0 &&
              memcmp(ka, kb, 30 * sizeof ka[0]) == 0,
          "glu_clamp keyed");
    CHECK(tsl_layer_key(&tg, kb) == 42 && kb[40] == 0 && kb[41] == 1, "transgan_eager keyed");
    tsl_layer_t hg = sl, hs; /* transformers' GPT2Block, with and without layer scaling */
    hg.hf_gpt2_eager = true;
    hs = hg;
    hs.layer_scale = true;
    CHECK(tsl_layer_key(&hg, kb) == 42 && kb[40] == 0 && kb[41] == 2 &&
              tsl_layer_key(&hs, ka) == 42 && ka[41] == 6,
          "hf_gpt2_eager keyed (%llu), layer_scale too (%llu)", (unsigned long long)kb[41],
          (unsigned long long)ka[41]);
    tsl_layer_t lone = sl; /* the layer division is priced in transformers' block alone */
    lone.layer_scale = true;
    CHECK(tsl_layer_derive(&lone, &err) != 0 && strstr(err.msg, "layer_scale") &&
              strstr(err.msg, "hf_gpt2_eager"),
          "layer_scale alone: %s", err.msg);

    /* FLOP-only device: the fused core runs 4·s·keys·d per sample */
    tsl_roofline_dev_t flat;
    tsl_roofline_dev_init(&flat, 1e15, 0);
    double s = 1024, d = 1024;
    CHECK_NEAR(tsl_roofline_core_fwd_s(&flat, &ch, 8, 1), 4.0 * s * 128.5 * d * 8 / 1e15, 1e-15,
               "chunk of 256: (256 + 1)/2 keys per query");
    CHECK_NEAR(tsl_roofline_core_fwd_s(&flat, &sl, 8, 1),
               4.0 * s * tsl_attn_keys(1024, 256, true) * d * 8 / 1e15, 1e-15,
               "a sliding window of 256: 224.125 keys");
    tsl_layer_t unf = ch;
    unf.unfused_attn = true;
    CHECK(tsl_layer_derive(&unf, &err) == 0 && unf.act_score_bytes == 5ull * 16 * 1024 * 1024,
          "unfused chunks keep the masked s x s scores (5 B each with dropout), as a causal "
          "window: %llu",
          (unsigned long long)unf.act_score_bytes);

    tsl_layer_t bad = encoder(1024, 1024, 16);
    bad.attn_chunked = true;
    CHECK(tsl_layer_derive(&bad, &err) == -1 && has(&err, "attn_chunked") &&
              has(&err, "attn_window"),
          "a chunk needs its size: %s", err.msg);
}

/*
 * gpt-oss and Llama 4 presets, one layer of each by hand (transformers'
 * modeling_gpt_oss.py and modeling_llama4.py shapes). gpt-oss-120b (config.json:
 * h 2880, 64 heads of 64, 8 K/V heads, 128 experts of 2880, top-4): Q and O
 * 2880 x 4096, K and V 2880 x 512, each with its bias; 64 sinks; per expert a
 * fused gate/up 2880 x 5760 + 5760 and a down 2880 x 2880 + 2880; router
 * 2880 x 128 + 128; two RMSNorms.
 */
/* YaRN's attention factor and the layers it sends through Megatron-LM's unfused
 * RoPE (cost model 126): gpt-oss's factor 32 with transformers' mscale defaults
 * (1, 0) gives 1 + 0.1·ln 32 = 1.3466, so every attention block of both gpt-oss
 * presets has yarn_eager_rope; DeepSeek-V3's (40, 1, 1) gives 1 and its latent
 * attention is not this path; RoPE without YaRN has no factor. */
static void test_yarn_eager_rope(void)
{
    tsl_model_rope_t yarn = {.scaling = TSL_ROPE_SCALING_YARN, .scaling_factor = 32, .mscale = 1};
    CHECK_NEAR(tsl_model_yarn_attention_factor(&yarn), 1.0 + 0.1 * log(32.0), 1e-12, "gpt-oss: %g",
               tsl_model_yarn_attention_factor(&yarn));
    yarn.scaling_factor = 40;
    yarn.mscale_all_dim = 1;
    CHECK(tsl_model_yarn_attention_factor(&yarn) == 1.0, "DeepSeek-V3: 1");
    yarn.scaling_factor = 1;
    yarn.mscale_all_dim = 0;
    CHECK(tsl_model_yarn_attention_factor(&yarn) == 1.0, "factor 1: no scaling");
    tsl_model_rope_t l3 = {.scaling = TSL_ROPE_SCALING_LLAMA3, .scaling_factor = 8, .mscale = 1};
    CHECK(tsl_model_yarn_attention_factor(&l3) == 1.0 &&
              tsl_model_yarn_attention_factor(NULL) == 1.0,
          "no YaRN: 1");
    const char *yes[] = {"GPT-OSS-120B", "GPT-OSS-20B"},
               *no[] = {"DeepSeek-V3", "Llama3-405B", "Mixtral-8x7B"};
    tsl_model_t m;
    tsl_err_t err = {0};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        CHECK(tsl_model_preset(yes[i], &m, &err) == 0, "%s", err.msg);
        uint32_t n = 0;
        for (uint32_t j = 0; j < m.n_layers; j++)
            n += m.layers[j].yarn_eager_rope;
        CHECK(n == m.n_layers - 2 && !m.layers[0].yarn_eager_rope &&
                  !m.layers[m.n_layers - 1].yarn_eager_rope,
              "%s: %u of %u layers (every block, not the embedding or head)", yes[i], n,
              m.n_layers);
        tsl_model_free(&m);
    }
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
        CHECK(tsl_model_preset(no[i], &m, &err) == 0, "%s", err.msg);
        for (uint32_t j = 0; j < m.n_layers; j++)
            CHECK(!m.layers[j].yarn_eager_rope, "%s layer %u", no[i], j);
        tsl_model_free(&m);
    }
    CHECK(tsl_model_preset_seq("GPT-OSS-120B", 8192, &m, &err) == 0 && m.layers[1].yarn_eager_rope,
          "a sequence of its own keeps it: %s", err.msg);
    uint64_t ka[TSL_LAYER_KEY_LEN], kb[TSL_LAYER_KEY_LEN];
    tsl_layer_t plain = m.layers[1];
    plain.yarn_eager_rope = false;
    uint32_t n = tsl_layer_key(&m.layers[1], ka);
    CHECK(n == tsl_layer_key(&plain, kb) && memcmp(ka, kb, n * sizeof ka[0]) != 0,
          "keyed: a layer priced apart is not costed as the other");
    tsl_model_free(&m);
}

static void test_gpt_oss_llama4(void)
{
    tsl_model_t m;
    tsl_err_t err = {0};
    CHECK(tsl_model_preset("GPT-OSS-120B", &m, &err) == 0, "%s", err.msg);
    double h = 2880, d = 4096, e = 512, f = 2880;
    double attn = 2 * h * d + 2 * h * e + (d + 2 * e + h) + 64;
    double expert = 3 * h * f + 2 * f + h;
    double layer = attn + 128 * expert + (h * 128 + 128) + 2 * h;
    const tsl_layer_t *l = &m.layers[1];
    CHECK(l->params == (uint64_t)layer && l->active_params == (uint64_t)(layer - 124 * expert),
          "gpt-oss-120b layer: %llu (by hand %.0f), active %llu", (unsigned long long)l->params,
          layer, (unsigned long long)l->active_params);
    CHECK(l->attn_window == 128 && m.layers[2].attn_window == 0 && !l->attn_chunked &&
              !l->no_bias && l->experts == 128 && l->experts_per_tok == 4 && l->causal &&
              l->glu_clamp,
          "gpt-oss: even layers a 128 window, odd full; biases; top-4 of 128; clamped GLU");
    CHECK(m.n_layers == 38 && tsl_model_moe_layers(&m) == 36 && m.tokens_per_sample == 4096,
          "gpt-oss-120b: 36 MoE layers at 4096");
    /* published (model card): 116.8B total; 5.1B active without the input embedding */
    double total = (double)tsl_model_params(&m);
    double active = (double)(tsl_model_active_params(&m) - m.layers[0].params);
    CHECK(total > 116.75e9 && total < 116.85e9 && active > 5.05e9 && active < 5.15e9,
          "gpt-oss-120b: %.3fB total, %.3fB active", total / 1e9, active / 1e9);
    tsl_model_free(&m);

    /* Llama 4 Scout: h 5120, 40 heads of 128, 8 K/V heads; 16 experts of 8192 and a
     * shared one of 8192, router 5120 x 16 without bias; every 4th layer NoPE */
    CHECK(tsl_model_preset("Llama4-Scout", &m, &err) == 0, "%s", err.msg);
    h = 5120, d = 5120, e = 1024, f = 8192;
    attn = 2 * h * d + 2 * h * e;
    expert = 3 * h * f;
    layer = attn + 16 * expert + expert + h * 16 + 2 * h;
    l = &m.layers[1];
    CHECK(l->params == (uint64_t)layer && l->active_params == (uint64_t)(layer - 15 * expert),
          "scout layer: %llu (by hand %.0f)", (unsigned long long)l->params, layer);
    double s = 8192;
    CHECK(l->attn_chunked && l->attn_window == 8192 && l->extra_params == 0 &&
              l->qk_norm == TSL_QK_NORM_L2 && l->extra_fwd_flops == 0.0 &&
              m.layers[4].attn_window == 0 && !m.layers[4].attn_chunked &&
              m.layers[4].qk_norm == TSL_QK_NORM_NONE,
          "scout: RoPE layers chunked with a weightless L2 QK-norm; layer 3 NoPE, full, none");
    tsl_layer_t nope = *l; /* the NoPE shape: its FLOPs and stash lack the norms' */
    nope.qk_norm = TSL_QK_NORM_NONE;
    CHECK(tsl_layer_derive(&nope, &err) == 0 &&
              l->fwd_flops == nope.fwd_flops + 4.0 * s * (d + e) &&
              l->act_shard_bytes == nope.act_shard_bytes + 2ull * 8192 * (5120 + 1024),
          "scout: the L2 norm's 4 FLOPs and 2 B an element of Q and K");
    CHECK(tsl_model_moe_layers(&m) == 48 && l->shared_experts == 1 &&
              l->shared_ffn_hidden == 8192 && l->experts_per_tok == 1,
          "scout: every layer 1 shared + top-1 of 16");
    tsl_model_free(&m);

    /* Maverick: even layers dense (16384), odd ones 128 experts; no QK-norm */
    CHECK(tsl_model_preset("Llama4-Maverick", &m, &err) == 0, "%s", err.msg);
    CHECK(m.layers[1].experts == 0 && m.layers[1].ffn_hidden == 16384 &&
              m.layers[2].experts == 128 && m.layers[2].ffn_hidden == 8192 &&
              tsl_model_moe_layers(&m) == 24 && m.layers[1].extra_fwd_flops == 0.0,
          "maverick: dense and MoE layers alternate, no QK-norm");
    CHECK(m.layers[1].params == (uint64_t)(attn + 3 * h * 16384 + 2 * h), "maverick dense layer");
    tsl_model_free(&m);

    /* the new spec fields belong to the llama family; a chunk needs its size */
    tsl_arch_spec_t sp = {.arch = TSL_ARCH_NEOX,
                          .layers = 2,
                          .hidden = 64,
                          .ffn_hidden = 256,
                          .heads = 4,
                          .seq_len = 128,
                          .vocab = 100,
                          .attn_sinks = true};
    CHECK(tsl_model_build(&sp, "bad", &m, &err) != 0 && has(&err, "attn_sinks"), "%s", err.msg);
    sp.arch = TSL_ARCH_LLAMA;
    sp.attn_sinks = false;
    sp.attn_chunked = true;
    CHECK(tsl_model_build(&sp, "bad", &m, &err) != 0 && has(&err, "attn_chunked"), "%s", err.msg);
    sp.attn_chunked = false;
    sp.qkv_bias = sp.linear_bias = true;
    CHECK(tsl_model_build(&sp, "bad", &m, &err) != 0 && has(&err, "qkv_bias"), "%s", err.msg);
    sp.qkv_bias = sp.linear_bias = false;
    sp.glu_clamp = true; /* the experts' activation: without experts, refused */
    CHECK(tsl_model_build(&sp, "bad", &m, &err) != 0 && has(&err, "glu_clamp"), "%s", err.msg);
}

int main(void)
{
    test_presets();
    test_llama3();
    test_causal();
    test_encoder_formulas();
    test_sublayers();
    test_extensions();
    test_t5_512_4();
    test_swin();
    test_vit();
    test_errors();
    test_builder();
    test_llama();
    test_llama_variants();
    test_moe_mla();
    test_chunked();
    test_gpt_oss_llama4();
    test_yarn_eager_rope();
    return CHECK_DONE();
}
