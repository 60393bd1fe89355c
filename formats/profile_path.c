/* profile_path.c -- where machine profiles live, in one place.
 *
 * Every command that needs this machine's profile (calibrate writes it;
 * predict, run, gc-bench's adaptive rounds, validate and corpus read it)
 * looks in the same places in the same order, so a profile calibrated
 * anywhere is found from any working directory:
 *
 *   1. $GCSCALE_MACHINE, when set: the user said which file;
 *   2. data/machines/HOSTNAME.json under the working directory, when it
 *      exists: a source tree, where the project's own profiles are kept and
 *      committed (the development machines' history is there);
 *   3. $XDG_DATA_HOME/gcscale/machines/HOSTNAME.json (default
 *      ~/.local/share/gcscale/...): an installed gcscale, per user.
 *
 * Writing (calibrate without -o) goes to 2 when the working directory has a
 * data/machines/ folder, else to 3.  Reference profiles (the paper's o2k and
 * e10k) are named by file or, installed, found by name in
 * GCS_DATADIR/machines (make install copies them there). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gcscale/profile.h"
#include "gcs-datadir.h" /* GCS_DATADIR, written by the Makefile from PREFIX */

static int is_file(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

static int is_dir(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static void host_name(char *host, size_t n)
{
    host[0] = 0;
    if (gethostname(host, n - 1) < 0 || !host[0])
        snprintf(host, n, "localhost");
    host[n - 1] = 0;
}

/* $XDG_DATA_HOME/gcscale/machines, or ~/.local/share/gcscale/machines. */
static int user_dir(char *out, size_t n)
{
    const char *xdg = getenv("XDG_DATA_HOME");
    if (xdg && xdg[0] == '/')
        return snprintf(out, n, "%s/gcscale/machines", xdg) < (int)n ? 0 : -1;
    const char *home = getenv("HOME");
    if (!home || home[0] != '/')
        return -1;
    return snprintf(out, n, "%s/.local/share/gcscale/machines", home) < (int)n ? 0 : -1;
}

int gcs_profile_default_path(char *out, size_t n, int for_writing, gcs_err *err)
{
    char host[256], dir[4096];
    host_name(host, sizeof host);
    const char *env = getenv("GCSCALE_MACHINE");
    if (env && *env && !for_writing) {
        if (snprintf(out, n, "%s", env) >= (int)n)
            goto too_long;
        return 0;
    }
    if (snprintf(out, n, "data/machines/%s.json", host) >= (int)n)
        goto too_long;
    if (for_writing ? is_dir("data/machines") : is_file(out))
        return 0;
    if (user_dir(dir, sizeof dir) < 0) {
        if (for_writing || !is_file(out)) {
            gcs_err_set(err, "no machine profile directory: neither data/machines/ here nor $XDG_DATA_HOME "
                             "or $HOME to put one in (give the file with --machine / -o)");
            return -1;
        }
        return 0;
    }
    if (snprintf(out, n, "%s/%s.json", dir, host) >= (int)n)
        goto too_long;
    if (for_writing)
        return gcs_make_dirs(dir, err);
    if (!is_file(out)) {
        gcs_err_set(err, "no machine profile for this host (%s): looked for data/machines/%s.json and %s "
                         "(run 'gcscale calibrate' on this machine, or give one with --machine / GCSCALE_MACHINE)",
                    host, host, out);
        return -1;
    }
    return 0;
too_long:
    gcs_err_set(err, "machine profile path too long");
    return -1;
}

int gcs_profile_find(const char *name, char *out, size_t n, gcs_err *err)
{
    if (is_file(name) || strchr(name, '/') || strstr(name, ".json")) {
        if (snprintf(out, n, "%s", name) >= (int)n) {
            gcs_err_set(err, "machine profile path too long");
            return -1;
        }
        return 0;
    }
    /* a bare name: the source tree's, the user's, the installed reference */
    char dir[4096];
    const char *where[3] = {"data/machines", NULL, GCS_DATADIR "/machines"};
    if (user_dir(dir, sizeof dir) == 0)
        where[1] = dir;
    for (int i = 0; i < 3; i++) {
        if (!where[i])
            continue;
        if (snprintf(out, n, "%s/%s.json", where[i], name) < (int)n && is_file(out))
            return 0;
    }
    gcs_err_set(err, "no machine profile named '%s' (looked in data/machines/, %s and %s/machines)", name,
                where[1] ? where[1] : "the per-user directory", GCS_DATADIR);
    return -1;
}
