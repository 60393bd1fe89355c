/* outfile.c -- crash-safe output files.
 *
 * A result file is either absent or complete: we write "PATH.tmp.PID" in the
 * same directory (so rename(2) is atomic on the same file system), flush and
 * fsync it, and only then rename it over PATH.  Any failure removes the
 * temporary file and leaves PATH as it was.
 *
 * Renaming over PATH replaces whatever PATH is, so PATH is looked at first: a
 * symbolic link would become a plain file with its target left as it was,
 * and /dev/stdout or a FIFO would stop being one (as root, `--plot /dev/null`
 * would replace the device node).  A link is therefore resolved and its
 * target replaced; a device or FIFO, which cannot hold half a file, is
 * written directly. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gcscale/common.h"

int gcs_outfile_open(gcs_outfile *out, const char *path, gcs_err *err)
{
    memset(out, 0, sizeof *out);
    if (strlen(path) >= sizeof out->path) {
        gcs_err_set(err, "%s: path too long", path);
        return -1;
    }
    snprintf(out->path, sizeof out->path, "%s", path);
    struct stat st, lst;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            gcs_err_set(err, "%s: cannot write: is a directory", path);
            return -1;
        }
        if (!S_ISREG(st.st_mode)) {
            out->direct = 1;
        } else if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
            char *target = realpath(path, NULL);
            if (!target || strlen(target) >= sizeof out->path) {
                gcs_err_set(err, "%s: cannot resolve the symbolic link: %s", path,
                            target ? "path too long" : strerror(errno));
                free(target);
                return -1;
            }
            snprintf(out->path, sizeof out->path, "%s", target);
            free(target);
        }
    } else if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
        gcs_err_set(err, "%s: cannot write: symbolic link to a missing file", path);
        return -1;
    }
    if (out->direct)
        snprintf(out->tmp_path, sizeof out->tmp_path, "%s", out->path);
    else
        snprintf(out->tmp_path, sizeof out->tmp_path, "%s.tmp.%ld", out->path, (long)getpid());
    out->fp = fopen(out->tmp_path, "w");
    if (!out->fp) {
        gcs_err_set(err, "%s: cannot write: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

int gcs_outfile_commit(gcs_outfile *out, gcs_err *err)
{
    int failed = ferror(out->fp) != 0;
    int saved_errno = failed ? EIO : 0;
    if (fflush(out->fp) != 0) {
        failed = 1;
        saved_errno = errno;
    } else if (!out->direct && fsync(fileno(out->fp)) != 0) {
        failed = 1;
        saved_errno = errno;
    }
    if (fclose(out->fp) != 0 && !failed) {
        failed = 1;
        saved_errno = errno;
    }
    out->fp = NULL;
    if (!failed && !out->direct && rename(out->tmp_path, out->path) != 0) {
        failed = 1;
        saved_errno = errno;
    }
    if (failed) {
        if (!out->direct)
            unlink(out->tmp_path);
        gcs_err_set(err, "%s: write failed: %s", out->path, strerror(saved_errno));
        return -1;
    }
    return 0;
}

void gcs_outfile_abort(gcs_outfile *out)
{
    if (out->fp) {
        fclose(out->fp);
        out->fp = NULL;
    }
    if (out->tmp_path[0] && !out->direct)
        unlink(out->tmp_path);
}

int gcs_json_print(const json_t *doc, FILE *fp)
{
    if (json_dumpf(doc, fp, GCS_JSON_FLAGS) != 0 || fputc('\n', fp) == EOF)
        return -1;
    return 0;
}

int gcs_json_write_file(json_t *doc, const char *path, gcs_err *err)
{
    if (strcmp(path, "-") == 0) {
        if (gcs_json_print(doc, stdout) != 0) {
            gcs_err_set(err, "stdout: write failed");
            return -1;
        }
        return 0;
    }
    gcs_outfile out;
    if (gcs_outfile_open(&out, path, err) < 0)
        return -1;
    if (gcs_json_print(doc, out.fp) != 0) {
        gcs_outfile_abort(&out);
        gcs_err_set(err, "%s: write failed", path);
        return -1;
    }
    return gcs_outfile_commit(&out, err);
}
