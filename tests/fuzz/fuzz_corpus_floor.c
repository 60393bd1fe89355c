/* fuzz_corpus_floor.c -- libFuzzer target over the corpus floor check
 * (gcs_corpus_floor_check, validate/corpus_floor.c), built and run by
 * `make fuzz`.
 *
 * `gcscale corpus accuracy --floor FILE` reads a floor the user names
 * (data/corpus/floor.json, or one written by hand to try a model change), so
 * any document must give 0 (kept), 1 (worse, each figure said) or -1 with
 * one error line.  The report it is checked against is a fixed small one:
 * the floor is the user's file, the report is the library's own output.
 * Invariants: the answer is one of those three, an error is one non-empty
 * line, and a report always keeps the floor made from itself. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gcscale/corpus.h"

static const char report_text[] =
    "{\"predictor\": \"default\", \"span\": \"critical\", \"entries\": [{\"name\": \"m\", \"mae_all_pct\": 10.5,"
    " \"mae_pct\": [{\"threads\": 2, \"mae_pct\": 8.25}, {\"threads\": 4, \"mae_pct\": 12.75}],"
    " \"heaps\": [{\"name\": \"tree\", \"max_abs_error_pct\": 5.5, \"p1_time_error_pct\": -20.25},"
    " {\"name\": \"list\", \"max_abs_error_pct\": 1.5, \"p1_time_error_pct\": 300}]}]}";

static FILE *devnull;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static json_t *report;
    if (!report) {
        report = json_loads(report_text, 0, NULL);
        devnull = fopen("/dev/null", "w");
        json_t *own = gcs_corpus_floor_from_report(report, 0.01);
        gcs_err err;
        if (!report || !devnull || !own || gcs_corpus_floor_check(report, own, NULL, &err) != 0)
            __builtin_trap();
        json_decref(own);
    }
    json_t *floor = json_loadb((const char *)data, size, 0, NULL);
    if (!floor)
        return 0; /* not JSON: jansson's business */
    gcs_err err;
    err.msg[0] = 0;
    int r = gcs_corpus_floor_check(report, floor, devnull, &err);
    if (r < -1 || r > 1)
        __builtin_trap();
    if (r == -1 && (!err.msg[0] || strchr(err.msg, '\n')))
        __builtin_trap();
    json_decref(floor);
    return 0;
}
