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

/* Where output to PATH will go: 0 for a new or regular file (written through
 * a temporary and renamed; target = PATH, or a link's resolved target), 1 for
 * a device or FIFO (written directly), -1 with err set when it cannot be
 * written at all. */
static int outfile_target(const char *path, char *target, size_t target_size, gcs_err *err)
{
    if (!path[0]) {
        gcs_err_set(err, "empty file name");
        return -1;
    }
    if (strlen(path) >= target_size) {
        gcs_err_set(err, "%s: path too long", path);
        return -1;
    }
    snprintf(target, target_size, "%s", path);
    struct stat st, lst;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            gcs_err_set(err, "%s: cannot write: is a directory", path);
            return -1;
        }
        if (S_ISSOCK(st.st_mode)) {
            gcs_err_set(err, "%s: cannot write: is a socket", path);
            return -1;
        }
        if (!S_ISREG(st.st_mode)) {
            if (access(path, W_OK) != 0) {
                gcs_err_set(err, "%s: cannot write: %s", path, strerror(errno));
                return -1;
            }
            return 1;
        }
        if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
            char *resolved = realpath(path, NULL);
            if (!resolved || strlen(resolved) >= target_size) {
                gcs_err_set(err, "%s: cannot resolve the symbolic link: %s", path,
                            resolved ? "path too long" : strerror(errno));
                free(resolved);
                return -1;
            }
            snprintf(target, target_size, "%s", resolved);
            free(resolved);
        }
    } else if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
        gcs_err_set(err, "%s: cannot write: symbolic link to a missing file", path);
        return -1;
    }
    /* The temporary is created next to the target, then renamed over it. */
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", target);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == dir)
        dir[1] = 0;
    else
        *slash = 0;
    if (stat(dir, &st) != 0) {
        gcs_err_set(err, "%s: cannot write: directory %s: %s", path, dir, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        gcs_err_set(err, "%s: cannot write: %s is not a directory", path, dir);
        return -1;
    }
    if (access(dir, W_OK | X_OK) != 0) {
        gcs_err_set(err, "%s: cannot write: directory %s: %s", path, dir, strerror(errno));
        return -1;
    }
    return 0;
}

int gcs_outfile_check(const char *path, gcs_err *err)
{
    if (strcmp(path, "-") == 0)
        return 0;
    char target[4096];
    return outfile_target(path, target, sizeof target, err) < 0 ? -1 : 0;
}

int gcs_outfile_open(gcs_outfile *out, const char *path, gcs_err *err)
{
    memset(out, 0, sizeof *out);
    int kind = outfile_target(path, out->path, sizeof out->path, err);
    if (kind < 0)
        return -1;
    out->direct = kind == 1;
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

json_t *gcs_json_read_file(const char *path, gcs_err *err)
{
    /* Opening ourselves gives "cannot read: <errno text>" for missing files
     * and directories instead of jansson's less direct wording. */
    FILE *fp = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
    if (!fp) {
        gcs_err_set(err, "%s: cannot read: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fileno(fp), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(fp);
        gcs_err_set(err, "%s: cannot read: %s", path, strerror(EISDIR));
        return NULL;
    }
    json_error_t jerr;
    /* Duplicate keys would make the document mean whichever copy a reader
     * happens to keep; refuse them. */
    json_t *doc = json_loadf(fp, JSON_REJECT_DUPLICATES, &jerr);
    if (fp != stdin)
        fclose(fp);
    if (!doc)
        gcs_err_set(err, "%s: malformed JSON at line %d, column %d: %s", path, jerr.line, jerr.column,
                    jerr.text);
    return doc;
}

int gcs_make_dirs(const char *dir, gcs_err *err)
{
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", dir) >= (int)sizeof buf) {
        gcs_err_set(err, "%s: path too long", dir);
        return -1;
    }
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(buf, 0777) < 0 && errno != EEXIST)
                goto fail;
            *p = '/';
        }
    if (mkdir(buf, 0777) < 0 && errno != EEXIST)
        goto fail;
    return 0;
fail:
    gcs_err_set(err, "%s: cannot create: %s", buf, strerror(errno));
    return -1;
}
