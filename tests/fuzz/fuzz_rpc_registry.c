/*
 * fuzz_rpc_registry.c — the Registry and Trials requests as tesseld reads them
 * before its handlers act: the first input byte picks the message type, the
 * rest are its bytes. Every message goes through the wire check every call gets
 * (api/wire.h: NUL bytes and invalid UTF-8 in any string, at any depth), then
 * protobuf-c's unpack; a ReportProfile through every profile check
 * (api/profile_check.h) — bounds, timestamp, and outliers against a history made
 * from the report itself, scaled by the next input byte — and a decoded message
 * is packed again and must come back to the same size.
 */
#include <stdbool.h>
#include <stdlib.h>

#include "fuzz.h"
#include "profile_check.h"
#include "tessel/v1/registry.pb-c.h"
#include "tessel/v1/trials.pb-c.h"
#include "wire.h"

static const ProtobufCMessageDescriptor *const kinds[] = {
    &tessel__v1__register_request__descriptor,     &tessel__v1__report_profile_request__descriptor,
    &tessel__v1__heartbeat_request__descriptor,    &tessel__v1__assignments_request__descriptor,
    &tessel__v1__report_trial_request__descriptor, &tessel__v1__start_trial_request__descriptor,
    &tessel__v1__get_trial_request__descriptor,
};
#define N_KINDS (sizeof kinds / sizeof kinds[0])

/* The report's own figures as a node's history, scaled (x 2^(s-8), s a byte's
 * low 4 bits): inside or outside the outlier window. */
static void check_profile(const Tessel__V1__ReportProfileRequest *req, uint8_t s)
{
    size_t n = req->n_measurements < 64 ? req->n_measurements : 64;
    tsl_profile_prior_t prior[64];
    double scale = (double)(1u << (s & 15)) / 256.0;
    for (size_t i = 0; i < n; i++) {
        const Tessel__V1__Measurement *m = req->measurements[i];
        prior[i] =
            (tsl_profile_prior_t){.name = m->name,
                                  .labels_json = "{}",
                                  .device_index = m->per_device ? (int64_t)m->device_index : -1,
                                  .value = m->value * scale};
    }
    /* each figure's labels serialised once, as the handler does */
    size_t nm = req->n_measurements;
    char **texts = calloc(nm ? nm : 1, sizeof *texts);
    bool ok = texts != NULL;
    for (size_t i = 0; ok && i < nm; i++)
        ok = (texts[i] = tsl_profile_labels_json(req->measurements[i])) != NULL;
    tsl_err_t err = {0};
    if (ok)
        (void)tsl_profile_check_report(req, (const char *const *)texts, 1764316800, prior, n, &err);
    for (size_t i = 0; texts && i < nm; i++)
        free(texts[i]);
    free(texts);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const ProtobufCMessageDescriptor *d = kinds[data[0] % N_KINDS];
    const uint8_t *body = data + 1;
    size_t len = size - 1;
    tsl_err_t err = {0};
    if (tsl_wire_check_string_bytes(body, len, d, &err) != 0)
        return 0; /* refused before any handler, as the daemon does */
    ProtobufCMessage *msg = protobuf_c_message_unpack(d, NULL, len, body);
    if (msg == NULL)
        return 0;
    if (d == &tessel__v1__report_profile_request__descriptor)
        check_profile((const Tessel__V1__ReportProfileRequest *)msg, len ? body[0] : 0);
    size_t packed = protobuf_c_message_get_packed_size(msg);
    uint8_t *again = malloc(packed ? packed : 1);
    if (again != NULL && protobuf_c_message_pack(msg, again) != packed)
        abort(); /* protobuf-c disagrees with itself: a bug to see */
    free(again);
    protobuf_c_message_free_unpacked(msg, NULL);
    return 0;
}
