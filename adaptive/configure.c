/* configure.c -- thread specs ("N", "adaptive", "adaptive:MAX", the
 * baseline words "all", "boehm", "hotspot", "zgc" with an optional ":MAX") and
 * gcs_adaptive_configure: from a spec (or GCSCALE_GC_THREADS) and a machine
 * profile to collector options with the adaptive policy installed.
 *
 * Why the collector does not build the policy itself from the environment:
 * gc/ must not depend on the model (docs/architecture.md), so gcs_gc_init
 * only knows the generic thread-policy hook.  It refuses
 * GCSCALE_GC_THREADS=adaptive with an error naming gcs_adaptive_configure
 * rather than silently running with a fixed P (docs/adaptive.md). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gcscale/adaptive.h"

#define SPEC_FORMS                                                                                    \
    "expected N (1-64), 'adaptive' or 'adaptive:MAX', or a baseline 'all', 'boehm', 'hotspot' or " \
    "'zgc' (each also WORD:MAX; MAX 1-64)"

int gcs_adaptive_parse_spec(const char *spec, gcs_adaptive_spec *out, gcs_err *err)
{
    memset(out, 0, sizeof *out);
    if (!spec || !*spec) {
        gcs_err_set(err, "empty GC thread spec: " SPEC_FORMS);
        return -1;
    }
    gcs_err perr;
    long v;
    size_t wlen = strcspn(spec, ":");
    gcs_adaptive_baseline b = gcs_adaptive_baseline_find(spec, wlen);
    if (b != GCS_ADAPTIVE_BASELINE_NONE || (wlen == 8 && strncmp(spec, "adaptive", 8) == 0)) {
        const char *rest = spec + wlen;
        out->adaptive = 1;
        out->baseline = (int)b;
        if (*rest == '\0')
            return 0;
        if (*rest != ':' || gcs_parse_long(rest + 1, 1, GCS_GC_MAX_THREADS, &v, &perr) < 0) {
            gcs_err_set(err, "bad GC thread spec '%s': " SPEC_FORMS, spec);
            return -1;
        }
        out->max_threads = (int)v;
        return 0;
    }
    if (gcs_parse_long(spec, 1, GCS_GC_MAX_THREADS, &v, &perr) < 0) {
        gcs_err_set(err, "bad GC thread spec '%s': " SPEC_FORMS, spec);
        return -1;
    }
    out->threads = (int)v;
    return 0;
}

void gcs_adaptive_release(gcs_gc_options *opts)
{
    if (opts->thread_policy.destroy)
        opts->thread_policy.destroy(opts->thread_policy.state);
    memset(&opts->thread_policy, 0, sizeof opts->thread_policy);
}

int gcs_adaptive_parse_objective(const char *spec, gcs_adaptive_opts *opts, gcs_err *err)
{
    if (spec && strcmp(spec, "pause") == 0) {
        opts->objective = GCS_ADAPTIVE_OBJECTIVE_PAUSE;
        return 0;
    }
    if (spec && strncmp(spec, "cpu", 3) == 0 && (spec[3] == '\0' || spec[3] == ':')) {
        double eps = GCS_ADAPTIVE_DEFAULT_TOLERANCE;
        if (spec[3] == ':') {
            char *end;
            errno = 0;
            eps = strtod(spec + 4, &end);
            if (errno || end == spec + 4 || *end || !(eps >= 0 && eps <= 1)) {
                gcs_err_set(err, "bad GC objective '%s': EPS of cpu:EPS is a fraction 0-1 (cpu:0.05 = within 5%%)",
                            spec);
                return -1;
            }
        }
        opts->objective = GCS_ADAPTIVE_OBJECTIVE_CPU;
        opts->tolerance = eps;
        return 0;
    }
    gcs_err_set(err, "bad GC objective '%s': expected 'pause', 'cpu' or 'cpu:EPS'", spec ? spec : "");
    return -1;
}

/* The fallback when the adaptive policy cannot be built: every collection
 * at the pool, each decision saying why (the collector never fails because
 * the policy cannot run). */
static int fallback_choose(void *state, const gcs_gc_stats *prev, int max_threads, gcs_gc_decision *d)
{
    (void)state;
    (void)prev;
    d->note = "fallback: no usable machine profile (run gcscale calibrate); P = the pool";
    return max_threads;
}

static void fallback_destroy(void *state) { (void)state; }

int gcs_adaptive_configure(gcs_gc_options *opts, const char *threads_spec, const char *machine_path,
                           gcs_err *err)
{
    return gcs_adaptive_configure_with(opts, threads_spec, machine_path, NULL, err);
}

int gcs_adaptive_configure_with(gcs_gc_options *opts, const char *threads_spec, const char *machine_path,
                                const gcs_adaptive_opts *aopts, gcs_err *err)
{
    const char *spec = threads_spec;
    int from_env = 0;
    if (!spec) {
        spec = getenv("GCSCALE_GC_THREADS");
        from_env = 1;
        if (!spec || !*spec)
            return 0;
    }
    gcs_adaptive_spec sp;
    gcs_err perr;
    if (gcs_adaptive_parse_spec(spec, &sp, &perr) < 0) {
        gcs_err_set(err, "%s%s", from_env ? "GCSCALE_GC_THREADS: " : "", perr.msg);
        return -1;
    }
    if (!sp.adaptive) {
        gcs_adaptive_release(opts);
        opts->threads = sp.threads;
        if (opts->max_threads && opts->max_threads < sp.threads)
            opts->max_threads = sp.threads;
        opts->ignore_threads_env = 1;
        return 0;
    }

    int max = sp.max_threads;
    if (max == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        max = n < 1 ? 1 : n > GCS_GC_MAX_THREADS ? GCS_GC_MAX_THREADS : (int)n;
    }

    if (sp.baseline != GCS_ADAPTIVE_BASELINE_NONE) {
        /* A runtime's rule needs no machine profile. */
        gcs_gc_thread_policy pol;
        if (gcs_adaptive_baseline_policy_new((gcs_adaptive_baseline)sp.baseline, 0, &pol, err) < 0)
            return -1;
        gcs_adaptive_release(opts);
        opts->thread_policy = pol;
        opts->max_threads = max;
        opts->threads = max;
        opts->ignore_threads_env = 1;
        return 0;
    }

    gcs_adaptive_opts ao;
    if (aopts) {
        ao = *aopts;
    } else {
        gcs_adaptive_opts_init(&ao);
        const char *obj = getenv("GCSCALE_GC_OBJECTIVE");
        if (obj && *obj && gcs_adaptive_parse_objective(obj, &ao, &perr) < 0) {
            gcs_err_set(err, "GCSCALE_GC_OBJECTIVE: %s", perr.msg);
            return -1;
        }
    }
    /* Whatever goes wrong from here installs the fallback with one
     * warning: a program must not fail to start because its GC thread
     * policy cannot run. */
    opts->max_threads = max;
    opts->threads = max; /* the first collection's P; the policy chooses from then on */
    opts->ignore_threads_env = 1;
    gcs_adaptive_release(opts);
    opts->thread_policy.name = GCS_ADAPTIVE_POLICY_NAME;
    opts->thread_policy.choose = fallback_choose;
    opts->thread_policy.destroy = fallback_destroy;

    /* The machine profile: explicit, $GCSCALE_MACHINE, or this host's. */
    char path[4096];
    const char *env_machine = getenv("GCSCALE_MACHINE");
    if (machine_path) {
        snprintf(path, sizeof path, "%s", machine_path);
    } else if (env_machine && *env_machine) {
        snprintf(path, sizeof path, "%s", env_machine);
    } else {
        gcs_err perr;
        if (gcs_profile_default_path(path, sizeof path, 0, &perr) < 0) {
            gcs_err_set(err, "adaptive GC threads need a machine profile: %s; running with the pool (%d)",
                        perr.msg, max);
            return 1;
        }
    }
    gcs_err lerr;
    gcs_profile *prof = gcs_profile_load(path, &lerr);
    if (!prof) {
        gcs_err_set(err, "adaptive GC threads: machine profile %s: %s; running with the pool (%d)", path,
                    lerr.msg, max);
        return 1;
    }
    gcs_gc_thread_policy pol;
    if (gcs_adaptive_policy_new(prof, &ao, &pol, &lerr) < 0) {
        gcs_err_set(err, "adaptive GC threads: machine profile %s: %s; running with the pool (%d)", path,
                    lerr.msg, max);
        return 1;
    }
    opts->thread_policy = pol;
    return 0;
}
