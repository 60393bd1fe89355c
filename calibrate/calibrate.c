/* calibrate.c -- one calibration run: measure the machine, fill a profile.
 *
 * Owns the run's options (gcs_calibrate_opts_init), its plan, quick or full
 * (repetitions, load points, each step's progress weight), and the order of
 * its steps (gcs_calibrate_run): the topology and counters; each memory
 * node's measurements (memory.c); the marker's costs, checked (gcsteps.c);
 * then, on the costs just fitted, the collector's steps in their own files
 * (overlap.c, stream.c, resident.c, residency.c, coord.c, marktable.c,
 * sharing.c); the speed probe's record (details.c); last the dependent load
 * (dependent.c).  The run's details go under the profile's
 * extra["calibration"] (details.c keeps its warnings, steps and bounds). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gcscale/calibrate.h"
#include "gcscale/microbench.h"
#include "gcscale/profile.h"
#include "gcscale/topology.h"
#include "calibrate_internal.h"

void gcs_calibrate_opts_init(gcs_calibrate_opts *opts)
{
    memset(opts, 0, sizeof *opts);
    opts->mode = GCS_CALIBRATE_FULL;
}

static const int quick_chains[] = {1, 2, 4, 8, 16};
static const int full_chains[] = {1, 2, 3, 4, 6, 8, 12, 16};

#define W_TOPOLOGY 0.05
/* The full-random steps' weights (seconds on the development VM, 1 GiB,
 * docs/microbench.md "Latency with page walks"). */
#define W_LINK_RANDOM 0.6
#define W_FULL_RANDOM_QUICK 0.8
#define W_FULL_RANDOM_FULL 2.4

/* "1 MiB", "1.5 MiB", "32 KiB": a size for a message. */
static void size_text(uint64_t bytes, char *buf, size_t len)
{
    gcs_format_bytes(bytes, GCS_BYTES_WORD, buf, len);
}

int gcs_calibrate_run(const gcs_calibrate_opts *opts, gcs_profile **out, gcs_err *err)
{
    *out = NULL;
    _gcs_calibrate_ctx c = {.opts = opts, .all_bound = 1};
    int quick = opts->mode == GCS_CALIBRATE_QUICK;
    c.pl = quick ? (_gcs_calibrate_plan){.reps = 5, .steps = 1u << 20, .sweep_reps = 3, .sweep_fine = 0,
                                         .occ_reps = 3, .chains = quick_chains, .nchains = 5, .bw_reps = 5,
                                         .variant_rw = 0, .fr_reps = 3, .fr_steps = 1u << 19, .w_buffer = 2.5,
                                         .w_buffer_4k = 0.6, .w_sweep = 1.5, .w_latency = 1.1,
                                         .w_occupancy = 0.85, .w_bandwidth = 0.2, .w_gc = 0.3,
                                         .w_link_random = W_LINK_RANDOM, .w_full_random = W_FULL_RANDOM_QUICK}
                 : (_gcs_calibrate_plan){.reps = 11, .steps = 0, .sweep_reps = 5, .sweep_fine = 1,
                                         .occ_reps = 5, .chains = full_chains, .nchains = 8, .bw_reps = 10,
                                         .variant_rw = 1, .fr_reps = 7, .fr_steps = 1u << 20, .w_buffer = 2.9,
                                         .w_buffer_4k = 0.6, .w_sweep = 5.4, .w_latency = 4.5,
                                         .w_occupancy = 2.1, .w_bandwidth = 0.6, .w_gc = 0.5,
                                         .w_link_random = W_LINK_RANDOM, .w_full_random = W_FULL_RANDOM_FULL};
    uint64_t start = gcs_now_ns();
    gcs_profile *p = NULL;
    c.t = gcs_topo_load(opts->synthetic, err);
    if (!c.t)
        return -1;
    c.synthetic = gcs_topo_is_synthetic(c.t);
    int nn = gcs_topo_nnodes(c.t);
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int real_cpus = online > 0 ? (int)online : 1;

    /* 8 x LLC (at least 1 GiB) so that a random line is almost never cached. */
    uint64_t size = opts->size_bytes;
    if (!size) {
        size = 8 * gcs_topo_llc_bytes(c.t);
        if (size < (1ull << 30))
            size = 1ull << 30;
        size = (size + (2u << 20) - 1) & ~(uint64_t)((2u << 20) - 1);
    }
    if (gcs_chase_check_size(size, err) < 0) {
        gcs_topo_free(c.t);
        return -1;
    }
    char thp_mode[32];
    int thp = gcs_chase_thp_available(thp_mode, sizeof thp_mode);
    gcs_huge primary = thp ? GCS_HUGE_ON : GCS_HUGE_DEFAULT;

    /* Quick mode caps a DRAM repetition at 1M steps (~0.15 s); small
     * buffers get the automatic count, which scales with their size. */
    if (quick && size < (256ull << 20))
        c.pl.steps = 0;
    if (size < (256ull << 20))
        c.pl.fr_steps = 0;
    p = gcs_profile_new(nn);
    c.cal = json_object();
    c.warnings = json_array();
    c.steps = json_array();
    if (!p || !c.cal || !c.warnings || !c.steps) {
        gcs_err_set(err, "calibrate: out of memory");
        goto fail;
    }
    p->bandwidth_gbs = calloc((size_t)nn, sizeof *p->bandwidth_gbs);
    if (!p->bandwidth_gbs) {
        gcs_err_set(err, "calibrate: out of memory");
        goto fail;
    }
    /* Work units: the expected seconds of each step (the plan's weights),
     * the same figures the steps count (_gcs_calibrate_step_begin and
     * _end, details.c), so the series ends at 100% (it passed 100% before
     * the last step) and the time left follows the clock.  A caller with
     * steps of its own after the run continues the same series. */
    double gib = (double)size / (double)(1u << 30);
    double w_buf = (thp ? c.pl.w_buffer : c.pl.w_buffer_4k) * gib;
    double w_var = thp ? (c.pl.w_buffer_4k * gib + (1 + c.pl.variant_rw) * c.pl.w_latency) : 0;
    double w_fr = (thp ? 2 : 1) * (c.pl.w_link_random * gib + nn * c.pl.w_full_random);
    double total = W_TOPOLOGY + c.pl.w_sweep + c.pl.w_gc +
                   nn * (w_buf + 2.0 * nn * c.pl.w_latency + 2 * c.pl.w_occupancy + c.pl.w_bandwidth +
                         w_var + w_fr) +
                   _gcs_calibrate_overlap_work_topo(c.t, quick, opts->size_bytes) +
                   _gcs_calibrate_stream_work_topo(c.t, quick, opts->size_bytes) +
                   _gcs_calibrate_resident_work_guess(quick) + _gcs_calibrate_residency_work_guess(quick) +
                   _gcs_calibrate_coord_work(quick) +
                   _gcs_calibrate_mark_transfer_work(quick) +
                   _gcs_calibrate_line_transfer_work(NULL, quick) + _gcs_calibrate_dependent_load_work(NULL, quick) +
                   (opts->progress ? opts->extra_work : 0);
    c.pr = opts->progress ? opts->progress : &c.own_pr;
    gcs_progress_init(c.pr, total, opts->quiet);
    double probe_start = _gcs_calibrate_probe(), probe_t0 = (double)gcs_now_ns();

    uint64_t t0 = _gcs_calibrate_step_begin(&c, "topology and counters", W_TOPOLOGY);
    if (gcs_calibrate_fill_profile(c.t, p, err) < 0)
        goto fail;
    /* The nodes and CPUs come from the topology alone: a layout the profile
     * would refuse (a CPU in two nodes) is refused now, not after every
     * node has been measured. */
    if (gcs_profile_check_nodes(p, err) < 0) {
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err->msg);
        gcs_err_set(err, "calibrate: topology %s gives an invalid node layout: %.400s",
                    gcs_topo_description(c.t), msg);
        goto fail;
    }
    char host[256] = "";
    if (gethostname(host, sizeof host - 1) < 0 || !host[0])
        snprintf(host, sizeof host, "unknown");
    snprintf(p->host, sizeof p->host, "%s", host);
    gcs_now_iso8601(p->created, sizeof p->created);
    snprintf(p->tool_version, sizeof p->tool_version, "%s", gcs_version());
    c.count_llc = gcs_counters_probe(&c.counters);
    snprintf(p->counters_source, sizeof p->counters_source, "%s", c.counters.source);
    snprintf(p->counters_reason, sizeof p->counters_reason, "%s", c.counters.reason);
    if (c.synthetic) {
        char w[400];
        snprintf(w, sizeof w,
                 "topology is %s: threads are not pinned and memory is not bound, so every "
                 "(CPU node, memory node) pair measures this machine's own memory",
                 gcs_topo_description(c.t));
        _gcs_calibrate_add_warning(&c, w);
    }
    /* A chase buffer the last-level cache holds measures that cache: the
     * profile would give predict and validate cache latencies as if they
     * were memory's (--help's "small sizes measure caches" was the only
     * word of it). */
    uint64_t llc = gcs_topo_llc_bytes(c.t);
    if (opts->size_bytes && llc && size < llc) {
        char w[400], sz[32], lz[32];
        size_text(size, sz, sizeof sz);
        size_text(llc, lz, sizeof lz);
        snprintf(w, sizeof w,
                 "--size %s is below the last-level cache (%s): the chase runs in the caches, so "
                 "the profile's latencies, occupancy and bandwidth are the caches', not memory's "
                 "(the default, 8 x LLC and at least 1 GiB, measures memory)",
                 sz, lz);
        _gcs_calibrate_add_warning(&c, w);
    }
    json_object_set_new(c.cal, "mode", json_string(quick ? "quick" : "full"));
    json_object_set_new(c.cal, "topology", json_string(gcs_topo_description(c.t)));
    json_object_set_new(c.cal, "synthetic", json_boolean(c.synthetic));
    json_object_set_new(c.cal, "size_bytes", json_integer((json_int_t)size));
    json_object_set_new(c.cal, "llc_bytes", json_integer((json_int_t)llc));
    json_object_set_new(c.cal, "thp", json_pack("{s:s, s:s}", "system", thp_mode, "primary",
                                                gcs_chase_huge_name(primary)));
    json_object_set_new(c.cal, "buffers", json_array());
    json_object_set_new(c.cal, "latency", json_array());
    json_object_set_new(c.cal, "huge_page_variants", json_array());
    json_object_set_new(c.cal, "full_random", json_array());
    if (!thp)
        snprintf(p->full_random_note[GCS_PAGES_HUGE], sizeof p->full_random_note[GCS_PAGES_HUGE],
                 "not measured: transparent huge pages are unavailable here (THP mode \"%s\")",
                 thp_mode);
    json_object_set_new(c.cal, "occupancy", json_array());
    json_object_set_new(c.cal, "bandwidth", json_array());
    json_object_set_new(c.cal, "counters",
                        json_pack("{s:s, s:s, s:s}", "source", c.counters.source, "event",
                                  c.counters.event, "reason", c.counters.reason));
    _gcs_calibrate_step_end(&c, "topology and counters", W_TOPOLOGY, t0);

    for (int m = 0; m < nn; m++)
        if (_gcs_calibrate_measure_node(&c, p, m, size, primary, thp, real_cpus, err) < 0)
            goto fail;

    t0 = _gcs_calibrate_step_begin(&c, "gc costs (marker on cache-resident heaps)", c.pl.w_gc);
    if (_gcs_calibrate_gc_costs_checked(quick, p, c.cal, c.warnings, err) < 0)
        goto fail;
    _gcs_calibrate_step_end(&c, "gc costs (marker on cache-resident heaps)", c.pl.w_gc, t0);

    json_object_set_new(c.cal, "binding_honoured", json_boolean(c.all_bound));
    json_object_set_new(c.cal, "warnings", c.warnings);
    json_object_set_new(c.cal, "steps", c.steps);
    json_object_set_new(c.cal, "duration_s", _gcs_calibrate_num((double)(gcs_now_ns() - start) / 1e9));
    c.warnings = c.steps = NULL;
    if (!p->extra) /* it may hold the fits' uncertainty and reliability already */
        p->extra = json_object();
    json_object_set_new(p->extra, "calibration", c.cal);
    c.cal = NULL;
    /* Last, outside the timed steps: it needs the gc costs just fitted. */
    _gcs_calibrate_overlap_step(p, quick, opts->size_bytes, c.pr);
    _gcs_calibrate_stream_step(p, quick, opts->size_bytes, c.pr);
    _gcs_calibrate_resident_step(p, quick, c.pr);
    _gcs_calibrate_residency_step(p, quick, c.pr);
    _gcs_calibrate_coord_step(p, quick, c.pr);
    _gcs_calibrate_mark_transfer_step(p, quick, c.pr);
    _gcs_calibrate_mark_transfer_cached_step(p, quick, c.pr);
    _gcs_calibrate_line_transfer_step(p, quick, c.pr);
    _gcs_calibrate_record_probe(p, probe_start, _gcs_calibrate_probe(), ((double)gcs_now_ns() - probe_t0) / 1e9);
    /* not the marker's: outside the speed probe's span, which times it */
    _gcs_calibrate_dependent_load_step(p, quick, c.pr);
    if (!opts->progress)
        gcs_progress_finish(c.pr);
    gcs_topo_free(c.t);
    if (gcs_profile_validate(p, err) < 0) {
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err->msg);
        gcs_err_set(err, "calibrate: measured profile is not valid: %.400s", msg);
        gcs_profile_free(p);
        return -1;
    }
    *out = p;
    return 0;
fail:
    json_decref(c.cal);
    json_decref(c.warnings);
    json_decref(c.steps);
    gcs_profile_free(p);
    gcs_topo_free(c.t);
    return -1;
}
