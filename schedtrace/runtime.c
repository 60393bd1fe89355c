/* runtime.c -- class presets for managed runtimes (gcscale trace --runtime).
 *
 * A runtime names its own threads; the names are what a sched trace can tell
 * roles by (the kernel knows nothing of GC or JIT).  The HotSpot patterns are
 * the names HotSpot gives its threads (os::set_native_thread_name with the
 * thread's name, truncated by Linux to 15 characters), checked against the
 * threads of real runs of OpenJDK 17 with ParallelGC and G1
 * (docs/speedup-stacks.md, "Runtime presets", lists what was seen).  Node 20
 * and Go name none of their threads (every one is "node", or the program's
 * name), so their presets can only say so: roles need --class rules there.
 *
 * Order matters: the first matching rule wins, and user rules come first. */
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#include "gcscale/schedtrace.h"

typedef struct rule {
    const char *cls, *pattern;
} rule;

/* HotSpot (OpenJDK 17).  The launcher's thread and the Java main thread are
 * both "java": class main (the main thread of a program that does its work
 * there can be made an application thread with --class mutator=java).  Every
 * thread no rule names is an application thread ("mutator"): Java threads
 * carry the name the program gave them ("Thread-0", "pool-1-thread-1",
 * "app-0"). */
static const rule hotspot[] = {
    {"main", "java"},
    /* stop-the-world GC workers: Parallel and G1 ("GC Thread#N"), Serial has
     * none (the VM Thread collects) */
    {"gc", "GC Thread#*"},
    /* concurrent GC: G1's marking, refinement and service threads; ZGC's
     * and Shenandoah's workers do their short pauses' work too, but most of
     * theirs is concurrent */
    {"gc-conc", "G1 Conc#*"},
    {"gc-conc", "G1 Main Marker"},
    {"gc-conc", "G1 Refine#*"},
    {"gc-conc", "G1 Service"},
    {"gc-conc", "ZWorker#*"},
    {"gc-conc", "ZDirector"},
    {"gc-conc", "ZDriver"},
    {"gc-conc", "ZStat"},
    {"gc-conc", "ZUncommitter"},
    {"gc-conc", "ZUnmapper"},
    {"gc-conc", "Shenandoah GC T*"},
    {"gc-conc", "Shenandoah Cont*"},
    /* JIT compilers */
    {"jit", "C1 CompilerThre*"},
    {"jit", "C2 CompilerThre*"},
    {"jit", "JVMCI CompilerT*"},
    /* safepoints: the VM Thread brings the Java threads to a safepoint and
     * runs the VM operation (the whole collection, with SerialGC) */
    {"vm", "VM Thread"},
    /* the rest of the runtime's own threads */
    {"runtime", "Reference Handl*"},
    {"runtime", "Finalizer"},
    {"runtime", "Signal Dispatch*"},
    {"runtime", "Service Thread"},
    {"runtime", "Monitor Deflati*"},
    {"runtime", "Sweeper thread"},
    {"runtime", "Notification Th*"},
    {"runtime", "VM Periodic Tas*"},
    {"runtime", "Common-Cleaner"},
    {"runtime", "Attach Listener"},
    {"runtime", "process reaper"},
    {"runtime", "RuntimeWorker#*"},
    {"mutator", "*"},
};

static const struct preset {
    const char *name;
    const rule *rules;
    size_t nrules;
    const char *note; /* said when the preset cannot tell roles apart */
} presets[] = {
    {"hotspot", hotspot, sizeof hotspot / sizeof hotspot[0], NULL},
    {"node", NULL, 0,
     "Node.js names all its threads \"node\" (main, V8 platform workers, libuv pool, worker_threads alike): "
     "roles cannot be told apart by name; give --class rules or --app-class worker"},
    {"go", NULL, 0,
     "Go threads all carry the program's name and run goroutines of any role (GC workers too): "
     "roles cannot be told apart by name; give --class rules or --app-class worker"},
};

static const struct preset *find(const char *name)
{
    for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++)
        if (strcmp(presets[i].name, name) == 0)
            return &presets[i];
    return NULL;
}

int gcs_schedtrace_runtime_classes(const char *runtime, gcs_schedtrace_class *out, size_t max, size_t *n,
                                   const char **note, gcs_err *err)
{
    const struct preset *p = find(runtime);
    if (!p) {
        gcs_err_set(err, "unknown runtime '%s' (expected hotspot, node or go)", runtime);
        return -1;
    }
    if (p->nrules > max) {
        gcs_err_set(err, "runtime %s: %zu class rules, room for %zu", runtime, p->nrules, max);
        return -1;
    }
    for (size_t i = 0; i < p->nrules; i++) {
        snprintf(out[i].name, sizeof out[i].name, "%s", p->rules[i].cls);
        snprintf(out[i].pattern, sizeof out[i].pattern, "%s", p->rules[i].pattern);
    }
    *n = p->nrules;
    if (note)
        *note = p->note;
    return 0;
}

const char *gcs_schedtrace_runtime_detect(char *const argv[])
{
    if (!argv || !argv[0])
        return NULL;
    const char *base = strrchr(argv[0], '/');
    base = base ? base + 1 : argv[0];
    /* java, and the launchers that run a JVM class directly */
    if (fnmatch("java", base, 0) == 0 || fnmatch("java[0-9]*", base, 0) == 0)
        return "hotspot";
    if (strcmp(base, "node") == 0 || strcmp(base, "nodejs") == 0)
        return "node";
    return NULL;
}
