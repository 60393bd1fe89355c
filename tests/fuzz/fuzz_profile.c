/* fuzz_profile.c -- libFuzzer target over the machine-profile loader
 * (gcs_profile_from_json), built and run by `make fuzz`.
 *
 * A machine profile is the other file a user hands to `gcscale predict`,
 * and often one written by hand (docs/machine-profile.md), so its loader
 * must turn any document into either a valid profile or one error line.
 * Inputs that are not JSON are jansson's business and are skipped: the
 * seeds (the profiles in data/machines/) are JSON, and libFuzzer's mutations of them
 * reach the loader's key, type, shape and range checks.
 *
 * A profile the loader accepts must pass gcs_profile_validate, survive a
 * round trip (to_json, from_json, to_json gives the same document), give a
 * finite latency for every pair of nodes, and print in every format. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gcscale/profile.h"

static FILE *devnull;

static void check_profile(const gcs_profile *p)
{
    gcs_err err;
    if (gcs_profile_validate(p, &err) != 0)
        __builtin_trap();
    for (int a = 0; a < GCS_ACCESS_COUNT; a++)
        for (int i = 0; i < p->nnodes; i++)
            for (int j = 0; j < p->nnodes; j++)
                if (!isfinite(gcs_profile_latency(p, (gcs_access)a, i, j)))
                    __builtin_trap();
    json_t *doc = gcs_profile_to_json(p);
    if (!doc)
        __builtin_trap();
    gcs_profile *again = gcs_profile_from_json(doc, &err);
    if (!again)
        __builtin_trap(); /* what the loader accepted, it must accept once saved */
    json_t *doc2 = gcs_profile_to_json(again);
    if (!doc2 || !json_equal(doc, doc2))
        __builtin_trap();
    gcs_profile_print(again, devnull, GCS_FORMAT_TEXT);
    gcs_profile_print(again, devnull, GCS_FORMAT_CSV);
    gcs_profile_print(again, devnull, GCS_FORMAT_JSON);
    json_decref(doc2);
    json_decref(doc);
    gcs_profile_free(again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!devnull && !(devnull = fopen("/dev/null", "w")))
        __builtin_trap();
    json_error_t jerr;
    json_t *doc = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &jerr);
    if (!doc)
        return 0;
    gcs_err err;
    err.msg[0] = '\0';
    gcs_profile *p = gcs_profile_from_json(doc, &err);
    if (!p) {
        if (!err.msg[0] || strchr(err.msg, '\n'))
            __builtin_trap(); /* every failure is one non-empty line */
    } else {
        check_profile(p);
        gcs_profile_free(p);
    }
    json_decref(doc);
    return 0;
}
