/* corpus_machine.c -- the machine an entry was measured on, described from
 * what Linux exposes (/proc, /sys), for entry.json's "machine" object.
 *
 * The description is for the reader of the corpus, not for the model (the
 * model reads profile.json only): CPUs, caches, kernel, memory, and whether
 * it is a virtual machine, since a VM's vCPUs are shared with other tenants
 * and that is the first thing to suspect in a noisy entry.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "corpus_internal.h"

/* The first line of a small file, without its newline; "" if unreadable. */
static void read_line(const char *path, char *buf, size_t n)
{
    buf[0] = 0;
    FILE *fp = fopen(path, "r");
    if (!fp)
        return;
    if (fgets(buf, (int)n, fp))
        buf[strcspn(buf, "\n")] = 0;
    fclose(fp);
}

static void set_str_if(json_t *o, const char *key, const char *value)
{
    if (value && *value)
        json_object_set_new(o, key, json_string(value));
}

/* The caches CPU 0 sees (sysfs cacheinfo). */
static json_t *caches_json(void)
{
    json_t *a = json_array();
    for (int i = 0; i < 16; i++) {
        char dir[128], path[192], level[32], type[32], size[32], shared[256];
        snprintf(dir, sizeof dir, "/sys/devices/system/cpu/cpu0/cache/index%d", i);
        snprintf(path, sizeof path, "%s/level", dir);
        read_line(path, level, sizeof level);
        if (!*level)
            break;
        snprintf(path, sizeof path, "%s/type", dir);
        read_line(path, type, sizeof type);
        snprintf(path, sizeof path, "%s/size", dir);
        read_line(path, size, sizeof size);
        snprintf(path, sizeof path, "%s/shared_cpu_list", dir);
        read_line(path, shared, sizeof shared);
        json_t *c = json_object();
        json_object_set_new(c, "level", json_integer(atoi(level)));
        set_str_if(c, "type", type);
        set_str_if(c, "size", size);
        set_str_if(c, "shared_cpu_list", shared);
        json_array_append_new(a, c);
    }
    return a;
}

json_t *gcs_corpus_machine_json(void)
{
    json_t *m = json_object();
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    set_str_if(m, "hostname", host);
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    json_object_set_new(m, "cpus", json_integer(online > 0 ? online : 1));
    char model[256] = "";
    int hypervisor_flag = 0;
    FILE *fp = fopen("/proc/cpuinfo", "r");
    if (fp) {
        char line[4096];
        while (fgets(line, sizeof line, fp)) {
            if (!*model && strncmp(line, "model name", 10) == 0 && strchr(line, ':')) {
                snprintf(model, sizeof model, "%s", strchr(line, ':') + 2);
                model[strcspn(model, "\n")] = 0;
            }
            if (strncmp(line, "flags", 5) == 0 && strstr(line, " hypervisor"))
                hypervisor_flag = 1;
        }
        fclose(fp);
    }
    set_str_if(m, "cpu_model", model);
    json_object_set_new(m, "caches", caches_json());
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0)
        json_object_set_new(m, "memory_bytes", json_integer((json_int_t)pages * page));
    struct utsname u;
    if (uname(&u) == 0) {
        char k[600];
        snprintf(k, sizeof k, "%s %s %s", u.sysname, u.release, u.machine);
        set_str_if(m, "kernel", k);
    }
    char vendor[128], product[128];
    read_line("/sys/class/dmi/id/sys_vendor", vendor, sizeof vendor);
    read_line("/sys/class/dmi/id/product_name", product, sizeof product);
    set_str_if(m, "dmi_sys_vendor", vendor);
    set_str_if(m, "dmi_product_name", product);
    /* The CPU's hypervisor flag is set by every common hypervisor (KVM,
     * Xen, Hyper-V, VMware, Firecracker), also where DMI is absent. */
    json_object_set_new(m, "hypervisor_flag", json_boolean(hypervisor_flag));
    json_object_set_new(m, "virtual_machine", json_boolean(hypervisor_flag));
    return m;
}
